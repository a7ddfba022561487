"""Go semantics in Python: the pieces of Go's standard library the recall tools use."""

from __future__ import annotations

from recall._go._tables import GO_VERSION, UNICODE_VERSION
from recall._go.json import unmarshal_args
from recall._go.strconv import float64_to_int, quote
from recall._go.strings import is_space, to_lower, trim_space

__all__ = [
    "GO_VERSION",
    "UNICODE_VERSION",
    "float64_to_int",
    "is_space",
    "quote",
    "to_lower",
    "trim_space",
    "unmarshal_args",
]
