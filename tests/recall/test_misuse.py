"""Misuse caught at the boundary of both hosts, by one rule: TypeError for an argument or
option of the wrong type (naming it), ValueError for a wrong value (a base URL that is
not an absolute http(s) URL with a host, a bound out of range). Nothing is sent.

Every test runs over each kind of host (``make_host``, ``host_kind``).
"""

from __future__ import annotations

import dataclasses
import inspect
import math
import re
import ssl
from typing import Any

import httpx
import pytest

from recall import AsyncGoTurnHost, GoTurnHost, Shadow

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
    ],
)
def test_base_url_not_absolute_http_with_a_host(make_host: MakeHost, url: object) -> None:
    with pytest.raises(ValueError, match="base URL"):
        make_host(url)


@pytest.mark.parametrize("url", [None, b"http://go.test/"])
def test_base_url_not_a_str(make_host: MakeHost, url: object) -> None:
    with pytest.raises(TypeError, match="the base URL must be a str, not "):
        make_host(url)


@pytest.mark.parametrize(
    ("options", "match"),
    [
        ({"max_body_bytes": -1}, "max_body_bytes must not be negative"),
        ({"cache_bytes": -1}, "cache_bytes must not be negative"),
        ({"timeout": 0}, "timeout must be a positive, finite number"),
        ({"timeout": -1.0}, "timeout must be a positive, finite number"),
        ({"timeout": math.nan}, "timeout must be a positive, finite number"),
        ({"timeout": math.inf}, "timeout must be a positive, finite number"),
        ({"token": ""}, "token must be one or more visible ASCII characters"),
        ({"token": "two words"}, "token must be one or more visible ASCII characters"),
        ({"token": "caf\u00e9"}, "token must be one or more visible ASCII characters"),
    ],
)
def test_bad_option_value(make_host: MakeHost, options: dict[str, object], match: str) -> None:
    with pytest.raises(ValueError, match=match) as caught:
        make_host(BASE, **options)
    token = options.get("token")
    assert not token or str(token) not in str(caught.value)  # never echoed


@pytest.mark.parametrize(
    ("options", "match"),
    [
        ({"max_body_bytes": 1.5}, "max_body_bytes must be an int, not float"),
        ({"cache_bytes": True}, "cache_bytes must be an int, not bool"),
        ({"timeout": None}, "timeout must be a number of seconds, not NoneType"),
        ({"timeout": "5"}, "timeout must be a number of seconds, not str"),
        ({"token": b"tok-SECRET"}, "token must be a str or None, not bytes"),
        ({"verify": "/etc/ssl/certs/ca.pem"}, "verify must be True, False or an ssl.SSLContext"),
        ({"verify": None}, "verify must be True, False or an ssl.SSLContext"),
        ({"verify": 1}, "verify must be True, False or an ssl.SSLContext"),
        ({"transport": object()}, "transport must be an httpx"),
        ({"shadow": 0.5}, "shadow must be a recall.Shadow or None, not float"),
        ({"shadow": {"rate": 1.0}}, "shadow must be a recall.Shadow or None, not dict"),
    ],
)
def test_bad_option_type(make_host: MakeHost, options: dict[str, object], match: str) -> None:
    with pytest.raises(TypeError, match=match) as caught:
        make_host(BASE, **options)
    assert "SECRET" not in str(caught.value)  # a token is never echoed


def test_transport_of_the_other_kind(make_host: MakeHost, host_kind: str) -> None:
    other = httpx.AsyncHTTPTransport() if host_kind == "sync" else httpx.HTTPTransport()
    wanted = "BaseTransport" if host_kind == "sync" else "AsyncBaseTransport"
    with pytest.raises(TypeError, match=f"transport must be an httpx.{wanted}"):
        make_host(BASE, transport=other)


@pytest.mark.parametrize(
    ("options", "error", "message"),
    [
        ({"rate": -0.1}, ValueError, "rate must be a number from 0 to 1, not -0.1"),
        ({"rate": 1.5}, ValueError, "rate must be a number from 0 to 1, not 1.5"),
        ({"rate": math.nan}, ValueError, "rate must be a number from 0 to 1, not nan"),
        ({"rate": True}, TypeError, "rate must be a number from 0 to 1, not bool"),
        ({"rate": "0.5"}, TypeError, "rate must be a number from 0 to 1, not str"),
        (
            {"rate": 1, "primary": "rust"},
            ValueError,
            "primary must be 'python' or 'go', not 'rust'",
        ),
        ({"rate": 1, "primary": None}, TypeError, "primary must be a str, not NoneType"),
        ({"rate": 1, "on_divergence": 3}, TypeError, "on_divergence must be a callable or None"),
        ({"rate": 1, "queue": 0}, ValueError, "queue must be at least 1, not 0"),
        ({"rate": 1, "queue": 2.0}, TypeError, "queue must be an int, not float"),
    ],
)
def test_bad_shadow_options(options: dict[str, Any], error: type[Exception], message: str) -> None:
    with pytest.raises(error, match="^" + re.escape(message) + "$"):
        Shadow(**options)


def test_the_shadow_is_one_frozen_value() -> None:
    shadow = Shadow(rate=0.25, primary="go")
    assert (shadow.rate, shadow.primary, shadow.on_divergence, shadow.queue) == (
        0.25,
        "go",
        None,
        256,
    )
    with pytest.raises(dataclasses.FrozenInstanceError):
        shadow.rate = 1.0  # type: ignore[misc]
    with pytest.raises(TypeError):
        Shadow(0.5)  # type: ignore[misc]  # keyword-only
    hosts = inspect.signature(GoTurnHost).parameters
    assert "shadow_random" not in hosts
    assert "primary" not in hosts
    assert inspect.signature(GoTurnHost) == inspect.signature(AsyncGoTurnHost)


def test_good_options(make_host: MakeHost) -> None:
    context = ssl.create_default_context()
    for options in (
        {"token": "tok-3f9a_SECRET~!", "timeout": 1, "max_body_bytes": 0, "cache_bytes": 0},
        {"verify": False, "transport": Nothing()},
        {"verify": context},
    ):
        make_host("https://go.test:8443/prefix/", **options).close()
