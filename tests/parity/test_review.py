"""`parity review`: what `parity record` left in JOURNAL.new, accepted or rejected.

The journals are recorded from Go references: one as it is, one that now answers
"Jerri" for "Jerry" (``-test-rewrite-output``), which changes four cases.
"""

from __future__ import annotations

import dataclasses
import io
import os
import subprocess
import sys
from pathlib import Path

import pytest

from parity import journal
from parity.compare import compare
from parity.corpus import get_corpus
from parity.fixtures.go import FreshGo
from parity.journal import JournalBlock
from parity.replay import check_consistency
from parity.review import whole_only

from .conftest import GOLDEN, RunCli

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


@pytest.fixture
def recorded(fresh_go: FreshGo, tmp_path: Path, run_cli: RunCli, maintainer: None) -> Path:
    """A journal recorded from a Go, and beside it what a changed Go answered."""
    path = tmp_path / "recall.json"
    go = fresh_go(first_seq=1000)
    assert run_cli("record", "--go-url", go.base_url, "--journal", str(path))[0] == 0
    changed = fresh_go(first_seq=1000, rewrite_output={"Jerry": "Jerri"})
    status, out, _ = run_cli("record", "--go-url", changed.base_url, "--journal", str(path))
    assert status == 4
    assert [line.split()[1] for line in out.splitlines() if "changed: " in line] == JERRY
    assert _jerri(journal.pending_path(path)) == JERRY
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
    assert compare(after, journal.load(pending)).changed == tuple(JERRY[2:])
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
    assert "answer one of: a, r, s, A, R, S, q" in out
    assert _jerri(recorded) == ["recall-html-tags-block"]
    assert f"{recorded}: 1 accepted, 0 rejected, 3 left for later" in out


@pytest.mark.go
def test_review_reads_its_answers_from_standard_input(recorded: Path) -> None:
    """The console command in a process of its own, as a maintainer or a script runs it."""
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    done = subprocess.run(
        [sys.executable, "-m", "parity.cli", "review", "--journal", str(recorded)],
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
    tmp_path: Path,
    run_cli: RunCli,
    monkeypatch: pytest.MonkeyPatch,
    maintainer: None,
) -> None:
    path = tmp_path / "recall.json"
    path.write_bytes(GOLDEN.read_bytes())
    go = fresh_go(first_seq=1, debug=False, rewrite_output={"Jerry": "Jerri"})
    assert run_cli("record", "--go-url", go.base_url, "--journal", str(path))[0] == 4
    new = journal.pending_path(path).read_bytes()
    status, out, _ = _review(run_cli, monkeypatch, path, "s\n")
    assert status == 4
    lines = out.splitlines()
    assert "this recording can only be accepted or rejected as a whole:" in lines
    assert "  other seqs (first seq 1000 -> 1)" in lines
    assert "[1/4] recall-html-tags-block: output changed" in out
    # The new output is shown with the journal's seqs: the diff is the change alone.
    assert f"  {path}.new (seqs as in the old) (" in out
    assert "     [r1002] <b>Bold</b> & co⏎" in lines  # an unchanged line of the diff
    assert "    +[r3] <b>Bold</b> & co⏎" not in lines
    # The port ran on the new recording (seq 3), its output compared in the journal's seqs.
    assert out.count("python (the port, on the new recording): the same as the old Go output") == 4
    assert "accept the whole recording (a), reject it (r), or skip (s, q)?" in out
    assert path.read_bytes() == GOLDEN.read_bytes()
    status, out, _ = _review(run_cli, monkeypatch, path, "a\n")
    assert status == 0
    assert f"{path}: replaced by the new recording" in out
    assert path.read_bytes() == new
    assert not journal.pending_path(path).exists()


def test_whole_only_says_why(golden: journal.Journal) -> None:
    first = golden.blocks[0]
    blocks = (JournalBlock(first.seq, first.label, first.content + "!"), *golden.blocks[1:])
    changed = dataclasses.replace(golden, blocks=blocks)
    assert whole_only(compare(golden, changed)) == ["block accents changed"]
    fewer = dataclasses.replace(golden, calls=golden.calls[1:])
    assert whole_only(compare(golden, fewer)) == [f"case {golden.calls[0].case} removed"]
    rb = dataclasses.replace(golden.recorded_by, go_version="go9.9")
    newer = dataclasses.replace(golden, recorded_by=rb)
    assert whole_only(compare(golden, newer)) == [
        f"recorded_by.go_version ({golden.recorded_by.go_version} -> go9.9)"
    ]
    assert whole_only(compare(golden, dataclasses.replace(golden, calls=golden.calls))) == [
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


def test_help_says_what_is_accepted_case_by_case(capsys: pytest.CaptureFixture[str]) -> None:
    from parity.cli import main

    assert main(["review", "--help"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "What can be accepted case by case: changed outputs and reads" in text
    assert "a changed block, other seqs, another Go version" in text
    assert "4 cases left for later (skipped, quit), 2 an error" in text
