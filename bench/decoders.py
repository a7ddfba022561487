"""Decoding a /blocks body: the port's decoder against others, for the record.

The port's read of a body (``recall._blocks.read_set``: Go's compact body item by
item, decoded and lowered, as a host's first search does it) with json's scanner
and with msgspec (``recall._fast``, when installed), against the decoding alone of
the whole body by ``json.loads`` and, when installed, ``orjson`` and ``msgspec``
(typed).
"""

from __future__ import annotations

import importlib
import json
import time
from collections.abc import Callable
from typing import Any

from recall._blocks import read_set
from recall._fast import available, decode_item_msgspec, decode_items_msgspec

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
        "port, json (decoded and lowered)": lambda body: read_set(bytearray(body)),
    }
    if available():
        found["port, msgspec (decoded and lowered)"] = lambda body: read_set(
            bytearray(body), decode=decode_item_msgspec, decode_many=decode_items_msgspec
        )
    found["json.loads (whole body, decoded only)"] = json.loads
    for name, make in (
        ("orjson (decoded only)", _orjson),
        ("msgspec typed (decoded only)", _msgspec),
    ):
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
