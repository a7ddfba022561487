"""Incremental reads against the Go reference (its ``?since=``): blocks archived, locked
and unlocked between searches, each output compared with Go's own, and the delta path
proved taken (``GET /debug/answers``: the reads after a change are deltas).

Over both hosts, and over a Go that forgets every change (``-since-history 0``: each
``?since=`` of an old tag answered in full) and a Go restarted (another instance: its
tags unknown).
"""

from __future__ import annotations

import httpx
import pytest

from parity.fixtures.go import FreshGo
from parity.goclient import log_request
from parity.reference import RunningReference

from .hosts import Host
from .mockgo import search

QUERIES = [search("alpha"), search("beta gamma", 20), search("bloc 1"), search("zzz <&>")]


def answers(go: RunningReference) -> list[str]:
    """How the Go answered each /blocks read: "full", "delta" or "not modified"."""
    return go.client.run(log_request("answers"))


def check(host: Host, go: RunningReference) -> None:
    for query in QUERIES:
        assert host.exec_tool("recall_search", query) == go.exec_tool("recall_search", query)


@pytest.mark.go
def test_deltas_against_the_reference(fresh_go: FreshGo, host_kind: str) -> None:
    go = fresh_go(first_seq=300)
    seqs = [go.archive(f"bloc {n}", f"alpha {n} beta <&> zzz" * (n % 4 + 1)) for n in range(30)]
    with Host(host_kind, go.base_url) as host:
        start = len(answers(go))  # the harness's own reads, if any
        check(host, go)
        assert answers(go)[start:] == ["full"] + ["not modified"] * (len(QUERIES) - 1)
        steps = [
            lambda: seqs.append(go.archive("bloc new", "alpha gamma")),
            lambda: go.lock(seqs[3]),
            lambda: go.lock(seqs[5]),
            lambda: go.lock(seqs[3], locked=False),
            lambda: seqs.append(go.archive("hidden", "alpha", locked=True)),
            lambda: go.lock(seqs[-1], locked=False),
            lambda: go.lock(seqs[0]),
        ]
        for step in steps:
            before = len(answers(go))
            step()
            check(host, go)
            # One delta per change, then 304s: never the whole body again.
            assert answers(go)[before:] == ["delta"] + ["not modified"] * (len(QUERIES) - 1)
        kept = host.host._core._kept
        assert kept is not None
        assert kept.seqs == sorted(b["seq"] for b in go.blocks())


@pytest.mark.go
def test_a_go_without_history_answers_in_full(fresh_go: FreshGo, host_kind: str) -> None:
    go = fresh_go(first_seq=300, since_history=0)
    for n in range(10):
        go.archive(f"bloc {n}", f"alpha {n}")
    with Host(host_kind, go.base_url) as host:
        start = len(answers(go))
        check(host, go)
        seq = go.archive("bloc new", "alpha gamma")
        check(host, go)
        go.lock(seq)
        check(host, go)
    assert "delta" not in answers(go)[start:]
    assert answers(go)[start:].count("full") == 3


@pytest.mark.go
def test_a_restarted_go_answers_in_full(fresh_go: FreshGo, host_kind: str) -> None:
    first = fresh_go(first_seq=300)
    for n in range(10):
        first.archive(f"bloc {n}", f"alpha {n}")
    # A transport that sends every request to the current Go: the host's URL stays.
    current = [first]

    def forward(request: httpx.Request) -> httpx.Response:
        url = request.url.copy_with(
            scheme="http", host="127.0.0.1", port=httpx.URL(current[0].base_url).port
        )
        with httpx.Client(verify=False) as client:  # plain http: no CA store to load
            response = client.send(
                client.build_request(
                    request.method, url, headers=request.headers, content=request.content
                )
            )
            return httpx.Response(
                response.status_code, headers=response.headers, content=response.content
            )

    with Host("sync", "http://go.test", transport=httpx.MockTransport(forward)) as host:
        check(host, first)
        second = fresh_go(first_seq=300)  # other blocks under the same seqs
        for n in range(12):
            second.archive(f"bloc {n}", f"zzz {n} beta")
        start = len(answers(second))
        current[0] = second
        check(host, second)
        assert answers(second)[start:] == ["full"] + ["not modified"] * (len(QUERIES) - 1)
