"""``read_set``: the one decoder of a /blocks body into a ``BlockSet`` (else ``NotBlocks``).

Go's compact encoding is cut into its items, each decoded alone (or a batch in one
call); any other body is decoded whole. The items of the set read before (``kept``)
whose bytes are unchanged, compared byte for byte (never trusted by seq), are reused.
"""

from __future__ import annotations

import heapq
import json
import re
import sys
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Sequence
from dataclasses import KW_ONLY, dataclass, field, replace
from itertools import chain, islice, pairwise, repeat
from operator import attrgetter, lt
from typing import Any, Final, NoReturn, TypedDict, TypeVar, overload

from recall._tools import (
    EXCERPT_RUNES,
    FINDER,
    MAX_SEQ,
    Block,
    Images,
    excerpt,
    latin1_images,
    latin1_of,
    replace_surrogates,
)

T = TypeVar("T")


def _reject_constant(name: str) -> NoReturn:
    raise ValueError(f"{name} is not JSON")


def loads(
    body: bytearray, pairs: Callable[[list[tuple[str, Any]]], Any] | None = None
) -> tuple[object, bool]:
    """Strict JSON from UTF-8 bytes (emptied once decoded), and whether its strings may
    hold surrogates (``pairs``: json's ``object_pairs_hook``); ValueError when it is not
    JSON."""
    text = body.decode("utf-8")  # UnicodeDecodeError is a ValueError
    body.clear()  # the caller's buffer too: the text is all that is needed now
    # The text is valid UTF-8, so a surrogate can only come from a \uD800-\uDFFF escape.
    surrogates = "\\ud" in text or "\\uD" in text
    try:
        doc = json.loads(text, parse_constant=_reject_constant, object_pairs_hook=pairs)
    except RecursionError as exc:
        raise ValueError("JSON nested too deeply") from exc
    return doc, surrogates


def fields_from_json(item: object, surrogates: bool) -> Fields | None:
    """The (seq, label, content) of a block of the contract's JSON, else None; with
    ``surrogates``, a lone surrogate becomes U+FFFD, as in Go."""
    if not isinstance(item, dict):
        return None
    seq, label, content = item.get("seq"), item.get("label"), item.get("content")
    if type(seq) is not int or not 1 <= seq <= MAX_SEQ:  # bool is not an int here
        return None
    if not isinstance(label, str) or not isinstance(content, str):
        return None
    if surrogates:
        label, content = replace_surrogates(label), replace_surrogates(content)
    return seq, label, content


class NotBlocks(ValueError):
    """A /blocks body that is not the contract's: the message says why (the read's ``why``)."""


NOT_JSON: Final = "status 200, invalid JSON body: {}"
NOT_OBJECT: Final = "status 200, the body is not the JSON object with 'blocks'"
NOT_IN_ORDER: Final = "the blocks are not valid blocks by increasing seq"


class BadDelta(NotBlocks):
    """A delta that is not the contract's for the kept set: the kept set is not used again."""


DELTA_SINCE: Final = "status 200, a delta since another tag than the one sent"
DELTA_SHAPE: Final = "status 200, a delta that is not the object with 'since', 'blocks' and 'gone'"
DELTA_GONE: Final = "status 200, a delta whose 'gone' names a seq the kept set lacks"
DELTA_HELD: Final = "status 200, a delta whose 'blocks' holds a block the kept set holds"
DELTA_ORDER: Final = "status 200, a delta whose 'blocks' or 'gone' are not by increasing seq"


def _doc(body: bytearray) -> tuple[object, bool]:
    """The body decoded as one JSON text (emptied), and its surrogate flag."""
    try:
        return loads(body)
    except ValueError as exc:
        raise NotBlocks(NOT_JSON.format(exc)) from exc


def _blocks_of(items: object, surrogates: bool, error: type[NotBlocks], why: str) -> list[Block]:
    """The Blocks of a JSON list of blocks; ``error(why)`` when it is not one."""
    if not isinstance(items, list):
        raise error(why)
    fields = [fields_from_json(item, surrogates) for item in items]
    if None in fields:
        raise error(why)
    return [Block(*f) for f in fields if f is not None]


def _listed(doc: object, surrogates: bool) -> list[Block]:
    """The Blocks of a decoded ``{"blocks": [...]}``."""
    if not isinstance(doc, dict) or not isinstance(doc.get("blocks"), list):
        raise NotBlocks(NOT_OBJECT)
    return _blocks_of(doc["blocks"], surrogates, NotBlocks, NOT_IN_ORDER)


# Go's compact encoding of the /blocks body: {"blocks":[{...},{...}]} plus a newline.
_BLOCKS_HEAD = re.compile(rb'[ \t\n\r]*\{[ \t\n\r]*"blocks"[ \t\n\r]*:[ \t\n\r]*\[')
_BLOCKS_TAIL = re.compile(rb"\][ \t\n\r]*\}[ \t\n\r]*\Z")  # searched in the last KB only
_NEXT_ITEM: Final = b',{"'  # what follows an item's closing brace when another item comes
_ITEM_DECODER: Final = json.JSONDecoder(parse_constant=_reject_constant)
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD]")  # one pass for "\\ud" and "\\uD"
_SEQ_HEAD: Final = b'{"seq":'
_SEQ_AT = re.compile(rb'\{"seq":([0-9]{1,20}),')
_CUT: Final = b'},{"'  # between two items
_BATCH: Final = 1 << 20  # bytes of items decoded at once (an ItemsDecoder's batch)


class NotCompact(Exception):
    """The body is not Go's compact encoding of valid blocks: decode it whole."""


Fields = tuple[int, str, str]
"""A block's seq, label and content."""
ItemDecoder = Callable[[memoryview], Fields]
"""One item's bytes to its block's fields; NotCompact when they are not one JSON block."""
ItemsDecoder = Callable[[memoryview], list[Fields] | None]
"""Items' bytes joined by commas to their fields, each as the ItemDecoder gives it; None
when it does not take them all."""


class Decoders(TypedDict, total=False):
    """How ``read_set`` decodes items: ``decode``, and ``decode_many`` for a batch."""

    decode: ItemDecoder
    decode_many: ItemsDecoder | None


class ReadOptions(Decoders, total=False):
    """How ``read_set`` reads a body: its decoders, and ``compact``."""

    compact: bool


def _array_bounds(body: bytearray) -> tuple[int, int] | None:
    """Where the items of ``{"blocks": [...]}`` start and where its ``]`` is, or None."""
    head = _BLOCKS_HEAD.match(body)
    tail = None if head is None else _BLOCKS_TAIL.search(body, max(head.end(), len(body) - 1024))
    return None if head is None or tail is None else (head.end(), tail.start())


def decode_item(raw: memoryview) -> Fields:
    """The block's fields of one item's bytes (json's own scanner, strict, no NaN);
    NotCompact when they are not one JSON block."""
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


# What an item costs a BlockSet besides its images (``Images.size``) and the body: its seq,
# start and stop (ints), three list cells (CPython, 64-bit).
_ITEM_OVERHEAD: Final = 3 * 32 + 3 * 8
_BLOCK_OVERHEAD: Final = 200  # a decoded Block (whole bodies): the object, its int, its cell


def head_of(seq: int, label: str, content: str) -> Block:
    """The block as a search result shows it: for content, a text whose ``excerpt`` is the
    block's (a cut line's first EXCERPT_RUNES runes and a ``.``, which ``excerpt`` cuts)."""
    shown = excerpt(content)
    if len(shown) > EXCERPT_RUNES:
        shown = shown[:EXCERPT_RUNES] + "."
    return Block(seq, label, shown)


@dataclass(eq=False, repr=False, slots=True)
class BlockSet:
    """Every readable block of one /blocks answer by increasing seq: ``seqs``, ``images``
    (``latin1_images``), ``heads`` (``head_of``), the ETag ``tag`` and ``size`` (bytes,
    approximately). Never changed once read.

    From Go's compact body it holds the body (``raw``) and each item's span, decoding a
    block when asked; read whole, the Blocks. ``compacted``: images and heads alone. A
    delta applied keeps the body, the blocks added held as Blocks (span -1; ``breaks``:
    where an item does not follow the one before in the body). ``reused`` counts the
    blocks taken from the set before. Sets of one ``lineage`` agree on every seq they
    hold; ``ceiling`` is its highest seq: a re-read decoding only higher seqs stays in it.
    """

    seqs: list[int]
    images: Images | _Lazy[tuple[bytes, bytes]]
    heads: list[Block]
    _: KW_ONLY
    raw: bytearray | None = None
    starts: Sequence[int] = ()
    stops: Sequence[int] = ()
    decoded: Sequence[Block | None] | None = None  # the Blocks held (None: in the body)
    breaks: Sequence[int] = ()
    tag: str | None = None
    lineage: object = None
    ceiling: int = 0
    reused: int = 0
    image_bytes: int = field(init=False)
    size: int = field(init=False)

    def __post_init__(self) -> None:
        seqs, images, blocks = self.seqs, self.images, self.decoded
        if self.lineage is None:
            self.lineage = object()
        if seqs:
            self.ceiling = max(self.ceiling, seqs[-1])
        if isinstance(images, _Lazy):  # one byte a rune: the images' bytes, none held
            self.image_bytes = sum(len(b.content) + len(b.label) for b in images.items)
            size = _ITEM_OVERHEAD * len(seqs)
        else:
            self.image_bytes = images.nbytes
            size = _ITEM_OVERHEAD * len(seqs) + images.size
        if self.raw is not None:
            size += sys.getsizeof(self.raw)
        held = [b for b in blocks or () if b is not None]
        size += _BLOCK_OVERHEAD * (len(held) + len(self.heads))
        size += sum(map(sys.getsizeof, map(attrgetter("content"), chain(held, self.heads))))
        # the label is the block's own str in its head, when the set holds Blocks
        labelled = held if blocks is not None else self.heads
        self.size = size + sum(map(sys.getsizeof, map(attrgetter("label"), labelled)))

    @property
    def complete(self) -> bool:
        """Whether the set gives its Blocks (``block``), not only their heads."""
        return self.raw is not None or self.decoded is not None

    def compacted(self) -> BlockSet:
        """The set without its body or Blocks: the images and heads alone."""
        images = self.images
        if isinstance(images, _Lazy):
            images = Images(map(latin1_images, images.items))
        return replace(self, images=images, raw=None, starts=(), stops=(), decoded=None, breaks=())

    @classmethod
    def of_blocks(cls, blocks: list[Block], **fields: Any) -> BlockSet:
        """The set of these Blocks (by increasing seq) and ``fields``: their images computed
        when asked, never held (a search's peak stays that of the Blocks)."""
        heads = [head_of(b.seq, b.label, b.content) for b in blocks]
        images = _Lazy(blocks, latin1_images)
        return cls([b.seq for b in blocks], images, heads, decoded=blocks, **fields)

    def __len__(self) -> int:
        return len(self.seqs)

    def view(self) -> Sequence[Block]:
        """The Blocks as a sequence, each decoded when it is looked at."""
        return _Lazy(range(len(self.seqs)), self.block)

    def block(self, i: int) -> Block:
        """The ``i``-th Block (decoded from the body again); a compacted set has none."""
        if self.decoded is not None:
            block = self.decoded[i]
            if block is not None:
                return block
        if self.raw is None:
            raise ValueError("a compacted set holds no blocks")
        with memoryview(self.raw) as view:
            return Block(*decode_item(view[self.starts[i] : self.stops[i]]))

    def find(self, seq: int) -> int:
        """The position of the block with this seq, or -1."""
        at = bisect_left(self.seqs, seq)
        return at if at < len(self.seqs) and self.seqs[at] == seq else -1


class _Lazy(Sequence[T]):
    """``fn`` of each of ``items``, computed when looked at: the images of a set's Blocks
    (``BlockSet.of_blocks``), a set's Blocks (``BlockSet.view``)."""

    __slots__ = ("fn", "items")

    def __init__(self, items: Sequence[Any], fn: Callable[[Any], T]) -> None:
        self.items, self.fn = items, fn

    def __len__(self) -> int:
        return len(self.items)

    @overload
    def __getitem__(self, i: int) -> T: ...

    @overload
    def __getitem__(self, i: slice) -> list[T]: ...

    def __getitem__(self, i: int | slice) -> T | list[T]:
        if isinstance(i, slice):
            return [self.fn(item) for item in self.items[i]]
        return self.fn(self.items[i])


def read_set(
    body: bytearray,
    kept: BlockSet | None = None,
    *,
    tag: str | None = None,
    sent: str | None = None,
    compact: bool = False,
    decode: ItemDecoder = decode_item,
    decode_many: ItemsDecoder | None = None,
) -> BlockSet:
    """The BlockSet of a 200 /blocks body; NotBlocks when it is not the contract's.

    Go's compact body becomes the set's ``raw`` (not to be changed again); any other is
    emptied. Items are taken from ``kept`` or decoded with ``decode`` (``decode_many``
    without a kept body). A body with ``since`` is a delta to ``kept``, read for the tag
    ``sent`` (``compacted`` with ``compact``); BadDelta when it is not the contract's.
    """
    try:
        bounds = _array_bounds(body)
        made = None if bounds is None else _compact(body, bounds, kept, tag, decode, decode_many)
        if made is not None:
            return made
        doc, surrogates = _doc(body)
    except BaseException:
        body.clear()
        raise
    if isinstance(doc, dict) and "since" in doc:
        if kept is None or sent is None or kept.tag != sent or doc["since"] != sent:
            raise BadDelta(DELTA_SINCE)
        return apply_delta(kept, doc, surrogates, tag=tag, compact=compact)
    blocks = _listed(doc, surrogates)
    _check_order([b.seq for b in blocks])
    return BlockSet.of_blocks(blocks, tag=tag)


class BodyStream:
    """A 200 /blocks body, without ``If-None-Match``, read as it arrives (``feed``, then
    ``read``) into a set of images and heads (as ``BlockSet.compacted``'s): Go's compact
    items are cut and decoded about ``_BATCH`` bytes at a time, their bytes then
    dropped, so the body is never held whole. From the first bytes that are not such
    items the rest is held, and ``read`` decodes it as ``read_set`` decodes a body: the
    same set or the same NotBlocks (its message's place counted without the blocks
    dropped). ``decoders`` gives ``read_set``'s decoders for a body of that many bytes."""

    __slots__ = (
        "_decoders",
        "_dropped",
        "_head",
        "_heads",
        "_images",
        "_looked",
        "_seqs",
        "_state",
        "pending",
    )

    def __init__(self, decoders: Callable[[int], Decoders]) -> None:
        self._decoders = decoders
        self.pending = bytearray()  # the bytes not decoded yet
        self._state = _HEAD
        self._head = b""  # the body's bytes up to its array's [
        self._dropped = 0  # the bytes decoded and dropped
        self._looked = 0  # where the last },{" may be in pending: no cut before
        self._seqs: list[int] = []
        self._images = Images()
        self._heads: list[Block] = []

    @property
    def read_so_far(self) -> int:
        """The bytes fed: the head, those decoded and dropped, those pending."""
        return len(self._head) + self._dropped + len(self.pending)

    def feed(self, chunk: bytes) -> None:
        """The body's next bytes: once ``_BATCH`` bytes wait, the items up to the last
        ``},{"`` among them are decoded."""
        pending = self.pending
        pending += chunk
        if self._state is _HEAD and len(pending) >= _HEAD_BYTES:
            self._take_head()
        if self._state is _ITEMS and len(pending) >= _BATCH:
            cut = pending.rfind(_CUT, max(0, self._looked - len(_CUT)))
            self._looked = len(pending)
            if cut >= 0:
                self._decode(cut + 1, batch=True)

    def _take_head(self) -> None:
        """Go's ``{"blocks":[`` taken off the bytes (then items come), or the body held."""
        head = _BLOCKS_HEAD.match(self.pending)
        self._state = _HELD if head is None else _ITEMS
        if head is not None:
            self._head = bytes(self.pending[: head.end()])
            del self.pending[: head.end()]

    def _decode(self, end: int, *, batch: bool) -> None:
        """Decode the items of ``pending[:end]``, dropped with the comma after them
        (``batch``); from the first that is not a block, the rest is held."""
        pending = self.pending
        starts: list[int] = []
        stops: list[int] = []
        decoders = self._decoders(self.read_so_far)
        try:
            with memoryview(pending) as view:
                _cut(FINDER(pending), 0, end, end, starts, stops)
                fields = _decoded(pending, view, starts, stops, **decoders)
        except NotCompact:
            self._state = _HELD
            return
        fresh = [latin1_of(label, content) for _, label, content in fields]
        self._seqs += [seq for seq, _, _ in fields]
        self._heads += [head_of(*f) for f in fields]
        self._images.extend(fresh, lowered=False)
        drop = end + 1 if batch else end
        self._dropped += drop
        self._looked -= drop
        del pending[:drop]

    def read(self, *, tag: str | None) -> BlockSet:
        """The set the whole body gives (with ``tag``); NotBlocks when it is not the
        contract's, as ``read_set`` says."""
        pending = self.pending
        if self._state is _HEAD:
            self._take_head()
        if self._state is _ITEMS:
            tail = _BLOCKS_TAIL.search(pending, max(0, len(pending) - 1024))
            end = -1 if tail is None else tail.start()
            if end == 0 or (end > 0 and pending[end - 1] == ord("}")):
                self._decode(end, batch=False)
                if self._state is _ITEMS:
                    pending.clear()
                    _check_order(self._seqs)
                    return BlockSet(self._seqs, self._images, self._heads, tag=tag)
            self._state = _HELD
        body = bytearray(self._head) + pending
        pending.clear()
        if not self._seqs:  # the body, as it came
            return read_set(body, tag=tag, **self._decoders(len(body))).compacted()
        return self._rest(body, tag)

    def _rest(self, body: bytearray, tag: str | None) -> BlockSet:
        """The set of the blocks decoded, then the rest of the body (``body``: its head and
        its held bytes), as ``read_set`` would read the whole body."""
        top: list[list[tuple[str, Any]]] = [[]]

        def pairs(members: list[tuple[str, Any]]) -> dict[str, Any]:
            top[0] = members  # the outermost object is the last one decoded
            return dict(members)

        try:
            _, surrogates = loads(body, pairs)
        except ValueError as exc:
            start, count = len(self._head), len(self._seqs)
            where = f"bytes {start} to {start + self._dropped - 1} left out: {count} blocks"
            raise NotBlocks(NOT_JSON.format(f"{exc} ({where})")) from exc
        names = [name for name, _ in top[0]]
        if "since" in names:  # never asked for: read without a tag
            raise BadDelta(DELTA_SINCE)
        at = len(names) - 1 - names[::-1].index("blocks")  # a repeated name: the last value
        items = top[0][at][1]
        if not isinstance(items, list):
            raise NotBlocks(NOT_OBJECT)
        seqs, images, heads = self._seqs, self._images, self._heads
        if at:  # the array decoded is not the body's blocks
            seqs, images, heads = [], Images(), []
        blocks = _blocks_of(items, surrogates, NotBlocks, NOT_IN_ORDER)
        seqs += [b.seq for b in blocks]
        heads += [head_of(b.seq, b.label, b.content) for b in blocks]
        images.extend([latin1_images(b) for b in blocks])
        _check_order(seqs)
        return BlockSet(seqs, images, heads, tag=tag)


_HEAD, _ITEMS, _HELD = "head", "items", "held"  # a BodyStream's states
_HEAD_BYTES: Final = 64  # bytes in which Go's body has its array's [: else it is held


def apply_delta(
    kept: BlockSet,
    delta: dict[str, object],
    surrogates: bool,
    *,
    tag: str | None,
    compact: bool = False,
) -> BlockSet:
    """``kept`` less the delta's ``gone``, plus its ``blocks``: the set ``tag`` names, in
    kept's lineage, ``compacted`` with ``compact``; BadDelta when it is not the contract's."""
    added = _blocks_of(delta.get("blocks"), surrogates, BadDelta, DELTA_SHAPE)
    gone = delta.get("gone")
    if not isinstance(gone, list) or any(type(seq) is not int for seq in gone):
        raise BadDelta(DELTA_SHAPE)
    for order in ([b.seq for b in added], gone):
        _check_order(order, error=BadDelta, why=DELTA_ORDER)
    gone_at = [kept.find(seq) for seq in gone]
    if any(at < 0 for at in gone_at):
        raise BadDelta(DELTA_GONE)
    if any(kept.find(b.seq) >= 0 for b in added):
        raise BadDelta(DELTA_HELD)
    if isinstance(kept.images, _Lazy):  # a set read whole: its Blocks
        gone_seqs = set(gone)
        blocks = [b for b in kept.images.items if b.seq not in gone_seqs]
        merged = list(heapq.merge(blocks, added, key=attrgetter("seq")))
        made = BlockSet.of_blocks(merged, tag=tag, lineage=kept.lineage, ceiling=kept.ceiling)
        return made.compacted() if compact else made
    old, kept_images = kept.seqs, kept.images
    old_blocks = kept.decoded or [None] * len(old)
    raw = None if compact else kept.raw  # with a body: the Blocks a delta added held
    into = [bisect_left(old, b.seq) for b in added]  # each goes before the kept one there
    gone_set = set(gone_at)
    points = sorted({0, len(old), *into, *gone_at, *(at + 1 for at in gone_at)})
    seqs: list[int] = []
    heads: list[Block] = []
    images = Images()
    starts: list[int] = []
    stops: list[int] = []
    with_blocks: list[Block | None] = []
    for first, upto in pairwise([*points, len(old)]):  # the added blocks, then a kept run
        for block in added[bisect_left(into, first) : bisect_right(into, first)]:
            seqs.append(block.seq)
            heads.append(head_of(block.seq, block.label, block.content))
            images.append(latin1_images(block))
            if raw is not None:
                with_blocks.append(block)
                starts.append(-1)
                stops.append(-1)
        if first not in gone_set:
            seqs += old[first:upto]
            heads += kept.heads[first:upto]
            images.extend_from(kept_images, first, upto)
            if raw is not None:
                with_blocks += old_blocks[first:upto]
                starts += kept.starts[first:upto]
                stops += kept.stops[first:upto]
    follows = enumerate(zip(stops, starts[1:], strict=False), 1)
    breaks = [i for i, (stop, start) in follows if start != stop + 1]
    return BlockSet(
        seqs,
        images,
        heads,
        raw=raw,
        starts=starts,
        stops=stops,
        decoded=with_blocks if any(b is not None for b in with_blocks) else None,
        breaks=breaks,
        tag=tag,
        lineage=kept.lineage,
        ceiling=kept.ceiling,
    )


def _check_order(
    seqs: Sequence[int], *, error: type[NotBlocks] = NotBlocks, why: str = NOT_IN_ORDER
) -> None:
    """``error(why)`` unless the seqs increase."""
    if not all(map(lt, seqs, islice(seqs, 1, None))):
        raise error(why)


def _compact(
    body: bytearray,
    bounds: tuple[int, int],
    kept: BlockSet | None,
    tag: str | None,
    decode: ItemDecoder,
    decode_many: ItemsDecoder | None = None,
) -> BlockSet | None:
    """The set of ``{"blocks": [item, ...]}`` when each item is cut from the next by
    ``},{"`` alone (Go's encoding) and is a valid block; None otherwise (decoded whole).

    A JSON string holds ``"`` only escaped, so ``},{"`` never lies inside one: such a
    body is cut exactly between its items, each decoded alone as ``json.loads`` would.
    A kept item whose bytes start here and are followed by ``,{"`` (or the array's end)
    was cut the same way, and a Block depends on its bytes alone: it is reused.

    Without a kept body, items are cut a batch of about ``_BATCH`` bytes at a time, which
    ``decode_many`` decodes when each item starts with ``{"seq":``; a batch not taken is
    decoded item by item. A batch taken is a JSON array of flat objects, so each
    ``},{"seq":`` in it lies between two items (its ``"`` cannot close a string); with
    as many items as the cuts give, they are the cuts' items.
    """
    pos, end = bounds
    if pos < end and body[end - 1] != ord("}"):
        return None  # the last item is no JSON object
    old = kept if kept is not None and kept.raw is not None else None
    old_images = old.images if old is not None else Images()
    assert isinstance(old_images, Images)  # a set with a body holds its images
    batch = _BATCH if old is None else 0  # the bytes past an item's start decoded with it
    seqs: list[int] = []
    starts: list[int] = []
    stops: list[int] = []
    images = Images()
    heads: list[Block] = []
    reused = 0
    same_lineage = old is not None
    view = memoryview(body)
    find = FINDER(body)  # stringzilla's SIMD find when installed
    try:
        while pos < end:
            if old is not None:
                hint = _SEQ_AT.match(body, pos)  # the item's seq, if it starts with it
                at = -1 if hint is None else old.find(int(hint[1]))
                count = _same_run(old, at, body, pos, end) if at >= 0 else 0
                if count:
                    shift = pos - old.starts[at]
                    upto = at + count
                    seqs += old.seqs[at:upto]
                    starts += map(shift.__add__, old.starts[at:upto])
                    stops += map(shift.__add__, old.stops[at:upto])
                    images.extend_from(old_images, at, upto)
                    heads += old.heads[at:upto]
                    reused += count
                    pos = stops[-1] + 1
                    continue
            first = len(starts)
            pos = _cut(find, pos, end, batch, starts, stops)
            fields = _decoded(body, view, starts[first:], stops[first:], decode, decode_many)
            fresh: list[tuple[bytes, bytes]] = []  # the latin1_of still to add, in order
            for seq, label, content in fields:
                seqs.append(seq)
                if old is not None and seq <= old.ceiling:
                    at = old.find(seq)
                    block = Block(seq, label, content)
                    if at >= 0 and old.decoded is not None and old.decoded[at] == block:
                        images.extend(fresh, lowered=False)
                        fresh = []
                        images.extend_from(old_images, at, at + 1)  # the block a delta added
                        heads.append(old.heads[at])
                        reused += 1
                        continue
                    same_lineage = False  # a seq of the lineage, maybe another block
                fresh.append(latin1_of(label, content))
                heads.append(head_of(seq, label, content))
            images.extend(fresh, lowered=False)
    except NotCompact:
        return None
    finally:
        view.release()
    _check_order(seqs)
    return BlockSet(
        seqs,
        images,
        heads,
        raw=body,
        starts=starts,
        stops=stops,
        tag=tag,
        lineage=old.lineage if old is not None and same_lineage else None,
        ceiling=old.ceiling if old is not None and same_lineage else 0,
        reused=reused,
    )


def _cut(
    find: Callable[[bytes, int, int], int],
    pos: int,
    end: int,
    batch: int,
    starts: list[int],
    stops: list[int],
) -> int:
    """Cut the items from ``pos``, each ending at the next ``},{"`` or at ``end``, into
    ``starts`` and ``stops``: one at least, and more while within ``batch`` bytes of the
    first's start; where the next item starts."""
    first = pos
    while pos < end and (pos == first or pos - first <= batch):
        cut = find(_CUT, pos, end)
        starts.append(pos)
        stops.append(end if cut < 0 else cut + 1)
        pos = stops[-1] + 1
    return pos


def _decoded(
    body: bytearray,
    view: memoryview,
    starts: Sequence[int],
    stops: Sequence[int],
    decode: ItemDecoder,
    decode_many: ItemsDecoder | None = None,
) -> list[Fields]:
    """The fields of the items cut at ``starts`` and ``stops``: in one ``decode_many`` call
    when each starts with ``{"seq":``, else (or when it does not take them) one by one;
    NotCompact when one is not a block."""
    taken = len(starts) > 1 and all(map(body.startswith, repeat(_SEQ_HEAD), starts))
    fields = decode_many(view[starts[0] : stops[-1]]) if taken and decode_many else None
    if fields is None or len(fields) != len(starts):
        fields = [decode(view[start:stop]) for start, stop in zip(starts, stops, strict=True)]
    return fields


_CHUNK: Final = 1 << 16  # bytes compared at once while a run of kept items matches


def _same_run(old: BlockSet, at: int, body: bytearray, pos: int, end: int) -> int:
    """How many items of ``old`` from its ``at``-th are, byte for byte, the items at
    ``pos`` of ``body`` (the last followed by ``,{"`` or the array's end): 0 when none."""
    assert old.raw is not None
    starts, stops = old.starts, old.stops
    if starts[at] < 0:
        return 0  # a block a delta added: not in the body
    breaks = old.breaks
    after = bisect_right(breaks, at)
    n = breaks[after] if after < len(breaks) else len(stops)  # the items that follow in raw
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
