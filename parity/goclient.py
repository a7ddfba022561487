"""The one client of a Go's HTTP API (the contract's routes and the Go reference's debug
routes, several in one ``POST /debug/batch``), for the harness and bench. How to reach a
Go is one frozen ``GoConnection``; ``connection_from_options`` alone reads the options
and ``$PARITY_GO_TOKEN``, ``$PARITY_GO_CA``, ``$PARITY_GO_CERT``, ``$PARITY_GO_KEY``::

    with GoClient(GoConnection("https://go.internal:8443", token=..., ca=ca)) as go:
        seq = go.archive("label", "content")
        output = go.exec_tool("recall", f'{{"id": "r{seq}"}}')

Every failure is a ``GoClientError`` naming the request and why, never the token. The
client takes nothing from the environment (``trust_env=False``), follows no redirect."""

from __future__ import annotations

import contextlib
import functools
import json
import os
import re
import ssl
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import KW_ONLY, dataclass, field
from pathlib import Path
from typing import Any, Final, Generic, Literal, TypeGuard, TypeVar

import httpx

from parity.errors import GoClientError
from parity.journal import JournalBlock
from recall._protocol import BLOCK_PATH, BLOCKS_PATH, EXEC_PATH

ARCHIVE_PATH: Final = "/internal/v1/recall/archive"

# A live Go's token; the TLS files when no option gives them.
TOKEN_ENV: Final = "PARITY_GO_TOKEN"
CA_ENV: Final = "PARITY_GO_CA"
CERT_ENV: Final = "PARITY_GO_CERT"
KEY_ENV: Final = "PARITY_GO_KEY"

_TOKEN_RE = re.compile(r"[\x21-\x7e]+")  # what a header value carries as it is
_SNIPPET = 200


@functools.cache
def default_ssl_context() -> ssl.SSLContext:
    """The system's CA store, shared by every client without TLS files (a load: ~40 ms)."""
    return ssl.create_default_context()


@dataclass(frozen=True)
class BlocksAnswer:
    """One read of ``/blocks``: the raw body (None for 304 Not Modified) and its ETag."""

    status: int
    etag: str | None
    body: bytes | None


@dataclass(frozen=True, repr=False)
class GoConnection:
    """How to reach one Go, checked when built: base URL, token, the CA of an https Go
    (default: the system's store), a client ``cert`` and its ``key`` (unless ``cert``
    holds it); ``ssl_context`` is built once for all its clients, ``url`` is as shown."""

    base_url: str
    _: KW_ONLY
    token: str | None = None
    ca: Path | None = None
    cert: Path | None = None
    key: Path | None = None
    url: str = field(init=False, compare=False)
    ssl_context: ssl.SSLContext = field(init=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "url", _shown(self.base_url))
        try:
            parsed = httpx.URL(self.base_url)
        except httpx.InvalidURL as exc:
            raise GoClientError(f"{self.url!r} is not a URL: {exc}") from exc
        if parsed.scheme not in ("http", "https") or not parsed.host:
            raise GoClientError(f"{self.url!r} is not an http:// or https:// URL")
        if self.token is not None and not _TOKEN_RE.fullmatch(self.token):
            raise GoClientError(
                f"the token of the Go at {self.url} (${TOKEN_ENV}) must be one or more "
                "visible ASCII characters"
            )
        if self.key is not None and self.cert is None:
            raise GoClientError(f"a client key ({self.key}) without its certificate")
        if parsed.scheme != "https" and (self.ca or self.cert):
            raise GoClientError(
                f"a CA file or a client certificate is given, but {self.url} is not https://"
            )
        object.__setattr__(self, "ssl_context", self._build_ssl_context())

    def __repr__(self) -> str:
        token = "***" if self.token else None
        tls = "".join(f", {k}={str(v)!r}" for k in ("ca", "cert", "key") if (v := getattr(self, k)))
        return f"GoConnection({self.url!r}, token={token}{tls})"

    def _build_ssl_context(self) -> ssl.SSLContext:
        if self.ca is None and self.cert is None:
            return default_ssl_context()
        try:
            context = ssl.create_default_context(cafile=self.ca)
        except (OSError, ssl.SSLError) as exc:
            raise GoClientError(f"the CA file {self.ca}: {_reason(exc)}") from exc
        if self.cert is not None:
            try:
                # An empty password: a key that needs one fails, rather than prompting.
                context.load_cert_chain(self.cert, self.key, password="")
            except (OSError, ssl.SSLError) as exc:
                key_file = f"the key {self.key}" if self.key else "its key in the same file"
                raise GoClientError(
                    f"the client certificate {self.cert} with {key_file}: {_reason(exc)}; "
                    f"both must be PEM, the key unencrypted (--go-key or ${KEY_ENV} when "
                    "the certificate's file does not hold it)"
                ) from exc
        return context

    @property
    def headers(self) -> dict[str, str]:
        """What every request to this Go carries: ``Authorization`` with its token, if any."""
        return {"Authorization": f"Bearer {self.token}"} if self.token else {}

    def mask(self, text: str) -> str:
        """``text`` with the token (and any password of the URL) replaced by ``***``."""
        for secret in (self.token, httpx.URL(self.base_url).password):
            if secret:
                text = text.replace(secret, "***")
        return text


def _shown(url: str) -> str:
    """``url`` without user and password, for messages."""
    try:
        return str(httpx.URL(url).copy_with(username=None, password=None)).rstrip("/")
    except (httpx.InvalidURL, TypeError):
        return "<an invalid URL>"


def _reason(exc: OSError) -> str:
    """What went wrong loading a file: ``no such file or directory``, or OpenSSL's words."""
    if isinstance(exc, ssl.SSLError) or not exc.strerror:
        return str(exc)
    return exc.strerror[:1].lower() + exc.strerror[1:]


def add_go_options(add: Callable[..., object], *, prefix: str = "--go", url_help: str) -> None:
    """Add ``{prefix}-url``, ``-ca``, ``-cert`` and ``-key`` with ``add`` (argparse's
    ``add_argument`` or pytest's ``addoption``); ``connection_from_options`` reads them."""
    add(f"{prefix}-url", metavar="URL", default=None, help=url_help)
    helps = {
        "ca": f"with an https:// {prefix}-url: the CA that signed the Go's certificate "
        f"(default ${CA_ENV}, else the system's CA store; the client takes no proxy "
        "and no httpx setting from the environment, so an internal CA must be given here)",
        "cert": f"a client certificate, for a Go that requires one (default ${CERT_ENV})",
        "key": f"the client certificate's unencrypted key, unless {prefix}-cert holds it "
        f"(default ${KEY_ENV})",
    }
    for name, text in helps.items():
        add(f"{prefix}-{name}", metavar="PEM", default=None, help=text)


def connection_from_options(
    options: object, *, prefix: str = "--go", environ: Mapping[str, str] = os.environ
) -> GoConnection | None:
    """The connection that the ``add_go_options`` options of ``prefix`` describe in
    ``options`` (an argparse namespace, pytest's ``config.option``; an absent one is
    unset), each TLS file else from its environment variable, the token from
    ``$PARITY_GO_TOKEN``; None without a URL (TLS options without one are an error)."""
    dest = prefix.lstrip("-").replace("-", "_")
    variables = {"ca": CA_ENV, "cert": CERT_ENV, "key": KEY_ENV}
    given = {name: getattr(options, f"{dest}_{name}", None) for name in variables}
    if (url := getattr(options, f"{dest}_url", None)) is None:
        if named := [f"{prefix}-{name}" for name, value in given.items() if value]:
            raise GoClientError(f"{', '.join(named)} apply to {prefix}-url, which is not given")
        return None
    files = (given[name] or environ.get(variable) for name, variable in variables.items())
    ca, cert, key = (Path(file) if file else None for file in files)
    return GoConnection(url, token=environ.get(TOKEN_ENV) or None, ca=ca, cert=cert, key=key)


T = TypeVar("T")
Fail = Callable[..., GoClientError]
"""``fail(problem, *, status=None, detail="")``: the error of a request answered wrongly
(``status``: the Go's, when an int; ``detail`` names the part of the request it is about)."""


@dataclass(frozen=True)
class DebugRequest(Generic[T]):
    """A request to a Go (``target``: path and query; ``body``: JSON, if any) and ``read``,
    its result from a 200's JSON object; sent alone (:meth:`GoClient.run`) or, to a debug
    route, in a batch (:meth:`GoClient.batch`). ``detail`` names it in errors too."""

    method: str
    target: str
    read: Callable[[dict[str, Any], Fail], T]
    body: Any = None
    detail: str = ""

    @property
    def what(self) -> str:
        """The request, as an error names it."""
        return f"{self.method} {self.target}{self.detail}"


def _field(key: str, kind: type[T]) -> Callable[[dict[str, Any], Fail], T]:
    """The read of a 200's ``key``, of type ``kind``."""

    def read(doc: dict[str, Any], fail: Fail) -> T:
        value = doc.get(key)
        if type(value) is not kind:
            raise fail(f'answered no {kind.__name__} "{key}": {doc!r:.{_SNIPPET}}')
        return value

    return read


def _list_of(value: Any, kind: type[T]) -> TypeGuard[list[T]]:
    """Whether ``value`` is a list of ``kind`` values (a bool is no int)."""
    return isinstance(value, list) and all(type(v) is kind for v in value)


def lock_request(seq: int, *, locked: bool = True) -> DebugRequest[None]:
    """Lock (``locked=False``: unlock) the memory of block ``seq`` (``POST /debug/lock``)."""
    body = {"seq": seq, "locked": locked}
    return DebugRequest("POST", "/debug/lock", lambda doc, fail: None, body, f" ({seq})")


def reset_request(*, first_seq: int | None = None) -> DebugRequest[int]:
    """Empty the archive and the logs (``POST /debug/reset``): the next seq, ``first_seq``,
    by default the Go's initial one."""
    body = {} if first_seq is None else {"first_seq": first_seq}
    return DebugRequest("POST", "/debug/reset", _field("first_seq", int), body=body)


def log_request(
    log: Literal["requests", "reads", "answers"], *, since: int | None = None
) -> DebugRequest[list[str]]:
    """The entries of one of the Go's logs (``GET /debug/requests``, ``/debug/reads`` or
    ``/debug/answers``, how it answered each ``/blocks``); with ``since``, those from that
    index on (a reference without ``?since=`` is an error, never a part taken for all)."""
    target = f"/debug/{log}" if since is None else f"/debug/{log}?since={since}"

    def read(doc: dict[str, Any], fail: Fail) -> list[str]:
        if not _list_of(entries := doc.get(log), str):
            raise fail(f'answered no "{log}" array of strings')
        if since is not None and type(doc.get("next")) is not int:
            raise fail('answered no "next": it does not know ?since=')
        return entries

    return DebugRequest("GET", target, read)


def archive_request(blocks: Iterable[tuple[str, str, bool]]) -> DebugRequest[list[int]]:
    """Archive ``(label, content, locked)`` blocks, in order (``POST /debug/archive``): seqs."""
    items = [{"label": t, "content": c, "locked": k} for t, c, k in blocks]

    def read(doc: dict[str, Any], fail: Fail) -> list[int]:
        if not _list_of(seqs := doc.get("seqs"), int) or len(seqs) != len(items):
            raise fail(f"answered other seqs than the blocks': {doc!r:.{_SNIPPET}}")
        return seqs

    return DebugRequest("POST", "/debug/archive", read, body={"blocks": items})


def outputs_request(calls: Iterable[tuple[str, str]]) -> DebugRequest[list[str]]:
    """The Go's own outputs for ``(name, args)`` tool calls (``POST /debug/exec``, each as
    ``POST /tool/exec`` runs it); a call that ``/tool/exec`` would refuse is an error."""
    items = [{"name": n, "args": a} for n, a in calls]

    def read(doc: dict[str, Any], fail: Fail) -> list[str]:
        results = _field("results", list)(doc, fail)
        if len(results) != len(items):
            raise fail(f"answered {len(results)} results for {len(items)} calls")
        outputs: list[str] = []
        for call, result in zip(items, results, strict=True):
            got = result if isinstance(result, dict) else {}
            output, status = got.get("output"), got.get("status")
            if not isinstance(output, str) or status != 200:
                raise fail(
                    f"answered {result!r:.{_SNIPPET}} for it",
                    status=status,
                    detail=f" ({call['name']!r:.60})",
                )
            outputs.append(output)
        return outputs

    return DebugRequest("POST", "/debug/exec", read, body={"calls": items})


class GoClient(contextlib.AbstractContextManager["GoClient"]):
    """Every route of a Go, over one ``httpx.Client``: what a route answers, checked, or a
    ``GoClientError`` naming the request (``.status`` when the Go answered)."""

    def __init__(self, connection: GoConnection, *, timeout: float = 30.0) -> None:
        self.connection = connection
        self._http = httpx.Client(
            base_url=connection.base_url,
            headers=connection.headers,
            timeout=timeout,
            verify=connection.ssl_context,
            trust_env=False,
            follow_redirects=False,
        )

    def __repr__(self) -> str:
        return f"GoClient({self.connection!r})"

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        self._http.close()

    def _fail(self, what: str, suffix: str = "") -> Fail:
        """The ``Fail`` of the request ``what`` (``suffix``: where it was sent)."""

        def fail(problem: str, *, status: object = None, detail: str = "") -> GoClientError:
            message = f"{what}{detail}{suffix}: the Go at {self.connection.url} {problem}"
            code = status if type(status) is int else None
            return GoClientError(self.connection.mask(message), status=code)

        return fail

    def _send(
        self,
        method: str,
        path: str,
        what: str,
        *,
        params: Mapping[str, str] | None = None,
        body: Any = None,
        headers: Mapping[str, str] | None = None,
    ) -> httpx.Response:
        content = None if body is None else _json_body(body)
        if content is not None:
            headers = {**(headers or {}), "Content-Type": "application/json"}
        try:
            return self._http.request(method, path, params=params, content=content, headers=headers)
        except httpx.HTTPError as exc:
            problem = f"did not answer: {type(exc).__name__}: {exc}{_tls_hint(exc)}"
            raise self._fail(what)(problem) from exc

    def _refused(self, response: httpx.Response, what: str) -> GoClientError:
        status, hint = response.status_code, ""
        if status == 401 and self.connection.token is None:
            hint = f"; set ${TOKEN_ENV} to the Go's token"
        elif status == 401:
            hint = f"; the Go refused the token (${TOKEN_ENV}): is it this Go's?"
        snippet = response.text[:_SNIPPET].rstrip()
        return self._fail(what)(f"answered {status}: {snippet}{hint}", status=status)

    def _json(self, response: httpx.Response, what: str) -> Any:
        if response.status_code != 200:
            raise self._refused(response, what)
        try:
            return response.json()
        except ValueError as exc:
            raise self._fail(what)(f"answered a body that is not JSON: {exc}") from exc

    def _read(self, request: DebugRequest[T], doc: Any, fail: Fail) -> T:
        if not isinstance(doc, dict):
            raise fail(f"answered JSON that is not an object: {doc!r:.{_SNIPPET}}")
        return request.read(doc, fail)

    def archive(self, label: str, content: str, *, locked: bool = False) -> int:
        """Archive one block (``POST /archive``); its seq."""
        body = {"label": label, "content": content, "locked": locked}
        return self.run(DebugRequest("POST", ARCHIVE_PATH, _field("seq", int), body=body))

    def block(self, seq: int | str) -> JournalBlock | None:
        """The block ``seq`` (``GET /block?seq=N``; a str is sent as it is), or None for the
        contract's 404 ``{"error": ...}`` (absent or locked)."""
        what = f"GET {BLOCK_PATH}?seq={seq}"
        response = self._send("GET", BLOCK_PATH, what, params={"seq": str(seq)})
        if response.status_code == 404:  # the contract's {"error": "..."}: absent
            with contextlib.suppress(ValueError):
                if isinstance(doc := response.json(), dict) and isinstance(doc.get("error"), str):
                    return None
        return self._block(self._json(response, what), what)

    def blocks(self) -> list[JournalBlock]:
        """Every readable block (``GET /blocks``), by increasing seq."""
        what = f"GET {BLOCKS_PATH}"
        doc = self._json(self._send("GET", BLOCKS_PATH, what), what)
        items = doc.get("blocks") if isinstance(doc, dict) else None
        if not isinstance(items, list):
            raise self._fail(what)(f'answered no "blocks" array: {doc!r:.{_SNIPPET}}')
        return [self._block(item, what) for item in items]

    def blocks_read(self, *, etag: str | None = None) -> BlocksAnswer:
        """One read of ``GET /blocks`` (``If-None-Match: etag`` when given): a 200's raw body,
        or a 304's None."""
        what = f"GET {BLOCKS_PATH}"
        headers = {"If-None-Match": etag} if etag is not None else None
        response = self._send("GET", BLOCKS_PATH, what, headers=headers)
        if response.status_code == 304 and etag is not None:
            return BlocksAnswer(304, response.headers.get("ETag"), None)
        if response.status_code != 200:
            raise self._refused(response, what)
        return BlocksAnswer(200, response.headers.get("ETag"), response.content)

    def _block(self, item: Any, what: str) -> JournalBlock:
        if isinstance(item, dict):
            seq, label, content = item.get("seq"), item.get("label"), item.get("content")
            if type(seq) is int and isinstance(label, str) and isinstance(content, str):
                return JournalBlock(seq, label, content)
        raise self._fail(what)(f"answered something that is not a block: {item!r:.{_SNIPPET}}")

    def exec_tool(self, name: str, args: str) -> str:
        """The Go's own output for a tool call (``POST /tool/exec``)."""
        body, detail = {"name": name, "args": args}, f" ({name!r:.60})"
        return self.run(DebugRequest("POST", EXEC_PATH, _field("output", str), body, detail))

    def requests(self, *, since: int | None = None) -> list[str]:
        """The Go's request log: ``"METHOD /path?query"`` (:func:`log_request`)."""
        return self.run(log_request("requests", since=since))

    def reads(self, *, since: int | None = None) -> list[str]:
        """The archive reads the Go's tools made: ``"blocks"``, ``"block?seq=N"``."""
        return self.run(log_request("reads", since=since))

    def version(self) -> dict[str, str]:
        """The string fields of ``GET /debug/version`` (go_version, unicode_version, ...)."""
        doc = self.run(DebugRequest("GET", "/debug/version", lambda doc, fail: doc))
        return {k: v for k, v in doc.items() if isinstance(v, str)}

    def archive_many(self, blocks: Iterable[tuple[str, str, bool]]) -> list[int]:
        """:func:`archive_request`, sent alone."""
        return self.run(archive_request(blocks))

    def lock(self, seq: int, *, locked: bool = True) -> None:
        """:func:`lock_request`, sent alone."""
        self.run(lock_request(seq, locked=locked))

    def run(self, request: DebugRequest[T]) -> T:
        """What ``request`` answers, sent alone."""
        what = request.what
        response = self._send(request.method, request.target, what, body=request.body)
        return self._read(request, self._json(response, what), self._fail(what))

    def batch(self, requests: Sequence[DebugRequest[Any]]) -> list[Any]:
        """What each of ``requests`` answers, all sent in one ``POST /debug/batch`` (a single
        one alone). The Go runs them in order up to the first that fails: its error is raised."""
        if len(requests) < 2:
            return [self.run(r) for r in requests]
        items = [
            {"method": r.method, "path": r.target} | ({} if r.body is None else {"body": r.body})
            for r in requests
        ]
        batch = DebugRequest("POST", "/debug/batch", _field("responses", list), {"requests": items})
        responses, results = self.run(batch), []
        for request, response in zip(requests, responses, strict=False):
            fail = self._fail(request.what, f" (in {batch.what})")
            response = response if isinstance(response, dict) else {}
            status, answer = response.get("status"), response.get("body")
            if status != 200:
                raise fail(f"answered {status}: {json.dumps(answer)[:_SNIPPET]}", status=status)
            results.append(self._read(request, answer, fail))
        if len(responses) != len(requests):
            raise self._fail(batch.what)(
                f"answered {len(responses)} responses for {len(requests)} requests"
            )
        return results

    def reset(self, *, first_seq: int | None = None) -> int:
        """:func:`reset_request`, sent alone."""
        return self.run(reset_request(first_seq=first_seq))


def _json_body(value: Any) -> bytes:
    """``value`` as compact UTF-8 JSON; ASCII when a string holds a lone surrogate (which
    UTF-8 cannot carry, and a Go string reads as U+FFFD)."""
    try:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    except UnicodeEncodeError:
        return json.dumps(value, separators=(",", ":")).encode("ascii")


_TLS_HINTS = {
    "CERTIFICATE_VERIFY_FAILED": "the Go's certificate is not signed by a CA trusted here: "
    f"give its CA with --go-ca or ${CA_ENV}",
    "CERTIFICATE_REQUIRED": "the Go requires a client certificate: give it with --go-cert "
    f"and --go-key, or ${CERT_ENV} and ${KEY_ENV}",
    "UNKNOWN_CA": "the Go does not trust the client certificate's CA",
    "BAD_CERTIFICATE": "the Go refused the client certificate",
    "WRONG_VERSION_NUMBER": "is the Go serving plain http://?",
}


def _tls_hint(exc: BaseException) -> str:
    text = str(exc).upper()
    return next((f"; {hint}" for marker, hint in _TLS_HINTS.items() if marker in text), "")
