"""Both hosts behind one synchronous face, so that each test of a host is written once.

``Host(kind, base_url, **options)`` is a ``GoTurnHost`` (``kind == "sync"``) or an
``AsyncGoTurnHost`` driven on an event loop of its own (``"async"``), with
``exec_tool``, ``close``, ``with`` and the host's own ``repr``. The fixtures
``host_kind`` and ``make_host`` (``conftest.py``) run a test once per kind.
"""

from __future__ import annotations

import asyncio
from typing import Any

from recall import AsyncGoTurnHost, GoTurnHost

__all__ = ["HOST_KINDS", "Host"]

HOST_KINDS = ("sync", "async")
"""The kinds of host every host test runs over."""


class Host:
    """A host of either kind, called synchronously."""

    def __init__(self, kind: str, base_url: str, **options: Any) -> None:
        if kind not in HOST_KINDS:
            raise ValueError(f"no host kind {kind!r}")
        self.kind = kind
        self.host: GoTurnHost | AsyncGoTurnHost
        self._runner: asyncio.Runner | None = None
        if kind == "sync":
            self.host = GoTurnHost(base_url, **options)
        else:
            self.host = AsyncGoTurnHost(base_url, **options)
            self._runner = asyncio.Runner()
        self._closed = False

    def exec_tool(self, name: str, args: str) -> str:
        """The host's ``exec_tool`` (awaited on the host's own loop for an async host)."""
        if isinstance(self.host, GoTurnHost):
            return self.host.exec_tool(name, args)
        assert self._runner is not None
        return self._runner.run(self.host.exec_tool(name, args))

    def warm(self) -> None:
        """The host's ``warm`` (awaited on the host's own loop for an async host)."""
        if isinstance(self.host, GoTurnHost):
            self.host.warm()
            return
        assert self._runner is not None
        self._runner.run(self.host.warm())

    def shadow_stats(self) -> dict[str, int]:
        """The host's shadow counts."""
        return self.host.shadow_stats()

    def close(self) -> None:
        """Close the host (and its loop; the shadow drained); again is nothing."""
        if self._closed:
            return
        self._closed = True
        if isinstance(self.host, GoTurnHost):
            self.host.close()
            return
        assert self._runner is not None
        try:
            self._runner.run(self.host.aclose())
        finally:
            self._runner.close()

    def __enter__(self) -> Host:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return repr(self.host)
