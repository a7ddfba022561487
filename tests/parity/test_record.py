"""parity.record and `parity record`: recorded from Go, reproducible, refusing what is unsafe."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from parity import goclient, journal, record, report
from parity.compare import compare
from parity.corpus import get_corpus
from parity.errors import GoClientError, ParityError
from parity.fixtures.go import FreshGo
from parity.goclient import TOKEN_ENV, GoClient, GoConnection
from parity.journal import Journal
from parity.replay import Replayer
from parity.report import CASES_SHOWN, LINES_SHOWN
from recall import DEFAULT_UNICODE_VERSION

from .conftest import GOLDEN, RunCli, SmallGolden, copy_with_output, with_output

pytestmark = pytest.mark.go

CORPUS = get_corpus("recall")
FEW = (
    "recall-id-plain",
    "recall-id-below-first",
    "recall-id-zero",
    "search-no-result",
    "search-limit-one",
    "search-accents",
)
"""Cases of both tools, that read a block, the block set, or nothing: for a test of what
the recorder does, not of what the whole corpus records (``small_golden``)."""


def test_recording_reproduces_the_golden_journal_byte_for_byte(
    fresh_go: FreshGo, tmp_path: Path, run_cli: RunCli, maintainer: None
) -> None:
    fresh_go()  # skips (or fails under CI) when Go is unavailable
    path = tmp_path / "recall.json"
    path.write_bytes(GOLDEN.read_bytes())
    status, out, err = run_cli("record", "--journal", str(path))
    assert (status, err) == (0, "")
    assert "no change" in out
    assert path.read_bytes() == GOLDEN.read_bytes()


def test_check_passes_on_the_committed_journal(fresh_go: FreshGo, run_cli: RunCli) -> None:
    fresh_go()
    status, out, _ = run_cli("record", "--check")
    assert status == 0
    assert "matches the Go" in out


def test_check_reports_drift_listing_cases(
    fresh_go: FreshGo, small_golden: SmallGolden, tmp_path: Path, run_cli: RunCli
) -> None:
    fresh_go()
    small = small_golden(*FEW).journal
    path = copy_with_output(small, "search-limit-one", "stale", tmp_path / "j.json")
    before = path.read_bytes()
    status, out, _ = run_cli("record", "--check", "--journal", str(path))
    assert status == 3
    assert "DRIFT" in out
    assert "  changed: search-limit-one (output)" in out.splitlines()
    assert path.read_bytes() == before  # --check never writes
    assert not journal.pending_path(path).exists()


def test_check_shows_each_change_bounded_and_in_full_with_v(
    fresh_go: FreshGo, golden: Journal, small_golden: SmallGolden, tmp_path: Path, run_cli: RunCli
) -> None:
    fresh_go()
    cases = golden.cases[: CASES_SHOWN + 2]
    stale = golden = small_golden(*cases, *FEW).journal
    for case in cases:  # the first stale output is long: 60 lines
        text = "\n".join(f"stale {i}" for i in range(60)) if case == cases[0] else "stale"
        stale = with_output(stale, case, text)
    path = tmp_path / "j.json"
    journal.write(stale, path)
    status, out, _ = run_cli("record", "--check", "--journal", str(path))
    assert status == 3
    first = golden.call(cases[0])
    assert f"OUTPUT CHANGED {cases[0]}" in out
    assert "  first difference at byte 0 (line 1, col 1)" in out
    assert f"  {path} (" in out
    assert "  the Go (" in out
    assert "    -stale 0⏎" in out  # the diff: the journal's line, then the Go's
    assert f"    +{report.visible(first.output).splitlines()[0]}" in out
    assert out.count(f"    … {60 - LINES_SHOWN} more lines") == 1  # the journal's output
    assert f"OUTPUT CHANGED {cases[CASES_SHOWN - 1]}" in out
    assert f"OUTPUT CHANGED {cases[CASES_SHOWN]}" not in out
    assert "… 2 more changed cases" in out
    assert "(bounded: `-v` shows every changed case in full)" in out
    status, full, _ = run_cli("record", "--check", "--journal", str(path), "-v")
    assert status == 3
    assert all(f"OUTPUT CHANGED {case}" in full for case in cases)
    assert "    -stale 59" in full
    assert "more lines" not in full
    assert "bounded" not in full


def test_record_keeps_a_changed_journal_and_writes_the_recording_beside_it(
    fresh_go: FreshGo, small_golden: SmallGolden, tmp_path: Path, run_cli: RunCli, maintainer: None
) -> None:
    fresh_go()
    small = small_golden(*FEW)
    path = copy_with_output(small.journal, "recall-id-zero", "stale", tmp_path / "j.json")
    before = path.read_bytes()
    status, out, _ = run_cli("record", "--journal", str(path))
    assert status == 4
    assert "  changed: recall-id-zero (output)" in out.splitlines()
    assert f"written to {path}.new" in out
    assert "parity review" in out
    assert path.read_bytes() == before  # kept, for the review
    pending = journal.pending_path(path)
    assert pending.read_bytes() == small.path.read_bytes()
    # Recorded again once the journal matches the Go: the stale recording goes.
    path.write_bytes(small.path.read_bytes())
    status, out, _ = run_cli("record", "--journal", str(path))
    assert status == 0
    assert "no change" in out
    assert f"removed {pending}" in out
    assert not pending.exists()


def test_new_only_adds_the_cases_the_journal_lacks_and_nothing_else(
    fresh_go: FreshGo,
    golden: Journal,
    small_golden: SmallGolden,
    tmp_path: Path,
    run_cli: RunCli,
    maintainer: None,
) -> None:
    fresh_go()
    one, two = golden.cases[2], golden.cases[9]
    golden = small_golden(one, two, *FEW).journal
    lacking = dataclasses.replace(
        golden, calls=tuple(c for c in golden.calls if c.case not in (one, two))
    )
    stale = with_output(lacking, "search-limit-one", "stale")
    path = tmp_path / "j.json"
    journal.write(stale, path)
    status, out, err = run_cli("record", "--new-only", "--journal", str(path))
    assert (status, err) == (0, ""), out
    assert f"{path}: new cases added: {one}, {two}" in out
    assert "not taken (`parity record` records them for review):" in out
    assert "  changed: search-limit-one (output)" in out.splitlines()
    assert journal.load(path) == with_output(golden, "search-limit-one", "stale")
    assert not journal.pending_path(path).exists()
    # A journal of other blocks cannot take a case alone.
    first = golden.blocks[0]
    blocks = (dataclasses.replace(first, content="edited"), *golden.blocks[1:])
    journal.write(dataclasses.replace(lacking, blocks=blocks), path)
    before = path.read_bytes()
    status, _, err = run_cli("record", "--new-only", "--journal", str(path))
    assert status == 2
    assert (
        "--new-only adds cases to a journal of the same blocks and seqs, "
        "and here block accents changed" in err
    )
    assert path.read_bytes() == before


def test_refuses_an_archive_that_is_not_empty(fresh_go: FreshGo) -> None:
    go = fresh_go(first_seq=1000)
    go.archive("someone else's", "block")
    with pytest.raises(ParityError, match="already holds 1 readable blocks"):
        record.record(CORPUS, go_url=go.base_url)


def test_check_runs_twice_on_one_go_and_refuses_other_blocks(
    fresh_go: FreshGo, small_golden: SmallGolden, run_cli: RunCli
) -> None:
    small_golden(*FEW)  # every block, few calls: the point is the blocks in the Go
    go = fresh_go(first_seq=1, debug=False)
    for _ in range(2):  # the second finds exactly the corpus's blocks, left by the first
        status, out, err = run_cli("record", "--go-url", go.base_url, "--check")
        assert (status, err) == (0, ""), out
        assert "only the seq base differs" in out
    assert len(go.blocks()) == len([b for b in CORPUS.blocks if not b.locked])
    go.archive("someone else's", "block")
    status, _, err = run_cli("record", "--go-url", go.base_url, "--check")
    assert status == 2
    readable = len([b for b in CORPUS.blocks if not b.locked])
    assert f"already holds {readable + 1} readable blocks other than exactly the corpus's" in err
    # The corpus's texts at other seqs (another offset for one block) are refused too.
    other = fresh_go(first_seq=1, debug=False)
    for i, block in enumerate(CORPUS.blocks):
        other.archive(block.label, block.content, locked=block.locked)
        if i == 0:
            other.archive("gap", "locked", locked=True)
    status, _, err = run_cli("record", "--go-url", other.base_url, "--check")
    assert status == 2
    assert f"already holds {readable} readable blocks other than exactly the corpus's" in err


def test_live_go_with_a_token(
    fresh_go: FreshGo,
    small_golden: SmallGolden,
    tmp_path: Path,
    run_cli: RunCli,
    monkeypatch: pytest.MonkeyPatch,
    maintainer: None,
) -> None:
    small = small_golden(*FEW)
    token = "tok-5ecret-never-written"
    go = fresh_go(first_seq=1, token=token)
    monkeypatch.setenv(TOKEN_ENV, token)
    path = tmp_path / "live.json"
    status, out, err = run_cli("record", "--go-url", go.base_url, "--journal", str(path))
    assert (status, err) == (0, ""), out
    assert token not in out
    text = path.read_text(encoding="utf-8")
    assert token not in text
    live = journal.load(path)
    assert live.recorded_by.instance == "live"
    assert live.recorded_by.go_version.startswith("go")
    assert live.seqs["accents"] == 1
    assert live.call("recall-id-plain").args == '{"id": "r1"}'
    assert live.call("recall-id-plain").reads == ("block?seq=1",)  # /debug/reads, with the token
    # Other seqs, same corpus: the journal replays all the same.
    with Replayer(live, small.corpus) as replayer:
        assert replayer.replay().failures == []


def test_live_go_with_a_wrong_token_is_refused(
    fresh_go: FreshGo, monkeypatch: pytest.MonkeyPatch
) -> None:
    go = fresh_go(token="right")
    with pytest.raises(GoClientError, match="answered 401") as info:
        record.record(CORPUS, go_url=goclient.GoConnection(go.base_url, token="wrong"))
    assert info.value.status == 401
    assert "wrong" not in str(info.value)


@pytest.mark.parametrize("command", ["record", "fuzz"])
def test_a_401_says_where_the_token_goes(
    fresh_go: FreshGo,
    tmp_path: Path,
    run_cli: RunCli,
    monkeypatch: pytest.MonkeyPatch,
    maintainer: None,
    command: str,
) -> None:
    go = fresh_go(token="right")
    argv = [command, "--go-url", go.base_url]
    argv += ["--journal", str(tmp_path / "j.json")] if command == "record" else ["--seconds", "1"]
    monkeypatch.delenv(TOKEN_ENV, raising=False)
    status, _, err = run_cli(*argv)
    assert status == 2
    assert f'answered 401: {{"error":"unauthorized"}}; set ${TOKEN_ENV} to the Go\'s token' in err
    monkeypatch.setenv(TOKEN_ENV, "wrong")
    status, _, err = run_cli(*argv)
    assert status == 2
    assert f"; the Go refused the token (${TOKEN_ENV}): is it this Go's?" in err
    assert "wrong" not in err
    assert not (tmp_path / "j.json").exists()


def test_live_go_without_debug_routes(
    fresh_go: FreshGo, small_golden: SmallGolden, tmp_path: Path
) -> None:
    """A production Go (no /debug/): the Unicode version probed from its tools, the
    other versions unknown; reads null."""
    small = small_golden(*FEW)
    go = fresh_go(first_seq=1000, debug=False)
    live = record.record(small.corpus, go_url=go.base_url)
    assert dataclasses.astuple(live.recorded_by) == (
        "unknown",
        DEFAULT_UNICODE_VERSION,  # the reference's
        "unknown",
        "unknown",
        "live",
    )
    assert [c.reads for c in live.calls] == [None] * len(live.calls)
    assert [c.output for c in live.calls] == [c.output for c in small.journal.calls]
    path = tmp_path / "live.json"
    journal.write(live, path)
    assert '"reads": null' in path.read_text(encoding="utf-8")
    assert journal.load(path) == live
    # Unknown reads are not checked: a port reading more than Go still passes.
    with Replayer(live, small.corpus) as replayer:
        assert replayer.replay(modes=["archive"]).failures == []


def test_a_debug_route_failing_otherwise_is_an_error(
    fresh_go: FreshGo, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Only a 404 means "no such route": another status from /debug/reads stops the recording."""
    go = fresh_go(first_seq=1000)
    bad = dataclasses.replace(goclient.log_request("reads"), target="/debug/reads?since=x")
    monkeypatch.setattr(GoClient, "reads", lambda self, **_: self.run(bad))  # the Go answers 400
    with pytest.raises(GoClientError, match="answered 400"):
        record.record(CORPUS, go_url=go.base_url)


def test_reads_are_what_each_call_added_to_debug_reads(
    fresh_go: FreshGo, small_golden: SmallGolden
) -> None:
    small = small_golden(*FEW)
    go = fresh_go(first_seq=1000)
    j = record.record(small.corpus, go_url=go.base_url)
    assert [(c.case, c.reads) for c in j.calls] == [(c.case, c.reads) for c in small.journal.calls]
    total = go.client.reads()
    # Two passes, each call's reads in order, nothing else.
    per_pass = [r for c in j.calls for r in c.reads or ()]
    assert total == per_pass * 2


def test_refuses_a_go_whose_reads_differ_on_the_second_pass(
    fresh_go: FreshGo, small_golden: SmallGolden, monkeypatch: pytest.MonkeyPatch
) -> None:
    corpus = small_golden(*FEW).corpus
    go = fresh_go()
    seen: set[str] = set()
    original = record._exec

    def extra_read(client: GoClient, case: str, name: str, args: str) -> str:
        if case == "recall-id-zero" and case in seen:  # a read Go's tool did not make before
            original(client, case, "recall_search", '{"query": "deploy"}')
        seen.add(case)
        return original(client, case, name, args)

    monkeypatch.setattr(record, "_exec", extra_read)
    with pytest.raises(
        ParityError, match=r"second pass \(cases recall-id-zero \(reads\)\); not written"
    ):
        record.record(corpus, go_url=go.base_url)


def test_refuses_debug_reads_that_forget_earlier_reads(
    fresh_go: FreshGo, small_golden: SmallGolden, monkeypatch: pytest.MonkeyPatch
) -> None:
    corpus = small_golden(*FEW).corpus
    go = fresh_go()
    original = GoClient.reads

    def forgetful(self: GoClient, *, since: int | None = None) -> list[str]:
        reads = original(self, since=since)
        return [] if len(reads) > 3 else reads

    monkeypatch.setattr(GoClient, "reads", forgetful)
    with pytest.raises(ParityError, match="no longer lists the earlier reads"):
        record.record(corpus, go_url=go.base_url)


def test_refuses_a_go_that_answers_differently_twice(
    fresh_go: FreshGo, small_golden: SmallGolden, monkeypatch: pytest.MonkeyPatch
) -> None:
    corpus = small_golden(*FEW).corpus
    go = fresh_go()
    calls = iter(range(10**6))
    original = record._exec

    def flaky(client: GoClient, case: str, name: str, args: str) -> str:
        out = original(client, case, name, args)
        return out + "!" if case == "search-no-result" and next(calls) > 0 else out

    monkeypatch.setattr(record, "_exec", flaky)
    with pytest.raises(ParityError, match=r"second pass \(cases search-no-result\); not written"):
        record.record(corpus, go_url=go.base_url)


def test_unreachable_go_exits_2(run_cli: RunCli, tmp_path: Path, maintainer: None) -> None:
    status, _, err = run_cli(
        "record", "--go-url", "http://127.0.0.1:9", "--journal", str(tmp_path / "j.json")
    )
    assert status == 2
    assert "did not answer" in err
    assert not (tmp_path / "j.json").exists()


def test_a_live_go_by_url_records_and_replays_against_python(
    parity_go: GoConnection | None, fresh_go: FreshGo
) -> None:
    """A live Go by URL, recorded then replayed: the one of --parity-go-url (token in
    $PARITY_GO_TOKEN, TLS files in --parity-go-ca... or $PARITY_GO_CA...), else a
    fresh reference with a token, driven only by its URL."""
    if parity_go is None:
        go = fresh_go(first_seq=1000, token="live-go-token")
        parity_go = GoConnection(go.base_url, token=go.connection.token)
    live = record.record(CORPUS, go_url=parity_go)
    assert live.recorded_by.instance == "live"
    with Replayer(live, CORPUS) as replayer:
        failures = replayer.replay().failures
    assert failures == [], "\n\n".join(f.report() for f in failures)
    drift = compare(journal.load(GOLDEN), live)
    assert not drift, "\n".join(drift.lines())


# --- a production-like Go: its sequence at 1, no /debug routes ---------------------------


def test_check_against_a_production_like_go_says_only_the_seq_base_differs(
    fresh_go: FreshGo, small_golden: SmallGolden, run_cli: RunCli
) -> None:
    small = small_golden(*FEW)  # the committed journal, as `parity record --check` reads it
    golden = small.journal
    go = fresh_go(first_seq=1, debug=False)
    status, out, err = run_cli("record", "--go-url", go.base_url, "--check")
    assert (status, err) == (0, ""), out
    calls = len(golden.calls)
    lines = out.splitlines()
    assert f"matches the Go ({calls} calls) but for what follows:" in lines[1]
    assert "  seqs:    only the seq base differs (first seq 1000 -> 1); " in out
    assert (
        f"  not recorded in the new journal (not compared): the reads of {calls - 1} calls, "
        "go_version, goos, goarch" in lines
    )
    assert "  not comparable across seqs: recall-id-below-first (" in out  # r1 is a block at 1
    assert "changed" not in out
    assert not journal.pending_path(small.path).exists()


def test_check_names_exactly_the_cases_a_go_answers_differently(
    fresh_go: FreshGo, golden: Journal, run_cli: RunCli
) -> None:
    same = record.record(CORPUS, go_url=fresh_go(first_seq=1, debug=False).base_url)
    seq_only = {c.case for c in same.calls if c.output != golden.call(c.case).output}
    go = fresh_go(first_seq=1, debug=False, rewrite_output={"crème": "creme"})
    status, out, _ = run_cli("record", "--go-url", go.base_url, "--check")
    assert status == 3
    assert "DRIFT" in out
    named = [line.split()[1] for line in out.splitlines() if line.startswith("  changed: ")]
    assert named == [c.case for c in golden.calls if "crème" in c.output]
    # Many outputs of that Go differ from the journal's by their seqs only: none is named.
    unnamed = seq_only - set(named) - {"recall-id-below-first"}  # r1: a block at base 1
    assert len(unnamed) > 70
    assert all(f"changed: {case} " not in out for case in unnamed)


def test_a_journal_from_a_production_like_go_replays_and_diffs(
    fresh_go: FreshGo, small_golden: SmallGolden, tmp_path: Path, run_cli: RunCli, maintainer: None
) -> None:
    committed = small_golden(*FEW).path
    go = fresh_go(first_seq=1, debug=False)
    path = tmp_path / "production.json"
    status, out, _ = run_cli("record", "--go-url", go.base_url, "--journal", str(path))
    assert status == 0
    assert f"wrote {path}" in out
    production = journal.load(path)
    assert production.recorded_by.instance == "live"
    assert production.recorded_by.go_version == "unknown"
    assert {c.reads for c in production.calls} == {None}
    calls = len(production.calls)
    status, out, _ = run_cli("replay", "--journal", str(path))
    assert status == 0
    assert (
        f"{path}: the reads of {calls} calls were not recorded (a Go without /debug/reads): "
        "not checked" in out
    )
    assert out.splitlines()[-1] == f"{calls} passed, 0 failed"
    status, out, _ = run_cli("diff", str(committed), str(path))
    assert status == 0, out
    assert "the same answers, modulo the seqs" in out
    assert "only the seq base differs (first seq 1000 -> 1)" in out
    assert f"not recorded in the new journal (not compared): the reads of {calls - 1} calls" in out


def test_record_against_a_production_like_go_leaves_the_journal_for_review(
    fresh_go: FreshGo, small_golden: SmallGolden, tmp_path: Path, run_cli: RunCli, maintainer: None
) -> None:
    committed = small_golden(*FEW).path
    path = tmp_path / "recall.json"
    path.write_bytes(committed.read_bytes())
    go = fresh_go(first_seq=1, debug=False, rewrite_output={"crème": "creme"})
    status, out, _ = run_cli("record", "--go-url", go.base_url, "--journal", str(path))
    assert status == 4
    assert path.read_bytes() == committed.read_bytes()
    assert "  changed: search-accents (output)" in out.splitlines()
    assert "creme" in journal.pending_path(path).read_text(encoding="utf-8")


def test_under_ci_record_writes_nothing(
    tmp_path: Path, run_cli: RunCli, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CI", "true")
    absent = tmp_path / "absent.json"
    status, out, err = run_cli("record", "--journal", str(absent))
    assert (status, out) == (2, "")
    assert err == (
        "parity: error: CI is set: CI never writes a golden; "
        "`parity record --check` checks for drift\n"
    )
    assert list(tmp_path.iterdir()) == []
