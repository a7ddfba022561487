"""Single flight: the searches that need the set while a read of /blocks is in flight wait
for that read and share its result, in both hosts.

- Against the Go reference: 16 threads on a GoTurnHost, and 50 tasks on an
  AsyncGoTurnHost, search at once after each change (a block archived, a memory
  locked, unlocked). The reference serves one read of /blocks with a body per
  change (a delta; the other reads, if any, are 304s: its ``/debug/answers``), and
  every output is Go's own.
- A failed read fails every waiter alike: each falls back on its own call.
- A cancelled task does not cancel the read for the others; the last one does.
"""

from __future__ import annotations

import asyncio
import json
import socket
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import pytest

from parity.fixtures.go import FreshGo
from parity.goclient import log_request
from parity.reference import RunningReference
from recall import AsyncGoTurnHost, GoTurnHost
from recall._core import DEFAULT_CACHE_BYTES
from recall._protocol import BLOCKS_PATH, EXEC_PATH

from .faultserver import Behaviour, FaultServer, Received, respond
from .mockgo import Recording, search

THREADS = 16
TASKS = 50
QUERIES = [search("alpha"), search("beta gamma", 20), search("bloc"), search("zzz")]


def changes(go: RunningReference) -> list[Callable[[], None]]:
    """A block archived, its memory locked, unlocked, and a block archived locked."""
    seqs: list[int] = []
    return [
        lambda: seqs.append(go.archive("bloc new", "alpha beta")),
        lambda: go.lock(seqs[0]),
        lambda: go.lock(seqs[0], locked=False),
        lambda: seqs.append(go.archive("hidden", "alpha", locked=True)),
        lambda: seqs.append(go.archive("bloc last", "gamma zzz")),
    ]


def seeded(fresh_go: FreshGo) -> RunningReference:
    go = fresh_go(first_seq=500)
    for n in range(40):
        go.archive(f"bloc {n}", f"alpha {n} " + ("beta " if n % 3 else "gamma ") * 20)
    return go


def full_reads(recording: Recording, since: int) -> int:
    return sum(status == 200 for _, status in recording.reads[since:])


def bodies_served(go: RunningReference, since: int) -> list[str]:
    """The Go's answers to /blocks from ``since`` on that carried a body."""
    answers = go.client.run(log_request("answers", since=since))
    return [a for a in answers if a != "not modified"]


def answered(go: RunningReference) -> int:
    return len(go.client.run(log_request("answers")))


@pytest.mark.go
def test_16_threads_share_one_read_per_change(fresh_go: FreshGo) -> None:
    go = seeded(fresh_go)
    recording = Recording(hold=0.05)  # the threads not yet scheduled join it meanwhile
    barrier = threading.Barrier(THREADS)
    with GoTurnHost(go.base_url, transport=recording) as host:

        def search_at_once(n: int) -> str:
            barrier.wait()
            return host.exec_tool("recall_search", QUERIES[n % len(QUERIES)])

        with ThreadPoolExecutor(THREADS) as pool:
            for change in [lambda: None, *changes(go)]:
                change()
                expected = [go.exec_tool("recall_search", q) for q in QUERIES]
                since, mark = len(recording.reads), answered(go)
                outputs = list(pool.map(search_at_once, range(THREADS)))
                assert outputs == [expected[n % len(QUERIES)] for n in range(THREADS)]
                assert full_reads(recording, since) == 1
                assert len(bodies_served(go, mark)) == 1
                assert len(recording.reads) - since < THREADS  # shared, not one each


@pytest.mark.go
@pytest.mark.parametrize("cache_bytes", [DEFAULT_CACHE_BYTES, 1], ids=["kept", "past-cache-bytes"])
def test_50_tasks_share_one_read_per_change(fresh_go: FreshGo, cache_bytes: int) -> None:
    """Past ``cache_bytes`` (nothing kept: each read is whole) the tasks still share one."""
    go = seeded(fresh_go)
    recording = Recording()

    async def run() -> None:
        async with AsyncGoTurnHost(
            go.base_url, transport=recording, cache_bytes=cache_bytes
        ) as host:
            for change in [lambda: None, *changes(go)]:
                await asyncio.to_thread(change)
                expected = [go.exec_tool("recall_search", q) for q in QUERIES]
                since, mark = len(recording.reads), answered(go)
                outputs = await asyncio.gather(
                    *(host.exec_tool("recall_search", QUERIES[n % 4]) for n in range(TASKS))
                )
                assert outputs == [expected[n % 4] for n in range(TASKS)]
                assert (host._core._kept is None) == (cache_bytes == 1)
                assert full_reads(recording, since) == 1
                assert len(recording.reads) - since == 1  # tasks on one loop: all at once
                assert len(bodies_served(go, mark)) == 1

    asyncio.run(run())


# The flight's failure and cancellation, against a slow fault server.

GOOD = b'{"blocks": [{"seq": 7, "label": "alpha", "content": "alpha beta"}]}'
OUTPUT = "the output of Go's own /tool/exec"


def slow(seconds: float, behaviour: Behaviour) -> Behaviour:
    def serve(conn: socket.socket, request: Received, server: FaultServer) -> None:
        server.stopping.wait(seconds)
        behaviour(conn, request, server)

    return serve


@pytest.fixture
def server() -> FaultServer:
    return FaultServer().start()


def test_a_failed_read_fails_every_waiter_and_each_falls_back(server: FaultServer) -> None:
    server.route(BLOCKS_PATH, slow(0.5, respond(500, b'{"error": "internal"}')))
    server.route(EXEC_PATH, respond(200, json.dumps({"output": OUTPUT}).encode()))
    barrier = threading.Barrier(8)
    try:
        with GoTurnHost(server.url) as host:

            def call(_: int) -> str:
                barrier.wait()
                return host.exec_tool("recall_search", '{"query": "alpha"}')

            with ThreadPoolExecutor(8) as pool:
                outputs = list(pool.map(call, range(8)))
    finally:
        server.stop()
    assert outputs == [OUTPUT] * 8
    assert len(server.requests(BLOCKS_PATH)) == 1  # one read, failed for all
    assert len(server.requests(EXEC_PATH)) == 8  # each call's own fallback


def test_a_cancelled_task_does_not_cancel_the_read_for_the_others(server: FaultServer) -> None:
    server.route(BLOCKS_PATH, slow(0.5, respond(200, GOOD)))
    server.route(EXEC_PATH, respond(500, b'{"error": "internal"}'))

    async def run() -> list[str]:
        async with AsyncGoTurnHost(server.url) as host:
            calls = [
                asyncio.create_task(host.exec_tool("recall_search", '{"query": "alpha"}'))
                for _ in range(5)
            ]
            await asyncio.sleep(0.1)
            calls[0].cancel()  # the task that sent the read
            with pytest.raises(asyncio.CancelledError):
                await calls[0]
            return list(await asyncio.gather(*calls[1:]))

    try:
        outputs = asyncio.run(run())
    finally:
        server.stop()
    assert len(set(outputs)) == 1
    assert outputs[0].startswith("1 of 1 matching blocks")
    assert len(server.requests(BLOCKS_PATH)) == 1
