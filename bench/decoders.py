"""Decoding a /blocks body: the port's decoder against others, for the record.

The port (``recall._blocks.decode_blocks``, Go's compact body item by item) is
timed against ``json.loads`` of the whole body (what it replaced) and, when they
are installed (they are not dependencies of the project), against ``orjson`` and
``msgspec`` (typed), the candidates for a faster decoding.
"""

from __future__ import annotations

import importlib
import json
import time
from collections.abc import Callable
from typing import Any

from recall._blocks import decode_blocks

__all__ = ["decoders", "time_decoders"]


def _msgspec() -> Callable[[bytes], object] | None:
    try:
        msgspec: Any = importlib.import_module("msgspec")
    except ImportError:
        return None

    item = msgspec.defstruct("Item", [("seq", int), ("label", str), ("content", str)])
    doc = msgspec.defstruct("Doc", [("blocks", list[item])])  # type: ignore[valid-type]
    decoder = msgspec.json.Decoder(doc)
    return decoder.decode  # type: ignore[no-any-return]


def _orjson() -> Callable[[bytes], object] | None:
    try:
        orjson: Any = importlib.import_module("orjson")
    except ImportError:
        return None
    return orjson.loads  # type: ignore[no-any-return]


def decoders() -> dict[str, Callable[[bytes], object]]:
    """The decoders to time, by name: the port's, json.loads, and those installed."""
    found: dict[str, Callable[[bytes], object]] = {
        "port (item by item)": lambda body: decode_blocks(bytearray(body)),
        "json.loads (whole body)": json.loads,
    }
    for name, make in (("orjson", _orjson), ("msgspec (typed)", _msgspec)):
        decode = make()
        if decode is not None:
            found[name] = decode
    return found


def time_decoders(body: bytes, rounds: int) -> dict[str, float]:
    """The median seconds each decoder takes on body (the copy into a bytearray included)."""
    medians: dict[str, float] = {}
    for name, decode in decoders().items():
        samples: list[float] = []
        for _ in range(rounds):
            start = time.perf_counter()
            decoded = decode(body)
            samples.append(time.perf_counter() - start)
            del decoded
        samples.sort()
        medians[name] = samples[len(samples) // 2]
    return medians
