"""parity.goclient: every route against the Go reference, one error mapping, the token
never shown, the connection options (flags, environment) checked when they are built.

TLS against the reference serving HTTPS is in ``test_goclient_tls.py``.
"""

from __future__ import annotations

import json
import logging
import time
import traceback
from argparse import Namespace
from pathlib import Path

import pytest
from pytest_httpserver import HTTPServer
from werkzeug import Request, Response

from parity import goclient
from parity.errors import GoClientError, ParityError
from parity.fixtures.go import FreshGo
from parity.goclient import (
    ARCHIVE_PATH,
    CA_ENV,
    CERT_ENV,
    KEY_ENV,
    TOKEN_ENV,
    GoClient,
    GoConnection,
    archive_request,
    connection_from_options,
    lock_request,
    log_request,
    outputs_request,
)
from parity.journal import JournalBlock
from recall._protocol import BLOCK_PATH, BLOCKS_PATH, EXEC_PATH

TOKEN = "tok-GOCLIENT-4e1f-never-shown"
UNREACHABLE = "http://127.0.0.1:9"


def client_of(server: HTTPServer, **options: object) -> GoClient:
    return GoClient(GoConnection(server.url_for("/"), token=TOKEN), **options)  # type: ignore[arg-type]


# -- every route, against the Go reference ------------------------------------------------


@pytest.mark.go
def test_every_contract_route_against_the_reference(fresh_go: FreshGo) -> None:
    go = fresh_go(first_seq=700, token=TOKEN)
    with GoClient(GoConnection(go.base_url, token=TOKEN)) as client:
        assert client.blocks() == []
        first = client.archive("Notes <b>", "Café & crème\nsecond line")
        locked = client.archive("Secret", "hidden", locked=True)
        last = client.archive("", "")
        assert (first, locked, last) == (700, 701, 702)
        served = client.blocks()
        assert [b.seq for b in served] == [first, last]  # the locked block is never served
        assert served[0] == JournalBlock(first, "Notes <b>", "Café & crème\nsecond line")
        assert client.block(first) == served[0]
        assert client.block(str(last)) == served[1]
        assert client.block(locked) is None  # the contract's JSON 404
        assert client.block(99_999) is None
        with pytest.raises(GoClientError, match=r"GET /internal/v1/recall/block\?seq=r7") as bad:
            client.block("r7")
        assert bad.value.status == 400
        read = client.blocks_read()
        assert read.status == 200
        assert read.body is not None
        assert [b["seq"] for b in json.loads(read.body)["blocks"]] == [first, last]
        output = client.exec_tool("recall", json.dumps({"id": f"r{first}"}))
        assert output == go.exec_tool("recall", json.dumps({"id": f"r{first}"}))
        assert output.startswith(f"[r{first}] Notes <b>\n")
        # A lone surrogate, which UTF-8 cannot carry, reaches Go as a Go string holds it.
        surrogate = client.exec_tool("recall_search", '{"query": "caf\ud800"}')
        assert surrogate == client.exec_tool("recall_search", '{"query": "caf\ufffd"}')
        with pytest.raises(GoClientError, match=r"POST /internal/v1/tool/exec \('shell'\)") as no:
            client.exec_tool("shell", "{}")
        assert no.value.status == 404
        assert "unknown tool" in str(no.value)


@pytest.mark.go
def test_every_debug_route_against_the_reference(fresh_go: FreshGo) -> None:
    go = fresh_go(first_seq=3)
    client = go.client
    assert client.reads() == []
    before = len(client.requests())  # the start's own reads of /blocks
    seq = client.archive("label", "hello world")
    client.exec_tool("recall", json.dumps({"id": f"r{seq}"}))
    client.exec_tool("recall_search", '{"query": "hello"}')
    assert client.reads() == [f"block?seq={seq}", "blocks"]
    made = client.requests()[before:]
    assert made == [f"POST {ARCHIVE_PATH}", f"POST {EXEC_PATH}", f"POST {EXEC_PATH}"]
    version = client.version()
    assert version["go_version"].startswith("go")
    assert set(version) >= {"go_version", "unicode_version", "goos", "goarch"}


@pytest.mark.go
def test_lock_reset_and_logs_from_an_index_against_the_reference(fresh_go: FreshGo) -> None:
    go = fresh_go(first_seq=40)
    client = go.client
    seq = client.archive("label", "hello")
    client.lock(seq)
    assert client.blocks() == []
    assert client.block(seq) is None
    client.lock(seq, locked=False)
    assert client.block(seq) == JournalBlock(seq, "label", "hello")
    with pytest.raises(GoClientError, match=r"POST /debug/lock \(99\)") as absent:
        client.lock(99)
    assert absent.value.status == 404
    log = client.requests()
    assert client.requests(since=1) == log[1:]
    assert client.requests(since=len(log)) == []
    with pytest.raises(GoClientError, match="answered 400") as past:
        client.requests(since=len(log) + 1)
    assert past.value.status == 400
    client.exec_tool("recall_search", '{"query": "hello"}')
    assert client.reads(since=0) == ["blocks"]
    assert client.reset(first_seq=7) == 7
    assert (client.requests(), client.reads(), client.blocks()) == ([], [], [])
    assert client.archive("again", "x") == 7
    assert client.reset() == 40  # the instance's own first seq


@pytest.mark.go
def test_batches_against_the_reference(fresh_go: FreshGo) -> None:
    go = fresh_go(first_seq=40)
    client = go.client
    assert client.archive_many(
        [("a", "café one", False), ("", "x", True), ("<b>", "two", False)]
    ) == [
        40,
        41,
        42,
    ]
    assert [b.seq for b in client.blocks()] == [40, 42]
    calls = [
        ("recall", '{"id": "r40"}'),
        ("recall", '{"id": "r41"}'),
        ("recall_search", '{"query": "CAFÉ"}'),
        ("recall", '{"id": "\ud800"}'),
        ("recall_search", "{"),
    ]
    before = len(client.requests())
    assert client.run(outputs_request(calls)) == [client.exec_tool(n, a) for n, a in calls]
    assert client.run(outputs_request([])) == []
    assert client.requests(since=before) == [f"POST {EXEC_PATH}"] * len(calls)  # exec_tool's only
    with pytest.raises(GoClientError, match=r"POST /debug/exec \('nope'\)") as unknown:
        client.run(outputs_request([("recall", "{}"), ("nope", "{}")]))
    assert unknown.value.status == 404


@pytest.mark.go
def test_a_batch_runs_debug_requests_in_order_in_one_request(fresh_go: FreshGo) -> None:
    go = fresh_go(first_seq=7)
    client = go.client
    seq = client.archive("notes", "hello")
    search = ("recall_search", '{"query": "hello"}')
    before = len(client.requests())
    alone = client.exec_tool(*search)
    outputs, log, locked, seqs, after = client.batch(
        [
            outputs_request([search]),
            log_request("requests", since=before),
            lock_request(seq),
            archive_request([("more", "hello again", False)]),
            outputs_request([search]),
        ]
    )
    assert outputs == [alone]
    assert log == [f"POST {EXEC_PATH}"]  # the batch's own requests are not logged
    assert locked is None
    assert seqs == [seq + 1]
    assert after == [client.exec_tool(*search)]
    assert "[r8]" in after[0]
    assert "[r7]" not in after[0]  # the lock held
    assert client.batch([]) == []
    assert client.batch([log_request("reads")]) == [client.reads()]


@pytest.mark.go
def test_a_batch_stops_at_the_request_that_fails(fresh_go: FreshGo) -> None:
    go = fresh_go(first_seq=7)
    client = go.client
    seq = client.archive("notes", "hello")
    with pytest.raises(
        GoClientError, match=r"POST /debug/lock \(999\) \(in POST /debug/batch\)"
    ) as e:
        client.batch([lock_request(999), lock_request(seq)])
    assert e.value.status == 404
    assert client.exec_tool("recall", f'{{"id": "r{seq}"}}').startswith("[r7]")  # never locked
    with pytest.raises(
        GoClientError, match=r"POST /debug/exec \('nope'\) \(in POST /debug/batch\)"
    ):
        client.batch([lock_request(seq), outputs_request([("nope", "{}")])])


def test_a_batch_answered_short_is_an_error(httpserver: HTTPServer) -> None:
    httpserver.expect_request("/debug/batch", method="POST").respond_with_json(
        {"responses": [{"status": 200, "body": {"requests": [], "next": 0}}]}
    )
    with (
        client_of(httpserver) as client,
        pytest.raises(GoClientError, match="answered 1 responses for 2 requests"),
    ):
        client.batch([log_request("requests", since=0), log_request("reads", since=0)])
    sent = json.loads(httpserver.log[0][0].get_data())
    assert sent == {
        "requests": [
            {"method": "GET", "path": "/debug/requests?since=0"},
            {"method": "GET", "path": "/debug/reads?since=0"},
        ]
    }


@pytest.mark.go
def test_a_go_without_debug_routes(fresh_go: FreshGo) -> None:
    """A production Go (-no-debug): every debug route is a 404, the contract's routes work."""
    go = fresh_go(debug=False)
    client = go.client
    seq = client.archive("l", "c")
    assert client.blocks() == [JournalBlock(seq, "l", "c")]
    for call in (client.requests, client.reads, client.version, client.reset):
        with pytest.raises(GoClientError, match="answered 404: 404 page not found") as caught:
            call()
        assert caught.value.status == 404


def test_a_log_without_next_is_a_go_that_does_not_know_since(httpserver: HTTPServer) -> None:
    """A Go without ``?since=`` lists the whole log: an error, never taken for a part."""
    httpserver.expect_request("/debug/requests").respond_with_json(
        {"requests": ["GET /a", "GET /b"]}
    )
    with client_of(httpserver) as client:
        assert client.requests() == ["GET /a", "GET /b"]
        with pytest.raises(GoClientError, match='no "next": it does not know'):
            client.requests(since=1)


# -- one error mapping --------------------------------------------------------------------


def test_a_go_that_does_not_answer() -> None:
    with (
        GoClient(GoConnection(UNREACHABLE, token=TOKEN)) as client,
        pytest.raises(GoClientError) as caught,
    ):
        client.blocks()
    error = caught.value
    assert isinstance(error, ParityError)  # the CLI's exit 2
    assert error.status is None
    assert str(error).startswith(f"GET {BLOCKS_PATH}: the Go at {UNREACHABLE} did not answer: ")
    assert "ConnectError" in str(error)
    assert isinstance(error.__cause__, Exception)


def test_a_time_out(httpserver: HTTPServer) -> None:
    def slow(request: Request) -> Response:
        time.sleep(1.0)
        return Response("{}", content_type="application/json")

    httpserver.expect_request("/debug/version").respond_with_handler(slow)
    with client_of(httpserver, timeout=0.2) as client, pytest.raises(GoClientError) as caught:
        client.version()
    assert "did not answer: ReadTimeout" in str(caught.value)


@pytest.mark.parametrize(
    ("route", "call", "status", "body", "message"),
    [
        (BLOCKS_PATH, "blocks", 500, "boom", "answered 500: boom"),
        (BLOCKS_PATH, "blocks", 200, "not json", "a body that is not JSON"),
        (BLOCKS_PATH, "blocks", 200, "[]", 'no "blocks" array'),
        (BLOCKS_PATH, "blocks", 200, '{"blocks": {}}', 'no "blocks" array'),
        (BLOCKS_PATH, "blocks", 200, '{"blocks": [{"seq": "1"}]}', "not a block"),
        (
            BLOCKS_PATH,
            "blocks",
            200,
            '{"blocks": [{"seq": 1, "label": "", "content": 2}]}',
            "not a block",
        ),
        (BLOCK_PATH, "block", 404, "404 page not found", "answered 404: 404 page not found"),
        (BLOCK_PATH, "block", 200, '{"seq": true, "label": "", "content": ""}', "not a block"),
        (ARCHIVE_PATH, "archive", 200, '{"seq": "7"}', 'no int "seq"'),
        (ARCHIVE_PATH, "archive", 200, '{"seq": true}', 'no int "seq"'),
        (ARCHIVE_PATH, "archive", 400, '{"error": "bad body"}', "answered 400"),
        (EXEC_PATH, "exec_tool", 200, '{"output": null}', 'no str "output"'),
        (EXEC_PATH, "exec_tool", 200, '"text"', "JSON that is not an object"),
        (EXEC_PATH, "exec_tool", 502, "bad gateway", "answered 502: bad gateway"),
        ("/debug/requests", "requests", 200, '{"requests": [1]}', 'no "requests" array of strings'),
        ("/debug/reads", "reads", 404, "404 page not found", "answered 404"),
        ("/debug/version", "version", 401, "unauthorized", "answered 401"),
    ],
)
def test_what_is_not_the_routes_answer_is_an_error(
    httpserver: HTTPServer, route: str, call: str, status: int, body: str, message: str
) -> None:
    httpserver.expect_request(route).respond_with_data(
        body, status=status, content_type="application/json"
    )
    args = {"archive": ("l", "c"), "exec_tool": ("recall", "{}"), "block": (7,)}.get(call, ())
    with client_of(httpserver) as client, pytest.raises(GoClientError) as caught:
        getattr(client, call)(*args)
    text = str(caught.value)
    assert message in text
    assert f" {route}" in text  # the request is named
    assert caught.value.status == (status if status != 200 else None)


def test_a_json_404_is_an_absent_block_a_bare_404_a_missing_route(httpserver: HTTPServer) -> None:
    httpserver.expect_request(BLOCK_PATH, query_string="seq=7").respond_with_json(
        {"error": "not found"}, status=404
    )
    httpserver.expect_request(BLOCK_PATH, query_string="seq=8").respond_with_data(
        "404 page not found", status=404, content_type="text/plain"
    )
    with client_of(httpserver) as client:
        assert client.block(7) is None
        with pytest.raises(GoClientError, match="answered 404: 404 page not found") as caught:
            client.block(8)
    assert caught.value.status == 404


def test_blocks_read_is_conditional(httpserver: HTTPServer) -> None:
    body = b'{"blocks":[]}\n'
    httpserver.expect_request(BLOCKS_PATH, headers={"If-None-Match": '"g1"'}).respond_with_data(
        "", status=304, headers={"ETag": '"g1"'}
    )
    httpserver.expect_request(BLOCKS_PATH).respond_with_data(
        body, headers={"ETag": '"g1"'}, content_type="application/json"
    )
    with client_of(httpserver) as client:
        assert client.blocks_read() == goclient.BlocksAnswer(200, '"g1"', body)
        assert client.blocks_read(etag='"g1"') == goclient.BlocksAnswer(304, '"g1"', None)


def test_an_unasked_304_is_an_error(httpserver: HTTPServer) -> None:
    httpserver.expect_request(BLOCKS_PATH).respond_with_data("", status=304)
    with client_of(httpserver) as client, pytest.raises(GoClientError, match="answered 304"):
        client.blocks_read()


def test_requests_sent(httpserver: HTTPServer) -> None:
    """What the client sends: method, path, query, JSON body, the token as a Bearer."""
    answers = {
        ARCHIVE_PATH: {"seq": 5, "id": "r5"},
        EXEC_PATH: {"output": "out"},
        "/debug/lock": {"seq": 5, "locked": True},
        "/debug/reset": {"first_seq": 9},
        "/debug/requests": {"requests": ["GET /x"], "next": 3},
    }
    for path, answer in answers.items():
        httpserver.expect_request(path).respond_with_json(answer)
    with client_of(httpserver) as client:
        assert client.archive("l", "c", locked=True) == 5
        assert client.exec_tool("recall_search", '{"query": "x\ud800"}') == "out"
        client.lock(5)
        client.lock(5, locked=False)
        assert client.reset() == 9
        assert client.reset(first_seq=9) == 9
        assert client.requests(since=2) == ["GET /x"]
    sent = [
        (r.method, r.full_path.rstrip("?"), r.get_data(as_text=True), r.headers["Authorization"])
        for r, _ in httpserver.log
    ]
    bearer = f"Bearer {TOKEN}"
    assert [(m, p, json.loads(b) if b else None, a) for m, p, b, a in sent] == [
        ("POST", ARCHIVE_PATH, {"label": "l", "content": "c", "locked": True}, bearer),
        ("POST", EXEC_PATH, {"name": "recall_search", "args": '{"query": "x\ud800"}'}, bearer),
        ("POST", "/debug/lock", {"seq": 5, "locked": True}, bearer),
        ("POST", "/debug/lock", {"seq": 5, "locked": False}, bearer),
        ("POST", "/debug/reset", {}, bearer),
        ("POST", "/debug/reset", {"first_seq": 9}, bearer),
        ("GET", "/debug/requests?since=2", None, bearer),
    ]


def test_no_redirect_is_followed(httpserver: HTTPServer) -> None:
    httpserver.expect_request(BLOCKS_PATH).respond_with_data(
        "", status=307, headers={"Location": httpserver.url_for("/elsewhere")}
    )
    with client_of(httpserver) as client, pytest.raises(GoClientError, match="answered 307"):
        client.blocks()
    assert [r.path for r, _ in httpserver.log] == [BLOCKS_PATH]


def test_the_environment_is_not_read(
    httpserver: HTTPServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """trust_env=False: a proxy in the environment is never used."""
    monkeypatch.setenv("HTTP_PROXY", UNREACHABLE)
    monkeypatch.setenv("ALL_PROXY", UNREACHABLE)
    monkeypatch.delenv("NO_PROXY", raising=False)
    httpserver.expect_request("/debug/version").respond_with_json({"go_version": "go1"})
    with GoClient(GoConnection(httpserver.url_for("/").replace("localhost", "127.0.0.1"))) as c:
        assert c.version() == {"go_version": "go1"}


# -- the token, never shown ----------------------------------------------------------------


def test_the_token_is_masked_in_errors_reprs_and_logs(
    httpserver: HTTPServer, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)  # httpx and httpcore log at INFO and DEBUG
    httpserver.expect_request(BLOCKS_PATH).respond_with_data(
        f"bad token {TOKEN}", status=401
    )  # a Go that echoes the token
    connection = GoConnection(httpserver.url_for("/"), token=TOKEN)
    texts = [repr(connection), str(connection)]
    with GoClient(connection) as client:
        texts.append(repr(client))
        with pytest.raises(GoClientError) as caught:
            client.blocks()
        texts += [str(caught.value), repr(caught.value)]
        texts.append("".join(traceback.format_exception(caught.value)))
    with GoClient(GoConnection(UNREACHABLE, token=TOKEN)) as client:
        with pytest.raises(GoClientError) as refused:
            client.exec_tool("recall", "{}")
        texts.append("".join(traceback.format_exception(refused.value)))
    texts.append(caplog.text)
    assert "bad token ***" in str(caught.value)
    assert "token=***" in repr(connection)
    assert caplog.text  # the logs were captured
    for text in texts:
        assert TOKEN not in text


def test_a_password_in_the_url_is_never_shown() -> None:
    connection = GoConnection("http://user:pa55w0rd@127.0.0.1:9/")
    assert connection.url == "http://127.0.0.1:9"
    with GoClient(connection) as client, pytest.raises(GoClientError) as caught:
        client.blocks()
    for text in (repr(connection), repr(client), str(caught.value)):
        assert "pa55w0rd" not in text
        assert "user" not in text


# -- the connection options ---------------------------------------------------------------


def test_options_come_from_flags_else_the_environment(tmp_path: Path) -> None:
    env = {TOKEN_ENV: TOKEN, CA_ENV: "/env/ca.pem", CERT_ENV: "/env/c.pem", KEY_ENV: "/env/k.pem"}
    with pytest.raises(GoClientError, match=r"the CA file /env/ca\.pem: no such file"):
        connection_from_options(Namespace(go_url="https://go.test"), environ=env)
    ca = tmp_path / "ca.pem"
    ca.write_text("not a certificate")
    with pytest.raises(GoClientError, match=f"the CA file {ca}: "):
        connection_from_options(Namespace(go_url="https://go.test", go_ca=str(ca)), environ=env)
    plain = connection_from_options(Namespace(go_url="http://go.test"), environ={TOKEN_ENV: TOKEN})
    assert plain == GoConnection("http://go.test", token=TOKEN)
    assert connection_from_options(
        Namespace(go_url="http://go.test"), environ={TOKEN_ENV: ""}
    ) == GoConnection("http://go.test")
    assert connection_from_options(Namespace(go_url=None), environ=env) is None


def test_tls_options_without_a_url_are_an_error() -> None:
    with pytest.raises(GoClientError, match="--go-ca, --go-key apply to --go-url"):
        connection_from_options(Namespace(go_ca="ca.pem", go_key="k.pem"), environ={})
    with pytest.raises(GoClientError, match="--parity-go-cert apply to --parity-go-url"):
        connection_from_options(Namespace(parity_go_cert="c.pem"), prefix="--parity-go", environ={})


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"base_url": "go.internal:8443"}, "not an http:// or https:// URL"),
        ({"base_url": "ftp://go.internal/"}, "not an http:// or https:// URL"),
        ({"base_url": "http://"}, "not an http:// or https:// URL"),
        ({"base_url": "http://go.test", "ca": Path("ca.pem")}, "is not https://"),
        ({"base_url": "http://go.test", "cert": Path("c.pem")}, "is not https://"),
        ({"base_url": "https://go.test", "key": Path("k.pem")}, "without its certificate"),
        ({"base_url": "https://go.test", "token": "two words"}, "visible ASCII"),
        ({"base_url": "https://go.test", "token": "tök"}, "visible ASCII"),
        ({"base_url": "https://go.test", "token": ""}, "visible ASCII"),
    ],
)
def test_a_connection_is_checked_when_built(kwargs: dict[str, object], message: str) -> None:
    url = str(kwargs.pop("base_url"))
    with pytest.raises(GoClientError, match=message) as caught:
        GoConnection(url, **kwargs)  # type: ignore[arg-type]
    token = kwargs.get("token")
    if token:
        assert str(token) not in str(caught.value)


def test_without_tls_files_every_connection_shares_one_context() -> None:
    first = GoConnection("https://go.test")
    assert first.ssl_context is GoConnection("http://127.0.0.1:1").ssl_context
    assert first.ssl_context is goclient.default_ssl_context()
