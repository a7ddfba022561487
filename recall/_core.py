"""HostCore: what both hosts share, with no I/O: the options, and each call as its requests.

A call is a generator (sans-IO, as h11): it yields each ``Request``, is sent its
``Answer`` or thrown its GoUnavailableError, and returns the output; the hosts drive it
through a ``Call``. With a shadow, a sampled call hands its comparison (a ``Job``, a call of
the same kind) to the host's ``offpath`` hook, which drives it off the caller's path.
"""

from __future__ import annotations

import contextlib
import copy
import logging
import os
import ssl
import threading
from collections.abc import Callable, Generator, Iterator, Mapping
from typing import Final, Generic, TypeVar

from recall._blocks import BadDelta, BlockSet, BodyStream
from recall._errors import FallbackFailedError, GoUnavailableError, RecallError, UnknownToolError
from recall._fast import decoders
from recall._go import DEFAULT_UNICODE_VERSION, quote_for
from recall._index import Searcher
from recall._protocol import (
    Answer,
    Request,
    block_request,
    blocks_request,
    check_bytes,
    check_timeout,
    check_token,
    check_type,
    exec_request,
    parse_block,
    parse_blocks,
    parse_exec,
    strong_etag,
)
from recall._shadow import PythonRun, ShadowState, Verdict
from recall._tools import TOOLS, BlockRead, replace_surrogates, start_tool

T = TypeVar("T")

DEFAULT_MAX_BODY_BYTES: Final = 512 * 1024 * 1024
DEFAULT_CACHE_BYTES: Final = 64 * 1024 * 1024
_log = logging.getLogger("recall")
PAST_BOUND: Final = "the archive (%s) is past cache_bytes (%.1f MiB): %s"
"""The template of the warning a host logs once, the first time a set does not fit."""


class Flight:
    """One read of /blocks shared by every search needing the set while it flies: the first
    to ``claim`` it sends ``request`` and lands the answer (``land``) within ``sending``,
    which lands a failure too; every caller waits for ``landed``, then takes the same
    ``result``.
    """

    __slots__ = ("_claimed", "_error", "_land", "_result", "landed", "request", "waiting")

    def __init__(self, request: Request, land: Callable[[Answer], tuple[BlockSet, bool]]) -> None:
        self.request = request
        self._land = land
        self._claimed = threading.Lock()  # held by the first to claim it
        self.landed = threading.Event()  # set once the read has landed or failed
        self._result: tuple[BlockSet, bool] | None = None
        self._error: Exception | None = None
        self.waiting = 0  # the async callers waiting for it

    def claim(self) -> bool:
        """True for the first caller only: it sends the request."""
        return self._claimed.acquire(blocking=False)

    def land(self, answer: Answer) -> None:
        """The answer to ``request``: the set read from it (or the failure it is)."""
        try:
            self._result = self._land(answer)
        except Exception as exc:
            self._error = exc

    @contextlib.contextmanager
    def sending(self) -> Iterator[None]:
        """Around the claimer's sending of ``request`` and ``land``; the read has landed
        once it ends. Its GoUnavailableError fails the read for every caller; any other
        exception (the sender interrupted) fails it too, and goes on."""
        try:
            yield
        except GoUnavailableError as error:
            self._error = error
        except BaseException:
            self._error = GoUnavailableError(self.request.what, "the read was interrupted")
            raise
        finally:
            self.landed.set()

    def result(self) -> tuple[BlockSet, bool]:
        """The set and whether it is mostly the set read before; else the read's failure
        raised (a copy for each caller)."""
        if self._error is not None:
            raise copy.copy(self._error) from self._error.__cause__
        assert self._result is not None
        return self._result


Steps = Generator[Request | Flight, Answer, T]
"""A call: yields its requests (or a shared read to wait for), is sent their answers."""
Job = Steps[None]
"""A sampled call's comparison: the other side's output, the verdict settled."""


class HostCore:
    """The options and the per-call logic of both hosts (no I/O; safe for threads and tasks).

    The options are the hosts' (``shadow``: None or its state; the host sets ``offpath``).
    The last set read is kept with its ETag (and a word index, ``Searcher``) within
    ``cache_bytes``, and read again with ``?since=``; without a shadow (which needs the
    Blocks) it is kept ``compacted`` unless the last ``?since=`` read was answered whole.
    """

    def __init__(
        self,
        *,
        token: str | None,
        timeout: float,
        max_body_bytes: int,
        cache_bytes: int,
        shadow: ShadowState | None = None,
        go: str = "",
        unicode_version: str = DEFAULT_UNICODE_VERSION,
    ) -> None:
        self._quote = quote_for(unicode_version)
        self._token = check_token(token)
        self.timeout = check_timeout(timeout)
        self.headers = {"Accept": "application/json"}
        if token is not None:
            self.headers["Authorization"] = f"Bearer {token}"
        self._max_body_bytes = check_bytes("max_body_bytes", max_body_bytes)
        self._budget = check_bytes("cache_bytes", cache_bytes)
        self._kept: BlockSet | None = None
        self._said_past_bound = False
        self._whole_since = False  # the last ?since= read was answered with a whole set
        self._flight: Flight | None = None
        self._flight_lock = threading.Lock()
        self._searcher = Searcher(self._budget)
        self.go = go  # the base URL without credentials, as errors say it
        self.shadow = shadow
        self.offpath: Callable[[Job], bool] = lambda job: False
        """The host's hook: drive a ``Job`` off the caller's path; False when it cannot take
        the job now (its queue is full, it is closing)."""

    def call(self, name: str, args: str) -> Steps[str]:
        """The tool call ``name`` with the JSON arguments text ``args``, to be driven
        (TypeError unless both are str; surrogates become U+FFFD first)."""
        check_type("name", name, str, "a str")
        check_type("args", args, str, "a str")
        name, args = replace_surrogates(name), replace_surrogates(args)
        shadow = self.shadow
        if shadow is not None and name in TOOLS:
            if shadow.primary == "go":
                return self._go_primary(name, args, shadow, shadow.sample())
            if shadow.sample():
                return self._python_primary(name, args, shadow)
        return self._steps(name, args)

    def warm(self) -> Steps[Request]:
        """A read of /blocks, to be driven: the set kept for the searches to come; its output
        is the read a search would send next."""
        flight = self._join()
        yield flight
        flight.result()
        kept = self._kept
        return blocks_request(None if kept is None else kept.tag)

    def receive(self, request: Request, status: int, headers: Mapping[str, str]) -> Answer:
        """The answer to feed ``request``'s body into: a whole /blocks set whose Blocks the
        host would not keep (a strong ETag, no shadow, no ``?since=`` read answered whole
        last) is decoded as it arrives (``BodyStream``), never held whole."""
        stream = None
        streamed = status == 200 and request == blocks_request() and self.shadow is None
        if streamed and not self._whole_since and strong_etag(headers) is not None:
            stream = BodyStream(decoders)
        limit, timeout = self._max_body_bytes, self.timeout
        return Answer(request, status, headers, limit=limit, timeout=timeout, stream=stream)

    def unavailable(self, request: Request, exc: Exception) -> GoUnavailableError:
        """The failure of ``request`` that ``exc`` (a transport error) is: its kind and what
        it failed on (``_failed_on``), the token masked."""
        detail = _failed_on(exc)
        if self._token:
            detail = detail.replace(self._token, "***")
        kind = type(exc).__name__
        return GoUnavailableError(request.what, f"{kind}: {detail}" if detail else kind)

    # A call.

    def _steps(self, name: str, args: str) -> Steps[str]:
        if name not in TOOLS:
            return (yield from self._exec(name, args))
        try:
            return (yield from self._python(name, args))
        except GoUnavailableError as read_error:
            return (yield from self._fallback(name, args, read_error))

    def _fallback(self, name: str, args: str, read_error: GoUnavailableError) -> Steps[str]:
        """Go's output for a call whose read failed; FallbackFailedError when it fails too."""
        try:
            return (yield from self._exec(name, args))
        except RecallError as exec_error:
            raise FallbackFailedError(read_error, exec_error) from exec_error

    def _python(self, name: str, args: str, run: PythonRun | None = None) -> Steps[str]:
        """The port's output, over its archive read (GoUnavailableError when that fails),
        what it read noted in ``run``."""
        step = start_tool(name, args, self._quote)
        if isinstance(step, str):
            return step
        if isinstance(step, BlockRead):
            block = parse_block((yield block_request(step.seq)), step.seq)
            if run is not None:
                run.step, run.block = step, block
            return step.finish(block)
        flight = self._join()
        yield flight
        blocks, again = flight.result()
        if run is not None and blocks.complete:  # a shadow's sets always are
            run.step, run.blocks = step, blocks.view()  # decoded for a divergence only
        output = self._searcher.search(step, blocks, again=again)
        if self._kept is blocks and not self._fits(blocks):
            self._kept = self._keepable(blocks)  # its index made it too large
        return output

    def _join(self) -> Flight:
        """The read of /blocks in flight, or a new one (conditional for a kept set's tag)."""
        with self._flight_lock:
            flight = self._flight
            if flight is None or flight.landed.is_set():
                kept = self._kept
                sent = None if kept is None else kept.tag
                flight = Flight(blocks_request(sent), lambda answer: self._land(answer, kept, sent))
                self._flight = flight
            return flight

    def _land(
        self, answer: Answer, kept: BlockSet | None, sent: str | None
    ) -> tuple[BlockSet, bool]:
        """The set of a /blocks answer, kept when it fits, and whether it is mostly the set
        read before; a bad delta drops the kept set."""
        try:  # a delta compacted with no shadow: a Go with deltas has no body to reuse
            read = decoders(len(answer.body))
            blocks = parse_blocks(answer, kept=kept, sent=sent, compact=self.shadow is None, **read)
        except GoUnavailableError as exc:
            if isinstance(exc.__cause__, BadDelta) and self._kept is kept:
                self._kept = None  # never used again
            raise
        if self.shadow is None and answer.status == 200:
            if sent is not None:  # a whole set is complete, a delta's compacted
                self._whole_since = blocks.complete
            if blocks.complete and blocks.tag is not None and not self._whole_since:
                blocks = blocks.compacted()  # a 304 or a delta comes next: no body to compare
        self._kept = self._keepable(blocks)
        return blocks, blocks is kept or 2 * blocks.reused >= len(blocks)

    def _keepable(self, blocks: BlockSet) -> BlockSet | None:
        """What of ``blocks`` is kept within ``cache_bytes``: the set, else (no shadow) its
        images and heads, else nothing; said once in the log."""
        if self._fits(blocks):
            return blocks
        if not self._budget:
            return None  # nothing kept, as asked
        compact = blocks.compacted() if self.shadow is None and blocks.complete else None
        kept = compact if compact is not None and self._fits(compact) else None
        if not self._said_past_bound:
            self._said_past_bound = True
            size = f"{len(blocks)} blocks, {blocks.size / 2**20:.1f} MiB kept whole"
            what = (
                "nothing is kept, every search reads and decodes the whole set"
                if kept is None
                else f"only what searches need is kept ({kept.size / 2**20:.1f} MiB); a re-read"
                " then decodes every block"
            )
            _log.warning(PAST_BOUND, size, self._budget / 2**20, what)
        return kept

    def _fits(self, blocks: BlockSet) -> bool:
        """Whether ``blocks`` fits the bound, with its index."""
        index = self._searcher.index_of(blocks)
        return blocks.size + (0 if index is None else index.size) <= self._budget

    def _exec(self, name: str, args: str, shadow: ShadowState | None = None) -> Steps[str]:
        """Go's own output for the call, from /tool/exec (said to a ``shadow``)."""
        output = parse_exec((yield exec_request(name, args)), name)
        if shadow is not None:
            shadow.go_answered()
        return output

    # A call with a shadow: the primary on the caller's path, the rest handed off.

    def _python_primary(self, name: str, args: str, shadow: ShadowState) -> Steps[str]:
        """The port's output, its comparison then handed off. A call that falls back is
        not compared (``fell_back``); the port's defect (an exception that is not a
        RecallError) reaches the caller, and is compared with Go's output too."""
        run = PythonRun()
        try:
            run.output = yield from self._python(name, args, run)
        except GoUnavailableError as read_error:
            shadow.sampled("fell_back")
            return (yield from self._fallback(name, args, read_error))
        except Exception as exc:
            run.error = shadow.describe(exc)
            self._hand_off(shadow, self._compare(name, args, run, None))
            raise
        self._hand_off(shadow, self._compare(name, args, run, None))
        return run.output

    def _go_primary(self, name: str, args: str, shadow: ShadowState, sampled: bool) -> Steps[str]:
        """Go's output, the port's run then handed off when sampled. When Go fails, the
        port serves the call: its output, or FallbackFailedError when its read fails too."""
        try:
            output = yield from self._exec(name, args, shadow)
        except RecallError as go_error:
            shadow.go_failed(go_error, served=True, sampled=sampled)
            try:
                return (yield from self._python(name, args))
            except GoUnavailableError as read_error:
                raise FallbackFailedError(read_error, go_error) from go_error
        if sampled:
            self._hand_off(shadow, self._compare(name, args, None, output))
        return output

    def _hand_off(self, shadow: ShadowState, job: Job) -> None:
        shadow.sampled("pending")
        if not self.offpath(job):
            shadow.settle("dropped")

    # The comparison, off the caller's path.

    def _compare(
        self, name: str, args: str, python: PythonRun | None, go_output: str | None
    ) -> Job:
        """The comparison of a call of which one side is known (the port's run, or Go's
        output): a difference checked once more on both sides, the verdict settled."""
        shadow = self.shadow
        assert shadow is not None
        verdict: Verdict = "matched"
        divergence = None
        try:
            if python is None:
                python = yield from self._python_run(name, args, shadow)
            else:
                go_output = yield from self._exec(name, args, shadow)
            if not python.fell_back and python.output != go_output:
                # Once more on both sides: equal now, the archive changed in between.
                python = yield from self._python_run(name, args, shadow)
                go_output = yield from self._exec(name, args, shadow)
                verdict = "raced"
            if python.fell_back:
                verdict = "fell_back"
            elif python.output != go_output:
                assert go_output is not None
                verdict = "diverged"
                divergence = shadow.divergence(name, args, python, go_output)
        except RecallError as go_error:  # Go failed the shadow call: no verdict
            shadow.settle("errors", error=go_error)
            return None
        shadow.settle(verdict, divergence=divergence)

    def _python_run(self, name: str, args: str, shadow: ShadowState) -> Steps[PythonRun]:
        """The port's run of a call, never raising: its output or its defect, and what it
        read; ``fell_back`` when its read failed."""
        run = PythonRun()
        try:
            run.output = yield from self._python(name, args, run)
        except GoUnavailableError:
            run.fell_back = True
        except Exception as exc:
            run.error = shadow.describe(exc)
        return run


def _failed_on(exc: BaseException) -> str:
    """What a transport error failed on, in the same words from httpx's sync and async
    transports (which wrap the same faults in other words, or none): ``[Errno N]
    <strerror>`` for the system error along its causes, ``timed out``, else its message.
    """
    beneath: BaseException | None = exc
    for _ in range(16):  # chains are short; never loop on a cycle
        if beneath is None or isinstance(beneath, ssl.SSLError):
            break
        if isinstance(beneath, OSError) and beneath.errno and beneath.errno > 0:
            return f"[Errno {beneath.errno}] {os.strerror(beneath.errno)}"
        if isinstance(beneath, TimeoutError):
            return "timed out"
        beneath = beneath.__cause__ or beneath.__context__
    return str(exc)


class Call(Generic[T]):
    """One call, driven by a host: while ``request`` is not None, send it and ``resume``
    with its answer or its failure, or for a Flight, claim it (and send its request), wait
    for it and ``resume()``; then ``output`` is the call's output. The call's own errors
    are raised by ``resume``, saying they are ``go``'s.
    """

    __slots__ = ("_go", "_steps", "output", "request")

    output: T

    def __init__(self, steps: Steps[T], go: str = "") -> None:
        self._steps, self._go = steps, go
        self.request: Request | Flight | None = None
        self.resume()

    def resume(self, answer: Answer | None = None, error: GoUnavailableError | None = None) -> None:
        """Go on with the ``answer`` to ``request`` or its ``error`` (neither: its Flight has
        landed or failed)."""
        try:
            if error is not None:
                self.request = self._steps.throw(error)
            elif answer is not None:
                self.request = self._steps.send(answer)
            else:
                self.request = next(self._steps)
        except StopIteration as done:
            self.request = None
            self.output = done.value
        except (GoUnavailableError, UnknownToolError) as error:
            error.at(self._go)
            raise
