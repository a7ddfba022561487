"""The rig both fuzzers (``parity.fuzz``, ``parity.stateful``) play calls on: a Go per
mode (:class:`GoSession`), the hosts under test (:class:`Host`, each request noted),
:func:`verdict` why a call diverges, and the run (:class:`Run`: its options, stats,
clock and Gos)."""

from __future__ import annotations

import asyncio
import hashlib
import logging
import time
import urllib.parse
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Literal, NoReturn, Protocol, cast, get_args

import httpx
from hypothesis import settings
from hypothesis import strategies as st

from parity.errors import ParityError
from parity.goclient import (
    DebugRequest,
    GoConnection,
    archive_request,
    log_request,
    outputs_request,
    reset_request,
)
from parity.reference import GoReference
from parity.strategies import BlockSpec
from recall import AsyncGoTurnHost, GoTurnHost
from recall._core import PAST_BOUND
from recall._protocol import BLOCK_PATH, BLOCKS_PATH, EXEC_PATH
from recall._tools import replace_surrogates

EXEC_REQUEST = f"POST {EXEC_PATH}"
_READ_REQUESTS = (f"GET {BLOCK_PATH}?", f"GET {BLOCKS_PATH}")
MISSING = ('recall needs an "id", such as "r7"', 'recall_search needs a "query"')
"""Go's outputs for a call without an id or a query: the archive must not be read for them."""

CACHE_SIZES = (64 * 1024 * 1024, 0, 4096)
"""The hosts' ``cache_bytes``: the default, none, and one so small that blocks are evicted."""


# -- the Go ---------------------------------------------------------------------------


GoMode = Literal["plain", "etag", "delta", "forgetful"]
"""How a Go serves ``/blocks``: no conditional reads, them alone, incremental reads and
their history, or no history (``forgetful``: a ``since`` but the current tag gets all)."""
GO_MODES: tuple[GoMode, ...] = get_args(GoMode)
_MODE_OPTIONS: dict[GoMode, dict[str, Any]] = {
    "plain": {"etag": False},
    "etag": {"since": False},
    "delta": {},
    "forgetful": {"since_history": 0},
}


class GoSession:
    """One Go process, emptied and filled again for each example (the harness's requests
    are under ``/debug/``: the Go's request log holds the hosts' only)."""

    def __init__(self, reference: GoReference, *, mode: GoMode = "delta") -> None:
        self.mode: GoMode = mode
        self._reference = reference
        self._start(first_seq=1, port=0)
        self.unicode_version: str = self.client.version()["unicode_version"]  # hosts' too

    def _start(self, *, first_seq: int, port: int) -> None:
        options = _MODE_OPTIONS[self.mode]
        self.running = self._reference.start(first_seq=first_seq, port=port, **options)
        self.client = self.running.client
        self._log_at = 0

    def restart(self, first_seq: int, blocks: Sequence[BlockSpec]) -> None:
        """A new process on the same address (a new boot nonce, no history) holding
        ``blocks`` (locked or not) from ``first_seq`` on, as the old one did."""
        port = urllib.parse.urlsplit(self.running.base_url).port or 0
        self.running.stop()
        self._start(first_seq=first_seq, port=port)
        self.archive(blocks)

    def load(self, first_seq: int, blocks: Sequence[BlockSpec] = ()) -> None:
        """Empty the archive and logs, then archive ``blocks`` as seqs ``first_seq`` on, in
        one request (``ParityError`` when the Go numbers them otherwise)."""
        archiving = [self.archiving(blocks)] if blocks else []
        answers = self.client.batch([reset_request(first_seq=first_seq), *archiving])
        self._log_at = 0
        if blocks and answers[1] != list(range(first_seq, first_seq + len(blocks))):
            raise ParityError(f"the Go archived them as seqs {answers[1]}, not from {first_seq}")

    def archive(self, blocks: Sequence[BlockSpec]) -> list[int]:
        """Archive ``blocks`` in one request; their seqs."""
        return self.client.run(self.archiving(blocks)) if blocks else []

    @staticmethod
    def archiving(blocks: Sequence[BlockSpec]) -> DebugRequest[list[int]]:
        """The request that archives ``blocks`` (for :meth:`settle`)."""
        return archive_request((b.label, b.content, b.locked) for b in blocks)

    def settle(
        self, calls: Iterable[tuple[str, str]], *changes: DebugRequest[Any]
    ) -> tuple[list[str], list[str], list[Any]]:
        """In one request: Go's outputs for ``calls``, the requests it received since the
        last load or the last read of them, then the ``changes`` (archives, locks):
        (outputs, requests, answers)."""
        exec_calls = outputs_request((tool, replace_surrogates(args)) for tool, args in calls)
        requests = log_request("requests", since=self._log_at)
        outputs, log, *changed = self.client.batch([exec_calls, requests, *changes])
        self._log_at += len(log)
        return outputs, log, changed


# -- the hosts ------------------------------------------------------------------------


@dataclass(frozen=True)
class HostSpec:
    """``GoTurnHost`` (``sync``) or ``AsyncGoTurnHost`` (``async``), with ``cache_bytes``."""

    kind: Literal["sync", "async"] = "sync"
    cache_bytes: int = CACHE_SIZES[0]


HOST_SPECS = st.builds(HostSpec, st.sampled_from(["sync", "async"]), st.sampled_from(CACHE_SIZES))
"""Both kinds of host, with the default cache, none, or a tiny one."""


@contextmanager
def past_bound_unsaid() -> Iterator[None]:
    """Within, the hosts' warning that an archive is past their ``cache_bytes`` is dropped:
    the tiny one of CACHE_SIZES is past it by design, and a fuzz run's thousands of hosts
    would each log it once."""
    log = logging.getLogger("recall")
    log.addFilter(unsaid := lambda record: record.msg != PAST_BOUND)
    try:
        yield
    finally:
        log.removeFilter(unsaid)


class TransportWrap(Protocol):
    """What a test puts between a host and the network (a planted bug), per kind of host."""

    def sync(self, inner: httpx.BaseTransport) -> httpx.BaseTransport: ...

    def asynchronous(self, inner: httpx.AsyncBaseTransport) -> httpx.AsyncBaseTransport: ...


class _Recorder(httpx.BaseTransport, httpx.AsyncBaseTransport):
    """A transport (sync or async, as ``inner`` is) noting each request in ``recording``
    as ``"METHOD /path?query"``."""

    def __init__(self, inner: Any, recording: list[str]) -> None:
        self._inner = inner
        self._recording = recording

    def _note(self, request: httpx.Request) -> None:
        self._recording.append(f"{request.method} {request.url.raw_path.decode('ascii')}")

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        self._note(request)
        return cast(httpx.Response, self._inner.handle_request(request))

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        self._note(request)
        return cast(httpx.Response, await self._inner.handle_async_request(request))

    def close(self) -> None:
        self._inner.close()

    async def aclose(self) -> None:
        await self._inner.aclose()


@dataclass(frozen=True)
class Played:
    """One call played through a host: its output (or error, as text), the requests sent."""

    tool: str
    args: str
    output: str
    requests: tuple[str, ...]
    raised: str | None = None


class Host:
    """A host under test over ``connection`` (an ``async`` one on the run's loop): each
    request noted in the run's ``recording``, then through its ``wrap`` (if any)."""

    def __init__(
        self, spec: HostSpec, connection: GoConnection, run: Run, *, unicode_version: str
    ) -> None:
        self.recording = run.recording
        self._loop = run.loop
        sync, wrap = spec.kind == "sync", run.wrap
        inner: Any = (httpx.HTTPTransport if sync else httpx.AsyncHTTPTransport)(
            verify=connection.ssl_context
        )
        if wrap is not None:
            inner = wrap.sync(inner) if sync else wrap.asynchronous(inner)
        kind: Any = GoTurnHost if sync else AsyncGoTurnHost
        self._host: GoTurnHost | AsyncGoTurnHost = kind(
            connection.base_url,
            transport=_Recorder(inner, self.recording),
            token=connection.token,
            cache_bytes=spec.cache_bytes,
            unicode_version=unicode_version,
        )

    def play_many(self, calls: Sequence[tuple[str, str]]) -> list[Played]:
        """Run the calls one after the other (an async host's in one run of the loop:
        as fast as one at a time can be; running them at once was slower, measured); any
        error of the host is a call's outcome, never raised here."""
        return self._loop.run(self._play(calls))

    async def _play(self, calls: Sequence[tuple[str, str]]) -> list[Played]:
        played = []
        for tool, args in calls:
            at, raised = len(self.recording), None
            try:
                result = self._host.exec_tool(tool, args)
                output = result if isinstance(result, str) else await result
            except Exception as exc:  # any error of the host is a divergence, never a crash
                raised = type(exc).__name__
                output = f"<{raised}: {exc}>"
            played.append(Played(tool, args, output, tuple(self.recording[at:]), raised))
        return played

    def close(self) -> None:
        if isinstance(self._host, GoTurnHost):
            self._host.close()
        else:
            self._loop.run(self._host.aclose())


# -- the verdict ----------------------------------------------------------------------


def verdict(played: Played, expected: str) -> tuple[str, ...]:
    """Why a played call diverges from Go's ``expected``: its output, a fallback on
    /tool/exec, a read the contract forbids; () when it does not."""
    reasons: list[str] = []
    if played.raised is not None:
        reasons.append(f"the host raised {played.raised}")
    elif played.output != expected:
        reasons.append("the outputs differ")
    if EXEC_REQUEST in played.requests:
        reasons.append(f"the host fell back on {EXEC_REQUEST}")
    if expected in MISSING and any(r.startswith(_READ_REQUESTS) for r in played.requests):
        reasons.append("the host read the archive for a call without an id or a query")
    return tuple(reasons)


def log_verdict(server: Sequence[str], client: Sequence[str]) -> tuple[str, ...]:
    """Why the Go's request log differs from what the hosts sent (a fallback included,
    which the Go saw even if the host did not say so); () when it does not."""
    reasons: list[str] = []
    if EXEC_REQUEST in server:
        reasons.append(f"the host fell back on {EXEC_REQUEST}")
    if list(server) != list(client):
        reasons.append(f"the Go saw {list(server)}, the hosts sent {list(client)}")
    return tuple(reasons)


def _digest(text: str) -> int:
    """A 64-bit digest of ``text``, the same in every process (``hash`` of a str is not)."""
    raw = hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=8).digest()
    return int.from_bytes(raw, "big", signed=True)


def state_key(blocks: Iterable[tuple[int, BlockSpec]]) -> int:
    """A key naming an archive's readable set (its unlocked blocks and their seqs), the
    same in every process: workers' distinct calls add up."""
    return _digest(repr(tuple((seq, b.label, b.content) for seq, b in blocks if not b.locked)))


def call_key(state: int, tool: str, args: str) -> int:
    """A key naming a call over the archive state ``state``, the same in every process."""
    return _digest(repr((state, tool, args)))


# -- the run's control ------------------------------------------------------------------

# What a harness failure raises (Go not built, not answering): it ends the run, unshrunk.
HARNESS_ERRORS = (ParityError, httpx.HTTPError, OSError, ValueError)

SHRINK_SECONDS = 60.0
"""Shrinking a divergence stops after this long, with the smallest one found."""


class Found(Protocol):
    """A divergence, as either fuzzer reports it."""

    def report(self) -> str: ...

    def size(self) -> tuple[int, ...]:
        """What shrinking makes smaller, most important first."""
        ...


class DivergenceFound(AssertionError):
    """Raised inside a fuzz example for a divergence, so Hypothesis shrinks it."""

    def __init__(self, divergence: Found) -> None:
        super().__init__(divergence.report())
        self.divergence = divergence


class Abort(BaseException):
    """A harness error inside an example, its one argument: ends the run, unshrunk."""


class TimeUp(BaseException):
    """The run's time, or shrinking's, is spent (raised at an example's end): the smallest
    divergence found, if any, is the result."""


@dataclass
class FuzzStats:
    """What a fuzz run did: ``distinct`` the (archive state, tool, args) compared, as
    :func:`call_key` keys (several workers' add up), ``played`` every call played."""

    examples: int = 0
    played: int = 0
    archives: int = 0
    seconds: float = 0.0
    divergences: list[Any] = field(default_factory=list)
    distinct: set[int] = field(default_factory=set, repr=False)

    @property
    def calls(self) -> int:
        """The distinct calls compared."""
        return len(self.distinct)

    def count(self, state: int, tool: str, args: str) -> None:
        """Note one call played over the archive state ``state``."""
        self.played += 1
        self.distinct.add(call_key(state, tool, args))

    def fresh(
        self, state: int, calls: Iterable[tuple[str, str]], *, among: set[int] | None = None
    ) -> list[tuple[str, str]]:
        """The calls not yet compared over ``state`` (or noted under it in ``among``):
        Hypothesis' examples often repeat an earlier one's. Every call once a divergence is
        found: its replays (shrinking, the last run) must not skip the call that diverged."""
        if self.divergences:
            return list(calls)
        seen = self.distinct if among is None else among
        return [(tool, args) for tool, args in calls if call_key(state, tool, args) not in seen]

    def summary(self) -> str:
        """One line: examples, calls, rates and divergences."""
        secs = max(self.seconds, 1e-9)
        return (
            f"{self.examples} examples ({self.calls} distinct calls compared,"
            f" {self.played} played, {self.archives} archives loaded)"
            f" in {self.seconds:.1f} s: {self.examples / secs:.1f} examples/s,"
            f" {self.calls / secs:.1f} calls/s; {len(self.divergences)} divergences"
        )


@dataclass(kw_only=True)
class Run:
    """A fuzz run: ``base`` with ``examples``, or as many as ``seconds`` allow, ``seed``
    (not derandomized), shrinking for ``shrink_seconds`` at most; hosts through ``wrap``
    (a test's planted bug), told ``unicode_version`` (else their Go's). What its examples
    share: a Go reference per ``GoMode`` (started when first needed), the async hosts'
    event loop, every request the hosts sent (``recording``), the stats; and its clock:
    the deadline, and shrinking's (counted from the first divergence)."""

    base: settings = field(default_factory=settings)
    examples: int | None = None
    seconds: float | None = None
    seed: int | None = None
    shrink_seconds: float = field(default_factory=lambda: SHRINK_SECONDS)  # read anew per run
    reference: GoReference | None = None  # None: the checkout's
    wrap: TransportWrap | None = None
    unicode_version: str | None = None
    stats: FuzzStats = field(default_factory=FuzzStats)

    def __post_init__(self) -> None:
        self.deadline = None if self.seconds is None else time.monotonic() + self.seconds
        self.found_at: float | None = None
        self.last: float | None = None  # when ``check`` last ran
        # the time between the last checks: how long the next example may take
        self.gaps: deque[float] = deque(maxlen=8)
        self.loop = asyncio.Runner()
        self.recording: list[str] = []
        self.played: set[int] = set()  # parity.stateful's: the calls played, by host context
        self._sessions: dict[GoMode, GoSession] = {}

    def check(self) -> None:
        """``TimeUp`` when shrinking's time is spent, or when nothing was found and the
        longest of the last spans between checks would end past the deadline.

        Only ever after an example's last draw: an example that ends earlier on the same
        draws is flaky for Hypothesis (``FlakyStrategyDefinition``), which hides the rest."""
        now = time.monotonic()
        if self.found_at is not None and now - self.found_at > self.shrink_seconds:
            raise TimeUp  # shrinking's time, from the first divergence, is spent
        if self.last is not None:
            self.gaps.append(now - self.last)
        self.last = now
        if self.over(ahead=max(self.gaps, default=0)):
            raise TimeUp  # the run ends before the example that would end past the deadline

    @contextmanager
    def example(self) -> Iterator[None]:
        """One example, after its last draw: counted, checked at its start and end."""
        self.check()
        self.stats.examples += 1
        try:
            yield
        except DivergenceFound:
            self.check()
            raise
        self.check()

    def over(self, *, ahead: float = 0.0) -> bool:
        """Whether the deadline is past (or will be in ``ahead`` seconds) with nothing found:
        what an example does then is wasted."""
        past = self.deadline is not None and time.monotonic() + ahead > self.deadline
        return past and not self.stats.divergences

    def settings_with(self, **changes: Any) -> settings:
        """``base`` with the run's amount and seed, and ``changes``; the smallest failure
        alone is raised (:meth:`fuzz` gets one divergence)."""
        if self.seed is not None:
            changes["derandomize"] = False
        if (amount := 10**9 if self.seconds is not None else self.examples) is not None:
            changes["max_examples"] = amount
        return settings(self.base, report_multiple_bugs=False, **changes)

    def session(self, *, mode: GoMode) -> GoSession:
        """The Go reference that serves ``/blocks`` as ``mode`` says."""
        if mode not in self._sessions:
            self.reference = self.reference or GoReference()
            self._sessions[mode] = GoSession(self.reference, mode=mode)
        return self._sessions[mode]

    def host(self, spec: HostSpec, session: GoSession) -> Host:
        """A new host of ``spec``'s kind over ``session``'s Go."""
        version = self.unicode_version or session.unicode_version
        return Host(spec, session.running.connection, self, unicode_version=version)

    def fuzz(self, test: Callable[[], None]) -> Any:
        """Run a Hypothesis test; its shrunk divergence (the smallest of those met when
        shrinking ran out of time), the only one kept in ``stats``, or None."""
        stats = self.stats
        if self.seed is not None:
            # what hypothesis.seed() sets, without the rest of it: it also turns the example
            # database off, where a campaign keeps what it found (--db)
            setattr(test, "_hypothesis_internal_use_seed", self.seed)  # noqa: B010
        started = time.monotonic()
        found: Any = None
        try:
            test()
        except TimeUp:
            found = min(stats.divergences, key=lambda d: d.size(), default=None)
        except Abort as abort:
            raise abort.args[0] from None
        except DivergenceFound as exc:
            found = exc.divergence
        finally:
            stats.seconds += time.monotonic() - started
        stats.divergences[:] = [found] if found is not None else []
        return found

    def diverged(self, divergence: Found) -> NoReturn:
        """Raise DivergenceFound, so Hypothesis shrinks it (noted in ``stats``; shrinking's
        clock starts at the first). :meth:`check` ends the run, after the example's last
        draw."""
        if divergence not in self.stats.divergences:
            self.stats.divergences.append(divergence)
        if self.found_at is None:
            self.found_at = time.monotonic()
        raise DivergenceFound(divergence)

    def close(self) -> None:
        while self._sessions:
            self._sessions.popitem()[1].running.stop()
        self.loop.close()
