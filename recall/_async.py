"""AsyncGoTurnHost: GoTurnHost for asyncio, with httpx.AsyncClient."""

from __future__ import annotations

import ssl

import httpx

from recall._errors import GoUnavailableError
from recall._http import HTTP_ERRORS, ClientOptions, HostBase
from recall._protocol import Answer, Request

__all__ = ["AsyncGoTurnHost"]


class AsyncGoTurnHost(HostBase[httpx.AsyncBaseTransport]):
    """GoTurnHost for asyncio: ``await host.exec_tool(name, args)``, the same outputs,
    reads, fallbacks and errors.

    Safe for many tasks on one event loop. The options are ``__init__``'s (those of
    GoTurnHost); ``transport`` is an ``httpx.AsyncBaseTransport``.
    """

    _transport_kind = httpx.AsyncBaseTransport

    def _transport(self, verify: bool | ssl.SSLContext) -> httpx.AsyncBaseTransport:
        return httpx.AsyncHTTPTransport(verify=verify, trust_env=False)

    def _open(self, transport: httpx.AsyncBaseTransport, options: ClientOptions) -> None:
        self._http = httpx.AsyncClient(transport=transport, **options)

    async def __aenter__(self) -> AsyncGoTurnHost:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Close the connections to the Go."""
        await self._http.aclose()

    async def exec_tool(self, name: str, args: str) -> str:
        """``GoTurnHost.exec_tool``, awaited."""
        call = self._core.call(name, args)
        while call.request is not None:
            try:
                answer = await self._send(call.request)
            except GoUnavailableError as error:
                call.fail(error)
            else:
                call.answer(answer)
        return call.output

    async def _send(self, request: Request) -> Answer:
        """Go's answer to the request; GoUnavailableError when there is none."""
        try:
            async with self._http.stream(request.method, request.path, **request.parts) as response:
                body = self._core.receive(request, response.status_code, response.headers)
                async for chunk in response.aiter_bytes():
                    body.feed(chunk)
        except HTTP_ERRORS as exc:
            raise self._core.unavailable(request, exc) from exc
        except ssl.SSLError as exc:
            # An alert on an established TLS connection (a client certificate refused)
            # passes anyio and httpcore untranslated (httpx issue 3350); httpx's sync
            # transport reads it as a ReadError: so does this host.
            read_error = httpx.ReadError(str(exc))
            read_error.__cause__ = exc
            raise self._core.unavailable(request, read_error) from read_error
        return body.answer()
