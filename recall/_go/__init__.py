"""Go semantics in Python: the pieces of Go's standard library the recall tools use."""

from __future__ import annotations

from recall._go.json import unmarshal_args
from recall._go.strconv import float64_to_int, quote, quote_for
from recall._go.strings import is_space, to_lower, trim_space
from recall._go.tables import DEFAULT_UNICODE_VERSION, unicode_versions

__all__ = [
    "DEFAULT_UNICODE_VERSION",
    "float64_to_int",
    "is_space",
    "quote",
    "quote_for",
    "to_lower",
    "trim_space",
    "unicode_versions",
    "unmarshal_args",
]
