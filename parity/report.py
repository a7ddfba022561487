"""Mismatch reports: where two outputs first differ, and what they hold, made visible.

A report gives the case and its args, the first differing byte (offset, and
line:col where col counts bytes from 1, as Go's tools do), both outputs with
invisible characters made visible, and a unified diff of the visible forms.
"""

from __future__ import annotations

import difflib
import unicodedata

from recall._shadow import first_difference

__all__ = ["mismatch_report", "shorten", "visible"]

_NAMES = {"\t": "TAB", "\r": "CR", "\x00": "NUL", "\x1b": "ESC", "\x7f": "DEL"}
_MARKERS = frozenset("⟨⟩⏎␠")
_INVISIBLE = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp", "Zs"})


def _mark(ch: str) -> str:
    if ch in _NAMES:
        return f"⟨{_NAMES[ch]}⟩"
    return f"⟨U+{ord(ch):04X}⟩"


def visible(text: str) -> str:
    """``text`` with every invisible or ambiguous character spelled out.

    Line ends show as ``⏎`` (then a real newline), spaces ending a line as ``␠``,
    controls, format characters and unusual spaces as ``⟨U+XXXX⟩`` (``⟨TAB⟩``,
    ``⟨CR⟩``, ``⟨NUL⟩``); the marker characters themselves are escaped the same way.
    """
    lines = text.split("\n")
    out: list[str] = []
    for i, line in enumerate(lines):
        body = line.rstrip(" ")
        trailing = len(line) - len(body)
        parts = [
            _mark(ch)
            if ch in _MARKERS or (ch != " " and unicodedata.category(ch) in _INVISIBLE)
            else ch
            for ch in body
        ]
        out.append("".join(parts) + "␠" * trailing + ("⏎" if i < len(lines) - 1 else ""))
    return "\n".join(out)


def shorten(text: str, limit: int = 400) -> str:
    """``text`` cut to ``limit`` characters, saying how many were left out."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… ({len(text) - limit} more characters)"


def _block(title: str, text: str) -> str:
    body = visible(text)
    indented = "\n".join("    " + line for line in body.split("\n"))
    return f"  {title} ({len(text.encode('utf-8'))} bytes):\n{indented}"


def mismatch_report(
    *,
    case: str,
    tool: str,
    args: str,
    expected: str,
    actual: str,
    expected_name: str = "go (golden)",
    actual_name: str = "python",
) -> str:
    """A readable account of why ``actual`` is not ``expected`` for this case."""
    d = first_difference(expected, actual)
    where = "the outputs are equal"
    if d is not None:
        where = f"first difference at byte {d.offset} (line {d.line}, col {d.column})"
    lines = [
        f"MISMATCH {case}",
        f"  tool: {tool}",
        f"  args: {visible(shorten(args))}",
        f"  {where}",
        _block(expected_name, expected),
        _block(actual_name, actual),
        "  diff:",
    ]
    lines += [
        "    " + d.rstrip("\n")
        for d in difflib.unified_diff(
            visible(expected).split("\n"),
            visible(actual).split("\n"),
            fromfile=expected_name,
            tofile=actual_name,
            lineterm="",
        )
    ]
    return "\n".join(lines)
