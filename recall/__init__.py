"""The Python port of the Go recall tools: ``recall`` and ``recall_search``.

``GoTurnHost.exec_tool`` (and ``await AsyncGoTurnHost.exec_tool``) runs both tools here,
reading the archive from the Go backend over HTTP, and falls back on the Go's own
``/internal/v1/tool/exec`` when a read fails; another tool name goes to the Go.
``run_tool`` runs them over any ``Archive``, such as a ``MemoryArchive``. The contract
is ``docs/contract.md``. Both hosts take the same options and give the same outputs,
reads, fallbacks and errors. Every error they raise at run time is a ``RecallError``::

    RecallError                 base
    ├── UnknownToolError        Go's /tool/exec answered 404 for this tool name (.name, .go)
    ├── HostClosedError         the host is closed (after close(), aclose(), its with)
    ├── EventLoopError          an AsyncGoTurnHost used on another loop than its first
    │                           call's: a host belongs to one loop (one asyncio.run)
    └── GoUnavailableError      the Go did not answer a request: transport error, time-out,
        │                       unexpected status, a body that is not the contract's JSON
        │                       (.what: the request, .go: the base URL, no credentials,
        │                       .why: the failure)
        └── FallbackFailedError a local tool's archive read failed (.what, .go, .why: the
                                read's, as .read_error) and the fallback on /tool/exec
                                failed too (.exec_error)

With ``shadow=Shadow(rate=...)``, a host also compares the port with Go's /tool/exec on
live traffic, off the caller's path; each ``Divergence`` found is logged (``recall.shadow``,
redacted), passed to ``on_divergence``, and writes itself as one line of JSON.

Go's outputs depend on its Unicode tables: tell a host the ``unicode.Version`` of its Go
with ``unicode_version=`` (default ``DEFAULT_UNICODE_VERSION``, ``"17.0.0"``: Go 1.27;
``"15.0.0"``: Go 1.21 to 1.26); ``unicode_versions()`` lists those the port has.

Misuse is not a RecallError: ``TypeError`` for an argument or option of the wrong type,
``ValueError`` for a wrong value.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from recall._errors import (
    EventLoopError,
    FallbackFailedError,
    GoUnavailableError,
    HostClosedError,
    RecallError,
    UnknownToolError,
)
from recall._go import DEFAULT_UNICODE_VERSION, unicode_versions
from recall._shadow import Divergence, Shadow
from recall._sync import GoTurnHost
from recall._tools import Archive, Block, MemoryArchive, run_tool

if TYPE_CHECKING:
    from recall._async import AsyncGoTurnHost

__all__ = [
    "DEFAULT_UNICODE_VERSION",
    "Archive",
    "AsyncGoTurnHost",
    "Block",
    "Divergence",
    "EventLoopError",
    "FallbackFailedError",
    "GoTurnHost",
    "GoUnavailableError",
    "HostClosedError",
    "MemoryArchive",
    "RecallError",
    "Shadow",
    "UnknownToolError",
    "run_tool",
    "unicode_versions",
]


def __getattr__(name: str) -> object:
    """``AsyncGoTurnHost`` on first use: a threads-only user never imports asyncio."""
    if name == "AsyncGoTurnHost":
        from recall._async import AsyncGoTurnHost

        globals()[name] = AsyncGoTurnHost
        return AsyncGoTurnHost
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
