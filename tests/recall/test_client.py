"""ArchiveClient: the reads and /tool/exec, what is accepted and what is a GoUnavailableError."""

from __future__ import annotations

import json
import tracemalloc
from collections.abc import Callable, Iterator

import httpx
import pytest
from pytest_httpserver import HTTPServer

from parity.plugin import FreshGo
from recall import Block, GoUnavailableError, UnknownToolError
from recall._client import BLOCK_PATH, BLOCKS_PATH, EXEC_PATH, ArchiveClient

from .faultserver import closed_port_url

TOKEN = "s3cr3t-T0KEN"
BASE = "http://go.test"

Handler = Callable[[httpx.Request], httpx.Response]


def client_for(handler: Handler, **options: object) -> ArchiveClient:
    return ArchiveClient(BASE, transport=httpx.MockTransport(handler), **options)  # type: ignore[arg-type]


def answer(status: int, body: object = None, *, raw: bytes | None = None) -> Handler:
    content = raw if raw is not None else json.dumps(body).encode()
    return lambda request: httpx.Response(status, content=content)


def failing(exc: Exception) -> Handler:
    def handler(request: httpx.Request) -> httpx.Response:
        raise exc

    return handler


BLOCK7 = {"seq": 7, "label": "<b>L</b>", "content": "a & b"}


# get_block.


def test_get_block_request_and_block() -> None:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, json=BLOCK7)

    with client_for(handler, token=TOKEN) as client:
        assert client.get_block(7) == Block(7, "<b>L</b>", "a & b")
    (request,) = seen
    assert request.method == "GET"
    assert request.url.raw_path == b"/internal/v1/recall/block?seq=7"
    assert request.headers["Authorization"] == f"Bearer {TOKEN}"


def test_no_authorization_without_token() -> None:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, json=BLOCK7)

    client_for(handler).get_block(7)
    assert "Authorization" not in seen[0].headers


def test_get_block_decodes_go_escapes_and_surrogate_escapes() -> None:
    raw = (
        b'{"seq":7,"label":"\\u003cb\\u003e \\u0026 \\u2028",'
        b'"content":"\\ud83d\\ude00 \\ud800 \\udc00x \xc3\xa9","extra":[1]}'
    )
    block = client_for(answer(200, raw=raw)).get_block(7)
    assert block == Block(7, "<b> & \u2028", "\U0001f600 \ufffd \ufffdx é")


@pytest.mark.parametrize("body", [{"error": "not found"}, {"error": None, "more": 1}])
def test_get_block_json_404_is_absent(body: object) -> None:
    assert client_for(answer(404, body)).get_block(7) is None


@pytest.mark.parametrize(
    ("status", "raw"),
    [
        (404, b"404 page not found\n"),  # a Go lacking the route
        (404, b'["error"]'),
        (404, b'{"message": "not found"}'),
        (404, b""),
        (200, b""),
        (200, b"not json"),
        (200, b'{"seq": 7, "label": "x", "content": "y"'),  # truncated
        (200, b'{"seq": 7, "label": "x", "content": "y"} trailing'),
        (200, b'{"seq": NaN, "label": "x", "content": "y"}'),
        (200, b'{"seq": 7, "label": Infinity, "content": "y"}'),
        (200, b'{"seq": 7, "label": "x", "content": "\xff"}'),  # not UTF-8
        (200, b"null"),
        (200, b"[]"),
        (200, b'{"label": "x", "content": "y"}'),
        (200, b'{"seq": 7, "content": "y"}'),
        (200, b'{"seq": 7, "label": "x"}'),
        (200, b'{"seq": "7", "label": "x", "content": "y"}'),
        (200, b'{"seq": true, "label": "x", "content": "y"}'),
        (200, b'{"seq": 7.0, "label": "x", "content": "y"}'),
        (200, b'{"seq": 0, "label": "x", "content": "y"}'),
        (200, b'{"seq": -7, "label": "x", "content": "y"}'),
        (200, b'{"seq": 9223372036854775808, "label": "x", "content": "y"}'),
        (200, b'{"seq": 1' + b"0" * 5000 + b', "label": "x", "content": "y"}'),
        (200, b'{"seq": 7, "label": null, "content": "y"}'),
        (200, b'{"seq": 7, "label": "x", "content": 5}'),
        (200, b'{"seq": 8, "label": "x", "content": "y"}'),  # not the block asked for
        (200, b"[" * 100_000 + b"]" * 100_000),
        (500, b'{"seq": 7, "label": "x", "content": "y"}'),
        (401, b'{"error": "unauthorized"}'),
        (400, b'{"error": "bad seq"}'),
        (405, b'{"error": "method not allowed"}'),
        (204, b""),
        (302, b""),
    ],
)
def test_get_block_unavailable(status: int, raw: bytes) -> None:
    with pytest.raises(GoUnavailableError) as caught:
        client_for(answer(status, raw=raw)).get_block(7)
    assert f"GET {BLOCK_PATH}?seq=7" in str(caught.value)
    assert f"status {status}" in str(caught.value) or status in (200, 404)


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
)
def test_transport_errors_are_translated(exc: Exception) -> None:
    client = client_for(failing(exc))
    for read in (lambda: client.get_block(7), client.all_blocks, lambda: client.exec_tool("x", "")):
        with pytest.raises(GoUnavailableError) as caught:
            read()
        assert caught.value.__cause__ is exc
        assert type(exc).__name__ in str(caught.value)


def test_redirect_is_not_followed() -> None:
    seen: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(str(request.url))
        if request.url.path == BLOCK_PATH:
            return httpx.Response(302, headers={"Location": f"{BASE}/elsewhere"})
        return httpx.Response(200, json=BLOCK7)

    with pytest.raises(GoUnavailableError, match="status 302"):
        client_for(handler).get_block(7)
    assert seen == [f"{BASE}{BLOCK_PATH}?seq=7"]


# all_blocks.


def test_all_blocks() -> None:
    body = {"blocks": [BLOCK7, {"seq": 9, "label": "", "content": ""}]}
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, json=body)

    assert client_for(handler).all_blocks() == [
        Block(7, "<b>L</b>", "a & b"),
        Block(9, "", ""),
    ]
    assert seen[0].method == "GET"
    assert seen[0].url.raw_path == BLOCKS_PATH.encode()
    assert client_for(answer(200, {"blocks": []})).all_blocks() == []


@pytest.mark.parametrize(
    ("status", "body"),
    [
        (200, {"blocks": None}),
        (200, {"blocks": {}}),
        (200, {}),
        (200, [BLOCK7]),
        (200, {"blocks": [BLOCK7, BLOCK7]}),  # not by increasing seq
        (200, {"blocks": [{**BLOCK7, "seq": 9}, BLOCK7]}),
        (200, {"blocks": [BLOCK7, {"seq": 9, "label": "x"}]}),
        (200, {"blocks": [BLOCK7, {"seq": False, "label": "x", "content": "y"}]}),
        (404, {"error": "not found"}),
        (404, {"blocks": []}),
        (500, {"blocks": []}),
    ],
)
def test_all_blocks_unavailable(status: int, body: object) -> None:
    with pytest.raises(GoUnavailableError, match=f"GET {BLOCKS_PATH}"):
        client_for(answer(status, body)).all_blocks()


# exec_tool.


def test_exec_tool_request_and_output() -> None:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, json={"output": "out \u2028 <x>"})

    args = '{"id": "r7", "x": "\u00e9\U0001f600"}'
    assert client_for(handler, token=TOKEN).exec_tool("recall", args) == "out \u2028 <x>"
    (request,) = seen
    assert request.method == "POST"
    assert request.url.raw_path == EXEC_PATH.encode()
    assert request.headers["Content-Type"] == "application/json"
    assert request.headers["Authorization"] == f"Bearer {TOKEN}"
    assert json.loads(request.content) == {"name": "recall", "args": args}


def test_exec_tool_unknown_tool() -> None:
    handler = answer(404, {"error": 'unknown tool "frobnicate"'})
    with pytest.raises(UnknownToolError, match="frobnicate") as caught:
        client_for(handler).exec_tool("frobnicate", "{}")
    assert caught.value.name == "frobnicate"


@pytest.mark.parametrize(
    ("status", "raw"),
    [
        (404, b"404 page not found\n"),
        (200, b'{"output": 5}'),
        (200, b'{"out": "x"}'),
        (200, b'"x"'),
        (200, b"{"),
        (400, b'{"error": "bad body"}'),
        (500, b'{"output": "x"}'),
        (307, b""),
    ],
)
def test_exec_tool_unavailable(status: int, raw: bytes) -> None:
    with pytest.raises(GoUnavailableError, match=f"POST {EXEC_PATH}"):
        client_for(answer(status, raw=raw)).exec_tool("recall", "{}")


# Bounds, memory, secrets.


def test_body_bound_with_content_length() -> None:
    body = json.dumps({"blocks": [BLOCK7]}).encode()
    client = client_for(answer(200, raw=body), max_body_bytes=len(body) - 1)
    with pytest.raises(GoUnavailableError, match="larger than"):
        client.all_blocks()
    assert client_for(answer(200, raw=body), max_body_bytes=len(body)).all_blocks()


def test_body_bound_when_streamed_without_length() -> None:
    sent = 0

    def endless() -> Iterator[bytes]:
        nonlocal sent
        yield b'{"blocks": ['
        while True:
            sent += 1
            yield b" " * 65536

    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, content=endless())

    with pytest.raises(GoUnavailableError, match="larger than"):
        client_for(handler, max_body_bytes=1 << 20).all_blocks()
    assert sent <= 17  # stopped at the bound, not read to the end


def test_all_blocks_peak_memory_under_three_bodies() -> None:
    blocks = [
        {"seq": seq, "label": f"label {seq}", "content": f"line {seq} " + "x" * 2000}
        for seq in range(1, 5001)
    ]
    body = json.dumps({"blocks": blocks}).encode()
    del blocks

    def handler(request: httpx.Request) -> httpx.Response:
        chunks = (body[i : i + 65536] for i in range(0, len(body), 65536))
        return httpx.Response(200, content=chunks)

    client = client_for(handler)
    tracemalloc.start()
    try:
        got = client.all_blocks()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(got) == 5000
    assert peak < 3 * len(body), (peak, len(body))


def test_token_never_in_messages_or_reprs() -> None:
    client = ArchiveClient("http://user:pw@127.0.0.1:1/", token=TOKEN, timeout=1.0)
    assert TOKEN not in repr(client)
    assert "pw" not in repr(client)
    for read in (lambda: client.get_block(7), client.all_blocks, lambda: client.exec_tool("x", "")):
        with pytest.raises(GoUnavailableError) as caught:
            read()
        assert TOKEN not in str(caught.value)
        assert TOKEN not in repr(caught.value)


@pytest.mark.parametrize("token", ["", "two words", "line\nbreak", "caf\u00e9"])
def test_bad_token_is_refused_without_echo(token: str) -> None:
    with pytest.raises(ValueError, match="token") as caught:
        ArchiveClient(BASE, token=token)
    assert not token or token not in str(caught.value)


# Over real sockets.


def test_real_server_with_bearer(httpserver: HTTPServer) -> None:
    httpserver.expect_request(
        BLOCK_PATH,
        method="GET",
        query_string="seq=7",
        headers={"Authorization": f"Bearer {TOKEN}"},
    ).respond_with_json(BLOCK7)
    with ArchiveClient(httpserver.url_for("/"), token=TOKEN) as client:
        assert client.get_block(7) == Block(7, "<b>L</b>", "a & b")


@pytest.fixture
def unused_port_url() -> str:
    return closed_port_url()


def test_connection_refused(unused_port_url: str) -> None:
    with pytest.raises(GoUnavailableError, match="ConnectError") as caught:
        ArchiveClient(unused_port_url).all_blocks()
    assert isinstance(caught.value.__cause__, httpx.ConnectError)


@pytest.mark.go
def test_against_go(fresh_go: FreshGo) -> None:
    go = fresh_go(first_seq=1000, token=TOKEN)
    first = go.archive("<b>HTML</b> & co", "\u2028 <script> \U0001f600 é")
    locked = go.archive("locked", "secret", locked=True)
    last = go.archive("", "")
    with ArchiveClient(go.base_url, token=TOKEN) as client:
        blocks = client.all_blocks()
        assert blocks == [Block(**b) for b in go.blocks()]
        assert [b.seq for b in blocks] == [first, last]
        assert blocks[0] == Block(first, "<b>HTML</b> & co", "\u2028 <script> \U0001f600 é")
        assert client.get_block(first) == blocks[0]
        assert client.get_block(locked) is None
        assert client.get_block(last + 1) is None
        args = json.dumps({"id": f"r{first}"})
        assert client.exec_tool("recall", args) == go.exec_tool("recall", args)
        with pytest.raises(UnknownToolError):
            client.exec_tool("frobnicate", "{}")
    with pytest.raises(GoUnavailableError, match="status 401"):
        ArchiveClient(go.base_url).all_blocks()
