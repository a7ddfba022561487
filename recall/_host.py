"""GoTurnHost: the recall tools run here over the Go's archive, with Go as the fallback."""

from __future__ import annotations

from types import TracebackType

import httpx

from recall._client import (
    DEFAULT_CACHE_BYTES,
    DEFAULT_MAX_BODY_BYTES,
    ArchiveClient,
    replace_surrogates,
)
from recall._errors import FallbackFailedError, GoUnavailableError, RecallError
from recall._tools import TOOLS, run_tool

__all__ = ["GoTurnHost"]


class GoTurnHost:
    """Runs a turn's tool calls: ``recall`` and ``recall_search`` here, the rest on the Go.

    The archive is read over HTTP from the Go at ``base_url`` (one persistent
    connection pool; ``Authorization: Bearer <token>`` when a token is given).
    ``timeout`` bounds, in seconds, each of connecting, reading, writing and
    waiting for a pooled connection, and the arrival of a whole body once its
    headers are in; ``max_body_bytes`` bounds each answer's body (a larger one
    is a failed read); ``transport`` replaces httpx's (tests). ``cache_bytes``
    bounds the cache of decoded and lowered blocks kept between searches (0: none;
    see ``ArchiveClient``); /blocks is still read on every search.
    """

    def __init__(
        self,
        base_url: str,
        *,
        token: str | None = None,
        timeout: float = 5.0,
        transport: httpx.BaseTransport | None = None,
        max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
        cache_bytes: int = DEFAULT_CACHE_BYTES,
    ) -> None:
        self._client = ArchiveClient(
            base_url,
            token=token,
            timeout=timeout,
            transport=transport,
            max_body_bytes=max_body_bytes,
            cache_bytes=cache_bytes,
        )

    def __repr__(self) -> str:
        return f"GoTurnHost({self._client!r})"

    def __enter__(self) -> GoTurnHost:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        """Close the connections to the Go."""
        self._client.close()

    def exec_tool(self, name: str, args: str) -> str:
        """The output of the tool call ``name`` with the JSON arguments text ``args``.

        Surrogates in ``args`` (and ``name``) become U+FFFD first. When an archive
        read fails, the call goes to the Go's /tool/exec; FallbackFailedError when
        that fails too. UnknownToolError when the Go does not know ``name``;
        GoUnavailableError when the Go does not answer a call it runs itself.
        """
        name = replace_surrogates(name)
        args = replace_surrogates(args)
        if name not in TOOLS:
            return self._client.exec_tool(name, args)
        try:
            return run_tool(name, args, self._client)
        except GoUnavailableError as read_error:
            try:
                return self._client.exec_tool(name, args)
            except RecallError as exec_error:
                raise FallbackFailedError(read_error, exec_error) from exec_error
