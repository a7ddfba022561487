"""The shadow in both hosts, against the Go reference: what the caller gets, what is
reported, what is counted, when Go answers differently, races, fails or is slow.

The Go that answers some calls differently is the reference with its test switch
``rewrite_output`` ("crème" becomes "creme" in its tool outputs); which calls that
changes, and Go's right answers, come from a second reference without the switch
holding the same archive, never from this file. Every test runs over each kind of
host (``make_host``, ``host_kind``).
"""

from __future__ import annotations

import asyncio
import json
import logging
import random
import socket
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import httpx
import pytest

from parity.fixtures.go import FreshGo
from parity.reference import RunningReference
from recall import AsyncGoTurnHost, Block, Divergence, FallbackFailedError, GoTurnHost, Shadow
from recall import _tools as tools
from recall._protocol import BLOCK_PATH, BLOCKS_PATH, EXEC_PATH
from recall._shadow import COUNTS, first_difference

from .conftest import MakeHost
from .faultserver import FaultServer, Received, respond

TOKEN = "tok-shadow-7Qx-SECRET"
REWRITE = {"crème": "creme"}

# Archived in this order into Gos whose first seq is 1000; the last one locked.
BLOCKS = (
    ("Recette", "Crème brûlée à la crème\nfour à 150 °C"),
    ("Dessert", "crème anglaise, vanille"),
    ("Notes", "nothing to see here"),
    ("crème label", "plain content"),
    ("secret", "crème locked away"),
)


def calls_for(seqs: list[int]) -> list[tuple[str, str]]:
    """Calls that read one block, every block, or nothing: some touch "crème"."""
    recall = [json.dumps({"id": f"r{seq}"}) for seq in seqs]
    return [
        *(("recall", args) for args in recall),
        ("recall", '{"id": "r1"}'),
        ("recall", '{"id": "r7a"}'),
        ("recall", "{}"),
        ("recall_search", json.dumps({"query": "crème"})),
        ("recall_search", json.dumps({"query": "nothing"})),
        ("recall_search", json.dumps({"query": "four", "limit": 1})),
        ("recall_search", json.dumps({"query": "crèmex"})),
        ("recall_search", json.dumps({"query": "é"})),
        ("recall_search", "not json"),
    ]


@dataclass
class Pair:
    """A Go that rewrites its outputs, and a Go that does not, holding the same archive."""

    rewriting: RunningReference
    plain: RunningReference
    seqs: list[int]
    blocks: dict[int, Block]

    def expected(self, calls: list[tuple[str, str]]) -> list[tuple[str, str]]:
        """(the right output, the rewriting Go's output) for each call."""
        return [(self.plain.exec_tool(n, a), self.rewriting.exec_tool(n, a)) for n, a in calls]


def archive_pair(fresh_go: FreshGo, **options: object) -> Pair:
    rewriting = fresh_go(first_seq=1000, token=TOKEN, rewrite_output=REWRITE, **options)
    plain = fresh_go(first_seq=1000)
    seqs = []
    for i, (label, content) in enumerate(BLOCKS):
        locked = i == len(BLOCKS) - 1
        seq = rewriting.archive(label, content, locked=locked)
        assert plain.archive(label, content, locked=locked) == seq
        seqs.append(seq)
    blocks = {s: Block(s, label, content) for s, (label, content) in zip(seqs, BLOCKS, strict=True)}
    return Pair(rewriting, plain, seqs, blocks)


@pytest.fixture
def pair(fresh_go: FreshGo) -> Pair:
    return archive_pair(fresh_go)


def divergence_messages(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [
        r.getMessage()
        for r in caplog.records
        if r.name == "recall.shadow" and r.getMessage().startswith("divergence:")
    ]


def assert_counts_add_up(stats: dict[str, int]) -> None:
    assert set(stats) == set(COUNTS)
    assert stats["compared"] == stats["matched"] + stats["diverged"] + stats["raced"]
    assert (
        stats["sampled"]
        == (stats["compared"] + stats["dropped"] + stats["errors"] + stats["fell_back"])
        + stats["pending"]
    )


# Go answers some calls differently.


@pytest.mark.go
@pytest.mark.parametrize("primary", ["python", "go"])
def test_exactly_the_calls_go_answers_differently_are_reported(
    make_host: MakeHost, pair: Pair, primary: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="recall.shadow")
    calls = calls_for(pair.seqs)
    expected = pair.expected(calls)
    differing = {c: e for c, e in zip(calls, expected, strict=True) if e[0] != e[1]}
    assert 5 <= len(differing) < len(calls)  # some, not all: the test can tell them apart
    found: list[Divergence] = []
    with make_host(
        pair.rewriting.base_url,
        token=TOKEN,
        shadow=Shadow(rate=1.0, primary=primary, on_divergence=found.append),
    ) as host:
        outputs = [host.exec_tool(name, args) for name, args in calls]
    stats = host.shadow_stats()

    # the caller gets the primary's output, every time
    side = 0 if primary == "python" else 1
    assert outputs == [e[side] for e in expected]
    # exactly those calls, each once, with both outputs and where they differ
    assert sorted((d.name, d.args) for d in found) == sorted(differing)
    for d in found:
        right, rewritten = differing[(d.name, d.args)]
        assert (d.python_output, d.go_output, d.python_error) == (right, rewritten, None)
        where = first_difference(rewritten, right)
        assert where is not None
        assert (d.offset, d.line, d.column) == (where.offset, where.line, where.column)
        assert d.primary == primary
        assert d.complete
        assert Divergence.from_json(d.to_json(include_private_data=True)) == d
    assert len(divergence_messages(caplog)) == len(differing)
    # and the counts add up
    assert stats == {
        **dict.fromkeys(COUNTS, 0),
        "sampled": len(calls),
        "compared": len(calls),
        "matched": len(calls) - len(differing),
        "diverged": len(differing),
    }
    closing = [r.getMessage() for r in caplog.records if r.getMessage().startswith("shadow (")]
    assert closing == [
        f"shadow (primary {primary}, rate 1): " + ", ".join(f"{key} {stats[key]}" for key in COUNTS)
    ]


@pytest.mark.go
def test_a_divergence_keeps_the_blocks_that_matter(make_host: MakeHost, pair: Pair) -> None:
    recipe, dessert, notes, labelled, _ = pair.seqs
    found: list[Divergence] = []
    calls = {
        ("recall", json.dumps({"id": f"r{dessert}"})): [dessert],
        ("recall_search", json.dumps({"query": "crème"})): [recipe, dessert, labelled],
        ("recall_search", json.dumps({"query": "four", "limit": 1})): [recipe],
        ("recall_search", json.dumps({"query": "crèmex"})): [],
    }
    with make_host(
        pair.rewriting.base_url, token=TOKEN, shadow=Shadow(rate=1.0, on_divergence=found.append)
    ) as host:
        for name, args in calls:
            host.exec_tool(name, args)
    assert len(found) == len(calls)
    for d in found:
        assert d.blocks == tuple(pair.blocks[s] for s in calls[(d.name, d.args)])
        assert notes not in {b.seq for b in d.blocks}


@pytest.mark.go
def test_sampling_draws_the_fraction_from_the_random_source(
    make_host: MakeHost, pair: Pair
) -> None:
    calls = calls_for(pair.seqs) * 3
    with make_host(pair.plain.base_url, shadow=Shadow(rate=0.3)) as host:
        host.host._core.shadow._random = random.Random(7).random  # type: ignore[union-attr]
        for name, args in calls:
            host.exec_tool(name, args)
        host.exec_tool("recall", "{}")  # one more draw; another tool is never drawn for
        with pytest.raises(Exception, match="unknown tool"):
            host.exec_tool("web_fetch", "{}")
    draws = random.Random(7)
    sampled = sum(draws.random() < 0.3 for _ in range(len(calls) + 1))
    assert 0 < sampled < len(calls)
    stats = host.shadow_stats()
    assert (stats["sampled"], stats["matched"]) == (sampled, sampled)
    assert_counts_add_up(stats)


# Noise: the archive changes between the two sides.


class Hooked(httpx.BaseTransport, httpx.AsyncBaseTransport):
    """httpx's own transport, calling ``hook(request)`` before each request is sent."""

    def __init__(self, hook: Callable[[httpx.Request], None]) -> None:
        self._hook = hook
        self._inner = httpx.HTTPTransport(verify=False)  # plain http: no CA store to load
        self._inner_async = httpx.AsyncHTTPTransport(verify=False)

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        self._hook(request)
        return self._inner.handle_request(request)

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        self._hook(request)
        return await self._inner_async.handle_async_request(request)

    def close(self) -> None:
        self._inner.close()

    async def aclose(self) -> None:
        await self._inner_async.aclose()


@pytest.mark.go
@pytest.mark.parametrize("primary", ["python", "go"])
def test_a_change_of_the_archive_in_between_is_raced_not_a_divergence(
    make_host: MakeHost, fresh_go: FreshGo, primary: str
) -> None:
    go = fresh_go(first_seq=1000)
    go.archive("apple", "an apple a day")
    # the other side's first request (Go's exec, or the port's read off the path)
    # comes after the archive gained a matching block
    second = EXEC_PATH if primary == "python" else BLOCKS_PATH
    seen: list[str] = []

    def hook(request: httpx.Request) -> None:
        seen.append(request.url.path)
        if seen.count(second) == 1 and request.url.path == second and len(seen) == 2:
            go.archive("apple pie", "apples, sugar")

    found: list[Divergence] = []
    args = json.dumps({"query": "apple"})
    with make_host(
        go.base_url,
        shadow=Shadow(rate=1.0, primary=primary, on_divergence=found.append),
        transport=Hooked(hook),
    ) as host:
        first = host.exec_tool("recall_search", args)
    assert first.startswith("1 of 1 matching blocks")
    assert go.exec_tool("recall_search", args).startswith("2 of 2 matching blocks")
    assert found == []
    stats = host.shadow_stats()
    assert (stats["sampled"], stats["raced"], stats["diverged"]) == (1, 1, 0)
    assert_counts_add_up(stats)
    # the comparison: the other side, then once more on both sides
    paths = [BLOCKS_PATH, EXEC_PATH] if primary == "python" else [EXEC_PATH, BLOCKS_PATH]
    assert seen == [*paths, BLOCKS_PATH, EXEC_PATH]


# A Go whose tool endpoint fails: nothing changes for the caller.


@pytest.mark.go
@pytest.mark.parametrize("fault", ["down", "slow"])
def test_a_failing_tool_endpoint_changes_nothing_for_the_caller(
    make_host: MakeHost, fresh_go: FreshGo, fault: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="recall.shadow")
    options: dict[str, object] = {"exec_status": 503} if fault == "down" else {"exec_delay": 3.0}
    go = fresh_go(first_seq=1000, token=TOKEN, **options)
    seqs = [go.archive(label, content) for label, content in BLOCKS]
    calls = calls_for(seqs)
    with make_host(go.base_url, token=TOKEN) as alone:
        port = [alone.exec_tool(name, args) for name, args in calls]
    with make_host(go.base_url, token=TOKEN, shadow=Shadow(rate=1.0, queue=4), timeout=0.5) as host:
        outputs = [host.exec_tool(name, args) for name, args in calls]
    assert outputs == port
    stats = host.shadow_stats()
    assert stats["sampled"] == len(calls)
    assert stats["compared"] == stats["pending"] == 0
    assert stats["errors"] >= 1
    assert stats["errors"] + stats["dropped"] == len(calls)
    assert_counts_add_up(stats)
    failures = [r.getMessage() for r in caplog.records if "tool endpoint" in r.getMessage()]
    assert len(failures) == 1  # a burst: logged once
    assert failures[0].startswith(
        f"Go's tool endpoint failed a shadow call (POST {go.base_url}{EXEC_PATH}: "
    )


@pytest.mark.go
def test_primary_go_serves_the_port_when_go_fails(
    make_host: MakeHost, fresh_go: FreshGo, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="recall.shadow")
    go = fresh_go(first_seq=1000, exec_status=502)
    seqs = [go.archive(label, content) for label, content in BLOCKS]
    calls = calls_for(seqs)
    with make_host(go.base_url) as alone:
        port = [alone.exec_tool(name, args) for name, args in calls]
    with make_host(go.base_url, shadow=Shadow(rate=0.5, primary="go")) as host:
        outputs = [host.exec_tool(name, args) for name, args in calls]
    assert outputs == port
    stats = host.shadow_stats()
    assert stats["go_failed"] == len(calls)
    assert stats["errors"] == stats["sampled"]
    assert_counts_add_up(stats)
    failures = [r.getMessage() for r in caplog.records if "tool endpoint" in r.getMessage()]
    assert failures == [
        f"Go's tool endpoint failed the primary call (POST {go.base_url}{EXEC_PATH}: status 502);"
        " not logged again before it answers or for 60s"
    ]


def test_primary_go_with_go_and_the_reads_failing_raises_as_the_port_would(
    make_host: MakeHost,
) -> None:
    with FaultServer() as server:
        server.route(BLOCKS_PATH, respond(503))
        server.route(EXEC_PATH, respond(500))
        with make_host(server.url, shadow=Shadow(rate=0, primary="go")) as host:
            with pytest.raises(FallbackFailedError) as caught:
                host.exec_tool("recall_search", '{"query": "apple"}')
            assert host.exec_tool("recall_search", '{"query": "a"}') == (
                'no archived block matches "a"'
            )
        go = server.url.rstrip("/")
        assert str(caught.value) == (
            f"GET {go}{BLOCKS_PATH}: status 503; then the fallback failed:"
            f" POST {go}{EXEC_PATH}: status 500"
        )
        assert [r.path for r in server.requests()] == [EXEC_PATH, BLOCKS_PATH, EXEC_PATH]


def test_a_call_that_falls_back_is_not_compared(make_host: MakeHost) -> None:
    with FaultServer() as server:
        server.route(BLOCK_PATH, respond(500))
        server.route(EXEC_PATH, respond(200, b'{"output": "from go"}'))
        with make_host(server.url, shadow=Shadow(rate=1.0)) as host:
            assert host.exec_tool("recall", '{"id": "r7"}') == "from go"
        assert host.shadow_stats()["fell_back"] == host.shadow_stats()["sampled"] == 1
        assert [r.path for r in server.requests()] == [BLOCK_PATH, EXEC_PATH]  # once


# The port's own defect.


@pytest.mark.go
@pytest.mark.parametrize("primary", ["python", "go"])
def test_a_port_defect_is_a_divergence_carrying_the_error(
    make_host: MakeHost, pair: Pair, primary: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(block: Block) -> str:
        raise RuntimeError(f"cannot show r{block.seq}")

    monkeypatch.setattr(tools, "text_block", broken)
    args = json.dumps({"id": f"r{pair.seqs[2]}"})
    found: list[Divergence] = []
    with make_host(
        pair.rewriting.base_url,
        token=TOKEN,
        shadow=Shadow(rate=1.0, primary=primary, on_divergence=found.append),
    ) as host:
        if primary == "python":  # the caller gets the port's behaviour, as without a shadow
            with pytest.raises(RuntimeError, match="cannot show"):
                host.exec_tool("recall", args)
        else:  # the caller gets Go's output, never the port's exception
            assert host.exec_tool("recall", args) == pair.rewriting.exec_tool("recall", args)
    [d] = found
    assert d.python_output is None
    assert d.python_error == f"RuntimeError: cannot show r{pair.seqs[2]}"
    assert d.go_output == pair.rewriting.exec_tool("recall", args)
    assert (d.offset, d.line, d.column) == (None, None, None)
    assert d.blocks == (pair.blocks[pair.seqs[2]],)
    assert Divergence.from_json(d.to_json(include_private_data=True)) == d
    assert host.shadow_stats()["diverged"] == 1


# Bounded, off the caller's path.


def held_exec(gate: threading.Event) -> FaultServer:
    """A Go holding block r7 ("x"), whose /tool/exec answers only once ``gate`` is set."""
    answer = respond(200, json.dumps({"output": "[r7]\nx"}).encode())

    def held(conn: socket.socket, request: Received, server: FaultServer) -> None:
        gate.wait(30)
        answer(conn, request, server)

    server = FaultServer().start()
    server.route(BLOCK_PATH, respond(200, b'{"seq": 7, "label": "", "content": "x"}'))
    server.route(EXEC_PATH, held)
    return server


def test_a_full_queue_drops_and_close_drains_within_the_time_out(make_host: MakeHost) -> None:
    gate = threading.Event()
    server = held_exec(gate)
    try:
        with make_host(server.url, shadow=Shadow(rate=1.0, queue=2), timeout=5.0) as host:
            for _ in range(20):  # Go answers none of the comparisons meanwhile
                assert host.exec_tool("recall", '{"id": "r7"}') == "[r7]\nx"
            gate.set()
        stats = host.shadow_stats()
    finally:
        gate.set()
        server.stop()
    assert stats["sampled"] == 20
    assert stats["dropped"] >= 20 - 2 - 2  # at most two queued, one or two running
    assert stats["matched"] >= 1
    assert stats["pending"] == 0
    assert_counts_add_up(stats)


def test_no_shadow_is_no_machinery(make_host: MakeHost) -> None:
    requests: list[str] = []

    def go(request: httpx.Request) -> httpx.Response:
        requests.append(request.url.path)
        return httpx.Response(200, json={"seq": 7, "label": "", "content": "x"})

    transport = httpx.MockTransport(go)
    before = set(threading.enumerate())
    with make_host("http://go.test", transport=transport) as host:
        for _ in range(5):
            assert host.exec_tool("recall", '{"id": "r7"}') == "[r7]\nx"
        core = host.host._core
        assert core.shadow is None
        assert host.shadow_stats() == dict.fromkeys(COUNTS, 0)
        # No thread started (others, such as an earlier test's Go's pumps, may end meanwhile).
        assert set(threading.enumerate()) - before == set()
        assert host.host._jobs is None  # type: ignore[union-attr]
    assert requests == [BLOCK_PATH] * 5


def test_the_callbacks_defect_never_stops_the_comparisons(
    make_host: MakeHost, caplog: pytest.LogCaptureFixture
) -> None:
    def go(request: httpx.Request) -> httpx.Response:
        if request.url.path == EXEC_PATH:
            return httpx.Response(200, json={"output": "go says no"})
        return httpx.Response(200, json={"seq": 7, "label": "", "content": "x"})

    def callback(divergence: Divergence) -> None:
        raise KeyError("callback defect")

    with make_host(
        "http://go.test",
        transport=httpx.MockTransport(go),
        shadow=Shadow(rate=1.0, on_divergence=callback),
    ) as host:
        for _ in range(3):
            assert host.exec_tool("recall", '{"id": "r7"}') == "[r7]\nx"
    assert host.shadow_stats()["diverged"] == 3
    errors = [r.getMessage() for r in caplog.records if r.getMessage().startswith("on_div")]
    assert errors == ["on_divergence raised KeyError: 'callback defect'"] * 3


# The caller's path is the port's alone (the latency it costs is measured by `make bench`).


def test_the_caller_never_waits_on_the_shadow_exec(make_host: MakeHost) -> None:
    """Every call returns while Go's /tool/exec is held unanswered; close drains them."""
    gate = threading.Event()
    server = held_exec(gate)
    try:
        with make_host(server.url, shadow=Shadow(rate=1.0, queue=8), timeout=30.0) as host:
            for _ in range(5):
                assert host.exec_tool("recall", '{"id": "r7"}') == "[r7]\nx"
            assert host.shadow_stats()["matched"] == 0  # no comparison could end yet
            assert not server.stats.sent.get(EXEC_PATH)
            gate.set()
        stats = host.shadow_stats()
    finally:
        gate.set()
        server.stop()
    assert (stats["sampled"], stats["matched"], stats["pending"]) == (5, 5, 0)


# Many threads, many tasks; the token nowhere.


def token_nowhere(
    caplog: pytest.LogCaptureFixture, found: list[Divergence], host: object, *more: object
) -> None:
    texts = [r.getMessage() for r in caplog.records] + [str(r.args) for r in caplog.records]
    texts += (
        [d.to_json(include_private_data=True) for d in found]
        + [d.to_json() for d in found]
        + [repr(d) for d in found]
        + [str(d) for d in found]
    )
    texts += [repr(host), *map(str, more), *map(repr, more)]
    assert texts
    assert not [t for t in texts if TOKEN in t]


def check_concurrent(
    run: Callable[[dict[str, object], list[tuple[str, str]]], tuple[list[str], object]],
    pair: Pair,
    calls: list[tuple[str, str]],
    primary: str,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """``run(options, calls)`` gives the outputs of a host made with ``options``, and the
    host (closed): the primary's outputs; each diverging call reported; the counts."""
    caplog.set_level(logging.DEBUG)
    expected = pair.expected(calls)
    differing = sum(right != rewritten for right, rewritten in expected)
    found: list[Divergence] = []
    options: dict[str, object] = {
        "token": TOKEN,
        "shadow": Shadow(rate=1.0, primary=primary, on_divergence=found.append, queue=len(calls)),
        "timeout": 30.0,
    }
    outputs, host = run(options, calls)
    side = 0 if primary == "python" else 1
    assert outputs == [e[side] for e in expected]
    stats = host.shadow_stats()  # type: ignore[attr-defined]
    assert (stats["sampled"], stats["diverged"]) == (len(calls), differing)
    assert stats["matched"] + stats["raced"] == len(calls) - differing
    assert_counts_add_up(stats)
    assert len(found) == differing
    token_nowhere(caplog, found, host)


@pytest.mark.go
@pytest.mark.parametrize("primary", ["python", "go"])
def test_sync_16_threads_with_shadow(
    pair: Pair, primary: str, caplog: pytest.LogCaptureFixture
) -> None:
    def run(options: dict[str, object], calls: list[tuple[str, str]]) -> tuple[list[str], object]:
        with (
            GoTurnHost(pair.rewriting.base_url, **options) as host,  # type: ignore[arg-type]
            ThreadPoolExecutor(16) as pool,
        ):
            return list(pool.map(lambda call: host.exec_tool(*call), calls)), host

    check_concurrent(run, pair, calls_for(pair.seqs) * 8, primary, caplog)


@pytest.mark.go
@pytest.mark.parametrize("primary", ["python", "go"])
def test_async_50_tasks_with_shadow(
    pair: Pair, primary: str, caplog: pytest.LogCaptureFixture
) -> None:
    async def tasks(options: dict[str, object], calls: list[tuple[str, str]]) -> list[str]:
        async with AsyncGoTurnHost(pair.rewriting.base_url, **options) as host:  # type: ignore[arg-type]
            hosts.append(host)
            return list(await asyncio.gather(*(host.exec_tool(n, a) for n, a in calls)))

    hosts: list[AsyncGoTurnHost] = []

    def run(options: dict[str, object], calls: list[tuple[str, str]]) -> tuple[list[str], object]:
        return asyncio.run(tasks(options, calls)), hosts[0]

    check_concurrent(run, pair, (calls_for(pair.seqs) * 4)[:50], primary, caplog)


@pytest.mark.go
def test_the_token_is_in_no_failure_either(
    make_host: MakeHost, fresh_go: FreshGo, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    go = fresh_go(first_seq=1000, token=TOKEN, exec_status=401)
    seq = go.archive("apple", "an apple")
    found: list[Divergence] = []
    errors: list[BaseException] = []
    for primary in ("python", "go"):
        with make_host(
            go.base_url,
            token=TOKEN,
            shadow=Shadow(rate=1.0, primary=primary, on_divergence=found.append),
        ) as host:
            host.exec_tool("recall", json.dumps({"id": f"r{seq}"}))
        no_shadow = Shadow(rate=0, primary=primary)
        with make_host(go.base_url + "/nowhere", token=TOKEN, shadow=no_shadow) as lost:
            try:
                lost.exec_tool("recall", json.dumps({"id": f"r{seq}"}))
            except FallbackFailedError as exc:
                errors.append(exc)
    assert len(errors) == 2
    assert any("tool endpoint failed" in r.getMessage() for r in caplog.records)
    token_nowhere(caplog, found, host, *errors)
