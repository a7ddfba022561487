"""The replay: every journal call through the Python implementation, against a fake Go.

One fake Go (``parity.fakego``), one pass per mode: ``archive`` (``/tool/exec`` answers
500: the output and the reads are the Python tools' own, and the reads must be those
the journal records, unless null), ``conditional`` (the same over ETags and 304s),
``delta`` (the same with ``/blocks?since=``, each read of ``/blocks`` after a search
over a stale set, ``FakeGo.stale``) and ``fallback`` (the reads answer 500,
``/tool/exec`` the recorded output: a call that reads falls back exactly once). A case
passes when every pass gives its golden output byte for byte, with those requests and
no other. A journal that does not match the corpus (``check_consistency``) is an error.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field, replace

from parity import journal as journal_mod
from parity import report
from parity.cli import Exit, corpora, corpus_options
from parity.corpus import Corpus, ToolHost
from parity.errors import CorpusError, ParityError
from parity.fakego import FakeGo, Mode, Served
from parity.journal import UNKNOWN, Journal, JournalCall
from recall._protocol import BLOCK_PATH, BLOCKS_PATH, EXEC_PATH

# The passes that tell the tools' outputs and reads apart (what a mutation run replays).
MODES: tuple[Mode, ...] = ("archive", "delta", "fallback")
ALL_MODES: tuple[Mode, ...] = ("archive", "conditional", "delta", "fallback")  # make parity


@dataclass(frozen=True)
class ModeRun:
    """One call in one mode: what Python returned (or raised) and what it asked of the fake."""

    mode: Mode
    output: str | None
    error: str | None
    served: tuple[Served, ...]
    problems: tuple[str, ...]  # why it fails besides the output: requests, a hidden fallback

    def failed(self, expected: str) -> bool:
        """Whether this run departs from the golden output or the expected requests."""
        return self.error is not None or self.output != expected or bool(self.problems)

    @property
    def reads(self) -> tuple[str, ...]:
        return tuple(r for s in self.served if (r := s.read) is not None)


@dataclass(frozen=True)
class CaseResult:
    """A journal call and its runs, one per mode."""

    call: JournalCall
    runs: tuple[ModeRun, ...]

    @property
    def case(self) -> str:
        return self.call.case

    @property
    def passed(self) -> bool:
        """Whether every run gave the golden output with the expected requests."""
        return not any(run.failed(self.call.output) for run in self.runs)

    def report(self) -> str:
        """Why the case fails (empty when it passes)."""
        parts = []
        for run in self.runs:
            if not run.failed(self.call.output):
                continue
            head = f"[{run.mode} replay]"
            if run.error is not None:
                parts += report.head(f"FAILED {self.case} {head}", self.call.tool, self.call.args)
                parts.append(f"  python raised {run.error}")
            elif run.output != self.call.output:
                assert run.output is not None
                parts.append(
                    report.mismatch_report(
                        title=f"MISMATCH {self.case} {head}",
                        tool=self.call.tool,
                        args=self.call.args,
                        expected=self.call.output,
                        actual=run.output,
                    )
                )
            else:
                parts.append(f"FAILED {self.case} {head}")
            parts += [f"  {p}" for p in run.problems]
            parts.append("  requests: " + (", ".join(map(str, run.served)) or "none"))
        return "\n".join(parts)


@dataclass
class ReplayResult:
    """The outcome of a whole replay: one result per journal call, in journal order."""

    corpus: str
    results: list[CaseResult] = field(default_factory=list)
    not_modified: int = 0  # the reads of /blocks answered 304 in the conditional pass
    deltas: int = 0  # the reads of /blocks answered with a delta in the delta pass

    @property
    def passed(self) -> int:
        return sum(r.passed for r in self.results)

    @property
    def failed(self) -> int:
        return len(self.results) - self.passed

    @property
    def failures(self) -> list[CaseResult]:
        return [r for r in self.results if not r.passed]


_STALE_SHOWN = 12  # how many differences a stale journal's message lists


def check_consistency(journal: Journal, corpus: Corpus, *, path: str = "the journal") -> None:
    """Raise ``CorpusError`` unless the journal was recorded from this very corpus: the
    same blocks (names, labels, contents, locks), cases, tools and args."""
    problems: list[str] = []
    if journal.corpus != corpus.name:
        problems.append(f"it records corpus {journal.corpus!r}, not {corpus.name!r}")
    names = [b.name for b in corpus.blocks]
    if list(journal.seqs) == names:
        problems += _block_problems(journal, corpus)
    else:
        gone = [f"block {n!r} is no longer in the corpus" for n in journal.seqs if n not in names]
        new = [f"corpus block {n!r} is not recorded" for n in names if n not in journal.seqs]
        problems += gone + new or ["the corpus's blocks are in another order"]
    recorded = {c.case: c for c in journal.calls}
    wanted = {c.case: c for c in corpus.calls}
    problems += [f"case {c!r} has no corpus entry" for c in recorded if c not in wanted]
    problems += [f"corpus case {c!r} is not recorded" for c in wanted if c not in recorded]
    for case, call in wanted.items():
        if (got := recorded.get(case)) is None:
            continue
        try:
            args = call.resolve(journal.seqs)
        except CorpusError as e:
            problems.append(str(e))
            continue
        if got.tool != call.tool:
            problems.append(
                f"case {case!r}: tool {got.tool!r} recorded, {call.tool!r} in the corpus"
            )
        elif got.args != args:
            problems.append(f"case {case!r}: args differ from the corpus's")
    if problems:
        shown = problems[:_STALE_SHOWN]
        if len(problems) > len(shown):
            shown.append(f"... and {len(problems) - len(shown)} more")
        lines = "\n  ".join(shown)
        raise CorpusError(
            f"{path} is stale: it was not recorded from corpus {corpus.name!r} as it is now; "
            f"re-record it (`make golden`, then `parity review`):\n  {lines}"
        )


def _block_problems(journal: Journal, corpus: Corpus) -> list[str]:
    """How the journal's served blocks depart from the corpus's readable ones."""
    served = {b.seq: b for b in journal.blocks}
    problems = []
    for block in corpus.blocks:
        got = served.pop(journal.seqs[block.name], None)
        if block.locked and got is not None:
            problems.append(f"block {block.name!r}: locked in the corpus, served in the journal")
        elif got is None and not block.locked:
            problems.append(f"block {block.name!r}: unlocked in the corpus, locked in the journal")
        if block.locked or got is None:
            continue
        if got.label != block.label:
            problems.append(f"block {block.name!r}: label differs")
        if got.content != block.content:
            problems.append(f"block {block.name!r}: text differs")
    problems += [f"blocks: seq {seq} is no corpus block" for seq in served]
    return problems


class Replayer:
    """One fake Go and one Python host (``host``, within ``with``), to replay a journal's
    calls one by one."""

    host: ToolHost

    def __init__(self, journal: Journal, corpus: Corpus) -> None:
        self.journal, self.corpus = journal, corpus
        self.fake = FakeGo(journal)
        self._staged = 0  # the stale sets the delta pass served

    def __enter__(self) -> Replayer:
        """Start the fake Go and build the host under test."""
        self.fake.start()
        try:
            version = self.journal.recorded_by.unicode_version
            options = {} if version == UNKNOWN else {"unicode_version": version}
            self.host = self.corpus.host(self.fake.base_url, timeout=5.0, **options)
        except BaseException as e:
            self.fake.stop()
            if not isinstance(e, Exception):
                raise
            raise ParityError(
                f"corpus {self.corpus.name!r}: cannot build the Python implementation: "
                f"{type(e).__name__}: {e}"
            ) from e
        return self

    def __exit__(self, *exc_info: object) -> None:
        """Close the host and stop the fake Go."""
        close = getattr(self.__dict__.pop("host", None), "close", None)
        if callable(close):
            close()
        self.fake.stop()

    def run(self, call: JournalCall, *, mode: Mode) -> ModeRun:
        self.fake.mode = mode
        primed = self._prime(call) if mode == "delta" else []
        mark = self.fake.mark()
        output: str | None = None
        error: str | None = None
        try:
            output = self.host.exec_tool(call.tool, call.args)
        except Exception as e:  # the implementation's failure is the case's failure
            error = f"{type(e).__name__}: {e}"
        run = ModeRun(mode, output, error, tuple(self.fake.served_since(mark)), ())
        problems = primed + self.fake.problems() + _request_problems(call, run, self.corpus)
        return replace(run, problems=tuple(problems))

    def _prime(self, call: JournalCall) -> list[str]:
        """Have the host search once over a stale set, then serve the journal's again
        (for a call that reads ``/blocks``); what went wrong, if anything."""
        if call.reads is not None and "blocks" not in call.reads:
            return []
        self.fake.stage(self.fake.stale(self._staged))
        self._staged += 1
        mark = self.fake.mark()
        try:
            self.host.exec_tool(call.tool, call.args)
        except Exception as e:
            return [f"over a stale set before it, python raised {type(e).__name__}: {e}"]
        finally:
            self.fake.stage()
        if any(s.path == EXEC_PATH for s in self.fake.served_since(mark)):
            return [f"over a stale set before it, fell back on POST {EXEC_PATH}"]
        return []

    def run_calls(
        self, calls: Sequence[JournalCall], *, modes: Sequence[Mode] = ALL_MODES
    ) -> list[CaseResult]:
        """Each call once per mode, mode after mode; the fake is checked after each mode."""
        runs: list[list[ModeRun]] = [[] for _ in calls]
        for mode in modes:
            try:
                for call, done in zip(calls, runs, strict=True):
                    done.append(self.run(call, mode=mode))
            finally:
                self.fake.check()
        return [CaseResult(call, tuple(done)) for call, done in zip(calls, runs, strict=True)]

    def run_case(self, call: JournalCall, *, modes: Sequence[Mode] = ALL_MODES) -> CaseResult:
        """Run one call in each mode; the fake is checked after each."""
        return self.run_calls([call], modes=modes)[0]

    def replay(
        self, *, modes: Sequence[Mode] = ALL_MODES, cases: Collection[str] | None = None
    ) -> ReplayResult:
        """Every call (or the named ``cases``) once per mode, mode after mode."""
        calls = list(self.journal.calls)
        if cases is not None:
            if unknown := [c for c in cases if c not in self.journal.cases]:
                raise ParityError(f"no such case in the journal: {', '.join(unknown)}")
            calls = [c for c in calls if c.case in cases]
        result = ReplayResult(self.journal.corpus, self.run_calls(calls, modes=modes))
        served = [(r.mode, s) for case in result.results for r in case.runs for s in r.served]
        reads = [(mode, s) for mode, s in served if s.read == "blocks"]
        result.not_modified = sum(m == "conditional" and s.status == 304 for m, s in reads)
        result.deltas = sum(m == "delta" and s.body.startswith('{"since"') for m, s in reads)
        return result


def _request_problems(call: JournalCall, run: ModeRun, corpus: Corpus) -> list[str]:
    """What is wrong with the requests of ``run`` (its problems not counted yet), for a
    tool run in Python."""
    if call.tool not in corpus.tools:
        return []
    served = run.served
    execs = [s for s in served if s.path == EXEC_PATH]
    reads = [s for s in served if s.path in (BLOCK_PATH, BLOCKS_PATH)]
    if run.mode != "fallback":  # archive, conditional, delta: the tools' own reads, outputs
        problems = []
        if execs:
            problems.append(f"fell back on POST {EXEC_PATH} (the fake answered 500)")
        if call.reads is not None and run.reads != call.reads:
            problems.append(
                f"archive reads differ from Go's: expected {report.reads_text(call.reads)} "
                f"(as Go's tool read), actual {report.reads_text(run.reads)}"
            )
        return problems
    if reads and len(execs) != 1:
        return [f"read the archive, then called /tool/exec {len(execs)} times (want once)"]
    if not reads and execs:
        return ["called /tool/exec without reading the archive first"]
    if execs and served[-1].path != EXEC_PATH:
        return ["read the archive again after the fallback"]
    return []


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> argparse.ArgumentParser:
    rp = sub.add_parser(
        "replay",
        help="replay the golden journals against Python (`make parity`)",
        description="Replay each journal against the Python port, after checking it against "
        "its corpus. Exit 0 when every case passes, 1 when one fails, 2 when a journal is "
        "damaged or stale (re-record it).",
    )
    corpus_options(rp)
    rp.add_argument("--case", action="append", metavar="CASE", help="replay only this case")
    rp.add_argument("-v", "--verbose", action="store_true", help="list every case")
    rp.add_argument("--junitxml", metavar="FILE", help="also write a JUnit XML report to FILE")
    rp.add_argument(
        "--json",
        metavar="FILE",
        help="also write a JSON report to FILE: one record per case (name, pass, first "
        "difference, reads)",
    )
    return rp


def run(args: argparse.Namespace) -> int:
    """``parity replay``: 0 every case passed, 1 one failed."""
    started = time.perf_counter()
    results: list[ReplayResult] = []
    notes: list[str] = []
    for corpus, path in corpora(args):
        loaded = journal_mod.load(path)
        check_consistency(loaded, corpus, path=path)
        with Replayer(loaded, corpus) as replayer:
            results.append(result := replayer.replay(cases=args.case))
        for case in result.results:
            if not case.passed:
                print(case.report(), end="\n\n")
            elif args.verbose:
                print(f"ok {corpus.name}/{case.case}")
        if unchecked := sum(r.call.reads is None for r in result.results):
            notes.append(
                f"{path}: the reads of {unchecked} calls were not recorded "
                "(a Go without /debug/reads): not checked"
            )
        if (pending := journal_mod.pending_path(path)).exists():
            notes.append(
                f"{pending}: a recording awaits review (`parity review`); this replay used {path}"
            )
    elapsed = time.perf_counter() - started
    if args.junitxml:
        report.write_junitxml(args.junitxml, results, seconds=elapsed)
    if args.json:
        report.write_json(args.json, results, seconds=elapsed)
    if args.verbose:
        notes += [
            f"replayed in {elapsed:.2f}s ({' + '.join(ALL_MODES)})",
            f"conditional pass: {sum(r.not_modified for r in results)} reads of /blocks"
            " answered 304",
            f"delta pass: {sum(r.deltas for r in results)} reads of /blocks answered with a delta",
        ]
    failed = sum(r.failed for r in results)
    print(*notes, f"{sum(r.passed for r in results)} passed, {failed} failed", sep="\n")
    return Exit.OK if failed == 0 else Exit.PORT_DIFFERS
