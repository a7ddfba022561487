"""Go's strings.ToLower and strings.TrimSpace, and unicode.IsSpace, over Go's tables."""

from __future__ import annotations

from functools import cache

from recall._go._tables import LOWER, SPACE

__all__ = ["is_space", "to_lower", "to_lower_latin1", "trim_space"]

_SPACE_CHARS: str = "".join(chr(c) for c in sorted(SPACE))
_SPACE_SET: frozenset[str] = frozenset(_SPACE_CHARS)
_CAPITAL_SIGMA = 0x03A3  # Python lowers it by context (final sigma); Go never does.


@cache
def _python_differs() -> tuple[tuple[str, str], ...] | None:
    """Return the runes whose str.lower() differs from Go's, with Go's lower of each.

    Python's str.lower() maps rune by rune with a context-free full mapping,
    except U+03A3 (final sigma), so once these runes are replaced by Go's lower
    of each, str.lower() gives what Go's strings.ToLower gives. None when that
    replacement would not be stable (a Go lower that Python would change again).
    """
    differs: dict[str, str] = {chr(_CAPITAL_SIGMA): chr(LOWER[_CAPITAL_SIGMA])}
    step = 512
    for start in range(0, 0x110000, step):
        if 0xD800 <= start < 0xE000:
            continue  # surrogates: neither side changes them
        chunk = "".join(map(chr, range(start, start + step)))
        if chunk.lower() == chunk.translate(LOWER):
            continue  # U+03A3 is in differs already, whatever its chunk gives
        for ch in chunk:
            go = chr(LOWER.get(ord(ch), ord(ch)))
            if ch.lower() != go:
                differs[ch] = go
    for go in differs.values():
        if go in differs or go.lower() != go or LOWER.get(ord(go), ord(go)) != ord(go):
            return None
    return tuple(sorted(differs.items()))


def to_lower(s: str) -> str:
    """Return strings.ToLower(s): each rune mapped by Go's unicode.ToLower."""
    if s.isascii():
        return s.lower()
    differs = _python_differs()
    if differs is None:
        return s.translate(LOWER)
    for ch, go in differs:
        if ch in s:  # instant when ch is wider than every rune of s
            s = s.replace(ch, go)
    return s.lower()


# to_lower_latin1: strings.ToLower rune by rune, as one Latin-1 byte per rune.
# Within U+0000..U+00FF Go's lower is a byte table; a wider rune becomes "?" as
# str.encode("latin-1", "replace") makes it (in C), except the few wider runes
# whose Go lower is in U+0000..U+00FF (İ, Ÿ, ẞ, K, Å), replaced by it first.
_LATIN1_LOWER: bytes = bytes(
    LOWER.get(c, c) if LOWER.get(c, c) <= 0xFF else ord("?") for c in range(256)
)
_WIDE_TO_LATIN1: tuple[tuple[str, str], ...] = tuple(
    sorted((chr(c), chr(lower)) for c, lower in LOWER.items() if c > 0xFF and lower <= 0xFF)
)


def to_lower_latin1(s: str) -> bytes:
    """Return strings.ToLower(s) with each rune as one byte: its Latin-1 code when
    at most U+00FF, else ``b"?"``.

    So for every t of runes in U+0000..U+00FF other than "?",
    ``t.encode("latin-1") in to_lower_latin1(s)`` is ``t in to_lower(s)``: each rune
    of s gives exactly one byte, equal to t's rune exactly where its Go lower is
    that rune. It is several times faster than to_lower for the search's terms.
    """
    if not s.isascii():
        for ch, lower in _WIDE_TO_LATIN1:
            if ch in s:  # instant when ch is wider than every rune of s
                s = s.replace(ch, lower)
    return s.encode("latin-1", "replace").translate(_LATIN1_LOWER)


def to_lower_translate(s: str) -> str:
    """Return strings.ToLower(s) by str.translate over LOWER (slow reference path)."""
    return s.translate(LOWER)


def is_space(c: str) -> bool:
    """Return unicode.IsSpace for the single character c."""
    return c in _SPACE_SET


def trim_space(s: str) -> str:
    """Return strings.TrimSpace(s): Go's unicode.IsSpace runes cut from both ends."""
    return s.strip(_SPACE_CHARS)
