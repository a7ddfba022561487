"""A whole /blocks set read from the Go reference as it arrives (``BodyStream``): each
output compared with Go's own, the body proved never held whole (the bytes a stream
holds at once, counted), and a Go whose sets the host keeps whole (no ETag) read as
before, held whole.
"""

from __future__ import annotations

import random
from collections.abc import Iterator

import httpx
import pytest

import recall._blocks
from parity.fixtures.go import FreshGo
from parity.reference import RunningReference
from recall._blocks import BodyStream
from recall._protocol import BLOCKS_PATH

from .hosts import Host
from .mockgo import search

QUERIES = [search("alpha"), search("beta gamma", 20), search("bloc 1"), search("<&> é")]
BATCH = 1 << 14  # bytes decoded at once: a body of about 50 batches


class Streams:
    """Each BodyStream fed during a test: the most bytes it held at once, bytes fed."""

    def __init__(self) -> None:
        self.held: dict[int, int] = {}
        self.fed: dict[int, int] = {}


@pytest.fixture
def streams(monkeypatch: pytest.MonkeyPatch) -> Iterator[Streams]:
    seen = Streams()
    feed = BodyStream.feed

    def counted(stream: BodyStream, chunk: bytes) -> None:
        feed(stream, chunk)
        key = id(stream)
        seen.held[key] = max(seen.held.get(key, 0), len(stream.pending))
        seen.fed[key] = stream.read_so_far

    monkeypatch.setattr(BodyStream, "feed", counted)
    monkeypatch.setattr(recall._blocks, "_BATCH", BATCH)
    return seen


def archived(go: RunningReference, count: int) -> int:
    """``count`` blocks of 1 to 2 KB archived; the /blocks body's size."""
    rng = random.Random(count)
    words = ["alpha", "beta", "gamma", "bloc", "<&>", "é", "naïve", "ẞ", "\u2028", "x" * 30]
    blocks = [
        (f"bloc {n}", " ".join(rng.choices(words, k=rng.randint(150, 300))), False)
        for n in range(count)
    ]
    go.client.archive_many(blocks)
    return len(httpx.get(go.base_url + BLOCKS_PATH).content)


def check(host: Host, go: RunningReference) -> None:
    for query in QUERIES:
        assert host.exec_tool("recall_search", query) == go.exec_tool("recall_search", query)


@pytest.mark.go
def test_a_whole_set_is_decoded_as_it_arrives(
    fresh_go: FreshGo, host_kind: str, streams: Streams
) -> None:
    go = fresh_go(first_seq=40)
    size = archived(go, 600)
    with Host(host_kind, go.base_url) as host:
        check(host, go)
        assert list(streams.fed.values()) == [size]  # one whole read, streamed
        assert max(streams.held.values()) < 3 * BATCH  # never the body: a batch or so
        kept = host.host._core._kept
        assert kept is not None
        assert not kept.complete
        go.archive("bloc new", "alpha gamma")
        check(host, go)  # a delta to the streamed set
        assert len(streams.fed) == 1


@pytest.mark.go
def test_a_go_without_etag_is_read_whole(
    fresh_go: FreshGo, host_kind: str, streams: Streams
) -> None:
    go = fresh_go(first_seq=40, etag=False)
    archived(go, 100)
    with Host(host_kind, go.base_url) as host:
        check(host, go)
        go.archive("bloc new", "alpha gamma")
        check(host, go)
        kept = host.host._core._kept
        assert kept is not None
        assert kept.raw is not None
    assert not streams.fed
