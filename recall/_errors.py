"""The exceptions of the recall package (the tree is drawn in ``recall.__doc__``).

Messages say what failed (the operation, the request's URL, the status or the kind of
exception); they never carry a token, the base URL's credentials or a response body.
"""

from __future__ import annotations


class RecallError(Exception):
    """Base of every error the recall package raises."""


class _OfGo(RecallError):
    """An error that says which Go answered: ``go``, the host's base URL without
    credentials (e.g. ``"https://go.internal:8443/prefix"``; empty outside a host)."""

    go: str

    def at(self, go: str) -> None:
        """Say which Go: ``go``, unless one is said already."""
        if not self.go:
            self.go = go


class UnknownToolError(_OfGo):
    """No such tool: Go's /tool/exec answered 404 for this name (or run_tool was given it)."""

    def __init__(self, name: str, *, go: str = "") -> None:
        super().__init__(name)
        self.name, self.go = name, go

    def __str__(self) -> str:
        return f"unknown tool {self.name!r}" + (f" (the Go at {self.go})" if self.go else "")


class HostClosedError(RecallError):
    """The host is closed (``close()``, ``aclose()``, its ``with``): it sends no requests."""


class EventLoopError(RecallError):
    """An ``AsyncGoTurnHost`` was used on another event loop than its first call's."""


class GoUnavailableError(_OfGo):
    """The Go did not answer a request as the contract says: ``what`` names the request
    (``"GET /internal/v1/recall/blocks"``), ``go`` the Go, ``why`` the failure; the message
    is ``"GET https://go.internal:8443/prefix/internal/v1/recall/blocks: status 502"``."""

    def __init__(self, what: str, why: str, *, go: str = "") -> None:
        super().__init__(what, why)
        self.what, self.why, self.go = what, why, go

    def __str__(self) -> str:
        method, _, path = self.what.partition(" ")
        return f"{method} {self.go}{path}: {self.why}"


class FallbackFailedError(GoUnavailableError):
    """An archive read failed, and the fallback on /tool/exec failed too: ``what``, ``why``
    and ``go`` are the failed read's (``read_error``'s), ``exec_error`` the fallback's."""

    def __init__(self, read_error: GoUnavailableError, exec_error: RecallError) -> None:
        super().__init__(read_error.what, read_error.why, go=read_error.go)
        self.args = (read_error, exec_error)  # as pickle and copy rebuild it
        self.read_error, self.exec_error = read_error, exec_error

    def __str__(self) -> str:
        return f"{self.read_error}; then the fallback failed: {self.exec_error}"

    def at(self, go: str) -> None:
        super().at(go)
        for error in (self.read_error, self.exec_error):
            if isinstance(error, _OfGo):
                error.at(go)
