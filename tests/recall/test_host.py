"""exec_tool of both hosts: byte for byte what Go answers, the archive reads it makes, the
fallback.

Expected outputs come from the Go reference (its own /tool/exec), never from
this file. The fallback is driven with pytest-httpserver as a misbehaving Go.
Every test runs over each kind of host (``make_host``, ``host_kind``).
"""

# ruff: noqa: RUF001  (Greek and Turkish letters in the corpus are meant)

from __future__ import annotations

import json
import re
import socket
import struct
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass

import httpx
import pytest
from pytest_httpserver import HTTPServer
from werkzeug import Request, Response

from parity.fixtures.go import FreshGo, start_reference
from parity.reference import GoReference, RunningReference
from recall import (
    FallbackFailedError,
    GoUnavailableError,
    RecallError,
    UnknownToolError,
)
from recall._protocol import BLOCK_PATH, BLOCKS_PATH, EXEC_PATH

from .conftest import MakeHost
from .faultserver import ReadsElsewhere, closed_port_url
from .hosts import Host

TOKEN = "tok-3f9a-SECRET"

# The varied archive, archived in this order into a Go whose first seq is 1000.
BLOCKS: dict[str, tuple[str, str, bool]] = {
    "accents": ("Café crème", "Le café de la crème brûlée.\nÉCOLE, élève, naïve — Œuvre.", False),
    "case": (
        "Unicode CASE",
        "İstanbul İİ KIRMIZI\nΣΟΦΙΑ ΟΔΟΣ σοφια\nSTRASSE Straße ǅemal Ǳ \u212a",
        False,
    ),
    "html": (
        "<b>HTML</b> & entities",
        '<div class="x">Tom &amp; Jerry &lt;3 &#x27;quoted&#x27;</div>\n'
        "<script>alert('x')</script>",
        False,
    ),
    "empty": ("", "", False),
    "blank": ("blank lines", "\n   \n\t\n", False),
    "long": ("long first line", "\n\n   " + "mot " * 60 + "fin  \nsecond line", False),
    "longacc": ("", "é" * 200 + "\nnext", False),
    "emoji": ("emoji \U0001f600", "rocket \U0001f680 launch\u2028separator\u2029para", False),
    "spaces": ("  spaced label  ", "\u00a0\u2003 nbsp-indented first line\u0085\nline two", False),
    "locked": ("secret locked", "topsecret payload parity", True),
    "ctrl": ("tab\tlabel", "carriage\r\nreturn\r\nfoo_bar baz \x07\x00", False),
    "quotes": ('say "hi"', 'back\\slash and "quotes"', False),
    **{
        f"similar{i:02d}": (
            f"Similar note {i:02d}" + (" parity" if i % 3 == 0 else ""),
            f"similar block number {i} about parity testing" + (" parity" * (i % 4)),
            False,
        )
        for i in range(1, 26)
    },
}

BLOCK = f"GET {BLOCK_PATH}?seq="
ALL = (f"GET {BLOCKS_PATH}",)
NONE: tuple[str, ...] = ()


def block_read(ref: str) -> tuple[str, ...]:
    return (BLOCK + ref,)


@dataclass(frozen=True)
class Call:
    """A tool call; ``$name`` in args and reads stands for that block's seq."""

    name: str
    args: str
    reads: tuple[str, ...]

    def __str__(self) -> str:
        return f"{self.name}:{self.args[:60]}"


def recall(args: str, reads: tuple[str, ...] = NONE) -> Call:
    return Call("recall", args, reads)


def search(args: str, reads: tuple[str, ...] = ALL) -> Call:
    return Call("recall_search", args, reads)


DEEP = "[" * 10001 + "]" * 10001
SHALLOW = "[" * 100 + "]" * 100

CALLS = [
    # recall: id absent, not a string, blank; arguments that decode to an empty map
    recall("{}"),
    recall('{"id": 1000}'),
    recall('{"id": null}'),
    recall('{"id": ["r$accents"]}'),
    recall('{"id": ""}'),
    recall('{"id": " \\t\\n "}'),
    recall('{"id": "\\u00a0\\u2003"}'),
    recall("null"),
    recall("[]"),
    recall('"r$accents"'),
    recall(""),
    recall("not json"),
    recall('{"id": "r$accents"'),
    recall('{"id": "r$accents"} trailing'),
    recall('{"ID": "r$accents"}'),
    recall('{"id": "r$accents", "x": 1e400}'),
    recall('{"id": "r$accents", "x": ' + DEEP + "}"),
    # recall: well-formed ids, prefix and space variants, leading zeros
    recall('{"id": "r$accents"}', block_read("$accents")),
    recall('{"id": "R$accents"}', block_read("$accents")),
    recall('{"id": "rR$accents"}', block_read("$accents")),
    recall('{"id": " r $accents "}', block_read("$accents")),
    recall('{"id": "\\u00a0r$accents\\u2003"}', block_read("$accents")),
    recall('{"id": "\\u0085r\\u3000$accents\\n"}', block_read("$accents")),
    recall('{"id": "r000$accents"}', block_read("$accents")),
    recall('{"id": "$accents"}', block_read("$accents")),
    recall('{"id": "r$accents"}   ', block_read("$accents")),
    recall('{"id": "r$accents", "x": ' + SHALLOW + "}", block_read("$accents")),
    recall('{"id": "r$accents", "id": "r$html"}', block_read("$html")),
    recall('{"id": "r$case"}', block_read("$case")),
    recall('{"id": "r$html"}', block_read("$html")),
    recall('{"id": "r$empty"}', block_read("$empty")),
    recall('{"id": "r$blank"}', block_read("$blank")),
    recall('{"id": "r$emoji"}', block_read("$emoji")),
    recall('{"id": "r$spaces"}', block_read("$spaces")),
    recall('{"id": "r$ctrl"}', block_read("$ctrl")),
    recall('{"id": "r$quotes"}', block_read("$quotes")),
    # recall: well formed but absent or unreadable
    recall('{"id": "r$locked"}', block_read("$locked")),
    recall('{"id": "r1"}', block_read("1")),
    recall('{"id": "r\\u0037"}', block_read("7")),
    recall('{"id": "r9223372036854775807"}', block_read("9223372036854775807")),
    # recall: malformed ids, never read
    recall('{"id": "Rr$accents"}'),
    recall('{"id": "r-$accents"}'),
    recall('{"id": "r+$accents"}'),
    recall('{"id": "r0"}'),
    recall('{"id": "r$accentsa"}'),
    recall('{"id": "r99999999999999999999"}'),
    recall('{"id": "r9223372036854775808"}'),
    recall('{"id": "r\\uff17"}'),
    recall('{"id": "r 1 000"}'),
    recall('{"id": "\\"r$accents\\""}'),
    recall('{"id": "it\'s \\"r$accents\\" \\\\ \\u0007 \\u2028 \\ud800 \\ud83d\\ude00"}'),
    # recall_search: query absent, not a string, blank
    search("{}", NONE),
    search('{"query": 5}', NONE),
    search('{"query": null}', NONE),
    search('{"query": ""}', NONE),
    search('{"query": " \\u00a0\\t "}', NONE),
    search('{"query": "parity", "x": 1e400}', NONE),
    search("not json", NONE),
    # recall_search: no terms (too short, punctuation, Greek, symbols): never read
    search('{"query": "a b c"}', NONE),
    search('{"query": "!!! ?? -- ..."}', NONE),
    search('{"query": "Σ σ ΣΟΦΙΑ οδος"}', NONE),
    search('{"query": "ß \U0001f600 \u212a x"}', NONE),
    # recall_search: case, accents, İ, Unicode case
    search('{"query": "café"}'),
    search('{"query": "CAFÉ CRÈME"}'),
    search('{"query": "ÉCOLE élève"}'),
    search('{"query": "İstanbul"}'),
    search('{"query": "İİ"}'),
    search('{"query": "KIRMIZI kırmızı"}'),
    search('{"query": "straße"}'),
    search('{"query": "ǅemal"}'),
    search('{"query": "ÀÉÎÕÜ ÿŸ x÷y"}'),
    search('{"query": "\\u212aelvin kelvin"}'),
    # recall_search: underscores and punctuation cut
    search('{"query": "foo_bar"}'),
    search('{"query": "html <b> &amp; entities!"}'),
    search('{"query": "\\"quotes\\", back\\\\slash"}'),
    search('{"query": "rocket \U0001f680"}'),
    search('{"query": "r1000 1000"}'),
    # recall_search: bounded excerpts
    search('{"query": "mot fin"}'),
    search('{"query": "éé"}'),
    search('{"query": "nbsp"}'),
    search('{"query": "carriage"}'),
    search('{"query": "blank lines"}'),
    search('{"query": "label"}'),
    # recall_search: limits
    search('{"query": "similar"}'),
    search('{"query": "similar", "limit": 1}'),
    search('{"query": "similar", "limit": 2.9}'),
    search('{"query": "similar", "limit": 0.5}'),
    search('{"query": "similar", "limit": 0}'),
    search('{"query": "similar", "limit": -1}'),
    search('{"query": "similar", "limit": -2.5}'),
    search('{"query": "similar", "limit": 20}'),
    search('{"query": "similar", "limit": 21}'),
    search('{"query": "similar", "limit": 1e300}'),
    search('{"query": "similar", "limit": -1e300}'),
    search('{"query": "similar", "limit": 9.2233720368547758e18}'),
    search('{"query": "similar", "limit": "3"}'),
    search('{"query": "similar", "limit": true}'),
    search('{"query": "similar", "limit": null}'),
    search('{"query": "similar", "limit": [3]}'),
    search('{"query": "similar", "limit": 3, "limit": 7}'),
    search('{"query": "similar note parity", "limit": 20}'),
    search('{"query": "parity testing number 12"}'),
    # recall_search: no result; the locked block never appears
    search('{"query": "nothingmatcheshere"}'),
    search('{"query": "topsecret"}'),
    search('{"query": "secret locked payload"}'),
    # recall_search: the query is cited as received
    search('{"query": "  \\"zzz\\" \\t\\u2028 \\u0000 \\ud800 "}'),
]

_REF = re.compile(r"\$([a-z0-9]+)")


def resolve(text: str, seqs: dict[str, int]) -> str:
    return _REF.sub(lambda m: str(seqs[m.group(1)]) if m.group(1) in seqs else m.group(0), text)


@dataclass
class Varied:
    go: RunningReference
    host: Host
    seqs: dict[str, int]


@pytest.fixture(scope="module")
def varied(go_build: GoReference, host_kind: str) -> Iterator[Varied]:
    """A fresh Go (first seq 1000, a token) holding BLOCKS, and a host on it."""
    with (
        start_reference(go_build, first_seq=1000, token=TOKEN) as go,
        Host(host_kind, go.base_url, token=TOKEN) as host,
    ):
        seqs = {name: go.archive(*block[:2], locked=block[2]) for name, block in BLOCKS.items()}
        assert seqs["accents"] == 1000
        yield Varied(go, host, seqs)


@pytest.mark.go
@pytest.mark.parametrize("call", CALLS, ids=str)
def test_exec_tool_is_go_byte_for_byte(varied: Varied, call: Call) -> None:
    args = resolve(call.args, varied.seqs)
    before = len(varied.go.requests())
    output = varied.host.exec_tool(call.name, args)
    # A read of /blocks after the first sends the tag kept (?since=): test_delta.py's.
    reads = [r.partition("?since=")[0] for r in varied.go.requests()[before:]]
    assert reads == [resolve(read, varied.seqs) for read in call.reads]  # and no /tool/exec
    assert output == varied.go.exec_tool(call.name, args)


@pytest.mark.go
def test_every_block_recalled_and_the_locked_one_never(varied: Varied) -> None:
    for seq in varied.seqs.values():
        args = json.dumps({"id": f"r{seq}"})
        output = varied.host.exec_tool("recall", args)
        assert output == varied.go.exec_tool("recall", args)
        assert "topsecret" not in output  # the locked block is never readable


@pytest.mark.go
@pytest.mark.parametrize(
    ("name", "args", "go_args"),
    [
        ("recall", '{"id": "r1000\ud800"}', '{"id": "r1000\ufffd"}'),
        ("recall", '{"id": "\ud83d\ude00"}', '{"id": "\ufffd\ufffd"}'),  # paired: each one
        (
            "recall_search",
            '{"query": "caf\udce9 cr\ud83d\ude00me"}',
            '{"query": "caf\ufffd cr\ufffd\ufffdme"}',
        ),
        ("recall_search", '{"query": "similar"}\udc80', '{"query": "similar"}\ufffd'),
    ],
)
def test_surrogates_become_replacement_characters(
    varied: Varied, name: str, args: str, go_args: str
) -> None:
    before = len(varied.go.requests())
    output = varied.host.exec_tool(name, args)
    assert not any(EXEC_PATH in r for r in varied.go.requests()[before:])
    assert output == varied.go.exec_tool(name, go_args)


@pytest.mark.go
def test_unknown_tool_goes_to_go(varied: Varied) -> None:
    before = len(varied.go.requests())
    with pytest.raises(UnknownToolError, match="frobnicate") as caught:
        varied.host.exec_tool("frobnicate", '{"id": "r1000"}')
    assert caught.value.name == "frobnicate"
    assert varied.go.requests()[before:] == [f"POST {EXEC_PATH}"]


# The contract's own examples, in a Go where seq 7 exists.

CONTRACT_IDS = {
    "r7": 7,
    "R7": 7,
    "rR7": 7,
    " r 7 ": 7,
    "r007": 7,
    "Rr7": None,
    "r-7": None,
    "r+7": None,
    "r0": None,
    "r7a": None,
    "r99999999999999999999": None,
}


@pytest.mark.go
def test_contract_examples(fresh_go: FreshGo, make_host: MakeHost) -> None:
    go = fresh_go(first_seq=5)
    for i in range(5):
        go.archive(f"label {i}", f"content {i}\nline two")
    with make_host(go.base_url) as host:
        for block_id, seq in CONTRACT_IDS.items():
            args = json.dumps({"id": block_id})
            before = len(go.requests())
            output = host.exec_tool("recall", args)
            assert go.requests()[before:] == ([f"{BLOCK}{seq}"] if seq else [])
            assert output == go.exec_tool("recall", args)
            if seq:
                assert output.startswith("[r7] ")


@pytest.mark.go
def test_token_is_sent_and_required(fresh_go: FreshGo, make_host: MakeHost) -> None:
    go = fresh_go(first_seq=1000, token=TOKEN)
    seq = go.archive("label", "content")
    args = json.dumps({"id": f"r{seq}"})
    with make_host(go.base_url, token=TOKEN) as host:
        assert host.exec_tool("recall", args) == go.exec_tool("recall", args)
    for token in (None, "wrong-token"):
        with make_host(go.base_url, token=token) as host:
            with pytest.raises(FallbackFailedError, match="status 401") as caught:
                host.exec_tool("recall", args)
            assert TOKEN not in str(caught.value)
            assert "wrong-token" not in str(caught.value)


# The fallback, with pytest-httpserver as a misbehaving Go.

EXEC_OUTPUT = "the output of Go's /tool/exec"
RECALL_ARGS = '{"id": "r7"}'
SEARCH_ARGS = '{"query": "alpha"}'


def serve_exec(server: HTTPServer, output: str = EXEC_OUTPUT) -> None:
    server.expect_request(EXEC_PATH, method="POST").respond_with_json({"output": output})


def exec_calls(server: HTTPServer) -> list[dict[str, object]]:
    return [json.loads(req.get_data()) for req, _ in server.log if req.path == EXEC_PATH]


def read_paths(server: HTTPServer) -> list[str]:
    return [req.path for req, _ in server.log if req.method == "GET"]


def respond(status: int, body: str | bytes, content_type: str = "application/json") -> Response:
    return Response(body, status=status, content_type=content_type)


BAD_READS = {
    "500": respond(500, '{"error": "internal"}'),
    "503-text": respond(503, "unavailable", "text/plain"),
    "bare-404": respond(404, "404 page not found\n", "text/plain"),
    "json-404-array": respond(404, '["error"]'),
    "401": respond(401, '{"error": "unauthorized"}'),
    "invalid-json": respond(200, '{"seq": 7, "label": "x", "content": "y"'),
    "nan": respond(200, '{"seq": NaN, "label": "x", "content": "y"}'),
    "html": respond(200, "<html>oops</html>", "text/html"),
    "wrong-shape": respond(200, '{"seq": "7", "label": "x", "content": "y"}'),
    "redirect": Response("", status=302, headers={"Location": "/elsewhere"}),
}


def good_read(path: str) -> Response:
    if path == BLOCK_PATH:
        return respond(200, '{"seq": 7, "label": "alpha", "content": "alpha"}')
    return respond(200, '{"blocks": [{"seq": 7, "label": "alpha", "content": "alpha"}]}')


@pytest.mark.parametrize(
    ("name", "args", "path"),
    [
        ("recall", RECALL_ARGS, BLOCK_PATH),
        ("recall_search", SEARCH_ARGS, BLOCKS_PATH),
    ],
)
@pytest.mark.parametrize("bad", BAD_READS, ids=str)
def test_fallback_on_a_bad_read(
    httpserver: HTTPServer, name: str, args: str, path: str, bad: str, make_host: MakeHost
) -> None:
    httpserver.expect_request(path, method="GET").respond_with_response(BAD_READS[bad])
    httpserver.expect_request("/elsewhere").respond_with_response(good_read(path))
    serve_exec(httpserver)
    with make_host(httpserver.url_for("/")) as host:
        assert host.exec_tool(name, args) == EXEC_OUTPUT
    assert read_paths(httpserver) == [path]  # one read, no redirect followed
    assert exec_calls(httpserver) == [{"name": name, "args": args}]


def test_json_404_for_a_block_is_computed_here(httpserver: HTTPServer, make_host: MakeHost) -> None:
    httpserver.expect_request(BLOCK_PATH, method="GET").respond_with_json(
        {"error": "not found"}, status=404
    )
    serve_exec(httpserver)
    with make_host(httpserver.url_for("/")) as host:
        output = host.exec_tool("recall", RECALL_ARGS)
    assert output != EXEC_OUTPUT
    assert output.startswith("no archived block ")
    assert exec_calls(httpserver) == []


@pytest.mark.go
def test_json_404_output_is_gos(
    httpserver: HTTPServer, go_reference: RunningReference, make_host: MakeHost
) -> None:
    httpserver.expect_request(BLOCK_PATH, method="GET").respond_with_json(
        {"error": "not found"}, status=404
    )
    with make_host(httpserver.url_for("/")) as host:
        assert host.exec_tool("recall", RECALL_ARGS) == go_reference.exec_tool(
            "recall", RECALL_ARGS
        )


@pytest.fixture(name="closed_port_url")
def closed_port_url_fixture() -> str:
    return closed_port_url()


@pytest.fixture
def resetting_url() -> Iterator[str]:
    """A server that accepts connections and resets them without answering."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    listener.settimeout(0.1)
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            conn.close()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{listener.getsockname()[1]}"
    stop.set()
    thread.join(5)
    listener.close()


@pytest.mark.parametrize(
    ("name", "args"), [("recall", RECALL_ARGS), ("recall_search", SEARCH_ARGS)]
)
@pytest.mark.parametrize("where", ["closed_port_url", "resetting_url"])
def test_fallback_when_reads_are_refused_or_reset(
    httpserver: HTTPServer,
    request: pytest.FixtureRequest,
    name: str,
    args: str,
    where: str,
    make_host: MakeHost,
) -> None:
    serve_exec(httpserver)
    transport = ReadsElsewhere(request.getfixturevalue(where))
    with make_host(httpserver.url_for("/"), transport=transport) as host:
        assert host.exec_tool(name, args) == EXEC_OUTPUT
    assert exec_calls(httpserver) == [{"name": name, "args": args}]


@pytest.fixture(scope="module")
def threaded_server() -> Iterator[HTTPServer]:
    """A server answering each request on a thread of its own (a held read blocks no other).

    One for the module: a stop waits out the server's poll interval (0.5 s).
    """
    server = HTTPServer(threaded=True)
    server.start()
    yield server
    server.stop()


@pytest.mark.waits
@pytest.mark.parametrize(
    ("name", "args", "path"),
    [
        ("recall", RECALL_ARGS, BLOCK_PATH),
        ("recall_search", SEARCH_ARGS, BLOCKS_PATH),
    ],
)
def test_fallback_on_a_time_out(
    name: str, args: str, path: str, make_host: MakeHost, threaded_server: HTTPServer
) -> None:
    server = threaded_server
    held = threading.Event()  # the read answers only once the test ends: 30 s at most
    try:

        def slow(req: Request) -> Response:
            held.wait(30)
            return good_read(path)

        server.expect_request(path, method="GET").respond_with_handler(slow)
        serve_exec(server)
        started = time.monotonic()
        with make_host(server.url_for("/"), timeout=1.0) as host:
            assert host.exec_tool(name, args) == EXEC_OUTPUT
        # The contract's time-out (1 s) with a wide margin, far under the read's 30 s.
        assert time.monotonic() - started < 10
        assert exec_calls(server) == [{"name": name, "args": args}]
    finally:
        held.set()
        server.clear()


def test_both_failing(httpserver: HTTPServer, make_host: MakeHost) -> None:
    httpserver.expect_request(BLOCK_PATH).respond_with_data("boom", status=500)
    httpserver.expect_request(EXEC_PATH).respond_with_data("bad gateway", status=502)
    with (
        make_host(httpserver.url_for("/"), token=TOKEN) as host,
        pytest.raises(FallbackFailedError) as caught,
    ):
        host.exec_tool("recall", RECALL_ARGS)
    error = caught.value
    assert isinstance(error, GoUnavailableError)
    assert isinstance(error.read_error, GoUnavailableError)
    assert isinstance(error.exec_error, GoUnavailableError)
    message = str(error)
    go = httpserver.url_for("/").rstrip("/")
    assert f"GET {go}{BLOCK_PATH}?seq=7: status 500" in message
    assert f"POST {go}{EXEC_PATH}: status 502" in message
    assert TOKEN not in message
    assert TOKEN not in repr(error)
    assert TOKEN not in repr(host)
    assert len(exec_calls(httpserver)) == 1


def test_both_refused(closed_port_url: str, make_host: MakeHost) -> None:
    with (
        make_host(closed_port_url) as host,
        pytest.raises(FallbackFailedError, match="ConnectError") as caught,
    ):
        host.exec_tool("recall_search", SEARCH_ARGS)
    assert f"GET {closed_port_url}{BLOCKS_PATH}" in str(caught.value)
    assert f"POST {closed_port_url}{EXEC_PATH}" in str(caught.value)


def test_fallback_answered_unknown_tool(httpserver: HTTPServer, make_host: MakeHost) -> None:
    httpserver.expect_request(BLOCKS_PATH).respond_with_data("boom", status=500)
    httpserver.expect_request(EXEC_PATH).respond_with_json(
        {"error": 'unknown tool "recall_search"'}, status=404
    )
    with make_host(httpserver.url_for("/")) as host, pytest.raises(FallbackFailedError) as caught:
        host.exec_tool("recall_search", SEARCH_ARGS)
    assert isinstance(caught.value.exec_error, UnknownToolError)


def test_other_tools_go_straight_to_go(httpserver: HTTPServer, make_host: MakeHost) -> None:
    serve_exec(httpserver)
    with make_host(httpserver.url_for("/"), token=TOKEN) as host:
        assert host.exec_tool("web_fetch", '{"url": "x\ud800"}') == EXEC_OUTPUT
    ((req, _),) = httpserver.log
    assert req.headers["Authorization"] == f"Bearer {TOKEN}"
    assert json.loads(req.get_data()) == {"name": "web_fetch", "args": '{"url": "x\ufffd"}'}


def test_unknown_tool(httpserver: HTTPServer, make_host: MakeHost) -> None:
    httpserver.expect_request(EXEC_PATH).respond_with_json(
        {"error": 'unknown tool "frobnicate"'}, status=404
    )
    with (
        make_host(httpserver.url_for("/")) as host,
        pytest.raises(UnknownToolError, match="frobnicate") as caught,
    ):
        host.exec_tool("frobnicate", "{}")
    assert caught.value.name == "frobnicate"
    assert isinstance(caught.value, RecallError)


@pytest.mark.parametrize(
    "response",
    [respond(404, "404 page not found\n", "text/plain"), respond(500, "{}"), respond(200, "{}")],
)
def test_other_tool_when_go_fails(
    httpserver: HTTPServer, response: Response, make_host: MakeHost
) -> None:
    httpserver.expect_request(EXEC_PATH).respond_with_response(response)
    with make_host(httpserver.url_for("/")) as host, pytest.raises(GoUnavailableError) as caught:
        host.exec_tool("web_fetch", "{}")
    assert not isinstance(caught.value, FallbackFailedError)


def test_fallback_catches_only_go_unavailable(make_host: MakeHost) -> None:
    calls: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        calls.append(request.method)
        if request.method == "GET":
            raise RuntimeError("a bug, not an unavailable Go")
        return httpx.Response(200, json={"output": EXEC_OUTPUT})

    with (
        make_host("http://go.test", transport=httpx.MockTransport(handler)) as host,
        pytest.raises(RuntimeError),
    ):
        host.exec_tool("recall", RECALL_ARGS)
    assert calls == ["GET"]


def test_no_archive_read_for_a_malformed_id_or_a_query_without_terms(
    httpserver: HTTPServer,
    make_host: MakeHost,
) -> None:
    serve_exec(httpserver)
    with make_host(httpserver.url_for("/")) as host:
        for name, args in [
            ("recall", '{"id": "r7a"}'),
            ("recall", "{}"),
            ("recall_search", '{"query": "a ! b"}'),
            ("recall_search", '{"query": " "}'),
        ]:
            host.exec_tool(name, args)
    assert httpserver.log == []
