"""parity.strategies draws what it claims; parity.fuzz finds divergences against a live Go.

The ``ci`` profile's fuzz run (derandomized, bounded) is part of ``make test``.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import logging
import os
import pickle
import re
import shutil
import socket
import subprocess
import sys
import time
import types
import unicodedata
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, Phase, find, given, settings
from hypothesis import strategies as st
from hypothesis.database import DirectoryBasedExampleDatabase
from hypothesis.errors import NoSuchExample

from parity import campaign, cli, fuzz, rig
from parity import strategies as ps
from parity.corpus import Corpus, CorpusBlock, CorpusCall
from parity.errors import ParityError
from parity.fakego import go_json
from parity.fixtures.go import unavailable
from parity.reference import GoReference, RunningReference
from parity.stateful import fuzz_stateful
from recall import AsyncGoTurnHost, GoTurnHost
from recall._go import DEFAULT_UNICODE_VERSION as GO_UNICODE_VERSION
from recall._go import strings as go_strings
from recall._go.json import MAX_NESTING_DEPTH
from recall._go.strconv import is_print

FIND = settings(  # the first example found, unshrunk
    phases=[Phase.generate],
    derandomize=True,
    database=None,
    max_examples=5_000,  # the first that meets the condition: the rarest (int64 max) needs ~300
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
INT64_MAX = 2**63 - 1


def _unicode_version(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in text.split("."))


PYTHON_UNICODE_IS_OLDER = _unicode_version(unicodedata.unidata_version) < _unicode_version(
    GO_UNICODE_VERSION
)


def found(strategy: st.SearchStrategy[Any], condition: Callable[[Any], bool]) -> Any:
    """An example of ``strategy`` meeting ``condition`` (fails the test when none is drawn)."""
    return find(strategy, condition, settings=FIND)


Table = list[tuple[str, Callable[[Any], bool]]]
_MET: dict[str, set[str]] = {}


def met(name: str, strategy: st.SearchStrategy[Any], table: Table) -> set[str]:
    """Which conditions of ``table`` an example of ``strategy`` meets, drawing as ``found``
    does until each is met: one pass for the whole table, once per process."""
    if name not in _MET:
        hits: set[str] = set()

        def each_met(example: Any) -> bool:
            hits.update(what for what, condition in table if condition(example))
            return len(hits) == len(table)

        with contextlib.suppress(NoSuchExample):  # the tests of the conditions never met fail
            find(strategy, each_met, settings=FIND)
        _MET[name] = hits
    return _MET[name]


def _python_json_error(text: str) -> bool:
    def reject(name: str) -> None:
        raise ValueError(name)

    try:
        json.loads(text, parse_constant=reject)
    except (ValueError, RecursionError):
        return True
    return False


def _depth(text: str) -> int:
    depth = best = 0
    for c in text:
        if c in "[{":
            depth += 1
            best = max(best, depth)
        elif c in "]}":
            depth -= 1
    return best


# -- constants against Go's tables ----------------------------------------------------


def test_go_spaces_are_go_spaces() -> None:
    assert all(go_strings.is_space(c) for c in ps.GO_SPACES)
    assert not any(go_strings.is_space(c) for c in ps.NOT_GO_SPACES)
    assert {c for c in map(chr, range(0x3001)) if go_strings.is_space(c)} == set(ps.GO_SPACES)


def test_lower_changed_is_where_python_lowers_otherwise() -> None:
    changed = ps.lower_changed()
    assert changed.startswith("\u0130")  # İ: Python gives i + U+0307 whatever its Unicode
    assert "\u03a3" not in changed  # alone, capital sigma lowers to U+03C3 in both
    # Every rune that lowers otherwise, alone (Python's Σ differs only by context).
    every = "".join(map(chr, range(0xD800))) + "".join(map(chr, range(0xE000, 0x110000)))
    differ = [c for c in every if go_strings.to_lower(c) != c.lower()]
    assert "".join(c for c in differ if go_strings.to_lower(c) != c) == changed
    if PYTHON_UNICODE_IS_OLDER:  # then Python lowers no rune that Go keeps
        assert "".join(differ) == changed


def test_new_code_points_are_printable_for_go_and_unknown_to_python() -> None:
    """new_code_point_ranges against a plain scan of every code point."""
    ranges = ps.new_code_point_ranges()
    assert list(ranges) == sorted(ranges)
    assert all(lo <= hi for lo, hi in ranges)
    assert all(a[1] + 1 < b[0] for a, b in itertools.pairwise(ranges))
    inside = {code for lo, hi in ranges for code in range(lo, hi + 1)}
    want = {
        code
        for code in range(0x110000)
        if not 0xD800 <= code <= 0xDFFF
        and is_print(code)
        and unicodedata.category(chr(code)) == "Cn"
    }
    assert inside == want
    if PYTHON_UNICODE_IS_OLDER:
        assert ranges
        assert len(ps.lower_changed()) > 1  # case pairs too, beside İ


# -- strategies -----------------------------------------------------------------------


IDS: Table = [
    ("prefix R", lambda s: s.startswith("R") and s[1:2].isdigit()),
    ("prefix rR", lambda s: s.startswith("rR") and s[2:3].isdigit()),
    ("prefix Rr", lambda s: s.startswith("Rr") and s[2:3].isdigit()),
    ("no-break space", lambda s: "\xa0" in s),
    ("next line", lambda s: "\x85" in s),
    ("ideographic space", lambda s: "\u3000" in s),
    ("ogham space", lambda s: "\u1680" in s),
    ("mongolian vowel separator", lambda s: "\u180e" in s),
    ("zero width space", lambda s: "\u200b" in s),
    ("separator Python strips", lambda s: any(c in s for c in "\x1c\x1d\x1e\x1f")),
    ("vertical tab, form feed", lambda s: "\v" in s or "\f" in s),
    ("Arabic-Indic digits", lambda s: re.search("[\u0660-\u0669]", s) is not None),
    ("fullwidth digits", lambda s: re.search("[\uff10-\uff19]", s) is not None),
    ("leading zeros", lambda s: re.search(r"r00+1000", s) is not None),
    ("a sign", lambda s: re.fullmatch(r"r[-+]\d+", s) is not None),
    ("zero", lambda s: s in ("r0", "0")),
    (
        "past int64",
        lambda s: any(int(d) > INT64_MAX for d in re.findall("[0-9]+", s)),
    ),
    ("int64 max", lambda s: re.search(rf"r{INT64_MAX}(\D|$)", s) is not None),
    ("an existing seq", lambda s: s == "r1000"),
    ("an absent seq", lambda s: re.fullmatch(r"r(999|1001|1006|1008)", s) is not None),
    ("an existing seq with spaces", lambda s: s.strip() == "r1000" and s != "r1000"),
]


@pytest.mark.parametrize("what", [what for what, _ in IDS])
def test_ids_draw(what: str) -> None:
    assert what in met("ids", ps.ids((1000, 1007)), IDS)


QUERIES: Table = [
    ("dotted capital I", lambda s: "İ" in s),
    ("final capital sigma", lambda s: re.search(r"\wΣ(?!\w)", s) is not None),
    ("an underscore", lambda s: "_" in s),
    ("Unicode punctuation", lambda s: any(c in s for c in "«»„“”—…¿、。")),
    ("a block word upper-cased", lambda s: "ZÉPHYR" in s),
    ("a block word with another accent", lambda s: re.search("z[^e]phyr", s, re.I) is not None),
    ("a block word decomposed", lambda s: "e\u0301" in s),
    ("a raw surrogate", lambda s: re.search("[\ud800-\udfff]", s) is not None),
    ("blank", lambda s: s != "" and s.strip() == ""),
]


@pytest.mark.parametrize("what", [what for what, _ in QUERIES])
def test_queries_draw(what: str) -> None:
    assert what in met("queries", ps.queries(("zéphyr",)), QUERIES)


@pytest.mark.skipif(
    not PYTHON_UNICODE_IS_OLDER,
    reason=f"this Python knows Unicode {unicodedata.unidata_version}, Go {GO_UNICODE_VERSION}",
)
@pytest.mark.parametrize(
    ("what", "condition"),
    [
        (
            "a rune lower-cased anew since Python's Unicode",
            lambda s: any(c in s for c in ps.lower_changed() if c != "\u0130"),
        ),
        (
            "a code point new since Python's Unicode",
            lambda s: any(lo <= ord(c) <= hi for c in s for lo, hi in ps.new_code_point_ranges()),
        ),
    ],
)
def test_queries_draw_what_python_does_not_know(
    what: str, condition: Callable[[str], bool]
) -> None:
    assert condition(found(ps.queries(("zéphyr",)), condition)), what


@pytest.mark.parametrize(
    "text",
    ["-0", "2.9", "1e300", "9.2e18", '"3"', "true", "false", "null", "[3]", "1e400", "-1"],
)
def test_limits_draw(text: str) -> None:
    assert found(ps.limits(), lambda s: s == text) == text


def test_limits_draw_floats_and_exponents() -> None:
    found(ps.limits(), lambda s: "." in s and "e" not in s.lower())
    found(ps.limits(), lambda s: "e" in s.lower() and not s.startswith('"'))
    found(ps.limits(), lambda s: s.lstrip("-").isdigit() and abs(int(s)) > 2**63)


RAW_ARGS: Table = [
    ("invalid JSON", _python_json_error),
    ("a JSON object", lambda s: not _python_json_error(s) and s.strip().startswith("{")),
    (
        "a non-object",
        lambda s: not _python_json_error(s) and s.strip()[:1] in ('"', "[", "n", "1"),
    ),
    ("nesting past Go's limit", lambda s: _depth(s) > MAX_NESTING_DEPTH),
    ("nesting at Go's limit", lambda s: _depth(s) == MAX_NESTING_DEPTH),
    (
        "a lone surrogate escape",
        lambda s: re.search(r"\\ud800(?!\\u[dD][c-fC-F])", s, re.I) is not None,
    ),
    ("a raw surrogate", lambda s: re.search("[\ud800-\udfff]", s) is not None),
    ("a number out of float64 range", lambda s: "1e400" in s),
    ("a repeated key", lambda s: re.search(r'"id".*"id"', s) is not None),
    ("NaN", lambda s: "NaN" in s),
    ("a BOM", lambda s: "\ufeff" in s),
]


@pytest.mark.parametrize("what", [what for what, _ in RAW_ARGS])
@pytest.mark.filterwarnings("ignore::hypothesis.errors.HypothesisWarning")
def test_raw_args_draw(what: str) -> None:
    assert what in met("raw_args", ps.raw_args(), RAW_ARGS)


def test_recall_args_draw_ids_in_objects() -> None:
    text = found(ps.recall_args((1000,)), lambda s: s.strip().startswith("{") and "r1000" in s)
    assert json.loads(text.strip())["id"].strip() == "r1000"
    found(
        ps.recall_args((1000,)), lambda s: re.search(r'"id"\s*:\s*(7|null|true|\[)', s) is not None
    )
    found(ps.recall_args((1000,)), lambda s: "\\u00" in s)  # escaped runes
    found(ps.recall_args((1000,)), lambda s: re.search(r'"id".*"ID"|"ID".*"id"', s) is not None)


def test_search_args_draw_queries_and_limits() -> None:
    found(ps.search_args(("zéphyr",)), lambda s: '"limit"' in s and '"query"' in s)
    found(ps.search_args(("zéphyr",)), lambda s: re.search(r'"limit"\s*:\s*-?[0-9]', s) is not None)


@given(ps.json_strings(st.text().filter(lambda s: not re.search("[\ud800-\udfff]", s))))
@settings(max_examples=200, derandomize=True, database=None)
def test_json_strings_encode_the_value(text: str) -> None:
    assert isinstance(json.loads(text), str)


@given(st.text().flatmap(lambda s: st.tuples(st.just(s), ps.json_strings(st.just(s)))))
@settings(max_examples=200, derandomize=True, database=None)
def test_json_strings_round_trip(pair: tuple[str, str]) -> None:
    value, text = pair
    if not re.search("[\ud800-\udfff]", value):
        assert json.loads(text) == value


BLOCK_SETS: Table = [
    ("an empty content", lambda bs: any(b.content == "" for b in bs)),
    ("a locked block", lambda bs: any(b.locked for b in bs)),
    ("an empty label", lambda bs: any(b.label == "" for b in bs)),
    ("HTML", lambda bs: any("<" in b.content or "&amp;" in b.content for b in bs)),
    ("blank lines", lambda bs: any(re.search(r"\n[ \t]*\n", b.content) for b in bs)),
    ("a long first line", lambda bs: any(len(b.content.split("\n")[0]) > 160 for b in bs)),
    ("accents in mixed case", lambda bs: any("É" in b.content + b.label for b in bs)),
    ("a dotted capital I", lambda bs: any("İ" in b.content + b.label for b in bs)),
    ("more blocks than the maximum limit", lambda bs: len(bs) > 20),
    ("no block", lambda bs: bs == []),
]


@pytest.mark.parametrize("what", [what for what, _ in BLOCK_SETS])
def test_block_sets_draw(what: str) -> None:
    assert what in met("block_sets", ps.block_sets(), BLOCK_SETS)


@given(ps.block_sets())
@settings(max_examples=100, derandomize=True, database=None)
def test_block_sets_hold_no_surrogates(blocks: list[ps.BlockSpec]) -> None:
    for block in blocks:
        assert not re.search("[\ud800-\udfff]", block.label + block.content)


# -- profiles -------------------------------------------------------------------------


def _drawn(profile: settings, **options: object) -> list[int]:
    """The integers that a test under ``profile`` (and ``options``) is given, in order."""
    seen: list[int] = []

    @settings(profile, database=None, **options)
    @given(st.integers())
    def draw(n: int) -> None:
        seen.append(n)

    draw()
    return seen


def test_the_ci_profile_repeats_its_examples_and_says_how_to_reproduce_one() -> None:
    ci = fuzz.profile("ci")
    assert _drawn(ci, max_examples=30) == _drawn(ci, max_examples=30)

    @settings(ci, database=None)
    @given(st.integers())
    def failing(n: int) -> None:
        assert n < 100

    with pytest.raises(AssertionError) as caught:
        failing()
    assert any("@reproduce_failure(" in note for note in caught.value.__notes__)


def test_the_dev_profile_draws_anew_and_more_than_ci() -> None:
    dev = fuzz.profile("dev")
    assert _drawn(dev, max_examples=30) != _drawn(dev, max_examples=30)
    assert len(_drawn(dev)) > len(_drawn(fuzz.profile("ci")))


def test_profile_from_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HYPOTHESIS_PROFILE", "dev")
    assert fuzz.profile() is fuzz.profile("dev")
    monkeypatch.delenv("HYPOTHESIS_PROFILE")
    assert fuzz.profile() is fuzz.profile("ci")
    with pytest.raises(ParityError):
        fuzz.profile("nightly")


# -- corpus cases ---------------------------------------------------------------------


def _divergence(**changes: Any) -> fuzz.Divergence:
    fields: dict[str, Any] = {
        "tool": "recall",
        "args": '{"id": " r0001007 ", "x": 1000}',
        "blocks": ((1000, ps.BlockSpec("a", "b")), (1007, ps.BlockSpec("", "c\n", locked=True))),
        "go_output": "no",
        "python_output": "yes",
        "reasons": ("the outputs differ",),
        "first_seq": 1000,
    }
    fields.update(changes)
    return fuzz.Divergence(**fields)


def test_corpus_case_is_ready_to_paste() -> None:
    divergence = _divergence()
    namespace: dict[str, Any] = {"CorpusBlock": CorpusBlock, "CorpusCall": CorpusCall}
    entries = eval("[" + divergence.corpus_case() + "]", namespace)
    blocks = [e for e in entries if isinstance(e, CorpusBlock)]
    (call,) = [e for e in entries if isinstance(e, CorpusCall)]
    corpus = Corpus(name="t", blocks=tuple(blocks), calls=(call,), host=GoTurnHost)
    assert blocks[1].locked
    assert call.tool == "recall"
    seqs = {b.name: seq for b, (seq, _) in zip(blocks, divergence.blocks, strict=True)}
    assert corpus.calls[0].resolve(seqs) == divergence.args
    assert call.args.count("{{seq:") == 1  # the id, its leading zeros kept; not the number


def test_corpus_case_says_when_blocks_were_left_out() -> None:
    assert "# 2 of the 30 blocks archived" in _divergence(archived=30).corpus_case()
    assert "blocks archived" not in _divergence(archived=2).corpus_case()


def test_corpus_case_of_a_search_keeps_digits() -> None:
    divergence = _divergence(tool="recall_search", args='{"query": "1000", "limit": 1007}')
    assert "{{seq:" not in divergence.corpus_case()
    assert "DIVERGENCE fuzz-recall-search-" in divergence.report()


# -- archives and repeats -------------------------------------------------------------


def test_archives_grow_then_lock() -> None:
    assert fuzz.archives(0) == [(0, 0)]
    assert fuzz.archives(1) == [(1, 0)]
    assert fuzz.archives(3) == [(1, 0), (2, 0), (3, 0), (3, 1), (3, 2)]
    many = fuzz.archives(26)
    assert len(many) == 2 * fuzz.ARCHIVES - 1
    assert many == sorted(many)
    assert (26, 0) in many
    assert all(locked < 26 for _, locked in many)  # never the empty archive again


def test_fresh_leaves_out_calls_compared_over_the_same_state() -> None:
    stats = rig.FuzzStats()
    pool = [("recall", "{}"), ("recall_search", "{}")]
    stats.count(1, "recall", "{}")
    assert stats.fresh(1, pool) == [("recall_search", "{}")]
    assert stats.fresh(2, pool) == pool  # another archive
    stats.divergences.append("found")
    assert stats.fresh(1, pool) == pool  # a divergence's replays play every call


# -- against a live Go ----------------------------------------------------------------


@pytest.fixture
def reference(go_build: GoReference) -> GoReference:
    return go_build


@pytest.mark.once
@pytest.mark.go
def test_ci_profile_finds_no_divergence(reference: GoReference) -> None:
    """Both fuzzers, derandomized: 50 stateless examples, 25 stateful ones of 20 steps."""
    stats = fuzz.fuzz_reference(rig.Run(base=fuzz.profile(), reference=reference))
    assert not stats.divergences, stats.divergences[0].report()
    assert stats.calls >= stats.examples >= fuzz.profile().max_examples
    assert stats.calls >= 2000, stats.summary()  # as for each release (test_go_releases.py)
    machine = fuzz_stateful(
        rig.Run(base=fuzz.profile(), examples=25, reference=reference), steps=20
    )
    assert not machine.divergences, machine.divergences[0].report()
    assert machine.examples >= 25
    assert machine.calls > machine.examples  # calls replayed over each new archive state


class _Lying(GoTurnHost):
    """A host that breaks one rule: a block's header says ``[R`` for ``[r``."""

    def exec_tool(self, name: str, args: str) -> str:
        output = super().exec_tool(name, args)
        if name == "recall" and output.startswith("[r"):
            return "[R" + output[2:]
        return output


class _AsyncLying(AsyncGoTurnHost):
    """``_Lying``, for asyncio."""

    async def exec_tool(self, name: str, args: str) -> str:
        output = await super().exec_tool(name, args)
        if name == "recall" and output.startswith("[r"):
            return "[R" + output[2:]
        return output


class _NoReads(httpx.BaseTransport):
    """A transport whose archive reads all get a 503 (the rest goes through)."""

    def __init__(self, inner: httpx.BaseTransport) -> None:
        self._inner = inner

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        if request.method == "GET":
            return httpx.Response(503)
        return self._inner.handle_request(request)


class _AsyncNoReads(httpx.AsyncBaseTransport):
    def __init__(self, inner: httpx.AsyncBaseTransport) -> None:
        self._inner = inner

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if request.method == "GET":
            return httpx.Response(503)
        return await self._inner.handle_async_request(request)


class NoReads:
    """Hosts whose archive reads all fail: they ask the Go's /tool/exec instead."""

    def sync(self, inner: httpx.BaseTransport) -> httpx.BaseTransport:
        return _NoReads(inner)

    def asynchronous(self, inner: httpx.AsyncBaseTransport) -> httpx.AsyncBaseTransport:
        return _AsyncNoReads(inner)


@pytest.fixture
def lying_hosts(monkeypatch: pytest.MonkeyPatch) -> None:
    """Both kinds of host, in the fuzzers' rig, lie."""
    monkeypatch.setattr(rig, "GoTurnHost", _Lying)
    monkeypatch.setattr(rig, "AsyncGoTurnHost", _AsyncLying)


@pytest.mark.once
@pytest.mark.go
@pytest.mark.usefixtures("lying_hosts")
def test_a_divergence_shrinks_to_a_corpus_case(reference: GoReference) -> None:
    stats = fuzz.fuzz_reference(
        rig.Run(base=fuzz.profile("ci"), examples=200, reference=reference, shrink_seconds=10)
    )
    (divergence,) = stats.divergences
    assert divergence.reasons == ("the outputs differ",)
    assert divergence.tool == "recall"
    assert divergence.go_output.startswith("[r")
    assert len(divergence.blocks) == 1  # shrunk to the one block that matters
    assert divergence.cites_literally() or "{{seq:" in divergence.corpus_case()


@pytest.mark.once
@pytest.mark.go
def test_a_fallback_is_a_divergence(reference: GoReference) -> None:
    base = fuzz.profile("ci")
    run = rig.Run(base=base, examples=20, reference=reference, shrink_seconds=5, wrap=NoReads())
    stats = fuzz.fuzz_reference(run)
    (divergence,) = stats.divergences
    assert f"the host fell back on {rig.EXEC_REQUEST}" in divergence.reasons
    assert divergence.go_output == divergence.python_output


# -- the command ----------------------------------------------------------------------


def test_cli_rejects_bad_options(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["fuzz", "--examples", "1", "--seconds", "1"]) == 2
    assert cli.main(["fuzz", "--examples", "0"]) == 2
    assert cli.main(["fuzz", "--profile", "nightly"]) == 2
    assert cli.main(["fuzz", "--workers", "0"]) == 2
    assert cli.main(["fuzz", "--workers", "all"]) == 2
    assert cli.main(["fuzz", "--go-url", "http://127.0.0.1:9", "--mode", "stateful"]) == 2
    assert cli.main(["fuzz", "--go-url", "http://127.0.0.1:9", "--workers", "2"]) == 2
    capsys.readouterr()


def test_cli_reports_an_unreachable_go(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["fuzz", "--go-url", "http://127.0.0.1:9", "--examples", "1"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("parity: error: "), err
    assert "the Go at http://127.0.0.1:9 did not answer" in err


@pytest.mark.parametrize("kind", ["sync", "async"])
def test_past_bound_unsaid_drops_that_warning_alone(
    kind: str, caplog: pytest.LogCaptureFixture
) -> None:
    items = [{"seq": s, "label": f"l{s}", "content": "échec " * 200} for s in range(1, 9)]
    go = httpx.MockTransport(lambda _: httpx.Response(200, content=go_json({"blocks": items})))
    options: dict[str, Any] = {"transport": go, "cache_bytes": rig.CACHE_SIZES[2]}

    async def search_async() -> str:
        async with AsyncGoTurnHost("http://go.test", **options) as host:
            return await host.exec_tool("recall_search", '{"query": "échec"}')

    def search() -> str:
        if kind == "async":
            return asyncio.run(search_async())
        with GoTurnHost("http://go.test", **options) as host:
            return host.exec_tool("recall_search", '{"query": "échec"}')

    with rig.past_bound_unsaid():
        within = search()  # the set (9.7 KB of JSON) past the tiny cache_bytes
        logging.getLogger("recall").warning("another warning")
    assert search() == within  # the filter gone with the block
    assert "r8" in within
    said = [r.getMessage() for r in caplog.records if r.name == "recall"]
    assert said[0] == "another warning"
    assert len(said) == 2
    assert "past cache_bytes" in said[1]


@pytest.mark.once
@pytest.mark.go
def test_cli_runs_both_fuzzers(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    monkeypatch.setattr(campaign, "usable_cpus", lambda: 1)  # --workers auto: one process
    assert cli.main(["fuzz", "--examples", "5", "--profile", "ci"]) == 0
    assert not [r for r in caplog.records if r.name == "recall"]  # tiny caches, unsaid
    out = capsys.readouterr().out
    assert "Go references of our own" in out
    for mode in ("stateless", "stateful"):
        assert re.search(
            rf"{mode}: \d+ examples .* [\d.]+ examples/s, [\d.]+ calls/s; 0 divergences", out
        )
    assert re.search(r"total: \d+ distinct calls compared .* [\d.]+ distinct calls/s", out)


@pytest.mark.once
@pytest.mark.go
def test_cli_reports_a_divergence(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(rig, "SHRINK_SECONDS", 5.0)
    monkeypatch.setattr(rig, "GoTurnHost", _Lying)
    monkeypatch.setattr(rig, "AsyncGoTurnHost", _AsyncLying)
    argv = ["--examples", "100", "--profile", "ci", "--mode", "stateless", "--workers", "1"]
    assert cli.main(["fuzz", *argv]) == 1
    out = capsys.readouterr().out
    assert "DIVERGENCE fuzz-" in out
    assert "CorpusCall(" in out
    assert "1 divergences" in out


@pytest.mark.once
@pytest.mark.go
def test_cli_over_a_go_url_reads_only(
    fresh_go: Callable[..., RunningReference],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    go = fresh_go(first_seq=500, token="tok-s3cret")
    go.archive("Crème brûlée", "İSTANBUL\n\n  first line")
    go.archive("locked", "never shown", locked=True)
    go.archive("", "")
    monkeypatch.setenv("PARITY_GO_TOKEN", "tok-s3cret")
    assert cli.main(["fuzz", "--go-url", go.base_url, "--seconds", "3", "--seed", "5"]) == 0
    captured = capsys.readouterr()
    assert "tok-s3cret" not in captured.out + captured.err
    assert "0 divergences" in captured.out
    log = go.requests()
    assert sum(r.startswith("POST /internal/v1/recall/archive") for r in log) == 3
    assert len(go.blocks()) == 2


@pytest.mark.once
@pytest.mark.go
def test_cli_with_two_workers(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["--examples", "2", "--seed", "7", "--workers", "2", "--db", str(tmp_path / "db")]
    assert cli.main(["fuzz", *argv]) == 0
    out = capsys.readouterr().out
    assert "2 workers" in out
    for mode in ("stateless", "stateful"):  # both workers' figures, added up
        found = re.search(rf"parity fuzz: {mode}: (\d+) examples", out)
        assert found is not None, out
        assert int(found[1]) >= 4


def test_example_database_is_a_directory_or_redis(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    database = campaign.example_database(str(tmp_path / "db"))
    assert isinstance(database, DirectoryBasedExampleDatabase)
    assert database.path == tmp_path / "db"
    monkeypatch.setitem(sys.modules, "redis", None)  # not installed
    with pytest.raises(ParityError, match=r"hypothesis\[redis\]"):
        campaign.example_database("redis://127.0.0.1:6379/0")


@pytest.fixture
def redis_url(tmp_path: Path) -> Iterator[str]:
    """A Redis server of its own on the loopback, stopped after the test."""
    import redis  # the dev group's

    server = shutil.which("redis-server")
    if server is None:
        unavailable("no redis-server on PATH (apt-get install redis-server)")
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    argv = [
        server,
        "--bind",
        "127.0.0.1",
        "--port",
        str(port),
        "--save",
        "",
        "--dir",
        str(tmp_path),
    ]
    process = subprocess.Popen(argv, stdout=subprocess.DEVNULL)
    url = f"redis://127.0.0.1:{port}/0"
    try:
        client = redis.Redis.from_url(url)
        for _ in range(200):
            try:
                client.ping()
                break
            except redis.ConnectionError:
                time.sleep(0.05)
        yield url
    finally:
        process.terminate()
        process.wait(10)


@pytest.mark.go
@pytest.mark.once
def test_a_divergence_stays_in_redis_until_it_no_longer_fails(
    redis_url: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import redis

    keys = redis.Redis.from_url(redis_url).dbsize
    argv = ["--profile", "dev", "--mode", "stateless", "--workers", "1", "--db", redis_url]
    monkeypatch.setattr(rig, "SHRINK_SECONDS", 5.0)
    with monkeypatch.context() as lying:
        lying.setattr(rig, "GoTurnHost", _Lying)
        lying.setattr(rig, "AsyncGoTurnHost", _AsyncLying)
        assert cli.main(["fuzz", *argv, "--examples", "100", "--seed", "3"]) == 1
    assert "DIVERGENCE fuzz-" in capsys.readouterr().out
    kept = keys()
    assert kept > 0  # the failing example, where every worker and machine finds it
    # the honest port: the kept example is replayed first, passes, and leaves the database
    assert cli.main(["fuzz", *argv, "--examples", "5", "--seed", "4"]) == 0
    assert keys() < kept


def test_the_process_age_counts_its_start_too() -> None:
    code = (
        "import time\ntime.sleep(0.5)\nfrom parity.campaign import process_age as age\nprint(age())"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    age = float(done.stdout)
    assert age >= 0.5 if sys.platform == "linux" else age == 0.0


def _distinct_key_in_a_process(hash_seed: str) -> str:
    code = (
        "from parity.rig import call_key, state_key\n"
        "from parity.strategies import BlockSpec\n"
        "print(call_key(state_key([(1000, BlockSpec('l\\ud800', 'c', False))]), 'recall', '{}'))\n"
    )
    env = {**os.environ, "PYTHONHASHSEED": hash_seed}
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    )
    return done.stdout


def test_distinct_calls_are_named_alike_in_every_process() -> None:
    # Workers' figures add up by these keys: Python's own str hash differs by process.
    assert _distinct_key_in_a_process("1") == _distinct_key_in_a_process("2")


def test_workers_figures_count_a_call_compared_by_two_workers_once() -> None:
    empty, one = rig.state_key([]), rig.state_key([(7, ps.BlockSpec("l", "c", False))])
    plays = {
        0: [(empty, "recall", '{"id":"r7"}'), (one, "recall", '{"id":"r7"}')],
        1: [(one, "recall", '{"id":"r7"}'), (one, "recall_search", '{"query":"c"}')],
    }
    runs = []
    for worker, calls_ in plays.items():
        stats = rig.FuzzStats(examples=1, seconds=10.0 + worker)
        for call in calls_:
            stats.count(*call)
        runs.append(pickle.loads(pickle.dumps({"stateful": stats})))  # as the pool returns it
    gathered = campaign.gather(runs)["stateful"]
    assert (gathered.calls, gathered.played, gathered.examples) == (3, 4, 2)
    assert gathered.seconds == 11.0


def test_the_run_ends_before_an_example_that_would_end_past_the_deadline(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    now = [100.0]
    monkeypatch.setattr("parity.rig.time", types.SimpleNamespace(monotonic=lambda: now[0]))
    run = rig.Run(seconds=10.0, shrink_seconds=5.0)  # the deadline: 110
    for at in (100.0, 102.0, 104.0, 106.0):  # examples of 2 s
        now[0] = at
        run.check()
    now[0] = 107.5  # 2.5 s left, the longest recent example took 2 s
    run.check()
    assert not run.over()
    now[0] = 108.5  # the next would end at 110.5: the run ends here, not past 110
    with pytest.raises(rig.TimeUp):
        run.check()
    now[0] = 110.5  # what an example still does past the deadline is wasted ...
    assert run.over()
    run.stats.divergences.append("found")  # ... unless a divergence is being shrunk
    assert not run.over()
