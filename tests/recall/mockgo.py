"""A Go in memory for the tests of the kept set: its /blocks body changes when told, with or
without the ETag extension; and a transport that records what a real Go answered.

``MockGo`` serves ``{"blocks": [...]}`` as Go encodes it (``go_body``), /tool/exec
500 (so a fallback cannot hide a wrong output). With ``etag=True`` every 200 carries
a strong tag ``"mock-<generation>"`` and a read whose ``If-None-Match`` names the
current tag is answered 304 with it, as the contract's extension says; each
change of the body is a new generation. With ``deltas=True`` too, a read
``?since=<tag>`` of a generation it remembers is answered the delta from it
(``tamper`` may spoil it). ``reads`` records each /blocks read as (the
If-None-Match sent, the status answered); ``kinds`` each answer's kind (``"304"``,
``"delta"``, ``"full"``).
"""

from __future__ import annotations

import functools
import json
import re
import threading
import time
from collections.abc import Callable, Sequence

import httpx

from parity.fakego import go_json
from recall._protocol import BLOCKS_PATH

from .hosts import Host

__all__ = ["BASE", "MockGo", "Recording", "cold", "go_body", "search"]

BASE = "http://go.test"


def go_body(blocks: Sequence[tuple[int, str, str]], *, ascii_only: bool = False) -> bytes:
    """The /blocks body as Go's encoding/json writes it (``parity.fakego.go_json``); with
    ``ascii_only``, every other rune as a ``\\u`` escape (another encoder's, as valid)."""
    items = [{"seq": seq, "label": label, "content": content} for seq, label, content in blocks]
    body = go_json({"blocks": items})
    if not ascii_only:
        return body
    text = re.sub(r"[^\x00-\x7f]", lambda m: json.dumps(m[0])[1:-1], body.decode("utf-8"))
    return text.encode("ascii")


def search(query: str, limit: int | None = None) -> str:
    """recall_search's args for ``query`` (and ``limit``)."""
    args: dict[str, object] = {"query": query}
    if limit is not None:
        args["limit"] = limit
    return json.dumps(args)


class MockGo:
    """A Go whose /blocks body is ``body`` (changed by assigning it), for httpx.MockTransport."""

    def __init__(
        self,
        body: bytes,
        *,
        etag: bool = False,
        tag_prefix: str = "mock",
        deltas: bool = False,
        tamper: Callable[[dict[str, object]], dict[str, object]] | None = None,
    ) -> None:
        self._body = body
        self.etag = etag or deltas
        self.deltas = deltas
        self.tamper = tamper
        self.generation = 1
        self.tag_prefix = tag_prefix
        self.reads: list[tuple[str | None, int]] = []
        self.kinds: list[str] = []
        self._history: dict[str, bytes] = {self.tag: body}
        self._lock = threading.Lock()

    @property
    def body(self) -> bytes:
        return self._body

    @body.setter
    def body(self, body: bytes) -> None:
        with self._lock:
            if body != self._body:
                self.generation += 1
            self._body = body
            self._history[self.tag] = body

    def forget(self) -> None:
        """Forget every generation but the current one (a delta is then a full answer)."""
        with self._lock:
            self._history = {self.tag: self._body}

    @property
    def tag(self) -> str:
        return f'"{self.tag_prefix}-{self.generation}"'

    def __call__(self, request: httpx.Request) -> httpx.Response:
        if request.url.path != BLOCKS_PATH:
            return httpx.Response(500, json={"error": "mock Go: no /tool/exec here"})
        sent = request.headers.get("if-none-match")
        since = request.url.params.get("since")
        with self._lock:
            body, tag = self._body, self.tag
            status = 304 if self.etag and sent == tag else 200
            self.reads.append((sent, status))
            before = self._history.get(since) if self.deltas and since is not None else None
        headers = {"ETag": tag} if self.etag else {}
        if status == 304:
            self.kinds.append("304")
            return httpx.Response(304, headers=headers)
        if before is None:
            self.kinds.append("full")
            return httpx.Response(200, content=body, headers=headers)
        old = {b["seq"]: b for b in json.loads(before)["blocks"]}
        new = {b["seq"]: b for b in json.loads(body)["blocks"]}
        delta: dict[str, object] = {
            "since": since,
            "blocks": [new[seq] for seq in sorted(new) if seq not in old],
            "gone": [seq for seq in sorted(old) if seq not in new],
        }
        if self.tamper is not None:
            delta = self.tamper(delta)
        self.kinds.append("delta")
        return httpx.Response(200, content=go_json(delta), headers=headers)

    def host(self, kind: str, **options: object) -> Host:
        """A host of this kind reading this Go."""
        return Host(kind, BASE, transport=httpx.MockTransport(self), **options)

    @property
    def statuses(self) -> list[int]:
        return [status for _, status in self.reads]


@functools.lru_cache(maxsize=8)
def cold(body: bytes, args: str) -> str:
    """recall_search's output from a fresh host that keeps nothing (the same for the same
    body and args: computed once)."""
    with Host("sync", BASE, transport=httpx.MockTransport(MockGo(body)), cache_bytes=0) as host:
        return host.exec_tool("recall_search", args)


class Recording(httpx.BaseTransport, httpx.AsyncBaseTransport):
    """httpx's own transports, recording each /blocks read: (If-None-Match sent, status).
    ``hold``: seconds each sync /blocks read stays in flight before it is sent (callers
    arriving meanwhile find it still flying)."""

    def __init__(self, *, hold: float = 0.0) -> None:
        # plain http, verify=False: no CA store to load (about 35 ms of CPU each)
        self._sync = httpx.HTTPTransport(verify=False)
        self._async = httpx.AsyncHTTPTransport(verify=False)
        self._hold = hold
        self.reads: list[tuple[str | None, int]] = []

    def _record(self, request: httpx.Request, response: httpx.Response) -> httpx.Response:
        if request.url.path == BLOCKS_PATH:
            self.reads.append((request.headers.get("if-none-match"), response.status_code))
        return response

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        if self._hold and request.url.path == BLOCKS_PATH:
            time.sleep(self._hold)
        return self._record(request, self._sync.handle_request(request))

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        return self._record(request, await self._async.handle_async_request(request))

    def close(self) -> None:
        self._sync.close()

    async def aclose(self) -> None:
        await self._async.aclose()

    @property
    def statuses(self) -> list[int]:
        return [status for _, status in self.reads]
