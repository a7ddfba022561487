"""Go's strings.ToLower and strings.TrimSpace, and unicode.IsSpace, over Go's tables."""

from __future__ import annotations

from functools import cache

from recall._go._tables import LOWER, SPACE

__all__ = ["is_space", "to_lower", "trim_space"]

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


def to_lower_translate(s: str) -> str:
    """Return strings.ToLower(s) by str.translate over LOWER (slow reference path)."""
    return s.translate(LOWER)


def is_space(c: str) -> bool:
    """Return unicode.IsSpace for the single character c."""
    return c in _SPACE_SET


def trim_space(s: str) -> str:
    """Return strings.TrimSpace(s): Go's unicode.IsSpace runes cut from both ends."""
    return s.strip(_SPACE_CHARS)
