"""WordIndex: which blocks hold a search term, found without scanning every block; and
Searcher: a host's searches, by a scan or through an index, and when to build one.

A term (two or more term bytes: a-z, 0-9, U+00E0 to U+00FF in ``latin1_images``)
occurs in an image exactly when it occurs inside one of its *words*, the maximal runs
of term bytes. The index keeps, for content and label images apart, each distinct word
once (in a ``\\n``-separated vocabulary searched with ``bytes.find``) with the slots
of the blocks holding it: a term's blocks are the union of the slots of the words that
contain it. A block gets its slot once (``add``, costing its own words); slots are never
reused, and a search counts only the slots of its own set.
"""

from __future__ import annotations

import sys
import threading
from array import array
from bisect import bisect_right
from collections import Counter, deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from itertools import chain, repeat
from typing import Final

from recall._blocks import BlockSet
from recall._tools import FINDER, FINDERS, BlocksRead, scan, terms_as_bytes

WORD_BYTES: Final = bytes(
    c if (0x61 <= c <= 0x7A or 0x30 <= c <= 0x39 or c >= 0xE0) else 0x20 for c in range(256)
)
"""bytes.translate's table: each term byte kept, every other byte a space."""

_APPEND: Final = array.append
_exhaust: Final[Callable[[Iterable[object]], None]] = deque[object](maxlen=0).extend
"""Runs an iterator to its end, keeping nothing (in C)."""
# What a word costs besides its bytes (twice: the key and the vocabulary) and its slots:
# the bytes object, its dict entry, its array, list cells and start (CPython, 64-bit).
_WORD_OVERHEAD: Final = sys.getsizeof(b"") + 3 * 8 + 40 + sys.getsizeof(array("I")) + 8 + 40
_SLOT_BYTES: Final = 4  # array("I")


class _Words:
    """The words of one kind of image, each with the slots of the blocks holding it."""

    __slots__ = ("_lists", "_postings", "_skipped", "_starts", "_vocabulary", "size")

    def __init__(self) -> None:
        self._postings: dict[bytes, array[int]] = {}
        self._skipped: array[int] = array("I")  # the one-byte words' slots, emptied at once
        self._vocabulary = bytearray()  # every word once, each followed by "\n"
        self._starts: list[int] = []  # where each word starts in the vocabulary
        self._lists: list[array[int]] = []  # the slots of each word, in the same order
        self.size = 0

    def add(self, slot: int, image: bytes) -> None:
        """The words of ``image`` are in the block of ``slot``."""
        words = set(image.translate(WORD_BYTES).split())
        postings = self._postings
        for word in words.difference(postings):
            if len(word) < 2:
                postings[word] = self._skipped  # no term fits in one byte
                continue
            slots: array[int] = array("I")
            postings[word] = slots
            self._starts.append(len(self._vocabulary))
            self._vocabulary += word
            self._vocabulary += b"\n"
            self._lists.append(slots)
            self.size += _WORD_OVERHEAD + 2 * len(word)
        # slots.append(slot) for each word's slots, in C.
        _exhaust(map(_APPEND, map(postings.__getitem__, words), repeat(slot)))
        del self._skipped[:]
        self.size += _SLOT_BYTES * len(words)

    def slots(self, term: bytes) -> set[int]:
        """The slots of the blocks whose image holds ``term`` (term bytes, two or more)."""
        found: set[int] = set()
        vocabulary, starts, lists = self._vocabulary, self._starts, self._lists
        last = len(starts) - 1
        at = vocabulary.find(term)
        while at >= 0:
            word = bisect_right(starts, at) - 1
            found.update(lists[word])
            if word == last:
                break
            at = vocabulary.find(term, starts[word + 1])
        return found


class WordIndex:
    """The words of the content and label images of blocks, each block under a slot (not
    safe for concurrent use: its owner holds a lock around ``add`` and ``hits``)."""

    __slots__ = ("_content", "_label", "count")

    def __init__(self) -> None:
        self._content = _Words()
        self._label = _Words()
        self.count = 0  # the slots given so far

    @property
    def size(self) -> int:
        """Bytes held, approximately."""
        return self._content.size + self._label.size

    def add(self, images: tuple[bytes, bytes]) -> int:
        """Index a block by its (content, label) images; its new slot."""
        slot = self.count
        self.count += 1
        self._content.add(slot, images[0])
        self._label.add(slot, images[1])
        return slot

    def hits(self, terms: Sequence[bytes], positions: Mapping[int, int]) -> list[tuple[int, int]]:
        """The (score, position) of each block of a set that scores, in no order: 1 for
        each of ``terms`` (Latin-1 bytes) in its content, 2 in its label. ``positions``
        gives the position in the set of each of its blocks' slots."""
        points: Counter[int] = Counter()
        for term in terms:
            in_label = self._label.slots(term)
            points.update(chain(self._content.slots(term), in_label, in_label))
        get = positions.get
        return [(score, at) for slot, score in points.items() if (at := get(slot, -1)) >= 0]


INDEX_BYTES_PER_IMAGE_BYTE: Final = 0.5  # an index's bytes for each image byte, expected
INDEX_FROM: Final = 1 << 20
"""The images' bytes from which a set searched again may get indexed (about 450 blocks of
2.4 KB): below, a scan of the whole set takes a millisecond or two."""
INDEX_COST: Final = 40 if FINDER is FINDERS["bytes"] else 400
"""What indexing a block costs, in scans of it for one term with the scan's finder (55 to
81 with ``bytes.find``, 460 to 620 with stringzilla's on the bench's blocks). A set is
indexed once the terms scanned over sets searched again add up to this: ski rental,
never much more than twice the cost of the better choice."""
_SPARE_SLOTS: Final = 4096  # slots past twice a set's blocks before the index is rebuilt


class Searcher:
    """A host's searches: each set scored by a scan, or through a WordIndex kept for the
    sets read again, within ``budget`` bytes together with the set.

    A set of ``index_from`` bytes of images or more is indexed when searched ``again``
    once the scans of such sets have cost ``index_cost``. Each block's slot is kept by seq
    for one ``lineage``; the index is rebuilt when dead slots outnumber the living or for
    another lineage, dropped past the budget. One search uses it at a time, the others
    scan (a lock never waited for).
    """

    def __init__(
        self, budget: int, *, index_from: int = INDEX_FROM, index_cost: int = INDEX_COST
    ) -> None:
        self._budget = budget
        self._index_from = index_from
        self._index_cost = index_cost
        self._scanned = 0  # terms scanned over sets searched again, since the last index
        self._index: WordIndex | None = None
        self._lineage: object = None  # the index's
        self._slot_of: dict[int, int] = {}  # each indexed block's slot, by its seq
        self._set: BlockSet | None = None  # the last set indexed, and its blocks' ...
        self._positions: dict[int, int] = {}  # ... positions by their slots
        self._ratio = INDEX_BYTES_PER_IMAGE_BYTE  # raised when an index proves larger
        self._lock = threading.Lock()

    @property
    def held(self) -> int:
        """Bytes held by the index, approximately."""
        index = self._index
        return 0 if index is None else index.size

    def index_of(self, blocks: BlockSet) -> WordIndex | None:
        """The index when it holds every block of ``blocks``, else None."""
        return self._index if self._set is blocks else None

    def search(self, step: BlocksRead, blocks: BlockSet, *, again: bool) -> str:
        """The output of ``step`` over every block of ``blocks``."""
        terms, head = terms_as_bytes(step.terms), blocks.heads.__getitem__
        if self._lock.acquire(blocking=False):
            try:
                index = self._indexed(blocks, again=again, terms=len(terms))
                if index is not None:
                    return step.render(index.hits(terms, self._positions), head)
            finally:
                self._lock.release()
        return step.render(scan(blocks.images, terms), head)

    def _drop(self) -> None:
        self._index, self._lineage, self._slot_of, self._set = None, None, {}, None
        self._positions = {}

    def _indexed(self, blocks: BlockSet, *, again: bool, terms: int) -> WordIndex | None:
        """The index with every block of ``blocks`` in it, or None (scan them)."""
        if self._set is blocks:  # indexed already: the index is kept with its set
            return self._index
        index, slot_of = self._index, self._slot_of
        if index is None or blocks.lineage is not self._lineage:
            if not again or blocks.image_bytes < self._index_from:
                return None  # only a large set searched again is worth an index
            if self._scanned < self._index_cost:
                self._scanned += terms  # this search scans: the rent
                return None
            self._scanned = 0
            index, slot_of = WordIndex(), {}
        seqs = blocks.seqs
        missing = [at for at, seq in enumerate(seqs) if seq not in slot_of]
        if index.count + len(missing) > 2 * len(blocks) + _SPARE_SLOTS:
            # Mostly slots of blocks gone from the sets: an index anew for this set.
            index, slot_of, missing = WordIndex(), {}, list(range(len(blocks)))
        if missing:
            images = blocks.images
            added = (
                blocks.image_bytes
                if len(missing) == len(blocks)
                else sum(len(images[at][0]) + len(images[at][1]) for at in missing)
            )
            if blocks.size + index.size + self._ratio * added > self._budget:
                self._drop()
                return None
            before = index.size
            for at in missing:
                slot_of[seqs[at]] = index.add(images[at])
            if added:
                self._ratio = max(self._ratio, (index.size - before) / added)
        if blocks.size + index.size > self._budget:
            self._drop()
            return None
        self._index, self._lineage, self._slot_of = index, blocks.lineage, slot_of
        self._set = blocks
        self._positions = {slot_of[seq]: at for at, seq in enumerate(seqs)}
        return index
