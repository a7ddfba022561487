"""The Python path's memory, measured in a fresh process; the hosts' ``cache_bytes``.

``python -m bench.memory --base-url URL --args JSON --mode rss|tracemalloc`` prints one
JSON line: the peak of each of ``--searches`` searches of one ``GoTurnHost`` (``rss``:
``VmHWM``, reset through ``/proc/self/clear_refs``, minus the RSS before; or
tracemalloc's), and ``kept``, what the host holds between searches (its own count and
as measured). ``--herd sync|async --callers N``: after one search, a block archived
(locked again at the end), N threads or tasks search at once; the line holds the
herd's peak RSS, wall time, the Go's answers to /blocks meanwhile and how many outputs
differ from Go's (exit 1 if any).
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import math
import re
import resource
import sys
import threading
import time
import tracemalloc
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Final

from recall._core import DEFAULT_CACHE_BYTES

CACHE_PER_JSON_BYTE: Final = {"delta": 1.75, "plain": 2.75}
"""``cache_bytes`` per byte of the /blocks JSON, as the README sizes it: the kept set
(compacted against a Go with ETag and deltas, whole otherwise) and its word index."""


def cache_bytes_for(json_bytes: int, go: str) -> int:
    """The ``cache_bytes`` of a host for an archive of ``json_bytes`` served by ``go``
    (``delta`` or ``plain``): the README's sizing, never below the default."""
    return max(DEFAULT_CACHE_BYTES, math.ceil(CACHE_PER_JSON_BYTE[go] * json_bytes))


def rss_kib(field: str = "VmRSS") -> int | None:
    """A field of ``/proc/self/status`` in KiB (``VmRSS``, ``VmHWM``), None where unknown."""
    try:
        found = re.search(rf"^{field}:\s*(\d+)", Path("/proc/self/status").read_text(), re.M)
    except OSError:
        return None
    return int(found[1]) if found else None


def reset_hwm() -> bool:
    """Reset the RSS high-water mark ``VmHWM`` to the RSS; False where it cannot be."""
    try:
        Path("/proc/self/clear_refs").write_text("5")
    except OSError:
        return False
    return True


def _maxrss_kib() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def _searches(opts: argparse.Namespace) -> dict[str, object]:
    from recall import GoTurnHost

    rss = opts.mode == "rss"
    if not rss:
        tracemalloc.start()
    rss_before = rss_kib()
    traced_before = tracemalloc.get_traced_memory()[0]
    host = GoTurnHost(opts.base_url, timeout=120.0, cache_bytes=opts.cache_bytes)
    searches: list[dict[str, object]] = []
    for _ in range(opts.searches):
        if rss:
            reset = reset_hwm()
            before = rss_kib() or _maxrss_kib()
        else:
            tracemalloc.reset_peak()
            before = tracemalloc.get_traced_memory()[0]
        start = time.perf_counter()
        output = host.exec_tool("recall_search", opts.args)
        seconds = time.perf_counter() - start
        if rss:
            peak = (rss_kib("VmHWM") if reset else None) or _maxrss_kib()
            figures: dict[str, object] = {"peak_bytes": (peak - before) * 1024, "hwm_reset": reset}
        else:
            figures = {"peak_bytes": tracemalloc.get_traced_memory()[1] - before}
        digest = hashlib.sha256(output.encode()).hexdigest()
        searches.append({**figures, "seconds": seconds, "output_sha256": digest})
    if rss:
        after = rss_kib()
        held = None if rss_before is None or after is None else (after - rss_before) * 1024
    else:
        held = tracemalloc.get_traced_memory()[0] - traced_before
    core = host._core
    kept: dict[str, int | None] = {"set_bytes": 0 if core._kept is None else core._kept.size}
    kept |= {"index_bytes": core._searcher.held, "held_bytes": held}
    host.close()
    return {"mode": opts.mode, "searches": searches, "kept": kept}


def _herd(opts: argparse.Namespace) -> dict[str, object]:
    from parity.goclient import GoClient, GoConnection, log_request
    from recall import AsyncGoTurnHost, GoTurnHost

    url, args, callers, cache = opts.base_url, opts.args, opts.callers, opts.cache_bytes
    go = GoClient(GoConnection(url), timeout=600.0)
    mark: dict[str, Any] = {}  # what the change and the herd leave for the figures

    def change() -> None:
        """A new block, then the RSS high-water mark reset: the herd starts."""
        mark["since"] = len(go.run(log_request("answers")))
        seq = go.archive("bench: one new block", "Échec du déploiement, encore.")
        mark.update(seq=seq, rss=rss_kib() if reset_hwm() else None)
        mark["start"] = time.perf_counter()

    def done(outputs: list[str]) -> None:
        seconds = time.perf_counter() - mark["start"]
        mark.update(outputs=outputs, peak=rss_kib("VmHWM"), seconds=seconds)

    if opts.herd == "sync":
        with GoTurnHost(url, timeout=600.0, cache_bytes=cache) as host:
            host.exec_tool("recall_search", args)
            change()
            barrier = threading.Barrier(callers)

            def call(_: int) -> str:
                barrier.wait()
                return host.exec_tool("recall_search", args)

            with ThreadPoolExecutor(callers) as pool:
                outputs = list(pool.map(call, range(callers)))
            done(outputs)
    else:

        async def herd() -> None:
            async with AsyncGoTurnHost(url, timeout=600.0, cache_bytes=cache) as host:
                await host.exec_tool("recall_search", args)
                change()
                calls = (host.exec_tool("recall_search", args) for _ in range(callers))
                done(await asyncio.gather(*calls))

        asyncio.run(herd())
    answers = go.run(log_request("answers", since=mark["since"]))
    expected = go.exec_tool("recall_search", args)
    go.lock(mark["seq"])
    go.close()
    peak, rss = mark["peak"], mark["rss"]
    return {
        "seconds": mark["seconds"],
        "peak_bytes": None if peak is None or rss is None else (peak - rss) * 1024,
        "callers": callers,
        "answers": {kind: answers.count(kind) for kind in ("full", "delta", "not modified")},
        "differ": sum(output != expected for output in mark["outputs"]),
    }


def main(argv: list[str] | None = None) -> int:
    """Measure and print the figures as JSON; 1 when a herd's output differs from Go's."""
    parser = argparse.ArgumentParser(prog="python -m bench.memory")
    parser.add_argument("--base-url", required=True)
    parser.add_argument("--args", required=True, help="recall_search's arguments (JSON)")
    parser.add_argument("--mode", choices=("rss", "tracemalloc"), default="rss")
    parser.add_argument("--searches", type=int, default=2)
    parser.add_argument("--herd", choices=("sync", "async"), help="a herd after a change")
    parser.add_argument("--callers", type=int, default=16, help="of the herd")
    parser.add_argument("--cache-bytes", type=int, default=DEFAULT_CACHE_BYTES)
    opts = parser.parse_args(argv)
    found = _herd(opts) if opts.herd else _searches(opts)
    print(json.dumps(found))
    return 1 if found.get("differ") else 0


if __name__ == "__main__":
    sys.exit(main())
