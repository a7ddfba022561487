"""Fixtures for tests/recall: the hosts of both kinds, the Go toolchain of the venv and
the goeval oracle."""

from __future__ import annotations

import json
import subprocess
import threading
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from parity.errors import GoReferenceError
from parity.fixtures.go import go_unavailable
from parity.reference import go_env, go_executable

from .hosts import HOST_KINDS, Host

ROOT = Path(__file__).resolve().parents[2]
GOREF = ROOT / "goref"
GOEVAL = Path(__file__).resolve().parent / "goeval"  # the oracle's own Go module


class GoTool:
    """The Go toolchain of the running interpreter's venv."""

    def __init__(self, go: Path) -> None:
        self.go = go

    def run(self, *args: str, cwd: Path = GOREF, timeout: float = 300) -> str:
        """Run go with args in cwd and return its standard output."""
        done = subprocess.run(
            [str(self.go), *args],
            cwd=cwd,
            env=go_env(),
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
        if done.returncode != 0:
            pytest.fail(f"go {' '.join(args)} failed:\n{done.stderr}", pytrace=False)
        return done.stdout


class GoEval:
    """A running goeval: one JSON request per line in, one JSON answer per line out."""

    def __init__(self, binary: Path) -> None:
        self._proc = subprocess.Popen(
            [str(binary)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            encoding="utf-8",
            env=go_env(),
        )
        self._lock = threading.Lock()

    def many(self, requests: Sequence[dict[str, str]]) -> list[dict[str, Any]]:
        """Send the requests and return goeval's answers, in order."""
        stdin, stdout = self._proc.stdin, self._proc.stdout
        assert stdin is not None
        assert stdout is not None
        lines = [json.dumps(r, ensure_ascii=True) + "\n" for r in requests]

        def write() -> None:
            stdin.writelines(lines)
            stdin.flush()

        with self._lock:
            writer = threading.Thread(target=write, daemon=True)
            writer.start()  # a writer of its own: the pipes could fill both ways
            answers = []
            for _ in lines:
                line = stdout.readline()
                if not line:
                    pytest.fail("goeval stopped", pytrace=False)
                answer = json.loads(line)
                assert "error" not in answer, answer
                answers.append(answer)
            writer.join()
        return answers

    def call(self, op: str, s: str = "", bits: str = "") -> dict[str, Any]:
        """Send one request and return goeval's answer."""
        return self.many([{"op": op, "s": s, "bits": bits}])[0]

    def close(self) -> None:
        """Stop goeval."""
        if self._proc.stdin is not None:
            self._proc.stdin.close()
        try:
            self._proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()


@pytest.fixture(scope="session")
def go_tool() -> GoTool:
    """The venv's Go toolchain, or a skip (a failure under CI)."""
    try:
        go = go_executable()
        subprocess.run(
            [str(go), "version"], env=go_env(), capture_output=True, check=True, timeout=60
        )
    except (GoReferenceError, OSError, subprocess.SubprocessError) as exc:
        go_unavailable(GoReferenceError(str(exc)))
    return GoTool(go)


@pytest.fixture(scope="session")
def goeval(go_tool: GoTool, tmp_path_factory: pytest.TempPathFactory) -> Iterator[GoEval]:
    """goeval (tests/recall/goeval), built for the session and running."""
    binary = tmp_path_factory.mktemp("goeval") / "goeval"
    go_tool.run("build", "-o", str(binary), ".", cwd=GOEVAL)
    oracle = GoEval(binary)
    yield oracle
    oracle.close()


MakeHost = Callable[..., Host]


@pytest.fixture(scope="module", params=HOST_KINDS)
def host_kind(request: pytest.FixtureRequest) -> str:
    """The kind of host the test runs over: each host test runs once per kind."""
    kind: str = request.param
    return kind


@pytest.fixture
def make_host(host_kind: str) -> Iterator[MakeHost]:
    """``make_host(base_url, **options)``: a Host of the test's kind, closed when it ends."""
    opened: list[Host] = []

    def make(base_url: str, **options: Any) -> Host:
        host = Host(host_kind, base_url, **options)
        opened.append(host)
        return host

    yield make
    for host in opened:
        host.close()
