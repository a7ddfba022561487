"""The Go reference instance, driven over the contract's HTTP API."""

from __future__ import annotations

import json
import math
import re
import ssl
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import httpx
import pytest

from parity.errors import GoClientError, GoReferenceError
from parity.fixtures.go import FreshGo
from parity.reference import GoReference, RunningReference, TLSFiles, go_env

pytestmark = [pytest.mark.go, pytest.mark.once]

ARCHIVE = "/internal/v1/recall/archive"
BLOCK = "/internal/v1/recall/block"
BLOCKS = "/internal/v1/recall/blocks"
EXEC = "/internal/v1/tool/exec"
LOCK = "/debug/lock"
RESET = "/debug/reset"


@pytest.fixture
def go(fresh_go: FreshGo) -> RunningReference:
    return fresh_go(first_seq=1000)


@pytest.fixture
def client(go: RunningReference) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=go.base_url, timeout=10) as client:
        yield client


def test_first_seq_is_honoured(go: RunningReference) -> None:
    assert go.archive("a", "one") == 1000
    assert go.archive("b", "two") == 1001


def test_archive_answers_seq_and_id(client: httpx.Client) -> None:
    answer = client.post(ARCHIVE, json={"label": "l", "content": "c"})
    assert answer.status_code == 200
    assert answer.json() == {"seq": 1000, "id": "r1000"}


@pytest.mark.parametrize(
    "body",
    [
        b"not json",
        b"[]",
        b'"text"',
        b"{}",
        b'{"label": "l"}',
        b'{"content": "c"}',
        b'{"label": 1, "content": "c"}',
        b'{"label": "l", "content": "c", "locked": "yes"}',
    ],
)
def test_archive_rejects_a_bad_body(client: httpx.Client, body: bytes) -> None:
    answer = client.post(ARCHIVE, content=body)
    assert answer.status_code == 400
    assert isinstance(answer.json()["error"], str)


def test_block_serves_the_archived_block(go: RunningReference, client: httpx.Client) -> None:
    seq = go.archive("Label <b>", "line one\n& two \u2028")
    answer = client.get(BLOCK, params={"seq": str(seq)})
    assert answer.status_code == 200
    assert answer.headers["content-type"].startswith("application/json")
    assert answer.json() == {"seq": seq, "label": "Label <b>", "content": "line one\n& two \u2028"}
    # Go's encoding/json: HTML characters and U+2028 escaped.
    assert b"\\u003cb\\u003e" in answer.content
    assert b"\\u0026" in answer.content
    assert b"\\u2028" in answer.content


def test_locked_block_is_never_readable(go: RunningReference, client: httpx.Client) -> None:
    readable = go.archive("open", "visible")
    locked = go.archive("secret", "hidden", locked=True)
    after = go.archive("open too", "visible too")
    assert locked == readable + 1
    answer = client.get(BLOCK, params={"seq": str(locked)})
    assert answer.status_code == 404
    assert answer.json() == {"error": "not found"}
    served = client.get(BLOCKS).json()["blocks"]
    assert [block["seq"] for block in served] == [readable, after]
    assert "hidden" not in json.dumps(served)


def test_blocks_by_increasing_seq_and_empty_array(
    go: RunningReference, client: httpx.Client
) -> None:
    assert client.get(BLOCKS).json() == {"blocks": []}
    seqs = [go.archive(f"l{i}", f"c{i}") for i in range(5)]
    assert [block["seq"] for block in client.get(BLOCKS).json()["blocks"]] == seqs


@pytest.mark.parametrize("query", [{"seq": "999999"}, {"seq": "1"}, {"seq": "-5"}])
def test_absent_block_is_a_json_404(client: httpx.Client, query: dict[str, str]) -> None:
    answer = client.get(BLOCK, params=query)
    assert answer.status_code == 404
    assert answer.json() == {"error": "not found"}


@pytest.mark.parametrize(
    "query", [{}, {"seq": ""}, {"seq": "r7"}, {"seq": "1e3"}, {"seq": "9" * 20}]
)
def test_bad_seq_is_400(client: httpx.Client, query: dict[str, str]) -> None:
    assert client.get(BLOCK, params=query).status_code == 400


@pytest.mark.parametrize(
    ("method", "path"),
    [("POST", BLOCK), ("DELETE", BLOCK), ("POST", BLOCKS), ("PUT", BLOCKS), ("GET", EXEC)],
)
def test_other_methods_are_405(client: httpx.Client, method: str, path: str) -> None:
    assert client.request(method, path).status_code == 405


def test_unknown_path_is_a_bare_404(client: httpx.Client) -> None:
    answer = client.get("/internal/v1/nowhere")
    assert answer.status_code == 404
    with pytest.raises(json.JSONDecodeError):
        json.loads(answer.text)


def test_tool_exec_runs_both_tools(go: RunningReference, client: httpx.Client) -> None:
    seq = go.archive("Notes", "Café au lait\nsecond line")
    recall = client.post(EXEC, json={"name": "recall", "args": json.dumps({"id": f"r{seq}"})})
    assert recall.status_code == 200
    assert recall.json() == {"output": f"[r{seq}] Notes\nCafé au lait\nsecond line"}
    search = client.post(EXEC, json={"name": "recall_search", "args": '{"query": "CAFÉ"}'})
    assert search.status_code == 200
    assert search.json()["output"].startswith('1 of 1 matching blocks for "CAFÉ":')


def test_tool_exec_unknown_tool_is_404(client: httpx.Client) -> None:
    answer = client.post(EXEC, json={"name": "shell", "args": "{}"})
    assert answer.status_code == 404
    assert answer.json() == {"error": 'unknown tool "shell"'}


@pytest.mark.parametrize("body", [b"nope", b"[]", b'{"name": 1, "args": "{}"}'])
def test_tool_exec_bad_body_is_400(client: httpx.Client, body: bytes) -> None:
    assert client.post(EXEC, content=body).status_code == 400


READS = "/debug/reads"


def test_debug_reads_lists_each_tool_read(go: RunningReference, client: httpx.Client) -> None:
    assert client.get(READS).json() == {"reads": [], "next": 0}
    seq = go.archive("Notes", "hello")
    locked = go.archive("Secret", "hello", locked=True)
    client.get(BLOCK, params={"seq": str(seq)})  # the read routes are not tool reads
    client.get(BLOCKS)
    assert client.get(READS).json() == {"reads": [], "next": 0}
    for name, args in [
        ("recall", json.dumps({"id": f" R{seq} "})),
        ("recall", json.dumps({"id": f"r{locked}"})),
        ("recall", '{"id": "r0"}'),
        ("recall", '{"id": "r99999999999999999999"}'),
        ("recall", "{}"),
        ("recall_search", '{"query": "HELLO"}'),
        ("recall_search", '{"query": "a b"}'),
        ("shell", "{}"),
    ]:
        client.post(EXEC, json={"name": name, "args": args})
    assert client.get(READS).json() == {
        "reads": [f"block?seq={seq}", f"block?seq={locked}", "blocks"],
        "next": 3,
    }
    assert client.post(READS).status_code == 405


def test_token_is_required_when_configured(fresh_go: FreshGo) -> None:
    go = fresh_go(token="s3cret-token")
    with httpx.Client(base_url=go.base_url, timeout=10) as anonymous:
        for method, path in [
            ("GET", BLOCKS),
            ("GET", f"{BLOCK}?seq=1"),
            ("POST", EXEC),
            ("GET", "/debug/reads"),
        ]:
            assert anonymous.request(method, path).status_code == 401
        wrong = {"Authorization": "Bearer wrong"}
        assert anonymous.get(BLOCKS, headers=wrong).status_code == 401
        right = {"Authorization": "Bearer s3cret-token"}
        assert anonymous.get(BLOCKS, headers=right).status_code == 200
    assert go.archive("l", "c") == 1


def test_reference_listens_on_loopback_only(go: RunningReference) -> None:
    assert httpx.URL(go.base_url).host == "127.0.0.1"


@pytest.mark.parametrize(
    "flags",
    [["-addr", "0.0.0.0:0"], ["-addr", "192.0.2.1:0"], ["-first-seq", "0"], ["-first-seq", "x"]],
)
def test_bad_flags_exit_2(go_build: GoReference, flags: list[str]) -> None:
    binary = go_build.build()
    done = subprocess.run(
        [str(binary), *flags], env=go_env(), capture_output=True, text=True, timeout=30
    )
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr.strip()


def _running(pid: int) -> bool:
    """Whether pid is a live process (a zombie awaiting its reaper is not)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def test_reference_stops_when_its_parent_is_killed(go_build: GoReference) -> None:
    """A harness killed by SIGKILL leaves no reference behind (-exit-on-stdin-eof)."""
    script = (
        "import os, signal\n"
        "from parity.reference import GoReference\n"
        "go = GoReference().start()\n"
        "print(go._process.pid, flush=True)\n"
        "os.kill(os.getpid(), signal.SIGKILL)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == -9
    pid = int(done.stdout.split()[0])
    deadline = time.monotonic() + 10
    while _running(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _running(pid)


ETAG = re.compile(r'"[0-9a-f]{16}-[0-9]+"')


def test_blocks_carry_a_strong_etag_and_answer_304(
    go: RunningReference, client: httpx.Client
) -> None:
    first = client.get(BLOCKS)
    tag = first.headers["etag"]
    assert ETAG.fullmatch(tag)
    for condition in [tag, f"W/{tag}", "*", f'"other", {tag}']:
        answer = client.get(BLOCKS, headers={"If-None-Match": condition})
        assert answer.status_code == 304
        assert answer.headers["etag"] == tag
        assert answer.content == b""
    answer = client.get(BLOCKS, headers={"If-None-Match": '"other"'})
    assert (answer.status_code, answer.headers["etag"]) == (200, tag)
    assert answer.json() == {"blocks": []}

    seq = go.archive("l", "c")
    stale = client.get(BLOCKS, headers={"If-None-Match": tag})
    assert stale.status_code == 200
    assert stale.json() == {"blocks": [{"seq": seq, "label": "l", "content": "c"}]}
    assert ETAG.fullmatch(stale.headers["etag"])
    assert stale.headers["etag"] != tag


def test_no_etag_is_a_go_without_conditional_reads(fresh_go: FreshGo) -> None:
    go = fresh_go(etag=False)
    seq = go.archive("l", "c")
    with httpx.Client(base_url=go.base_url, timeout=10) as client:
        for condition in [None, "*", '"x"']:
            headers = {"If-None-Match": condition} if condition else {}
            answer = client.get(BLOCKS, headers=headers)
            assert answer.status_code == 200
            assert "etag" not in answer.headers
            assert answer.json() == {"blocks": [{"seq": seq, "label": "l", "content": "c"}]}


def test_lock_hides_a_block_at_once_and_unlock_shows_it(
    go: RunningReference, client: httpx.Client
) -> None:
    seq = go.archive("Notes", "hello")
    shown = client.get(BLOCKS).headers["etag"]
    go.lock(seq)
    assert client.get(BLOCK, params={"seq": str(seq)}).status_code == 404
    hidden = client.get(BLOCKS)
    assert hidden.json() == {"blocks": []}
    assert hidden.headers["etag"] != shown
    assert go.exec_tool("recall", json.dumps({"id": f"r{seq}"})) == f'no archived block "r{seq}"'
    assert go.exec_tool("recall_search", '{"query": "hello"}') == (
        'no archived block matches "hello"'
    )
    go.lock(seq, locked=False)
    assert go.blocks() == [{"seq": seq, "label": "Notes", "content": "hello"}]
    assert client.get(BLOCKS).headers["etag"] not in {shown, hidden.headers["etag"]}
    assert go.exec_tool("recall", json.dumps({"id": f"r{seq}"})) == f"[r{seq}] Notes\nhello"


def test_lock_route_answers(go: RunningReference, client: httpx.Client) -> None:
    seq = go.archive("l", "c", locked=True)
    answer = client.post(LOCK, json={"seq": seq, "locked": False})
    assert (answer.status_code, answer.json()) == (200, {"seq": seq, "locked": False})
    answer = client.post(LOCK, json={"seq": seq + 1, "locked": True})
    assert (answer.status_code, answer.json()) == (404, {"error": "not found"})
    for body in [b"", b"{}", b'{"seq": 1000}', b'{"seq": "1000", "locked": true}']:
        assert client.post(LOCK, content=body).status_code == 400
    assert client.get(LOCK).status_code == 405
    with pytest.raises(GoClientError, match="404"):
        go.lock(seq + 1)


def test_reset_empties_the_archive_and_the_logs(go: RunningReference, client: httpx.Client) -> None:
    go.archive("Notes", "hello")
    go.exec_tool("recall", '{"id": "r1000"}')
    before = client.get(BLOCKS).headers["etag"]
    go.reset(first_seq=50)
    assert go.requests() == []
    assert client.get(READS).json()["reads"] == []
    assert go.blocks() == []
    assert go.exec_tool("recall", '{"id": "r1000"}') == 'no archived block "r1000"'
    assert go.archive("again", "c") == 50
    go.reset()
    assert go.archive("default", "c") == 1000  # the instance's own first seq
    after = client.get(BLOCKS, headers={"If-None-Match": before})
    assert after.status_code == 200
    assert after.headers["etag"] != before
    for body in [b"[]", b'{"first_seq": 0}', b'{"first_seq": "5"}']:
        assert client.post(RESET, content=body).status_code == 400
    assert client.get(RESET).status_code == 405


def test_request_and_read_logs_from_an_index(go: RunningReference, client: httpx.Client) -> None:
    start = len(go.requests())  # the harness's own reads while the reference started
    go.archive("Notes", "hello")
    go.exec_tool("recall", '{"id": "r1000"}')
    go.exec_tool("recall_search", '{"query": "hello"}')
    assert go.requests(since=start + 1) == [f"POST {EXEC}", f"POST {EXEC}"]
    assert go.requests(since=start + 3) == []
    assert go.requests()[start:] == [f"POST {ARCHIVE}", f"POST {EXEC}", f"POST {EXEC}"]
    everything = client.get("/debug/requests").json()
    assert everything["next"] == start + 3
    assert everything["requests"] == go.requests()
    assert client.get(READS, params={"since": "1"}).json() == {"reads": ["blocks"], "next": 2}
    assert client.get(READS, params={"since": "2"}).json() == {"reads": [], "next": 2}
    for since in ["-1", "x", "3"]:
        assert client.get(READS, params={"since": since}).status_code == 400
    with pytest.raises(GoClientError, match="past the end"):
        go.requests(since=start + 4)


def test_no_debug_answers_every_debug_route_with_a_bare_404(fresh_go: FreshGo) -> None:
    go = fresh_go(debug=False)
    seq = go.archive("l", "c")
    with httpx.Client(base_url=go.base_url, timeout=10) as client:
        for method, path in [
            ("GET", "/debug/requests"),
            ("GET", READS),
            ("GET", "/debug/version"),
            ("POST", LOCK),
            ("POST", RESET),
        ]:
            answer = client.request(method, path, json={"seq": seq, "locked": True})
            assert answer.status_code == 404
            assert answer.text == "404 page not found\n"
            assert not answer.headers["content-type"].startswith("application/json")
        assert client.get(BLOCKS).json() == {"blocks": [{"seq": seq, "label": "l", "content": "c"}]}
    with pytest.raises(GoClientError, match="404"):
        go.requests()


def test_rewrite_output_changes_only_the_tool_outputs(fresh_go: FreshGo) -> None:
    go = fresh_go(rewrite_output={"no archived block matches": "no block matches", "<": "[lt]"})
    seq = go.archive("<b>", "no archived block matches")
    assert go.exec_tool("recall_search", '{"query": "zzz"}') == 'no block matches "zzz"'
    assert go.exec_tool("recall", f'{{"id": "r{seq}"}}') == f"[r{seq}] [lt]b>\nno block matches"
    assert go.blocks() == [{"seq": seq, "label": "<b>", "content": "no archived block matches"}]


@pytest.mark.parametrize("rewrite", [{"": "x"}, {"a=b": "c"}])
def test_rewrite_output_refuses_an_old_it_cannot_pass(
    go_build: GoReference, rewrite: dict[str, str]
) -> None:
    with pytest.raises(ValueError, match="rewrite_output"):
        go_build.start(rewrite_output=rewrite)


def test_exec_delay_slows_only_the_tool_endpoint(fresh_go: FreshGo) -> None:
    go = fresh_go(exec_delay=0.04)
    start = time.monotonic()
    assert go.exec_tool("recall", "{}") == 'recall needs an "id", such as "r7"'
    assert time.monotonic() - start >= 0.04
    with httpx.Client(base_url=go.base_url, timeout=10) as client:
        # An exec that cannot wait 40 ms times out; the archive routes answer at once.
        with pytest.raises(httpx.ReadTimeout):
            client.post(
                EXEC,
                json={"name": "recall", "args": "{}"},
                timeout=httpx.Timeout(10, read=0.005),
            )
        assert client.get(BLOCKS, timeout=2).status_code == 200


@pytest.mark.parametrize("delay", [-1.0, math.inf, math.nan])
def test_exec_delay_refuses_a_bad_delay(go_build: GoReference, delay: float) -> None:
    with pytest.raises(ValueError, match="exec_delay"):
        go_build.start(exec_delay=delay)


def test_exec_status_is_a_tool_endpoint_that_is_down(fresh_go: FreshGo) -> None:
    go = fresh_go(exec_status=503)
    seq = go.archive("l", "c")
    with httpx.Client(base_url=go.base_url, timeout=10) as client:
        answer = client.post(EXEC, json={"name": "recall", "args": f'{{"id": "r{seq}"}}'})
        assert answer.status_code == 503
        assert answer.json() == {"error": "tool endpoint down: 503 Service Unavailable"}
        assert client.get(BLOCK, params={"seq": str(seq)}).status_code == 200
    with pytest.raises(GoClientError, match="503"):
        go.exec_tool("recall", "{}")
    assert go.blocks() == [{"seq": seq, "label": "l", "content": "c"}]


def test_exec_status_out_of_range_is_refused(go_build: GoReference) -> None:
    with pytest.raises(GoReferenceError, match="test-exec-status"):
        go_build.start(exec_status=99)


def _tls_client(go: RunningReference, context: ssl.SSLContext | bool) -> httpx.Client:
    return httpx.Client(base_url=go.base_url, timeout=10, verify=context)


def test_tls_reference_requires_a_client_certificate_signed_by_its_ca(
    fresh_go: FreshGo, go_certs: TLSFiles
) -> None:
    go = fresh_go(tls=go_certs)
    assert go.base_url.startswith("https://127.0.0.1:")
    seq = go.archive("l", "c")  # the harness presents the client certificate
    assert go.exec_tool("recall", f'{{"id": "r{seq}"}}') == f"[r{seq}] l\nc"
    with _tls_client(go, go_certs.connection(go.base_url).ssl_context) as client:
        assert client.get(BLOCKS).json() == {"blocks": [{"seq": seq, "label": "l", "content": "c"}]}

    directory = go_certs.ca.parent
    stranger = replace(
        go_certs,
        client_cert=directory / "stranger.pem",
        client_key=directory / "stranger-key.pem",
    )
    no_certificate = replace(go_certs, client_cert=None, client_key=None)
    # The server refuses both (the alert arrives on the first read under TLS 1.3).
    for files, alert in [(stranger, "UNKNOWN_CA"), (no_certificate, "CERTIFICATE_REQUIRED")]:
        with (
            _tls_client(go, files.connection(go.base_url).ssl_context) as client,
            pytest.raises(httpx.TransportError, match=alert),
        ):
            client.get(BLOCKS)
    # A client that trusts only the usual CAs refuses the reference's certificate.
    with _tls_client(go, True) as client, pytest.raises(httpx.ConnectError, match="CERTIFICATE"):
        client.get(BLOCKS)
    # Plain HTTP on the TLS port gets net/http's 400, never an answer of the contract.
    plain = go.base_url.replace("https://", "http://")
    assert httpx.get(f"{plain}{BLOCKS}", timeout=10).status_code == 400


def test_tls_reference_without_client_ca_serves_any_client(
    fresh_go: FreshGo, go_certs: TLSFiles
) -> None:
    server_only = replace(go_certs, client_ca=None, client_cert=None, client_key=None)
    go = fresh_go(tls=server_only)
    assert go.archive("l", "c") == 1
    with _tls_client(go, server_only.connection(go.base_url).ssl_context) as client:
        assert client.get(BLOCKS).status_code == 200


def test_tls_files_that_cannot_serve_are_refused(
    go_build: GoReference, go_certs: TLSFiles, tmp_path: Path
) -> None:
    missing = replace(go_certs, key=tmp_path / "missing.pem")
    with pytest.raises(GoReferenceError, match="tls-key"):
        go_build.start(tls=missing)
    with pytest.raises(GoClientError, match=r"the CA file .*missing\.pem: no such file"):
        replace(go_certs, ca=tmp_path / "missing.pem").connection("https://127.0.0.1:1")
