"""The `parity` command: dispatch, `diff`, and the delegated `fuzz` and `strength`."""

from __future__ import annotations

import importlib
import subprocess
import sys
import types
from collections.abc import Callable
from pathlib import Path

import pytest

from parity import cli, journal
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
    assert status == 1
    assert f"drift: {other} does not record the answers of {GOLDEN}:" in out
    assert "  changed: recall-id-plain (output)" in out.splitlines()
    assert "OUTPUT CHANGED recall-id-plain" in out
    assert "first difference at byte" in out


def test_diff_explains_changed_reads(golden: Journal, tmp_path: Path, run_cli: RunCli) -> None:
    other = tmp_path / "b.json"
    journal.write(with_reads(golden, "recall-id-plain", ("block?seq=1001",)), other)
    status, out, _ = run_cli("diff", str(GOLDEN), str(other))
    assert status == 1
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


def test_delegates_fuzz_and_strength(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[tuple[str, list[str]]] = []

    def fake_cli(name: str) -> Callable[[list[str]], int]:
        def cli_main(argv: list[str]) -> int:
            seen.append((name, argv))
            return 3

        return cli_main

    for name, module_name in (("fuzz", "parity.campaign"), ("strength", "parity.strength")):
        module = types.ModuleType(module_name)
        module.cli_main = fake_cli(name)  # type: ignore[attr-defined]
        monkeypatch.setitem(sys.modules, module_name, module)
    assert cli.main(["fuzz", "--seconds", "1", "--help"]) == 3
    assert cli.main(["strength"]) == 3
    assert seen == [("fuzz", ["--seconds", "1", "--help"]), ("strength", [])]


def test_absent_delegate_is_a_clear_error(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def absent(name: str) -> types.ModuleType:
        raise ModuleNotFoundError(f"No module named {name!r}", name=name)

    monkeypatch.setattr(importlib, "import_module", absent)
    assert cli.main(["strength"]) == 2
    assert "parity strength` is not available" in capsys.readouterr().err


def test_journal_needs_one_corpus(run_cli: RunCli) -> None:
    status, _, err = run_cli("replay", "--journal", str(GOLDEN), "--corpus", "recall")
    assert status == 0
    status, _, err = run_cli("replay", "--corpus", "nope")
    assert status == 2
    assert "no corpus named 'nope'" in err


def test_console_script_runs_fast_and_ends_with_the_count() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "parity.cli", "replay"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1].endswith("passed, 0 failed")
