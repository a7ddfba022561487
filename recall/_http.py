"""HostBase: what both hosts do with httpx besides I/O (options, TLS, the errors to translate)."""

from __future__ import annotations

import contextlib
import encodings.idna  # noqa: F401  getaddrinfo's codec of host names: not in a first search
import functools
import ssl
from collections.abc import Callable, Iterator
from typing import Any, ClassVar, Generic, TypeVar

import httpx

from recall._core import DEFAULT_CACHE_BYTES, DEFAULT_MAX_BODY_BYTES, HostCore, Job
from recall._errors import HostClosedError
from recall._go import DEFAULT_UNICODE_VERSION
from recall._protocol import Request, blocks_request, check_base_url, check_type
from recall._shadow import COUNTS, Shadow, ShadowState

TransportT = TypeVar("TransportT", httpx.BaseTransport, httpx.AsyncBaseTransport)


class HostBase(Generic[TransportT]):
    """What both hosts share: their options, the httpx client they make, their repr. A host
    class names its transport's base class, httpx's transport and client classes."""

    _transport_kind: ClassVar[type[httpx.BaseTransport | httpx.AsyncBaseTransport]]
    _transport_class: ClassVar[Callable[..., Any]]
    _client_class: ClassVar[Callable[..., Any]]
    _http: httpx.Client | httpx.AsyncClient
    _through: TransportT  # what sends: the client's auth, redirects and cookies unused
    _shown_url: str
    _last: tuple[Request, httpx.Request] | None = None
    _closing = False
    _open: Callable[[], None]  # makes the host's own state
    _submit: Callable[[Job], bool]  # the core's offpath hook, which never waits

    def __init__(
        self,
        base_url: str,
        *,
        token: str | None = None,
        timeout: float = 5.0,
        transport: TransportT | None = None,
        max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
        cache_bytes: int = DEFAULT_CACHE_BYTES,
        verify: bool | ssl.SSLContext = True,
        shadow: Shadow | None = None,
        unicode_version: str = DEFAULT_UNICODE_VERSION,
    ) -> None:
        """A host for the Go at ``base_url``, with one persistent connection pool.

        ``token`` is sent as ``Authorization: Bearer <token>``. ``timeout`` bounds, in
        seconds, each of connecting, reading, writing and waiting for a pooled connection,
        and a whole body's arrival once its headers are in; ``max_body_bytes`` each body.
        ``cache_bytes`` bounds what is kept between searches (the last set read, its ETag
        and a word index; 0: nothing). ``verify`` is httpx's (True, False or an
        ``ssl.SSLContext``), for an https:// Go only; ``transport`` replaces httpx's.
        Proxies and .netrc are ignored; redirects are not followed. ``unicode_version``
        is the Go's ``unicode.Version`` (``"17.0.0"``: Go 1.27; ``"15.0.0"``: Go 1.21 to
        1.26; ``parity probe --go-url URL`` names it). ``shadow`` (a ``recall.Shadow``)
        compares the port with Go's /tool/exec on live traffic, off the caller's path.

        TypeError for an option of the wrong type; ValueError for a wrong value (a base
        URL that is not an absolute http(s) URL with a host, an unknown version).
        """
        self._shown_url, https = check_base_url(base_url)
        go = self._shown_url.rstrip("/")  # what its errors say: no credentials
        self._core: HostCore = HostCore(
            token=token,
            timeout=timeout,
            max_body_bytes=max_body_bytes,
            cache_bytes=cache_bytes,
            unicode_version=unicode_version,
            shadow=ShadowState.of(shadow, token=token, go=go),
            go=go,
        )
        self._core.offpath = self._submit
        if not isinstance(verify, bool | ssl.SSLContext):
            raise TypeError("verify must be True, False or an ssl.SSLContext")
        kind = self._transport_kind
        check_type("transport", transport, (kind, type(None)), f"an httpx.{kind.__name__}")
        if isinstance(verify, bool) and not https:
            verify = _no_tls()  # never used: building httpx's default would load the CA store
        if transport is None:
            transport = self._transport_class(verify=verify, trust_env=False)
        self._through = transport
        try:
            self._http = self._client_class(
                transport=transport,
                base_url=base_url,
                headers=self._core.headers,
                timeout=httpx.Timeout(self._core.timeout),
                trust_env=False,
            )
            self._prepared(blocks_request())  # a first search's read, built with the host
        except httpx.InvalidURL as exc:
            raise ValueError(f"invalid base URL: {exc}") from exc
        self._open()

    def _open_or_raise(self) -> None:
        if self._http.is_closed:
            raise HostClosedError(f"{self!r} is closed: it sends no more requests") from None

    @contextlib.contextmanager
    def _sending(self, request: Request) -> Iterator[None]:
        """Around the sending of ``request`` and the reading of its answer: a transport
        error becomes its GoUnavailableError; the client closed by another thread or task,
        this call under way, HostClosedError."""
        try:
            self._open_or_raise()
            yield
        except (httpx.HTTPError, httpx.InvalidURL, httpx.StreamError) as exc:
            raise self._core.unavailable(request, exc) from exc
        except RuntimeError:
            self._open_or_raise()
            raise
        except ssl.SSLError as exc:
            # An alert on an established TLS connection (a client certificate refused)
            # passes anyio and httpcore untranslated (httpx issue 3350); httpx's sync
            # transport reads it as a ReadError: so do both hosts.
            read_error = httpx.ReadError(str(exc))
            read_error.__cause__ = exc
            raise self._core.unavailable(request, read_error) from read_error

    def _prepared(self, request: Request) -> httpx.Request:
        """httpx's request for ``request``, built once for the same ``request`` sent again
        (``blocks_request`` gives one object for one tag)."""
        last = self._last
        if last is not None and last[0] is request:
            return last[1]
        prepared = self._http.build_request(
            request.method,
            request.path,
            params=request.params,
            headers=request.headers,
            content=request.content,
        )
        self._last = (request, prepared)
        return prepared

    def shadow_stats(self) -> dict[str, int]:
        """The shadow's counts, now: ``sampled``, ``compared`` (``matched``, ``diverged``,
        ``raced``), ``dropped``, ``errors`` (Go failed the shadow's call), ``fell_back``
        (the port's read failed: its output would be Go's own), ``pending``, and
        ``go_failed`` (``primary="go"``: Go failed, the port served the call).

        ``sampled = compared + dropped + errors + fell_back + pending``.
        """
        shadow = self._core.shadow
        return dict.fromkeys(COUNTS, 0) if shadow is None else shadow.stats()

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._shown_url!r})"


@functools.cache
def _no_tls() -> ssl.SSLContext:
    """The TLS context of a plain http:// host's transport, which never uses it: no CA."""
    return ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
