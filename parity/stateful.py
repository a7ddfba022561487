"""Stateful differential fuzzing: one Go and one host through archives, locks, calls, new
hosts and a restart (:class:`RecallMachine`), the pool of calls played over every readable
set. A divergence shrinks to a ready pytest test (:func:`replay`), and to a corpus case
when the call diverges over that archive alone."""

from __future__ import annotations

import bisect
import contextlib
import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import ClassVar, ParamSpec, TypeVar

from hypothesis import Verbosity
from hypothesis import strategies as st
from hypothesis.stateful import (
    Bundle,
    MultipleResults,
    RuleBasedStateMachine,
    initialize,
    multiple,
    precondition,
    rule,
    run_state_machine_as_test,
)

from parity import rig
from parity.fuzz import FIRST_SEQS, report_head, static_divergence
from parity.goclient import DebugRequest, lock_request
from parity.reference import GoReference
from parity.shrink import ddmin
from parity.strategies import BlockSpec, block_sets, call_pools, calls, words_of

P = ParamSpec("P")
R = TypeVar("R")

STEPS = 80
"""Steps of an example at most (Hypothesis' ``stateful_step_count``)."""

POOL = 32
"""The calls an example draws at its start, at most: its pool, played in every state."""

POOL_MAX = 64
"""The pool's bound: each call the ``call`` rule draws joins it, the oldest leaving."""


# -- the steps, as a ready test writes them ---------------------------------------------


@dataclass(frozen=True)
class Start:
    """A Go serving ``/blocks`` as ``go`` says, next seq ``first_seq``, and a ``host`` over it."""

    first_seq: int
    go: rig.GoMode
    host: rig.HostSpec


@dataclass(frozen=True)
class ArchiveBlock(BlockSpec):
    """Archive this block (``locked``: under a locked memory)."""


@dataclass(frozen=True)
class Lock:
    """Lock (``locked=False``: unlock) the memory of block ``seq``."""

    seq: int
    locked: bool = True


@dataclass(frozen=True)
class ToolCall:
    """One tool call through the host, compared with Go's output."""

    tool: str
    args: str


@dataclass(frozen=True)
class NewHost:
    """Close the host; a new one of ``host``'s kind takes its place (the archive stays)."""

    host: rig.HostSpec


@dataclass(frozen=True)
class Restart:
    """A new Go process on the same address holds the same blocks (the host stays)."""


Step = Start | ArchiveBlock | Lock | ToolCall | NewHost | Restart


@dataclass(frozen=True)
class StatefulDivergence:
    """A call whose output (or requests) differ from Go's after the steps before it."""

    steps: tuple[Step, ...]
    """Every step up to the divergent call, the last (for a request log: the example's)."""
    go_output: str
    python_output: str
    reasons: tuple[str, ...]
    host_requests: tuple[str, ...] = ()
    static: str | None = None
    """The corpus case, when the call diverges over that archive alone (a fresh host)."""

    @property
    def case(self) -> str:
        """A name stable for the same steps."""
        digest = hashlib.sha256(repr(self.steps).encode("utf-8", "replace"))
        return f"stateful-{digest.hexdigest()[:8]}"

    def size(self) -> tuple[int, int]:
        """Its steps, and the length of their source."""
        return (len(self.steps), len(repr(self.steps)))

    @property
    def call(self) -> ToolCall | None:
        """The divergent call."""
        last = self.steps[-1] if self.steps else None
        return last if isinstance(last, ToolCall) else None

    def ready_test(self) -> str:
        """A pytest test that replays the steps against a fresh Go reference."""
        steps = "".join(f"\n            {step!r}," for step in self.steps)  # HostSpec: unqualified
        return f'''import pytest

from parity.reference import GoReference
from parity.rig import HostSpec
from parity.stateful import ArchiveBlock, Lock, NewHost, Restart, Start, ToolCall, replay


@pytest.mark.go
def test_{self.case.replace("-", "_")}(go_build: GoReference) -> None:
    """Found by parity fuzz (stateful): {"; ".join(self.reasons)}."""
    replay(
        go_build,
        [{steps}
        ],
    )'''

    def report(self) -> str:
        """What diverged, both outputs made visible, the ready test (and corpus case)."""
        call = None if self.call is None else (self.call.tool, self.call.args, "python host")
        lines = report_head(self, f"stateful, {len(self.steps)} steps", call)
        lines += ["# a ready test (tests/parity/test_stateful_found.py):", self.ready_test()]
        if self.static is not None:
            lines += ["# the same call over that archive alone diverges too:", self.static]
        return "\n".join(lines)


# -- the machine ------------------------------------------------------------------------


_STARTS = st.builds(
    Start, st.sampled_from(FIRST_SEQS), st.sampled_from(rig.GO_MODES), rig.HOST_SPECS
)


class RecallMachine(RuleBasedStateMachine):
    """One Go and one host through archives, locks, calls and new hosts (see the module)."""

    run: ClassVar[rig.Run | None] = None  # set by fuzz_stateful for its run

    archived = Bundle("archived")

    def __init__(self) -> None:
        super().__init__()
        if self.run is None:
            raise RuntimeError("RecallMachine runs inside fuzz_stateful")
        self._run: rig.Run = self.run
        self._log: list[Step] = []
        # each call played since the last change: the state it played in, the steps to it
        self._pending: list[tuple[rig.Played, int, int]] = []
        self._queue: list[BlockSpec] = []  # the blocks this example may archive, in order
        self._blocks: dict[int, BlockSpec] = {}  # seq -> block, locked as it now is
        self._pool: dict[tuple[str, str], None] = {}  # the calls played in every state
        self._host: rig.Host | None = None
        self._session: rig.GoSession | None = None
        self._state = rig.state_key(())
        self._started = Start(1, "plain", rig.HostSpec())
        self._spec = self._started.host
        self._restarted = False
        self._kept: int | None = None  # the state this host last played in (None: new)
        self._calls: st.SearchStrategy[tuple[str, str]] = calls()
        self._sent_at = 0
        self._broken: BaseException | None = None

    # -- the steps ------------------------------------------------------------------

    @initialize(start=_STARTS, blocks=block_sets(), data=st.data())
    def start(self, start: Start, blocks: list[BlockSpec], data: st.DataObject) -> None:
        """A Go and a host as ``start`` says (``blocks``: those the example may archive), and
        the pool of calls, played over the empty archive."""
        self._run.stats.examples += 1
        self._queue = blocks
        seqs = range(start.first_seq, start.first_seq + len(blocks))
        words = words_of(blocks)
        self._calls = calls(seqs, words)
        self._pool = dict.fromkeys(data.draw(call_pools(seqs, words, max_size=POOL), label="pool"))
        self._log.append(start)
        self._harness(self._start, start)
        self._play_pool()

    def _start(self, start: Start) -> None:
        self._started, self._spec = start, start.host
        self._session = self._run.session(mode=start.go)
        self._session.load(start.first_seq)
        self._run.stats.archives += 1
        self._sent_at = len(self._run.recording)
        self._host = self._run.host(start.host, self._session)

    @precondition(lambda self: len(self._blocks) < len(self._queue))
    @rule(target=archived, rest=st.booleans())
    def archive(self, rest: bool) -> MultipleResults[int]:
        """Archive the next block of the example's blocks (``rest``: every one left, in one
        request)."""
        specs = self._queue[len(self._blocks) : None if rest else len(self._blocks) + 1]
        seqs: list[int] | None = self._flush(rig.GoSession.archiving(specs))
        if seqs is None:
            return multiple()
        for seq, spec in zip(seqs, specs, strict=True):
            self._blocks[seq] = spec
            self._log.append(ArchiveBlock(spec.label, spec.content, spec.locked))
        self._changed()
        return multiple(*seqs)

    @rule(seq=archived)
    def lock(self, seq: int) -> None:
        """Lock the memory of an archived block (again, when it already is)."""
        self._set_locked(seq, locked=True)

    @precondition(lambda self: any(b.locked for b in self._blocks.values()))
    @rule(data=st.data())
    def unlock(self, data: st.DataObject) -> None:
        """Unlock the memory of a locked block (archived locked, or locked since)."""
        locked = sorted(seq for seq, b in self._blocks.items() if b.locked)
        self._set_locked(data.draw(st.sampled_from(locked), label="seq"), locked=False)

    def _set_locked(self, seq: int, *, locked: bool) -> None:
        self._flush(lock_request(seq, locked=locked))
        if self._broken is not None:
            return
        self._blocks[seq] = replace(self._blocks[seq], locked=locked)
        self._log.append(Lock(seq, locked))
        self._changed()

    @rule(data=st.data())
    def call(self, data: st.DataObject) -> None:
        """A new call, played now and in every state from now on (it joins the pool)."""
        tool, args = data.draw(self._calls, label="call")
        self._play([(tool, args)])
        self._pool.pop((tool, args), None)
        self._pool[(tool, args)] = None
        while len(self._pool) > POOL_MAX:
            del self._pool[next(iter(self._pool))]

    @rule(host=rig.HOST_SPECS)
    def new_host(self, host: rig.HostSpec) -> None:
        """A new host in place of the old one (the pool plays through it at the next change)."""
        if self._host is None:
            return
        self._host.close()
        self._log.append(NewHost(host))
        self._host = self._run.host(host, self._go())
        self._spec, self._kept = host, None

    @precondition(lambda self: not self._restarted)
    @rule()
    def restart(self) -> None:
        """Restart the Go (once an example); the pool again, through the same host."""
        self._flush()
        self._restarted = True
        blocks = [self._blocks[seq] for seq in sorted(self._blocks)]
        self._harness(self._go().restart, self._started.first_seq, blocks)
        self._sent_at = len(self._run.recording)
        self._log.append(Restart())
        self._kept = hash((Restart, self._state))  # what the host keeps: another Go's set
        self._play_pool()

    def teardown(self) -> None:
        """Every call compared, the log checked, the host closed; then the run ends on a
        harness error met (``Abort``) or when its time is spent: here only, after the
        example's last draw (:meth:`parity.rig.Run.check`)."""
        try:
            self._flush()
        finally:
            if self._host is not None:
                self._host.close()
            if self._broken is not None:
                raise rig.Abort(self._broken)
            self._run.check()

    # -- playing and comparing ------------------------------------------------------

    def _go(self) -> rig.GoSession:
        assert self._session is not None
        return self._session

    def _harness(self, action: Callable[P, R], *args: P.args, **kwargs: P.kwargs) -> R | None:
        """``action(*args, **kwargs)``, None once a harness error is met: the example goes on
        without the Go (raising mid-example is flaky for Hypothesis) and its teardown ends
        the run, unshrunk."""
        if self._broken is not None:
            return None
        try:
            return action(*args, **kwargs)
        except rig.HARNESS_ERRORS as exc:
            self._broken = exc
            return None

    def _changed(self) -> None:
        """The archive changed: the pool again, unless its readable set is the same."""
        if (state := rig.state_key(self._blocks.items())) != self._state:
            self._state = state
            self._play_pool()

    def _play_pool(self) -> None:
        """The pool over the archive as it now is: the calls not yet played in this
        :meth:`_context` (a host's output depends only on it and the args), and the pool's
        first call of each tool always, so that the host reads every state; every call once
        a divergence is found (:meth:`parity.rig.FuzzStats.fresh`)."""
        first = {tool: (tool, args) for tool, args in reversed(self._pool)}
        run = self._run
        fresh = set(run.stats.fresh(self._context(), self._pool, among=run.played))
        self._play([c for c in self._pool if c in fresh or first[c[0]] == c])
        self._kept = self._state

    def _context(self) -> int:
        """The host's kind, the Go's mode, the state the host last played in (what it may
        have kept), the state it plays in."""
        return hash((self._spec, self._started.go, self._kept, self._state))

    def _play(self, calls_: Sequence[tuple[str, str]]) -> None:
        if self._host is None or self._broken is not None or self._run.over():
            return  # past the deadline, the example draws as before, plays nothing
        context = self._context()
        self._run.played.update(rig.call_key(context, tool, args) for tool, args in calls_)
        for played in self._host.play_many(calls_):
            self._log.append(ToolCall(played.tool, played.args))
            self._pending.append((played, self._state, len(self._log)))

    def _flush(self, change: DebugRequest[R] | None = None) -> R | None:
        """Compare the calls played since the last change with Go's outputs, and its log
        with what the hosts sent; then ``change`` the archive: what it answered (None once a
        harness error is met). One request to the Go in all."""
        pending, self._pending = self._pending, []
        if not pending:
            return None if change is None else self._harness(self._go().client.run, change)
        calls_ = [(played.tool, played.args) for played, _, _ in pending]
        changes = () if change is None else (change,)
        if (settled := self._harness(self._go().settle, calls_, *changes)) is None:
            return None
        expected, server, answers = settled
        run = self._run
        for (played, state, steps), output in zip(pending, expected, strict=True):
            run.stats.count(state, played.tool, played.args)
            if reasons := rig.verdict(played, output):
                found = (output, played.output, reasons, played.requests)
                run.diverged(StatefulDivergence(tuple(self._log[:steps]), *found))
        sent = run.recording[self._sent_at :]
        self._sent_at += len(sent)
        if reasons := rig.log_verdict(server, sent):
            run.diverged(StatefulDivergence(tuple(self._log), "", "", reasons))
        return answers[0] if answers else None


# -- the run ----------------------------------------------------------------------------


def fuzz_stateful(run: rig.Run, *, steps: int = STEPS) -> rig.FuzzStats:
    """Run :class:`RecallMachine` (the run's examples, of ``steps`` steps at most); its
    stats, the shrunk divergence in ``divergences``."""
    # quiet: the report is ours (Hypothesis' steps need a run)
    chosen = run.settings_with(stateful_step_count=steps, verbosity=Verbosity.quiet)
    RecallMachine.run = run
    # the seed as Run.fuzz sets it, where Hypothesis reads a machine's: on its class
    setattr(RecallMachine, "_hypothesis_internal_use_seed", run.seed)  # noqa: B010
    try:
        found = run.fuzz(lambda: run_state_machine_as_test(RecallMachine, settings=chosen))
        if found is not None:
            run.stats.divergences[:] = [_with_static(_minimized(found, run), run)]
    finally:
        RecallMachine.run = None
        run.close()
    return run.stats


def _with_static(divergence: StatefulDivergence, run: rig.Run) -> StatefulDivergence:
    """The divergence, with its corpus case when its call diverges over that moment's
    archive alone (a fresh host of the kind that diverged)."""
    call = divergence.call
    if call is None or not isinstance(start := divergence.steps[0], Start):
        return divergence
    blocks: dict[int, ArchiveBlock] = {}
    for step in divergence.steps:
        if isinstance(step, ArchiveBlock):
            blocks[start.first_seq + len(blocks)] = step
        elif isinstance(step, Lock):
            blocks[step.seq] = replace(blocks[step.seq], locked=step.locked)
    host = [s.host for s in divergence.steps if isinstance(s, Start | NewHost)][-1]
    try:  # a fresh host of the kind that diverged
        _play_steps(run, (replace(start, host=rig.HostSpec(host.kind)), *blocks.values(), call))
    except rig.DivergenceFound as exc:
        found = exc.divergence
        assert isinstance(found, StatefulDivergence)
        played = rig.Played(call.tool, call.args, found.python_output, found.host_requests)
        archive = list(blocks.items())
        static = static_divergence(played, found.go_output, found.reasons, archive, start.first_seq)
        return replace(divergence, static=static.corpus_case())
    return divergence


def _minimized(divergence: StatefulDivergence, run: rig.Run) -> StatefulDivergence:
    """The divergence without the steps it does not need (``ddmin``; each try a replay, far
    cheaper than an example): Hypothesis' shrinking, bounded in time, may leave many."""
    start = divergence.steps[0]
    if divergence.call is None or not isinstance(start, Start):
        return divergence
    found = [divergence]

    def diverges(kept: list[int]) -> bool:
        steps = _kept(start, divergence.steps, kept)
        try:
            if steps is not None:
                _play_steps(run, steps)
        except rig.DivergenceFound as exc:
            replayed = exc.divergence
            if isinstance(replayed, StatefulDivergence) and replayed.reasons == divergence.reasons:
                found.append(replayed)
                return True
        except rig.HARNESS_ERRORS:  # the Go refuses a step
            pass
        return False

    ddmin(list(range(1, len(divergence.steps) - 1)), diverges)
    return found[-1]


def _kept(start: Start, steps: tuple[Step, ...], kept: Sequence[int]) -> tuple[Step, ...] | None:
    """The first, the last and the ``kept`` steps, the locks' seqs renumbered past the
    archives removed (None when one locks a block removed)."""
    keep = {0, len(steps) - 1, *kept}
    removed: list[int] = []  # the seqs of the archives removed, in order
    seq = start.first_seq
    out: list[Step] = []
    for at, step in enumerate(steps):
        if isinstance(step, ArchiveBlock):
            if at not in keep:
                removed.append(seq)
            seq += 1
        if at not in keep:
            continue
        if isinstance(step, Lock):
            if step.seq in removed:
                return None
            step = replace(step, seq=step.seq - bisect.bisect_left(removed, step.seq))
        out.append(step)
    return tuple(out)


def replay(
    reference: GoReference, steps: Sequence[Step], *, wrap: rig.TransportWrap | None = None
) -> None:
    """Play ``steps`` against a fresh Go; DivergenceFound (an AssertionError) at the first
    call whose output or requests differ from Go's."""
    with contextlib.closing(rig.Run(reference=reference, wrap=wrap)) as run:
        _play_steps(run, steps)


def _play_steps(run: rig.Run, steps: Sequence[Step]) -> None:
    start = steps[0]
    if not isinstance(start, Start):
        raise ValueError("the steps begin with a Start")
    session = run.session(mode=start.go)
    session.load(start.first_seq)
    blocks: list[BlockSpec] = []
    host = run.host(start.host, session)
    try:
        for at, step in enumerate(steps):
            if isinstance(step, ArchiveBlock):
                blocks.append(step)
                session.archive(blocks[-1:])
            elif isinstance(step, Lock):
                session.client.lock(step.seq, locked=step.locked)
                i = step.seq - start.first_seq
                blocks[i] = replace(blocks[i], locked=step.locked)
            elif isinstance(step, Restart):
                session.restart(start.first_seq, blocks)
            elif isinstance(step, NewHost):
                host.close()
                host = run.host(step.host, session)
            elif isinstance(step, ToolCall):
                (played,) = host.play_many([(step.tool, step.args)])
                (expected,), sent, _ = session.settle([(step.tool, step.args)])
                reasons = rig.verdict(played, expected) + rig.log_verdict(sent, played.requests)
                if reasons:
                    found = (expected, played.output, reasons, played.requests)
                    raise rig.DivergenceFound(StatefulDivergence(tuple(steps[: at + 1]), *found))
    finally:
        host.close()
