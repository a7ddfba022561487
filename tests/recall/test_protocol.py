"""The contract's HTTP API as data (recall._protocol), with no I/O: the requests, the body's
bounds, and what of Go's answers is accepted and what is a GoUnavailableError.

The hosts' own I/O (what goes on the wire, transport errors, streaming) is in
test_host_http.py; byte-for-byte outputs against Go are in test_host.py.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping

import httpx
import pytest

from parity.fixtures.go import FreshGo
from recall import Block, GoUnavailableError, UnknownToolError
from recall import _protocol as protocol
from recall._blocks import BlockSet, BodyStream, decode_item, read_set
from recall._protocol import BLOCK_PATH, BLOCKS_PATH, EXEC_PATH, Answer, Request

BLOCK7 = {"seq": 7, "label": "<b>L</b>", "content": "a & b"}
LIMIT = 1 << 20


class Clock:
    """A clock that moves only when told."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def answer_to(
    request: Request,
    status: int,
    raw: bytes,
    *,
    headers: Mapping[str, str] | None = None,
    limit: int = LIMIT,
) -> Answer:
    """Go's answer as a host gives it: status and headers first, then the body in chunks."""
    answer = Answer(request, status, headers or {}, limit=limit, timeout=5.0, clock=Clock())
    for start in range(0, len(raw), 7):
        answer.feed(raw[start : start + 7])
    return answer


def block_of(status: int, raw: bytes, seq: int = 7) -> Block | None:
    request = protocol.block_request(seq)
    return protocol.parse_block(answer_to(request, status, raw), seq)


def blocks_of(status: int, raw: bytes, kept: BlockSet | None = None) -> list[Block]:
    request = protocol.blocks_request()
    return list(protocol.parse_blocks(answer_to(request, status, raw), kept=kept).view())


def kept_set(raw: bytes, tag: str | None = None) -> BlockSet:
    """The set a host keeps after reading ``raw``."""
    return read_set(bytearray(raw), tag=tag)


def failure(parse: Callable[[], object]) -> GoUnavailableError:
    """The GoUnavailableError that parsing raises."""
    with pytest.raises(GoUnavailableError) as caught:
        parse()
    return caught.value


def output_of(status: int, raw: bytes, name: str = "recall") -> str:
    request = protocol.exec_request(name, "{}")
    return protocol.parse_exec(answer_to(request, status, raw), name)


# The requests.


def test_requests_as_data() -> None:
    block = protocol.block_request(7)
    assert (block.method, block.path, block.params) == ("GET", BLOCK_PATH, {"seq": "7"})
    assert block.what == f"GET {BLOCK_PATH}?seq=7"
    assert (block.headers, block.content) == (None, None)
    everything = protocol.blocks_request()
    assert (everything.method, everything.path, everything.what) == (
        "GET",
        BLOCKS_PATH,
        f"GET {BLOCKS_PATH}",
    )
    args = '{"id": "r7", "x": "\u00e9\U0001f600\u2028"}'
    call = protocol.exec_request("recall", args)
    assert (call.method, call.path, call.what) == ("POST", EXEC_PATH, f"POST {EXEC_PATH}")
    assert call.headers == {"Content-Type": "application/json"}
    assert call.content is not None
    assert call.content.isascii()
    assert json.loads(call.content) == {"name": "recall", "args": args}


def test_seq_is_canonical_digits() -> None:
    assert protocol.block_request(9223372036854775807).params == {"seq": "9223372036854775807"}


# A block.


def test_block() -> None:
    assert block_of(200, json.dumps(BLOCK7).encode()) == Block(7, "<b>L</b>", "a & b")


def test_block_decodes_go_escapes_and_surrogate_escapes() -> None:
    raw = (
        b'{"seq":7,"label":"\\u003cb\\u003e \\u0026 \\u2028",'
        b'"content":"\\ud83d\\ude00 \\ud800 \\udc00x \xc3\xa9","extra":[1]}'
    )
    assert block_of(200, raw) == Block(7, "<b> & \u2028", "\U0001f600 \ufffd \ufffdx é")


@pytest.mark.parametrize("body", [{"error": "not found"}, {"error": None, "more": 1}])
def test_block_json_404_is_absent(body: object) -> None:
    assert block_of(404, json.dumps(body).encode()) is None


@pytest.mark.parametrize(
    ("status", "raw", "why"),
    [
        (404, b"404 page not found\n", "status 404 without the JSON error body"),
        (404, b'["error"]', "status 404 without the JSON error body"),
        (404, b'{"message": "not found"}', "status 404 without the JSON error body"),
        (404, b"", "status 404 without the JSON error body"),
        (200, b"", "status 200, invalid JSON body: "),
        (200, b"not json", "status 200, invalid JSON body: "),
        (200, b'{"seq": 7, "label": "x", "content": "y"', "status 200, invalid JSON body: "),
        (
            200,
            b'{"seq": 7, "label": "x", "content": "y"} trailing',
            "status 200, invalid JSON body: ",
        ),
        (
            200,
            b'{"seq": NaN, "label": "x", "content": "y"}',
            "status 200, invalid JSON body: NaN is not",
        ),
        (
            200,
            b'{"seq": 7, "label": Infinity, "content": "y"}',
            "status 200, invalid JSON body: Infinity",
        ),
        (
            200,
            b'{"seq": 7, "label": "x", "content": "\xff"}',
            "status 200, invalid JSON body: 'utf-8'",
        ),
        (
            200,
            b"[" * 100_000 + b"]" * 100_000,
            "status 200, invalid JSON body: JSON nested too deeply",
        ),
        (200, b"null", "the body is not the requested block"),
        (200, b"[]", "the body is not the requested block"),
        (200, b'{"label": "x", "content": "y"}', "the body is not the requested block"),
        (200, b'{"seq": 7, "content": "y"}', "the body is not the requested block"),
        (200, b'{"seq": 7, "label": "x"}', "the body is not the requested block"),
        (200, b'{"seq": "7", "label": "x", "content": "y"}', "the body is not the requested block"),
        (
            200,
            b'{"seq": true, "label": "x", "content": "y"}',
            "the body is not the requested block",
        ),
        (200, b'{"seq": 7.0, "label": "x", "content": "y"}', "the body is not the requested block"),
        (200, b'{"seq": 0, "label": "x", "content": "y"}', "the body is not the requested block"),
        (200, b'{"seq": -7, "label": "x", "content": "y"}', "the body is not the requested block"),
        (
            200,
            b'{"seq": 9223372036854775808, "label": "x", "content": "y"}',
            "the body is not the requested block",
        ),
        (
            200,
            b'{"seq": 1' + b"0" * 5000 + b', "label": "x", "content": "y"}',
            "status 200, invalid JSON body: Exceeds the limit",
        ),
        (200, b'{"seq": 7, "label": null, "content": "y"}', "the body is not the requested block"),
        (200, b'{"seq": 7, "label": "x", "content": 5}', "the body is not the requested block"),
        (200, b'{"seq": 8, "label": "x", "content": "y"}', "the body is not the requested block"),
        (500, b'{"seq": 7, "label": "x", "content": "y"}', "status 500"),
        (401, b'{"error": "unauthorized"}', "status 401"),
        (400, b'{"error": "bad seq"}', "status 400"),
        (405, b'{"error": "method not allowed"}', "status 405"),
        (204, b"", "status 204"),
        (302, b"", "status 302"),
    ],
)
def test_block_unavailable(status: int, raw: bytes, why: str) -> None:
    error = failure(lambda: block_of(status, raw))
    assert (error.what, error.why[: len(why)]) == (f"GET {BLOCK_PATH}?seq=7", why)


# Every block.


def test_blocks() -> None:
    raw = json.dumps({"blocks": [BLOCK7, {"seq": 9, "label": "", "content": ""}]}).encode()
    expected = [Block(7, "<b>L</b>", "a & b"), Block(9, "", "")]
    assert blocks_of(200, raw) == expected
    assert blocks_of(200, raw, kept_set(raw)) == expected
    assert blocks_of(200, b'{"blocks": []}') == []


@pytest.mark.parametrize(
    ("status", "body", "why"),
    [
        (200, {"blocks": None}, "status 200, the body is not the JSON object with 'blocks'"),
        (200, {"blocks": {}}, "status 200, the body is not the JSON object with 'blocks'"),
        (200, {}, "status 200, the body is not the JSON object with 'blocks'"),
        (200, [BLOCK7], "status 200, the body is not the JSON object with 'blocks'"),
        (200, {"blocks": [BLOCK7, BLOCK7]}, "the blocks are not valid blocks by increasing seq"),
        (
            200,
            {"blocks": [{**BLOCK7, "seq": 9}, BLOCK7]},
            "the blocks are not valid blocks by increasing seq",
        ),
        (
            200,
            {"blocks": [BLOCK7, {"seq": 9, "label": "x"}]},
            "the blocks are not valid blocks by increasing seq",
        ),
        (
            200,
            {"blocks": [BLOCK7, {"seq": False, "label": "x", "content": "y"}]},
            "the blocks are not valid blocks by increasing seq",
        ),
        (200, "x", "status 200, the body is not the JSON object with 'blocks'"),
        (404, {"error": "not found"}, "status 404"),
        (404, {"blocks": []}, "status 404"),
        (500, {"blocks": []}, "status 500"),
    ],
)
@pytest.mark.parametrize("kept", [False, True])
def test_blocks_unavailable(status: int, body: object, why: str, kept: bool) -> None:
    before = kept_set(json.dumps({"blocks": [BLOCK7]}).encode()) if kept else None
    error = failure(lambda: blocks_of(status, json.dumps(body).encode(), before))
    assert (error.what, error.why) == (f"GET {BLOCKS_PATH}", why)


def test_blocks_invalid_json() -> None:
    with pytest.raises(GoUnavailableError) as caught:
        blocks_of(200, b'{"blocks": [{"seq": 1, "label": "a", "content": "b"},')
    assert caught.value.why.startswith("status 200, invalid JSON body: Expecting value: line 1")


# Conditional reads of /blocks (the contract's extension).

TAG = '"9c1f0e7a5b3d2c48-42"'
BLOCKS_RAW = json.dumps({"blocks": [BLOCK7]}, separators=(",", ":")).encode()


def test_conditional_request_as_data() -> None:
    request = protocol.blocks_request(TAG)
    assert (request.method, request.path, request.what) == (
        "GET",
        BLOCKS_PATH,
        f"GET {BLOCKS_PATH}",
    )
    assert request.headers == {"If-None-Match": TAG}
    assert protocol.blocks_request().headers is None
    assert protocol.block_request(7).headers is None


@pytest.mark.parametrize(
    "request_",
    [
        protocol.blocks_request(),
        protocol.block_request(7),
        protocol.exec_request("recall", "{}"),
    ],
    ids=["blocks", "block", "exec"],
)
def test_a_304_unasked_is_a_failure_before_any_byte(request_: Request) -> None:
    with pytest.raises(GoUnavailableError) as caught:
        Answer(request_, 304, {"etag": TAG}, limit=LIMIT, timeout=5.0, clock=Clock())
    assert (caught.value.what, caught.value.why) == (request_.what, "status 304")


def kept_and_304(tag: str | None, *, kept_tag: str | None = TAG) -> BlockSet:
    kept = kept_set(BLOCKS_RAW, kept_tag)
    request = protocol.blocks_request(TAG)
    answer = answer_to(request, 304, b"", headers={} if tag is None else {"etag": tag})
    return protocol.parse_blocks(answer, kept=kept, sent=TAG)


def test_a_304_with_the_tag_sent_is_the_kept_set() -> None:
    kept = kept_set(BLOCKS_RAW, TAG)
    request = protocol.blocks_request(TAG)
    answer = answer_to(request, 304, b"", headers={"etag": TAG})
    assert protocol.parse_blocks(answer, kept=kept, sent=TAG) is kept


@pytest.mark.parametrize("tag", ['"9c1f0e7a5b3d2c48-43"', f"W/{TAG}", None, ""])
def test_a_304_with_another_tag_is_a_failure(tag: str | None) -> None:
    error = failure(lambda: kept_and_304(tag))
    assert (error.what, error.why) == (
        f"GET {BLOCKS_PATH}",
        "status 304 with another ETag than the one sent",
    )


def test_a_304_for_a_set_kept_under_another_tag_is_a_failure() -> None:
    error = failure(lambda: kept_and_304(TAG, kept_tag='"other"'))
    assert error.why == "status 304"


def test_a_200_keeps_its_strong_tag() -> None:
    request = protocol.blocks_request(TAG)
    for headers, tag in (
        ({"etag": '"abc-1"'}, '"abc-1"'),
        ({}, None),
        ({"etag": 'W/"abc-1"'}, None),
    ):
        answer = answer_to(request, 200, BLOCKS_RAW, headers=headers)
        got = protocol.parse_blocks(answer, kept=kept_set(BLOCKS_RAW, TAG), sent=TAG)
        assert got.tag == tag
        assert list(got.view()) == [Block(7, "<b>L</b>", "a & b")]
        assert got.reused == 1


@pytest.mark.parametrize(
    ("value", "strong"),
    [
        ('"9c1f0e7a5b3d2c48-42"', True),
        ('""', True),
        ('"!#~"', True),
        ('W/"x"', False),  # weak
        ('"x", "y"', False),  # two values in one field
        ("x", False),  # not quoted
        ('"x', False),
        ('"a b"', False),  # a space is no etagc
        ('"a"b"', False),
        ('"caf\u00e9"'.encode().decode("unicode_escape"), False),  # obs-text: not kept
        ('"' + "x" * 1030 + '"', False),  # past the bound
    ],
)
def test_strong_etag(value: str, strong: bool) -> None:
    assert protocol.strong_etag({"etag": value}) == (value if strong else None)
    assert protocol.strong_etag({}) is None


# /tool/exec.


def test_exec_output() -> None:
    assert output_of(200, json.dumps({"output": "out \u2028 <x>"}).encode()) == "out \u2028 <x>"
    assert output_of(200, b'{"output": "lone \\udc00"}') == "lone \ufffd"


def test_exec_unknown_tool() -> None:
    with pytest.raises(UnknownToolError, match="frobnicate") as caught:
        output_of(404, b'{"error": "unknown tool \\"frobnicate\\""}', "frobnicate")
    assert caught.value.name == "frobnicate"


@pytest.mark.parametrize(
    ("status", "raw", "why"),
    [
        (404, b"404 page not found\n", "status 404"),
        (404, b'{"output": "x"}', "status 404"),
        (200, b'{"output": 5}', "status 200, the body is not the JSON object with 'output'"),
        (200, b'{"out": "x"}', "status 200, the body is not the JSON object with 'output'"),
        (200, b'"x"', "status 200, the body is not the JSON object with 'output'"),
        (200, b"{", "status 200, invalid JSON body: "),
        (400, b'{"error": "bad body"}', "status 400"),
        (500, b'{"output": "x"}', "status 500"),
        (307, b"", "status 307"),
    ],
)
def test_exec_unavailable(status: int, raw: bytes, why: str) -> None:
    error = failure(lambda: output_of(status, raw))
    assert (error.what, error.why[: len(why)]) == (f"POST {EXEC_PATH}", why)


# The body's bounds.


def test_declared_length_past_the_bound_fails_before_any_byte() -> None:
    request = protocol.blocks_request()
    for declared in ("65537", "1073741824"):
        with pytest.raises(GoUnavailableError, match="body larger than 65536 bytes"):
            Answer(request, 200, {"content-length": declared}, limit=65536, timeout=1)
    body = Answer(request, 200, {"content-length": "65536"}, limit=65536, timeout=1, clock=Clock())
    body.feed(b" " * 65536)
    with pytest.raises(GoUnavailableError, match="body larger than 65536 bytes"):
        body.feed(b" ")


def test_httpx_headers_find_the_length_in_any_case() -> None:
    headers = httpx.Headers({"Content-Length": "10"})
    with pytest.raises(GoUnavailableError, match="larger than 9"):
        Answer(protocol.blocks_request(), 200, headers, limit=9, timeout=1, clock=Clock())


def test_the_whole_body_within_the_timeout_of_its_headers() -> None:
    clock = Clock()
    body = Answer(protocol.blocks_request(), 200, {}, limit=LIMIT, timeout=0.5, clock=clock)
    for _ in range(5):
        clock.now += 0.1  # each chunk on time, and the body still on time
        body.feed(b"x")
    clock.now += 0.01
    with pytest.raises(GoUnavailableError) as caught:
        body.feed(b"x")
    assert caught.value.why == "body not complete within 0.5s of its headers"
    assert body.body == b"xxxxx"


def test_the_time_a_stream_spends_decoding_is_not_the_bodys() -> None:
    clock = Clock()

    class Slow(BodyStream):
        __slots__ = ()

        def feed(self, chunk: bytes) -> None:
            super().feed(chunk)
            clock.now += 0.3  # decoding, after the bytes came

    stream = Slow(lambda size: {"decode": decode_item})
    body = Answer(
        protocol.blocks_request(), 200, {}, limit=LIMIT, timeout=0.5, clock=clock, stream=stream
    )
    raw = b'{"blocks":[{"seq":1,"label":"a","content":"b"}]}'
    for start in range(0, len(raw), 4):
        clock.now += 0.01  # the bytes on time
        body.feed(raw[start : start + 4])
    assert clock.now > 100.5 + 3  # far past the deadline, by the decoding alone
    assert not body.body  # the bytes went to the stream
    assert stream.read(tag=None).seqs == [1]
    clock.now += 0.5
    with pytest.raises(GoUnavailableError, match=r"body not complete within 0\.5s"):
        body.feed(b" ")


def test_a_status_that_is_a_failure_reads_no_body() -> None:
    with pytest.raises(GoUnavailableError) as caught:
        Answer(
            protocol.block_request(7),
            503,
            {"content-length": "x"},
            limit=0,
            timeout=1,
            clock=Clock(),
        )
    assert str(caught.value) == f"GET {BLOCK_PATH}?seq=7: status 503"


# The options.


@pytest.mark.parametrize(
    ("url", "shown", "https"),
    [
        ("http://127.0.0.1:8080", "http://127.0.0.1:8080", False),
        ("http://user:pa55@127.0.0.1:9/", "http://127.0.0.1:9/", False),
        ("HTTPS://go.example/prefix/", "https://go.example/prefix/", True),
        ("http://[::1]:80/", "http://[::1]:80/", False),
    ],
)
def test_base_url(url: str, shown: str, https: bool) -> None:
    assert protocol.check_base_url(url) == (shown, https)


@pytest.mark.parametrize(
    "url",
    [
        "",
        "127.0.0.1:8080",
        "go.example",
        "/internal",
        "//go.example/",
        "ftp://go.example/",
        "file:///tmp/x",
        "http://",
        "http:///x",
        "http:go.example",
        "http://go.example:99999/",
        "http://go.example:port/",
        " http://go.example/",
        "http://go.example/ ",
        "http://go\n.example/",
        b"http://go.example/",
        None,
    ],
)
def test_bad_base_url(url: object) -> None:
    with pytest.raises(ValueError if isinstance(url, str) else TypeError, match="base URL"):
        protocol.check_base_url(url)


@pytest.mark.parametrize("token", ["", "two words", "line\nbreak", "caf\u00e9", b"tok", 5])
def test_bad_token_is_refused_without_echo(token: object) -> None:
    wrong = ValueError if isinstance(token, str) else TypeError
    with pytest.raises(wrong, match="token") as caught:
        protocol.check_token(token)
    assert not isinstance(token, str) or not token or token not in str(caught.value)


def test_good_token() -> None:
    protocol.check_token(None)
    protocol.check_token("tok-3f9a_SECRET~!")


@pytest.mark.parametrize("value", [0, -1, math.nan, math.inf, -math.inf, True, "5", None])
def test_bad_timeout(value: object) -> None:
    number = isinstance(value, int | float) and not isinstance(value, bool)
    with pytest.raises(ValueError if number else TypeError, match="timeout"):
        protocol.check_timeout(value)


def test_good_timeout() -> None:
    assert protocol.check_timeout(5) == 5.0
    assert protocol.check_timeout(0.25) == 0.25


@pytest.mark.parametrize("value", [-1, 1.5, True, "10", None])
def test_bad_byte_bound(value: object) -> None:
    wrong = ValueError if isinstance(value, int) and not isinstance(value, bool) else TypeError
    with pytest.raises(wrong, match="max_body_bytes"):
        protocol.check_bytes("max_body_bytes", value)


def test_good_byte_bound() -> None:
    assert protocol.check_bytes("cache_bytes", 0) == 0
    assert protocol.check_bytes("cache_bytes", 1 << 40) == 1 << 40


# Against Go's own bytes.


@pytest.mark.go
def test_go_answers_parse(fresh_go: FreshGo) -> None:
    """The parsers over the Go reference's real answers: its blocks, a JSON 404, its exec."""
    token = "s3cr3t-T0KEN"
    go = fresh_go(first_seq=1000, token=token)
    first = go.archive("<b>HTML</b> & co", "\u2028 <script> \U0001f600 é \ufffd")
    locked = go.archive("locked", "secret", locked=True)
    last = go.archive("", "")

    def fetch(request: Request) -> Answer:
        with httpx.Client(
            base_url=go.base_url, headers={"Authorization": f"Bearer {token}"}
        ) as client:
            response = client.request(
                request.method,
                request.path,
                params=request.params,
                headers=request.headers,
                content=request.content,
            )
        return answer_to(request, response.status_code, response.content)

    request = protocol.blocks_request()
    blocks = list(protocol.parse_blocks(fetch(request)).view())
    assert blocks == [Block(**b) for b in go.blocks()]
    assert [b.seq for b in blocks] == [first, last]
    for seq, expected in ((first, blocks[0]), (locked, None), (last + 1, None)):
        request = protocol.block_request(seq)
        assert protocol.parse_block(fetch(request), seq) == expected
    args = json.dumps({"id": f"r{first}"})
    request = protocol.exec_request("recall", args)
    assert protocol.parse_exec(fetch(request), "recall") == go.exec_tool("recall", args)
    request = protocol.exec_request("frobnicate", "{}")
    with pytest.raises(UnknownToolError):
        protocol.parse_exec(fetch(request), "frobnicate")
