"""GoTurnHost: the recall tools run here over the Go's archive, with httpx.Client."""

from __future__ import annotations

import queue
import threading

import httpx

from recall._core import Call, Flight, Job, Steps, T
from recall._errors import GoUnavailableError
from recall._http import HostBase
from recall._protocol import Answer, Request


class GoTurnHost(HostBase[httpx.BaseTransport]):
    """Runs a turn's tool calls: ``recall`` and ``recall_search`` here, the rest on the Go.

    Safe to share between threads. The options are ``__init__``'s (``transport``: an
    ``httpx.BaseTransport``). The shadow's comparisons run on one thread, started by the
    first.
    """

    _transport_kind = httpx.BaseTransport
    _transport_class = httpx.HTTPTransport
    _client_class = httpx.Client
    _http: httpx.Client
    _jobs: queue.Queue[Job | None] | None = None  # None: the worker ends
    _worker: threading.Thread | None = None

    def _open(self) -> None:
        self._offpath_lock = threading.Lock()  # close() sets _closing under it: no job lost

    def __enter__(self) -> GoTurnHost:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the connections to the Go, once the shadow's queued comparisons are done
        (waiting ``timeout`` seconds at most: what is left is dropped, and counted)."""
        shadow = self._core.shadow
        with self._offpath_lock:
            closing, self._closing = self._closing, True
        if shadow is None or closing:  # no shadow, or closed before
            self._http.close()
            return
        jobs, worker, timeout = self._jobs, self._worker, self._core.timeout
        if jobs is not None:
            with jobs.all_tasks_done:  # the queue's mutex held
                jobs.all_tasks_done.wait_for(lambda: not jobs.unfinished_tasks, timeout)
                jobs.queue.clear()  # the jobs that never ran
            jobs.put(None)
        shadow.closed()  # those and the one running, if any, dropped
        self._http.close()  # a comparison still running fails at its next request
        if worker is not None:
            worker.join(timeout)

    def exec_tool(self, name: str, args: str) -> str:
        """The output of the tool call ``name`` with the JSON arguments text ``args``
        (surrogates become U+FFFD first).

        When an archive read fails, the call goes to the Go's /tool/exec;
        FallbackFailedError when that fails too. UnknownToolError when the Go does not
        know ``name``; GoUnavailableError when it does not answer a call it runs;
        HostClosedError once the host is closed; TypeError unless both are str.
        """
        self._open_or_raise()
        return self._drive(self._core.call(name, args))

    def warm(self) -> None:
        """Read the archive's blocks and keep them ready for the first search (a start-up
        or readiness probe pays that cost, not the first user). GoUnavailableError when
        the read fails (no fallback); HostClosedError once the host is closed."""
        self._open_or_raise()
        self._prepared(self._drive(self._core.warm()))  # the first search's read, built now

    def _drive(self, steps: Steps[T]) -> T:
        call = Call(steps, self._core.go)
        while (request := call.request) is not None:
            if isinstance(request, Flight):  # a read shared with the calls needing it now
                if request.claim():
                    with request.sending():
                        request.land(self._send(request.request))
                request.landed.wait()
                call.resume()
                continue
            try:
                answer = self._send(request)
            except GoUnavailableError as error:
                call.resume(error=error)
            else:
                call.resume(answer)
        return call.output

    def _send(self, request: Request) -> Answer:
        """Go's answer to the request; GoUnavailableError when there is none."""
        with self._sending(request):
            response = self._through.handle_request(self._prepared(request))
            try:
                answer = self._core.receive(request, response.status_code, response.headers)
                for chunk in response.iter_bytes():
                    answer.feed(chunk)
            finally:
                response.close()
        return answer

    # The shadow, off the caller's path.

    def _submit(self, job: Job) -> bool:
        with self._offpath_lock:
            if self._closing:
                return False
            if self._jobs is None:  # the first: the queue and its worker
                assert self._core.shadow is not None
                self._jobs = queue.Queue(self._core.shadow.queue)
                self._worker = threading.Thread(
                    target=self._work, args=(self._jobs,), name="recall-shadow", daemon=True
                )
                self._worker.start()
            try:
                self._jobs.put_nowait(job)
            except queue.Full:
                return False
            return True

    def _work(self, jobs: queue.Queue[Job | None]) -> None:
        shadow = self._core.shadow
        assert shadow is not None
        while (job := jobs.get()) is not None:
            try:
                self._drive(job)
            except Exception as exc:  # such as the client closed under it: no verdict
                shadow.settle("errors", error=exc)
            finally:
                jobs.task_done()
