"""A host's life and its errors' words, on both hosts: a closed host raises
HostClosedError (never httpx's RuntimeError), an async host belongs to one event loop
(EventLoopError on another, every time), and a Go's failure names which Go: the base
URL's scheme, host, port and path prefix, never its credentials or the token."""

from __future__ import annotations

import asyncio
import pickle

import httpx
import pytest
from pytest_httpserver import HTTPServer
from werkzeug import Request, Response

from recall import (
    AsyncGoTurnHost,
    EventLoopError,
    FallbackFailedError,
    GoTurnHost,
    GoUnavailableError,
    HostClosedError,
    MemoryArchive,
    RecallError,
    UnknownToolError,
    run_tool,
)
from recall._protocol import BLOCK_PATH, EXEC_PATH

from .conftest import MakeHost
from .faultserver import closed_port_url

TOKEN = "tok-life-SECRET"
RECALL = ("recall", '{"id": "r7"}')
NO_READ = ("recall", "{}")  # an output that needs no request


def serve_block(server: HTTPServer, prefix: str = "") -> None:
    server.expect_request(prefix + BLOCK_PATH).respond_with_json(
        {"seq": 7, "label": "l", "content": "c"}
    )


def test_a_closed_sync_host_raises_host_closed(httpserver: HTTPServer) -> None:
    serve_block(httpserver)
    with GoTurnHost(httpserver.url_for("/")) as host:
        assert host.exec_tool(*RECALL) == "[r7] l\nc"
    for call in (RECALL, NO_READ, ("web_fetch", "{}")):
        with pytest.raises(HostClosedError, match=r"GoTurnHost\('http://.*'\) is closed"):
            host.exec_tool(*call)
    host.close()  # again: nothing


def test_a_sync_host_closed_by_another_thread_mid_call(httpserver: HTTPServer) -> None:
    host = GoTurnHost(httpserver.url_for("/"))
    answered: list[str] = []

    def answer(request: Request) -> Response:
        answered.append(request.path)
        host.close()  # while the call waits for this answer
        return Response("boom", status=500)

    httpserver.expect_request(BLOCK_PATH).respond_with_handler(answer)
    with pytest.raises(HostClosedError):  # the read failed; the fallback finds it closed
        host.exec_tool(*RECALL)
    # The server logs a request once it has answered it, and the close may end this
    # call before the block read is logged; a fallback would have been answered (and
    # logged) before the call could end.
    assert answered == [BLOCK_PATH]
    assert [r.path for r, _ in httpserver.log if r.path != BLOCK_PATH] == []


def test_an_async_host_closed_mid_call() -> None:
    answered: list[str] = []

    async def call() -> None:
        async def answer(request: httpx.Request) -> httpx.Response:
            answered.append(request.url.path)
            await host.aclose()  # while the call waits for this answer
            return httpx.Response(500)

        host = AsyncGoTurnHost("http://go.test", transport=httpx.MockTransport(answer))
        with pytest.raises(HostClosedError):  # the read failed; the fallback finds it closed
            await host.exec_tool(*RECALL)

    asyncio.run(call())
    assert answered == [BLOCK_PATH]  # the fallback sent nothing


def test_a_closed_async_host_raises_host_closed(httpserver: HTTPServer) -> None:
    serve_block(httpserver)

    async def main() -> None:
        async with AsyncGoTurnHost(httpserver.url_for("/")) as host:
            assert await host.exec_tool(*RECALL) == "[r7] l\nc"
        for call in (RECALL, NO_READ, ("web_fetch", "{}")):
            with pytest.raises(HostClosedError, match=r"AsyncGoTurnHost\('http://.*'\) is closed"):
                await host.exec_tool(*call)
        await host.aclose()  # again: nothing

    asyncio.run(main())


def test_an_async_host_belongs_to_one_loop(httpserver: HTTPServer) -> None:
    serve_block(httpserver)
    host = AsyncGoTurnHost(httpserver.url_for("/"))
    assert asyncio.run(host.exec_tool(*RECALL)) == "[r7] l\nc"
    for _ in range(3):  # every time, not one run in two
        with pytest.raises(EventLoopError, match="belongs to the event loop of its first call"):
            asyncio.run(host.exec_tool(*RECALL))
        with pytest.raises(EventLoopError):
            asyncio.run(host.aclose())
    assert issubclass(EventLoopError, RecallError)


def test_an_async_host_serves_many_runs_one_loop(httpserver: HTTPServer) -> None:
    serve_block(httpserver)
    with asyncio.Runner() as runner:
        host = AsyncGoTurnHost(httpserver.url_for("/"))
        for _ in range(3):
            assert runner.run(host.exec_tool(*RECALL)) == "[r7] l\nc"
        runner.run(host.aclose())


def test_errors_name_which_go_without_credentials(
    httpserver: HTTPServer, make_host: MakeHost
) -> None:
    httpserver.expect_request("/prefix" + BLOCK_PATH).respond_with_data("boom", status=500)
    httpserver.expect_request("/prefix" + EXEC_PATH).respond_with_data("down", status=502)
    go = f"http://localhost:{httpserver.port}/prefix"
    base = f"http://user:pass-SECRET@localhost:{httpserver.port}/prefix/"
    with make_host(base, token=TOKEN) as host, pytest.raises(FallbackFailedError) as caught:
        host.exec_tool(*RECALL)
    error = caught.value
    assert str(error) == (
        f"GET {go}{BLOCK_PATH}?seq=7: status 500; then the fallback failed:"
        f" POST {go}{EXEC_PATH}: status 502"
    )
    assert (error.what, error.why, error.go) == (f"GET {BLOCK_PATH}?seq=7", "status 500", go)
    assert isinstance(error.exec_error, GoUnavailableError)
    assert (error.exec_error.what, error.exec_error.go) == (f"POST {EXEC_PATH}", go)
    again = pickle.loads(pickle.dumps(error))
    assert (str(again), again.go) == (str(error), go)
    for text in (str(error), repr(error), repr(host)):
        assert "SECRET" not in text
        assert "user" not in text


def test_a_transport_error_names_which_go(make_host: MakeHost) -> None:
    url = closed_port_url()
    with make_host(url + "/p") as host, pytest.raises(GoUnavailableError) as caught:
        host.exec_tool("web_fetch", "{}")
    assert str(caught.value).startswith(f"POST {url}/p{EXEC_PATH}: ConnectError")


def test_an_unknown_tool_names_which_go(httpserver: HTTPServer, make_host: MakeHost) -> None:
    httpserver.expect_request("/p" + EXEC_PATH).respond_with_json(
        {"error": 'unknown tool "frobnicate"'}, status=404
    )
    go = f"http://localhost:{httpserver.port}/p"
    with make_host(go + "/", token=TOKEN) as host, pytest.raises(UnknownToolError) as caught:
        host.exec_tool("frobnicate", "{}")
    assert str(caught.value) == f"unknown tool 'frobnicate' (the Go at {go})"
    assert (caught.value.name, pickle.loads(pickle.dumps(caught.value)).go) == ("frobnicate", go)
    with pytest.raises(UnknownToolError, match=r"^unknown tool 'frobnicate'$"):
        run_tool("frobnicate", "{}", MemoryArchive())
