"""Shared helpers for the harness's tests: a small journal, and running the CLI."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path

import pytest

from parity import journal
from parity.cli import main
from parity.corpus import get_corpus
from parity.journal import Journal, JournalCall, RecordedBy

GOLDEN = get_corpus("recall").journal_path

RunCli = Callable[..., tuple[int, str, str]]


@pytest.fixture
def run_cli(capsys: pytest.CaptureFixture[str]) -> RunCli:
    """``run_cli(*argv)``: the ``parity`` command's exit status, stdout and stderr."""

    def run(*argv: str) -> tuple[int, str, str]:
        status = main(list(argv))
        captured = capsys.readouterr()
        return status, captured.out, captured.err

    return run


@pytest.fixture(scope="session")
def golden() -> Journal:
    """The committed recall journal."""
    return journal.load(GOLDEN)


def small_journal() -> Journal:
    """A two-call journal, for the journal module's own tests."""
    return Journal(
        corpus="recall",
        recorded_by=RecordedBy(
            go_version="go1.27.3",
            unicode_version="17.0.0",
            goos="linux",
            goarch="amd64",
            instance="reference",
        ),
        seqs={"a": 7},
        blocks=(journal.JournalBlock(7, "<b>", "line\u2028é"),),
        calls=(
            JournalCall("one", "recall", '{"id": "r7"}', "[r7] <b>\nline\u2028é", ("block?seq=7",)),
            JournalCall("two", "recall_search", "{}", 'recall_search needs a "query"', ()),
        ),
    )


def with_reads(j: Journal, case: str, reads: tuple[str, ...] | None) -> Journal:
    """``j`` with one call's recorded reads replaced (its digest is recomputed on write)."""
    calls = tuple(dataclasses.replace(c, reads=reads) if c.case == case else c for c in j.calls)
    return dataclasses.replace(j, calls=calls)


def with_output(j: Journal, case: str, output: str) -> Journal:
    """``j`` with one recorded output replaced (its digest is recomputed on write)."""
    calls = tuple(dataclasses.replace(c, output=output) if c.case == case else c for c in j.calls)
    return dataclasses.replace(j, calls=calls)


def copy_with_output(j: Journal, case: str, output: str, path: Path) -> Path:
    """Write ``j`` with one output replaced to ``path``, through parity.journal."""
    journal.write(with_output(j, case, output), path)
    return path
