"""HostCore: what both hosts share, with no I/O: the options, and each call as its requests.

A call is a generator (as h11 and h2 are sans-IO): it yields each ``Request``, is
sent its ``Answer`` or thrown its GoUnavailableError, and returns the output. The
hosts drive it through ``Call`` with httpx, sync or async; nothing else differs.

With a shadow (``recall._shadow``), a sampled call hands a ``Job`` to the host's
``offpath`` hook as it ends; the host runs ``compare(job)``, a generator of the same
kind, off the caller's path, however it likes (a thread, a task).
"""

from __future__ import annotations

import os
import ssl
import time
from collections.abc import Callable, Generator, Mapping
from typing import Final, Generic, TypeVar

from recall._blocks import BlockSet, replace_surrogates
from recall._errors import FallbackFailedError, GoUnavailableError, RecallError, UnknownToolError
from recall._fast import item_decoder, items_decoder
from recall._index import Searcher
from recall._protocol import (
    Answer,
    Body,
    Request,
    block_request,
    blocks_request,
    check_bytes,
    check_timeout,
    check_token,
    exec_request,
    parse_block,
    parse_blocks,
    parse_exec,
)
from recall._shadow import COUNTS, Job, PythonRun, Seen, ShadowState, Verdict
from recall._tools import TOOLS, BlockRead, BlocksRead, start_tool

__all__ = ["DEFAULT_CACHE_BYTES", "DEFAULT_MAX_BODY_BYTES", "Call", "HostCore"]

T = TypeVar("T")

DEFAULT_MAX_BODY_BYTES: Final = 512 * 1024 * 1024
DEFAULT_CACHE_BYTES: Final = 64 * 1024 * 1024

Steps = Generator[Request, Answer, T]
"""A call: yields its requests, is sent their answers (or thrown their failures), returns."""


class HostCore:
    """The options and the per-call logic of both hosts (no I/O; safe for threads and tasks).

    ``timeout`` (seconds) bounds each body's arrival once its headers are in,
    ``max_body_bytes`` each body's size; ``token`` is sent as ``Authorization:
    Bearer``. ``shadow`` is None (no comparison, the port primary) or the shadow's
    options and state; the host then sets ``offpath``. ValueError for a bad option.

    The host keeps the last set of blocks it read (``BlockSet``) with its ETag, and
    for a set searched again a word index (``Searcher``), the two within
    ``cache_bytes`` (0: nothing kept). A search then reads /blocks conditionally
    (``If-None-Match``): a 304 with that tag reuses the set, decoded, lowered and
    indexed; a 200 reuses the blocks whose bytes are unchanged. The set is this
    host's: one base URL, one token.
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
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        check_token(token)
        self.timeout = check_timeout(timeout)
        self.headers = {"Accept": "application/json"}
        if token is not None:
            self.headers["Authorization"] = f"Bearer {token}"
        self._token = token
        self._max_body_bytes = check_bytes("max_body_bytes", max_body_bytes)
        self._budget = check_bytes("cache_bytes", cache_bytes)
        self._kept: BlockSet | None = None
        self._searcher = Searcher(self._budget)
        self._clock = clock
        self.go = go
        """The Go's base URL without credentials, as its errors say (``GoUnavailableError.go``)."""
        self.shadow = shadow
        self.offpath: Callable[[Job], bool] = _refuse
        """The host's hook: run ``compare(job)`` off the caller's path; False when it
        cannot take the job now (its queue is full, it is closing)."""

    def __repr__(self) -> str:
        return "HostCore()"

    def call(self, name: str, args: str) -> Call[str]:
        """The tool call ``name`` with the JSON arguments text ``args``, to be driven.

        TypeError when either is not a str. Surrogates in both become U+FFFD first.
        """
        if not isinstance(name, str):
            raise TypeError(f"name must be a str, not {type(name).__name__}")
        if not isinstance(args, str):
            raise TypeError(f"args must be a str, not {type(args).__name__}")
        name, args = replace_surrogates(name), replace_surrogates(args)
        shadow = self.shadow
        if shadow is not None and name in TOOLS:
            if shadow.primary == "go":
                return Call(self._go_primary(name, args, shadow, shadow.sample()), self.go)
            if shadow.sample():
                return Call(self._python_primary(name, args, shadow), self.go)
        return Call(self._steps(name, args), self.go)

    def compare(self, job: Job) -> Call[None]:
        """A sampled call's comparison, to be driven off the caller's path: it gets the
        other side's output, checks a difference once more on both sides, and settles
        the verdict with the shadow (counts, log, ``on_divergence``)."""
        return Call(self._compare(job), self.go)

    def shadow_stats(self) -> dict[str, int]:
        """The shadow's counts (all 0 without a shadow)."""
        return dict.fromkeys(COUNTS, 0) if self.shadow is None else self.shadow.stats()

    def receive(self, request: Request, status: int, headers: Mapping[str, str]) -> Body:
        """The body of the answer to ``request``, to be fed; GoUnavailableError for a
        status that is a failure or a declared length past the bound."""
        return Body(
            request,
            status,
            headers,
            limit=self._max_body_bytes,
            timeout=self.timeout,
            clock=self._clock,
        )

    def unavailable(self, request: Request, exc: Exception) -> GoUnavailableError:
        """The failure of ``request`` that ``exc`` (a transport error) is: its kind and
        what it failed on (``_failed_on``), the token masked should it appear."""
        detail = _failed_on(exc)
        if self._token:
            detail = detail.replace(self._token, "***")
        kind = type(exc).__name__
        return GoUnavailableError(request.what, f"{kind}: {detail}" if detail else kind)

    # A call.

    def _steps(self, name: str, args: str) -> Steps[str]:
        # _python inlined: the path of every call without a shadow, one generator less
        if name not in TOOLS:
            return (yield from self._exec(name, args))
        step = start_tool(name, args)
        if isinstance(step, str):
            return step
        try:
            return (yield from self._read(step))
        except GoUnavailableError as read_error:
            return (yield from self._fallback(name, args, read_error))

    def _python(self, name: str, args: str, seen: Seen | None = None) -> Steps[str]:
        """The port's output (GoUnavailableError when its archive read fails); ``seen``
        records what it read."""
        step = start_tool(name, args)
        if isinstance(step, str):
            return step
        return (yield from self._read(step, seen))

    def _fallback(self, name: str, args: str, read_error: GoUnavailableError) -> Steps[str]:
        """Go's output for a call whose archive read failed; FallbackFailedError when it
        fails too."""
        try:
            return (yield from self._exec(name, args))
        except RecallError as exec_error:
            raise FallbackFailedError(read_error, exec_error) from exec_error

    def _read(self, step: BlockRead | BlocksRead, seen: Seen | None = None) -> Steps[str]:
        """The tool's archive read, and its output over it."""
        if isinstance(step, BlockRead):
            request = block_request(step.seq)
            block = parse_block(request.what, (yield request), step.seq)
            if seen is not None:
                seen.step, seen.block = step, block
            return step.finish(block)
        kept = self._kept
        sent = None if kept is None else kept.tag
        request = blocks_request(sent)
        answer = yield request
        size = len(answer.body)
        blocks = parse_blocks(
            request.what,
            answer,
            kept=kept,
            sent=sent,
            decode=item_decoder(size),
            decode_many=items_decoder(size),
        )
        if seen is not None:
            seen.step, seen.blocks = step, blocks.view()  # decoded for a divergence only
        again = blocks is kept or 2 * blocks.reused >= len(blocks)
        output = self._searcher.search(step, blocks, again=again)
        self._keep(blocks)
        return output

    def _keep(self, blocks: BlockSet) -> None:
        """Keep ``blocks`` as the last set read, when it fits the bound with its index."""
        held = blocks.size + (self._searcher.held if blocks.index is not None else 0)
        self._kept = blocks if held <= self._budget else None

    def _exec(self, name: str, args: str) -> Steps[str]:
        """Go's own output for the call, from /tool/exec."""
        request = exec_request(name, args)
        return parse_exec(request.what, (yield request), name)

    # A call with a shadow: the primary on the caller's path, the rest handed off.

    def _python_primary(self, name: str, args: str, shadow: ShadowState) -> Steps[str]:
        """The port's output, as without a shadow; then its comparison is handed off.

        A call that falls back is not compared (its output is Go's own): ``fell_back``.
        The port's own defect (an exception that is not a RecallError) still reaches
        the caller, and is compared too: Go's output against the error.
        """
        seen = Seen()
        try:
            output = yield from self._python(name, args, seen)
        except GoUnavailableError as read_error:
            shadow.on_path("fell_back")
            return (yield from self._fallback(name, args, read_error))
        except Exception as exc:
            self._hand_off(
                shadow, Job(name, args, PythonRun(None, shadow.describe(exc), seen), None)
            )
            raise
        self._hand_off(shadow, Job(name, args, PythonRun(output, None, seen), None))
        return output

    def _go_primary(self, name: str, args: str, shadow: ShadowState, sampled: bool) -> Steps[str]:
        """Go's output; then, when sampled, the port's run is handed off to be compared.

        When Go fails (down, time-out, a bad body, the tool unknown), the port serves
        the call, never worse than ``primary="python"``: its output, or when its read
        fails too, FallbackFailedError (the read's error, then Go's).
        """
        try:
            output = yield from self._exec(name, args)
        except RecallError as go_error:
            shadow.go_failed(go_error, served=True, sampled=sampled)
            try:
                return (yield from self._python(name, args))
            except GoUnavailableError as read_error:
                raise FallbackFailedError(read_error, go_error) from go_error
        shadow.go_answered()
        if sampled:
            self._hand_off(shadow, Job(name, args, None, output))
        return output

    def _hand_off(self, shadow: ShadowState, job: Job) -> None:
        shadow.handed_off()
        if not self.offpath(job):
            shadow.settle("dropped")

    # The comparison, off the caller's path.

    def _compare(self, job: Job) -> Steps[None]:
        shadow = self.shadow
        assert shadow is not None
        verdict: Verdict = "errors"
        python = job.python
        try:
            if python is None:
                go_output = job.go_output
                assert go_output is not None
                python = yield from self._python_run(job.name, job.args)
            else:
                go_output = yield from self._go_run(job.name, job.args, shadow)
            if python.fell_back:
                verdict = "fell_back"
            elif python.output == go_output:
                verdict = "matched"
            else:  # once more on both sides: equal now, the archive changed in between
                python = yield from self._python_run(job.name, job.args)
                go_output = yield from self._go_run(job.name, job.args, shadow)
                if python.fell_back:
                    verdict = "fell_back"
                elif python.output == go_output:
                    verdict = "raced"
                else:
                    divergence = shadow.divergence(job.name, job.args, python, go_output)
                    shadow.settle("diverged", divergence=divergence)
                    return None
        except RecallError as go_error:  # Go failed the shadow call: no verdict
            shadow.settle("errors", error=go_error)
            return None
        shadow.settle(verdict)
        return None

    def _go_run(self, name: str, args: str, shadow: ShadowState) -> Steps[str]:
        """Go's output for a shadow call (a RecallError when it fails)."""
        output = yield from self._exec(name, args)
        shadow.go_answered()
        return output

    def _python_run(self, name: str, args: str) -> Steps[PythonRun]:
        """The port's run of a call, never raising: its output or its defect, and what
        it read; ``fell_back`` when its read failed (it would have fallen back)."""
        seen = Seen()
        try:
            output = yield from self._python(name, args, seen)
        except GoUnavailableError:
            return PythonRun(None, None, seen, fell_back=True)
        except Exception as exc:
            assert self.shadow is not None
            return PythonRun(None, self.shadow.describe(exc), seen)
        return PythonRun(output, None, seen)


def _refuse(job: Job) -> bool:
    """The ``offpath`` of a core no host runs comparisons for."""
    return False


def _failed_on(exc: BaseException) -> str:
    """What a transport error failed on, in the same words from httpx's sync and async
    transports: ``[Errno N] <strerror>`` for the system error beneath it, ``timed out``
    for a time-out, else its own message (a TLS error's included).

    The async transport wraps the same faults with other words or none (anyio's
    "All connection attempts failed", an empty ReadError or ReadTimeout); the error
    beneath is found along the chain of causes (else contexts).
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
    """One call, driven by a host: while ``request`` is not None, send it and give back
    its ``answer`` or its failure (``fail``); then ``output`` is the call's output.

    Errors of the call itself (FallbackFailedError, UnknownToolError, ...) are
    raised by ``answer`` and ``fail``; a GoUnavailableError or UnknownToolError says it
    was ``go``'s.
    """

    __slots__ = ("_go", "_steps", "output", "request")

    output: T

    def __init__(self, steps: Steps[T], go: str = "") -> None:
        self._steps = steps
        self._go = go
        self.request: Request | None = None
        self._advance(None, None)

    def answer(self, answer: Answer) -> None:
        """The answer to ``request``."""
        self._advance(answer, None)

    def fail(self, error: GoUnavailableError) -> None:
        """``request`` failed."""
        self._advance(None, error)

    def _advance(self, answer: Answer | None, error: GoUnavailableError | None) -> None:
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
