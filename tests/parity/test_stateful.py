"""parity.stateful: the stateful machine catches what a host keeps between searches.

A planted bug (a kept /blocks set that ignores locks, put between the host and the
network through the hosts' ``transport`` option, so that it does not depend on the
port's internals) must be caught by the ``ci`` profile, shrunk to a short sequence
and printed as a ready test.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import replace
from typing import Any, cast

import httpx
import pytest

from parity import fuzz, rig
from parity.goclient import log_request
from parity.reference import GoReference
from parity.rig import DivergenceFound, GoMode, Host, HostSpec, Played, Run
from parity.stateful import (
    ArchiveBlock,
    Lock,
    NewHost,
    RecallMachine,
    Restart,
    Start,
    StatefulDivergence,
    Step,
    ToolCall,
    _play_steps,
    _with_static,
    fuzz_stateful,
    replay,
)
from recall import GoTurnHost

BLOCKS = "/internal/v1/recall/blocks"


class _Kept:
    """The last /blocks body, served again whenever a newer one has lost a block."""

    def __init__(self) -> None:
        self.body: bytes | None = None
        self.seqs: set[int] = set()

    def serve(self, body: bytes) -> bytes:
        doc = json.loads(body)
        if "since" in doc:  # a delta: passed on (the bug is in whole sets only)
            return body
        seqs = {b["seq"] for b in doc["blocks"]}
        if self.body is not None and seqs < self.seqs:
            return self.body  # the planted bug: a lock is ignored
        self.body, self.seqs = body, seqs
        return body


def _answer(response: httpx.Response, body: bytes) -> httpx.Response:
    kept = ("content-length", "content-encoding", "transfer-encoding")
    headers = {k: v for k, v in response.headers.items() if k.lower() not in kept}
    return httpx.Response(200, headers=headers, content=body)


class _StaleSync(httpx.BaseTransport):
    def __init__(self, inner: httpx.BaseTransport) -> None:
        self._inner = inner
        self._kept = _Kept()

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        response = self._inner.handle_request(request)
        if request.url.path != BLOCKS or response.status_code != 200:
            return response
        body = response.read()
        response.close()
        return _answer(response, self._kept.serve(body))

    def close(self) -> None:
        self._inner.close()


class _StaleAsync(httpx.AsyncBaseTransport):
    def __init__(self, inner: httpx.AsyncBaseTransport) -> None:
        self._inner = inner
        self._kept = _Kept()

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        response = await self._inner.handle_async_request(request)
        if request.url.path != BLOCKS or response.status_code != 200:
            return response
        body = await response.aread()
        await response.aclose()
        return _answer(response, self._kept.serve(body))

    async def aclose(self) -> None:
        await self._inner.aclose()


class StaleSet:
    """Each host keeps the set it read and serves it after a lock: the set from before."""

    def sync(self, inner: httpx.BaseTransport) -> httpx.BaseTransport:
        return _StaleSync(inner)

    def asynchronous(self, inner: httpx.AsyncBaseTransport) -> httpx.AsyncBaseTransport:
        return _StaleAsync(inner)


@pytest.mark.once
@pytest.mark.go
def test_a_planted_stale_set_is_caught_shrunk_and_printed_as_a_ready_test(
    go_build: GoReference,
) -> None:
    run = Run(
        base=fuzz.profile("ci"),
        examples=100,
        reference=go_build,
        shrink_seconds=5,  # the steps Hypothesis leaves, ddmin removes
        wrap=StaleSet(),
    )
    stats = fuzz_stateful(run, steps=20)
    (divergence,) = stats.divergences
    assert isinstance(divergence, StatefulDivergence)
    assert divergence.reasons == ("the outputs differ",)
    steps = divergence.steps
    # Shrunk: a Go, a block, a search (which reads the set), the block's lock, a search
    # that the set from before answers wrongly (the same one, or another of the pool).
    assert len(steps) <= 6, divergence.report()
    assert isinstance(steps[0], Start)
    last = steps[-1]
    assert isinstance(last, ToolCall)
    assert last.tool == "recall_search"
    at_lock = next(i for i, s in enumerate(steps) if isinstance(s, Lock) and s.locked)
    assert any(isinstance(s, ArchiveBlock) for s in steps[1:at_lock]), divergence.report()
    before = [s for s in steps[1:at_lock] if isinstance(s, ToolCall)]
    assert any(s.tool == "recall_search" for s in before), divergence.report()
    assert at_lock < len(steps) - 1
    # Printed as a ready test, which replays the steps against a fresh reference:
    # with the bug it fails, on the honest port it passes.
    report = divergence.report()
    assert divergence.ready_test() in report
    with pytest.raises(DivergenceFound, match="the outputs differ"):
        replay(go_build, steps, wrap=StaleSet())
    namespace: dict[str, Any] = {}
    exec(compile(divergence.ready_test(), "<ready test>", "exec"), namespace)
    (test,) = [v for k, v in namespace.items() if k.startswith("test_stateful_")]
    test(go_build)


@pytest.mark.go
def test_replay_of_steps_on_the_honest_port(go_build: GoReference) -> None:
    query = '{"query": "café"}'
    steps = [
        Start(first_seq=2**53 - 3, go="delta", host=HostSpec("async", cache_bytes=4096)),
        ArchiveBlock("Café", "crème brûlée\nline"),
        ArchiveBlock("locked café", "never", locked=True),
        ToolCall("recall_search", query),
        Lock(2**53 - 3),
        ToolCall("recall_search", query),
        Lock(2**53 - 2, locked=False),
        NewHost(HostSpec("sync", cache_bytes=0)),
        ToolCall("recall_search", query),
        ToolCall("recall", f'{{"id": "r{2**53 - 2}"}}'),
    ]
    replay(go_build, steps)  # raises at the first divergence
    # The steps print as source that gives them back.
    names = {"Start": Start, "ArchiveBlock": ArchiveBlock, "Lock": Lock, "ToolCall": ToolCall}
    names |= {"NewHost": NewHost, "HostSpec": HostSpec}
    assert [eval(repr(step), names) for step in steps] == steps
    with pytest.raises(ValueError, match="begin with a Start"):
        replay(go_build, steps[1:])


def _steps_through_changes(mode: GoMode) -> list[Step]:
    query = '{"query": "café"}'
    return [
        Start(first_seq=40, go=mode, host=HostSpec("sync")),
        ArchiveBlock("café", "one"),
        ToolCall("recall_search", query),
        ArchiveBlock("café", "two"),
        ToolCall("recall_search", query),
        Lock(40),
        ToolCall("recall_search", query),
        Restart(),
        ToolCall("recall_search", query),
        Lock(40, locked=False),
        ArchiveBlock("other café", "three", locked=True),
        ToolCall("recall_search", query),
    ]


@pytest.mark.go
@pytest.mark.parametrize("mode", rig.GO_MODES)
def test_each_go_mode_through_changes_and_a_restart(go_build: GoReference, mode: GoMode) -> None:
    """Every output Go's, in each mode; the Go's answers of /blocks show the mode: deltas
    after each change with a history, full bodies without, one full read after the restart
    (the kept tag is another instance's)."""
    steps = _steps_through_changes(mode)
    restart = steps.index(Restart())
    run = Run(reference=go_build)
    answers = []
    try:
        for played in (steps[:restart], steps):  # raises at the first divergence
            _play_steps(run, played)
            answers.append(run.session(mode=mode).client.run(log_request("answers")))
    finally:
        run.close()
    delta = "delta" if mode == "delta" else "full"
    assert answers == [["full", delta, delta], ["full", delta]]


class _Lying(GoTurnHost):
    """A host that says ``[R`` for ``[r`` in a block's header."""

    def exec_tool(self, name: str, args: str) -> str:
        output = super().exec_tool(name, args)
        return "[R" + output[2:] if output.startswith("[r") else output


@pytest.mark.once
@pytest.mark.go
def test_a_divergence_over_a_static_archive_is_a_corpus_case_too(
    go_build: GoReference, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(rig, "GoTurnHost", _Lying)
    run = Run(base=fuzz.profile("ci"), examples=60, reference=go_build, shrink_seconds=5)
    stats = fuzz_stateful(run, steps=10)
    (divergence,) = stats.divergences
    assert divergence.static is not None, divergence.report()
    assert "CorpusBlock(" in divergence.static
    assert "CorpusCall(" in divergence.static
    assert divergence.static in divergence.report()


class _CountingHost:
    """Plays nothing: notes which calls each play of the pool sends."""

    def __init__(self) -> None:
        self.batches: list[list[tuple[str, str]]] = []

    def play_many(self, calls: Sequence[tuple[str, str]]) -> list[Played]:
        self.batches.append(list(calls))
        return [Played(tool, args, "", ()) for tool, args in calls]


def test_a_pool_skips_only_what_the_same_host_context_already_played() -> None:
    RecallMachine.run = Run()  # no Go: the host below plays nothing
    try:
        machine = RecallMachine()
    finally:
        RecallMachine.run = None
    host = _CountingHost()
    machine._host = cast(Host, host)
    pool = [("recall", "a"), ("recall", "b"), ("recall_search", "c"), ("recall_search", "d")]
    machine._pool = dict.fromkeys(pool)
    before, after = 1, 2  # two readable sets: an archive before a lock, and after it
    for state in (before, after, before, after):
        machine._state = state
        machine._play_pool()
    # The whole pool over each set, and again over the first set once the host has kept
    # the second (a stale set would show there); the second set again after the first,
    # as already played: only each tool's first call, so the host still reads it.
    assert [len(batch) for batch in host.batches] == [4, 4, 4, 2]
    assert host.batches[3] == [("recall", "a"), ("recall_search", "c")]
    # Another kind of host plays everything again; after a divergence, everything plays.
    machine._spec = HostSpec("async", cache_bytes=0)
    machine._play_pool()
    machine._run.stats.divergences.append(object())
    machine._play_pool()
    assert [len(batch) for batch in host.batches[4:]] == [4, 4]


@pytest.mark.go
def test_the_corpus_case_is_checked_with_the_kind_of_host_that_diverged(
    go_build: GoReference, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(rig, "GoTurnHost", _Lying)  # the sync host lies, the async does not
    steps = (
        Start(first_seq=7, go="delta", host=HostSpec("async")),
        NewHost(HostSpec("sync")),
        ArchiveBlock("label", "content"),
        ToolCall("recall", '{"id": "r7"}'),
    )
    divergence = StatefulDivergence(steps, "", "", ("the outputs differ",))
    run = Run(reference=go_build)
    try:
        found = _with_static(divergence, run)
        # Not the async host the example started with: the sync one that took its place.
        assert found.static is not None, found.report()
        assert "CorpusCall(" in found.static
        honest = replace(divergence, steps=(steps[0], *steps[2:]))
        assert _with_static(honest, run).static is None
    finally:
        run.close()


@pytest.mark.go
def test_a_seed_replays_the_same_run(go_build: GoReference) -> None:
    def run() -> tuple[int, int, int]:
        base = fuzz.profile("ci")  # no example database: only the seed decides
        stats = fuzz_stateful(Run(base=base, examples=3, seed=5, reference=go_build), steps=10)
        return stats.examples, stats.calls, stats.played

    assert run() == run()
