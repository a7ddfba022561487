"""A herd after a change, in a fresh process: many callers of one host search at once.

``python -m bench.herd URL --kind sync|async --callers N --args JSON`` makes a host
(``GoTurnHost`` for ``sync``, its callers threads; ``AsyncGoTurnHost`` for ``async``,
its callers tasks on one loop), searches once (the set kept), archives one block,
then has the N callers search at once, and prints one JSON line: the peak RSS of
the herd (``VmHWM``, reset just before, minus the RSS before), its wall time, how
the Go answered the reads of ``/blocks`` meanwhile (``GET /debug/answers``: one full
read or delta per change is the target), and the outputs that differ from Go's own
(``/tool/exec`` after the herd). The block is locked again at the end.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx

from bench.memory import DEFAULT_CACHE_BYTES, _reset_hwm, _status_kib

__all__ = ["main"]


def _herd_sync(
    url: str, args: str, callers: int, change: Callable[[], None], cache_bytes: int
) -> tuple[list[str], dict[str, Any]]:
    from recall import GoTurnHost

    with GoTurnHost(url, timeout=600.0, cache_bytes=cache_bytes) as host:
        host.exec_tool("recall_search", args)
        found = _changed(change)
        barrier = threading.Barrier(callers)

        def search() -> str:
            barrier.wait()
            return host.exec_tool("recall_search", args)

        with ThreadPoolExecutor(callers) as pool:
            outputs = list(pool.map(lambda _: search(), range(callers)))
        return outputs, _peak(found)


def _herd_async(
    url: str, args: str, callers: int, change: Callable[[], None], cache_bytes: int
) -> tuple[list[str], dict[str, Any]]:
    from recall import AsyncGoTurnHost

    async def run() -> tuple[list[str], dict[str, Any]]:
        async with AsyncGoTurnHost(url, timeout=600.0, cache_bytes=cache_bytes) as host:
            await host.exec_tool("recall_search", args)
            found = _changed(change)
            outputs = await asyncio.gather(
                *(host.exec_tool("recall_search", args) for _ in range(callers))
            )
            return list(outputs), _peak(found)

    return asyncio.run(run())


def _changed(change: Callable[[], None]) -> dict[str, Any]:
    """Make the change, then reset the RSS high-water mark."""
    change()
    reset = _reset_hwm()
    return {"before": _status_kib("VmRSS"), "reset": reset, "start": time.perf_counter()}


def _peak(found: dict[str, Any]) -> dict[str, Any]:
    peak = _status_kib("VmHWM")
    ok = found["reset"] and peak is not None and found["before"] is not None
    return {
        "seconds": time.perf_counter() - found["start"],
        "peak_bytes": (peak - found["before"]) * 1024 if ok else None,
    }


def main(argv: list[str] | None = None) -> int:
    """Run one herd and print its figures as JSON; 1 when an output differs from Go's."""
    parser = argparse.ArgumentParser(prog="python -m bench.herd")
    parser.add_argument("url")
    parser.add_argument("--kind", choices=("sync", "async"), required=True)
    parser.add_argument("--callers", type=int, required=True)
    parser.add_argument("--args", required=True)
    parser.add_argument("--cache-bytes", type=int, default=DEFAULT_CACHE_BYTES)
    opts = parser.parse_args(argv)
    go = httpx.Client(base_url=opts.url, timeout=600.0, trust_env=False)
    seqs: list[int] = []
    marks: list[int] = []

    def change() -> None:
        marks.append(go.get("/debug/answers").json()["next"])
        answer = go.post(
            "/internal/v1/recall/archive",
            json={"label": "bench: one new block", "content": "Échec du déploiement, encore."},
        )
        seqs.append(answer.raise_for_status().json()["seq"])

    herd = _herd_sync if opts.kind == "sync" else _herd_async
    outputs, figures = herd(opts.url, opts.args, opts.callers, change, opts.cache_bytes)
    answers = go.get("/debug/answers", params={"since": marks[0]}).json()["answers"]
    expected = go.post(
        "/internal/v1/tool/exec", json={"name": "recall_search", "args": opts.args}
    ).json()["output"]
    go.post("/debug/lock", json={"seq": seqs[0], "locked": True}).raise_for_status()
    go.close()
    differ = sum(output != expected for output in outputs)
    counts = {kind: answers.count(kind) for kind in ("full", "delta", "not modified")}
    print(json.dumps({**figures, "callers": opts.callers, "answers": counts, "differ": differ}))
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
