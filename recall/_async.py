"""AsyncGoTurnHost: GoTurnHost for asyncio, with httpx.AsyncClient."""

from __future__ import annotations

import asyncio
import contextlib

import httpx

from recall._core import Call, Flight, Job, Steps, T
from recall._errors import EventLoopError, GoUnavailableError
from recall._http import HostBase
from recall._protocol import Answer, Request


class AsyncGoTurnHost(HostBase[httpx.AsyncBaseTransport]):
    """GoTurnHost for asyncio: ``await host.exec_tool(name, args)``, the same outputs,
    reads, fallbacks and errors.

    Safe for many tasks on one event loop: a host belongs to the loop of its first call,
    as httpx's AsyncClient does (on another, EventLoopError: one host per loop). The
    options are GoTurnHost's (``transport``: an ``httpx.AsyncBaseTransport``). The
    shadow's comparisons run in one task on that loop, created by the first.
    """

    _transport_kind = httpx.AsyncBaseTransport
    _transport_class = httpx.AsyncHTTPTransport
    _client_class = httpx.AsyncClient
    _http: httpx.AsyncClient
    _jobs: asyncio.Queue[Job] | None = None
    _worker: asyncio.Task[None] | None = None
    _loop: asyncio.AbstractEventLoop | None = None

    def _open(self) -> None:
        self._flying: dict[Flight, asyncio.Task[None]] = {}  # the shared reads being sent

    async def __aenter__(self) -> AsyncGoTurnHost:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """``GoTurnHost.close``, awaited (EventLoopError on another loop than the host's)."""
        if not self._http.is_closed:
            self._open_on_own_loop()
        shadow = self._core.shadow
        if shadow is None or self._closing:
            await self._http.aclose()
            return
        self._closing = True
        jobs, worker = self._jobs, self._worker
        if jobs is not None and worker is not None:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(jobs.join(), self._core.timeout)
            worker.cancel()  # the comparison running, if any, dropped
            await asyncio.gather(worker, return_exceptions=True)
        shadow.closed()  # the queued ones dropped
        await self._http.aclose()

    async def exec_tool(self, name: str, args: str) -> str:
        """``GoTurnHost.exec_tool``, awaited (EventLoopError on another loop than the host's)."""
        self._open_on_own_loop()
        return await self._drive(self._core.call(name, args))

    async def warm(self) -> None:
        """``GoTurnHost.warm``, awaited (EventLoopError as for ``exec_tool``)."""
        self._open_on_own_loop()
        self._prepared(await self._drive(self._core.warm()))  # the first search's read, built now

    def _open_on_own_loop(self) -> None:
        self._open_or_raise()
        loop = asyncio.get_running_loop()
        if self._loop is None:
            self._loop = loop
        elif loop is not self._loop:
            raise EventLoopError(
                f"{self!r} belongs to the event loop of its first call, and this is another"
                " (a host serves one loop, one asyncio.run: make one host per loop)"
            )

    async def _drive(self, steps: Steps[T]) -> T:
        call = Call(steps, self._core.go)
        while (request := call.request) is not None:
            if isinstance(request, Flight):  # a read shared with the calls needing it now
                await self._wait(request)
                call.resume()
                continue
            try:
                answer = await self._send(request)
            except GoUnavailableError as error:
                call.resume(error=error)
            else:
                call.resume(answer)
        return call.output

    async def _wait(self, flight: Flight) -> None:
        """Wait for a shared read, sent by a task of its own: a caller cancelled does not
        cancel it for the others; the last caller cancelled does."""
        if flight.claim():
            task = asyncio.get_running_loop().create_task(self._fly(flight))
            self._flying[flight] = task
            task.add_done_callback(lambda _: self._flying.pop(flight, None))
        sending = self._flying[flight]  # a flight joined has not landed: its task is here
        flight.waiting += 1
        try:
            await asyncio.wait((sending,))  # a caller cancelled leaves the task be
        finally:
            flight.waiting -= 1
            if not flight.waiting and not flight.landed.is_set():
                sending.cancel()

    async def _fly(self, flight: Flight) -> None:
        """Send a shared read and land its answer or its failure, for every caller."""
        with flight.sending():
            flight.land(await self._send(flight.request))

    async def _send(self, request: Request) -> Answer:
        with self._sending(request):
            response = await self._through.handle_async_request(self._prepared(request))
            try:
                answer = self._core.receive(request, response.status_code, response.headers)
                async for chunk in response.aiter_bytes():
                    answer.feed(chunk)
            finally:
                await response.aclose()
        return answer

    # The shadow, off the caller's path.

    def _submit(self, job: Job) -> bool:
        if self._closing:
            return False
        if self._jobs is None:  # the first: the queue and its worker
            assert self._core.shadow is not None
            self._jobs = asyncio.Queue(self._core.shadow.queue)
            self._worker = asyncio.get_running_loop().create_task(
                self._work(self._jobs), name="recall-shadow"
            )
        try:
            self._jobs.put_nowait(job)
        except asyncio.QueueFull:
            return False
        return True

    async def _work(self, jobs: asyncio.Queue[Job]) -> None:
        shadow = self._core.shadow
        assert shadow is not None
        while True:
            job = await jobs.get()
            try:
                await self._drive(job)
            except asyncio.CancelledError:
                shadow.settle("dropped")  # the host closing, or its loop ending
                raise
            except Exception as exc:  # such as the client closed under it: no verdict
                shadow.settle("errors", error=exc)
            finally:
                jobs.task_done()
