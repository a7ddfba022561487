"""The `parity` command: its registry of subcommands, its one error handler, `diff`."""

from __future__ import annotations

import argparse
import importlib
import inspect
import os
import subprocess
import sys
import types
from pathlib import Path
from typing import Any

import pytest

from parity import cli, journal
from parity.errors import ParityError
from parity.journal import Journal

from .conftest import GOLDEN, RunCli, copy_with_output, with_reads


def test_diff_of_identical_journals(run_cli: RunCli) -> None:
    status, out, _ = run_cli("diff", str(GOLDEN), str(GOLDEN))
    assert status == 0
    assert "record the same thing" in out


def test_diff_explains_a_changed_output(golden: Journal, tmp_path: Path, run_cli: RunCli) -> None:
    call = golden.call("recall-id-plain")
    other = copy_with_output(
        golden, call.case, call.output.replace("vanille", "vanil1e"), tmp_path / "b.json"
    )
    status, out, _ = run_cli("diff", str(GOLDEN), str(other))
    assert status == 3
    assert f"drift: {other} does not record the answers of {GOLDEN}:" in out
    assert "  changed: recall-id-plain (output)" in out.splitlines()
    assert "OUTPUT CHANGED recall-id-plain" in out
    assert "first difference at byte" in out


def test_diff_explains_changed_reads(golden: Journal, tmp_path: Path, run_cli: RunCli) -> None:
    other = tmp_path / "b.json"
    journal.write(with_reads(golden, "recall-id-plain", ("block?seq=1001",)), other)
    status, out, _ = run_cli("diff", str(GOLDEN), str(other))
    assert status == 3
    assert "  changed: recall-id-plain (reads)" in out.splitlines()
    assert "READS CHANGED recall-id-plain" in out
    assert f"  reads in {GOLDEN}: [block?seq=1000]" in out.splitlines()
    assert f"  reads in {other}: [block?seq=1001]" in out.splitlines()


def test_diff_reports_reads_not_recorded(golden: Journal, tmp_path: Path, run_cli: RunCli) -> None:
    other = tmp_path / "b.json"
    journal.write(with_reads(golden, "recall-id-plain", None), other)
    status, out, _ = run_cli("diff", str(GOLDEN), str(other))
    assert status == 0
    assert "  not recorded in the new journal (not compared): the reads of 1 calls" in out


def test_diff_of_a_broken_journal_exits_2(tmp_path: Path, run_cli: RunCli) -> None:
    broken = tmp_path / "broken.json"
    broken.write_text("{", encoding="utf-8")
    status, _, err = run_cli("diff", str(GOLDEN), str(broken))
    assert status == 2
    assert str(broken) in err


def test_every_registered_command_is_a_module_with_add_parser_and_run() -> None:
    for name, module_name in cli.COMMANDS.items():
        module = importlib.import_module(module_name)
        assert callable(module.add_parser), name
        assert callable(module.run), name


def test_a_command_is_one_module_registered_in_one_place(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    seen: list[argparse.Namespace] = []
    module = types.ModuleType("hello_command")

    def add_parser(sub: Any) -> argparse.ArgumentParser:
        parser: argparse.ArgumentParser = sub.add_parser("hello", help="say hello")
        parser.add_argument("--times", type=int, default=1)
        return parser

    def run(args: argparse.Namespace) -> int:
        seen.append(args)
        if args.times < 1:
            raise ParityError("--times must be at least 1")
        return 0

    module.add_parser = add_parser  # type: ignore[attr-defined]
    module.run = run  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "hello_command", module)
    monkeypatch.setitem(cli.COMMANDS, "hello", "hello_command")
    assert cli.main(["hello", "--times", "3"]) == 0
    assert seen[0].times == 3
    assert cli.main(["hello", "--times", "0"]) == 2  # the one error handler
    assert capsys.readouterr().err == "parity: error: --times must be at least 1\n"
    assert cli.main(["--help"]) == 0
    assert "say hello" in capsys.readouterr().out


def test_an_unknown_option_prints_the_subcommands_usage(run_cli: RunCli) -> None:
    status, out, err = run_cli("replay", "--bogus")
    assert status == 2
    assert err.startswith("usage: parity replay ")
    assert err.splitlines()[-1] == "parity replay: error: unrecognized arguments: --bogus"
    assert out == ""


def _closed_pipe(*argv: str) -> tuple[int, str]:
    """Run ``parity argv`` with its stdout a pipe that nobody reads; status and stderr."""
    read, write = os.pipe()
    os.close(read)
    try:
        done = subprocess.run(
            [sys.executable, "-m", "parity", *argv],
            stdout=write,
            stderr=subprocess.PIPE,
            text=True,
            timeout=120,
            check=False,
        )
    finally:
        os.close(write)
    return done.returncode, done.stderr


@pytest.mark.parametrize(
    "argv",
    [("replay", "-v", "--case", "recall-id-plain"), ("diff", str(GOLDEN), "CHANGED"), ("review",)],
    ids=["replay", "diff", "review"],
)
@pytest.mark.usefixtures("maintainer")  # review runs only where CI does not
def test_a_closed_pipe_is_exit_141_without_a_traceback(
    golden: Journal, tmp_path: Path, argv: tuple[str, ...]
) -> None:
    call = golden.call("recall-id-plain")
    changed = copy_with_output(golden, call.case, call.output + "!", tmp_path / "b.json")
    status, err = _closed_pipe(*(str(changed) if a == "CHANGED" else a for a in argv))
    assert "Traceback" not in err
    assert "BrokenPipeError" not in err
    assert err == ""
    assert status == 141


def test_journal_needs_one_corpus(run_cli: RunCli) -> None:
    argv = ("--journal", str(GOLDEN), "--corpus", "recall", "--case", "recall-id-plain")
    status, out, err = run_cli("replay", *argv)
    assert (status, out.splitlines()[-1]) == (0, "1 passed, 0 failed"), err
    status, _, err = run_cli("replay", "--corpus", "nope")
    assert status == 2
    assert "no corpus named 'nope'" in err


def test_console_script_runs_fast_and_ends_with_the_count() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "parity", "replay"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1].endswith("passed, 0 failed")


def test_each_exit_status_has_one_meaning_documented() -> None:
    values = [int(e) for e in cli.Exit]
    assert len(values) == len(set(values))
    faults = (Path(__file__).parents[2] / "docs" / "faults.md").read_text(encoding="utf-8")
    source = inspect.getsource(cli.Exit).splitlines()
    for status in cli.Exit:
        (line,) = [line for line in source if line.strip().startswith(f"{status.name} = ")]
        assert "  # " in line, status  # its meaning, beside it
        assert f"\n| {int(status)} | " in faults, status
