"""The harness's one exception tree: ``ParityError`` (the CLI prints it, exit 2), and a
subclass where a caller tells the concern apart: a journal, a corpus, the Go reference,
a Go. A parity failure (an output that differs from the golden one) is not an exception:
the replay reports it and the CLI exits 1.
"""

from __future__ import annotations

from pathlib import Path


class ParityError(Exception):
    """Base of every error the harness raises on purpose."""


class JournalError(ParityError):
    """A journal that cannot be read or written: its file, and the case and field."""

    def __init__(
        self, path: str | Path, detail: str, *, case: str | None = None, field: str | None = None
    ) -> None:
        self.path, self.case, self.field, self.detail = str(path), case, field, detail
        named = (("case", case), ("field", field))
        where = [self.path, *(f"{what} {name!r}" for what, name in named if name is not None)]
        super().__init__(f"{': '.join(where)}: {detail}")


class CorpusError(ParityError):
    """A corpus that cannot be played, or does not match the journal recorded from it."""


class GoReferenceError(ParityError):
    """The Go reference instance could not be built or started."""


class GoClientError(ParityError):
    """A request to a Go failed, or the options to reach one are unusable; ``status``:
    the HTTP status, when the Go answered another than the route's."""

    def __init__(self, message: str, *, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status
