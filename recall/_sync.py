"""GoTurnHost: the recall tools run here over the Go's archive, with httpx.Client."""

from __future__ import annotations

import ssl

import httpx

from recall._errors import GoUnavailableError
from recall._http import HTTP_ERRORS, ClientOptions, HostBase
from recall._protocol import Answer, Request

__all__ = ["GoTurnHost"]


class GoTurnHost(HostBase[httpx.BaseTransport]):
    """Runs a turn's tool calls: ``recall`` and ``recall_search`` here, the rest on the Go.

    Safe to share between threads. The options are ``__init__``'s; ``transport`` is
    an ``httpx.BaseTransport``.
    """

    _transport_kind = httpx.BaseTransport

    def _transport(self, verify: bool | ssl.SSLContext) -> httpx.BaseTransport:
        return httpx.HTTPTransport(verify=verify, trust_env=False)

    def _open(self, transport: httpx.BaseTransport, options: ClientOptions) -> None:
        self._http = httpx.Client(transport=transport, **options)

    def __enter__(self) -> GoTurnHost:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the connections to the Go."""
        self._http.close()

    def exec_tool(self, name: str, args: str) -> str:
        """The output of the tool call ``name`` with the JSON arguments text ``args``.

        Surrogates in ``args`` (and ``name``) become U+FFFD first. When an archive
        read fails, the call goes to the Go's /tool/exec; FallbackFailedError when
        that fails too. UnknownToolError when the Go does not know ``name``;
        GoUnavailableError when the Go does not answer a call it runs itself.
        TypeError when ``name`` or ``args`` is not a str.
        """
        call = self._core.call(name, args)
        while call.request is not None:
            try:
                answer = self._send(call.request)
            except GoUnavailableError as error:
                call.fail(error)
            else:
                call.answer(answer)
        return call.output

    def _send(self, request: Request) -> Answer:
        """Go's answer to the request; GoUnavailableError when there is none."""
        try:
            with self._http.stream(request.method, request.path, **request.parts) as response:
                body = self._core.receive(request, response.status_code, response.headers)
                for chunk in response.iter_bytes():
                    body.feed(chunk)
        except HTTP_ERRORS as exc:
            raise self._core.unavailable(request, exc) from exc
        return body.answer()
