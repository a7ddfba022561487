"""The compiled decoding of /blocks items, when msgspec is installed (``recall-port[fast]``).

``decoders(size)``, the hosts' for a body of ``size`` bytes, are ``decode_item``
(json's scanner) without msgspec or below ``MSGSPEC_FROM``, else ``decode_item_msgspec``
and ``decode_items_msgspec`` (a batch in one call): the very same fields or refusal for
every item's bytes, msgspec taking exactly the contract's object and ``decode_item``
deciding every other (``tests/recall/test_fast.py`` holds them to each other and to Go).
"""

from __future__ import annotations

import functools
import importlib
from typing import Annotated, Any

from recall._blocks import Decoders, Fields, ItemDecoder, decode_item
from recall._tools import MAX_SEQ

MSGSPEC_FROM = 1 << 20
"""The body size (bytes) from which msgspec is imported to decode it: importing msgspec
costs about what json's scanner spends on 1 MB more than msgspec does."""

_chosen: ItemDecoder | None = None  # the hosts', chosen at the first body of MSGSPEC_FROM bytes


@functools.cache
def _msgspec() -> tuple[Any, Any, Any] | None:
    """msgspec, its decoder of an item and of a list of items (exactly the contract's
    object: the fields by name, a seq in range); None without msgspec."""
    try:
        msgspec = importlib.import_module("msgspec")
    except ImportError:
        return None
    seq = Annotated[int, msgspec.Meta(ge=1, le=MAX_SEQ)]
    item = msgspec.defstruct(
        "Item", [("seq", seq), ("label", str), ("content", str)], forbid_unknown_fields=True
    )
    items = msgspec.json.Decoder(list[item])  # type: ignore[valid-type]
    return msgspec, msgspec.json.Decoder(item), items


def available() -> bool:
    """Whether msgspec imports (then the hosts decode with it): imported once."""
    return _msgspec() is not None


def decode_item_msgspec(raw: memoryview) -> Fields:
    """``decode_item`` for one item's bytes, msgspec decoding those it takes."""
    found = _msgspec()
    if not raw or raw[0] != 0x7B or raw[-1] != 0x7D or found is None:  # not "{...}"
        return decode_item(raw)
    msgspec, decoder, _ = found
    try:
        item = decoder.decode(raw)
    except (msgspec.DecodeError, RecursionError):
        return decode_item(raw)  # decide as json does: the fields, or NotCompact
    return item.seq, item.label, item.content


def decode_items_msgspec(raw: memoryview) -> list[Fields] | None:
    """The fields of the items in ``raw`` (joined by commas, as in Go's array), each as
    ``decode_item_msgspec`` gives it, in one call; None when msgspec does not take them
    all or a seq is out of range. The caller checks the items are its cuts'."""
    found = _msgspec()
    if found is None:
        return None
    msgspec, _, decoder = found
    try:
        items = decoder.decode(b"".join((b"[", raw, b"]")))
    except (msgspec.DecodeError, RecursionError):
        return None
    return [(item.seq, item.label, item.content) for item in items]


def decoders(size: int) -> Decoders:
    """``read_set``'s decoders for a body of ``size`` bytes, as the module's docstring says."""
    global _chosen
    if _chosen is None:
        if size < MSGSPEC_FROM:
            return {"decode": decode_item}
        _chosen = decode_item_msgspec if available() else decode_item
    many = decode_items_msgspec if _chosen is decode_item_msgspec else None
    return {"decode": _chosen, "decode_many": many}
