"""recall_search over a BlockSet: every block scored, by a scan of its images or through a
WordIndex, then ranked and rendered as ``BlocksRead.finish`` does.

Every search scores every block of the set it was given: nothing of an output is
kept. What a host keeps between searches is the set (``HostCore``) and, once a
set is searched again, a ``WordIndex`` of its blocks (``Searcher``).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Final

from recall._blocks import BlockSet
from recall._index import WordIndex
from recall._tools import _TERMS, BlocksRead

__all__ = [
    "INDEX_BYTES_PER_IMAGE_BYTE",
    "INDEX_COST",
    "INDEX_FROM",
    "Searcher",
    "render",
    "scan",
    "terms_as_bytes",
]

INDEX_BYTES_PER_IMAGE_BYTE: Final = 0.5
"""What an index is expected to hold for each byte of the images it indexes, before it
is built (the bench's blocks need about 0.3)."""
INDEX_FROM: Final = 1 << 20
"""The images' bytes from which a set searched again may get indexed (about 450 blocks of
2.4 KB): below, a scan of the whole set takes a millisecond or two."""
INDEX_COST: Final = 40
"""What indexing a block costs, in scans of it for one term (``bytes.find`` over its
images): 40 to 66 on the bench's blocks (``make bench``), so a set is indexed once
the terms scanned over the sets searched again add up to 40 (ski rental: never more
than twice the cost of the better choice, whatever the searches to come)."""
_SPARE_SLOTS: Final = 4096
"""Slots an index may hold past twice its set's blocks before it is built again."""


def terms_as_bytes(terms: Sequence[str]) -> list[bytes] | None:
    """recallTokens' terms as Latin-1 bytes (as the images hold them), or None for terms
    that are not recallTokens' (runes a-z, 0-9, U+00E0..U+00FF, two or more)."""
    if not all(_TERMS.fullmatch(term) for term in terms):
        return None
    return [term.encode("latin-1") for term in terms]


def scan(images: Sequence[tuple[bytes, bytes]], terms: Sequence[bytes]) -> list[tuple[int, int]]:
    """The (score, position) of each block that scores, by increasing position.

    ``t in to_lower(s)`` is ``t.encode("latin-1") in to_lower_latin1(s)`` for such
    terms; ``bytes.find``, not ``in`` (which tries the term as an int first).
    """
    hits: list[tuple[int, int]] = []
    for at, (content, label) in enumerate(images):
        in_content = content.find
        points = 0
        for term in terms:
            if in_content(term) >= 0:
                points += 1
        if label:
            in_label = label.find
            for term in terms:
                if in_label(term) >= 0:
                    points += 2
        if points:
            hits.append((points, at))
    return hits


def render(step: BlocksRead, blocks: BlockSet, hits: list[tuple[int, int]]) -> str:
    """The output for the (score, position) hits over ``blocks``, in any order.

    Highest score first, then the most recent: positions follow the seqs.
    """
    hits.sort(reverse=True)
    return step.output([(points, blocks.block(at)) for points, at in hits[: step.limit]], len(hits))


class Searcher:
    """A host's searches: each set scored by a scan, or through a WordIndex kept for the
    sets read again, within ``budget`` bytes together with the set.

    A set of ``index_from`` bytes of images or more gets indexed when it is searched
    again (``again``: a 304, or a 200 that kept most of the set before) and the scans
    of such sets have cost what indexing it costs (``INDEX_COST``; ``index_cost=0``:
    at once): its blocks already indexed keep their slots, the others are added. The
    index is built anew when dead slots (blocks gone from the sets) outnumber the
    living, and dropped when it would not fit the budget.
    Safe for threads and tasks: one search uses the index at a time, the others
    scan (a lock that is never waited for).
    """

    def __init__(
        self, budget: int, *, index_from: int = INDEX_FROM, index_cost: int = INDEX_COST
    ) -> None:
        self._budget = budget
        self._index_from = index_from
        self._index_cost = index_cost
        self._scanned = 0  # terms scanned over sets searched again, since the last index
        self._index: WordIndex | None = None
        self._ratio = INDEX_BYTES_PER_IMAGE_BYTE  # raised when an index proves larger
        self._lock = threading.Lock()

    @property
    def held(self) -> int:
        """Bytes held by the index, approximately."""
        index = self._index
        return 0 if index is None else index.size

    def search(self, step: BlocksRead, blocks: BlockSet, *, again: bool) -> str:
        """The output of ``step`` over every block of ``blocks``."""
        terms = terms_as_bytes(step.terms)
        if terms is None:  # never from recall_search: its terms are recallTokens'
            return step.finish(blocks.blocks())
        if self._lock.acquire(blocking=False):
            try:
                index = self._indexed(blocks, again=again, terms=len(terms))
                if index is not None:
                    return render(step, blocks, index.hits(terms, blocks.positions()))
            finally:
                self._lock.release()
        return render(step, blocks, scan(blocks.images, terms))

    def _indexed(self, blocks: BlockSet, *, again: bool, terms: int) -> WordIndex | None:
        """The index with every block of ``blocks`` in it, or None (scan them)."""
        index = self._index
        slots = blocks.slots
        if index is None or blocks.index is not index:
            if not again or blocks.image_bytes < self._index_from:
                return None  # only a large set searched again is worth an index
            if self._scanned < self._index_cost:
                self._scanned += terms  # this search scans: the rent
                return None
            self._scanned = 0
            index, slots = index or WordIndex(), [-1] * len(blocks)
        missing = [at for at, slot in enumerate(slots) if slot < 0]
        if index.count + len(missing) > 2 * len(blocks) + _SPARE_SLOTS:
            # Mostly slots of blocks gone from the sets: an index anew for this set.
            index, slots, missing = WordIndex(), [-1] * len(blocks), list(range(len(blocks)))
        if missing:
            images = blocks.images
            added = (
                blocks.image_bytes
                if len(missing) == len(blocks)
                else sum(len(images[at][0]) + len(images[at][1]) for at in missing)
            )
            if blocks.size + index.size + self._ratio * added > self._budget:
                self._index = None
                return None
            before = index.size
            for at in missing:
                slots[at] = index.add(images[at])
            if added:
                self._ratio = max(self._ratio, (index.size - before) / added)
        if missing or blocks.index is not index:
            blocks.assign(index, slots)
        if blocks.size + index.size > self._budget:
            self._index = None
            blocks.assign(None, [-1] * len(blocks))
            return None
        self._index = index
        return index
