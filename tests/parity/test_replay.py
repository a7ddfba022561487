"""parity.replay and `parity replay`: every case once per mode, failures named."""

from __future__ import annotations

import dataclasses
import json
import xml.etree.ElementTree as ET
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

import recall._tools
from parity.corpus import Corpus, CorpusCall, ToolHost, get_corpus
from parity.errors import CorpusError, ParityError
from parity.journal import Journal, JournalCall
from parity.replay import ALL_MODES, Replayer, ReplayResult, check_consistency
from recall._go.strconv import quote
from recall._protocol import BLOCK_PATH, BLOCKS_PATH, EXEC_PATH

from .conftest import RunCli, SmallGolden, copy_with_output, with_output, with_reads

CORPUS = get_corpus("recall")
BLOCKS = CORPUS.blocks
FEW = ("recall-id-plain", "recall-id-below-first", "search-limit-one", "search-excerpt-161-runes")
"""A few cases of both tools, for a test of what the command does with one changed case."""


def _corpus_with_host(wrap: Callable[[ToolHost, str], ToolHost]) -> Corpus:
    """The recall corpus, its host wrapped by ``wrap(host, base_url)``."""

    def host(base_url: str, **options: Any) -> ToolHost:
        return wrap(CORPUS.host(base_url, **options), base_url)

    return dataclasses.replace(CORPUS, host=host)


def _one_byte_changed(output: str) -> str:
    """``output`` with one ASCII byte changed (near the middle), so still valid UTF-8."""
    data = bytearray(output.encode("utf-8"))
    ascii_at = [i for i, b in enumerate(data) if 0x21 <= b < 0x7E]
    i = ascii_at[len(ascii_at) // 2]
    data[i] += 1
    return data.decode("utf-8")


@pytest.fixture(scope="module")
def counted_replay(golden: Journal) -> tuple[ReplayResult, Counter[tuple[str, str]]]:
    """The golden replayed once in every mode, and how often the host got each call."""
    seen: Counter[tuple[str, str]] = Counter()

    class Counting:
        def __init__(self, inner: ToolHost) -> None:
            self.inner = inner

        def exec_tool(self, name: str, args: str) -> str:
            seen[name, args] += 1
            return self.inner.exec_tool(name, args)

    with Replayer(golden, _corpus_with_host(lambda h, _: Counting(h))) as replayer:
        return replayer.replay(), seen


def test_every_case_passes_in_every_mode(
    golden: Journal, counted_replay: tuple[ReplayResult, Counter[tuple[str, str]]]
) -> None:
    result, _ = counted_replay
    assert [r.case for r in result.results] == list(golden.cases)
    assert [r.report() for r in result.failures] == []
    assert all([run.mode for run in r.runs] == list(ALL_MODES) for r in result.results)


def test_every_call_is_replayed_once_per_mode_and_once_more_over_a_stale_set(
    golden: Journal, counted_replay: tuple[ReplayResult, Counter[tuple[str, str]]]
) -> None:
    result, seen = counted_replay
    assert result.failed == 0
    # The delta pass plays each call that reads /blocks twice: over a stale set, then for real.
    primed = {c.args: "blocks" in (c.reads or ()) for c in golden.calls}
    want = {(c.tool, c.args): len(ALL_MODES) + primed[c.args] for c in golden.calls}
    assert seen == Counter(want)


def test_fallback_replay_serves_recorded_outputs(golden: Journal) -> None:
    with Replayer(golden, CORPUS) as replayer:
        result = replayer.replay(modes=["fallback"])
    assert result.failed == 0
    fell_back = 0
    for case in result.results:
        (run,) = case.runs
        paths = [s.path for s in run.served]
        if paths:
            assert paths[-1] == EXEC_PATH
            assert paths.count(EXEC_PATH) == 1
            assert all(s.status == 500 for s in run.served if s.path != EXEC_PATH)
            fell_back += 1
    assert fell_back >= 60  # every call that reads the archive


def test_archive_replay_never_falls_back(golden: Journal) -> None:
    with Replayer(golden, CORPUS) as replayer:
        result = replayer.replay(modes=["archive"])
    assert result.failed == 0
    paths = [s.path for r in result.results for s in r.runs[0].served]
    assert EXEC_PATH not in paths
    assert set(paths) == {BLOCK_PATH, BLOCKS_PATH}


def test_the_conditional_pass_gives_the_same_outputs_and_gets_304s(golden: Journal) -> None:
    """The same outputs and reads with the conditional reads of /blocks as without; the
    host asks conditionally, and reuses its set on each 304."""
    with Replayer(golden, CORPUS) as replayer:
        result = replayer.replay(modes=["archive", "conditional"])
    assert result.failed == 0
    plain = [s for r in result.results for s in r.runs[0].served if s.read == "blocks"]
    conditional = [s for r in result.results for s in r.runs[1].served if s.read == "blocks"]
    assert len(plain) == len(conditional) >= 60
    assert {s.status for s in plain} == {200}
    # The first read of the pass is a full one, with its tag; every one after, a 304.
    assert [s.status for s in conditional] == [200] + [304] * (len(conditional) - 1)
    assert result.not_modified == len(conditional) - 1
    assert [r.runs[0].output for r in result.results] == [r.runs[1].output for r in result.results]


def test_one_byte_changed_in_any_output_fails_that_case(golden: Journal) -> None:
    with Replayer(golden, CORPUS) as replayer:
        for call in golden.calls:
            bad = dataclasses.replace(call, output=_one_byte_changed(call.output))
            result = replayer.run_case(bad, modes=["archive"])  # the output of Python alone
            assert not result.passed, call.case
            assert f"MISMATCH {call.case} [archive replay]" in result.report()


def test_one_byte_changed_fails_make_parity(
    small_golden: SmallGolden, tmp_path: Path, run_cli: RunCli
) -> None:
    small = small_golden(*FEW).journal
    call = small.call("search-excerpt-161-runes")
    path = copy_with_output(small, call.case, _one_byte_changed(call.output), tmp_path / "j.json")
    status, out, err = run_cli("replay", "--journal", str(path))
    assert status == 1, err
    assert "MISMATCH search-excerpt-161-runes [archive replay]" in out
    assert "first difference at byte" in out
    assert out.splitlines()[-1] == f"{len(small.calls) - 1} passed, 1 failed"


def test_replay_writes_json_and_junit_reports(
    small_golden: SmallGolden, tmp_path: Path, run_cli: RunCli
) -> None:
    small = small_golden(*FEW).journal
    call = small.call("search-excerpt-161-runes")
    path = copy_with_output(small, call.case, _one_byte_changed(call.output), tmp_path / "j.json")
    report_json, report_xml = tmp_path / "r.json", tmp_path / "r.xml"
    status, out, _ = run_cli(
        "replay", "--journal", str(path), "--json", str(report_json), "--junitxml", str(report_xml)
    )
    assert status == 1
    doc = json.loads(report_json.read_text(encoding="utf-8"))
    assert (doc["passed"], doc["failed"]) == (len(small.calls) - 1, 1)
    records = {r["name"]: r for r in doc["cases"]}
    assert list(records) == [f"recall/{c.case}" for c in small.calls]
    failed = records[f"recall/{call.case}"]
    assert failed["pass"] is False
    where = failed["first_difference"]
    offset = next(
        i
        for i, (a, b) in enumerate(
            zip(call.output.encode(), _one_byte_changed(call.output).encode(), strict=False)
        )
        if a != b
    )
    assert (where["mode"], where["offset"]) == ("archive", offset)
    assert failed["reads"] == {"go": list(call.reads or ()), "python": list(call.reads or ())}
    passed = records["recall/recall-id-plain"]
    assert passed["pass"] is True
    assert passed["first_difference"] is None
    assert passed["reads"]["python"] == ["block?seq=1000"]
    root = ET.parse(report_xml).getroot()
    suite = root.find("testsuite")
    assert suite is not None
    assert (suite.get("tests"), suite.get("failures")) == (str(len(small.calls)), "1")
    failures = [(t.get("name"), t.find("failure")) for t in suite.iter("testcase")]
    assert [name for name, f in failures if f is not None] == [call.case]
    failure = dict(failures)[call.case]
    assert failure is not None
    assert f"first difference at byte {offset}" in (failure.get("message") or "")
    assert f"MISMATCH {call.case} [archive replay]" in (failure.text or "")
    assert out.splitlines()[-1] == f"{len(small.calls) - 1} passed, 1 failed"


def test_replay_says_when_a_recording_awaits_review(
    small_golden: SmallGolden, tmp_path: Path, run_cli: RunCli
) -> None:
    small = small_golden(*FEW)
    path = tmp_path / "recall.json"
    path.write_bytes(small.path.read_bytes())
    (tmp_path / "recall.json.new").write_bytes(small.path.read_bytes())
    status, out, _ = run_cli("replay", "--journal", str(path))
    assert status == 0
    assert f"{path}.new: a recording awaits review (`parity review`)" in out
    assert out.splitlines()[-1] == f"{len(small.journal.calls)} passed, 0 failed"
    (tmp_path / "recall.json.new").unlink()
    assert "awaits review" not in run_cli("replay", "--journal", str(path))[1]


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("TEXT_MISSING_ID", 'recall needs an "id", such as "r8"'),
        ("TEXT_MISSING_QUERY", 'recall_search needs a "Query"'),
        ("text_no_match", lambda q, *_: f"no archived block matches {quote(q)}."),
    ],
)
def test_one_character_changed_in_python_fails_the_cases_using_it(
    monkeypatch: pytest.MonkeyPatch,
    golden: Journal,
    small_golden: SmallGolden,
    run_cli: RunCli,
    name: str,
    value: object,
) -> None:
    original = getattr(recall._tools, name)
    if isinstance(original, str):
        uses = {c.case for c in golden.calls if c.output == original}
    else:
        uses = {c.case for c in golden.calls if c.output.startswith("no archived block matches")}
    assert uses
    assert not uses & set(FEW)
    small = small_golden(*uses, *FEW).journal  # every case using it, and a few others
    monkeypatch.setattr(recall._tools, name, value)
    status, out, _ = run_cli("replay")
    assert status == 1
    failed = {line.split()[1] for line in out.splitlines() if line.startswith("MISMATCH")}
    assert failed == uses
    assert out.splitlines()[-1] == f"{len(small.calls) - len(uses)} passed, {len(uses)} failed"


def test_last_line_and_exit_status(run_cli: RunCli, small_golden: SmallGolden) -> None:
    small = small_golden(*FEW).journal
    status, out, err = run_cli("replay")
    assert (status, err) == (0, "")
    assert out.splitlines() == [f"{len(small.calls)} passed, 0 failed"]


def test_case_filter(run_cli: RunCli) -> None:
    status, out, _ = run_cli("replay", "--case", "recall-id-plain", "--case", "search-no-result")
    assert status == 0
    assert out.splitlines()[-1] == "2 passed, 0 failed"
    status, _, err = run_cli("replay", "--case", "no-such-case")
    assert status == 2
    assert "no-such-case" in err


def test_an_unexpected_request_fails_the_case(golden: Journal) -> None:
    class Nosy:
        def __init__(self, inner: ToolHost, base_url: str) -> None:
            self.inner, self.base_url = inner, base_url

        def exec_tool(self, name: str, args: str) -> str:
            httpx.get(self.base_url + "/internal/v1/recall/blocks?seq=1", timeout=5)
            httpx.delete(self.base_url + BLOCKS_PATH, timeout=5)
            return self.inner.exec_tool(name, args)

    with Replayer(golden, _corpus_with_host(Nosy)) as replayer:
        result = replayer.run_case(golden.call("recall-id-absent"))
    assert not result.passed
    assert "unexpected request: No handler found for request" in result.report()
    assert "DELETE" in result.report()


def test_a_hidden_fallback_fails_the_case(golden: Journal) -> None:
    class Lazy:
        """Sends everything to Go: a fallback that must not pass for the Python tools."""

        def __init__(self, inner: ToolHost, base_url: str) -> None:
            self.base_url = base_url

        def exec_tool(self, name: str, args: str) -> str:
            answer = httpx.post(self.base_url + EXEC_PATH, json={"name": name, "args": args})
            return str(answer.json().get("output", answer.text))

    with Replayer(golden, _corpus_with_host(Lazy)) as replayer:
        result = replayer.run_case(golden.call("recall-id-absent"))
    assert not result.passed
    report = result.report()
    assert "[archive replay]" in report
    assert "fell back on POST /internal/v1/tool/exec" in report
    assert "without reading the archive first" in report


def _lenient_ids(monkeypatch: pytest.MonkeyPatch, *ids: str) -> None:
    """Make recall's id parser take each of ``ids`` (such as "r0") as seq 0."""
    original = recall._tools.recall_id_to_seq
    monkeypatch.setattr(recall._tools, "recall_id_to_seq", lambda i: 0 if i in ids else original(i))


def test_a_port_reading_the_archive_for_a_malformed_id_fails_the_case(
    small_golden: SmallGolden, monkeypatch: pytest.MonkeyPatch
) -> None:
    small = small_golden("recall-id-zero", "recall-id-zeros", *FEW)
    _lenient_ids(monkeypatch, "r0")  # reads block 0: "not found" all the same
    with Replayer(small.journal, small.corpus) as replayer:
        result = replayer.replay()
    assert [r.case for r in result.failures] == ["recall-id-zero"]
    (failure,) = result.failures
    # Every pass that runs the tools here sees it (with conditional or incremental reads or
    # without).
    assert [r.mode for r in failure.runs if r.failed(failure.call.output)] == [
        "archive",
        "conditional",
        "delta",
    ]
    assert [r.output for r in failure.runs] == [failure.call.output] * 4  # the output is right
    report = failure.report()
    assert report.startswith("FAILED recall-id-zero [archive replay]")
    assert (
        "archive reads differ from Go's: expected none (as Go's tool read), "
        "actual [block?seq=0]" in report
    )
    assert f"GET {BLOCK_PATH}?seq=0 -> 404" in report


def test_a_port_skipping_a_read_go_made_fails_the_case(
    golden: Journal, monkeypatch: pytest.MonkeyPatch
) -> None:
    original = recall._tools.recall_id_to_seq
    monkeypatch.setattr(  # r1 malformed: no read of block 1, which Go reads (not found)
        recall._tools, "recall_id_to_seq", lambda i: None if i == "r1" else original(i)
    )
    with Replayer(golden, CORPUS) as replayer:
        result = replayer.run_case(golden.call("recall-id-below-first"))
    assert not result.passed
    assert (
        "archive reads differ from Go's: expected [block?seq=1] (as Go's tool read), actual none"
        in result.report()
    )


def test_reads_differ_fails_make_parity(
    run_cli: RunCli, small_golden: SmallGolden, monkeypatch: pytest.MonkeyPatch
) -> None:
    small_golden("recall-id-zero", "recall-id-zeros", *FEW)
    _lenient_ids(monkeypatch, "r0", "r0000")
    status, out, _ = run_cli("replay")
    assert status == 1
    failed = [line.split()[1:3] for line in out.splitlines() if line.startswith("FAILED")]
    assert failed == [
        [case, f"[{mode}"]
        for case in ("recall-id-zero", "recall-id-zeros")
        for mode in ("archive", "conditional", "delta")
    ]
    assert "actual [block?seq=0]" in out
    assert out.splitlines()[-1].endswith("passed, 2 failed")


def test_unknown_reads_are_not_checked(
    golden: Journal, small_golden: SmallGolden, monkeypatch: pytest.MonkeyPatch
) -> None:
    small = small_golden("recall-id-zero", *FEW)
    _lenient_ids(monkeypatch, "r0")  # recall-id-zero reads block 0, which Go does not
    unknown = dataclasses.replace(
        small.journal, calls=tuple(dataclasses.replace(c, reads=None) for c in small.journal.calls)
    )
    with Replayer(unknown, small.corpus) as replayer:
        assert replayer.replay().failures == []
    wrong = with_reads(golden, "recall-id-plain", ("blocks",))
    with Replayer(wrong, CORPUS) as replayer:
        result = replayer.run_case(wrong.call("recall-id-plain"))
    assert "expected [blocks] (as Go's tool read), actual [block?seq=" in result.report()


def test_fake_go_is_checked_after_every_replay_even_on_failure(golden: Journal) -> None:
    class Crashing:
        def __init__(self, inner: ToolHost, base_url: str) -> None:
            self.base_url = base_url

        def exec_tool(self, name: str, args: str) -> str:
            raise KeyboardInterrupt  # not an Exception: escapes run()

    with Replayer(golden, _corpus_with_host(Crashing)) as replayer:
        replayer.fake.add_assertion("a request nobody expected")
        with pytest.raises(ParityError, match="nobody expected"):
            replayer.replay(modes=["archive"])


def test_implementation_errors_are_reported(golden: Journal) -> None:
    class Failing:
        def __init__(self, inner: ToolHost, base_url: str) -> None:
            pass

        def exec_tool(self, name: str, args: str) -> str:
            raise RuntimeError("boom")

    with Replayer(golden, _corpus_with_host(Failing)) as replayer:
        result = replayer.run_case(golden.call("recall-id-plain"))
    assert "python raised RuntimeError: boom" in result.report()


def _drop_case(j: Journal, case: str) -> Journal:
    return dataclasses.replace(j, calls=tuple(c for c in j.calls if c.case != case))


def test_journal_case_without_corpus_entry_is_an_error(golden: Journal) -> None:
    extra = JournalCall("not-in-corpus", "recall", "{}", 'recall needs an "id", such as "r7"')
    journal = dataclasses.replace(golden, calls=(*golden.calls, extra))
    with pytest.raises(CorpusError, match="'not-in-corpus' has no corpus entry"):
        check_consistency(journal, CORPUS)


def test_corpus_case_not_recorded_is_an_error(golden: Journal) -> None:
    with pytest.raises(CorpusError, match="corpus case 'search-no-result' is not recorded"):
        check_consistency(_drop_case(golden, "search-no-result"), CORPUS)


def test_stale_args_are_an_error(golden: Journal) -> None:
    calls = tuple(
        dataclasses.replace(c, args='{"id": "r1001"}') if c.case == "recall-id-plain" else c
        for c in golden.calls
    )
    with pytest.raises(CorpusError, match="'recall-id-plain': args differ"):
        check_consistency(dataclasses.replace(golden, calls=calls), CORPUS)


def _edited_block(block: str, **change: Any) -> Corpus:
    blocks = tuple(dataclasses.replace(b, **change) if b.name == block else b for b in BLOCKS)
    return dataclasses.replace(CORPUS, blocks=blocks)


@pytest.mark.parametrize(
    ("name", "change", "message"),
    [
        ("accents", {"content": "edited"}, "block 'accents': text differs"),
        ("accents", {"label": "edited"}, "block 'accents': label differs"),
        ("accents", {"locked": True}, "block 'accents': locked in the corpus, served in"),
        ("locked", {"locked": False}, "block 'locked': unlocked in the corpus, locked in"),
    ],
)
def test_an_edited_corpus_block_makes_the_journal_stale(
    golden: Journal, name: str, change: dict[str, Any], message: str
) -> None:
    with pytest.raises(CorpusError, match="is stale") as info:
        check_consistency(golden, _edited_block(name, **change))
    assert message in str(info.value)
    assert "re-record" in str(info.value)


def test_a_renamed_corpus_block_makes_the_journal_stale(golden: Journal) -> None:
    with pytest.raises(CorpusError) as info:
        check_consistency(golden, _edited_block("deploy-01", name="deploy-99"))
    assert "block 'deploy-01' is no longer in the corpus" in str(info.value)
    assert "corpus block 'deploy-99' is not recorded" in str(info.value)


def test_a_stale_journal_lists_a_bounded_number_of_differences(golden: Journal) -> None:
    blocks = tuple(dataclasses.replace(b, content=b.content + "!") for b in CORPUS.blocks)
    with pytest.raises(CorpusError) as info:
        check_consistency(golden, dataclasses.replace(CORPUS, blocks=blocks))
    lines = str(info.value).splitlines()
    assert len(lines) == 1 + 12 + 1
    assert lines[-1] == f"  ... and {len(golden.blocks) - 12} more"


def test_replay_of_an_edited_corpus_is_exit_2(
    run_cli: RunCli, monkeypatch: pytest.MonkeyPatch
) -> None:
    from parity.corpora import recall

    monkeypatch.setattr(recall, "CORPUS", _edited_block("html-tags", content="edited"))
    status, out, err = run_cli("replay")
    assert status == 2
    assert "is stale" in err
    assert "block 'html-tags': text differs" in err
    assert "passed" not in out


def test_cli_reports_corpus_disagreement_with_exit_2(
    golden: Journal, tmp_path: Path, run_cli: RunCli
) -> None:
    from parity import journal

    path = tmp_path / "j.json"
    journal.write(_drop_case(golden, "search-no-result"), path)
    status, out, err = run_cli("replay", "--journal", str(path))
    assert status == 2
    assert "'search-no-result' is not recorded" in err
    assert "passed" not in out


def test_replay_of_unknown_case_is_an_error(golden: Journal) -> None:
    with (
        Replayer(golden, CORPUS) as replayer,
        pytest.raises(ParityError, match="no such case in the journal: nope"),
    ):
        replayer.replay(cases=["nope"])


def test_mismatch_in_fallback_mode_only(golden: Journal) -> None:
    call = golden.call("recall-id-plain")
    bad = with_output(golden, call.case, call.output + "x")
    # The fake serves the journal it was built from; the expectation is the golden one.
    with Replayer(bad, CORPUS) as replayer:
        result = replayer.run_case(call)
    assert [r.mode for r in result.runs if r.failed(call.output)] == ["fallback"]
    assert json.dumps(result.report()).count("MISMATCH") == 1


def test_the_delta_pass_reads_a_delta_for_each_call_that_reads_blocks(golden: Journal) -> None:
    """Each such call follows a search over a stale set: the port, which keeps the set it
    read, reads the change back to the journal's set as a delta (the delta path taken)."""
    with Replayer(golden, CORPUS) as replayer:
        result = replayer.replay(modes=["delta"])
    assert result.failures == []
    reading = [c for c in golden.calls if "blocks" in (c.reads or ())]
    assert reading
    assert result.deltas == len(reading)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (dict(blocks=(*BLOCKS, BLOCKS[0])), "two blocks are named 'accents'"),
        (dict(calls=(*CORPUS.calls, CORPUS.calls[0])), "two calls are named "),
        (dict(calls=(CorpusCall("Upper", "recall", "{}"),)), "case 'Upper' is not kebab-case"),
        (
            dict(calls=(CorpusCall("c", "recall", "{{seq:nope}}"),)),
            "case 'c' cites an unknown block 'nope'",
        ),
    ],
)
def test_a_corpus_that_cannot_be_played_is_refused(change: dict[str, Any], message: str) -> None:
    with pytest.raises(CorpusError, match=f"^corpus 'recall': {message}"):
        dataclasses.replace(CORPUS, **change)
