"""`parity review`: what `parity record` left in JOURNAL.new, accepted or rejected.

The journals are recorded from Go references: one as it is, one that now answers
"Jerri" for "Jerry" (``-test-rewrite-output``), which changes four cases.
"""

from __future__ import annotations

import dataclasses
import io
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from parity import journal
from parity.compare import compare
from parity.corpus import get_corpus
from parity.fixtures.go import FreshGo, start_reference
from parity.journal import JournalBlock
from parity.reference import GoReference
from parity.replay import check_consistency
from parity.report import LINES_SHOWN
from parity.review import items, whole_only

from .conftest import GOLDEN, RunCli, SmallGolden, cli_output, with_output, with_reads

CORPUS = get_corpus("recall")
JERRY = [
    "recall-html-tags-block",
    "search-html-query",
    "search-html-entity-query",
    "search-excerpt-html",
]


def _outputs(path: Path) -> dict[str, str]:
    return {c.case: c.output for c in journal.load(path).calls}


def _jerri(path: Path) -> list[str]:
    """The cases of JERRY whose output at ``path`` says Jerri."""
    outputs = _outputs(path)
    return [case for case in JERRY if "Jerri" in outputs[case]]


@pytest.fixture(scope="module")
def recorded_once(go_build: GoReference, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A journal recorded from a Go, and beside it what a changed Go answered (recorded
    once for the module, by a maintainer: ``$CI`` unset)."""
    path = tmp_path_factory.mktemp("recorded") / "recall.json"
    with pytest.MonkeyPatch.context() as env:
        env.delenv("CI", raising=False)
        with start_reference(go_build, first_seq=1000) as go:
            assert cli_output("record", "--go-url", go.base_url, "--journal", str(path))[0] == 0
        with start_reference(go_build, first_seq=1000, rewrite_output={"Jerry": "Jerri"}) as go:
            status, out, _ = cli_output("record", "--go-url", go.base_url, "--journal", str(path))
    assert status == 4
    assert [line.split()[1] for line in out.splitlines() if "changed: " in line] == JERRY
    assert _jerri(journal.pending_path(path)) == JERRY
    return path


@pytest.fixture
def recorded(recorded_once: Path, tmp_path: Path, maintainer: None) -> Path:
    """A copy of ``recorded_once``'s two files, for the test to review."""
    path = tmp_path / "recall.json"
    shutil.copyfile(recorded_once, path)
    shutil.copyfile(journal.pending_path(recorded_once), journal.pending_path(path))
    return path


def _review(
    run_cli: RunCli, monkeypatch: pytest.MonkeyPatch, path: Path, answers: str, *flags: str
) -> tuple[int, str, str]:
    monkeypatch.setattr(sys, "stdin", io.StringIO(answers))
    return run_cli("review", "--journal", str(path), *flags)


@pytest.mark.go
def test_case_by_case_accept_reject_skip_quit(
    recorded: Path, run_cli: RunCli, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = _outputs(recorded)
    status, out, _ = _review(run_cli, monkeypatch, recorded, "a\nr\ns\nq\n")
    assert status == 4
    assert "[1/4] recall-html-tags-block: output changed" in out
    assert "OUTPUT CHANGED recall-html-tags-block" in out
    assert '    -<div class="note">Tom &amp; Jerry</div>⏎' in out  # the diff, old then new
    assert '    +<div class="note">Tom &amp; Jerri</div>⏎' in out
    assert "python (the port, on the new recording): the same as the old Go output" in out
    assert "[4/4] search-excerpt-html: accept (a), reject (r), skip (s)" in out
    assert f"{recorded}: 1 accepted, 1 rejected, 2 left for later in {recorded}.new" in out
    # The journal took the accepted case only; it is a valid journal of the corpus.
    assert _jerri(recorded) == ["recall-html-tags-block"]
    after = journal.load(recorded)
    check_consistency(after, CORPUS)
    assert {c.case: c.output for c in after.calls if c.case not in JERRY} == {
        k: v for k, v in before.items() if k not in JERRY
    }
    # The rejected case is no longer pending; the two undecided ones are.
    pending = journal.pending_path(recorded)
    assert _jerri(pending) == ["recall-html-tags-block", *JERRY[2:]]
    assert tuple(compare(after, journal.load(pending)).changes) == tuple(JERRY[2:])
    # The next review asks about those two only; A accepts both.
    status, out, _ = _review(run_cli, monkeypatch, recorded, "A\n")
    assert status == 0
    assert "[1/2] search-html-entity-query: output changed" in out
    assert "[2/2]" not in out  # A: accepted without asking
    assert f"{recorded}: 2 accepted, 0 rejected, 0 left for later" in out
    assert _jerri(recorded) == ["recall-html-tags-block", *JERRY[2:]]
    assert not pending.exists()


@pytest.mark.go
def test_accept_all_takes_the_recording(
    recorded: Path, run_cli: RunCli, monkeypatch: pytest.MonkeyPatch
) -> None:
    new = journal.pending_path(recorded).read_bytes()
    status, out, _ = _review(run_cli, monkeypatch, recorded, "", "--accept-all")
    assert status == 0
    assert recorded.read_bytes() == new
    assert not journal.pending_path(recorded).exists()
    assert "OUTPUT CHANGED" not in out  # nothing to look at: nothing is asked


@pytest.mark.go
def test_reject_all_keeps_the_journal(
    recorded: Path, run_cli: RunCli, monkeypatch: pytest.MonkeyPatch
) -> None:
    old = recorded.read_bytes()
    status, out, _ = _review(run_cli, monkeypatch, recorded, "", "--reject-all")
    assert status == 0
    assert f"{recorded}: 0 accepted, 4 rejected, 0 left for later" in out
    assert recorded.read_bytes() == old
    assert not journal.pending_path(recorded).exists()


@pytest.mark.go
def test_end_of_input_quits_keeping_what_was_decided(
    recorded: Path, run_cli: RunCli, monkeypatch: pytest.MonkeyPatch
) -> None:
    status, out, _ = _review(run_cli, monkeypatch, recorded, "x\na\n")
    assert status == 4
    assert "answer one of: a, r, s, d, A, R, S, q" in out
    assert _jerri(recorded) == ["recall-html-tags-block"]
    assert f"{recorded}: 1 accepted, 0 rejected, 3 left for later" in out


@pytest.mark.go
def test_review_reads_its_answers_from_standard_input(recorded: Path) -> None:
    """The console command in a process of its own, as a maintainer or a script runs it."""
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    done = subprocess.run(
        [sys.executable, "-m", "parity", "review", "--journal", str(recorded)],
        input="r\na\nR\n",
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert (done.returncode, done.stderr) == (0, ""), done.stdout
    assert _jerri(recorded) == ["search-html-query"]
    assert not journal.pending_path(recorded).exists()


@pytest.mark.go
def test_other_seqs_are_accepted_as_a_whole_only(
    fresh_go: FreshGo,
    small_golden: SmallGolden,
    run_cli: RunCli,
    monkeypatch: pytest.MonkeyPatch,
    maintainer: None,
) -> None:
    small = small_golden(*JERRY, "recall-id-plain", "search-no-result")
    path = small.path
    committed = path.read_bytes()
    go = fresh_go(first_seq=1, debug=False, rewrite_output={"Jerry": "Jerri"})
    assert run_cli("record", "--go-url", go.base_url, "--journal", str(path))[0] == 4
    new = journal.pending_path(path).read_bytes()
    status, out, _ = _review(run_cli, monkeypatch, path, "s\n")
    assert status == 4
    lines = out.splitlines()
    assert "this recording can only be accepted or rejected as a whole:" in lines
    assert "  other seqs (first seq 1000 -> 1)" in lines
    assert "OUTPUT CHANGED" not in out  # the summary only: the details on demand
    assert len(lines) < 20
    status, out, _ = _review(run_cli, monkeypatch, path, "d\ns\n")
    assert status == 4
    lines = out.splitlines()
    assert "[1] recall-html-tags-block: output changed" in out
    # The new output is shown with the journal's seqs: the diff is the change alone.
    assert f"  {path}.new (seqs as in the old) (" in out
    assert "     [r1002] <b>Bold</b> & co⏎" in lines  # an unchanged line of the diff
    assert "    +[r3] <b>Bold</b> & co⏎" not in lines
    # The port ran on the new recording (seq 3), its output compared in the journal's seqs.
    assert out.count("python (the port, on the new recording): the same as the old Go output") == 4
    assert (
        out.count("accept the whole recording (a), reject it (r), skip (s, q), details (d)?") == 2
    )
    assert path.read_bytes() == committed
    status, out, _ = _review(run_cli, monkeypatch, path, "a\n")
    assert status == 0
    assert f"{path}: replaced by the new recording" in out
    assert path.read_bytes() == new
    assert not journal.pending_path(path).exists()


@pytest.mark.go
def test_a_live_recording_is_reviewed_case_by_case_its_recorded_by_alone(
    fresh_go: FreshGo,
    small_golden: SmallGolden,
    run_cli: RunCli,
    monkeypatch: pytest.MonkeyPatch,
    maintainer: None,
) -> None:
    small = small_golden(*JERRY, "recall-id-plain", "search-no-result")
    path = small.path  # recorded from a reference
    go = fresh_go(first_seq=1000, rewrite_output={"Jerry": "Jerri"})
    assert run_cli("record", "--go-url", go.base_url, "--journal", str(path))[0] == 4
    status, out, _ = _review(run_cli, monkeypatch, path, "a\nr\nr\nr\nr\n")
    assert status == 0
    assert "whole" not in out
    assert "5 to decide one by one (d shows one in full)" in out
    assert "[5/5] recorded_by: instance reference -> live" in out
    assert f"{path}: 1 accepted, 4 rejected, 0 left for later" in out
    after = journal.load(path)
    assert _jerri(path) == ["recall-html-tags-block"]
    assert after.recorded_by == journal.load(GOLDEN).recorded_by  # rejected on its own
    check_consistency(after, small.corpus)


def _pending(tmp_path: Path, old: journal.Journal, new: journal.Journal) -> Path:
    path = tmp_path / "recall.json"
    journal.write(old, path)
    journal.write(new, journal.pending_path(path))
    return path


def test_added_and_removed_cases_are_decided_each_on_its_own(
    golden: journal.Journal,
    tmp_path: Path,
    run_cli: RunCli,
    monkeypatch: pytest.MonkeyPatch,
    maintainer: None,
) -> None:
    one, two = golden.cases[3], golden.cases[7]
    # The journal lacks `one` (an adopted case, say) and still has `two`, which the
    # corpus no longer records.
    old = dataclasses.replace(golden, calls=tuple(c for c in golden.calls if c.case != one))
    new = dataclasses.replace(golden, calls=tuple(c for c in golden.calls if c.case != two))
    path = _pending(tmp_path, old, new)
    status, out, _ = _review(run_cli, monkeypatch, path, "a\ns\n")
    assert status == 4
    assert f"[1/2] {one}: added (not in the journal)" in out
    assert f"  output in {path}.new (" in out
    assert f"[2/2] {two}: removed (not recorded now)" in out
    assert f"{path}: 1 accepted, 0 rejected, 1 left for later in {path}.new" in out
    assert journal.load(path).cases == golden.cases  # `one` in its place, `two` kept
    status, out, _ = _review(run_cli, monkeypatch, path, "a\n")
    assert status == 0
    assert f"[1/1] {two}: removed (not recorded now)" in out
    assert journal.load(path) == new
    assert not journal.pending_path(path).exists()


def test_details_on_demand(
    golden: journal.Journal,
    tmp_path: Path,
    run_cli: RunCli,
    monkeypatch: pytest.MonkeyPatch,
    maintainer: None,
) -> None:
    case = "search-limit-one"
    long = "\n".join(f"line {i}" for i in range(60))
    path = _pending(tmp_path, golden, with_output(golden, case, long))
    status, out, _ = _review(run_cli, monkeypatch, path, "d\ns\n")
    assert status == 4
    shown, full = out.split("details (d); the same for all remaining", 1)
    assert f"    … {60 - LINES_SHOWN} more lines" in shown
    assert "line 59" not in shown
    assert "    +line 59" in full
    assert "more lines" not in full.split("accept (a)")[0]


class _CtrlC(io.StringIO):
    """Answers, then Ctrl-C at the next question."""

    def readline(self, size: int | None = -1) -> str:
        line = super().readline()
        if not line:
            raise KeyboardInterrupt
        return line


def test_ctrl_c_keeps_what_was_decided_and_says_so(
    golden: journal.Journal,
    tmp_path: Path,
    run_cli: RunCli,
    monkeypatch: pytest.MonkeyPatch,
    maintainer: None,
) -> None:
    cases = golden.cases[:3]
    new = golden
    for case in cases:
        new = with_output(new, case, "changed")
    path = _pending(tmp_path, golden, new)
    monkeypatch.setattr(sys, "stdin", _CtrlC("a\n"))
    status, out, _ = run_cli("review", "--journal", str(path))
    assert status == 130
    assert f"{path}: 1 accepted, 0 rejected, 2 left for later in {path}.new" in out
    assert out.rstrip().endswith("interrupted (Ctrl-C): what was decided is kept, as with q")
    assert journal.load(path).call(cases[0]).output == "changed"
    assert (
        tuple(compare(journal.load(path), journal.load(journal.pending_path(path))).changes)
        == cases[1:]
    )
    # In a whole-only review, nothing was decided: both files stay.
    blocks = (dataclasses.replace(golden.blocks[0], content="changed"), *golden.blocks[1:])
    path = _pending(tmp_path, golden, dataclasses.replace(golden, blocks=blocks))
    before = journal.pending_path(path).read_bytes()
    monkeypatch.setattr(sys, "stdin", _CtrlC(""))
    status, out, _ = run_cli("review", "--journal", str(path))
    assert status == 130
    assert out.rstrip().endswith("interrupted (Ctrl-C): what was decided is kept, as with q")
    assert journal.pending_path(path).read_bytes() == before


def test_ctrl_c_in_a_process_of_its_own(
    golden: journal.Journal, tmp_path: Path, interruptible: None
) -> None:
    """SIGINT while the review waits for an answer, as a maintainer's Ctrl-C."""
    new = golden
    for case in golden.cases[:2]:
        new = with_output(new, case, "changed")
    path = _pending(tmp_path, golden, new)
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    review = subprocess.Popen(
        [sys.executable, "-m", "parity", "review", "--journal", str(path)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )
    assert review.stdin is not None
    assert review.stdout is not None
    review.stdin.write(b"a\n")
    review.stdin.flush()
    seen = b""
    while b"[2/2] " + golden.cases[1].encode() + b": accept (a)" not in seen:
        chunk = review.stdout.read1(4096)
        assert chunk, seen.decode()
        seen += chunk
    review.send_signal(signal.SIGINT)  # the review is reading the second answer
    rest, err = review.communicate(timeout=60)
    out = (seen + rest).decode()
    assert (review.returncode, err) == (130, b""), out
    assert f"{path}: 1 accepted, 0 rejected, 1 left for later in {path}.new" in out
    assert "interrupted (Ctrl-C): what was decided is kept, as with q" in out
    assert journal.load(path).call(golden.cases[0]).output == "changed"


def test_whole_only_says_why(golden: journal.Journal) -> None:
    first = golden.blocks[0]
    blocks = (JournalBlock(first.seq, first.label, first.content + "!"), *golden.blocks[1:])
    changed = dataclasses.replace(golden, blocks=blocks)
    assert whole_only(compare(golden, changed)) == ["block accents changed"]
    extra = JournalBlock(golden.blocks[-1].seq + 2, "adopted", "a block of its own")
    more = dataclasses.replace(
        golden, seqs={**golden.seqs, "adopted": extra.seq}, blocks=(*golden.blocks, extra)
    )
    assert whole_only(compare(golden, more)) == [
        "seqs (the block names differ)",
        "block adopted added",
    ]
    fewer = dataclasses.replace(golden, calls=golden.calls[1:])
    assert whole_only(compare(golden, fewer)) == []
    assert items(compare(golden, fewer)) == [(golden.cases[0], "removed (not recorded now)")]
    rb = dataclasses.replace(golden.recorded_by, go_version="go9.9", instance="live")
    newer = dataclasses.replace(golden, recorded_by=rb)
    assert whole_only(compare(golden, newer)) == []
    assert items(compare(golden, newer)) == [
        (
            "recorded_by",
            f"go_version {golden.recorded_by.go_version} -> go9.9, instance reference -> live",
        )
    ]
    no_reads = with_reads(golden, golden.cases[0], None)
    assert whole_only(compare(golden, no_reads)) == [
        "no case changed: the recordings differ only in what one of them recorded"
    ]


def test_nothing_to_review(tmp_path: Path, run_cli: RunCli, maintainer: None) -> None:
    path = tmp_path / "recall.json"
    path.write_bytes(GOLDEN.read_bytes())
    status, out, _ = run_cli("review", "--journal", str(path))
    assert status == 0
    assert f"{path}: nothing to review (no {path}.new)" in out


def test_under_ci_review_writes_nothing(
    tmp_path: Path, run_cli: RunCli, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CI", "true")
    path = tmp_path / "recall.json"
    path.write_bytes(GOLDEN.read_bytes())
    pending = journal.pending_path(path)
    pending.write_bytes(GOLDEN.read_bytes())
    for flag in ("--accept-all", "--reject-all"):
        status, out, err = run_cli("review", "--journal", str(path), flag)
        assert (status, out) == (2, "")
        assert err == "parity: error: CI is set: CI never writes a golden, so it reviews nothing\n"
    assert path.read_bytes() == pending.read_bytes() == GOLDEN.read_bytes()


def test_help_says_what_is_decided_item_by_item(run_cli: RunCli) -> None:
    status, out, _ = run_cli("review", "--help")
    assert status == 0
    text = " ".join(out.split())
    assert "a summary first, then each item on its own" in text
    assert "only where its items hang together: the corpus, a block or the seqs differ" in text
    assert "4 items left for later (skipped, quit), 2 an error" in text
    assert "130 Ctrl-C (what was decided is written)" in text
