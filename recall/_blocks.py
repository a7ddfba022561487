"""Go's JSON blocks into Blocks: strict JSON, one item, a whole /blocks body; the block cache.

``decode_blocks`` is the one decoder of a /blocks body: Go's compact encoding is
cut into its items and each decoded alone (through the cache when there is one);
any other body is decoded whole. It gives Blocks, or raises ``NotBlocks``.
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
import sys
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Final, NoReturn

from recall._tools import MAX_SEQ, Block, latin1_images

__all__ = [
    "BlockCache",
    "NotBlocks",
    "block_from_json",
    "decode_blocks",
    "loads",
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


def block_from_json(item: object, surrogates: bool) -> Block | None:
    """The Block an item of the contract's JSON describes, or None when it is not one.

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
    return Block(seq, label, content)


class NotBlocks(ValueError):
    """A /blocks body that is not the contract's: the message says why (the read's ``why``)."""


NOT_JSON: Final = "status 200, invalid JSON body: {}"
NOT_OBJECT: Final = "status 200, the body is not the JSON object with 'blocks'"
NOT_IN_ORDER: Final = "the blocks are not valid blocks by increasing seq"


def decode_blocks(body: bytearray, cache: BlockCache | None = None) -> list[Block]:
    """The Blocks of a 200 /blocks body, by increasing seq; NotBlocks when it is not that.

    Empties body. With a cache, the items it holds (same bytes) are not decoded
    again, and new blocks are kept when there is room.
    """
    try:
        if cache is None:
            blocks = _compact(body, _next_item)
        else:
            with cache.reading():
                blocks = _compact(body, functools.partial(_next_cached_item, cache))
        if blocks is None:
            blocks = _whole(body)
    finally:
        body.clear()
    last = 0
    for block in blocks:
        if block.seq <= last:
            raise NotBlocks(NOT_IN_ORDER)
        last = block.seq
    return blocks


def _whole(body: bytearray) -> list[Block]:
    """The body decoded as one JSON text."""
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
_ITEM_DECODER: Final = json.JSONDecoder(parse_constant=_reject_constant)
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD]")  # one pass for "\\ud" and "\\uD"


class _NotCompact(Exception):
    """The body is not Go's compact encoding of valid blocks: decode it whole."""


NextItem = Callable[[bytearray, memoryview, int, int], tuple[int, Block]]
"""(body, its view, where the item starts, where the array ends) -> (the item's end, its Block)."""


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


def _compact(body: bytearray, next_item: NextItem) -> list[Block] | None:
    """The Blocks of ``{"blocks": [item, ...]}`` when each item is cut from the next by
    ``},{"`` and nothing else (Go's encoding) and is a valid block; None otherwise.

    A JSON string holds ``"`` only escaped, so ``},{"`` never lies inside one: a
    valid body of that shape is cut exactly between its items, and each item,
    decoded alone by json's own scanner (strict, no NaN), is what ``json.loads``
    gives for it. Anything else (spaces, nested values, invalid JSON or UTF-8, an
    item that is not a block) leaves the whole body to ``_whole``, which says why.
    """
    bounds = _array_bounds(body)
    if bounds is None:
        return None
    pos, end = bounds
    blocks: list[Block] = []
    if pos == end:
        return blocks
    view = memoryview(body)
    try:
        while True:
            stop, block = next_item(body, view, pos, end)
            blocks.append(block)
            if stop == end:
                return blocks
            pos = stop + 1
    except _NotCompact:
        return None
    finally:
        view.release()


def _cut(body: bytearray, pos: int, end: int) -> int:
    """Where the item at ``pos`` ends: at the next ``},{"``, or the array's end."""
    cut = body.find(_ITEM_CUT, pos, end)
    return end if cut < 0 else cut + 1


def _decode_item(raw: memoryview) -> Block:
    """The Block of one item's bytes; _NotCompact when they are not one JSON block."""
    # The bytes are UTF-8 (or fail), so a surrogate can only come from a \uD800-\uDFFF escape.
    surrogates = _SURROGATE_ESCAPE.search(raw) is not None
    try:
        text = str(raw, "utf-8")
        item, at = _ITEM_DECODER.raw_decode(text)
    except (ValueError, RecursionError) as exc:
        raise _NotCompact from exc
    block = block_from_json(item, surrogates) if at == len(text) else None
    if block is None:
        raise _NotCompact
    return block


def _next_item(body: bytearray, view: memoryview, pos: int, end: int) -> tuple[int, Block]:
    """The item at ``pos``, decoded."""
    stop = _cut(body, pos, end)
    return stop, _decode_item(view[pos:stop])


def _next_cached_item(
    cache: BlockCache, body: bytearray, view: memoryview, pos: int, end: int
) -> tuple[int, Block]:
    """The item at ``pos``: the cache's Block for its bytes, or decoded and offered to it.

    When the cache holds a block under the seq the item starts with, the item is
    first tried with that entry's length: if those bytes are the entry's bytes
    (same digest) and ``},{"`` (or the array's end) follows them, that is where
    ``_cut`` would cut too (the entry's bytes were cut the same way, so hold no
    ``},{"``, and end with ``}``). A Block decoded from an item's bytes depends on
    those bytes alone (a surrogate comes from an escape in them; replacing
    surrogates where there are none changes nothing): the cache's is the one
    decoding gives.
    """
    guess = cache.length_for(body, pos)
    if guess:
        stop = pos + guess
        if stop == end or (stop + 3 <= end and body[stop - 1 : stop + 3] == _ITEM_CUT):
            block = cache.get(_digest(view[pos:stop]))
            if block is not None:
                return stop, block
    stop = _cut(body, pos, end)
    raw = view[pos:stop]
    # A cache that this read has filled admits nothing more, and holds no entry for
    # a seq it does not know (at worst a hit missed): no digest then.
    if cache.full and not guess:
        return stop, _decode_item(raw)
    key = _digest(raw)
    block = cache.get(key)
    if block is None:
        block = _decode_item(raw)
        cache.put(key, block, stop - pos)
    return stop, block


def _digest(raw: memoryview) -> bytes:
    return hashlib.sha256(raw).digest()


class _Entry:
    __slots__ = ("block", "images", "length", "read", "size")

    def __init__(
        self, block: Block, images: tuple[bytes, bytes], length: int, size: int, read: int
    ) -> None:
        self.block = block
        self.images = images
        self.length = length  # of the item's raw bytes
        self.size = size
        self.read = read


# What an entry costs besides its strings and images: the Block and its int, the
# entry, the digest, and the slots of the dicts that hold it (CPython, 64-bit).
_ENTRY_OVERHEAD: Final = 560
_BYTES_OVERHEAD: Final = sys.getsizeof(b"")
_SEQ_HEAD: Final = b'{"seq":'


class BlockCache:
    """Decoded Blocks and their latin1_images by the digest of their raw item bytes.

    Bounded by ``limit`` bytes (each entry counted as its strings, images and
    bookkeeping, approximately). Least recently used entries are evicted first, but
    not those used by the current read: an entry that would need them evicted is
    not admitted (a scan larger than the cache keeps what it holds).

    Safe for threads and tasks: a read (``decode_blocks``) holds the lock from its
    first item to its last; ``images`` is one lookup of an entry that never changes.
    """

    def __init__(self, limit: int) -> None:
        if limit < 0:
            raise ValueError("limit must not be negative")
        self.limit = limit
        self.used = 0
        self._lock = threading.Lock()
        self._read = 0
        self._full = 0  # the last read that found the cache full of its own entries
        self._entries: OrderedDict[bytes, _Entry] = OrderedDict()
        self._by_block: dict[int, _Entry] = {}  # id(block): the entry holds the block alive
        self._by_seq: dict[int, _Entry] = {}  # the latest entry for each seq

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, block: object) -> bool:
        """Whether this very Block object is in the cache."""
        entry = self._by_block.get(id(block))
        return entry is not None and entry.block is block

    @contextmanager
    def reading(self) -> Iterator[None]:
        """One read of /blocks: the cache is the reader's until it ends."""
        with self._lock:
            self._read += 1
            yield

    @property
    def full(self) -> bool:
        """Whether this read has found every entry in use by itself (nothing more fits)."""
        return self._full == self._read

    def length_for(self, body: bytearray, pos: int) -> int:
        """The raw length of the entry for the seq the item at ``pos`` names, else 0 (a guess)."""
        if not body.startswith(_SEQ_HEAD, pos):
            return 0
        start = pos + len(_SEQ_HEAD)
        comma = body.find(b",", start, start + 20)
        if comma < 0:
            return 0
        try:
            entry = self._by_seq.get(int(body[start:comma]))
        except ValueError:
            return 0
        return 0 if entry is None else entry.length

    def get(self, key: bytes) -> Block | None:
        """The Block for these item bytes' digest, or None."""
        entry = self._entries.get(key)
        if entry is None:
            return None
        self._entries.move_to_end(key)
        entry.read = self._read
        self._by_seq[entry.block.seq] = entry
        return entry.block

    def put(self, key: bytes, block: Block, length: int) -> None:
        """Keep the block (``length`` raw bytes; its images computed) when there is room."""
        if key in self._entries:
            return
        content, label = block.content, block.label
        size = (
            _ENTRY_OVERHEAD
            + sys.getsizeof(content)
            + sys.getsizeof(label)
            + _BYTES_OVERHEAD
            + len(content)
            + (_BYTES_OVERHEAD + len(label) if label else 0)
        )
        if size > self.limit:
            return
        entries = self._entries
        while self.used + size > self.limit:
            oldest = next(iter(entries.values()))
            if oldest.read == self._read:
                self._full = self._read
                return  # in use by this read: keep it rather than admit this one
            entries.popitem(last=False)
            del self._by_block[id(oldest.block)]
            if self._by_seq.get(oldest.block.seq) is oldest:
                del self._by_seq[oldest.block.seq]
            self.used -= oldest.size
        entry = _Entry(block, latin1_images(block), length, size, self._read)
        entries[key] = entry
        self._by_block[id(block)] = entry
        self._by_seq[block.seq] = entry
        self.used += size

    def images(self, block: Block) -> tuple[bytes, bytes]:
        """The block's latin1_images: the cache's when it holds this very Block, else computed."""
        entry = self._by_block.get(id(block))
        if entry is None or entry.block is not block:
            return latin1_images(block)
        return entry.images
