"""Conditional reads of /blocks against the Go reference, while its archive changes.

Between searches the archive gets new blocks, locked ones, memories locked and
unlocked, and is emptied (``/debug/reset``); each output of the host is compared
with the Go's own ``/tool/exec`` for the same call at that moment. A recording
transport shows what the Go answered: 304 while nothing changed (the kept set
reused), a 200 after each change. Against a Go without the extension
(``-no-etag``) nothing is conditional and every output is the same. Every test
runs over each kind of host.
"""

from __future__ import annotations

import json
from collections.abc import Callable

import httpx
import pytest

from parity.fixtures.go import FreshGo
from parity.reference import RunningReference

from .conftest import MakeHost
from .hosts import Host
from .mockgo import Recording

pytestmark = pytest.mark.go

TOKEN = "tok-cond-7f3e"
QUERIES = [
    json.dumps({"query": q, "limit": n})
    for q, n in (
        ("déploiement échec", 20),
        ("note 7", 5),
        ("PostgreSQL délai", 3),
        ("ÉCOLE élève İstanbul", 20),
        ("nothing matches this", 5),
    )
]


def archive_some(go: RunningReference, start: int, count: int) -> list[int]:
    return [
        go.archive(
            f"note {n} {'ÉCOLE' if n % 4 == 0 else 'déploiement'}",
            f"Échec du déploiement {n}\nPostgreSQL délai dépassé {'İstanbul ' * (n % 3)}élève",
        )
        for n in range(start, start + count)
    ]


def same_as_go(host: Host, go: RunningReference) -> None:
    """Every query through the host gives the Go's own output, now."""
    for args in QUERIES:
        assert host.exec_tool("recall_search", args) == go.exec_tool("recall_search", args), args


def changes(go: RunningReference, seqs: list[int]) -> list[tuple[str, Callable[[], object]]]:
    """The archive's changes, each to be made between two rounds of searches."""
    return [
        ("archive one", lambda: seqs.extend(archive_some(go, 100, 1))),
        ("archive a locked one", lambda: go.archive("locked", "déploiement secret", locked=True)),
        ("lock one in the middle", lambda: go.lock(seqs[5])),
        ("lock the first and the last", lambda: (go.lock(seqs[0]), go.lock(seqs[-1]))),
        ("unlock the middle one", lambda: go.lock(seqs[5], locked=False)),
        ("unlock them all", lambda: [go.lock(seq, locked=False) for seq in seqs]),
        ("archive many", lambda: seqs.extend(archive_some(go, 200, 30))),
        ("reset, then archive others", lambda: (go.reset(), archive_some(go, 300, 12))),
    ]


def test_archive_lock_unlock_between_searches(fresh_go: FreshGo, make_host: MakeHost) -> None:
    go = fresh_go(first_seq=1000, token=TOKEN)
    seqs = archive_some(go, 0, 40)
    recording = Recording()
    with make_host(go.base_url, token=TOKEN, transport=recording) as host:
        same_as_go(host, go)
        same_as_go(host, go)  # nothing changed: every read a 304
        rounds = 2
        for _, change in changes(go, seqs):
            change()
            same_as_go(host, go)
            same_as_go(host, go)
            rounds += 2
    n = len(QUERIES)
    assert len(recording.reads) == rounds * n
    # The first read is unconditional; after each change the first read is a 200 (the
    # tag sent no longer names the set), every other one a 304 with the tag sent.
    statuses = recording.statuses
    assert statuses[0] == 200
    assert statuses[1 : 2 * n] == [304] * (2 * n - 1)
    for round_ in range(2, rounds, 2):
        at = round_ * n
        assert statuses[at] == 200, round_
        assert statuses[at + 1 : at + 2 * n] == [304] * (2 * n - 1), round_
    assert all(sent is not None for sent, _ in recording.reads[1:])


def test_a_go_without_the_extension_works_as_before(fresh_go: FreshGo, make_host: MakeHost) -> None:
    go = fresh_go(first_seq=1, etag=False)
    seqs = archive_some(go, 0, 30)
    recording = Recording()
    with make_host(go.base_url, transport=recording) as host:
        same_as_go(host, go)
        for _, change in changes(go, seqs):
            change()
            same_as_go(host, go)
            same_as_go(host, go)
    assert set(recording.statuses) == {200}
    assert all(sent is None for sent, _ in recording.reads)  # never a tag to send


def test_a_restarted_go_at_the_same_url_is_read_anew(
    fresh_go: FreshGo, make_host: MakeHost
) -> None:
    """Two Gos one after the other behind one host (its transport pointed at each in
    turn): the second's tags never name the first's set, even with the same seqs."""
    first = fresh_go(first_seq=1)
    second = fresh_go(first_seq=1)
    archive_some(first, 0, 20)
    archive_some(second, 50, 20)  # other blocks under the same seqs
    recording = Switching(first.base_url)
    with make_host("http://go.test", transport=recording) as host:
        for go in (first, first, second, second, first):
            recording.target = go.base_url
            same_as_go(host, go)
    statuses = recording.statuses
    n = len(QUERIES)
    assert statuses[0] == 200
    assert statuses[2 * n] == 200  # the second Go: the first's tag names nothing there
    assert statuses[4 * n] == 200
    assert statuses.count(304) == 5 * n - 3


class Switching(Recording):
    """A recording transport that sends every request to ``target``."""

    def __init__(self, target: str) -> None:
        super().__init__()
        self.target = target

    def _moved(self, request: httpx.Request) -> httpx.Request:
        url = httpx.URL(self.target)
        request.url = request.url.copy_with(host=url.host, port=url.port)
        request.headers["Host"] = url.netloc.decode()
        return request

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        return super().handle_request(self._moved(request))

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        return await super().handle_async_request(self._moved(request))
