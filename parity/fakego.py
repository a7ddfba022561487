"""A fake Go: a journal's archive served on loopback, encoded as Go encodes JSON.

``FakeGo``, a ``pytest_httpserver.HTTPServer``, answers the contract's routes from a
journal, per ``Mode``: ``archive`` serves ``/block?seq=N`` (404, or 400 for a missing
or non-int64 ``seq``, as Go) and ``/blocks``, ``/tool/exec`` a 500; ``conditional``
adds a strong ETag on ``/blocks`` (``"fake-"`` and 16 hex digits of the body's
SHA-256) and its 304; ``delta`` serves a set (the journal's, or ``stage``'s) under a
tag of its own and answers ``?since=<tag>``; ``fallback`` answers ``/tool/exec`` with
the recorded output of that exact call, the reads with 500. ``check()`` raises
``ParityError`` for any request the fake was not set up for::

    with FakeGo(journal) as go:
        GoTurnHost(go.base_url).exec_tool("recall", '{"id": "r1000"}')
        go.check()
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
import urllib.parse
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Literal

from pytest_httpserver import HTTPServer
from werkzeug import Request, Response

from parity.errors import ParityError
from parity.journal import Journal, JournalBlock
from recall._protocol import BLOCK_PATH, BLOCKS_PATH, EXEC_PATH

Mode = Literal["archive", "conditional", "delta", "fallback"]

_INT64 = 2**63
_SEQ_RE = re.compile(r"[+-]?[0-9]+\Z")

# What encoding/json's HTML-safe encoder escapes beyond what json.dumps does (Go 1.22
# and later): in JSON text these characters stand only inside strings.
_HTML_RE = re.compile("[<>&\u2028\u2029]")


def go_json(value: Any) -> bytes:
    """``value`` as Go's ``json.NewEncoder(w).Encode`` writes it (final newline included),
    dicts in their own key order (Go sorts map keys and keeps struct field order: build
    them that way)."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return (_HTML_RE.sub(lambda m: f"\\u{ord(m[0]):04x}", text) + "\n").encode("utf-8")


def _int64(raw: str) -> int | None:
    """``raw`` as Go's ``strconv.ParseInt(raw, 10, 64)`` reads it, or None."""
    return int(raw) if _SEQ_RE.match(raw) and -_INT64 <= int(raw) < _INT64 else None


def _block_obj(b: JournalBlock) -> dict[str, Any]:
    return {"seq": b.seq, "label": b.label, "content": b.content}  # Go's struct field order


@dataclass(frozen=True)
class Served:
    """One request the fake Go answered: method, path with query, status, JSON body sent."""

    method: str
    target: str
    status: int
    body: str

    @property
    def path(self) -> str:
        return self.target.split("?", 1)[0]

    @property
    def read(self) -> str | None:
        """The archive read this request is, as the journal names Go's reads, or None:
        ``"blocks"`` (whatever the query), ``"block?seq=N"`` with the first ``seq`` in
        canonical decimal when it is a decimal int64 (as Go reads it), else
        ``"block?<query>"``, which no Go read is."""
        path, _, query = self.target.partition("?")
        if self.method != "GET" or path not in (BLOCK_PATH, BLOCKS_PATH):
            return None
        if path == BLOCKS_PATH:
            return "blocks"
        seq = _int64(urllib.parse.parse_qs(query, keep_blank_values=True).get("seq", [""])[0])
        return f"block?{query}" if seq is None else f"block?seq={seq}"

    def __str__(self) -> str:
        return f"{self.method} {self.target} -> {self.status}"


class FakeGo(HTTPServer):
    """A fake Go on loopback, serving one journal's blocks and recorded outputs."""

    def __init__(self, journal: Journal, *, mode: Mode = "archive") -> None:
        # One request at a time, as a replay sends them (werkzeug closes each connection):
        # no thread started for each, about a ninth of `make parity`'s time.
        super().__init__(host="127.0.0.1", port=0, threaded=False)
        self.journal = journal
        self.mode: Mode = mode
        self._blocks = {b.seq: b for b in journal.blocks}
        self._blocks_body = blocks_body(journal.blocks)
        self.etag = '"fake-' + hashlib.sha256(self._blocks_body).hexdigest()[:16] + '"'
        """The strong ETag of the blocks in ``conditional`` mode."""
        self._tagged: dict[str, dict[int, JournalBlock]] = {}  # every set delta mode served
        self.stage()  # the journal's set, current under the first tag
        # the first recorded output where two calls share a tool and args
        self._outputs = {(c.tool, c.args): c.output for c in reversed(journal.calls)}
        self.expect_request(BLOCK_PATH, method="GET").respond_with_handler(self._block)
        self.expect_request(BLOCKS_PATH, method="GET").respond_with_handler(self._all_blocks)
        self.expect_request(EXEC_PATH, method="POST").respond_with_handler(self._exec)

    # --- life cycle -----------------------------------------------------------------

    def start(self) -> None:
        """Listen on a free loopback port."""
        logging.getLogger("werkzeug").setLevel(logging.ERROR)
        try:
            super().start()
        except OSError as e:
            raise ParityError(f"the fake Go could not listen on 127.0.0.1: {e}") from e

    def thread_target(self) -> None:
        assert self.server is not None
        self.server.serve_forever(poll_interval=0.02)  # stop() in 20 ms, not 500

    def stop(self) -> None:
        """Stop listening (again: nothing)."""
        if self.is_running():
            super().stop()

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:PORT``."""
        if not self.is_running():
            raise ParityError("the fake Go is not running")
        return self.url_for("/").rstrip("/")

    # --- what was served --------------------------------------------------------------

    def mark(self) -> int:
        """A position in the request log, for ``served_since``."""
        return len(self.log)

    def served_since(self, mark: int) -> list[Served]:
        """The requests answered since ``mark``, in order."""
        served = []
        for request, response in self.log[mark:]:
            target = request.full_path.rstrip("?") if request.query_string else request.path
            body = response.get_data(as_text=True)
            served.append(Served(request.method, target, response.status_code, body))
        return served

    def problems(self) -> list[str]:
        """Every request the fake was not set up for, and every handler error, since the
        last call (pytest-httpserver's assertions and handler errors, then cleared)."""
        found = ["unexpected request: " + str(a).partition("\n")[0] for a in self.assertions]
        found += [f"fake Go handler error: {e!r}" for e in self.handler_errors]
        self.clear_assertions()
        self.clear_handler_errors()
        return found

    def check(self) -> None:
        """Raise ``ParityError`` naming every request the fake was not set up for."""
        if problems := self.problems():
            raise ParityError(
                "the fake Go saw requests it was not set up for:\n  " + "\n  ".join(problems)
            )

    def stage(self, blocks: Iterable[JournalBlock] | None = None) -> str:
        """Serve ``blocks`` (by default the journal's) in ``delta`` mode, under a new tag;
        the tag."""
        items = self.journal.blocks if blocks is None else blocks
        self._current = tag = f'"fake-delta-{len(self._tagged)}"'
        self._tagged[tag] = {b.seq: b for b in sorted(items, key=lambda b: b.seq)}
        return tag

    def stale(self, k: int) -> list[JournalBlock]:
        """The ``k``-th of a cycle of sets that differ from the journal's: a quarter of
        its blocks missing and two blocks it lacks; every fifth, the journal's own."""
        if k % 5 == 4:
            return list(self.journal.blocks)
        top = max(self._blocks, default=0)
        kept = [b for i, b in enumerate(self.journal.blocks) if i % 4 != k % 4]
        extra = [JournalBlock(top + k % 3 + i, f"stale {k}", f"stale block {i}") for i in (1, 2)]
        return kept + extra

    # --- handlers ---------------------------------------------------------------------

    @staticmethod
    def _reply(
        status: int, value: Any = None, *, body: bytes | None = None, tag: str | None = None
    ) -> Response:
        """A response: ``body``, else ``value`` as Go encodes it (none for a 304)."""
        headers = {} if tag is None else {"ETag": tag}
        if status == 304:
            return Response(status=304, headers=headers)
        content = go_json(value) if body is None else body
        return Response(content, status=status, content_type="application/json", headers=headers)

    def _unavailable(self, route: str) -> Response:
        return self._reply(500, {"error": f"fake Go: {route} disabled in {self.mode} mode"})

    def _block(self, request: Request) -> Response:
        if self.mode == "fallback":
            return self._unavailable("archive reads")
        if "seq" not in request.args:
            return self._reply(400, {"error": 'missing "seq"'})
        if (seq := _int64(request.args["seq"])) is None:
            return self._reply(400, {"error": '"seq" must be a decimal int64'})
        if (block := self._blocks.get(seq)) is None:
            return self._reply(404, {"error": "not found"})
        return self._reply(200, _block_obj(block))

    def _all_blocks(self, request: Request) -> Response:
        if self.mode == "fallback":
            return self._unavailable("archive reads")
        none_match = request.headers.getlist("If-None-Match")
        if self.mode != "delta":
            tag = self.etag if self.mode == "conditional" else None
            unchanged = tag is not None and names_tag(none_match, tag)
            return self._reply(304 if unchanged else 200, body=self._blocks_body, tag=tag)
        tag, current = self._current, self._tagged[self._current]
        since = request.args.get("since")
        if since is not None and not names_tag(none_match, since):
            self.add_assertion(f"GET {BLOCKS_PATH}?since={since} without If-None-Match")
        if names_tag(none_match, tag) or since == tag:
            return self._reply(304, tag=tag)
        if (old := self._tagged.get(since or "")) is None:
            return self._reply(200, body=blocks_body(current.values()), tag=tag)
        blocks = [_block_obj(b) for seq, b in current.items() if seq not in old]
        gone = sorted(set(old) - set(current))
        return self._reply(200, {"since": since, "blocks": blocks, "gone": gone}, tag=tag)

    def _exec(self, request: Request) -> Response:
        if self.mode != "fallback":
            return self._unavailable("/tool/exec")
        try:
            body = json.loads(request.get_data(as_text=True))
            name, args = body["name"], body["args"]
            if not isinstance(name, str) or not isinstance(args, str):
                raise TypeError("name and args must be strings")
        except (ValueError, KeyError, TypeError) as e:
            self.add_assertion(f"POST {EXEC_PATH} with a bad body: {e}")
            return self._reply(400, {"error": "bad body"})
        if (output := self._outputs.get((name, args))) is None:
            self.add_assertion(
                f"POST {EXEC_PATH} for a call the journal does not hold: {name} {args[:200]!r}"
            )
            return self._reply(500, {"error": "fake Go: no recorded output for this call"})
        return self._reply(200, {"output": output})


def names_tag(fields: Iterable[str], tag: str) -> bool:
    """Whether an If-None-Match field (its lines as one list) names ``tag``, as the Go
    reference reads it (RFC 9110, 13.1.2): ``*``, or a list of entity tags one of which
    is ``tag`` by weak comparison (``W/"x"`` names ``"x"``). A malformed list names
    nothing."""
    text = ",".join(fields)
    if text.strip(" \t") == "*":
        return True
    return _TAG_LIST.fullmatch(text) is not None and tag in _ENTITY_TAG.findall(text)


# [W/] DQUOTE *etagc DQUOTE, etagc = %x21 / %x23-7E / %x80-FF (a str of Latin-1 here), in
# a list of them whose elements may be empty, with spaces and tabs around each.
_ENTITY_TAG = re.compile('(?:W/)?("[\x21\x23-\x7e\x80-\xff]*")')
_TAG_LIST = re.compile(
    f"[ \t]*(?:{_ENTITY_TAG.pattern}[ \t]*)?(?:,[ \t]*(?:{_ENTITY_TAG.pattern}[ \t]*)?)*"
)


def blocks_body(blocks: Iterable[JournalBlock]) -> bytes:
    """The body Go serves on ``/internal/v1/recall/blocks`` for these blocks."""
    return go_json({"blocks": [_block_obj(b) for b in blocks]})
