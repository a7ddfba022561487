"""recall_search's output over a BlockSet: the hits ranked and rendered as
``BlocksRead.finish`` does.

``recall._index.Searcher`` chooses, for each search, between ``recall._tools.scan``
and a word index of the set; either gives the same hits, and ``render`` the output. Every
search scores every block of its set: nothing of an output is kept.
"""

from __future__ import annotations

import heapq

from recall._blocks import BlockSet
from recall._tools import BlocksRead

__all__ = ["render"]


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
