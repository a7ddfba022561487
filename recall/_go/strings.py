"""Go's strings.ToLower and strings.TrimSpace, and unicode.IsSpace, over Go's tables.

The default tables' (``recall._go.tables``). Between the Unicode versions of the
Go releases the port matches, only the lowering differs: on runes beyond U+00FF
whose lower is beyond U+00FF too, so that ``to_lower_latin1`` and the search
terms are the same for every version (tests/recall/test_go_tables.py).

Everything here uses the generated tables as they are: no table is derived at
import or at first use, and no result depends on Python's own Unicode data.
"""

from __future__ import annotations

from recall._go.tables import DEFAULT

LOWER, LATIN1_LOWER, SPACE = DEFAULT.LOWER, DEFAULT.LATIN1_LOWER, DEFAULT.SPACE
WIDE_TO_LATIN1 = DEFAULT.WIDE_TO_LATIN1

__all__ = ["is_space", "to_latin1", "to_lower", "to_lower_latin1", "trim_space"]


def to_lower(s: str) -> str:
    """Return strings.ToLower(s): each rune mapped by Go's unicode.ToLower.

    Over Go's table alone (str.translate), never Python's str.lower beyond ASCII:
    Python's lower follows Python's Unicode version, expands İ to two runes and
    gives Σ a final form by context; Go's does none of that.
    """
    if s.isascii():
        return s.lower()  # A-Z to a-z, as Go does
    return s.translate(LOWER)


def to_latin1(s: str) -> bytes:
    """Return s with each rune as one byte, as ``to_lower_latin1`` has it before the
    Latin-1 bytes are lowered (by ``LATIN1_LOWER``): the few wider runes whose Go lower
    is Latin-1 (İ, Ÿ, ẞ, K, Å) are replaced by it, every other wider rune becomes "?"
    as ``str.encode("latin-1", "replace")`` makes it (in C)."""
    if not s.isascii():
        for ch, lower in WIDE_TO_LATIN1:
            if ch in s:  # instant when ch is wider than every rune of s
                s = s.replace(ch, lower)
    return s.encode("latin-1", "replace")


def to_lower_latin1(s: str) -> bytes:
    """Return strings.ToLower(s) with each rune as one byte: its Latin-1 code when
    at most U+00FF, else ``b"?"``.

    So for every t of runes in U+0000..U+00FF other than "?",
    ``t.encode("latin-1") in to_lower_latin1(s)`` is ``t in to_lower(s)``: each rune
    of s gives exactly one byte (``to_latin1``), equal to t's rune exactly where its
    Go lower is that rune. It is several times faster than to_lower for the search's
    terms.
    """
    return to_latin1(s).translate(LATIN1_LOWER)


def is_space(c: str) -> bool:
    """Return unicode.IsSpace for the single character c."""
    return len(c) == 1 and c in SPACE


def trim_space(s: str) -> str:
    """Return strings.TrimSpace(s): Go's unicode.IsSpace runes cut from both ends."""
    return s.strip(SPACE)
