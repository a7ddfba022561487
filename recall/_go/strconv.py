"""Go's strconv.Quote (as fmt's %q) and the int(float64) conversion of Go on amd64.

``quote`` and ``is_print`` follow the default tables (``recall._go.tables``);
``quote_for`` gives the quote of another Unicode version's.
"""

from __future__ import annotations

import functools
import math
import re
from bisect import bisect_right
from collections.abc import Callable, Sequence

from recall._go import tables

__all__ = ["float64_to_int", "is_print", "quote", "quote_for"]

_MIN_INT64 = -(1 << 63)
_TWO_63 = float(1 << 63)

# Runs of runes that are not printable ASCII, or are the quote or the backslash: escaped
# rune by rune (every other rune is copied as it is).
_OTHERS = re.compile(r"[^ !#-\[\]-~]+")

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


def _quoting(
    print_lo: Sequence[int], print_hi: Sequence[int]
) -> tuple[Callable[[str], str], Callable[[int], bool]]:
    """strconv.Quote and strconv.IsPrint over the printable ranges of one table."""

    def is_print(r: int) -> bool:
        """Return strconv.IsPrint(r) from Go's table."""
        i = bisect_right(print_lo, r) - 1
        return i >= 0 and r <= print_hi[i]

    def escape(ch: str) -> str:
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
        return '"' + _OTHERS.sub(escaped, s) + '"'

    def escaped(run: re.Match[str]) -> str:
        return "".join([escape(ch) for ch in run.group()])

    return quote, is_print


quote, is_print = _quoting(tables.DEFAULT.PRINT_LO, tables.DEFAULT.PRINT_HI)


@functools.cache
def _quote_of(unicode_version: str) -> Callable[[str], str]:
    table = tables.load(unicode_version)
    return quote if table is tables.DEFAULT else _quoting(table.PRINT_LO, table.PRINT_HI)[0]


def quote_for(unicode_version: str) -> Callable[[str], str]:
    """strconv.Quote as the Go of ``unicode_version`` (its ``unicode.Version``) quotes.

    TypeError when it is not a str, ValueError when there are no tables of it.
    """
    if not isinstance(unicode_version, str):
        tables.load(unicode_version)  # its TypeError
    return _quote_of(unicode_version)


def float64_to_int(f: float) -> int:
    """Return Go's int(f) on amd64: truncated toward zero; MinInt64 for NaN or out of range."""
    return _MIN_INT64 if math.isnan(f) or not -_TWO_63 <= f < _TWO_63 else int(f)
