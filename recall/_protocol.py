"""The contract's HTTP API as data, with no I/O: the requests, Go's answers (fed into an
``Answer``, then parsed or refused with the RecallError that says what failed), the options
checked."""

from __future__ import annotations

import functools
import json
import math
import re
import time
import urllib.parse
from collections.abc import Callable, Mapping
from typing import Final, NamedTuple, TypeVar, Unpack

from recall._blocks import (
    BlockSet,
    BodyStream,
    NotBlocks,
    ReadOptions,
    fields_from_json,
    loads,
    read_set,
)
from recall._errors import GoUnavailableError, UnknownToolError
from recall._tools import Block, replace_surrogates

BLOCK_PATH: Final = "/internal/v1/recall/block"
BLOCKS_PATH: Final = "/internal/v1/recall/blocks"
EXEC_PATH: Final = "/internal/v1/tool/exec"

_T = TypeVar("_T")
_TOKEN = re.compile(r"[\x21-\x7e]+")  # what a header value carries as it is
# A strong entity tag (RFC 9110, 8.8.3) of visible ASCII: DQUOTE *etagc DQUOTE. A weak
# one, obs-text, several values in one field, or one past 1024 characters is not kept.
_STRONG_ETAG = re.compile(r'"[\x21\x23-\x7e]{0,1022}"')
IF_NONE_MATCH: Final = "If-None-Match"


class Request(NamedTuple):
    """One request to the Go: ``what`` names it in messages (``GET /internal/...?seq=7``)."""

    method: str
    path: str
    what: str
    params: Mapping[str, str] | None = None
    headers: Mapping[str, str] | None = None
    content: bytes | None = None


def block_request(seq: int) -> Request:
    """``GET /internal/v1/recall/block?seq=N``, N in canonical decimal digits."""
    digits = str(seq)
    return Request("GET", BLOCK_PATH, f"GET {BLOCK_PATH}?seq={digits}", params={"seq": digits})


@functools.lru_cache(maxsize=4)
def blocks_request(since: str | None = None) -> Request:
    """``GET /internal/v1/recall/blocks``; given a kept set's tag, ``?since=<tag>`` with
    ``If-None-Match: <tag>``. The same object for the same tag (built once by httpx)."""
    what = f"GET {BLOCKS_PATH}"
    if since is None:
        return Request("GET", BLOCKS_PATH, what)
    return Request(
        "GET", BLOCKS_PATH, what, params={"since": since}, headers={IF_NONE_MATCH: since}
    )


def exec_request(name: str, args: str) -> Request:
    """``POST /internal/v1/tool/exec`` with ``{"name": name, "args": args}`` in ASCII JSON."""
    body = json.dumps({"name": name, "args": args}).encode("ascii")
    headers = {"Content-Type": "application/json"}
    return Request("POST", EXEC_PATH, f"POST {EXEC_PATH}", headers=headers, content=body)


class Answer:
    """Go's answer to a request, its body fed as it arrives: GoUnavailableError for a status
    but 200 and 404 (and 304 to a conditional read), past ``limit`` bytes, or when not
    complete ``timeout`` seconds after its headers (httpx's bounds each wait, not a
    trickle; time spent decoding a ``stream`` is not counted). ``what`` is the request's;
    lowercase ``headers``. The body goes to ``stream`` when there is one, else to ``body``."""

    __slots__ = (
        "_clock",
        "_deadline",
        "_limit",
        "_size",
        "_timeout",
        "body",
        "headers",
        "status",
        "stream",
        "what",
    )

    def __init__(
        self,
        request: Request,
        status: int,
        headers: Mapping[str, str],
        *,
        limit: int,
        timeout: float,
        clock: Callable[[], float] = time.monotonic,
        stream: BodyStream | None = None,
    ) -> None:
        what = request.what
        conditional = status == 304 and IF_NONE_MATCH in (request.headers or {})
        if status not in (200, 404) and not conditional:
            raise GoUnavailableError(what, f"status {status}")
        declared = headers.get("content-length", "")
        if declared.isdigit() and int(declared) > limit:
            raise GoUnavailableError(what, f"body larger than {limit} bytes")
        self.what, self._limit, self._timeout, self._clock = what, limit, timeout, clock
        self._deadline = clock() + timeout
        self.status, self.headers, self.body = status, headers, bytearray()
        self.stream, self._size = stream, 0

    def feed(self, chunk: bytes) -> None:
        self._size += len(chunk)
        if self._size > self._limit:
            raise GoUnavailableError(self.what, f"body larger than {self._limit} bytes")
        clock = self._clock
        if clock() > self._deadline:
            why = f"body not complete within {self._timeout:g}s of its headers"
            raise GoUnavailableError(self.what, why)
        if self.stream is None:
            self.body += chunk
            return
        started = clock()
        self.stream.feed(chunk)
        self._deadline += clock() - started


# Go's answers.


def _json(answer: Answer) -> tuple[object, bool]:
    """The answer's JSON and its surrogate flag; a 404 body that is not JSON is None."""
    try:
        return loads(answer.body)
    except ValueError as exc:
        if answer.status == 404:
            return None, False
        raise GoUnavailableError(answer.what, f"status 200, invalid JSON body: {exc}") from exc


def parse_block(answer: Answer, seq: int) -> Block | None:
    """The block with this seq, or None when the Go answers its JSON 404."""
    doc, surrogates = _json(answer)
    if answer.status == 404:
        if isinstance(doc, dict) and "error" in doc:
            return None
        raise GoUnavailableError(answer.what, "status 404 without the JSON error body")
    fields = fields_from_json(doc, surrogates)
    if fields is None or fields[0] != seq:
        raise GoUnavailableError(answer.what, "the body is not the requested block")
    return Block(*fields)


def strong_etag(headers: Mapping[str, str]) -> str | None:
    """The answer's ETag when it is one strong entity tag of visible ASCII, else None."""
    tag = headers.get("etag", "")
    return tag if _STRONG_ETAG.fullmatch(tag) else None


def parse_blocks(
    answer: Answer,
    *,
    kept: BlockSet | None = None,
    sent: str | None = None,
    **read: Unpack[ReadOptions],
) -> BlockSet:
    """Every readable block: ``read_set``'s of a 200 (a whole set, or a delta to ``kept``;
    its ETag kept when strong; ``read``: its options), or ``kept`` for a 304 whose ETag is
    ``sent``, the tag of a conditional read. Any other answer is a failed read (a bad
    delta's from a BadDelta)."""
    what = answer.what
    if answer.status == 304:
        if sent is None or kept is None or kept.tag != sent:
            raise GoUnavailableError(what, "status 304")  # unsolicited: Answer refuses it first
        if answer.headers.get("etag") != sent:
            raise GoUnavailableError(what, "status 304 with another ETag than the one sent")
        return kept
    if answer.status != 200:
        answer.body.clear()
        raise GoUnavailableError(what, f"status {answer.status}")
    tag = strong_etag(answer.headers)
    try:
        if answer.stream is not None:
            return answer.stream.read(tag=tag)
        return read_set(answer.body, kept, tag=tag, sent=sent, **read)
    except NotBlocks as exc:
        raise GoUnavailableError(what, str(exc)) from exc


def parse_exec(answer: Answer, name: str) -> str:
    """Go's own output for the call; UnknownToolError when it answers its JSON 404."""
    what = answer.what
    doc, _ = _json(answer)
    if answer.status == 404 and isinstance(doc, dict) and "error" in doc:
        raise UnknownToolError(name)
    if answer.status != 200:
        raise GoUnavailableError(what, f"status {answer.status}")
    if not isinstance(doc, dict) or not isinstance(output := doc.get("output"), str):
        raise GoUnavailableError(what, "status 200, the body is not the JSON object with 'output'")
    return replace_surrogates(output)


# The options: TypeError for a wrong type, ValueError for a wrong value.


def check_type(name: str, value: object, kind: type[_T] | tuple[type[_T], ...], wanted: str) -> _T:
    """``value``; TypeError unless it is a ``kind`` and no bool (no option is one)."""
    if isinstance(value, bool) or not isinstance(value, kind):
        raise TypeError(f"{name} must be {wanted}, not {type(value).__name__}")
    return value


def check_base_url(base_url: object) -> tuple[str, bool]:
    """The URL shown (no credentials) and whether it is https; ValueError unless an
    absolute http:// or https:// URL with a host (no white space or control character)."""
    base_url = check_type("the base URL", base_url, str, "a str")
    if any(c.isspace() or not c.isprintable() for c in base_url):
        raise ValueError("the base URL must not hold white space or control characters")
    try:
        parts = urllib.parse.urlsplit(base_url)
        _ = parts.port  # ValueError for a port that is not a number from 0 to 65535
    except ValueError as exc:
        raise ValueError(f"invalid base URL: {exc}") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:  # a scheme in lowercase
        raise ValueError("the base URL must be an absolute http:// or https:// URL with a host")
    return parts._replace(netloc=parts.netloc.rpartition("@")[2]).geturl(), parts.scheme == "https"


def check_token(token: object) -> str | None:
    """``token``; ValueError unless None or one or more visible ASCII characters."""
    token = check_type("the token", token, (str, type(None)), "a str or None")
    if token is not None and not _TOKEN.fullmatch(token):
        raise ValueError("the token must be one or more visible ASCII characters")
    return token


def check_timeout(timeout: object) -> float:
    """``timeout`` as a float; ValueError unless a positive, finite number of seconds."""
    timeout = check_type("timeout", timeout, (int, float), "a number of seconds")
    if not (timeout > 0 and math.isfinite(timeout)):
        raise ValueError("timeout must be a positive, finite number of seconds")
    return float(timeout)


def check_bytes(name: str, value: object) -> int:
    """``value``, the option ``name``; ValueError when negative."""
    value = check_type(name, value, int, "an int")
    if value < 0:
        raise ValueError(f"{name} must not be negative")
    return value
