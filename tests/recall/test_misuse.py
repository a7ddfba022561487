"""Misuse caught at the boundary of both hosts: a TypeError naming the parameter for a
name or args that is not a str; a ValueError at construction for a base URL that is
not an absolute http(s) URL with a host, and for a bad option. Nothing is sent.

Every test runs over each kind of host (``make_host``, ``host_kind``).
"""

from __future__ import annotations

import math
import ssl

import httpx
import pytest

from .conftest import MakeHost

BASE = "http://go.test"


class Nothing(httpx.MockTransport):
    """A transport that fails the test if a request is ever sent."""

    def __init__(self) -> None:
        super().__init__(self.refuse)

    @staticmethod
    def refuse(request: httpx.Request) -> httpx.Response:
        pytest.fail(f"a request was sent: {request.method} {request.url}")


@pytest.mark.parametrize(
    ("name", "args", "message"),
    [
        (None, "{}", "name must be a str, not NoneType"),
        (5, "{}", "name must be a str, not int"),
        (b"recall", "{}", "name must be a str, not bytes"),
        ("recall", {"id": "r7"}, "args must be a str, not dict"),
        ("recall_search", None, "args must be a str, not NoneType"),
        ("web_fetch", b"{}", "args must be a str, not bytes"),
    ],
)
def test_name_or_args_not_a_str(
    make_host: MakeHost, name: object, args: object, message: str
) -> None:
    with make_host(BASE, transport=Nothing()) as host:
        with pytest.raises(TypeError) as caught:
            host.exec_tool(name, args)  # type: ignore[arg-type]
        assert str(caught.value) == message


@pytest.mark.parametrize(
    "url",
    [
        "",
        "go.test",
        "go.test:8080",
        "/internal/v1",
        "//go.test/",
        "ftp://go.test/",
        "file:///tmp/go",
        "http://",
        "http:///internal",
        "https:go.test",
        "http://go.test:65536/",
        " http://go.test/",
        "http://go.test/\n",
        None,
        b"http://go.test/",
    ],
)
def test_base_url_not_absolute_http_with_a_host(make_host: MakeHost, url: object) -> None:
    with pytest.raises(ValueError, match="base URL"):
        make_host(url)


@pytest.mark.parametrize(
    ("options", "match"),
    [
        ({"max_body_bytes": -1}, "max_body_bytes must not be negative"),
        ({"max_body_bytes": 1.5}, "max_body_bytes must be an int"),
        ({"cache_bytes": -1}, "cache_bytes must not be negative"),
        ({"cache_bytes": True}, "cache_bytes must be an int"),
        ({"timeout": 0}, "timeout must be a positive, finite number"),
        ({"timeout": -1.0}, "timeout must be a positive, finite number"),
        ({"timeout": math.nan}, "timeout must be a positive, finite number"),
        ({"timeout": math.inf}, "timeout must be a positive, finite number"),
        ({"timeout": None}, "timeout must be a number of seconds"),
        ({"timeout": "5"}, "timeout must be a number of seconds"),
        ({"token": ""}, "token must be one or more visible ASCII characters"),
        ({"token": "two words"}, "token must be one or more visible ASCII characters"),
        ({"token": "caf\u00e9"}, "token must be one or more visible ASCII characters"),
        ({"token": b"tok"}, "token must be one or more visible ASCII characters"),
        ({"verify": "/etc/ssl/certs/ca.pem"}, "verify must be True, False or an ssl.SSLContext"),
        ({"verify": None}, "verify must be True, False or an ssl.SSLContext"),
        ({"verify": 1}, "verify must be True, False or an ssl.SSLContext"),
        ({"transport": object()}, "transport must be an httpx"),
    ],
)
def test_bad_option(make_host: MakeHost, options: dict[str, object], match: str) -> None:
    with pytest.raises(ValueError, match=match) as caught:
        make_host(BASE, **options)
    token = options.get("token")
    assert not token or str(token) not in str(caught.value)  # never echoed


def test_transport_of_the_other_kind(make_host: MakeHost, host_kind: str) -> None:
    other = httpx.AsyncHTTPTransport() if host_kind == "sync" else httpx.HTTPTransport()
    wanted = "BaseTransport" if host_kind == "sync" else "AsyncBaseTransport"
    with pytest.raises(ValueError, match=f"transport must be an httpx.{wanted}"):
        make_host(BASE, transport=other)


def test_good_options(make_host: MakeHost) -> None:
    context = ssl.create_default_context()
    for options in (
        {"token": "tok-3f9a_SECRET~!", "timeout": 1, "max_body_bytes": 0, "cache_bytes": 0},
        {"verify": False, "transport": Nothing()},
        {"verify": context},
    ):
        make_host("https://go.test:8443/prefix/", **options).close()
