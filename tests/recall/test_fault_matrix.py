"""The fault matrix of both hosts: each row a fault of a real local Go, each with its outcome.

For every row, and for both archive reads (``recall`` reads one block,
``recall_search`` reads them all):

- the read has the fault, ``/tool/exec`` answers: the output is exactly what
  ``/tool/exec`` answered, after one POST with the same name and args;
- ``/tool/exec`` has the same fault too: ``FallbackFailedError``, naming both
  failures.

``CONDITIONAL_ROWS`` are the faults of the conditional and incremental reads of
/blocks (the contract's extensions), over a few searches in a row: a 304 the host
did not ask for, a 304 with another tag, a tag that changes on every read, a weak
tag; a delta, a full answer to ``?since=``, and the bad deltas (another ``since``,
a ``gone`` seq the set lacks, a block it holds, members out of order, malformed).

Either way within a bound of the time-out, with only RecallErrors reaching the
caller, and a token that never shows in an error, a repr or a log record. Every
test runs over each kind of host (``make_host``).

``ROWS`` and ``CONDITIONAL_ROWS`` are the one list: the tests below, and the tables of
``docs/faults.md`` (``test_docs_table_is_current`` fails when they are stale; ``make
faults-doc`` rewrites them).
"""

from __future__ import annotations

import itertools
import json
import logging
import re
import time
import traceback
import tracemalloc
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

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
from .faultserver import (
    Behaviour,
    FaultServer,
    ReadsElsewhere,
    chunked_forever,
    closed_port_url,
    declared_length,
    reset_mid_body,
    respond,
    sequence,
    silent,
    trickle,
)

pytestmark = pytest.mark.waits  # its rows wait out time-outs and slow servers

TIMEOUT = 1.0
"""The host's time-out in the rows that a time-out ends (seconds)."""
UNHURRIED = 5.0
"""The host's time-out in the other rows: far above what a loopback answer takes, even on
a loaded machine whose event loops wait their turn (it is no part of those rows)."""
BOUND = 10.0
"""A row that the time-out ends takes less than this, fallback included: the contract's
time-out with a wide margin, far under what the fault itself lasts (30 s of silence, a
body of tens of seconds). The other rows' speed is no part of the contract."""
TRICKLE = TIMEOUT * 0.4
"""The trickling rows' gap between bytes: each well under the time-out, and the third
byte the first past it (a gap of half the time-out puts the second byte at the deadline)."""
TIMED_OUT = re.compile(r"timed out|within")


def timeout_of(why: str) -> float:
    """The host's time-out for a row whose error says ``why``."""
    return TIMEOUT if TIMED_OUT.search(why) else UNHURRIED


"""The rows that the time-out ends: what their errors say."""
MAX_BODY = 64 * 1024
"""The host's body bound in every row (bytes)."""
TOKEN = "tok-FAULT-9c1e-secret"
OUTPUT = "the output of Go's own /tool/exec \u2028 <b>"
MOVED = "/moved"
"""Where the redirect row points: a route that would answer well, and must never be asked."""

DOC = Path(__file__).resolve().parents[2] / "docs" / "faults.md"


def _json(value: object) -> bytes:
    return json.dumps(value).encode()


GOOD_BLOCK = {"seq": 7, "label": "alpha", "content": "alpha beta"}
GOOD = {
    "block": _json(GOOD_BLOCK),
    "blocks": _json({"blocks": [GOOD_BLOCK]}),
    "exec": _json({"output": OUTPUT}),
}
"""What a healthy Go answers on each route (the rows spoil these)."""

Route = str  # "block", "blocks" or "exec"
REFUSED = "refused"
"""A row's route that is a closed port rather than a behaviour."""


@dataclass(frozen=True)
class Row:
    """A fault: what the server does on each route, and what the host says of it."""

    id: str
    fault: str
    """What the Go does (the docs' words)."""
    serve: Callable[[Route], Behaviour | str]
    """The behaviour on a route: the read's for ``block`` / ``blocks``, ``exec`` for the exec."""
    why: str
    """A regex that the GoUnavailableError's ``why`` matches, for the reads and the exec."""
    says: str = ""
    """What ``why`` says, for the docs (default: ``why`` without its anchors)."""

    @property
    def said(self) -> str:
        return self.says or f"`{self.why.strip('^$')}`"


def same(behaviour: Callable[[bytes], Behaviour]) -> Callable[[Route], Behaviour]:
    """The fault applied to each route's good body."""
    return lambda route: behaviour(GOOD[route])


def bodies(block: object, blocks: object, exec_: object) -> Callable[[Route], Behaviour]:
    """200 with a body of its own per route (objects are JSON-encoded, bytes sent as they are)."""
    chosen = {"block": block, "blocks": blocks, "exec": exec_}

    def serve(route: Route) -> Behaviour:
        body = chosen[route]
        return respond(200, body if isinstance(body, bytes) else _json(body))

    return serve


def padded(body: bytes) -> bytes:
    return body + b" " * 40


SHAPE = r"not (the requested block|the JSON object|valid blocks)"
SHAPE_SAYS = (
    "`... not the requested block`, `... not the JSON object with 'blocks'`, "
    "`... not valid blocks by increasing seq`, `... not the JSON object with 'output'`"
)

ROWS = [
    Row(
        "refused",
        "connection refused (nothing listens)",
        lambda route: REFUSED,
        r"^ConnectError: \[Errno 111\] Connection refused$",
        "`ConnectError: [Errno 111] Connection refused`",
    ),
    Row(
        "reset-mid-body",
        "200, Content-Length, half the body, then a TCP reset (SO_LINGER 0)",
        same(reset_mid_body),
        r"^(ReadError: \[Errno 104\] Connection reset by peer|RemoteProtocolError: .+)$",
        "`ReadError: [Errno 104] Connection reset by peer` (or `RemoteProtocolError`)",
    ),
    Row(
        "no-headers",
        "reads the request, never answers",
        lambda route: silent(),
        r"^ReadTimeout: timed out$",
        "`ReadTimeout: timed out`",
    ),
    Row(
        "body-stalls",
        f"headers at once, then one body byte every {TIMEOUT * 3:g} s (3 x time-out)",
        same(lambda body: trickle(body, interval=TIMEOUT * 3)),
        r"^ReadTimeout: timed out$",
        "`ReadTimeout: timed out`",
    ),
    Row(
        "body-trickles",
        f"headers at once, then one byte every {TRICKLE:g} s (0.4 x time-out): "
        "each read is on time, the body never is",
        same(lambda body: trickle(padded(body), interval=TRICKLE)),
        rf"^body not complete within {TIMEOUT:g}s of its headers$",
        f"`body not complete within {TIMEOUT:g}s of its headers`",
    ),
    Row(
        "500",
        '500 `{"error": "internal"}`',
        lambda route: respond(500, b'{"error": "internal"}'),
        r"^status 500$",
    ),
    Row(
        "502",
        "502 with an HTML page (a proxy's)",
        lambda route: respond(502, b"<html>Bad Gateway</html>", content_type="text/html"),
        r"^status 502$",
    ),
    Row(
        "503",
        "503 text, `Retry-After: 1`",
        lambda route: respond(
            503, b"unavailable", content_type="text/plain", headers=[("Retry-After", "1")]
        ),
        r"^status 503$",
    ),
    Row(
        "401",
        '401 `{"error": "unauthorized"}` (a Go that refuses the token)',
        lambda route: respond(401, b'{"error": "unauthorized"}'),
        r"^status 401$",
    ),
    Row(
        "bare-404",
        "404 `404 page not found` as text (a Go without the route)",
        lambda route: respond(404, b"404 page not found\n", content_type="text/plain"),
        r"^status 404",
        "`status 404 without the JSON error body` (block), `status 404`",
    ),
    Row(
        "invalid-json",
        "200, a body that is not JSON",
        lambda route: respond(200, b"<html>not json</html>", content_type="text/html"),
        r"invalid JSON",
        "`status 200, invalid JSON body: ...`",
    ),
    Row(
        "truncated-json",
        "200, the JSON cut short (Content-Length matching the cut)",
        same(lambda body: respond(200, body[:-3])),
        r"invalid JSON",
        "`status 200, invalid JSON body: ...`",
    ),
    Row(
        "not-utf8",
        "200, JSON with a byte that is not UTF-8 in a string",
        bodies(
            b'{"seq": 7, "label": "\xff", "content": "x"}',
            b'{"blocks": [{"seq": 7, "label": "\xff", "content": "x"}]}',
            b'{"output": "\xff"}',
        ),
        r"invalid JSON",
        "`status 200, invalid JSON body: ...`",
    ),
    Row(
        "missing-fields",
        "JSON without a field: `label`; `content` in the list; "
        '`output` for /tool/exec (`{"result": ...}`)',
        bodies(
            {"seq": 7, "content": "alpha"},
            {"blocks": [{"seq": 7, "label": "alpha"}]},
            {"result": OUTPUT},
        ),
        SHAPE,
        SHAPE_SAYS,
    ),
    Row(
        "seq-string",
        'JSON with `"seq": "7"` (`"output": 7` for /tool/exec)',
        bodies(
            {**GOOD_BLOCK, "seq": "7"},
            {"blocks": [{**GOOD_BLOCK, "seq": "7"}]},
            {"output": 7},
        ),
        SHAPE,
        SHAPE_SAYS,
    ),
    Row(
        "negative-seq",
        'JSON with `"seq": -7` (`"output": null` for /tool/exec)',
        bodies(
            {**GOOD_BLOCK, "seq": -7},
            {"blocks": [{**GOOD_BLOCK, "seq": -7}]},
            {"output": None},
        ),
        SHAPE,
        SHAPE_SAYS,
    ),
    Row(
        "not-a-list",
        'JSON of another shape: a list for the block, `"blocks"` an object, a list for /tool/exec',
        bodies([GOOD_BLOCK], {"blocks": GOOD_BLOCK}, [OUTPUT]),
        SHAPE,
        SHAPE_SAYS,
    ),
    Row(
        "wrong-block",
        "another block than the one asked (seq 8); blocks out of order; `{}` for /tool/exec",
        bodies(
            {**GOOD_BLOCK, "seq": 8},
            {"blocks": [{**GOOD_BLOCK, "seq": 9}, GOOD_BLOCK]},
            {},
        ),
        SHAPE,
        SHAPE_SAYS,
    ),
    Row(
        "oversized-declared",
        f"Content-Length of 1 GiB (the bound is {MAX_BODY // 1024} KiB), a few bytes sent",
        same(lambda body: declared_length(1 << 30, body[:5])),
        rf"^body larger than {MAX_BODY} bytes$",
    ),
    Row(
        "oversized-chunked",
        "chunked, no Content-Length, spaces without end after the first bytes",
        same(lambda body: chunked_forever(body[:5])),
        rf"^body larger than {MAX_BODY} bytes$",
    ),
    Row(
        "redirect",
        f"302 (307 for /tool/exec) to `{MOVED}`, where a good answer waits",
        lambda route: respond(307 if route == "exec" else 302, b"", headers=[("Location", MOVED)]),
        r"^status 30[27]$",
        "`status 302`, `status 307`",
    ),
]

TOOLS_PATH = {"block": BLOCK_PATH, "blocks": BLOCKS_PATH}
TOOLS = {
    "recall": ('{"id": "r7"}', "block", BLOCK_PATH),
    "recall_search": ('{"query": "alpha"}', "blocks", BLOCKS_PATH),
}


def start_server(row: Row, read_route: Route, *, exec_faulty: bool) -> FaultServer:
    server = FaultServer().start()
    read = row.serve(read_route)
    exec_ = row.serve("exec") if exec_faulty else respond(200, GOOD["exec"])
    if not isinstance(read, str):
        server.route(TOOLS_PATH[read_route], read)
    if not isinstance(exec_, str):
        server.route(EXEC_PATH, exec_)
    server.route(MOVED, respond(200, GOOD[read_route]))
    return server


def secret_free(*texts: str) -> None:
    for text in texts:
        assert TOKEN not in text


def chain(exc: BaseException) -> list[BaseException]:
    """The exception, its causes and contexts, and FallbackFailedError's two errors."""
    seen: list[BaseException] = []
    todo = [exc]
    while todo:
        e = todo.pop()
        if any(e is s for s in seen):
            continue
        seen.append(e)
        todo += [x for x in (e.__cause__, e.__context__) if x is not None]
        if isinstance(e, FallbackFailedError):
            todo += [e.read_error, e.exec_error]
    return seen


@pytest.fixture(autouse=True)
def every_log_record(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)  # httpx and httpcore log at INFO and DEBUG


@pytest.mark.parametrize("tool", TOOLS)
@pytest.mark.parametrize("row", ROWS, ids=lambda row: row.id)
def test_read_fault_falls_back_on_exec(
    row: Row, tool: str, caplog: pytest.LogCaptureFixture, make_host: MakeHost
) -> None:
    args, read_route, read_path = TOOLS[tool]
    server = start_server(row, read_route, exec_faulty=False)
    refused = row.serve(read_route) == REFUSED
    transport = ReadsElsewhere(closed_port_url()) if refused else None
    try:
        with make_host(
            server.url,
            token=TOKEN,
            timeout=timeout_of(row.why),
            transport=transport,
            max_body_bytes=MAX_BODY,
        ) as host:
            started = time.monotonic()
            output = host.exec_tool(tool, args)
            elapsed = time.monotonic() - started
            secret_free(repr(host))
    finally:
        server.stop()
    assert output == OUTPUT  # Go's answer, nothing made up from a partial read
    if TIMED_OUT.search(row.why):
        assert elapsed < BOUND, f"{elapsed:.2f}s"
    execs = server.requests(EXEC_PATH)
    assert [json.loads(r.body) for r in execs] == [{"name": tool, "args": args}]
    assert execs[0].headers["authorization"] == f"Bearer {TOKEN}"
    reads = [str(r) for r in server.requests() if r.method == "GET"]
    assert reads == (
        [] if refused else [f"GET {read_path}" + ("?seq=7" if tool == "recall" else "")]
    )
    assert not server.requests(MOVED)  # no redirect followed
    secret_free(caplog.text)


@pytest.mark.parametrize("tool", TOOLS)
@pytest.mark.parametrize("row", ROWS, ids=lambda row: row.id)
def test_exec_fault_too_is_fallback_failed(
    row: Row, tool: str, caplog: pytest.LogCaptureFixture, make_host: MakeHost
) -> None:
    args, read_route, _ = TOOLS[tool]
    refused = row.serve(read_route) == REFUSED
    server = start_server(row, read_route, exec_faulty=True)
    url = closed_port_url() if refused else server.url
    caught: BaseException | None = None
    try:
        with make_host(
            url, token=TOKEN, timeout=timeout_of(row.why), max_body_bytes=MAX_BODY
        ) as host:
            started = time.monotonic()
            try:
                host.exec_tool(tool, args)
            except BaseException as exc:  # what escapes is the point
                caught = exc
            elapsed = time.monotonic() - started
            secret_free(repr(host))
    finally:
        server.stop()
    assert isinstance(caught, FallbackFailedError), repr(caught)  # a RecallError, never httpx's
    if TIMED_OUT.search(row.why):
        assert elapsed < BOUND, f"{elapsed:.2f}s"
    read_error, exec_error = caught.read_error, caught.exec_error
    assert isinstance(exec_error, GoUnavailableError)
    assert read_error.what.startswith("GET ")
    assert exec_error.what == f"POST {EXEC_PATH}"
    assert_why(row, read_error)
    assert_why(row, exec_error)
    assert read_error.why in str(caught)
    assert exec_error.why in str(caught)
    assert not server.requests(MOVED)
    if not refused:
        assert len(server.requests(EXEC_PATH)) == 1
    for link in chain(caught):
        secret_free(str(link), repr(link))
    secret_free("".join(traceback.format_exception(caught)), caplog.text)


def assert_why(row: Row, error: GoUnavailableError) -> None:
    assert re.search(row.why, error.why), f"{row.id}: {error.why!r}"


def test_only_recall_errors_reach_the_caller() -> None:
    """The tree the matrix relies on: the fallback's error is a GoUnavailableError."""
    assert issubclass(FallbackFailedError, GoUnavailableError)
    assert issubclass(GoUnavailableError, RecallError)


def test_oversized_chunked_body_stops_at_the_bound(make_host: MakeHost) -> None:
    """The client stops reading at the bound: the server never gets far past it."""
    server = FaultServer().start()
    server.route(BLOCKS_PATH, chunked_forever(b'{"blocks": [', cap=64 << 20))
    server.route(EXEC_PATH, respond(200, GOOD["exec"]))
    bound = 1 << 20
    try:
        with make_host(server.url, timeout=UNHURRIED, max_body_bytes=bound) as host:
            tracemalloc.start()
            try:
                assert host.exec_tool("recall_search", '{"query": "alpha"}') == OUTPUT
                _, peak = tracemalloc.get_traced_memory()
            finally:
                tracemalloc.stop()
    finally:
        server.stop()
    assert peak < 4 * bound, peak
    # What the server managed to send: the bound plus what the sockets' buffers held.
    assert server.stats.sent[BLOCKS_PATH] < 32 << 20


# Conditional reads of /blocks: the faults of the extension, over searches in a row.

TAG_A, TAG_B = '"nonce-1"', '"nonce-2"'
SEARCH = '{"query": "alpha"}'


def tagged(status: int, tag: str | None) -> Behaviour:
    """/blocks answered with ``status`` (the good body for a 200) and that ETag."""
    return respond(
        status, GOOD["blocks"] if status == 200 else b"", headers=[("ETag", tag)] if tag else []
    )


def delta(since: str, blocks: list[object], gone: list[object]) -> Behaviour:
    """A 200 with ETag B and the delta body ``{"since", "blocks", "gone"}``."""
    body = _json({"since": since, "blocks": blocks, "gone": gone})
    return respond(200, body, headers=[("ETag", TAG_B)])


OTHER_BLOCK = {"seq": 8, "label": "", "content": "zzz"}


def new_tag_each_read() -> Behaviour:
    """A 200 with the good body and a new tag each time, If-None-Match ignored."""
    count = itertools.count(1)
    return lambda conn, request, server: tagged(200, f'"gen-{next(count)}"')(conn, request, server)


@dataclass(frozen=True)
class ConditionalRow:
    """A fault of the conditional reads: the Go's /blocks over ``len(falls_back)`` searches."""

    id: str
    fault: str
    """What the Go does (the docs' words)."""
    reads: Callable[[], Behaviour]
    """The /blocks behaviour for the whole row (a new one for each run)."""
    sent: tuple[str | None, ...]
    """The If-None-Match of each search's read (None: none sent)."""
    falls_back: tuple[bool, ...]
    """Whether each search falls back on /tool/exec (else its output is computed here)."""
    why: str
    """A regex that a fallen-back read's ``why`` matches."""
    does: str
    """What the host does (the docs' words)."""


CONDITIONAL_ROWS = [
    ConditionalRow(
        "unsolicited-304",
        "304 (with an ETag) to a read that sent no `If-None-Match`",
        lambda: tagged(304, TAG_A),
        (None, None),
        (True, True),
        r"^status 304$",
        "a failed read (`status 304`): the fallback, every time",
    ),
    ConditionalRow(
        "304-other-tag",
        "a 200 with ETag A, then 304 with ETag B to `If-None-Match: A`",
        lambda: sequence(tagged(200, TAG_A), tagged(304, TAG_B)),
        (None, TAG_A, TAG_A),
        (False, True, True),
        r"^status 304 with another ETag than the one sent$",
        "a failed read (`status 304 with another ETag than the one sent`): the fallback; "
        "the set kept for A is never used for B",
    ),
    ConditionalRow(
        "304-no-tag",
        "a 200 with ETag A, then 304 without an ETag",
        lambda: sequence(tagged(200, TAG_A), tagged(304, None)),
        (None, TAG_A, TAG_A),
        (False, True, True),
        r"^status 304 with another ETag than the one sent$",
        "a failed read, as for another tag: the fallback",
    ),
    ConditionalRow(
        "etag-every-read",
        "a 200 with a new ETag on every read, `If-None-Match` ignored",
        new_tag_each_read,
        (None, '"gen-1"', '"gen-2"'),
        (False, False, False),
        "",
        "no fault: each read a full 200 (sent the last tag), each output computed here",
    ),
    ConditionalRow(
        "weak-etag",
        'a 200 with a weak ETag `W/"a"`, then 304 to every read',
        lambda: sequence(tagged(200, 'W/"a"'), tagged(304, 'W/"a"')),
        (None, None),
        (False, True),
        r"^status 304$",
        "a weak tag is not kept: nothing is asked conditionally, and the 304 is unasked",
    ),
    ConditionalRow(
        "delta",
        "a 200 with ETag A, then to `?since=A` a delta (ETag B) adding a block, then 304",
        lambda: sequence(tagged(200, TAG_A), delta(TAG_A, [OTHER_BLOCK], []), tagged(304, TAG_B)),
        (None, TAG_A, TAG_B),
        (False, False, False),
        "",
        "no fault: the delta applied to the set kept for A, kept for B; outputs computed here",
    ),
    ConditionalRow(
        "delta-full-answer",
        "a 200 with ETag A, then to `?since=A` the full body with ETag B (no `since`)",
        lambda: sequence(tagged(200, TAG_A), tagged(200, TAG_B)),
        (None, TAG_A, TAG_B),
        (False, False, False),
        "",
        "no fault: a whole set, kept for B",
    ),
    ConditionalRow(
        "delta-other-since",
        'a 200 with ETag A, then a delta whose `since` is another tag (`"nonce-0"`)',
        lambda: sequence(tagged(200, TAG_A), delta('"nonce-0"', [], [])),
        (None, TAG_A, None),
        (False, True, True),
        r"^status 200, a delta since another tag than the one sent$",
        "a failed read: the fallback; the set kept for A is dropped (nothing sent after)",
    ),
    ConditionalRow(
        "delta-gone-unknown",
        "a 200 with ETag A, then a delta whose `gone` names seq 99, which A lacks",
        lambda: sequence(tagged(200, TAG_A), delta(TAG_A, [], [99])),
        (None, TAG_A, None),
        (False, True, True),
        r"^status 200, a delta whose 'gone' names a seq the kept set lacks$",
        "a failed read: the fallback; the set is dropped",
    ),
    ConditionalRow(
        "delta-block-held",
        "a 200 with ETag A, then a delta whose `blocks` holds seq 7, which A holds",
        lambda: sequence(tagged(200, TAG_A), delta(TAG_A, [GOOD_BLOCK], [])),
        (None, TAG_A, None),
        (False, True, True),
        r"^status 200, a delta whose 'blocks' holds a block the kept set holds$",
        "a failed read: the fallback; the set is dropped",
    ),
    ConditionalRow(
        "delta-out-of-order",
        "a 200 with ETag A, then a delta whose `blocks` are seqs 9 then 8",
        lambda: sequence(
            tagged(200, TAG_A), delta(TAG_A, [{**OTHER_BLOCK, "seq": 9}, OTHER_BLOCK], [])
        ),
        (None, TAG_A, None),
        (False, True, True),
        r"^status 200, a delta whose 'blocks' or 'gone' are not by increasing seq$",
        "a failed read: the fallback; the set is dropped",
    ),
    ConditionalRow(
        "delta-malformed",
        'a 200 with ETag A, then a delta whose `gone` is `["7"]`',
        lambda: sequence(tagged(200, TAG_A), delta(TAG_A, [], ["7"])),
        (None, TAG_A, None),
        (False, True, True),
        r"^status 200, a delta that is not the object with 'since', 'blocks' and 'gone'$",
        "a failed read: the fallback; the set is dropped",
    ),
]


@pytest.mark.parametrize("row", CONDITIONAL_ROWS, ids=lambda row: row.id)
def test_conditional_read_faults(
    row: ConditionalRow, caplog: pytest.LogCaptureFixture, make_host: MakeHost
) -> None:
    server = FaultServer().start()
    server.route(BLOCKS_PATH, row.reads())
    server.route(EXEC_PATH, respond(200, GOOD["exec"]))
    block = Block(7, "alpha", "alpha beta")
    assert {"seq": block.seq, "label": block.label, "content": block.content} == GOOD_BLOCK
    here = run_tool("recall_search", SEARCH, MemoryArchive([block]))
    try:
        with make_host(
            server.url, token=TOKEN, timeout=timeout_of(row.why), max_body_bytes=MAX_BODY
        ) as host:
            outputs = [host.exec_tool("recall_search", SEARCH) for _ in row.falls_back]
    finally:
        server.stop()
    assert outputs == [OUTPUT if back else here for back in row.falls_back]
    reads = server.requests(BLOCKS_PATH)
    assert [r.headers.get("if-none-match") for r in reads] == list(row.sent)
    # A tag sent is sent as ?since= too (percent-encoded), else there is no query.
    assert [r.target for r in reads] == [
        BLOCKS_PATH if tag is None else f"{BLOCKS_PATH}?since={urllib.parse.quote(tag, safe='')}"
        for tag in row.sent
    ]
    assert all(r.headers["authorization"] == f"Bearer {TOKEN}" for r in reads)
    execs = server.requests(EXEC_PATH)
    assert [json.loads(r.body) for r in execs] == [{"name": "recall_search", "args": SEARCH}] * sum(
        row.falls_back
    )
    secret_free(caplog.text)


@pytest.mark.parametrize(
    "row", [row for row in CONDITIONAL_ROWS if any(row.falls_back)], ids=lambda row: row.id
)
def test_conditional_read_fault_with_exec_down_too(
    row: ConditionalRow, caplog: pytest.LogCaptureFixture, make_host: MakeHost
) -> None:
    server = FaultServer().start()
    server.route(BLOCKS_PATH, row.reads())
    server.route(EXEC_PATH, respond(500, b'{"error": "internal"}'))
    first_back = row.falls_back.index(True)
    try:
        with make_host(
            server.url, token=TOKEN, timeout=timeout_of(row.why), max_body_bytes=MAX_BODY
        ) as host:
            for _ in range(first_back):
                host.exec_tool("recall_search", SEARCH)
            with pytest.raises(FallbackFailedError) as caught:
                host.exec_tool("recall_search", SEARCH)
    finally:
        server.stop()
    assert caught.value.read_error.what == f"GET {BLOCKS_PATH}"
    assert re.search(row.why, caught.value.read_error.why), caught.value.read_error.why
    assert caught.value.exec_error.why == "status 500"
    for link in chain(caught.value):
        secret_free(str(link), repr(link))
    secret_free(caplog.text)


# The table of docs/faults.md.

MARK_START = "<!-- fault-matrix:start (generated from tests/recall/test_fault_matrix.py) -->"
MARK_END = "<!-- fault-matrix:end -->"
CONDITIONAL_START = (
    "<!-- conditional-matrix:start (generated from tests/recall/test_fault_matrix.py) -->"
)
CONDITIONAL_END = "<!-- conditional-matrix:end -->"


def markdown_table() -> str:
    lines = [
        f"Time-out {TIMEOUT:g} s in the rows it ends ({UNHURRIED:g} s in the others), body "
        f"bound {MAX_BODY // 1024} KiB, a token configured; every row that the time-out "
        f"ends within {BOUND:g} s. For every row, with a healthy "
        f"`/tool/exec`, `recall` and `recall_search` both give the fallback: one "
        f"`POST {EXEC_PATH}` with the same name and args, and its output is returned. With "
        "the fault on `/tool/exec` too, both raise `FallbackFailedError`, whose read and "
        "exec errors say what the last column says.",
        "",
        "| row | the Go does (on the read; on `/tool/exec` too in the second run) "
        "| `FallbackFailedError`: the errors say |",
        "|---|---|---|",
    ]
    lines += [f"| `{row.id}` | {row.fault} | {row.said} |" for row in ROWS]
    return "\n".join(lines)


def conditional_table() -> str:
    lines = [
        f"Time-out {UNHURRIED:g} s, a token configured, /tool/exec healthy; each row runs "
        f"`recall_search` once for each entry of its `If-None-Match` column, one search "
        "after the other on one host. With /tool/exec "
        "answering 500, the first search that falls back raises `FallbackFailedError` "
        "instead, whose read error says what the row says.",
        "",
        "| row | the Go does on `GET /internal/v1/recall/blocks` | `If-None-Match` sent "
        "| the host does |",
        "|---|---|---|---|",
    ]
    for row in CONDITIONAL_ROWS:
        sent = ", ".join("none" if tag is None else f"`{tag}`" for tag in row.sent)
        lines.append(f"| `{row.id}` | {row.fault} | {sent} | {row.does} |")
    return "\n".join(lines)


def _between(text: str, start_mark: str, end_mark: str, table: str) -> str:
    start, end = text.index(start_mark) + len(start_mark), text.index(end_mark)
    return text[:start] + "\n" + table + "\n" + text[end:]


def with_table(text: str) -> str:
    """``text`` (docs/faults.md) with the tables between their marks made from the rows."""
    text = _between(text, MARK_START, MARK_END, markdown_table())
    return _between(text, CONDITIONAL_START, CONDITIONAL_END, conditional_table())


def write_docs_table(path: Path = DOC) -> bool:
    """Rewrite the table of ``path`` from ROWS (``make faults-doc``); whether it changed."""
    text = path.read_text(encoding="utf-8")
    wanted = with_table(text)
    if wanted != text:
        path.write_text(wanted, encoding="utf-8")
    return wanted != text


def test_docs_table_is_current() -> None:
    text = DOC.read_text(encoding="utf-8")
    assert with_table(text) == text, "docs/faults.md is stale: make faults-doc"


def test_write_docs_table_rewrites_only_the_table(tmp_path: Path) -> None:
    current = DOC.read_text(encoding="utf-8")
    stale = current.replace(f"| `{ROWS[0].id}` |", "| `a-row-since-renamed` |")
    assert stale != current
    copy = tmp_path / "faults.md"
    copy.write_text(stale, encoding="utf-8")
    assert write_docs_table(copy) is True
    assert copy.read_text(encoding="utf-8") == current
    assert write_docs_table(copy) is False


if __name__ == "__main__":  # make faults-doc
    print(f"{DOC}: {'rewritten' if write_docs_table() else 'unchanged'}")
