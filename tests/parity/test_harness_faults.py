"""Harness faults: a damaged journal is exit 2 with a message, never a traceback; an
interrupted recording never touches the committed journal.

``test_journal.py`` checks the messages of ``parity.journal`` and, in process, the
CLI's exit 2 for a truncated, corrupted, unknown-version or digest-mismatched
journal. Here: the real console script in a process of its own (exit status,
stderr, no traceback, distinct from a parity failure's 1) over more kinds of
damage, and recordings cut short by SIGINT or by the Go dying half-way.
"""

from __future__ import annotations

import dataclasses
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from parity import journal, record
from parity.fixtures.go import FreshGo
from parity.goclient import GoClient
from parity.reference import GoReference, RunningReference

from .conftest import GOLDEN, RunCli, copy_with_output

CASE = "search-limit-one"


def _parity() -> list[str]:
    script = Path(sys.executable).parent / "parity"
    return [str(script)] if script.is_file() else [sys.executable, "-m", "parity"]


def _output_start(data: bytes, case: str) -> int:
    at = data.index(f'"case": "{case}"'.encode())
    return data.index(b'"output": "', at) + len(b'"output": "')


def _damage(kind: str, path: Path) -> str | None:
    """Write a journal damaged in this way to ``path``; the case the message must name."""
    data = GOLDEN.read_bytes()
    at = data.index(f'"case": "{CASE}"'.encode())
    if kind == "truncated":
        path.write_bytes(data[: at + 60])
    elif kind == "truncated-utf8":
        cut = data.index("crème".encode()) + 3  # between the two bytes of "è"
        path.write_bytes(data[:cut])
        return None
    elif kind == "corrupted":
        path.write_bytes(data[: at + 60] + b"\x00}}}" + data[at + 60 :])
    elif kind == "version":
        path.write_bytes(data.replace(f'"format": {journal.FORMAT},'.encode(), b'"format": 99,', 1))
        return None
    elif kind == "digest":
        start = _output_start(data, CASE)
        path.write_bytes(data[:start] + b"X" + data[start:])
    elif kind == "block-deleted":  # one entry of "blocks" cut out, the text still JSON
        obj = json.loads(data)
        del obj["blocks"][3]
        path.write_text(json.dumps(obj, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        return None
    elif kind == "empty":
        path.write_bytes(b"")
        return None
    elif kind == "not-utf8":
        path.write_bytes(data[: at + 40] + b"\xff\xfe" + data[at + 40 :])
    elif kind == "not-a-journal":
        path.write_bytes(b'["format", 1]\n')
        return None
    elif kind == "directory":
        path.mkdir()
        return None
    elif kind == "missing":
        return None
    return CASE


DAMAGES = [
    "truncated",
    "truncated-utf8",
    "corrupted",
    "version",
    "digest",
    "block-deleted",
    "empty",
    "not-utf8",
    "not-a-journal",
    "directory",
    "missing",
]
MESSAGES = {
    "truncated": "truncated",
    "truncated-utf8": "truncated",
    "corrupted": "corrupted",
    "version": "unknown format version 99",
    "digest": "digest mismatch",
    "block-deleted": "the seqs' and blocks' SHA-256",
    "empty": "truncated",
    "not-utf8": "not UTF-8",
    "not-a-journal": "must be a JSON object",
    "directory": "cannot read",
    "missing": "no such file",
}


IN_A_PROCESS = ("truncated", "corrupted", "version", "digest", "block-deleted")
"""The issues' damages also run through the console script, in a process of its own."""


def _assert_harness_error(kind: str, status: int, out: str, err: str, path: Path) -> None:
    assert "Traceback" not in out + err, f"{kind}:\n{err}"
    assert status == 2, f"{kind}: {status}\n{out}\n{err}"
    assert err.startswith("parity: error: "), f"{kind}: {err}"
    assert len(err.splitlines()) == 1, f"{kind}: one line, not a dump:\n{err}"
    assert str(path) in err, f"{kind}: {err}"
    assert MESSAGES[kind] in err, f"{kind}: {err}"
    assert "passed" not in out  # no replay ran


@pytest.mark.parametrize("kind", DAMAGES)
def test_a_damaged_journal_is_exit_2(tmp_path: Path, run_cli: RunCli, kind: str) -> None:
    path = tmp_path / f"{kind}.json"
    case = _damage(kind, path)
    status, out, err = run_cli("replay", "--journal", str(path))
    _assert_harness_error(kind, status, out, err, path)
    if case is not None:
        assert repr(case) in err, f"{kind}: {err}"


def test_console_script_exit_statuses(tmp_path: Path) -> None:
    """The console script: 2 for each damage, 1 for a parity failure, never a traceback.

    The processes run side by side, to keep the test short.
    """
    runs: dict[str, tuple[subprocess.Popen[str], Path, str | None]] = {}
    for kind in IN_A_PROCESS:
        path = tmp_path / f"{kind}.json"
        case = _damage(kind, path)
        runs[kind] = (_spawn(["replay", "--journal", str(path)]), path, case)
    failing = copy_with_output(journal.load(GOLDEN), CASE, "not what Go said", tmp_path / "f.json")
    cases = ["--case", CASE, "--case", "recall-id-plain"]  # the failing case and a passing one
    runs["parity-failure"] = (_spawn(["replay", "--journal", str(failing), *cases]), failing, CASE)
    for kind, (process, path, case) in runs.items():
        out, err = process.communicate(timeout=120)
        if kind == "parity-failure":
            assert "Traceback" not in out + err
            assert process.returncode == 1, f"{kind}: {process.returncode}\n{out}\n{err}"
            assert out.splitlines()[-1] == "1 passed, 1 failed"
            assert CASE in out
            continue
        _assert_harness_error(kind, process.returncode, out, err, path)
        if case is not None:
            assert repr(case) in err, f"{kind}: {err}"


def _spawn(argv: list[str]) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [*_parity(), *argv],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
    )


# Interrupted recordings. The journal under test is a copy of the committed one, in a
# directory of its own, so that a stray temporary file would show.


def _committed(tmp_path: Path) -> Path:
    directory = tmp_path / "golden"
    directory.mkdir()
    path = directory / "recall.json"
    path.write_bytes(GOLDEN.read_bytes())
    return path


def _untouched(path: Path) -> None:
    assert path.read_bytes() == GOLDEN.read_bytes()
    assert sorted(p.name for p in path.parent.iterdir()) == [path.name]  # no temp file left


# The driver runs the real `parity record` in a process of its own; it only wraps two
# functions: GoReference.start, to publish the reference's pid, and the recorder's
# _exec, to say "mid-way" at call N and then sit there (as on a slow Go) until
# the SIGINT arrives.
_DRIVER = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    from parity import record, reference
    from parity.cli import main

    marker, stop_at = Path(sys.argv[1]), int(sys.argv[2])
    start, exec_tool, calls = reference.GoReference.start, record._exec, [0]

    def started(self, **kwargs):
        running = start(self, **kwargs)
        Path(str(marker) + ".pid").write_text(str(running._process.pid))
        return running

    def slow(go, case, name, args):
        calls[0] += 1
        if calls[0] == stop_at:
            marker.write_text(case)
            time.sleep(60)
        return exec_tool(go, case, name, args)

    reference.GoReference.start = started
    record._exec = slow
    sys.exit(main(sys.argv[3:]))
    """
)


def _wait_for(path: Path, process: subprocess.Popen[str], timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while not path.exists():
        if process.poll() is not None:
            out, err = process.communicate()
            pytest.fail(f"the recorder ended first ({process.returncode}):\n{out}\n{err}")
        if time.monotonic() > deadline:
            process.kill()
            pytest.fail("the recorder never reached the middle")
        time.sleep(0.02)


def _gone(pid: int, timeout: float = 15) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            return True
        if state == "Z":
            return True  # dead, waiting for a parent to reap it
        time.sleep(0.05)
    return False


@pytest.mark.go
@pytest.mark.parametrize(
    ("sig", "pass_", "status"),
    [
        (signal.SIGINT, "first", 130),
        (signal.SIGINT, "second", 130),
        (signal.SIGTERM, "second", 128 + signal.SIGTERM),  # CI cancelling a job, `timeout`
    ],
    ids=["sigint-first-pass", "sigint-second-pass", "sigterm"],
)
def test_interrupted_recording_leaves_the_journal_untouched(
    go_build: GoReference,
    tmp_path: Path,
    sig: signal.Signals,
    pass_: str,
    status: int,
    interruptible: None,
) -> None:
    env = {k: v for k, v in os.environ.items() if k != "CI"}  # a maintainer's recording
    path = _committed(tmp_path)
    marker = tmp_path / "mid-way"
    n_calls = len(journal.load(GOLDEN).calls)
    stop_at = n_calls // 2 if pass_ == "first" else n_calls + n_calls // 2
    process = subprocess.Popen(
        [
            sys.executable,
            "-c",
            _DRIVER,
            str(marker),
            str(stop_at),
            "record",
            "--journal",
            str(path),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        _wait_for(marker, process)
        process.send_signal(sig)
        out, err = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    pid = int(Path(f"{marker}.pid").read_text())
    gone = _gone(pid)
    if not gone:
        os.kill(pid, signal.SIGKILL)  # the reference this test started, through the recorder
    assert gone, f"the Go reference (pid {pid}) outlived the interrupted recording"
    assert process.returncode == status, f"{out}\n{err}"
    assert "Traceback" not in err
    _untouched(path)


def _killing_go_at(
    monkeypatch: pytest.MonkeyPatch, stop_at: int, kill: Callable[[], None]
) -> list[str]:
    """The recorder's _exec, with ``kill()`` run before call ``stop_at``; the cases seen."""
    seen: list[str] = []
    exec_tool = record._exec

    def dying(go: GoClient, case: str, name: str, args: str) -> str:
        seen.append(case)
        if len(seen) == stop_at:
            kill()
        return exec_tool(go, case, name, args)

    monkeypatch.setattr(record, "_exec", dying)
    return seen


def _kill(process: subprocess.Popen[str]) -> None:
    process.kill()
    process.wait()


@pytest.mark.go
@pytest.mark.parametrize("check", [False, True], ids=["record", "check"])
def test_the_reference_dying_half_way(
    go_build: GoReference,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    run_cli: RunCli,
    check: bool,
    maintainer: None,
) -> None:
    """`parity record` on its own reference, killed (SIGKILL) in the middle of the first pass."""
    path = _committed(tmp_path)
    started: list[RunningReference] = []
    start = GoReference.start

    def remember(self: GoReference, **kwargs: object) -> RunningReference:
        running = start(self, **kwargs)  # type: ignore[arg-type]
        started.append(running)
        return running

    monkeypatch.setattr(GoReference, "start", remember)
    seen = _killing_go_at(monkeypatch, 40, lambda: _kill(started[0]._process))
    status, out, err = run_cli("record", "--journal", str(path), *(["--check"] if check else []))
    assert status == 2, out
    assert err.startswith("parity: error: ")
    assert "did not answer" in err
    assert repr(seen[-1]) in err  # the case being recorded when the Go died
    assert "Traceback" not in err
    assert "wrote" not in out
    _untouched(path)


@pytest.mark.go
def test_a_live_go_dying_half_way(
    fresh_go: FreshGo,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    run_cli: RunCli,
    maintainer: None,
) -> None:
    """`parity record --go-url`: the live Go dies in the second pass."""
    go = fresh_go(first_seq=1)
    path = _committed(tmp_path)
    n_calls = len(journal.load(GOLDEN).calls)
    seen = _killing_go_at(monkeypatch, n_calls + 7, lambda: _kill(go._process))
    status, out, err = run_cli("record", "--go-url", go.base_url, "--journal", str(path))
    assert status == 2, out
    assert "did not answer" in err
    assert repr(seen[-1]) in err
    assert "Traceback" not in err
    _untouched(path)


def _pytest_golden(*args: str) -> tuple[int, str]:
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-p",
            "no:cacheprovider",
            "-q",
            "-rN",  # no short summary: each message is counted where pytest reports it
            str(Path(__file__).with_name("test_golden.py")),
            *args,
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    return done.returncode, done.stdout + done.stderr


def test_the_pytest_plugin_reports_a_damaged_journal_once(tmp_path: Path) -> None:
    """`pytest --parity-journal X`: the golden tests fail with the message, pytest survives."""
    path = tmp_path / "digest.json"
    _damage("digest", path)
    status, out = _pytest_golden("--parity-journal", str(path))
    assert status == 1, out  # tests failed; not 3 (internal error) or 4 (usage)
    assert "golden/journal-error" in out
    message = f"{path}: case {CASE!r}: field 'output': digest mismatch"
    assert out.count(message) == 1, out
    assert "During handling" not in out
    assert "INTERNALERROR" not in out


def test_the_pytest_plugin_reports_a_stale_journal_as_one_error(tmp_path: Path) -> None:
    path = tmp_path / "stale.json"
    golden = journal.load(GOLDEN)
    journal.write(dataclasses.replace(golden, calls=golden.calls[1:]), path)
    status, out = _pytest_golden("--parity-journal", str(path))
    assert status == 1, out
    assert out.count("is stale") == 1, out
    assert f"corpus case {golden.calls[0].case!r} is not recorded" in out
    assert "1 failed" in out or "1 error" in out, out
    assert "During handling" not in out
