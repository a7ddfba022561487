"""``parity probe --go-url URL``: the Unicode version of a running Go, from its tool
endpoint alone (so against production): two calls that read no archive hold code points
each two of the port's Unicode versions quote differently (``%q``); the version is the
one whose tables give both answers byte for byte."""

from __future__ import annotations

import argparse
import contextlib
import functools
import json
import operator
import re
from itertools import combinations

from parity import goclient
from parity.errors import ParityError
from parity.goclient import GoClient, GoConnection, add_go_options, connection_from_options
from recall import MemoryArchive, run_tool, unicode_versions
from recall._go import tables

_MARKERS = "\U0001fae9\u1c89"  # an emoji of Unicode 16; a Cyrillic capital of 16


class ProbeError(ParityError):
    """Go's answers to the probe fit the tables of no known Unicode version."""


@functools.cache
def _printable(unicode_version: str) -> int:
    """strconv.IsPrint over every code point in those tables, as an int: byte c (bits
    8c to 8c+7) is 1 for a printable rune c, else 0."""
    table = tables.load(unicode_version)
    flags = bytearray(0x110000)
    for lo, hi in zip(table.PRINT_LO, table.PRINT_HI, strict=True):
        flags[lo : hi + 1] = b"\x01" * (hi + 1 - lo)
    return int.from_bytes(flags, "little")


@functools.cache
def version_code_point_ranges() -> tuple[tuple[int, int], ...]:
    """The ranges (inclusive, ascending) of code points that two of the port's Unicode
    versions quote differently (``strconv.IsPrint`` differs)."""
    printable = [_printable(v) for v in unicode_versions()]
    differ = functools.reduce(operator.or_, (p ^ printable[0] for p in printable), 0)
    flags = differ.to_bytes(0x110000, "little")
    return tuple((m.start(), m.end() - 1) for m in re.finditer(b"[^\x00]+", flags))


@functools.cache
def _probe_text() -> str:
    """The markers, and for each two versions the first code point they quote apart."""
    differs = (_printable(a) ^ _printable(b) for a, b in combinations(unicode_versions(), 2))
    picks = "".join(chr(((d & -d).bit_length() - 1) // 8) for d in differs)  # a byte a rune
    return "".join(dict.fromkeys(_MARKERS + picks))


def probe_calls() -> list[tuple[str, str]]:
    """The probe's calls: ``(tool, args)``, neither reading the archive."""
    text = _probe_text()
    return [
        ("recall", json.dumps({"id": "?" + text}, ensure_ascii=True)),
        ("recall_search", json.dumps({"query": text}, ensure_ascii=True)),
    ]


def probe(go: GoConnection | GoClient) -> str:
    """The Unicode version whose tables give the Go's answers to the probe's calls
    (ProbeError when they fit none; a GoClientError when a call fails)."""
    calls = probe_calls()
    with contextlib.nullcontext(go) if isinstance(go, GoClient) else GoClient(go) as client:
        answers = [client.exec_tool(tool, args) for tool, args in calls]
    empty = MemoryArchive()
    fits = [
        version
        for version in unicode_versions()
        if answers == [run_tool(t, a, empty, unicode_version=version) for t, a in calls]
    ]
    if len(fits) != 1:
        shown = "; ".join(repr(a[:120]) for a in answers)
        raise ProbeError(
            f"the Go at {client.connection.url} answered the probe as no known table "
            f"({', '.join(unicode_versions())}) does: {shown}"
        )
    return fits[0]


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> argparse.ArgumentParser:
    pp = sub.add_parser(
        "probe",
        help="name a running Go's Unicode version from its tool endpoint",
        description="Name the Unicode version (Go's unicode.Version, the hosts' "
        "unicode_version=) of a running Go from two side-effect-free calls to its "
        "/internal/v1/tool/exec, one line. Exit 2 when its answers fit no known table.",
    )
    add_go_options(pp.add_argument, url_help=f"the Go (required; token in ${goclient.TOKEN_ENV})")
    return pp


def run(args: argparse.Namespace) -> int:
    """``parity probe``: print the Go's Unicode version (ProbeError: exit 2)."""
    if (go := connection_from_options(args)) is None:
        raise ParityError("parity probe needs --go-url URL")
    print(probe(go))
    return 0
