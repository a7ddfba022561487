"""Go's JSON blocks into Blocks: strict JSON, one item, a whole /blocks body as a BlockSet.

``read_set`` is the one decoder of a /blocks body. Go's compact encoding is cut
into its items, and each item is decoded alone (or, given a decoder of many, a
batch of items in one call, each as it decodes alone); any other body is decoded whole.
It gives a ``BlockSet`` (the blocks, their lowered images, and for Go's compact
body the body itself), or raises ``NotBlocks``.

Given the set read before (``kept``), the items whose bytes are unchanged are
taken from it rather than decoded again: runs of them are compared with the
kept body byte for byte (``bytes.startswith``, a memcmp), never trusted by seq.
"""

from __future__ import annotations

import json
import re
import sys
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Final, NoReturn, overload

from recall._tools import MAX_SEQ, Block, images_of, latin1_images

if TYPE_CHECKING:
    from recall._index import WordIndex

__all__ = [
    "NOT_IN_ORDER",
    "NOT_JSON",
    "NOT_OBJECT",
    "BlockSet",
    "Fields",
    "ItemDecoder",
    "ItemsDecoder",
    "NotBlocks",
    "NotCompact",
    "block_from_json",
    "decode_blocks",
    "decode_item",
    "fields_from_json",
    "loads",
    "read_set",
    "replace_surrogates",
]

_SURROGATE = re.compile("[\ud800-\udfff]")


def replace_surrogates(text: str) -> str:
    """Replace each surrogate code point (paired or not) with U+FFFD, as a Go string would."""
    if text.isascii():
        return text
    return _SURROGATE.sub("\ufffd", text)


def _reject_constant(name: str) -> NoReturn:
    raise ValueError(f"{name} is not JSON")


def loads(body: bytearray) -> tuple[object, bool]:
    """Strict JSON from UTF-8 bytes, and whether its strings may hold surrogates.

    Empties body as soon as it is decoded to text. ValueError when it is not JSON.
    """
    text = body.decode("utf-8")  # UnicodeDecodeError is a ValueError
    body.clear()  # the caller's buffer too: the text is all that is needed now
    # The text is valid UTF-8, so a surrogate can only come from a \uD800-\uDFFF escape.
    surrogates = "\\ud" in text or "\\uD" in text
    try:
        return json.loads(text, parse_constant=_reject_constant), surrogates
    except RecursionError as exc:
        raise ValueError("JSON nested too deeply") from exc


def fields_from_json(item: object, surrogates: bool) -> Fields | None:
    """The (seq, label, content) of an item of the contract's JSON, or None when it is
    not a block.

    With ``surrogates``, a lone surrogate (from a \\uD800-\\uDFFF escape) in the
    label or the content becomes U+FFFD, as Go's decoder makes it.
    """
    if not isinstance(item, dict):
        return None
    seq = item.get("seq")
    label = item.get("label")
    content = item.get("content")
    if type(seq) is not int or not 1 <= seq <= MAX_SEQ:  # bool is not an int here
        return None
    if not isinstance(label, str) or not isinstance(content, str):
        return None
    if surrogates:
        label, content = replace_surrogates(label), replace_surrogates(content)
    return seq, label, content


def block_from_json(item: object, surrogates: bool) -> Block | None:
    """The Block an item of the contract's JSON describes, or None (``fields_from_json``)."""
    fields = fields_from_json(item, surrogates)
    return None if fields is None else Block(*fields)


class NotBlocks(ValueError):
    """A /blocks body that is not the contract's: the message says why (the read's ``why``)."""


NOT_JSON: Final = "status 200, invalid JSON body: {}"
NOT_OBJECT: Final = "status 200, the body is not the JSON object with 'blocks'"
NOT_IN_ORDER: Final = "the blocks are not valid blocks by increasing seq"


def _whole(body: bytearray) -> list[Block]:
    """The body decoded as one JSON text (emptied)."""
    try:
        doc, surrogates = loads(body)
    except ValueError as exc:
        raise NotBlocks(NOT_JSON.format(exc)) from exc
    items = doc.get("blocks") if isinstance(doc, dict) else None
    if not isinstance(items, list):
        raise NotBlocks(NOT_OBJECT)
    blocks: list[Block] = []
    for item in items:
        block = block_from_json(item, surrogates)
        if block is None:
            raise NotBlocks(NOT_IN_ORDER)
        blocks.append(block)
    return blocks


# Go's compact encoding of the /blocks body: {"blocks":[{...},{...}]} plus a newline.
_BLOCKS_HEAD = re.compile(rb'[ \t\n\r]*\{[ \t\n\r]*"blocks"[ \t\n\r]*:[ \t\n\r]*\[')
_JSON_SPACE: Final = b" \t\n\r"
_ITEM_CUT: Final = b'},{"'
_NEXT_ITEM: Final = b',{"'  # what follows an item's closing brace when another item comes
_ITEM_DECODER: Final = json.JSONDecoder(parse_constant=_reject_constant)
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD]")  # one pass for "\\ud" and "\\uD"
_SEQ_HEAD: Final = b'{"seq":'
_CUTS = re.compile(rb'\},\{"')  # _ITEM_CUT: finditer finds them all faster than a find loop
_SEQ_KEY: Final = b'seq":'
_BATCH: Final = 1 << 20
"""Bytes of items decoded at once by an ItemsDecoder: what it holds decoded at a time."""


class NotCompact(Exception):
    """The body is not Go's compact encoding of valid blocks: decode it whole."""


Fields = tuple[int, str, str]
"""A block's seq, label and content."""
ItemDecoder = Callable[[memoryview], Fields]
"""One item's bytes to its block's fields; NotCompact when they are not one JSON block."""
ItemsDecoder = Callable[[memoryview], list[Fields] | None]
"""Many items' bytes, joined by commas, to their blocks' fields, each as the ItemDecoder
gives it; None when it does not take them all (each is then decoded alone)."""


def _array_bounds(body: bytearray) -> tuple[int, int] | None:
    """Where the items of ``{"blocks": [...]}`` start and where its ``]`` is, or None."""
    head = _BLOCKS_HEAD.match(body)
    if head is None:
        return None
    end = len(body)
    while end and body[end - 1] in _JSON_SPACE:
        end -= 1
    if end < 2 or body[end - 1] != ord("}"):
        return None
    end -= 1
    while end and body[end - 1] in _JSON_SPACE:
        end -= 1
    end -= 1  # the array's "]"
    pos = head.end()
    if end < pos or body[end] != ord("]"):
        return None
    return pos, end


def _cut(body: bytearray, pos: int, end: int) -> int:
    """Where the item at ``pos`` ends: at the next ``},{"``, or the array's end."""
    cut = body.find(_ITEM_CUT, pos, end)
    return end if cut < 0 else cut + 1


def decode_item(raw: memoryview) -> Fields:
    """The block's fields of one item's bytes (json's own scanner, strict, no NaN);
    NotCompact when they are not one JSON block."""
    # The bytes are UTF-8 (or fail), so a surrogate can only come from a \uD800-\uDFFF escape.
    surrogates = _SURROGATE_ESCAPE.search(raw) is not None
    try:
        text = str(raw, "utf-8")
        item, at = _ITEM_DECODER.raw_decode(text)
    except (ValueError, RecursionError) as exc:
        raise NotCompact from exc
    fields = fields_from_json(item, surrogates) if at == len(text) else None
    if fields is None:
        raise NotCompact
    return fields


# What an item costs a BlockSet besides its images' bytes and the body: its seq, start
# and stop (ints), the images' tuple and two bytes objects, a slot and five list cells
# (CPython, 64-bit).
_ITEM_OVERHEAD: Final = 3 * 32 + 56 + 2 * sys.getsizeof(b"") + 5 * 8
_BLOCK_OVERHEAD: Final = 200  # a decoded Block (whole bodies): the object, its int, its cell


class BlockSet:
    """Every readable block of one /blocks answer, by increasing seq, as kept between
    searches: each block's seq and ``latin1_images``, the answer's ``tag`` (its ETag,
    or None) and ``size`` (bytes, approximately).

    Read from Go's compact body, it holds the body (``raw``), each item's span in it
    and each block's images, and decodes a block only when asked (``block``); read
    whole, it holds the Blocks, and lowers a block only when its images are asked.
    ``slots`` are the blocks' slots in ``index`` (-1: not indexed yet), which the
    search's index fills in. ``reused`` counts the blocks taken from the
    set read before; ``image_bytes`` is the bytes of all its images. Never changed
    once read, but for its index's slots.
    """

    __slots__ = (
        "_blocks",
        "_positions",
        "image_bytes",
        "images",
        "index",
        "raw",
        "reused",
        "seqs",
        "size",
        "slots",
        "starts",
        "stops",
        "tag",
    )

    def __init__(
        self,
        seqs: list[int],
        images: Sequence[tuple[bytes, bytes]],
        *,
        raw: bytearray | None = None,
        starts: list[int] | None = None,
        stops: list[int] | None = None,
        blocks: list[Block] | None = None,
        tag: str | None = None,
        slots: list[int] | None = None,
        index: WordIndex | None = None,
        reused: int = 0,
    ) -> None:
        self.seqs = seqs
        self.images = images
        self.raw = raw
        self.starts = starts if starts is not None else []
        self.stops = stops if stops is not None else []
        self._blocks = blocks
        self.tag = tag
        self.slots = slots if slots is not None else [-1] * len(seqs)
        self.index = index
        self.reused = reused
        self._positions: dict[int, int] | None = None
        if isinstance(images, _Images):  # one byte a rune: the images' bytes, none held
            self.image_bytes = sum(len(b.content) + len(b.label) for b in blocks or ())
            size = _ITEM_OVERHEAD * len(seqs)
        else:
            self.image_bytes = sum(len(c) + len(lab) for c, lab in images)
            size = _ITEM_OVERHEAD * len(seqs) + self.image_bytes
        if raw is not None:
            size += sys.getsizeof(raw)
        for block in blocks or ():
            size += _BLOCK_OVERHEAD + sys.getsizeof(block.content) + sys.getsizeof(block.label)
        self.size = size

    @classmethod
    def of_blocks(cls, blocks: list[Block], *, tag: str | None = None) -> BlockSet:
        """The set of these Blocks (by increasing seq), without a body: each block's
        images are computed when asked, never held (so a search's peak stays that of
        the Blocks)."""
        return cls([b.seq for b in blocks], _Images(blocks), blocks=blocks, tag=tag)

    def __len__(self) -> int:
        return len(self.seqs)

    def view(self) -> Sequence[Block]:
        """The Blocks as a sequence, each decoded when it is looked at."""
        return _Blocks(self)

    def __repr__(self) -> str:
        return f"BlockSet(<{len(self.seqs)} blocks>)"

    def block(self, i: int) -> Block:
        """The ``i``-th Block (decoded from the body again when the set holds one)."""
        if self._blocks is not None:
            return self._blocks[i]
        assert self.raw is not None
        with memoryview(self.raw) as view:
            return Block(*decode_item(view[self.starts[i] : self.stops[i]]))

    def blocks(self) -> list[Block]:
        """Every Block, by increasing seq."""
        return [self.block(i) for i in range(len(self.seqs))]

    def find(self, seq: int) -> int:
        """The position of the block with this seq, or -1."""
        at = bisect_left(self.seqs, seq)
        return at if at < len(self.seqs) and self.seqs[at] == seq else -1

    def assign(self, index: WordIndex | None, slots: list[int]) -> None:
        """The blocks' slots in ``index`` (-1: none), given by the search's index."""
        self.index, self.slots, self._positions = index, slots, None

    def positions(self) -> dict[int, int]:
        """The position of each indexed block by its slot (computed once)."""
        positions = self._positions
        if positions is None:
            positions = {slot: i for i, slot in enumerate(self.slots) if slot >= 0}
            self._positions = positions
        return positions


class _Images(Sequence[tuple[bytes, bytes]]):
    """The images of Blocks, each computed when looked at (``BlockSet.of_blocks``)."""

    __slots__ = ("_blocks",)

    def __init__(self, blocks: list[Block]) -> None:
        self._blocks = blocks

    def __len__(self) -> int:
        return len(self._blocks)

    @overload
    def __getitem__(self, i: int) -> tuple[bytes, bytes]: ...

    @overload
    def __getitem__(self, i: slice) -> list[tuple[bytes, bytes]]: ...

    def __getitem__(self, i: int | slice) -> tuple[bytes, bytes] | list[tuple[bytes, bytes]]:
        if isinstance(i, slice):
            return [latin1_images(block) for block in self._blocks[i]]
        return latin1_images(self._blocks[i])


class _Blocks(Sequence[Block]):
    """A BlockSet's Blocks, each decoded when looked at (``BlockSet.view``)."""

    __slots__ = ("_set",)

    def __init__(self, blocks: BlockSet) -> None:
        self._set = blocks

    def __len__(self) -> int:
        return len(self._set)

    @overload
    def __getitem__(self, i: int) -> Block: ...

    @overload
    def __getitem__(self, i: slice) -> list[Block]: ...

    def __getitem__(self, i: int | slice) -> Block | list[Block]:
        positions = range(len(self._set))
        if isinstance(i, slice):
            return [self._set.block(at) for at in positions[i]]
        return self._set.block(positions[i])


def read_set(
    body: bytearray,
    kept: BlockSet | None = None,
    *,
    tag: str | None = None,
    decode: ItemDecoder = decode_item,
    decode_many: ItemsDecoder | None = None,
) -> BlockSet:
    """The BlockSet of a 200 /blocks body; NotBlocks when it is not the contract's.

    Go's compact body becomes the set's ``raw`` (the caller must not change it
    again); any other body is emptied. The items of ``kept`` whose bytes are the
    same are taken from it (with their images and index slots), the others
    decoded with ``decode``; without a kept body, with ``decode_many`` when given
    (many at once, the same fields).
    """
    try:
        bounds = _array_bounds(body)
        made = None if bounds is None else _compact(body, bounds, kept, decode, decode_many)
        if made is not None:
            made.tag = tag
            return made
        blocks = _whole(body)
    except BaseException:
        body.clear()
        raise
    _check_order([b.seq for b in blocks])
    return BlockSet.of_blocks(blocks, tag=tag)


def decode_blocks(body: bytearray, decode: ItemDecoder = decode_item) -> list[Block]:
    """The Blocks of a 200 /blocks body, by increasing seq; NotBlocks when it is not that.

    Empties body.
    """
    try:
        return read_set(body, decode=decode).blocks()
    finally:
        body.clear()


def _check_order(seqs: Sequence[int]) -> None:
    last = 0
    for seq in seqs:
        if seq <= last:
            raise NotBlocks(NOT_IN_ORDER)
        last = seq


def _compact(
    body: bytearray,
    bounds: tuple[int, int],
    kept: BlockSet | None,
    decode: ItemDecoder,
    decode_many: ItemsDecoder | None = None,
) -> BlockSet | None:
    """The set of ``{"blocks": [item, ...]}`` when each item is cut from the next by
    ``},{"`` and nothing else (Go's encoding) and is a valid block; None otherwise.

    A JSON string holds ``"`` only escaped, so ``},{"`` never lies inside one: a
    valid body of that shape is cut exactly between its items, and each item,
    decoded alone by json's own scanner (strict, no NaN), is what ``json.loads``
    gives for it. Anything else (spaces, nested values, invalid JSON or UTF-8, an
    item that is not a block) leaves the whole body to ``_whole``, which says why.

    An item of ``kept`` whose bytes start here and are followed by ``,{"`` (or the
    array's end) is where the cut would fall too: its bytes were cut the same way,
    so they hold no ``},{"`` and end with ``}``. A Block decoded from an item's
    bytes depends on those bytes alone, so the kept one is what decoding gives.

    Without a kept body, ``decode_many`` decodes the items in batches (``_batched``).
    """
    old = kept if kept is not None and kept.raw is not None else None
    if old is None and decode_many is not None:
        try:
            made = _batched(body, bounds, decode, decode_many)
        except NotCompact:
            return None
        if made is not None:
            return made
    pos, end = bounds
    seqs: list[int] = []
    starts: list[int] = []
    stops: list[int] = []
    images: list[tuple[bytes, bytes]] = []
    slots: list[int] = []
    reused = 0
    view = memoryview(body)
    try:
        while pos < end:
            if old is not None:
                at = old.find(_seq_at(body, pos))
                count = _same_run(old, at, body, pos, end) if at >= 0 else 0
                if count:
                    shift = pos - old.starts[at]
                    upto = at + count
                    seqs += old.seqs[at:upto]
                    starts += map(shift.__add__, old.starts[at:upto])
                    stops += map(shift.__add__, old.stops[at:upto])
                    images += old.images[at:upto]
                    slots += old.slots[at:upto]
                    reused += count
                    pos = stops[-1] + 1
                    continue
            stop = _cut(body, pos, end)
            seq, label, content = decode(view[pos:stop])
            seqs.append(seq)
            starts.append(pos)
            stops.append(stop)
            images.append(images_of(label, content))
            slots.append(-1)
            pos = stop + 1
    except NotCompact:
        return None
    finally:
        view.release()
    _check_order(seqs)
    index = old.index if old is not None and reused else None
    if index is None:
        slots = [-1] * len(seqs)
    return BlockSet(
        seqs,
        images,
        raw=body,
        starts=starts,
        stops=stops,
        slots=slots,
        index=index,
        reused=reused,
    )


def _batched(
    body: bytearray, bounds: tuple[int, int], decode: ItemDecoder, decode_many: ItemsDecoder
) -> BlockSet | None:
    """``_compact``'s set without a kept body, its items decoded by ``decode_many`` a batch
    at a time; None when an item does not start with ``{"seq":`` or the last does not end
    with ``}`` (``_compact`` then decides item by item); NotCompact as ``_compact``.

    The cuts are ``_cut``'s, every ``},{"``. A batch is the bytes of its items with
    the commas between them. When ``decode_many`` takes it, it is a JSON array of
    flat objects (no nested value; ``"`` only in strings, escaped inside them), so
    each ``},{"seq":`` in it is between two of its items (its ``"`` cannot close a
    string: ``seq":`` follows), and with as many items as cuts give, the items are
    exactly the cuts' items, each decoded as ``decode`` decodes its bytes alone. A
    batch it does not take, or of one item (as large as it may be), is decoded item by
    item with ``decode``, as ``_compact`` does: no more than a batch is ever decoded at once.
    """
    pos, end = bounds
    if pos >= end or not body.startswith(_SEQ_HEAD, pos) or body[end - 1] != ord("}"):
        return None
    starts = [pos]
    stops: list[int] = []
    for cut in _CUTS.finditer(body, pos, end):
        if not body.startswith(_SEQ_KEY, cut.end()):
            return None
        stop = cut.start() + 1
        stops.append(stop)
        starts.append(stop + 1)
    stops.append(end)
    seqs: list[int] = []
    images: list[tuple[bytes, bytes]] = []
    count = len(starts)
    view = memoryview(body)
    try:
        first = 0
        while first < count:
            # A batch of about _BATCH bytes, one item at least.
            upto = bisect_right(stops, starts[first] + _BATCH, first + 1, count)
            fields = (
                None if upto == first + 1 else decode_many(view[starts[first] : stops[upto - 1]])
            )
            if fields is None or len(fields) != upto - first:
                spans = zip(starts[first:upto], stops[first:upto], strict=True)
                fields = [decode(view[start:stop]) for start, stop in spans]
            for seq, label, content in fields:
                seqs.append(seq)
                images.append(images_of(label, content))
            first = upto
    finally:
        view.release()
    _check_order(seqs)
    return BlockSet(seqs, images, raw=body, starts=starts, stops=stops)


def _seq_at(body: bytearray, pos: int) -> int:
    """The seq that the item at ``pos`` starts with (``{"seq":N,``), or 0 (a hint only)."""
    if not body.startswith(_SEQ_HEAD, pos):
        return 0
    start = pos + len(_SEQ_HEAD)
    comma = body.find(b",", start, start + 21)
    digits = body[start:comma] if comma > start else b""
    return int(digits) if digits.isdigit() else 0


_CHUNK: Final = 1 << 16
"""Bytes compared at once while a run of kept items matches (a mismatch costs one
chunk's items compared one by one)."""


def _same_run(old: BlockSet, at: int, body: bytearray, pos: int, end: int) -> int:
    """How many items of ``old`` from its ``at``-th are, byte for byte, the items at
    ``pos`` of ``body`` (the last followed by ``,{"`` or the array's end): 0 when none."""
    assert old.raw is not None
    starts, stops = old.starts, old.stops
    n = len(stops)
    shift = pos - starts[at]
    with memoryview(old.raw) as kept:

        def same(start: int, stop: int) -> bool:
            """Whether the kept bytes start..stop-1 are the bytes at their place in body."""
            return stop + shift <= end and body.startswith(kept[start:stop], start + shift)

        def cut_after(upto: int) -> bool:
            """Whether body is cut after the place of kept item upto-1."""
            stop = stops[upto - 1] + shift
            return stop == end or body.startswith(_NEXT_ITEM, stop)

        if same(starts[at], stops[n - 1]) and cut_after(n):  # nothing changed, or blocks added
            return n - at
        upto, matched = at, starts[at]  # items at..upto-1 are the same: bytes up to matched
        while upto < n:
            # A chunk of about _CHUNK bytes, one item at least (the comma before it too).
            chunk_end = bisect_right(stops, stops[upto] + _CHUNK, upto + 1, n)
            if same(matched, stops[chunk_end - 1]):
                upto, matched = chunk_end, stops[chunk_end - 1]
                continue
            while upto < chunk_end and same(matched, stops[upto]):
                upto, matched = upto + 1, stops[upto]
            break
        count = upto - at
        if count and not cut_after(upto):
            count -= 1  # the item before ends where the kept one did: the cut is there
    return count
