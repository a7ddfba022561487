"""Go's json.Unmarshal of a tool call's arguments into map[string]any.

One iterative scanner (no recursion, linear time) validates the whole document
as Go's checkValid does (grammar, whitespace, nesting limit) and builds only the
top-level object; every number anywhere is parsed as a float64 and one out of
range is an error, as in Go's decoder.
"""

from __future__ import annotations

import math
import re
from typing import Final

__all__ = ["ARRAY", "MAX_NESTING_DEPTH", "OBJECT", "Opaque", "unmarshal_args"]

MAX_NESTING_DEPTH: Final = 10000  # encoding/json scanner.go maxNestingDepth


class Opaque:
    """An array or object value: the tools only read top-level strings and numbers."""

    __slots__ = ("kind",)

    def __init__(self, kind: str) -> None:
        self.kind = kind

    def __repr__(self) -> str:
        return f"<go {self.kind}>"


ARRAY: Final = Opaque("array")
OBJECT: Final = Opaque("object")


class _Invalid(Exception):
    """The document is not one that Go's json.Unmarshal accepts into the map."""


_NOT_WS = re.compile(r"[^ \t\n\r]")
_OPENS = re.compile(r"\[(?:[ \t\n\r]*\[)*")  # a run of arrays opened
_STRING = re.compile(
    r'"([^"\\\x00-\x1f]*+(?:\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4})[^"\\\x00-\x1f]*+)*+)"'
)
_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*+)(?:\.[0-9]++)?(?:[eE][+-]?[0-9]++)?")
_ESCAPE = re.compile(
    r"\\u([dD][89abAB][0-9a-fA-F]{2})\\u([dD][c-fC-F][0-9a-fA-F]{2})"
    r"|\\u([0-9a-fA-F]{4})"
    r"|\\(.)",
    re.DOTALL,
)
_SIMPLE: Final = {
    '"': '"',
    "\\": "\\",
    "/": "/",
    "b": "\b",
    "f": "\f",
    "n": "\n",
    "r": "\r",
    "t": "\t",
}
_LITERALS: Final[dict[str, tuple[str, object]]] = {
    "t": ("true", True),
    "f": ("false", False),
    "n": ("null", None),
}


def _ws(text: str, pos: int) -> int:
    """Return the position of the first non-space (Go's JSON space) at or after pos."""
    m = _NOT_WS.search(text, pos)
    return len(text) if m is None else m.start()


def _unescape(m: re.Match[str]) -> str:
    hi, lo, single, simple = m.groups()
    if hi is not None:
        return chr(0x10000 + ((int(hi, 16) - 0xD800) << 10) + (int(lo, 16) - 0xDC00))
    if single is not None:
        r = int(single, 16)
        return "\ufffd" if 0xD800 <= r <= 0xDFFF else chr(r)
    return _SIMPLE[simple]


def _string(text: str, pos: int) -> tuple[str, int]:
    """Return the decoded string starting at pos (a '"') and the position after it."""
    m = _STRING.match(text, pos)
    if m is None:
        raise _Invalid
    body = m.group(1)
    if "\\" in body:
        body = _ESCAPE.sub(_unescape, body)
    return body, m.end()


def _number(text: str, pos: int) -> tuple[float, int]:
    """Return the float64 of the number at pos (strconv.ParseFloat) and the end."""
    m = _NUMBER.match(text, pos)
    if m is None:
        raise _Invalid
    f = float(m.group())
    if math.isinf(f):
        raise _Invalid  # strconv.ParseFloat: ErrRange
    return f, m.end()


def _key(text: str, pos: int) -> tuple[str, int]:
    """Read a member name and its colon at pos; return it and where its value starts."""
    if not text.startswith('"', pos):
        raise _Invalid
    key, pos = _string(text, pos)
    pos = _ws(text, pos)
    if not text.startswith(":", pos):
        raise _Invalid
    return key, _ws(text, pos + 1)


def _skip_value(text: str, pos: int, depth: int) -> int:
    """Validate the value at pos (no leading space), nested in depth containers; return its end."""
    closers: list[str] = []
    while True:
        # A value starts at pos.
        c = text[pos : pos + 1]
        if c in ("{", "["):
            # Arrays opened one after the other (deeply nested args) are taken at once.
            opened = _OPENS.match(text, pos) if c == "[" else None
            n = 1 if opened is None else opened.group().count("[")
            if depth + len(closers) + n > MAX_NESTING_DEPTH:
                raise _Invalid
            pos = _ws(text, pos + 1 if opened is None else opened.end())
            close = "}" if c == "{" else "]"
            closers += close * n
            if text.startswith(close, pos):
                closers.pop()
                pos += 1
            else:
                if close == "}":
                    _, pos = _key(text, pos)
                continue
        elif c == '"':
            m = _STRING.match(text, pos)
            if m is None:
                raise _Invalid
            pos = m.end()
        elif c == "-" or "0" <= c <= "9":
            _, pos = _number(text, pos)
        elif c in _LITERALS:
            word = _LITERALS[c][0]
            if not text.startswith(word, pos):
                raise _Invalid
            pos += len(word)
        else:
            raise _Invalid
        # A value ended at pos: close containers until one goes on with a comma.
        while True:
            if not closers:
                return pos
            pos = _ws(text, pos)
            c = text[pos : pos + 1]
            if c == ",":
                pos = _ws(text, pos + 1)
                if closers[-1] == "}":
                    _, pos = _key(text, pos)
                break
            if c != closers[-1]:
                raise _Invalid
            closers.pop()
            pos += 1


def _member_value(text: str, pos: int) -> tuple[object, int]:
    """Decode a member value of the top-level object at pos; return it and its end."""
    c = text[pos : pos + 1]
    if c == '"':
        return _string(text, pos)
    if c == "-" or "0" <= c <= "9":
        return _number(text, pos)
    if c in ("{", "["):
        return (OBJECT if c == "{" else ARRAY), _skip_value(text, pos, 1)
    if c in _LITERALS:
        word, value = _LITERALS[c]
        if not text.startswith(word, pos):
            raise _Invalid
        return value, pos + len(word)
    raise _Invalid


def _object(text: str) -> dict[str, object]:
    """Decode text, a JSON object after optional space, into its members."""
    pos = _ws(text, 0)
    if not text.startswith("{", pos):
        raise _Invalid
    members: dict[str, object] = {}
    pos = _ws(text, pos + 1)
    if text.startswith("}", pos):
        pos += 1
    else:
        while True:
            key, pos = _key(text, pos)
            members[key], pos = _member_value(text, pos)
            pos = _ws(text, pos)
            c = text[pos : pos + 1]
            if c == ",":
                pos = _ws(text, pos + 1)
                continue
            if c != "}":
                raise _Invalid
            pos += 1
            break
    if _ws(text, pos) != len(text):
        raise _Invalid
    return members


def unmarshal_args(text: str) -> dict[str, object]:
    """Return m after json.Unmarshal([]byte(text), &m) with m map[string]any, for a
    ``text`` without surrogates (a Go string holds U+FFFD instead).

    A JSON object gives its members (a repeated key keeps its last value); null,
    any other value and any error give {}. Values are str, float, bool, None, or
    ARRAY / OBJECT for nested arrays and objects.
    """
    try:
        return _object(text)
    except _Invalid:
        return {}
