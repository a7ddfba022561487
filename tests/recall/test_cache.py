"""The cache of decoded and lowered blocks (a host's ``cache_bytes``).

A repeated search through one host must give exactly what a cold host gives for
the archive as the Go serves it now: same blocks, same order, same output, even
when another Go at the same URL serves other bytes under the same seqs. The tests
of a host run over each kind of host (``host_kind``).
"""

from __future__ import annotations

import json
import sys
import threading
from collections.abc import Sequence

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pytest_httpserver import HTTPServer

from recall import Block, GoTurnHost, MemoryArchive, run_tool
from recall._blocks import BlockCache, NotBlocks, decode_blocks
from recall._core import DEFAULT_CACHE_BYTES
from recall._protocol import BLOCKS_PATH
from recall._tools import latin1_images

from .hosts import Host

BASE = "http://go.test"


def go_body(blocks: Sequence[tuple[int, str, str]], *, ascii_only: bool = False) -> bytes:
    """The /blocks body as Go's encoding/json writes it (compact, HTML escaped)."""
    items = [{"seq": seq, "label": label, "content": content} for seq, label, content in blocks]
    text = json.dumps({"blocks": items}, separators=(",", ":"), ensure_ascii=ascii_only)
    for ch, esc in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026")):
        text = text.replace(ch, esc)
    text = text.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")
    return (text + "\n").encode("utf-8")


class Served:
    """A fake Go whose /blocks body can change between reads (and /tool/exec fails)."""

    def __init__(self, body: bytes) -> None:
        self.body = body
        self.reads = 0

    def __call__(self, request: httpx.Request) -> httpx.Response:
        if request.url.path == BLOCKS_PATH:
            self.reads += 1
            return httpx.Response(200, content=self.body)
        return httpx.Response(500)

    def host(self, kind: str, **options: int) -> Host:
        return Host(kind, BASE, transport=httpx.MockTransport(self), **options)

    def read(self, cache: BlockCache | None) -> list[Block]:
        """A read of /blocks, decoded through the cache (as a host does)."""
        self.reads += 1
        return decode_blocks(bytearray(self.body), cache)


def search(query: str, limit: int | None = None) -> str:
    args: dict[str, object] = {"query": query}
    if limit is not None:
        args["limit"] = limit
    return json.dumps(args)


def cold(body: bytes, args: str) -> str:
    """The output of a fresh GoTurnHost without a cache."""
    with GoTurnHost(BASE, transport=httpx.MockTransport(Served(body)), cache_bytes=0) as host:
        return host.exec_tool("recall_search", args)


BLOCKS_A = [
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


def test_repeated_search_equals_cold_host_and_reuses_the_blocks(host_kind: str) -> None:
    body = go_body(BLOCKS_A)
    served = Served(body)
    with served.host(host_kind) as host:
        for _ in range(3):
            for args in QUERIES:
                assert host.exec_tool("recall_search", args) == cold(body, args)
    assert served.reads == 3 * len(QUERIES)  # /blocks is read on every search
    cache = BlockCache(DEFAULT_CACHE_BYTES)
    first = served.read(cache)
    again = served.read(cache)
    assert again == first == list(MemoryArchive(first).all_blocks())
    assert all(a is b for a, b in zip(first, again, strict=True))  # hits: not decoded again
    assert all(b in cache for b in again)
    assert [cache.images(b) for b in again] == [latin1_images(b) for b in again]
    assert first == [Block(seq, label, content) for seq, label, content in BLOCKS_A]


def test_memory_archive_and_run_tool_unchanged() -> None:
    blocks = [Block(seq, label, content) for seq, label, content in BLOCKS_A]
    archive = MemoryArchive(blocks)
    for args in QUERIES:
        assert run_tool("recall_search", args, archive) == cold(go_body(BLOCKS_A), args)


def test_same_seqs_other_bytes_never_stale(httpserver: HTTPServer, host_kind: str) -> None:
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
    for body in (body_a, body_a, body_b, body_b, body_a):
        httpserver.expect_ordered_request(BLOCKS_PATH).respond_with_data(
            body, content_type="application/json"
        )
    args = search("backup zurich zürich déploiement kelvin ligne", 20)
    with Host(host_kind, httpserver.url_for("/")) as host:
        outputs = [host.exec_tool("recall_search", args) for _ in range(5)]
    httpserver.check_assertions()
    expected_a, expected_b = cold(body_a, args), cold(body_b, args)
    assert expected_a != expected_b
    assert outputs == [expected_a, expected_a, expected_b, expected_b, expected_a]


def test_eviction_keeps_the_bound_and_the_results(host_kind: str) -> None:
    blocks = [(seq, f"label {seq}", f"contenu numéro {seq} " * 20) for seq in range(1, 41)]
    body = go_body(blocks)
    served = Served(body)
    cache = BlockCache(20_000)
    first = served.read(cache)
    assert 0 < len(cache) < len(blocks)
    assert cache.used <= cache.limit
    held = len(cache)
    # A scan larger than the cache keeps what it holds (no flushing): hits again.
    again = served.read(cache)
    assert again == first
    assert sum(a is b for a, b in zip(first, again, strict=True)) == held
    # Blocks no longer served make room for new ones (least recently used first).
    served.body = go_body(blocks[held:])
    third = served.read(cache)
    assert third == first[held:]
    assert cache.used <= cache.limit
    assert len(cache) == held
    assert all(b in cache for b in third[:held])
    assert not any(b in cache for b in first[:held])
    assert [cache.images(b) for b in first] == [latin1_images(b) for b in first]
    for args in (search("contenu 17"), search("label numéro 3", 20)):
        with served.host(host_kind, cache_bytes=20_000) as host:
            assert host.exec_tool("recall_search", args) == cold(served.body, args)
            assert host.exec_tool("recall_search", args) == cold(served.body, args)


def test_entry_size_is_about_the_real_size() -> None:
    import tracemalloc

    blocks = [(seq, "étiquette", "contenu réel — " * 100) for seq in range(1, 201)]
    body = go_body(blocks)
    cache = BlockCache(DEFAULT_CACHE_BYTES)
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        items = decode_blocks(bytearray(body), cache)
        after = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    assert len(cache) == 200
    # What the decoded list itself holds besides the cache's entries is small.
    assert 0.7 < cache.used / (after - before) < 1.4, (cache.used, after - before)
    del items


def test_cache_bytes_zero_disables(host_kind: str) -> None:
    body = go_body(BLOCKS_A)
    served = Served(body)
    first, again = served.read(None), served.read(None)
    assert first == again
    assert not any(a is b for a, b in zip(first, again, strict=True))
    with served.host(host_kind, cache_bytes=0) as host:
        for args in QUERIES:
            assert host.exec_tool("recall_search", args) == cold(body, args)


def test_cache_bytes_negative_refused(host_kind: str) -> None:
    with pytest.raises(ValueError, match="limit"):
        BlockCache(-1)
    with pytest.raises(ValueError, match="cache_bytes"):
        Host(host_kind, BASE, cache_bytes=-1)


def test_invalid_items_are_not_cached_and_still_fail() -> None:
    served = Served(
        b'{"blocks":[{"seq":1,"label":"a","content":"b"},{"seq":0,"label":"","content":""}]}'
    )
    cache = BlockCache(DEFAULT_CACHE_BYTES)
    for _ in range(2):
        with pytest.raises(NotBlocks, match="not valid blocks"):
            served.read(cache)
    assert len(cache) == 1  # the valid first block only
    served.body = go_body([(2, "a", "b"), (1, "c", "d")])  # not by increasing seq
    for _ in range(2):  # cold, then with both blocks cached
        with pytest.raises(NotBlocks, match="not valid blocks"):
            served.read(cache)
    assert len(cache) == 3


# The differential property: one host with a cache, searches over a changing
# archive, against a fresh host without a cache for each search.

_TEXT = st.text(alphabet="abéÉ Ü\nİKΣ<&😀\u2028-", max_size=20)
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


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    first=_BLOCK_SETS,
    changed=_BLOCK_SETS,
    queries=_QUERIES,
    cache_bytes=st.sampled_from([1, 700, 3000, DEFAULT_CACHE_BYTES]),
    ascii_only=st.booleans(),
)
def test_repeated_searches_equal_fresh_hosts(
    first: dict[int, tuple[str, str]],
    changed: dict[int, tuple[str, str]],
    queries: list[tuple[str, int | None]],
    cache_bytes: int,
    ascii_only: bool,
    host_kind: str,
) -> None:
    # The changed set keeps some of the first set's seqs, with other bytes or the same.
    mixed = {**{s: b for s, b in first.items() if s % 3}, **changed}
    bodies = [_body(first, ascii_only), _body(first, ascii_only), _body(mixed, ascii_only)]
    served = Served(bodies[0])
    cache = BlockCache(cache_bytes)
    with served.host(host_kind, cache_bytes=cache_bytes) as host:
        for body in bodies:
            served.body = body
            assert served.read(cache) == Served(body).read(None)
            for query, limit in queries:
                args = search(query, limit)
                assert host.exec_tool("recall_search", args) == cold(body, args)


# Threads: one cache, many readers at once.


def test_one_cache_many_threads() -> None:
    """16 threads decode changing bodies through one small cache (evicting all along):
    each read gives what a decoding without a cache gives, and the bound holds."""
    bodies = [
        go_body([(seq, f"label {seq} {v}", f"contenu {seq} {v} " * 15) for seq in range(1, 31)])
        for v in range(4)
    ]
    expected = [decode_blocks(bytearray(body)) for body in bodies]
    cache = BlockCache(30_000)
    errors: list[BaseException] = []
    start = threading.Barrier(16)

    def reader(n: int) -> None:
        try:
            start.wait()
            for i in range(40):
                which = (n + i) % len(bodies)
                assert decode_blocks(bytearray(bodies[which]), cache) == expected[which]
        except BaseException as exc:  # the test reports it
            errors.append(exc)

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads as often as possible
    try:
        threads = [threading.Thread(target=reader, args=(n,)) for n in range(16)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        sys.setswitchinterval(interval)
    assert errors == []
    assert 0 < cache.used <= cache.limit
