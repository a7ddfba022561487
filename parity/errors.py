"""The parity harness's exceptions.

ParityError                 base of everything the harness raises
└── GoReferenceError        the Go reference could not be built, started or driven
"""

from __future__ import annotations

__all__ = ["GoReferenceError", "ParityError"]


class ParityError(Exception):
    """Base of the harness's errors."""


class GoReferenceError(ParityError):
    """The Go reference instance could not be built, started or driven."""
