"""The set a host keeps between searches (``cache_bytes``) and its conditional reads of /blocks.

A search through a host that keeps its last set must give exactly what a fresh
host that keeps nothing gives for the archive as the Go serves it now: same
blocks, same order, same output, whatever changed in between (blocks archived,
locked, unlocked, another Go behind the URL reusing the seqs). A 304 reuses the
set as it is (decoded, lowered, indexed); a 200 reuses the blocks whose bytes are
the same, and only those. Every test of a host runs over each kind of host.
"""

from __future__ import annotations

import asyncio
import random
import sys
import threading
import tracemalloc
from collections.abc import Callable

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from recall import AsyncGoTurnHost, Block, GoTurnHost
from recall._blocks import BlockSet, head_of, read_set
from recall._index import INDEX_COST, INDEX_FROM, WordIndex
from recall._protocol import BLOCKS_PATH
from recall._tools import latin1_images

from .hosts import Host
from .mockgo import BASE, MockGo, cold, go_body, search

Items = list[tuple[int, str, str]]

BLOCKS_A: Items = [
    (1, "Déploiement", "Échec du DÉPLOIEMENT\nPostgreSQL délai dépassé"),
    (2, "", "<b>backup</b> nocturne & Zürich"),
    (3, "İstanbul KELVIN", "K sign, İ, Σ final ΣΑΣ\u2028sep"),
    (5, "notes", "\n\n   \n  first line  \nsecond"),
    (8, "emoji", "😀 backup du déploiement"),
]
QUERIES = [
    search("déploiement backup"),
    search("istanbul kelvin zürich", 1),
    search("nocturne postgresql emoji first", 20),
    search("absent words"),
]


def kept_of(host: Host) -> BlockSet | None:
    """The set the host keeps."""
    return host.host._core._kept


def index_of(host: Host, blocks: BlockSet) -> WordIndex | None:
    """The host's index of ``blocks``, when it has one."""
    return host.host._core._searcher.index_of(blocks)


def blocks_of(items: Items) -> list[Block]:
    return [Block(seq, label, content) for seq, label, content in items]


@pytest.mark.parametrize("etag", [False, True], ids=["plain-go", "etag-go"])
def test_repeated_search_equals_cold_host(host_kind: str, etag: bool) -> None:
    body = go_body(BLOCKS_A)
    go = MockGo(body, etag=etag)
    with go.host(host_kind) as host:
        for _ in range(3):
            for args in QUERIES:
                assert host.exec_tool("recall_search", args) == cold(body, args)
        kept = kept_of(host)
    searches = 3 * len(QUERIES)
    assert len(go.reads) == searches  # /blocks is read on every search
    if etag:
        assert go.reads == [(None, 200)] + [(go.tag, 304)] * (searches - 1)
    else:
        assert go.reads == [(None, 200)] * searches  # no tag, nothing conditional
    assert kept is not None
    assert kept.seqs == [seq for seq, _, _ in BLOCKS_A]
    assert kept.heads == [head_of(b.seq, b.label, b.content) for b in blocks_of(BLOCKS_A)]
    assert kept.complete != etag  # a conditional Go's set: images and heads alone


def test_a_304_reuses_the_set_decoded_lowered_and_indexed(host_kind: str) -> None:
    # Enough bytes of images for the host to index the set, once its scans cost as much.
    items = [
        (seq, f"label {seq}", f"contenu {seq} " + "déploiement échec " * 70)
        for seq in range(1, 1001)
    ]
    go = MockGo(go_body(items), etag=True)
    args = search("contenu déploiement échec label")  # four terms
    with go.host(host_kind) as host:
        host.exec_tool("recall_search", args)
        first = kept_of(host)
        assert first is not None
        assert first.image_bytes >= INDEX_FROM
        scans = 0
        while index_of(host, first) is None:  # scanned until the terms scanned pay for an index
            assert host.exec_tool("recall_search", args) == cold(go.body, args)
            assert kept_of(host) is first  # the very set, read through a 304
            scans += 1
        assert scans == -(-INDEX_COST // 4) + 1
        index = index_of(host, first)
        assert index is not None
        assert index.count == len(items)
        for query in QUERIES:
            assert host.exec_tool("recall_search", query) == cold(go.body, query)
        # Nothing decoded, lowered or indexed again: the very set, the very index.
        assert kept_of(host) is first
        assert index_of(host, first) is index
        assert index.count == len(items)
    assert go.statuses == [200] + [304] * (scans + len(QUERIES))


# What a 200 reuses: exactly the items whose bytes are unchanged.

CHANGES: dict[str, Callable[[Items], Items]] = {
    "same": lambda items: items,
    "one-appended": lambda items: [*items, (items[-1][0] + 1, "new", "nouveau backup")],
    "middle-locked": lambda items: items[:2] + items[3:],
    "first-locked": lambda items: items[1:],
    "last-locked": lambda items: items[:-1],
    "unlocked-in-the-middle": lambda items: sorted(
        [*items, (items[len(items) // 2][0] + 1, "back", "unlocked again")]
    ),
    "same-seq-other-bytes": lambda items: [
        (s, lab, c + "!" if s == 3 else c) for s, lab, c in items
    ],
    "other-go-same-seqs": lambda items: [(s, lab, "autre " + c) for s, lab, c in items],
    "emptied": lambda items: [],
}


def many_items(n: int) -> Items:
    """n blocks of about 1 KB, every other seq: several of the reuse's comparison chunks."""
    return [
        (seq, f"label {seq}", f"contenu numéro {seq} déploiement " * 30)
        for seq in range(2, 2 * n, 2)
    ]


@pytest.mark.parametrize("change", CHANGES, ids=list(CHANGES))
@pytest.mark.parametrize("before", [BLOCKS_A, many_items(400)], ids=["few", "many"])
def test_a_read_reuses_exactly_the_unchanged_items(change: str, before: Items) -> None:
    after = CHANGES[change](before)
    kept = read_set(bytearray(go_body(before)))
    got = read_set(bytearray(go_body(after)), kept)
    assert list(got.view()) == blocks_of(after)
    assert got.seqs == [seq for seq, _, _ in after]
    unchanged = set(before)
    assert got.reused == sum(item in unchanged for item in after)
    for at, item in enumerate(after):
        expected = latin1_images(Block(*item))
        assert got.images[at] == expected


def test_a_body_not_in_gos_form_is_decoded_whole_and_reuses_nothing() -> None:
    spaced = go_body(BLOCKS_A).replace(b'},{"', b'}, {"')
    kept = read_set(bytearray(go_body(BLOCKS_A)))
    got = read_set(bytearray(spaced), kept)
    assert list(got.view()) == blocks_of(BLOCKS_A)
    assert got.raw is None
    assert got.reused == 0
    again = read_set(bytearray(go_body(BLOCKS_A)), got)  # a set without a body to compare
    assert list(again.view()) == blocks_of(BLOCKS_A)
    assert again.reused == 0


def test_same_seqs_other_bytes_never_stale(host_kind: str) -> None:
    """Another Go at the same URL, reusing the seqs with other blocks."""
    body_a = go_body(BLOCKS_A)
    blocks_b = [
        (1, "Backup", "autre contenu, backup"),
        (2, "", "<b>backup</b> nocturne & Zurich"),  # one letter less
        (3, "İstanbul KELVIN", "K sign, İ, Σ final ΣΑΣ\u2028sep"),  # the same
        (5, "notes", "première ligne backup"),
        (9, "new", "backup déploiement"),
    ]
    body_b = go_body(blocks_b)
    args = search("backup zurich zürich déploiement kelvin ligne", 20)
    expected_a, expected_b = cold(body_a, args), cold(body_b, args)
    assert expected_a != expected_b
    for etag in (False, True):
        go = MockGo(body_a, etag=etag)
        outputs = []
        with go.host(host_kind) as host:
            for body in (body_a, body_a, body_b, body_b, body_a):
                go.body = body
                outputs.append(host.exec_tool("recall_search", args))
        assert outputs == [expected_a, expected_a, expected_b, expected_b, expected_a]


def test_two_hosts_on_two_gos_never_share_a_set(host_kind: str) -> None:
    """Two Gos whose tags are the same strings: each host keeps its own set, so neither
    is ever answered from the other's blocks."""
    body_a, body_b = go_body(BLOCKS_A), go_body(BLOCKS_A[:2])
    go_a, go_b = MockGo(body_a, etag=True), MockGo(body_b, etag=True)
    assert go_a.tag == go_b.tag
    with go_a.host(host_kind) as host_a, go_b.host(host_kind) as host_b:
        for _ in range(2):
            for args in QUERIES:
                assert host_a.exec_tool("recall_search", args) == cold(body_a, args)
                assert host_b.exec_tool("recall_search", args) == cold(body_b, args)
        assert kept_of(host_a) is not kept_of(host_b)
    for go in (go_a, go_b):
        assert go.statuses == [200] + [304] * (2 * len(QUERIES) - 1)


# The bound.


@pytest.mark.parametrize("cache_bytes", [0, 1000])
def test_a_set_past_the_bound_is_not_kept(host_kind: str, cache_bytes: int) -> None:
    body = go_body(BLOCKS_A)
    go = MockGo(body, etag=True)
    with go.host(host_kind, cache_bytes=cache_bytes) as host:
        for args in QUERIES:
            assert host.exec_tool("recall_search", args) == cold(body, args)
        assert kept_of(host) is None
    assert go.reads == [(None, 200)] * len(QUERIES)  # nothing kept: nothing conditional


def test_the_size_of_a_set_is_about_the_real_size() -> None:
    items = [(seq, "étiquette", f"contenu réel {seq} — " * 100) for seq in range(1, 201)]
    body = go_body(items)
    buffer = bytearray(body)
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        kept = read_set(buffer)
        after = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    held = after - before + sys.getsizeof(buffer)  # the body is the set's own now
    assert 0.7 < kept.size / held < 1.4, (kept.size, held)


def test_cache_bytes_negative_refused(host_kind: str) -> None:
    with pytest.raises(ValueError, match="cache_bytes"):
        Host(host_kind, BASE, cache_bytes=-1)


def test_invalid_items_still_fail_with_a_set_kept() -> None:
    kept = read_set(bytearray(go_body([(1, "a", "b")])))
    for body in (
        b'{"blocks":[{"seq":1,"label":"a","content":"b"},{"seq":0,"label":"","content":""}]}',
        go_body([(2, "a", "b"), (1, "a", "b")]),  # not by increasing seq
        go_body([(1, "a", "b"), (1, "a", "b")]),  # the kept item twice
    ):
        with pytest.raises(ValueError, match="not valid blocks"):
            read_set(bytearray(body), kept)


# The differential properties: sets read one after the other, against fresh decodings.

_TEXT = st.text(alphabet='abéÉ Ü\nİKΣ<&😀\u2028-\\"', max_size=20)
_BLOCK_SETS = st.dictionaries(
    st.integers(min_value=1, max_value=15), st.tuples(_TEXT, _TEXT), max_size=10
)
_QUERIES = st.lists(
    st.tuples(
        st.text(alphabet="abéÉüİK ", min_size=1, max_size=8),
        st.none() | st.integers(min_value=-1, max_value=25),
    ),
    min_size=1,
    max_size=3,
)


def _body(blocks: dict[int, tuple[str, str]], ascii_only: bool) -> bytes:
    return go_body(
        [(s, lab, con) for s, (lab, con) in sorted(blocks.items())], ascii_only=ascii_only
    )


@settings(max_examples=200, deadline=None)
@given(sets=st.lists(_BLOCK_SETS, min_size=1, max_size=4), ascii_only=st.booleans())
def test_each_read_decodes_what_a_fresh_read_decodes(
    sets: list[dict[int, tuple[str, str]]], ascii_only: bool
) -> None:
    kept: BlockSet | None = None
    for blocks in sets:
        body = _body(blocks, ascii_only)
        got = read_set(bytearray(body), kept)
        expected = list(read_set(bytearray(body)).view())
        assert list(got.view()) == expected
        assert list(got.images) == [latin1_images(b) for b in expected]
        kept = got


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    first=_BLOCK_SETS,
    changed=_BLOCK_SETS,
    queries=_QUERIES,
    cache_bytes=st.sampled_from([700, 3000, 1 << 20]),
    ascii_only=st.booleans(),
    etag=st.booleans(),
)
def test_repeated_searches_equal_fresh_hosts(
    first: dict[int, tuple[str, str]],
    changed: dict[int, tuple[str, str]],
    queries: list[tuple[str, int | None]],
    cache_bytes: int,
    ascii_only: bool,
    etag: bool,
    host_kind: str,
) -> None:
    # The changed set keeps some of the first set's seqs, with other bytes or the same.
    mixed = {**{s: b for s, b in first.items() if s % 3}, **changed}
    bodies = [_body(first, ascii_only), _body(first, ascii_only), _body(mixed, ascii_only)]
    go = MockGo(bodies[0], etag=etag)
    with go.host(host_kind, cache_bytes=cache_bytes) as host:
        for body in bodies:
            go.body = body
            for query, limit in queries:
                args = search(query, limit)
                assert host.exec_tool("recall_search", args) == cold(body, args)


# Threads and tasks: one host, its set replaced under them.

VERSIONS = [
    go_body(
        [(seq, f"label {seq} v{v}", f"contenu {seq} version {v} " * 15) for seq in range(1, 31)]
    )
    for v in range(3)
] + [go_body([(seq, f"label {seq}", f"contenu {seq} " * 15) for seq in range(1, 41, 2)])]
ARGS = [search("contenu version", 20), search("label 7 v1"), search("v2 contenu 29", 3)]


class Versions:
    """A Go answering each /blocks read with a version of its own choosing (tag "v<N>"):
    304 when the If-None-Match names it; ``served`` says what a call may give."""

    def __init__(self) -> None:
        self.versions: list[int] = []  # each answer's version, in order
        self.rng = random.Random(7)
        self.lock = threading.Lock()
        self.statuses: list[int] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        if request.url.path != BLOCKS_PATH:
            return httpx.Response(500)
        with self.lock:
            version = self.rng.randrange(len(VERSIONS))
            tag = f'"v{version}"'
            status = 304 if request.headers.get("if-none-match") == tag else 200
            self.statuses.append(status)
            self.versions.append(version)
        if status == 304:
            return httpx.Response(304, headers={"ETag": tag})
        return httpx.Response(200, content=VERSIONS[version], headers={"ETag": tag})

    def mark(self) -> int:
        """A position in ``versions``, taken as a call starts."""
        with self.lock:
            return len(self.versions)

    def served(self, mark: int, args: str) -> set[str]:
        """The outputs a call started at ``mark`` may give: over the read in flight then
        (one at most: single flight), or one served after."""
        with self.lock:
            return {EXPECTED[v, args] for v in self.versions[max(0, mark - 1) :]}


EXPECTED = {(v, args): cold(body, args) for v, body in enumerate(VERSIONS) for args in ARGS}


def test_one_sync_host_many_threads() -> None:
    go = Versions()
    errors: list[BaseException] = []
    start = threading.Barrier(16)
    with GoTurnHost(BASE, transport=httpx.MockTransport(go)) as host:

        def searcher(n: int) -> None:
            try:
                start.wait()
                for i in range(30):
                    args = ARGS[(n + i) % len(ARGS)]
                    mark = go.mark()
                    output = host.exec_tool("recall_search", args)
                    assert output in go.served(mark, args)
            except BaseException as exc:  # the test reports it
                errors.append(exc)

        interval = sys.getswitchinterval()
        sys.setswitchinterval(1e-6)  # switch threads as often as possible
        try:
            threads = [threading.Thread(target=searcher, args=(n,)) for n in range(16)]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
        finally:
            sys.setswitchinterval(interval)
    assert errors == []
    assert 304 in go.statuses


def test_one_async_host_many_tasks() -> None:
    go = Versions()

    async def main() -> None:
        async with AsyncGoTurnHost(BASE, transport=httpx.MockTransport(go)) as host:

            async def searcher(n: int) -> None:
                for i in range(10):
                    args = ARGS[(n + i) % len(ARGS)]
                    mark = go.mark()
                    output = await host.exec_tool("recall_search", args)
                    assert output in go.served(mark, args)

            await asyncio.gather(*(searcher(n) for n in range(50)))

    asyncio.run(main())
    assert 304 in go.statuses
