"""Incremental reads of /blocks (the contract's extension), against a Go in memory.

- Over histories of blocks archived, locked and unlocked, a host reading deltas gives
  the output of a fresh host for every search, its kept set is the set a full read
  gives, and every read after the first is a delta or a 304.
- A Go that forgets its history answers ``?since=`` in full: a whole set, whose
  blocks still match the kept ones by bytes, the delta's included.
- A bad delta fails the read (the fallback) and drops the kept set.
- The index follows the deltas: a block added costs one slot.
- ``warm()`` reads the set for the first search, and fails as a read does.
"""

from __future__ import annotations

import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from parity.fakego import go_json
from recall import Block, FallbackFailedError, GoUnavailableError, Shadow
from recall._blocks import (
    DELTA_GONE,
    DELTA_HELD,
    DELTA_ORDER,
    DELTA_SHAPE,
    DELTA_SINCE,
    BlockSet,
    head_of,
    read_set,
)
from recall._index import INDEX_FROM
from recall._protocol import BLOCKS_PATH
from recall._tools import excerpt

from .hosts import Host
from .mockgo import MockGo, cold, go_body, search

Items = list[tuple[int, str, str]]
QUERIES = [search("alpha"), search("beta gamma", 20), search("bloc 3"), search("zz")]
WORDS = st.sampled_from(["alpha", "beta", "gamma", "bloc", "3", "<&>", "é", "\u2028", "zz"])
TEXT = st.lists(WORDS, max_size=6).map(" ".join)

# A history: each step archives a block (a new seq), locks or unlocks one.
STEP = st.one_of(
    st.tuples(st.just("archive"), TEXT, TEXT),
    st.tuples(st.just("lock"), st.integers(0, 50)),
    st.tuples(st.just("unlock"), st.integers(0, 50)),
)


class Archive:
    """The blocks of a Go and which are locked; ``body`` is what /blocks serves."""

    def __init__(self) -> None:
        self.blocks: dict[int, tuple[str, str]] = {}
        self.locked: set[int] = set()
        self.next_seq = 1

    def apply(self, step: tuple[object, ...]) -> None:
        kind = step[0]
        if kind == "archive":
            self.blocks[self.next_seq] = (str(step[1]), str(step[2]))
            self.next_seq += 1
        elif self.blocks:
            seqs = sorted(self.blocks)
            seq = seqs[int(str(step[1])) % len(seqs)]
            (self.locked.add if kind == "lock" else self.locked.discard)(seq)

    @property
    def body(self) -> bytes:
        readable = [(s, *self.blocks[s]) for s in sorted(self.blocks) if s not in self.locked]
        return go_body(readable)


def kept_of(host: Host) -> BlockSet | None:
    return host.host._core._kept


def assert_same_set(got: BlockSet, body: bytes) -> None:
    fresh = read_set(bytearray(body))
    assert got.seqs == fresh.seqs
    assert got.heads == [head_of(b.seq, b.label, b.content) for b in fresh.view()]
    assert list(got.images) == list(fresh.images)
    if got.complete:
        assert list(got.view()) == list(fresh.view())


def delta_of(before: Items, after: Items, since: str) -> bytes:
    """The delta from the set ``before`` to ``after``, as Go encodes it."""
    old, new = {seq for seq, _, _ in before}, {seq for seq, _, _ in after}
    added = [{"seq": s, "label": lab, "content": c} for s, lab, c in after if s not in old]
    return go_json({"since": since, "blocks": added, "gone": sorted(old - new)})


@pytest.mark.parametrize("kind", ["sync", "async"])
@settings(max_examples=40, deadline=None)
@given(history=st.lists(STEP, min_size=1, max_size=12), forget=st.integers(0, 12))
def test_deltas_give_a_fresh_hosts_outputs(
    kind: str, history: list[tuple[object, ...]], forget: int
) -> None:
    archive = Archive()
    go = MockGo(archive.body, deltas=True)
    expected = ["full"]  # the first read
    with go.host(kind) as host:
        assert host.exec_tool("recall_search", QUERIES[0]) == cold(go.body, QUERIES[0])
        for at, step in enumerate(history):
            archive.apply(step)
            changed = archive.body != go.body
            go.body = archive.body
            if at == forget:
                go.forget()  # the next read of ?since= is answered in full
            for query in QUERIES:
                assert host.exec_tool("recall_search", query) == cold(go.body, query)
            expected += [("full" if at == forget else "delta") if changed else "304"]
            expected += ["304"] * (len(QUERIES) - 1)
            kept = kept_of(host)
            assert kept is not None
            assert_same_set(kept, go.body)
    assert go.kinds == expected
    assert all(sent is not None for sent, _ in go.reads[1:])


def test_a_full_answer_after_deltas_reuses_every_block() -> None:
    """The blocks a delta added match the full answer's by their fields; the rest by bytes
    (a set kept whole: a host with a shadow keeps its sets so)."""
    items: Items = [(seq, f"l{seq}", f"contenu {seq}") for seq in range(1, 11)]
    first = read_set(bytearray(go_body(items)), tag='"t1"')
    after: Items = [*items[:4], *items[5:], (11, "new", "contenu neuf")]
    after_delta = read_set(
        bytearray(delta_of(items, after, '"t1"')), first, tag='"t2"', sent='"t1"'
    )
    assert after_delta.complete
    assert after_delta.raw is first.raw
    assert_same_set(after_delta, go_body(after))
    again = [*items, (11, "new", "contenu neuf")]  # seq 5 unlocked, and the Go forgot
    full = read_set(bytearray(go_body(again)), after_delta, tag='"t3"')
    assert full.reused == 10  # all but seq 5, which the set after the delta lacked
    assert full.lineage is not after_delta.lineage  # seq 5 came back: a new lineage
    assert_same_set(full, go_body(again))


def test_a_full_answer_after_an_added_block_stays_in_the_lineage() -> None:
    items: Items = [(seq, f"l{seq}", f"contenu {seq}") for seq in range(1, 6)]
    first = read_set(bytearray(go_body(items)), tag='"t1"')
    after: Items = [*items, (6, "new", "contenu neuf")]
    after_delta = read_set(
        bytearray(delta_of(items, after, '"t1"')), first, tag='"t2"', sent='"t1"'
    )
    full = read_set(bytearray(go_body([*after, (7, "", "x")])), after_delta, tag='"t3"')
    assert full.reused == 6  # the delta's block 6 too
    assert full.lineage is after_delta.lineage


UNIVERSE = st.dictionaries(st.integers(1, 30), st.tuples(TEXT, TEXT), max_size=15)


@settings(max_examples=150, deadline=None)
@given(UNIVERSE, st.lists(st.sets(st.integers(1, 30)), min_size=3, max_size=3), st.booleans())
def test_deltas_applied_one_after_the_other_give_the_fresh_set(
    blocks: dict[int, tuple[str, str]], readable: list[set[int]], go_form: bool
) -> None:
    """Blocks gone and added anywhere, to a set with its body (Go's form) or read whole,
    then each set with a body read again: every set the one a fresh read gives, and every
    item of a re-read reused."""
    before, middle, after = ([(s, *blocks[s]) for s in sorted(r & set(blocks))] for r in readable)
    body = go_body(before)
    first = read_set(bytearray(body if go_form else body.replace(b"},{", b"}, {")), tag='"1"')
    for compact in (False, True):
        steps = [(first, before)]
        for items, tag in ((middle, '"2"'), (after, '"3"')):
            kept, was = steps[-1]
            delta = bytearray(delta_of(was, items, kept.tag or ""))
            steps.append((read_set(delta, kept, tag=tag, sent=kept.tag, compact=compact), items))
        for got, items in steps:
            assert_same_set(got, go_body(items))
            assert got.complete != (compact and got is not first)
            if got.raw is not None:
                again = read_set(bytearray(go_body(items)), got)
                assert again.reused == len(items)
                assert_same_set(again, go_body(items))


# What a host keeps, by the extensions of its Go: for the first read and two changes, the
# answer, whether the set kept holds the body (or Blocks), and the blocks a re-read reused
# by their bytes. A set is kept whole only where a whole re-read may come.
KEEPING: dict[str, tuple[dict[str, bool], list[tuple[str, bool, int]]]] = {
    "plain": ({}, [("full", True, 0), ("full", True, 48), ("full", True, 48)]),
    "conditional": (  # its first change is read in full; from then on, the bytes reused
        {"etag": True},
        [("full", False, 0), ("full", True, 0), ("full", True, 48)],
    ),
    "deltas": ({"deltas": True}, [("full", False, 0), ("delta", False, 0), ("delta", False, 0)]),
    "deltas-forgetting": (  # the Go forgets its history before the first change
        {"deltas": True, "forget": True},
        [("full", False, 0), ("full", True, 0), ("delta", False, 0)],
    ),
    "deltas-shadow": (  # a shadow needs the Blocks
        {"deltas": True, "shadow": True},
        [("full", True, 0), ("delta", True, 0), ("delta", True, 0)],
    ),
}


@pytest.mark.parametrize("kind", ["sync", "async"])
@pytest.mark.parametrize("go_kind", list(KEEPING))
def test_a_host_keeps_the_body_only_where_a_whole_re_read_may_come(kind: str, go_kind: str) -> None:
    options, expected = KEEPING[go_kind]
    # Blocks of the bench's size (2.4 KB), half of their runes not ASCII.
    items: Items = [
        (seq, f"l{seq}", f"contenu {seq} " + "mot échec " * 240) for seq in range(1, 50)
    ]
    bodies = [
        go_body(items),
        go_body([*items[1:], (50, "new", "contenu neuf")]),
        go_body([*items[2:], (50, "new", "contenu neuf"), (51, "", "contenu")]),
    ]
    go = MockGo(bodies[0], etag=options.get("etag", False), deltas=options.get("deltas", False))
    shadow = {"shadow": Shadow(rate=1.0)} if options.get("shadow") else {}
    got = []
    with go.host(kind, **shadow) as host:
        for at, body in enumerate(bodies):
            go.body = body
            if at == 1 and options.get("forget"):
                go.forget()
            assert host.exec_tool("recall_search", search("contenu")) == cold(
                body, search("contenu")
            )
            kept = kept_of(host)
            assert kept is not None
            assert_same_set(kept, body)
            got.append((go.kinds[-1], kept.complete, kept.reused))
            if not kept.complete:
                assert kept.size < 1.5 * len(body)
                assert kept.size < 0.7 * read_set(bytearray(body)).size
    assert got == expected


def test_the_index_follows_the_deltas() -> None:
    items: Items = [
        (seq, f"label {seq}", f"contenu {seq} " + "déploiement échec " * 70)
        for seq in range(1, 1001)
    ]
    go = MockGo(go_body(items), deltas=True)
    query = search("contenu")
    with go.host("sync", cache_bytes=1 << 30) as host:
        searcher = host.host._core._searcher
        first = kept_of(host)
        while first is None or searcher.index_of(first) is None:
            host.exec_tool("recall_search", query)
            first = kept_of(host)
        assert first.image_bytes >= INDEX_FROM
        index = searcher.index_of(first)
        assert index is not None
        assert index.count == 1000
        items = [*items[1:], (1001, "new", "contenu neuf")]  # seq 1 locked, 1001 archived
        go.body = go_body(items)
        assert host.exec_tool("recall_search", query) == cold(go.body, query)
        after = kept_of(host)
        assert after is not None
        assert after is not first
        assert searcher.index_of(after) is index
        assert index.count == 1001  # one slot added, nothing indexed again
        assert go.kinds[-1] == "delta"


def _spoil(kind: str) -> dict[str, object]:
    block = {"seq": 2, "label": "", "content": "alpha"}
    return {
        "since": {"since": '"another"'},
        "gone": {"gone": [99]},
        "held": {"blocks": [{"seq": 1, "label": "", "content": "alpha"}]},
        "order": {"blocks": [{**block, "seq": 3}, block]},
        "shape": {"gone": ["1"]},
    }[kind]


@pytest.mark.parametrize("kind", ["sync", "async"])
@pytest.mark.parametrize(
    ("spoil", "why"),
    [
        ("since", DELTA_SINCE),
        ("gone", DELTA_GONE),
        ("held", DELTA_HELD),
        ("order", DELTA_ORDER),
        ("shape", DELTA_SHAPE),
    ],
)
def test_a_bad_delta_fails_the_read_and_drops_the_set(kind: str, spoil: str, why: str) -> None:
    go = MockGo(go_body([(1, "", "alpha")]), deltas=True, tamper=lambda d: {**d, **_spoil(spoil)})
    with go.host(kind) as host:
        host.exec_tool("recall_search", search("alpha"))
        go.body = go_body([(1, "", "alpha"), (2, "", "beta")])
        with pytest.raises(FallbackFailedError) as caught:  # the mock's /tool/exec is down
            host.exec_tool("recall_search", search("alpha"))
        assert caught.value.read_error.why == why
        assert kept_of(host) is None
        go.tamper = None
        host.exec_tool("recall_search", search("alpha"))  # read in full: nothing kept to send
    assert go.reads[-1][0] is None
    assert go.kinds == ["full", "delta", "full"]


# warm(): the set read before the first search.


@pytest.mark.parametrize("kind", ["sync", "async"])
def test_warm_reads_the_set_for_the_first_search(kind: str) -> None:
    items: Items = [(seq, f"l{seq}", f"alpha {seq}") for seq in range(1, 30)]
    go = MockGo(go_body(items), deltas=True)
    with go.host(kind) as host:
        assert host.warm() is None  # never an output
        warmed = kept_of(host)
        assert warmed is not None
        assert_same_set(warmed, go.body)
        assert host.exec_tool("recall_search", search("alpha")) == cold(go.body, search("alpha"))
        assert kept_of(host) is warmed
    assert go.kinds == ["full", "304"]


@pytest.mark.parametrize("kind", ["sync", "async"])
def test_warm_fails_as_a_read_does(kind: str) -> None:
    def down(request: httpx.Request) -> httpx.Response:
        return httpx.Response(503, text="unavailable")

    with (
        Host(kind, "http://go.test", transport=httpx.MockTransport(down)) as host,
        pytest.raises(GoUnavailableError) as caught,
    ):
        host.warm()
    assert (caught.value.what, caught.value.why) == (f"GET {BLOCKS_PATH}", "status 503")
    assert not isinstance(caught.value, FallbackFailedError)  # no fallback: no output


# Past cache_bytes: what fits is kept, said once.


@pytest.mark.parametrize("kind", ["sync", "async"])
def test_past_cache_bytes_the_set_is_kept_compacted(
    kind: str, caplog: pytest.LogCaptureFixture
) -> None:
    items: Items = [(s, f"l{s}", f"contenu {s} " + "mot échec " * 240) for s in range(1, 50)]
    whole = read_set(bytearray(go_body(items)))
    compact = whole.compacted()
    go = MockGo(go_body(items))  # no tag: a set is kept whole where it fits
    with go.host(kind, cache_bytes=(whole.size + compact.size) // 2) as host:
        for query in (search("contenu"), search("l7 échec"), search("contenu 3")):
            assert host.exec_tool("recall_search", query) == cold(go.body, query)
        kept = kept_of(host)
        assert kept is not None
        assert not kept.complete
        assert_same_set(kept, go.body)
    assert go.statuses == [200, 200, 200]
    said = [r for r in caplog.records if r.name == "recall"]
    assert len(said) == 1
    assert "past cache_bytes" in said[0].getMessage()
    assert "only what searches need is kept" in said[0].getMessage()


@pytest.mark.parametrize("kind", ["sync", "async"])
def test_past_cache_bytes_even_compacted_nothing_is_kept(
    kind: str, caplog: pytest.LogCaptureFixture
) -> None:
    items: Items = [(s, f"l{s}", f"contenu {s} " + "mot " * 100) for s in range(1, 20)]
    go = MockGo(go_body(items), etag=True)
    with go.host(kind, cache_bytes=1000) as host:
        for query in (search("contenu"), search("contenu 3")):
            assert host.exec_tool("recall_search", query) == cold(go.body, query)
        assert kept_of(host) is None
    assert go.statuses == [200, 200]
    said = [r.getMessage() for r in caplog.records if r.name == "recall"]
    assert len(said) == 1
    assert "nothing is kept" in said[0]


@settings(max_examples=300, deadline=None)
@given(
    label=st.text(max_size=5),
    content=st.text(
        alphabet=st.sampled_from(" \t\n\u2028\u3000\u0085ab\u00e9\u2026."), max_size=400
    ),
)
def test_a_head_renders_as_its_block(label: str, content: str) -> None:
    block = Block(7, label, content)
    head = head_of(block.seq, block.label, block.content)
    assert (head.seq, head.label) == (7, label)
    assert excerpt(head.content) == excerpt(content)
    assert len(head.content) <= 161
