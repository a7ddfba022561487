"""The two recall tools, step by step as the contract gives them.

Every Go function the contract names is taken from ``recall._go``. A tool starts
over its decoded arguments and gives either its output or the one archive read
it needs (``BlockRead``: one block, for a well-formed id; ``BlocksRead``: every
block, for a query with terms), whose ``finish`` gives the output over what was
read. ``run_tool`` does all three over an ``Archive``; the hosts read over HTTP.

The Unicode version of the Go shows only in how ``%q`` quotes an id or a query
(``recall._go.strings``: the lowering never changes a term): a tool is started with
that Go's ``quote`` (``recall._go.quote_for``), the default tables' by default.
"""

from __future__ import annotations

import heapq
import importlib
import re
import sys
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import accumulate
from typing import Any, Final, NamedTuple, Protocol, overload

from recall._errors import UnknownToolError
from recall._go.json import unmarshal_args
from recall._go.strconv import float64_to_int, quote, quote_for
from recall._go.strings import LATIN1_LOWER, to_latin1, to_lower, to_lower_latin1, trim_space
from recall._go.tables import DEFAULT_UNICODE_VERSION

__all__ = [
    "DEFAULT_LIMIT",
    "EXCERPT_RUNES",
    "FINDER",
    "FINDERS",
    "LOWERING",
    "LOWERINGS",
    "MAX_LIMIT",
    "MAX_SEQ",
    "TEXT_MISSING_ID",
    "TEXT_MISSING_QUERY",
    "TOOLS",
    "Archive",
    "Block",
    "BlockRead",
    "BlocksRead",
    "Finder",
    "Images",
    "MemoryArchive",
    "Quote",
    "Step",
    "excerpt",
    "header",
    "latin1_images",
    "latin1_of",
    "rank",
    "recall_id_to_seq",
    "recall_tokens",
    "replace_surrogates",
    "run_tool",
    "scan",
    "score",
    "search_limit",
    "start_tool",
    "terms_as_bytes",
    "text_block",
    "text_no_match",
    "text_not_found",
    "text_results",
    "tool_recall",
    "tool_recall_search",
]

MAX_SEQ = 2**63 - 1  # math.MaxInt64
DEFAULT_LIMIT = 5
MAX_LIMIT = 20
EXCERPT_RUNES = 160

TEXT_MISSING_ID = 'recall needs an "id", such as "r7"'
TEXT_MISSING_QUERY = 'recall_search needs a "query"'

# Runs of runes in a-z, 0-9 or U+00E0..U+00FF, two runes or more: the fields of
# strings.FieldsFunc that recallTokens keeps.
_TERMS = re.compile("[a-z0-9\u00e0-\u00ff]{2,}")
_SURROGATE = re.compile("[\ud800-\udfff]")


@dataclass(frozen=True, slots=True)
class Block:
    """An archived block, as the archive serves it."""

    seq: int
    label: str
    content: str

    @property
    def id(self) -> str:
        """The block's id: ``"r"`` followed by the decimal seq."""
        return f"r{self.seq}"


class Archive(Protocol):
    """Read access to the archive; locked blocks are never readable."""

    def get_block(self, seq: int) -> Block | None:
        """The readable block with this seq, or None."""
        ...

    def all_blocks(self) -> Sequence[Block]:
        """Every readable block, by increasing seq."""
        ...


class MemoryArchive:
    """An archive of readable blocks held in memory."""

    __slots__ = ("_blocks", "_by_seq")

    def __init__(self, blocks: Iterable[Block] = ()) -> None:
        by_seq: dict[int, Block] = {}
        for block in blocks:
            if block.seq in by_seq:
                raise ValueError(f"two blocks with seq {block.seq}")
            by_seq[block.seq] = block
        self._by_seq = by_seq
        self._blocks = tuple(sorted(by_seq.values(), key=lambda b: b.seq))

    def __repr__(self) -> str:
        return f"MemoryArchive(<{len(self._blocks)} blocks>)"

    def get_block(self, seq: int) -> Block | None:
        """The block with this seq, or None."""
        return self._by_seq.get(seq)

    def all_blocks(self) -> Sequence[Block]:
        """Every block, by increasing seq."""
        return self._blocks


# The pieces.


def replace_surrogates(text: str) -> str:
    """Replace each surrogate code point (paired or not) with U+FFFD, as a Go string would."""
    return text if text.isascii() else _SURROGATE.sub("\ufffd", text)


def recall_id_to_seq(block_id: str) -> int | None:
    """recallIDToSeq: the seq a tolerant id such as ``" R007 "`` names, or None when malformed."""
    s = trim_space(trim_space(block_id).removeprefix("r").removeprefix("R"))
    if not (s.isascii() and s.isdigit()):  # one or more of 0-9, nothing else
        return None
    digits = s.lstrip("0")  # leading zeros are fine for ParseInt, and cost int() nothing
    if len(digits) > len(str(MAX_SEQ)):
        return None
    seq = int(digits or "0")
    return seq if 1 <= seq <= MAX_SEQ else None


def recall_tokens(query: str) -> list[str]:
    """recallTokens: the query's distinct terms of two runes or more, in order."""
    return list(dict.fromkeys(_TERMS.findall(to_lower(query))))


def search_limit(value: object) -> int:
    """The number of results to show for ``m["limit"]`` (only a float64 counts)."""
    if type(value) is float:
        n = float64_to_int(value)
        if n >= 1:
            return min(n, MAX_LIMIT)
    return DEFAULT_LIMIT


def score(block: Block, terms: Sequence[str]) -> int:
    """1 for each term in the lowered content, 2 for each in the lowered label."""
    lc = to_lower(block.content)
    ll = to_lower(block.label)
    total = 0
    for term in terms:
        if term in lc:
            total += 1
        if term in ll:
            total += 2
    return total


def excerpt(content: str) -> str:
    """The first non-blank line, trimmed, cut to 160 runes plus ``…``; ``""`` when none."""
    start = 0
    while start <= len(content):
        end = content.find("\n", start)
        if end < 0:
            end = len(content)
        line = trim_space(content[start:end])
        if line:
            return line if len(line) <= EXCERPT_RUNES else line[:EXCERPT_RUNES] + "\u2026"
        start = end + 1
    return ""


def header(block: Block) -> str:
    """``"[rN]"``, followed by ``" " + label`` when the label is not empty."""
    return f"[r{block.seq}] {block.label}" if block.label else f"[r{block.seq}]"


# The texts.


Quote = Callable[[str], str]
"""strconv.Quote of one Unicode version (``recall._go.quote_for``)."""


def text_not_found(block_id: str, quote: Quote = quote) -> str:
    """TEXT_NOT_FOUND(id)."""
    return f"no archived block {quote(block_id)}"


def text_block(block: Block) -> str:
    """TEXT_BLOCK(b): the header, then the content verbatim."""
    return header(block) + "\n" + block.content


def text_no_match(query: str, quote: Quote = quote) -> str:
    """TEXT_NO_MATCH(query)."""
    return f"no archived block matches {quote(query)}"


def text_results(
    query: str, shown: Sequence[tuple[int, Block]], total: int, quote: Quote = quote
) -> str:
    """TEXT_RESULTS for the (score, block) pairs shown out of total matches."""
    parts = [f"{len(shown)} of {total} matching blocks for {quote(query)}:"]
    for points, block in shown:
        parts.append(f"\n{header(block)} (score {points})")
        line = excerpt(block.content)
        if line:
            parts.append("\n  " + line)
    return "".join(parts)


# The search: every block's images scanned for the terms (or a host's index of them),
# the hits ranked, the first rendered. One pipeline for run_tool and the hosts.


def latin1_of(label: str, content: str) -> tuple[bytes, bytes]:
    """``to_latin1`` of a block's content and of its label (``b""`` for no label): its
    images before they are lowered (``Images.extend(..., lowered=False)``)."""
    return to_latin1(content), to_latin1(label) if label else b""


def latin1_images(block: Block) -> tuple[bytes, bytes]:
    """``to_lower_latin1`` of a Block's content and of its label (``b""`` for no label):
    what the search looks for its terms in."""
    return to_lower_latin1(block.content), to_lower_latin1(block.label) if block.label else b""


def terms_as_bytes(terms: Sequence[str]) -> list[bytes]:
    """recallTokens' terms (runes a-z, 0-9, U+00E0..U+00FF) as Latin-1 bytes, as the
    images hold them."""
    return [bytes(term, "latin-1") for term in terms]


Finder = Callable[[bytearray], Callable[[bytes, int, int], int]]
"""A buffer to its ``find(term, start, end)``: the position of the first occurrence within
``start..end-1``, or -1 (``bytes.find``'s answer)."""


def _bytes_finder(buffer: bytearray) -> Callable[[bytes, int, int], int]:
    return buffer.find


def _bytes_lowering(buffer: bytearray, start: int) -> None:
    buffer[start:] = buffer[start:].translate(LATIN1_LOWER)


FINDERS: dict[str, Finder] = {"bytes": _bytes_finder}
"""The finders the scan may use: ``bytes.find``, and stringzilla's SIMD ``Str.find`` when
stringzilla imports (``recall-port[fast]``). Each gives the same positions."""
LOWERINGS: dict[str, Callable[[bytearray, int], None]] = {"bytes": _bytes_lowering}
"""Ways to lower a buffer's bytes from ``start`` on in place by ``LATIN1_LOWER``:
``bytes.translate``'s, and stringzilla's (``recall-port[fast]``). Each gives the same bytes."""
try:
    _stringzilla: Any = importlib.import_module("stringzilla")
    FINDERS["stringzilla"] = lambda buffer: _stringzilla.Str(buffer).find
    LOWERINGS["stringzilla"] = lambda buffer, start: _stringzilla.translate(
        buffer, LATIN1_LOWER, inplace=True, start=start
    )
except ImportError:  # pragma: no cover - the dev group installs the fast extra
    pass
FINDER: Final = FINDERS.get("stringzilla", _bytes_finder)
"""The scan's finder: stringzilla's when it is installed."""
LOWERING: Final = LOWERINGS.get("stringzilla", _bytes_lowering)
"""``Images.extend``'s lowering: stringzilla's when it is installed."""


class _Segment:
    """Images joined: the content images in one buffer and the label images in another,
    each image followed by a NUL, with where each starts (and then the buffer's end).
    Appended to by the Images that made it only, while it builds."""

    __slots__ = ("content", "content_at", "label", "label_at")

    def __init__(self) -> None:
        self.content = bytearray()
        self.label = bytearray()
        self.content_at = [0]
        self.label_at = [0]

    def append(self, content: bytes, label: bytes) -> None:
        for buffer, at, image in (
            (self.content, self.content_at, content),
            (self.label, self.label_at, label),
        ):
            buffer += image
            buffer.append(0)
            at.append(len(buffer))

    def extend(self, pairs: Sequence[tuple[bytes, bytes]]) -> None:
        """``append`` of each pair in turn, each buffer resized once."""
        for buffer, at, images in (
            (self.content, self.content_at, [content for content, _ in pairs]),
            (self.label, self.label_at, [label for _, label in pairs]),
        ):
            start = len(buffer)
            at += [start + end for end in accumulate(len(image) + 1 for image in images)]
            buffer += b"\0".join([*images, b""])  # one resize: no room left over


_SEGMENT_BYTES: Final = 1 << 16
"""Content bytes from which a segment takes no more images; a last run of fewer image bytes
is copied into the segment that new images go to. Small segments keep the memory of a
build close to the images' own (a buffer grows by copies)."""


class Images(Sequence[tuple[bytes, bytes]]):
    """The ``latin1_images`` of blocks in order, held joined: runs of blocks of segments,
    each segment a buffer of content images and one of label images, each image followed
    by a NUL (a term holds none, so no occurrence spans two images). A set read again
    shares its kept runs (nothing copied); a short last run is copied into the segment
    new images go to, so the runs stay few (about a segment for each 64 KB).

    Built by ``append`` and ``extend_from``, then never changed: a set holds it.
    """

    __slots__ = ("_open", "_runs", "_until", "nbytes")

    def __init__(self, pairs: Iterable[tuple[bytes, bytes]] = ()) -> None:
        self._runs: list[tuple[_Segment, int, int]] = []  # (segment, first, upto)
        self._until: list[int] = []  # the positions each run ends at
        self._open: _Segment | None = None  # the segment this one appends to
        self.nbytes = 0
        """The bytes of the images (the NULs not counted)."""
        self.extend(list(pairs))

    def __repr__(self) -> str:
        return f"Images(<{len(self)} blocks in {len(self._runs)} runs>)"

    @property
    def size(self) -> int:
        """Bytes held, approximately: every segment a run shares, whole."""
        segments = {id(run[0]): run[0] for run in self._runs}.values()
        return sum(
            sys.getsizeof(s.content) + sys.getsizeof(s.label) + 80 * len(s.content_at)
            for s in segments
        )

    def _add_run(self, segment: _Segment, first: int, upto: int) -> None:
        c, lab = segment.content_at, segment.label_at
        self.nbytes += c[upto] - c[first] + lab[upto] - lab[first] - 2 * (upto - first)
        runs = self._runs
        if runs and runs[-1][0] is segment and runs[-1][2] == first:
            runs[-1] = (segment, runs[-1][1], upto)
            self._until[-1] += upto - first
        else:
            runs.append((segment, first, upto))
            self._until.append(len(self) + upto - first)

    def append(self, pair: tuple[bytes, bytes]) -> None:
        """Add a block's (content, label) images."""
        segment = self._open
        runs = self._runs
        if segment is None or runs[-1][0] is not segment or len(segment.content) >= _SEGMENT_BYTES:
            segment = self._open = _Segment()
            if runs and self._run_bytes(runs[-1]) < _SEGMENT_BYTES:  # copied: the runs stay few
                last, first, upto = runs.pop()
                self._until.pop()
                self.nbytes -= self._run_bytes((last, first, upto))
                for at in range(first, upto):
                    segment.append(*_image(last, at))
                self._add_run(segment, 0, upto - first)
        content, label = pair
        segment.append(content, label)
        self._add_run(segment, len(segment.content_at) - 2, len(segment.content_at) - 1)

    def extend(
        self,
        pairs: Sequence[tuple[bytes, bytes]],
        *,
        lowered: bool = True,
        lowering: Callable[[bytearray, int], None] = LOWERING,
    ) -> None:
        """Add blocks' (content, label) images, into the segments ``append`` one by one
        would put them in, each segment's images joined at once. With ``lowered=False``
        the pairs are ``latin1_of`` blocks, lowered here a segment at a time."""
        ends = list(accumulate(len(content) + 1 for content, _ in pairs))
        at = 0
        while at < len(pairs):
            self.append(pairs[at])  # opens the segment the next ones go to, if need be
            segment = self._open
            assert segment is not None
            new = len(segment.content_at) - 2  # the block just appended
            # append adds the next image while the segment holds fewer than _SEGMENT_BYTES
            limit = _SEGMENT_BYTES - len(segment.content) + ends[at]
            upto = min(bisect_left(ends, limit, at) + 1, len(pairs))
            if upto > at + 1:
                first = len(segment.content_at) - 1
                segment.extend(pairs[at + 1 : upto])
                self._add_run(segment, first, first + upto - at - 1)
            if not lowered:
                lowering(segment.content, segment.content_at[new])
                lowering(segment.label, segment.label_at[new])
            at = upto

    @staticmethod
    def _run_bytes(run: tuple[_Segment, int, int]) -> int:
        segment, first, upto = run
        c, lab = segment.content_at, segment.label_at
        return c[upto] - c[first] + lab[upto] - lab[first] - 2 * (upto - first)

    def extend_from(self, other: Images, first: int, upto: int) -> None:
        """Add the images of ``other``'s blocks ``first`` to ``upto - 1`` (shared, not copied)."""
        if first >= upto:
            return
        run = bisect_right(other._until, first)
        begin = other._until[run - 1] if run else 0
        while first < upto:
            segment, lo, hi = other._runs[run]
            take = min(hi - lo, upto - begin) - (first - begin)
            self._add_run(segment, lo + first - begin, lo + first - begin + take)
            first += take
            begin = other._until[run]
            run += 1

    def __len__(self) -> int:
        return self._until[-1] if self._until else 0

    @overload
    def __getitem__(self, i: int) -> tuple[bytes, bytes]: ...

    @overload
    def __getitem__(self, i: slice) -> list[tuple[bytes, bytes]]: ...

    def __getitem__(self, i: int | slice) -> tuple[bytes, bytes] | list[tuple[bytes, bytes]]:
        positions = range(len(self))
        if isinstance(i, slice):
            return [self[at] for at in positions[i]]
        at = positions[i]
        run = bisect_right(self._until, at)
        segment, first, _ = self._runs[run]
        return _image(segment, first + at - (self._until[run - 1] if run else 0))

    def scan(self, terms: Sequence[bytes], *, finder: Finder = FINDER) -> list[tuple[int, int]]:
        """``scan`` of these images: the (score, position) of each block that scores."""
        points = [0] * len(self)
        base = 0
        for segment, first, upto in self._runs:
            for buffer, starts, weight in (
                (segment.content, segment.content_at, 1),
                (segment.label, segment.label_at, 2),
            ):
                find = finder(buffer)
                end = starts[upto]
                for term in terms:
                    # One find from each position: a hit's block scores, the next find
                    # starts at the next block; a term absent from the rest costs one pass.
                    block = first
                    at = find(term, starts[block], end)
                    while at >= 0:
                        block = bisect_right(starts, at, block, upto) - 1
                        points[base + block - first] += weight
                        block += 1
                        at = find(term, starts[block], end)
            base += upto - first
        return [(score, at) for at, score in enumerate(points) if score]


def _image(segment: _Segment, at: int) -> tuple[bytes, bytes]:
    """The (content, label) images of a segment's ``at``-th block."""
    c, lab = segment.content_at, segment.label_at
    with memoryview(segment.content) as content, memoryview(segment.label) as label:
        return bytes(content[c[at] : c[at + 1] - 1]), bytes(label[lab[at] : lab[at + 1] - 1])


_CHUNK_BYTES: Final = 1 << 20
"""Bytes of images joined at once to scan images given one by one."""


def scan(
    images: Iterable[tuple[bytes, bytes]], terms: Sequence[bytes], *, finder: Finder = FINDER
) -> list[tuple[int, int]]:
    """The (score, position) of each block that scores, by increasing position, given
    each block's ``latin1_images`` in order (an ``Images``, or joined here about a
    megabyte at a time) and ``terms_as_bytes``' terms.

    ``t in to_lower(s)`` is ``t.encode("latin-1") in to_lower_latin1(s)`` for such terms.
    """
    if isinstance(images, Images):
        return images.scan(terms, finder=finder)
    hits: list[tuple[int, int]] = []
    chunk, base = Images(), 0
    for pair in images:
        chunk.append(pair)
        if chunk.nbytes >= _CHUNK_BYTES:
            hits += [(points, base + at) for points, at in chunk.scan(terms, finder=finder)]
            chunk, base = Images(), base + len(chunk)
    hits += [(points, base + at) for points, at in chunk.scan(terms, finder=finder)]
    return hits


def rank(hits: Iterable[tuple[int, int]], limit: int) -> list[tuple[int, int]]:
    """The first ``limit`` of (score, position) hits, in any order, as the search shows
    them: highest score first, then the most recent (positions follow the seqs; a seq
    serves as its own position)."""
    return heapq.nlargest(limit, hits, key=_hit_rank)


def _hit_rank(hit: tuple[int, int]) -> tuple[int, int]:
    """A hit's rank, highest first: its score, then its position (the most recent seq)."""
    points, at = hit
    return (points, at)


# The tools: each gives its output, or the one archive read it needs and how to finish.


class BlockRead(NamedTuple):
    """``recall``'s archive read: the readable block with ``seq``."""

    seq: int
    block_id: str
    quote: Quote = quote

    def finish(self, block: Block | None) -> str:
        """The output, given the block read (None: absent or unreadable)."""
        return text_not_found(self.block_id, self.quote) if block is None else text_block(block)


class BlocksRead(NamedTuple):
    """``recall_search``'s archive read: every readable block."""

    query: str
    terms: Sequence[str]
    limit: int
    quote: Quote = quote

    def finish(self, blocks: Sequence[Block]) -> str:
        """The output, given every readable block by increasing seq."""
        hits = scan(map(latin1_images, blocks), terms_as_bytes(self.terms))
        return self.render(hits, blocks.__getitem__)

    def render(self, hits: Sequence[tuple[int, int]], block: Callable[[int], Block]) -> str:
        """The output for the (score, position) hits of every block that scores, in any
        order; ``block`` gives the Block at a position."""
        if not hits:
            return text_no_match(self.query, self.quote)
        shown = [(points, block(at)) for points, at in rank(hits, self.limit)]
        return text_results(self.query, shown, len(hits), self.quote)


Step = str | BlockRead | BlocksRead
"""What a tool gives first: its output, or the archive read it needs."""


def tool_recall(m: Mapping[str, object], quote: Quote = quote) -> str | BlockRead:
    """The recall tool over decoded arguments."""
    block_id = m.get("id")
    if not isinstance(block_id, str) or not trim_space(block_id):
        return TEXT_MISSING_ID
    seq = recall_id_to_seq(block_id)
    return text_not_found(block_id, quote) if seq is None else BlockRead(seq, block_id, quote)


def tool_recall_search(m: Mapping[str, object], quote: Quote = quote) -> str | BlocksRead:
    """The recall_search tool over decoded arguments."""
    query = m.get("query")
    if not isinstance(query, str) or not trim_space(query):
        return TEXT_MISSING_QUERY
    terms = recall_tokens(query)
    if not terms:
        return text_no_match(query, quote)
    return BlocksRead(query, terms, search_limit(m.get("limit")), quote)


TOOLS = {"recall": tool_recall, "recall_search": tool_recall_search}


def start_tool(name: str, args: str, quote: Quote = quote) -> Step:
    """Start ``recall`` or ``recall_search`` with the JSON arguments text ``args`` (any text
    without surrogates: ``replace_surrogates``), quoting as ``quote`` does.

    Raises UnknownToolError for another name.
    """
    tool = TOOLS.get(name)
    if tool is None:
        raise UnknownToolError(name)
    return tool(unmarshal_args(args), quote)


def run_tool(
    name: str, args: str, archive: Archive, *, unicode_version: str = DEFAULT_UNICODE_VERSION
) -> str:
    """Run ``recall`` or ``recall_search`` with the JSON arguments text ``args`` (any text),
    as the Go whose ``unicode.Version`` is ``unicode_version`` does.

    Raises UnknownToolError for another name, TypeError for a ``unicode_version`` that
    is not a str, ValueError for one the port has no tables of. An archive's own
    errors pass through.
    """
    step = start_tool(name, replace_surrogates(args), quote_for(unicode_version))
    if isinstance(step, BlockRead):
        return step.finish(archive.get_block(step.seq))
    if isinstance(step, BlocksRead):
        return step.finish(archive.all_blocks())
    return step
