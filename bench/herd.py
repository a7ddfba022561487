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

from bench.memory import DEFAULT_CACHE_BYTES, reset_hwm, rss_kib

__all__ = ["main"]

Figures = Callable[[], dict[str, Any]]


def _changed(change: Callable[[], None]) -> Figures:
    """Make the change, reset the RSS high-water mark: what reads the herd's figures."""
    change()
    reset, before, start = reset_hwm(), rss_kib(), time.perf_counter()

    def figures() -> dict[str, Any]:
        peak = rss_kib("VmHWM") if reset else None
        peak_bytes = None if peak is None or before is None else (peak - before) * 1024
        return {"seconds": time.perf_counter() - start, "peak_bytes": peak_bytes}

    return figures


def _herd(opts: argparse.Namespace, change: Callable[[], None]) -> tuple[list[str], dict[str, Any]]:
    from recall import AsyncGoTurnHost, GoTurnHost

    if opts.kind == "sync":
        with GoTurnHost(opts.url, timeout=600.0, cache_bytes=opts.cache_bytes) as host:
            host.exec_tool("recall_search", opts.args)
            figures = _changed(change)
            barrier = threading.Barrier(opts.callers)

            def search(_: int) -> str:
                barrier.wait()
                return host.exec_tool("recall_search", opts.args)

            with ThreadPoolExecutor(opts.callers) as pool:
                outputs = list(pool.map(search, range(opts.callers)))
            return outputs, figures()

    async def herd() -> tuple[list[str], dict[str, Any]]:
        async with AsyncGoTurnHost(opts.url, timeout=600.0, cache_bytes=opts.cache_bytes) as host:
            await host.exec_tool("recall_search", opts.args)
            figures = _changed(change)
            calls = (host.exec_tool("recall_search", opts.args) for _ in range(opts.callers))
            outputs = await asyncio.gather(*calls)
            return list(outputs), figures()

    return asyncio.run(herd())


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
    marks: list[int] = []

    def change() -> None:
        marks.append(go.get("/debug/answers").json()["next"])
        block = {"label": "bench: one new block", "content": "Échec du déploiement, encore."}
        marks.append(
            go.post("/internal/v1/recall/archive", json=block).raise_for_status().json()["seq"]
        )

    outputs, figures = _herd(opts, change)
    since, seq = marks
    answers = go.get("/debug/answers", params={"since": since}).json()["answers"]
    call = {"name": "recall_search", "args": opts.args}
    expected = go.post("/internal/v1/tool/exec", json=call).json()["output"]
    go.post("/debug/lock", json={"seq": seq, "locked": True}).raise_for_status()
    go.close()
    differ = sum(output != expected for output in outputs)
    counts = {kind: answers.count(kind) for kind in ("full", "delta", "not modified")}
    print(json.dumps({**figures, "callers": opts.callers, "answers": counts, "differ": differ}))
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
