"""Running mutants against the golden replay, in worker interpreters.

Each worker loads the journal once, then for each mutant imports the mutated module
from its compiled code (a meta-path finder; the file is never written) and replays
the journal case by case, both passes each, as ``make parity`` does: the first case
that fails kills the mutant. The unmutated code is replayed first in each worker and
must pass.
"""

from __future__ import annotations

import ast
import base64
import contextlib
import importlib.abc
import importlib.machinery
import importlib.util
import json
import marshal
import os
import select
import subprocess
import sys
import tempfile
import threading
import time
import types
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from parity.project import project_root
from parity.strength._explain import MutantMatch, Problem, load_explanations
from parity.strength._mutants import Mutant, generate_mutants, short
from parity.strength._normal import imported_module

__all__ = ["MutantResult", "MutationRun", "run_mutants"]


@dataclass(frozen=True)
class MutantResult:
    """What the replay did to one mutant."""

    mutant: Mutant
    status: str
    """``killed``, ``timeout`` (counted as killed), ``survived``."""
    detail: str = ""
    """The first failing case, or the error that killed it."""
    seconds: float = 0.0

    @property
    def killed(self) -> bool:
        """Whether the goldens told the mutant apart."""
        return self.status != "survived"


@dataclass
class MutationRun:
    """The results of a mutation run, with the explanations that name its mutants."""

    results: list[MutantResult]
    total_generated: int
    seconds: float
    match: MutantMatch

    def why(self, mutant: Mutant) -> str | None:
        """Why the goldens cannot kill ``mutant``, when an explanation says."""
        return self.match.why(mutant)

    @property
    def killed(self) -> int:
        """How many mutants the replay killed (time-outs included)."""
        return sum(r.killed for r in self.results)

    @property
    def timeouts(self) -> int:
        """How many mutants were killed by the time-out."""
        return sum(r.status == "timeout" for r in self.results)

    @property
    def survivors(self) -> list[MutantResult]:
        """The mutants the replay did not kill."""
        return [r for r in self.results if not r.killed]

    @property
    def equivalent(self) -> list[MutantResult]:
        """The survivors that an explanation names."""
        return [r for r in self.survivors if self.why(r.mutant)]

    @property
    def unexplained(self) -> list[MutantResult]:
        """The survivors that no explanation names."""
        return [r for r in self.survivors if not self.why(r.mutant)]

    @property
    def explained_but_killed(self) -> list[MutantResult]:
        """Mutants an explanation calls equivalent that the replay killed."""
        return [r for r in self.results if r.killed and self.why(r.mutant)]

    @property
    def problems(self) -> list[Problem]:
        """Explanations that no longer fit: orphaned, ambiguous, or naming a killed mutant."""
        out = list(self.match.problems)
        for r in self.explained_but_killed:
            rule = self.match.by_mutant[r.mutant.ident]
            out.append(
                Problem(
                    rule.label,
                    "killed",
                    f"{rule.describe()}: the replay kills this mutant ({r.mutant.where}, "
                    f"first at {r.detail}): it is not equivalent, delete the entry",
                )
            )
        return out

    @property
    def score(self) -> float:
        """Killed over run, in percent."""
        return 100.0 * self.killed / len(self.results) if self.results else 100.0

    @property
    def killable_score(self) -> float:
        """Killed over run less the equivalent mutants, in percent."""
        killable = len(self.results) - len(self.equivalent)
        return 100.0 * self.killed / killable if killable else 100.0


def _imports(module: str) -> set[str]:
    """The modules of the same top package that ``module`` imports (from its source)."""
    spec = importlib.util.find_spec(module)
    if spec is None or spec.origin is None or not spec.origin.endswith(".py"):
        return set()
    with open(spec.origin, encoding="utf-8") as f:
        tree = ast.parse(f.read())
    top = module.split(".")[0]
    package = module if spec.submodule_search_locations else module.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.split(".")[0] == top)
        elif isinstance(node, ast.ImportFrom):
            base = imported_module(node, package)
            if base.split(".")[0] != top:
                continue
            found.add(base)
            found.update(f"{base}.{a.name}" for a in node.names)
    return {name for name in found if name != module}


def _kept_modules(package: str, mutated: str, loaded: Iterable[str]) -> list[str]:
    """The loaded modules of ``package`` that need not be imported again for a mutant of
    ``mutated``: those that import it neither directly nor through another."""
    names = [n for n in loaded if n == package or n.startswith(package + ".")]
    graph = {n: _imports(n) for n in names}
    tainted = {mutated}
    changed = True
    while changed:
        changed = False
        for name, deps in graph.items():
            if name not in tainted and (deps & tainted or name == package):
                tainted.add(name)
                changed = True
    return [n for n in names if n not in tainted]


class _Worker:
    """A worker interpreter that replays the journal against one mutant at a time."""

    def __init__(self, corpus: str, journal_path: str | None) -> None:
        code = "from parity.strength._runner import worker_main; worker_main()"
        self._stderr = tempfile.TemporaryFile()  # noqa: SIM115 (closed by stop)
        self.process = subprocess.Popen(
            [sys.executable, "-c", code],
            cwd=project_root(),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            bufsize=0,
        )
        self._buffer = b""
        self._send({"corpus": corpus, "journal": journal_path or ""})

    def _send(self, message: dict[str, Any]) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps(message).encode() + b"\n")

    def _receive(self, timeout: float) -> dict[str, Any] | None:
        assert self.process.stdout is not None
        fd = self.process.stdout.fileno()
        deadline = time.monotonic() + timeout
        while b"\n" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            ready, _, _ = select.select([fd], [], [], left)
            if not ready:
                return None
            chunk = os.read(fd, 65536)
            if not chunk:
                raise EOFError(f"the mutation worker died: {self._last_words()}")
            self._buffer += chunk
        line, self._buffer = self._buffer.split(b"\n", 1)
        answer: dict[str, Any] = json.loads(line)
        return answer

    def run(self, mutant: Mutant | None, timeout: float) -> tuple[str, str] | None:
        """(status, detail), or None on a time-out (the worker is then unusable)."""
        if mutant is None:
            payload = {"module": "", "code": ""}
        else:
            raw = marshal.dumps(mutant.code())
            payload = {"module": mutant.module, "code": base64.b64encode(raw).decode()}
        self._send(payload)
        answer = self._receive(timeout)
        if answer is None:
            return None
        return str(answer["status"]), str(answer["detail"])

    def _last_words(self) -> str:
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(timeout=5)
        self._stderr.seek(0)
        lines = self._stderr.read().decode(errors="replace").strip().splitlines()
        return " | ".join(lines[-3:]) or f"exit status {self.process.returncode}"

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()
        for stream in (self.process.stdin, self.process.stdout):
            if stream is not None:
                stream.close()
        self._stderr.close()


class _MutantFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Imports one module from a compiled mutant instead of its file."""

    def __init__(self, module: str, code: types.CodeType) -> None:
        self.module = module
        self.code = code

    def find_spec(
        self,
        fullname: str,
        path: Sequence[str] | None,
        target: types.ModuleType | None = None,
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname != self.module:
            return None
        return importlib.util.spec_from_loader(fullname, self, origin=self.code.co_filename)

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType | None:
        return None

    def exec_module(self, module: types.ModuleType) -> None:
        module.__file__ = self.code.co_filename
        exec(self.code, module.__dict__)


def purge(package: str, keep: Sequence[str] = ()) -> None:
    """Forget the imported modules of ``package`` but ``keep``."""
    for name in list(sys.modules):
        if (name == package or name.startswith(package + ".")) and name not in keep:
            del sys.modules[name]


def worker_main() -> None:
    """A mutation worker: one JSON line in per mutant, one JSON line out."""
    out = os.fdopen(os.dup(1), "wb", buffering=0)
    os.dup2(2, 1)  # whatever the replay prints must not mix with the answers
    stdin = sys.stdin.buffer
    setup = json.loads(stdin.readline())
    from parity import journal as journal_mod
    from parity.corpus import get_corpus
    from parity.replay import MODES, Replayer

    package = load_explanations().package
    corpus = get_corpus(setup["corpus"])
    loaded = journal_mod.load(setup["journal"] or corpus.journal_path)
    kept: dict[str, list[str]] = {}
    for line in stdin:
        request = json.loads(line)
        module = request["module"]
        if module not in kept:
            kept[module] = _kept_modules(package, module, sys.modules) if module else []
        status, detail = "survived", ""
        finder = None
        purge(package, keep=kept[module])
        if module:
            code = marshal.loads(base64.b64decode(request["code"]))
            finder = _MutantFinder(module, code)
            sys.meta_path.insert(0, finder)
        try:
            with Replayer(loaded, corpus) as replayer:
                # case by case, both modes each, as replay() runs them; the first failure kills
                for call in loaded.calls:
                    if not replayer.run_case(call, modes=MODES).passed:
                        status, detail = "killed", call.case
                        break
        except Exception as e:
            status, detail = "killed", f"{type(e).__name__}: {short(str(e), 120)}"
        finally:
            if finder is not None:
                sys.meta_path.remove(finder)
            purge(package, keep=kept[module])
        out.write(json.dumps({"status": status, "detail": detail}).encode() + b"\n")


def run_mutants(
    mutants: Sequence[Mutant],
    *,
    corpus: str = "recall",
    journal_path: str | None = None,
    jobs: int = 2,
    timeout: float = 20.0,
    total_generated: int | None = None,
    explained: MutantMatch | None = None,
    progress: Callable[[MutantResult], None] | None = None,
) -> MutationRun:
    """Replay the journal against each mutant, in ``jobs`` worker interpreters.

    The unmutated code is replayed first in each worker: it must pass, else the
    run stops with ReplayError (a mutant is only killed by what it changed).
    ``explained`` is the explanations matched against every mutant (default: against
    every mutant of the tool logic, ``generate_mutants()``).
    """
    from parity.errors import ReplayError

    started = time.monotonic()
    queue = list(reversed(mutants))
    lock = threading.Lock()
    results: dict[int, MutantResult] = {}
    errors: list[BaseException] = []

    def take() -> Mutant | None:
        with lock:
            return queue.pop() if queue and not errors else None

    def work() -> None:
        worker: _Worker | None = None
        try:
            worker = _Worker(corpus, journal_path)
            baseline = worker.run(None, timeout=max(timeout, 120.0))
            if baseline != ("survived", ""):
                raise ReplayError(f"the replay fails without any mutant: {baseline}")
            while (mutant := take()) is not None:
                t0 = time.monotonic()
                answer = worker.run(mutant, timeout)
                if answer is None:
                    worker.stop()
                    worker = _Worker(corpus, journal_path)
                    result = MutantResult(mutant, "timeout", f"more than {timeout:g}s", timeout)
                else:
                    result = MutantResult(mutant, *answer, time.monotonic() - t0)
                with lock:
                    results[mutant.id] = result
                if progress is not None:
                    progress(result)
        except BaseException as e:
            with lock:
                errors.append(e)
        finally:
            if worker is not None:
                worker.stop()

    threads = [threading.Thread(target=work, daemon=True) for _ in range(max(1, jobs))]
    for t in threads:
        t.start()
    try:
        for t in threads:
            t.join()
    except KeyboardInterrupt:
        with lock:
            queue.clear()
        for t in threads:
            t.join()
        raise
    if errors:
        err = errors[0]
        if isinstance(err, ReplayError):
            raise err
        raise ReplayError(f"the mutation run failed: {type(err).__name__}: {err}") from err
    ordered = [results[m.id] for m in mutants if m.id in results]
    if explained is None:
        explained = load_explanations().match_mutants(generate_mutants())
    total = total_generated if total_generated is not None else len(mutants)
    return MutationRun(ordered, total, time.monotonic() - started, explained)
