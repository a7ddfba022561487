"""The exceptions of the recall package (the tree is drawn in ``recall.__doc__``).

Messages say what failed (the operation, the URL path, the status or the kind of
exception); they never carry a token or a response body.
"""

from __future__ import annotations

__all__ = ["FallbackFailedError", "GoUnavailableError", "RecallError", "UnknownToolError"]


class RecallError(Exception):
    """Base of every error the recall package raises."""


class UnknownToolError(RecallError):
    """No such tool: Go's /tool/exec answered 404 for this name (or run_tool was given it)."""

    def __init__(self, name: str) -> None:
        super().__init__(f"unknown tool {name!r}")
        self.name = name

    def __reduce__(self) -> tuple[type[UnknownToolError], tuple[str]]:
        return (type(self), (self.name,))


class GoUnavailableError(RecallError):
    """The Go did not answer a request as the contract says.

    ``what`` names the request (e.g. ``"GET /internal/v1/recall/blocks"``) and
    ``why`` the failure (a transport error's kind, a status, a malformed body).
    """

    def __init__(self, what: str, why: str) -> None:
        super().__init__(f"{what}: {why}")
        self.what = what
        self.why = why

    def __reduce__(self) -> tuple[type[GoUnavailableError], tuple[object, ...]]:
        return (type(self), (self.what, self.why))


class FallbackFailedError(GoUnavailableError):
    """An archive read failed, and the fallback on /tool/exec failed too."""

    def __init__(self, read_error: GoUnavailableError, exec_error: RecallError) -> None:
        super().__init__(
            f"archive read failed ({read_error}), then the fallback failed",
            str(exec_error),
        )
        self.read_error = read_error
        self.exec_error = exec_error

    def __reduce__(self) -> tuple[type[GoUnavailableError], tuple[object, ...]]:
        return (type(self), (self.read_error, self.exec_error))
