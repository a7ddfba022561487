# ruff: noqa: RUF001, RUF003  (the look-alike runes are the point)
"""The word index gives exactly what scoring every block gives.

- ``WordIndex.hits`` against ``scan`` (each image searched with bytes.find) and against
  ``score`` (the contract's own: ``t in strings.ToLower(s)``), on adversarial blocks:
  terms of two runes, Latin-1 accents, the five wide runes whose Go lower is Latin-1
  (İ, Ÿ, ẞ, K, Å), ``?`` (what a wider rune becomes in an image), separators inside
  and around words;
- ``Searcher`` over sets read one after the other (blocks added, removed, changed,
  the same again), indexed as a host indexes them, against ``BlocksRead.finish``;
- one block added costs its own words, not a rebuild; the index's size is about
  what it holds.
"""

from __future__ import annotations

import json
import sys
import tracemalloc

from hypothesis import example, given, settings
from hypothesis import strategies as st

from recall import Block
from recall._blocks import BlockSet, read_set
from recall._index import Searcher, WordIndex
from recall._tools import (
    BlocksRead,
    latin1_images,
    recall_tokens,
    scan,
    score,
    start_tool,
    terms_as_bytes,
)

from .mockgo import go_body

# Runes around every edge of the images: the wide runes whose Go lower is Latin-1,
# Latin-1 letters and signs (× ÷ ß µ ÿ), "?", wider letters, astral runes, separators.
EDGE = "aAbBzZ09?éÉàÀÿŸİiKkÅåẞß×÷µΣσЖж€😀 \n\t-_.,"
TEXT = st.text(alphabet=st.sampled_from(EDGE), max_size=30)
BLOCKS = st.lists(st.tuples(TEXT, TEXT), max_size=8)
# Terms as recallTokens makes them: runes a-z, 0-9, U+00E0..U+00FF, two or more.
TERM = st.text(alphabet=st.sampled_from("abzk09éàÿå÷ik"), min_size=2, max_size=4)
TERMS = st.lists(TERM, min_size=1, max_size=4, unique=True)


def images_of(blocks: list[tuple[str, str]]) -> list[tuple[bytes, bytes]]:
    return [
        latin1_images(Block(seq, label, content)) for seq, (label, content) in enumerate(blocks, 1)
    ]


def indexed(images: list[tuple[bytes, bytes]]) -> tuple[WordIndex, dict[int, int]]:
    index = WordIndex()
    positions = {index.add(image): at for at, image in enumerate(images)}
    return index, positions


@settings(max_examples=500, deadline=None)
@given(BLOCKS, TERMS)
@example([("", "İK Ÿ Å ẞ")], ["ik", "ÿ" + "k", "åk"])
@example([("x", "a?b ab a-b")], ["ab"])
@example([("÷÷", "×÷× ß÷")], ["÷÷", "÷÷÷"])
@example([("", "Kelvin KELVIN")], ["ke", "kelvin"])
def test_index_hits_are_the_scores_of_every_block(
    blocks: list[tuple[str, str]], terms: list[str]
) -> None:
    images = images_of(blocks)
    needles = terms_as_bytes(terms)
    index, positions = indexed(images)
    got = sorted(index.hits(needles, positions))
    assert got == sorted(scan(images, needles))
    # ... and the contract's own scoring, over strings.ToLower.
    expected = [
        (points, at)
        for at, (label, content) in enumerate(blocks)
        if (points := score(Block(at + 1, label, content), terms))
    ]
    assert got == sorted(expected)


@settings(max_examples=200, deadline=None)
@given(BLOCKS, st.text(alphabet=st.sampled_from(EDGE + "ÉÀ"), min_size=1, max_size=12))
def test_index_hits_for_any_query(blocks: list[tuple[str, str]], query: str) -> None:
    terms = recall_tokens(query)
    needles = terms_as_bytes(terms)
    images = images_of(blocks)
    index, positions = indexed(images)
    assert sorted(index.hits(needles, positions)) == sorted(scan(images, needles))


def test_only_the_sets_own_slots_count() -> None:
    images = images_of([("", "alpha beta"), ("", "alpha"), ("", "beta")])
    index, _ = indexed(images)
    # A set holding the second and third blocks only, at its positions 0 and 1.
    assert sorted(index.hits([b"alpha", b"beta"], {1: 0, 2: 1})) == [(1, 0), (1, 1)]
    assert index.hits([b"alpha"], {}) == []


# The Searcher over sets read one after the other, as a host reads them.

SEQS = st.integers(min_value=1, max_value=12)
ARCHIVES = st.dictionaries(SEQS, st.tuples(TEXT, TEXT), max_size=8)


@settings(max_examples=150, deadline=None)
@given(st.lists(ARCHIVES, min_size=1, max_size=4), st.lists(TERMS, min_size=1, max_size=3))
def test_searcher_over_changing_sets_is_the_tools_search(
    archives: list[dict[int, tuple[str, str]]], queries: list[list[str]]
) -> None:
    searcher = Searcher(1 << 30, index_from=0, index_cost=0)
    kept: BlockSet | None = None
    for archive in archives:
        body = go_body([(seq, label, content) for seq, (label, content) in sorted(archive.items())])
        blocks = read_set(bytearray(body), kept)
        for terms in queries:
            step = BlocksRead(" ".join(terms), terms, 20)
            expected = step.finish(list(blocks.view()))
            for again in (False, True, True):  # scanned, then indexed, then indexed again
                assert searcher.search(step, blocks, again=again) == expected
            assert searcher.index_of(blocks) is not None
        kept = blocks


def test_searcher_indexes_a_set_once_it_is_searched_again() -> None:
    body = go_body([(1, "Notes", "alpha beta"), (2, "", "gamma")])
    blocks = read_set(bytearray(body))
    searcher = Searcher(1 << 20, index_from=0, index_cost=0)
    step = start_tool("recall_search", json.dumps({"query": "alpha gamma"}))
    assert isinstance(step, BlocksRead)
    searcher.search(step, blocks, again=False)
    assert searcher.index_of(blocks) is None
    searcher.search(step, blocks, again=True)
    index = searcher.index_of(blocks)
    assert index is not None
    assert index.count == 2


def test_a_small_set_is_scanned_not_indexed() -> None:
    body = go_body([(1, "Notes", "alpha beta"), (2, "", "gamma")])
    blocks = read_set(bytearray(body))
    step = BlocksRead("alpha", ["alpha"], 5)
    searcher = Searcher(1 << 20, index_from=blocks.image_bytes + 1, index_cost=0)
    for _ in range(3):
        assert searcher.search(step, blocks, again=True) == step.finish(list(blocks.view()))
    assert searcher.index_of(blocks) is None


def test_a_set_is_indexed_once_its_scans_cost_what_the_index_costs() -> None:
    """Ski rental: sets searched again are scanned until the terms scanned add up to
    ``index_cost``; then the set is indexed, and every search after uses the index."""
    blocks = read_set(bytearray(go_body([(1, "Notes", "alpha beta gamma"), (2, "", "delta")])))
    step = BlocksRead("alpha beta gamma delta", ["alpha", "beta", "gamma", "delta"], 5)
    searcher = Searcher(1 << 20, index_from=0, index_cost=10)
    expected = step.finish(list(blocks.view()))
    assert searcher.search(step, blocks, again=False) == expected  # a first read: no rent
    indexed = []
    for _ in range(6):
        assert searcher.search(step, blocks, again=True) == expected
        indexed.append(searcher.index_of(blocks) is not None)
    # Scanned 4 terms three times (12 >= 10): the fourth search again builds the index.
    assert indexed == [False, False, False, True, True, True]


def test_one_block_added_costs_its_own_words_only() -> None:
    items = [
        (seq, f"label {seq}", f"contenu {seq} déploiement échec " * 20) for seq in range(1, 501)
    ]
    first = read_set(bytearray(go_body(items)))
    searcher = Searcher(1 << 30, index_from=0, index_cost=0)
    step = BlocksRead("contenu", ["contenu"], 5)
    searcher.search(step, first, again=True)
    index = searcher.index_of(first)
    assert index is not None
    assert index.count == 500
    more = read_set(bytearray(go_body([*items, (501, "new", "nouveau contenu")])), first)
    assert more.reused == 500
    assert more.lineage is first.lineage  # the kept blocks keep their slots
    assert "1 of 501" not in searcher.search(step, more, again=True)
    assert searcher.index_of(more) is index
    assert index.count == 501  # one slot added, nothing indexed again


def test_a_set_past_the_bound_is_scanned_not_indexed() -> None:
    items = [(seq, "label", f"contenu {seq} " * 50) for seq in range(1, 51)]
    blocks = read_set(bytearray(go_body(items)))
    step = BlocksRead("contenu", ["contenu"], 5)
    searcher = Searcher(
        blocks.size + 10, index_from=0, index_cost=0
    )  # the set fits, its index would not
    expected = step.finish(list(blocks.view()))
    assert searcher.search(step, blocks, again=True) == expected
    assert searcher.index_of(blocks) is None
    assert searcher.held == 0


def test_dead_slots_make_the_index_anew() -> None:
    searcher = Searcher(1 << 30, index_from=0, index_cost=0)
    step = BlocksRead("contenu", ["contenu"], 5)
    kept: BlockSet | None = None
    for round_ in range(4):
        # Every round a new Go at the same URL: all blocks other bytes, none reused.
        items = [(seq, "l", f"contenu {seq} round {round_} " * 5) for seq in range(1, 3001)]
        blocks = read_set(bytearray(go_body(items)), kept)
        assert searcher.search(step, blocks, again=True) == step.finish(list(blocks.view()))
        index = searcher.index_of(blocks)
        assert index is not None
        assert index.count <= 2 * 3000 + 4096
        kept = blocks


def test_the_size_of_an_index_is_about_the_real_size() -> None:
    contents = [
        f"contenu réel {seq} mot{seq % 97} " + "déploiement échec " * 40 for seq in range(2000)
    ]
    images = [latin1_images(Block(seq, f"label {seq}", c)) for seq, c in enumerate(contents, 1)]
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        index, _ = indexed(images)
        after = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    assert 0.6 < index.size / (after - before) < 1.5, (index.size, after - before)
    assert index.size < sum(len(c) + len(lab) for c, lab in images)  # smaller than the images


def test_index_size_counts_words_once() -> None:
    index = WordIndex()
    index.add((b"alpha beta alpha", b""))
    size = index.size
    index.add((b"alpha beta", b""))
    assert index.size - size == 2 * 4  # two slots, no new word
    assert sys.getsizeof(index) > 0
