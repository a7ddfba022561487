"""Running mutants against the golden replay, in worker processes (spawned; each mutated
module imported from its compiled code by a meta-path finder, the file never written):
the first failing case kills a mutant, outliving its time-out too (``docs/strength.md``)."""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import importlib.util
import multiprocessing
import sys
import time
import types
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from multiprocessing.connection import Connection, wait
from multiprocessing.process import BaseProcess

from parity.strength._explain import PACKAGE
from parity.strength._mutants import Mutant, short

_SLOWER = 10
"""A mutant's replay taking this many times the unmutated replay's time is a hang."""


@dataclass(frozen=True)
class MutantResult:
    """What the replay did to one mutant."""

    mutant: Mutant
    status: str
    """``killed``, ``timeout`` (counted as killed), ``survived``."""
    detail: str = ""
    """The first failing case, or the error that killed it."""

    @property
    def killed(self) -> bool:
        """Whether the goldens told the mutant apart."""
        return self.status != "survived"


class _MutantFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Imports one module from a compiled mutant instead of its file."""

    def __init__(self, module: str, code: types.CodeType) -> None:
        self.module = module
        self.code = code

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: types.ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname != self.module:
            return None
        return importlib.util.spec_from_loader(fullname, self, origin=self.code.co_filename)

    def exec_module(self, module: types.ModuleType) -> None:
        module.__file__ = self.code.co_filename
        exec(self.code, module.__dict__)


def _worker(conn: Connection, corpus_name: str) -> None:
    """One worker: a mutant (None: the unmutated code) in, (status, detail) out."""
    from parity import journal
    from parity.corpus import get_corpus
    from parity.replay import MODES, Replayer

    try:
        corpus = get_corpus(corpus_name)
        loaded = journal.load(corpus.journal_path)
    except Exception as e:
        conn.send(("error", f"{type(e).__name__}: {e}"))
        return
    while True:
        try:
            mutant: Mutant | None = conn.recv()
        except EOFError:
            return
        status, detail, finder = "survived", "", None
        for name in [n for n in sys.modules if n.partition(".")[0] == PACKAGE]:
            del sys.modules[name]  # the next import runs the port's modules again
        try:
            if mutant is not None:
                finder = _MutantFinder(mutant.module, mutant.code())
                sys.meta_path.insert(0, finder)
            # A mutant: the archive pass alone first (it kills most mutants, at a third of
            # the cost); then every pass, case by case, as for the unmutated code.
            for modes in [MODES] if mutant is None else [MODES[:1], MODES]:
                with Replayer(loaded, corpus) as replayer:
                    failed = next(
                        (c for c in loaded.calls if not replayer.run_case(c, modes=modes).passed),
                        None,
                    )
                if failed is not None:
                    status, detail = "killed", failed.case
                    break
        except Exception as e:
            status, detail = "killed", f"{type(e).__name__}: {short(str(e), 120)}"
        finally:
            if finder is not None:
                sys.meta_path.remove(finder)
        try:
            conn.send((status, detail))
        except OSError:  # the parent gave up on this mutant (its time-out) and left
            return


class _MutationWorker:
    """A worker process and the mutant it runs."""

    def __init__(self, corpus: str) -> None:
        self.corpus = corpus
        self.mutant: Mutant | None = None
        self.deadline = 0.0
        self.start()

    def start(self) -> None:
        context = multiprocessing.get_context("spawn")
        self.conn, child = context.Pipe()
        self.process: BaseProcess = context.Process(target=_worker, args=(child, self.corpus))
        self.process.start()
        child.close()

    def send(self, mutant: Mutant | None, timeout: float) -> None:
        self.mutant, self.sent = mutant, time.monotonic()
        self.deadline = self.sent + timeout
        self.conn.send(mutant)

    def stop(self) -> None:
        self.conn.close()
        self.process.join(5)
        if self.process.is_alive():
            self.process.kill()
            self.process.join()


def run_mutants(
    mutants: Sequence[Mutant],
    *,
    corpus: str = "recall",
    jobs: int,
    timeout: float,
    progress: Callable[[MutantResult], None] = lambda result: None,
) -> list[MutantResult]:
    """Replay the journal against each mutant, in ``jobs`` worker processes.

    Each worker replays the unmutated code first: it must pass, else ParityError (a
    mutant is only killed by what it changed). A mutant times out after ``timeout``
    seconds, or ``_SLOWER`` times that replay's time if longer."""
    from parity.errors import ParityError

    queue = list(reversed(mutants))
    results: dict[int, MutantResult] = {}
    workers = [_MutationWorker(corpus) for _ in range(max(1, min(jobs, len(mutants))))]
    try:
        for w in workers:
            w.send(None, max(timeout, 120.0))
        while any(w.deadline for w in workers):
            busy = [w for w in workers if w.deadline]
            left = min(w.deadline for w in busy) - time.monotonic()
            ready = wait([w.conn for w in busy], timeout=max(left, 0))
            for w in busy:
                mutant = w.mutant
                if w.conn in ready:
                    try:
                        status, detail = w.conn.recv()
                    except (EOFError, OSError):
                        w.process.join(5)
                        status, detail = "error", f"exit status {w.process.exitcode}"
                    if status == "error":
                        raise ParityError(f"a mutation worker died: {detail}")
                    if mutant is None and status != "survived":
                        raise ParityError(f"the replay fails without any mutant: {detail}")
                    if mutant is None:  # a loaded machine's replays are slower: so is a hang
                        timeout = max(timeout, _SLOWER * (time.monotonic() - w.sent))
                elif time.monotonic() >= w.deadline:
                    if mutant is None:
                        raise ParityError("the replay without any mutant timed out")
                    w.stop()
                    w.start()
                    status, detail = "timeout", f"more than {timeout:.3g}s"
                else:
                    continue
                w.deadline = 0.0
                if mutant is not None:
                    results[mutant.id] = MutantResult(mutant, status, detail)
                    progress(results[mutant.id])
                if queue:
                    w.send(queue.pop(), timeout)
    finally:
        for w in workers:
            w.stop()
    return [results[m.id] for m in mutants]
