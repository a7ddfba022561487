"""The shells under load and interruption: many tasks on one AsyncGoTurnHost, many threads
on one GoTurnHost, both giving the Go reference's own outputs; an async call cancelled
leaves its host usable and its connection closed.

Unlike the other host tests, each test here is about one shell (named in its name).
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import pytest

from parity.fixtures.go import FreshGo
from parity.reference import RunningReference
from recall import AsyncGoTurnHost, GoTurnHost, UnknownToolError
from recall._protocol import BLOCKS_PATH, EXEC_PATH

from .faultserver import FaultServer, respond, silent_until_closed

TOKEN = "tok-conc-51e7"


@dataclass(frozen=True)
class Expected:
    """A call and the Go reference's own output for it."""

    name: str
    args: str
    output: str


def calls_against(go: RunningReference) -> list[Expected]:
    """50 calls over an archive of 60 blocks: reads of one block, searches, no reads."""
    seqs = [
        go.archive(f"note {i} {'parity' * (i % 3)}", f"line {i}\nabout {i % 7} x")
        for i in range(60)
    ]
    go.archive("locked", "never shown", locked=True)
    calls = [("recall", json.dumps({"id": f"r{seq}"})) for seq in seqs[::4]]  # 15
    calls += [("recall", json.dumps({"id": f"r{seqs[-1] + n}"})) for n in (1, 2)]  # absent, locked
    calls += [("recall", '{"id": "r7a"}'), ("recall", "{}")]
    calls += [
        ("recall_search", json.dumps({"query": q, "limit": n}))
        for q in ("note parity", "about 3", "line 42", "x", "nothing here", "parity")
        for n in (1, 3, 20)
    ]  # 18
    calls += [("recall_search", json.dumps({"query": f"line {i}"})) for i in range(13)]
    assert len(calls) == 50
    return [Expected(name, args, go.exec_tool(name, args)) for name, args in calls]


@pytest.fixture
def go(fresh_go: FreshGo) -> RunningReference:
    return fresh_go(first_seq=1000, token=TOKEN)


def no_fallback(go: RunningReference, since: int) -> None:
    """The host computed every output here: no /tool/exec since ``since``."""
    made = go.requests()[since:]
    assert made
    assert f"POST {EXEC_PATH}" not in made


@pytest.mark.go
def test_async_50_tasks_on_one_loop(go: RunningReference) -> None:
    expected = calls_against(go)
    since = len(go.requests())

    async def run() -> list[str]:
        async with AsyncGoTurnHost(go.base_url, token=TOKEN, cache_bytes=20_000) as host:
            return await asyncio.gather(*(host.exec_tool(e.name, e.args) for e in expected))

    outputs = asyncio.run(run())
    assert outputs == [e.output for e in expected]
    no_fallback(go, since)


@pytest.mark.go
def test_sync_16_threads_on_one_host(go: RunningReference) -> None:
    expected = calls_against(go) * 4
    since = len(go.requests())
    with (
        GoTurnHost(go.base_url, token=TOKEN, cache_bytes=20_000) as host,
        ThreadPoolExecutor(16) as pool,
    ):
        outputs = list(pool.map(lambda e: host.exec_tool(e.name, e.args), expected))
    assert outputs == [e.output for e in expected]
    no_fallback(go, since)


@pytest.mark.go
def test_async_unknown_tool_and_aclose(go: RunningReference) -> None:
    async def run() -> None:
        host = AsyncGoTurnHost(go.base_url, token=TOKEN)
        with pytest.raises(UnknownToolError):
            await host.exec_tool("frobnicate", "{}")
        await host.aclose()

    asyncio.run(run())


# Cancellation.


@pytest.fixture
def hanging() -> Iterator[tuple[FaultServer, threading.Event]]:
    """/blocks never answers (and says when its connection closes); /tool/exec answers."""
    closed = threading.Event()
    server = FaultServer().start()
    server.route(BLOCKS_PATH, silent_until_closed(closed))
    server.route(EXEC_PATH, respond(200, b'{"output": "exec"}'))
    yield server, closed
    server.stop()


@pytest.mark.parametrize("how", ["task.cancel", "asyncio.timeout"])
def test_async_cancelled_call_leaves_the_host_usable(
    hanging: tuple[FaultServer, threading.Event], how: str
) -> None:
    server, closed = hanging

    async def run() -> None:
        async with AsyncGoTurnHost(server.url, timeout=30.0) as host:
            started = time.monotonic()
            if how == "task.cancel":
                task = asyncio.create_task(host.exec_tool("recall_search", '{"query": "ab"}'))
                await asyncio.sleep(0.2)
                task.cancel()
                with pytest.raises(asyncio.CancelledError):
                    await task
            else:
                with pytest.raises(TimeoutError):
                    async with asyncio.timeout(0.2):
                        await host.exec_tool("recall_search", '{"query": "ab"}')
            assert time.monotonic() - started < 5
            # the cancelled request's connection is closed, not left in the pool
            assert await asyncio.to_thread(closed.wait, 5)
            # and the host still works: a call that goes to /tool/exec
            assert await host.exec_tool("web_fetch", "{}") == "exec"

    asyncio.run(run())
    assert [r.path for r in server.requests()] == [BLOCKS_PATH, EXEC_PATH]
