"""recall_search over a BlockSet: its terms as the images' bytes, every block scored by a
scan of its images, the hits ranked and rendered as ``BlocksRead.finish`` does.

``recall._index.Searcher`` chooses, for each search, between ``scan`` and a word
index of the set; either gives the same hits, and ``render`` the output. Every
search scores every block of its set: nothing of an output is kept.
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence

from recall._blocks import BlockSet
from recall._tools import _TERMS, BlocksRead

__all__ = ["render", "scan", "terms_as_bytes"]


def terms_as_bytes(terms: Sequence[str]) -> list[bytes] | None:
    """recallTokens' terms as Latin-1 bytes (as the images hold them), or None for terms
    that are not recallTokens' (runes a-z, 0-9, U+00E0..U+00FF, two or more)."""
    found: list[bytes] = []
    for term in terms:
        if _TERMS.fullmatch(term) is None:
            return None
        found.append(bytes(term, "latin-1"))
    return found


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
    shown = heapq.nlargest(step.limit, hits, key=_hit_rank)
    return step.output([(points, blocks.block(at)) for points, at in shown], len(hits))


def _hit_rank(hit: tuple[int, int]) -> tuple[int, int]:
    """A hit's rank, highest first: its score, then its position (the most recent seq)."""
    points, at = hit
    return (points, at)
