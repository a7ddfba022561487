"""The Python port of the Go recall tools: ``recall`` and ``recall_search``.

``GoTurnHost.exec_tool`` runs both tools here, reading the archive from the Go
backend over HTTP, and falls back on the Go's own ``/internal/v1/tool/exec``
when a read fails; ``run_tool`` runs them over any ``Archive``, such as a
``MemoryArchive``. The contract is ``docs/contract.md``.

Every error this package raises at run time is a ``RecallError``::

    RecallError                 base
    ├── UnknownToolError        Go's /tool/exec answered 404 for this tool name (.name)
    └── GoUnavailableError      the Go did not answer a request: transport error, time-out,
        │                       unexpected status, a body that is not the contract's JSON
        └── FallbackFailedError a local tool's archive read failed and the fallback on
                                /tool/exec failed too (.read_error, .exec_error)
"""

from __future__ import annotations

from recall._async import AsyncGoTurnHost
from recall._errors import FallbackFailedError, GoUnavailableError, RecallError, UnknownToolError
from recall._sync import GoTurnHost
from recall._tools import Archive, Block, MemoryArchive, run_tool

__all__ = [
    "Archive",
    "AsyncGoTurnHost",
    "Block",
    "FallbackFailedError",
    "GoTurnHost",
    "GoUnavailableError",
    "MemoryArchive",
    "RecallError",
    "UnknownToolError",
    "run_tool",
]
