"""The compiled decoding of /blocks items, when msgspec is installed (``recall-port[fast]``).

``decoders(size)``, the hosts' for a body of ``size`` bytes, are ``decode_item``
(json's scanner) without msgspec or below ``MSGSPEC_FROM``, else ``decode_item_msgspec``
and ``decode_items_msgspec`` (a batch in one call): the very same fields or refusal for
every item's bytes, msgspec taking exactly the contract's object and ``decode_item``
deciding every other (``tests/recall/test_fast.py`` holds them to each other and to Go).
"""

from __future__ import annotations

import importlib
import threading
from typing import Any

from recall._blocks import Decoders, Fields, ItemDecoder, NotCompact, decode_item
from recall._tools import MAX_SEQ

MSGSPEC_FROM = 1 << 20
"""The body size (bytes) from which msgspec is imported to decode it: importing msgspec
costs about what json's scanner spends on 1 MB more than msgspec does."""

_lock = threading.Lock()
_chosen: ItemDecoder | None = None
_msgspec: Any = None
_decoder: Any = None
_list_decoder: Any = None


def available() -> bool:
    """Whether msgspec imports (then the hosts decode with it): imported once."""
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
    if not raw or raw[0] != 0x7B or raw[-1] != 0x7D or not available():  # not "{...}"
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
    """The fields of the items in ``raw`` (joined by commas, as in Go's array), each as
    ``decode_item_msgspec`` gives it, in one call; None when msgspec does not take them
    all or a seq is out of range. The caller checks the items are its cuts'."""
    if not available():
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


def decoders(size: int) -> Decoders:
    """``read_set``'s ``decode`` and ``decode_many``: msgspec's once it is imported or for a
    body large enough to import it for, else ``decode_item`` alone."""
    global _chosen
    if _chosen is None:
        if _decoder is None and size < MSGSPEC_FROM:
            return {"decode": decode_item}
        _chosen = decode_item_msgspec if available() else decode_item
    many = decode_items_msgspec if _chosen is decode_item_msgspec else None
    return {"decode": _chosen, "decode_many": many}
