"""A misbehaving Go on 127.0.0.1: raw sockets, one thread per connection, faults per route.

pytest-httpserver answers with whole, well-formed HTTP responses; the faults here
need the bytes on the wire: a body cut by a TCP reset, headers that never come, a
body that trickles, a length that lies, a chunked body without end. Each route
(path, query ignored) has a ``Behaviour``, a function writing the answer to the
connection::

    with FaultServer() as server:
        server.route("/internal/v1/recall/blocks", reset_mid_body(b'{"blocks": [...]}'))
        server.route("/internal/v1/tool/exec", respond(200, b'{"output": "x"}'))
        ... server.url ... server.log ...

Every answer carries ``Connection: close``; a request for a path without a route
gets a 599, which no row of the matrix expects. ``stop()`` wakes every behaviour
that waits, so no thread outlives the server.
"""

from __future__ import annotations

import contextlib
import itertools
import socket
import ssl
import struct
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from types import TracebackType

import httpx

__all__ = [
    "Behaviour",
    "FaultServer",
    "ReadsElsewhere",
    "Received",
    "chunked_forever",
    "closed_port_url",
    "declared_length",
    "reset_mid_body",
    "respond",
    "sequence",
    "silent",
    "silent_until_closed",
    "trickle",
]

MAX_HOLD = 30.0
"""No behaviour holds a connection longer than this, even when nobody stops the server."""


@dataclass(frozen=True)
class Received:
    """One request as the server read it."""

    method: str
    target: str
    headers: dict[str, str]
    body: bytes

    @property
    def path(self) -> str:
        return self.target.split("?", 1)[0]

    def __str__(self) -> str:
        return f"{self.method} {self.target}"


@dataclass
class _Stats:
    """What the behaviours report back: bytes of body sent, per path."""

    sent: dict[str, int] = field(default_factory=dict)

    def add(self, path: str, n: int) -> None:
        self.sent[path] = self.sent.get(path, 0) + n


Behaviour = Callable[[socket.socket, Received, "FaultServer"], None]


class FaultServer:
    """A threaded TCP server on a free loopback port that answers each route its way."""

    def __init__(self) -> None:
        self._routes: dict[str, Behaviour] = {}
        self.log: list[Received] = []
        self.stats = _Stats()
        self.stopping = threading.Event()
        self._lock = threading.Lock()
        self._listener: socket.socket | None = None
        self._threads: list[threading.Thread] = []
        self._conns: list[socket.socket] = []

    def route(self, path: str, behaviour: Behaviour) -> FaultServer:
        self._routes[path] = behaviour
        return self

    @property
    def url(self) -> str:
        assert self._listener is not None, "not started"
        host, port = self._listener.getsockname()
        return f"http://{host}:{port}"

    @property
    def address(self) -> tuple[str, int]:
        assert self._listener is not None, "not started"
        host, port = self._listener.getsockname()
        return host, port

    def start(self) -> FaultServer:
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", 0))
        listener.listen(32)
        listener.settimeout(0.02)
        self._listener = listener
        self._spawn(self._accept_loop)
        return self

    def stop(self) -> None:
        self.stopping.set()
        with self._lock:
            conns, threads = list(self._conns), list(self._threads)
        for conn in conns:
            _shutdown(conn)  # wakes a thread blocked on the socket
        for thread in threads:
            thread.join(5)
        if self._listener is not None:
            self._listener.close()

    def __enter__(self) -> FaultServer:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    def requests(self, path: str | None = None) -> list[Received]:
        with self._lock:
            return [r for r in self.log if path is None or r.path == path]

    # Internals.

    def _spawn(self, target: Callable[..., None], *args: object) -> None:
        thread = threading.Thread(target=target, args=args, daemon=True)
        with self._lock:
            self._threads.append(thread)
        thread.start()

    def _accept_loop(self) -> None:
        assert self._listener is not None
        while not self.stopping.is_set():
            try:
                conn, _ = self._listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            conn.settimeout(MAX_HOLD)
            with self._lock:
                self._conns.append(conn)
            self._spawn(self._serve, conn)

    def _serve(self, conn: socket.socket) -> None:
        try:
            request = _read_request(conn)
            if request is None:
                return
            with self._lock:
                self.log.append(request)
            behaviour = self._routes.get(request.path, respond(599, b"no route in this test"))
            behaviour(conn, request, self)
        except OSError:
            pass  # the client went away: that is what several faults are about
        finally:
            _close(conn)


def _shutdown(conn: socket.socket) -> None:
    with contextlib.suppress(OSError):
        conn.shutdown(socket.SHUT_RDWR)


def _close(conn: socket.socket) -> None:
    _shutdown(conn)
    conn.close()


def _read_request(conn: socket.socket) -> Received | None:
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = conn.recv(65536)
        if not chunk:
            return None
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    method, target, _ = lines[0].split(" ", 2)
    headers = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    length = int(headers.get("content-length", "0"))
    while len(body) < length:
        chunk = conn.recv(65536)
        if not chunk:
            break
        body += chunk
    return Received(method, target, headers, body)


def _head(status: int, headers: Iterable[tuple[str, str]]) -> bytes:
    lines = [f"HTTP/1.1 {status} Status {status}", *(f"{k}: {v}" for k, v in headers)]
    lines.append("Connection: close")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


# Behaviours.


def respond(
    status: int,
    body: bytes = b"",
    *,
    content_type: str = "application/json",
    headers: Iterable[tuple[str, str]] = (),
) -> Behaviour:
    """A complete answer with its Content-Length."""

    def behaviour(conn: socket.socket, request: Received, server: FaultServer) -> None:
        fields = [("Content-Type", content_type), ("Content-Length", str(len(body))), *headers]
        conn.sendall(_head(status, fields) + body)
        server.stats.add(request.path, len(body))

    return behaviour


def sequence(*behaviours: Behaviour) -> Behaviour:
    """The n-th request answered by the n-th behaviour, every request past them by the last."""
    count = itertools.count()
    lock = threading.Lock()

    def behaviour(conn: socket.socket, request: Received, server: FaultServer) -> None:
        with lock:
            n = next(count)
        behaviours[min(n, len(behaviours) - 1)](conn, request, server)

    return behaviour


def reset_mid_body(body: bytes, *, sent: int | None = None) -> Behaviour:
    """A 200 declaring all of ``body``, ``sent`` bytes of it, then a TCP reset (SO_LINGER 0)."""
    cut = len(body) // 2 if sent is None else sent

    def behaviour(conn: socket.socket, request: Received, server: FaultServer) -> None:
        fields = [("Content-Type", "application/json"), ("Content-Length", str(len(body)))]
        conn.sendall(_head(200, fields) + body[:cut])
        server.stats.add(request.path, cut)
        server.stopping.wait(0.05)  # let the client read the start of the body
        conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        conn.close()  # with linger 0: RST, not FIN

    return behaviour


def silent() -> Behaviour:
    """Read the request, never answer (no status line, no headers)."""

    def behaviour(conn: socket.socket, request: Received, server: FaultServer) -> None:
        server.stopping.wait(MAX_HOLD)

    return behaviour


def silent_until_closed(closed: threading.Event) -> Behaviour:
    """Read the request, never answer; set ``closed`` when the client closes the connection."""

    def behaviour(conn: socket.socket, request: Received, server: FaultServer) -> None:
        conn.settimeout(0.05)
        while not server.stopping.is_set():
            try:
                if conn.recv(1) == b"":
                    closed.set()
                    return
            except TimeoutError:
                continue

    return behaviour


def trickle(body: bytes, *, interval: float) -> Behaviour:
    """A 200 with its headers at once, then the body one byte every ``interval`` seconds."""

    def behaviour(conn: socket.socket, request: Received, server: FaultServer) -> None:
        fields = [("Content-Type", "application/json"), ("Content-Length", str(len(body)))]
        conn.sendall(_head(200, fields))
        for i in range(len(body)):
            if server.stopping.wait(interval):
                return
            conn.sendall(body[i : i + 1])
            server.stats.add(request.path, 1)

    return behaviour


def declared_length(length: int, start: bytes) -> Behaviour:
    """A 200 whose Content-Length says ``length``: ``start`` is sent, then nothing more."""

    def behaviour(conn: socket.socket, request: Received, server: FaultServer) -> None:
        fields = [("Content-Type", "application/json"), ("Content-Length", str(length))]
        conn.sendall(_head(200, fields) + start)
        server.stats.add(request.path, len(start))
        server.stopping.wait(MAX_HOLD)

    return behaviour


def chunked_forever(start: bytes, *, chunk: int = 65536, cap: int = 1 << 30) -> Behaviour:
    """A 200 without Content-Length: ``start``, then chunks of spaces until the client leaves.

    ``cap`` bytes at most, so a client without a bound fails the test instead of
    filling the machine's memory.
    """
    filler = b" " * chunk
    frame = f"{chunk:x}\r\n".encode() + filler + b"\r\n"

    def behaviour(conn: socket.socket, request: Received, server: FaultServer) -> None:
        fields = [("Content-Type", "application/json"), ("Transfer-Encoding", "chunked")]
        conn.sendall(_head(200, fields) + f"{len(start):x}\r\n".encode() + start + b"\r\n")
        sent = len(start)
        server.stats.add(request.path, sent)
        while sent < cap and not server.stopping.is_set():
            conn.sendall(frame)
            sent += chunk
            server.stats.add(request.path, chunk)
        conn.sendall(b"0\r\n\r\n")

    return behaviour


def closed_port_url() -> str:
    """A loopback URL where nothing listens (connection refused)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}"


class ReadsElsewhere(httpx.BaseTransport, httpx.AsyncBaseTransport):
    """httpx's own transport, with the GET reads sent to ``reads_url`` instead.

    So that the reads can meet a closed port while /tool/exec, at the host's
    base URL, answers. For either kind of host.
    """

    def __init__(self, reads_url: str) -> None:
        # Plain http only: a TLS context without CAs (httpx's default loads the CA store,
        # a third of a second each), which no certificate passes.
        http_only = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        self._inner = httpx.HTTPTransport(verify=http_only)
        self._inner_async = httpx.AsyncHTTPTransport(verify=http_only)
        self._reads = httpx.URL(reads_url)

    def _elsewhere(self, request: httpx.Request) -> httpx.Request:
        if request.method == "GET":
            request.url = request.url.copy_with(host=self._reads.host, port=self._reads.port)
        return request

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        return self._inner.handle_request(self._elsewhere(request))

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        return await self._inner_async.handle_async_request(self._elsewhere(request))

    def close(self) -> None:
        self._inner.close()

    async def aclose(self) -> None:
        await self._inner_async.aclose()
