"""The compiled decoding of /blocks items, when msgspec is installed (``recall-port[fast]``).

``item_decoder(size)`` is the decoder the hosts use for a body of ``size`` bytes:
``decode_item`` (json's own scanner) without msgspec, or for a body too small to pay
for importing it (``MSGSPEC_FROM``, until it is imported); else ``decode_item_msgspec``,
which gives the very same
fields or the very same refusal for every item's bytes: msgspec decodes what it
takes for exactly the contract's object (``{...}`` with the three fields and no
other, a JSON int seq, two JSON strings), and every other item goes to
``decode_item``, which decides. The two decoders agree where both decode: strict
JSON, the last of repeated keys, escapes in keys, a valid surrogate pair; msgspec
refuses lone surrogate escapes (``decode_item`` makes them U+FFFD), extra fields
and whitespace around the object. ``tests/recall/test_fast.py`` holds them to
each other and to Go.

``items_decoder(size)`` is the hosts' decoder of many items at once on a first read
(``decode_items_msgspec``, a batch of items in one msgspec call, each item as
``decode_item_msgspec`` gives it), or None without msgspec.
"""

from __future__ import annotations

import importlib
import threading
from typing import Any

from recall._blocks import Fields, ItemDecoder, ItemsDecoder, NotCompact, decode_item
from recall._tools import MAX_SEQ

__all__ = [
    "MSGSPEC_FROM",
    "available",
    "decode_item_msgspec",
    "decode_items_msgspec",
    "item_decoder",
    "items_decoder",
]

MSGSPEC_FROM = 1 << 20
"""The body size (bytes) from which msgspec is imported to decode it: importing msgspec
costs about what json's scanner spends on 1 MB more than msgspec does."""

_lock = threading.Lock()
_chosen: ItemDecoder | None = None
_msgspec: Any = None
_decoder: Any = None
_list_decoder: Any = None


def available() -> bool:
    """Whether msgspec imports (and so the hosts decode with it)."""
    return _load()


def _load() -> bool:
    """Import msgspec and build the item decoder, once; whether it could."""
    global _msgspec, _decoder, _list_decoder
    if _decoder is not None:
        return True
    with _lock:
        if _decoder is None:
            try:
                msgspec = importlib.import_module("msgspec")
            except ImportError:
                return False
            item = msgspec.defstruct(
                "Item",
                [("seq", int), ("label", str), ("content", str)],
                forbid_unknown_fields=True,
            )
            _list_decoder = msgspec.json.Decoder(list[item])  # type: ignore[valid-type]
            _msgspec, _decoder = msgspec, msgspec.json.Decoder(item)
    return True


def decode_item_msgspec(raw: memoryview) -> Fields:
    """``decode_item`` for one item's bytes, msgspec decoding those it takes."""
    if not raw or raw[0] != 0x7B or raw[-1] != 0x7D or not _load():  # not "{...}"
        return decode_item(raw)
    try:
        item = _decoder.decode(raw)
    except (_msgspec.DecodeError, RecursionError):
        return decode_item(raw)  # decide as json does: the fields, or NotCompact
    seq = item.seq
    if not 1 <= seq <= MAX_SEQ:
        raise NotCompact
    return seq, item.label, item.content


def decode_items_msgspec(raw: memoryview) -> list[Fields] | None:
    """The fields of the items in ``raw`` (items joined by commas, as in Go's array), each
    as ``decode_item_msgspec`` gives it; None when msgspec does not take them all, or an
    item's seq is out of range (then each item is decoded alone, which decides).

    One call for many items, as fast as msgspec decodes a whole body; the caller
    makes sure that the items are exactly those its cuts give (``_blocks._batched``).
    """
    if not _load():
        return None
    text = bytearray(b"[")
    text += raw
    text += b"]"
    try:
        items = _list_decoder.decode(text)
    except (_msgspec.DecodeError, RecursionError):
        return None
    fields: list[Fields] = []
    for item in items:
        seq = item.seq
        if not 1 <= seq <= MAX_SEQ:
            return None
        fields.append((seq, item.label, item.content))
    return fields


def item_decoder(size: int) -> ItemDecoder:
    """The decoder for a body of ``size`` bytes: ``decode_item_msgspec`` once msgspec is
    imported, or when the body is large enough to import it for; else ``decode_item``."""
    global _chosen
    if _chosen is None:
        if _decoder is None and size < MSGSPEC_FROM:
            return decode_item
        _chosen = decode_item_msgspec if _load() else decode_item
    return _chosen


def items_decoder(size: int) -> ItemsDecoder | None:
    """The decoder of many items at once for a body of ``size`` bytes:
    ``decode_items_msgspec`` when the hosts decode it with msgspec, else None."""
    return decode_items_msgspec if item_decoder(size) is decode_item_msgspec else None
