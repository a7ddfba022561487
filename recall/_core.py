"""HostCore: what both hosts share, with no I/O: the options, and each call as its requests.

A call is a generator (as h11 and h2 are sans-IO): it yields each ``Request``, is
sent its ``Answer`` or thrown its GoUnavailableError, and returns the output. The
hosts drive it through ``Call`` with httpx, sync or async; nothing else differs.
"""

from __future__ import annotations

import os
import ssl
import time
from collections.abc import Callable, Generator, Mapping
from typing import Final

from recall._blocks import BlockCache, replace_surrogates
from recall._errors import FallbackFailedError, GoUnavailableError, RecallError
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
from recall._tools import TOOLS, BlockRead, BlocksRead, latin1_images, start_tool

__all__ = ["DEFAULT_CACHE_BYTES", "DEFAULT_MAX_BODY_BYTES", "Call", "HostCore"]

DEFAULT_MAX_BODY_BYTES: Final = 512 * 1024 * 1024
DEFAULT_CACHE_BYTES: Final = 64 * 1024 * 1024

Steps = Generator[Request, Answer, str]
"""A call: yields its requests, is sent their answers (or thrown their failures), returns."""


class HostCore:
    """The options and the per-call logic of both hosts (no I/O; safe for threads and tasks).

    ``timeout`` (seconds) bounds each body's arrival once its headers are in,
    ``max_body_bytes`` each body's size; ``cache_bytes`` bounds the BlockCache
    (0: none); ``token`` is sent as ``Authorization: Bearer``. ValueError for a
    bad option.
    """

    def __init__(
        self,
        *,
        token: str | None,
        timeout: float,
        max_body_bytes: int,
        cache_bytes: int,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        check_token(token)
        self.timeout = check_timeout(timeout)
        self.headers = {"Accept": "application/json"}
        if token is not None:
            self.headers["Authorization"] = f"Bearer {token}"
        self._token = token
        self._max_body_bytes = check_bytes("max_body_bytes", max_body_bytes)
        cache_bytes = check_bytes("cache_bytes", cache_bytes)
        self._cache = BlockCache(cache_bytes) if cache_bytes else None
        self._images = latin1_images if self._cache is None else self._cache.images
        self._clock = clock

    def __repr__(self) -> str:
        return "HostCore()"

    def call(self, name: str, args: str) -> Call:
        """The tool call ``name`` with the JSON arguments text ``args``, to be driven.

        TypeError when either is not a str. Surrogates in both become U+FFFD first.
        """
        if not isinstance(name, str):
            raise TypeError(f"name must be a str, not {type(name).__name__}")
        if not isinstance(args, str):
            raise TypeError(f"args must be a str, not {type(args).__name__}")
        return Call(self._steps(replace_surrogates(name), replace_surrogates(args)))

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

    def _steps(self, name: str, args: str) -> Steps:
        if name not in TOOLS:
            return (yield from self._exec(name, args))
        step = start_tool(name, args)
        if isinstance(step, str):
            return step
        try:
            return (yield from self._read(step))
        except GoUnavailableError as read_error:
            try:
                return (yield from self._exec(name, args))
            except RecallError as exec_error:
                raise FallbackFailedError(read_error, exec_error) from exec_error

    def _read(self, step: BlockRead | BlocksRead) -> Steps:
        """The tool's archive read, and its output over it."""
        if isinstance(step, BlockRead):
            request = block_request(step.seq)
            return step.finish(parse_block(request.what, (yield request), step.seq))
        request = blocks_request()
        blocks = parse_blocks(request.what, (yield request), self._cache)
        return step.finish(blocks, self._images)

    def _exec(self, name: str, args: str) -> Steps:
        """Go's own output for the call, from /tool/exec."""
        request = exec_request(name, args)
        return parse_exec(request.what, (yield request), name)


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


class Call:
    """One call, driven by a host: while ``request`` is not None, send it and give back
    its ``answer`` or its failure (``fail``); then ``output`` is the call's output.

    Errors of the call itself (FallbackFailedError, UnknownToolError, ...) are
    raised by ``answer`` and ``fail``.
    """

    __slots__ = ("_steps", "output", "request")

    def __init__(self, steps: Steps) -> None:
        self._steps = steps
        self.output = ""
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
