"""Each host's I/O over httpx: what goes on the wire, how the body streams in under its
bounds, and every httpx error translated into a RecallError.

Every test runs over each kind of host (``make_host``, ``host_kind``); answers
come from ``httpx.MockTransport`` or a real server. The parsing of Go's answers
is in test_protocol.py; outputs against Go in test_host.py.
"""

from __future__ import annotations

import itertools
import json
import ssl
import subprocess
import sys
from collections.abc import AsyncIterator, Callable, Iterable, Iterator

import httpx
import pytest
from pytest_httpserver import HTTPServer

from recall import (
    Block,
    FallbackFailedError,
    GoUnavailableError,
    MemoryArchive,
    RecallError,
    run_tool,
)
from recall._protocol import BLOCK_PATH, BLOCKS_PATH, EXEC_PATH

from .conftest import MakeHost
from .faultserver import closed_port_url

TOKEN = "s3cr3t-T0KEN"
BASE = "http://go.test"
BLOCK7 = {"seq": 7, "label": "<b>L</b>", "content": "a & b"}
RECALL = ("recall", '{"id": "r7"}')
SEARCH = ("recall_search", '{"query": "alpha"}')
OTHER = ("web_fetch", "{}")

Handler = Callable[[httpx.Request], httpx.Response]


def mock(handler: Handler) -> httpx.MockTransport:
    """A transport for either kind of host (MockTransport is both)."""
    return httpx.MockTransport(handler)


def streamed(kind: str, chunks: Iterable[bytes]) -> Iterator[bytes] | AsyncIterator[bytes]:
    """A streamed body for a MockTransport answer, of the host's kind."""
    if kind == "sync":
        return iter(chunks)

    async def chunks_async() -> AsyncIterator[bytes]:
        for chunk in chunks:
            yield chunk

    return chunks_async()


def expected(name: str, args: str, blocks: list[dict[str, object]]) -> str:
    """What the tool computes over these blocks (run_tool over memory)."""
    return run_tool(name, args, MemoryArchive(Block(**b) for b in blocks))  # type: ignore[arg-type]


# On the wire.


@pytest.mark.parametrize("token", [TOKEN, None])
def test_what_goes_on_the_wire(make_host: MakeHost, token: str | None) -> None:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        if request.url.path == BLOCK_PATH:
            return httpx.Response(200, json=BLOCK7)
        if request.url.path == BLOCKS_PATH:
            return httpx.Response(200, json={"blocks": [BLOCK7]})
        return httpx.Response(200, json={"output": "out \u2028 <x>"})

    args = '{"x": "\u00e9\U0001f600\ud800"}'
    with make_host(BASE, token=token, transport=mock(handler)) as host:
        assert host.exec_tool(*RECALL) == expected(*RECALL, [BLOCK7])
        assert host.exec_tool("recall_search", '{"query": "nothing here"}') == expected(
            "recall_search", '{"query": "nothing here"}', [BLOCK7]
        )
        assert host.exec_tool("web_fetch", args) == "out \u2028 <x>"
    block, blocks, call = seen
    assert (block.method, block.url.raw_path) == ("GET", b"/internal/v1/recall/block?seq=7")
    assert (blocks.method, blocks.url.raw_path) == ("GET", BLOCKS_PATH.encode())
    assert (call.method, call.url.raw_path) == ("POST", EXEC_PATH.encode())
    assert call.headers["Content-Type"] == "application/json"
    assert json.loads(call.content) == {"name": "web_fetch", "args": '{"x": "é😀\ufffd"}'}
    for request in seen:
        assert request.headers["Accept"] == "application/json"
        if token is None:
            assert "Authorization" not in request.headers
        else:
            assert request.headers["Authorization"] == f"Bearer {TOKEN}"


def test_a_kept_set_is_read_again_with_one_request_per_tag(make_host: MakeHost) -> None:
    seen: list[httpx.Request] = []
    tags = ['"t1"']

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        if request.headers.get("If-None-Match") == tags[-1]:
            return httpx.Response(304, headers={"ETag": tags[-1]})
        return httpx.Response(200, headers={"ETag": tags[-1]}, json={"blocks": [BLOCK7]})

    with make_host(BASE, token=TOKEN, transport=mock(handler)) as host:
        for _ in range(2):
            for _ in range(3):
                assert host.exec_tool(*SEARCH) == expected(*SEARCH, [BLOCK7])
            tags.append('"t2"')
    assert [r.headers.get("If-None-Match") for r in seen] == [None, *['"t1"'] * 3, *['"t2"'] * 2]
    assert [r.url.params.get("since") for r in seen[1:]] == [*['"t1"'] * 3, *['"t2"'] * 2]
    # Built once for each tag, and sent again as it is by every search over that set.
    assert seen[1] is seen[2] is seen[3]
    assert seen[4] is seen[5]
    assert seen[3] is not seen[4]
    for request in seen:
        assert request.headers["Authorization"] == f"Bearer {TOKEN}"
        assert request.headers["Accept"] == "application/json"


def test_real_server_with_bearer(make_host: MakeHost, httpserver: HTTPServer) -> None:
    httpserver.expect_request(
        BLOCK_PATH,
        method="GET",
        query_string="seq=7",
        headers={"Authorization": f"Bearer {TOKEN}"},
    ).respond_with_json(BLOCK7)
    with make_host(httpserver.url_for("/"), token=TOKEN) as host:
        assert host.exec_tool(*RECALL) == expected(*RECALL, [BLOCK7])


def test_redirect_is_not_followed(make_host: MakeHost) -> None:
    seen: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(str(request.url))
        if request.url.path == BLOCK_PATH:
            return httpx.Response(302, headers={"Location": f"{BASE}/elsewhere"})
        return httpx.Response(500)

    with make_host(BASE, transport=mock(handler)) as host, pytest.raises(FallbackFailedError) as c:
        host.exec_tool(*RECALL)
    assert c.value.read_error.why == "status 302"
    assert seen == [f"{BASE}{BLOCK_PATH}?seq=7", f"{BASE}{EXEC_PATH}"]


# httpx's errors, translated.


@pytest.mark.parametrize(
    "exc",
    [
        httpx.ConnectError("[Errno 111] Connection refused"),
        httpx.ReadTimeout("timed out"),
        httpx.ConnectTimeout("timed out"),
        httpx.RemoteProtocolError("Server disconnected without sending a response."),
        httpx.ReadError("[Errno 104] Connection reset by peer"),
        httpx.UnsupportedProtocol("Request URL has an unsupported protocol"),
    ],
    ids=lambda exc: type(exc).__name__,
)
def test_transport_errors_are_translated(make_host: MakeHost, exc: Exception) -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        raise exc

    with make_host(BASE, transport=mock(handler)) as host:
        failures: list[GoUnavailableError] = []
        for call in (RECALL, SEARCH):
            with pytest.raises(FallbackFailedError) as fallback:
                host.exec_tool(*call)
            failures += [fallback.value.read_error, fallback.value.exec_error]  # type: ignore[list-item]
        with pytest.raises(GoUnavailableError) as other:
            host.exec_tool(*OTHER)
        failures.append(other.value)
    for failure in failures:
        assert failure.__cause__ is exc
        assert failure.why == f"{type(exc).__name__}: {exc}"


def chained(*errors: Exception) -> Exception:
    """The first error, each caused by the next (as httpx, httpcore and anyio chain them)."""
    for error, beneath in itertools.pairwise(errors):
        error.__cause__ = beneath
    return errors[0]


@pytest.mark.parametrize(
    ("exc", "why"),
    [
        (
            chained(
                httpx.ConnectError("All connection attempts failed"),
                OSError("All connection attempts failed"),
                ConnectionRefusedError(111, "Connect call failed ('127.0.0.1', 9)"),
            ),
            "ConnectError: [Errno 111] Connection refused",
        ),
        (
            chained(httpx.ReadError(""), RuntimeError(), ConnectionResetError(104, "reset")),
            "ReadError: [Errno 104] Connection reset by peer",
        ),
        (chained(httpx.ReadTimeout(""), TimeoutError()), "ReadTimeout: timed out"),
        (
            chained(httpx.ConnectError("[SSL: X] y"), ssl.SSLError(1, "[SSL: X] y")),
            "ConnectError: [SSL: X] y",
        ),
        (chained(httpx.ReadError("")), "ReadError"),
    ],
    ids=["refused", "reset", "time-out", "tls", "nothing-said"],
)
def test_transport_errors_in_the_same_words(make_host: MakeHost, exc: Exception, why: str) -> None:
    """The system error or time-out beneath an error of httpx's async transport is said as
    httpx's sync transport says it."""

    def handler(request: httpx.Request) -> httpx.Response:
        raise exc

    with make_host(BASE, transport=mock(handler)) as host, pytest.raises(GoUnavailableError) as c:
        host.exec_tool(*OTHER)
    assert c.value.why == why
    assert c.value.__cause__ is exc


def test_connection_refused(make_host: MakeHost) -> None:
    with make_host(closed_port_url()) as host, pytest.raises(FallbackFailedError) as caught:
        host.exec_tool(*SEARCH)
    assert isinstance(caught.value.read_error.__cause__, httpx.ConnectError)
    assert caught.value.read_error.why.startswith("ConnectError: ")


def test_token_never_in_messages_or_reprs(make_host: MakeHost) -> None:
    with make_host("http://user:pw@127.0.0.1:1/", token=TOKEN, timeout=1.0) as host:
        assert TOKEN not in repr(host)
        assert "pw" not in repr(host)
        for call in (RECALL, SEARCH, OTHER):
            with pytest.raises(RecallError) as caught:
                host.exec_tool(*call)
            assert TOKEN not in str(caught.value)
            assert TOKEN not in repr(caught.value)


# The body, streamed under its bounds.


def test_body_bound_with_content_length(make_host: MakeHost) -> None:
    body = json.dumps({"blocks": [BLOCK7]}).encode()

    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.path == BLOCKS_PATH:
            return httpx.Response(200, content=body)
        return httpx.Response(500)

    with make_host(BASE, transport=mock(handler), max_body_bytes=len(body) - 1) as host:
        with pytest.raises(FallbackFailedError) as caught:
            host.exec_tool(*SEARCH)
        assert caught.value.read_error.why == f"body larger than {len(body) - 1} bytes"
    with make_host(BASE, transport=mock(handler), max_body_bytes=len(body)) as host:
        assert host.exec_tool(*SEARCH) == expected(*SEARCH, [BLOCK7])


def test_body_bound_when_streamed_without_length(make_host: MakeHost, host_kind: str) -> None:
    sent = 0

    def endless() -> Iterator[bytes]:
        nonlocal sent
        yield b'{"blocks": ['
        while True:
            sent += 1
            yield b" " * 65536

    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.path == BLOCKS_PATH:
            return httpx.Response(200, content=streamed(host_kind, endless()))
        return httpx.Response(500)

    with make_host(BASE, transport=mock(handler), max_body_bytes=1 << 20) as host:
        with pytest.raises(FallbackFailedError) as caught:
            host.exec_tool(*SEARCH)
        assert caught.value.read_error.why == f"body larger than {1 << 20} bytes"
    assert sent <= 17  # stopped at the bound, not read to the end


_PEAK_CHILD = """
import asyncio, json, sys, tracemalloc
import httpx
from recall import AsyncGoTurnHost, GoTurnHost

kind, separators = sys.argv[1], tuple(json.loads(sys.argv[2]))
blocks = [
    {"seq": seq, "label": f"label {seq}", "content": f"line {seq} " + "x" * 2000}
    for seq in range(1, 5001)
]
body = json.dumps({"blocks": blocks}, separators=separators).encode()
del blocks
CHUNKS = range(0, len(body), 65536)

def sync_handler(request):
    return httpx.Response(200, content=(body[i : i + 65536] for i in CHUNKS))

async def chunks():
    for i in CHUNKS:
        yield body[i : i + 65536]

def async_handler(request):
    return httpx.Response(200, content=chunks())

SEARCH = ("recall_search", '{"query": "line 4999"}')
if kind == "sync":
    with GoTurnHost("http://go.test", transport=httpx.MockTransport(sync_handler)) as host:
        tracemalloc.start()
        output = host.exec_tool(*SEARCH)
        peak = tracemalloc.get_traced_memory()[1]
else:
    async def main():
        transport = httpx.MockTransport(async_handler)
        async with AsyncGoTurnHost("http://go.test", transport=transport) as host:
            tracemalloc.start()
            output = await host.exec_tool(*SEARCH)
            return output, tracemalloc.get_traced_memory()[1]
    output, peak = asyncio.run(main())
print(json.dumps([output[:40], peak, len(body)]))
"""


@pytest.mark.parametrize("separators", [(", ", ": "), (",", ":")], ids=["spaced", "go"])
def test_search_peak_memory_under_three_bodies(host_kind: str, separators: tuple[str, str]) -> None:
    # Spaced: decoded whole; Go's compact encoding: item by item, or in batches (msgspec).
    # Measured in a fresh interpreter, where the peak is the same in every run (2.66x
    # compact, 2.22x spaced, idle or loaded machine): tracemalloc traces every thread's
    # allocations, and in the suite's own process the readings took in those of its
    # other threads (xdist's I/O, HTTP servers, Go output pumps): 3.09x twice there. One
    # thread allocating 64 KiB at a time beside the search adds 0.16x to this child's.
    child = [sys.executable, "-c", _PEAK_CHILD, host_kind, json.dumps(separators)]
    done = subprocess.run(child, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    head, peak, size = json.loads(done.stdout)
    assert head.startswith("5 of 5000 matching blocks")
    assert peak < 3 * size, (peak, size)
