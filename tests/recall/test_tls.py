"""``verify`` in both hosts, against a Go reference behind mutual TLS (its own test CA,
``goref/cmd/gencerts``), and no TLS context built for a plain http:// Go.

With a context that trusts the CA and carries the client certificate, the outputs
are the Go's own; without the client certificate, with one the CA did not sign, or
with ``verify=True`` (the CA unknown), every read fails and the fallback fails too:
a RecallError naming the TLS failure, never an ssl exception. Every test runs over
each kind of host (``make_host``).
"""

from __future__ import annotations

import re
import ssl
from collections.abc import Callable

import httpx
import pytest

from parity.fixtures.go import FreshGo
from parity.reference import RunningReference, TLSFiles
from recall import FallbackFailedError, GoUnavailableError

from .conftest import MakeHost

TOKEN = "tok-TLS-0d4e"
CALLS = [("recall", '{"id": "r1"}'), ("recall_search", '{"query": "alpha"}')]


@pytest.fixture
def go(fresh_go: FreshGo, go_certs: TLSFiles) -> RunningReference:
    """A reference serving HTTPS with the test CA's certificate, requiring a client's."""
    assert go_certs.client_ca is not None  # mutual TLS
    go = fresh_go(first_seq=1, token=TOKEN, tls=go_certs)
    assert go.base_url.startswith("https://127.0.0.1:")
    go.archive("alpha", "alpha beta\nsecond line")
    return go


def ca_only(certs: TLSFiles, tls12: bool = False) -> ssl.SSLContext:
    """The CA trusted, no client certificate; TLS 1.2 at most with ``tls12``."""
    context = ssl.create_default_context(cafile=str(certs.ca))
    if tls12:
        context.maximum_version = ssl.TLSVersion.TLSv1_2
    return context


def stranger(certs: TLSFiles, tls12: bool = False) -> ssl.SSLContext:
    """The CA trusted, and a client certificate the CA did not sign."""
    context = ca_only(certs, tls12)
    folder = certs.ca.parent
    context.load_cert_chain(str(folder / "stranger.pem"), str(folder / "stranger-key.pem"))
    return context


@pytest.mark.go
def test_mutual_tls_with_a_context(
    make_host: MakeHost, go: RunningReference, go_certs: TLSFiles
) -> None:
    since = len(go.requests())
    with make_host(
        go.base_url, token=TOKEN, verify=go_certs.connection(go.base_url).ssl_context
    ) as host:
        outputs = [host.exec_tool(name, args) for name, args in CALLS]
    made = go.requests()[since:]
    assert made == ["GET /internal/v1/recall/block?seq=1", "GET /internal/v1/recall/blocks"]
    assert outputs == [go.exec_tool(name, args) for name, args in CALLS]


def refused(
    make_host: MakeHost, go: RunningReference, verify: ssl.SSLContext | bool
) -> list[GoUnavailableError]:
    """Each call's failures (both of a read and its fallback), once no request got through."""
    since = len(go.requests())
    errors: list[GoUnavailableError] = []
    with make_host(go.base_url, token=TOKEN, verify=verify, timeout=2.0) as host:
        for name, args in CALLS:
            with pytest.raises(FallbackFailedError) as caught:
                host.exec_tool(name, args)
            errors += [caught.value.read_error, caught.value.exec_error]  # type: ignore[list-item]
        with pytest.raises(GoUnavailableError) as other:
            host.exec_tool("web_fetch", "{}")
        errors.append(other.value)
    assert go.requests()[since:] == []
    for error in errors:
        assert isinstance(error.__cause__, httpx.TransportError)  # httpx's, translated
    return errors


@pytest.mark.go
@pytest.mark.parametrize(
    ("verify", "alert"),
    [
        (lambda certs: ca_only(certs, tls12=True), "SSLV3_ALERT_HANDSHAKE_FAILURE"),
        (lambda certs: stranger(certs, tls12=True), "TLSV1_ALERT_UNKNOWN_CA"),
        (lambda certs: True, "CERTIFICATE_VERIFY_FAILED"),
    ],
    ids=["no-client-certificate", "client-certificate-of-a-stranger", "verify-true"],
)
def test_a_refused_handshake_fails_every_read_and_the_fallback(
    make_host: MakeHost,
    go: RunningReference,
    go_certs: TLSFiles,
    verify: Callable[[TLSFiles], ssl.SSLContext | bool],
    alert: str,
) -> None:
    """Refused in the handshake (TLS 1.2 checks the client's certificate there)."""
    for error in refused(make_host, go, verify(go_certs)):
        assert error.why.startswith(f"ConnectError: [SSL: {alert}]"), error.why


@pytest.mark.go
@pytest.mark.parametrize(
    ("verify", "alert"),
    [(ca_only, "TLSV13_ALERT_CERTIFICATE_REQUIRED"), (stranger, "TLSV1_ALERT_UNKNOWN_CA")],
    ids=["no-client-certificate", "client-certificate-of-a-stranger"],
)
def test_a_certificate_refused_after_a_tls13_handshake(
    make_host: MakeHost,
    go: RunningReference,
    go_certs: TLSFiles,
    verify: Callable[[TLSFiles], ssl.SSLContext],
    alert: str,
) -> None:
    """TLS 1.3 checks the client's certificate once the client's handshake is over: the
    Go's alert comes with the answer, or the Go has closed the connection before the
    request was written (a race: the client sees a broken pipe or a reset; or, through
    anyio, a stream it marked broken as the request was written, with nothing to say)."""
    for error in refused(make_host, go, verify(go_certs)):
        assert re.match(
            rf"(ReadError|WriteError)(: (\[SSL: {alert}\]|\[Errno (32|104)\] ).*)?$", error.why
        ), error.why


# No TLS context for a plain http:// Go.


@pytest.fixture
def ca_loads(monkeypatch: pytest.MonkeyPatch) -> list[object]:
    """Each call of ssl.create_default_context (which loads a CA store: httpx's verify=True)."""
    calls: list[object] = []
    original = ssl.create_default_context

    def counting(*args: object, **kwargs: object) -> ssl.SSLContext:
        calls.append((args, kwargs))
        return original(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(ssl, "create_default_context", counting)
    return calls


def test_no_tls_context_for_plain_http(make_host: MakeHost, ca_loads: list[object]) -> None:
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    for verify in (True, False, context):
        make_host("http://127.0.0.1:9", verify=verify).close()
    assert ca_loads == []
    make_host("https://127.0.0.1:9").close()  # verify=True: httpx loads its CA store
    assert len(ca_loads) == 1
    make_host("https://127.0.0.1:9", verify=context).close()
    make_host("https://127.0.0.1:9", verify=False).close()
    assert len(ca_loads) == 1
