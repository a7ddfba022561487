"""Go's strconv.Quote (as fmt's %q) and the int(float64) conversion of Go on amd64."""

from __future__ import annotations

import math
import re
from bisect import bisect_right

from recall._go._tables import PRINT_HI, PRINT_LO

__all__ = ["float64_to_int", "is_print", "quote"]

_MIN_INT64 = -(1 << 63)
_TWO_63 = float(1 << 63)

# Printable ASCII other than the quote and the backslash: copied as they are.
_PLAIN_ASCII = re.compile(r"[ !#-\[\]-~]*")

_ESCAPES: dict[str, str] = {
    '"': '\\"',
    "\\": "\\\\",
    "\a": "\\a",
    "\b": "\\b",
    "\f": "\\f",
    "\n": "\\n",
    "\r": "\\r",
    "\t": "\\t",
    "\v": "\\v",
}


def is_print(r: int) -> bool:
    """Return strconv.IsPrint(r) from Go's table."""
    i = bisect_right(PRINT_LO, r) - 1
    return i >= 0 and r <= PRINT_HI[i]


def _escape(ch: str) -> str:
    """Return one rune as strconv.Quote writes it."""
    esc = _ESCAPES.get(ch)
    if esc is not None:
        return esc
    r = ord(ch)
    if 0xD800 <= r <= 0xDFFF:
        # A Go string cannot hold a surrogate; it becomes U+FFFD (printable).
        return "\ufffd"
    if is_print(r):
        return ch
    if r < 0x20 or r == 0x7F:
        return f"\\x{r:02x}"
    if r < 0x10000:
        return f"\\u{r:04x}"
    return f"\\U{r:08x}"


def quote(s: str) -> str:
    """Return strconv.Quote(s): a double-quoted Go string literal, Go's escapes."""
    if _PLAIN_ASCII.fullmatch(s):
        return f'"{s}"'
    return '"' + "".join([_escape(ch) for ch in s]) + '"'


def float64_to_int(f: float) -> int:
    """Return Go's int(f) on amd64: truncated toward zero; MinInt64 for NaN or out of range."""
    if math.isnan(f) or not -_TWO_63 <= f < _TWO_63:
        return _MIN_INT64
    return int(f)
