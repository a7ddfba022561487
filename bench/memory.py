"""The Python path's peak memory during a search, measured in a fresh process.

``python -m bench.memory --base-url URL --args JSON --mode rss|tracemalloc``
imports ``recall``, makes a ``GoTurnHost``, then runs the search ``--searches``
times on the same host (a first search, then repeated ones) and prints one JSON
line:

- ``rss``: the peak resident set size (``VmHWM``, reset between searches through
  ``/proc/self/clear_refs``) minus the resident size just before the search: what
  the operating system saw, allocator slack included;
- ``tracemalloc``: the peak of the memory Python allocated (``tracemalloc``,
  reset between searches) minus what was allocated before: Python's own figure,
  slower to run.

and ``kept``: what the host holds between searches, as it counts it (the kept set
and its index, ``cache_bytes`` bounds both) and as the operating system (``rss``)
or tracemalloc sees it (after the searches, minus before the host was made).
The runner compares them with the size of the blocks' JSON.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import resource
import sys
import time
import tracemalloc
from pathlib import Path
from typing import Final

from recall._core import DEFAULT_CACHE_BYTES

__all__ = ["CACHE_PER_JSON_BYTE", "DEFAULT_CACHE_BYTES", "cache_bytes_for", "reset_hwm", "rss_kib"]

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
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    return None


def reset_hwm() -> bool:
    """Reset the RSS high-water mark ``VmHWM`` to the RSS; False where it cannot be."""
    try:
        Path("/proc/self/clear_refs").write_text("5")
    except OSError:
        return False
    return True


def _maxrss_kib() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def _main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.memory")
    parser.add_argument("--base-url", required=True)
    parser.add_argument("--args", required=True)
    parser.add_argument("--mode", choices=("rss", "tracemalloc"), required=True)
    parser.add_argument("--searches", type=int, default=2)
    parser.add_argument("--cache-bytes", type=int, default=DEFAULT_CACHE_BYTES)
    opts = parser.parse_args(argv)
    rss = opts.mode == "rss"

    from recall import GoTurnHost

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
    kept = {
        "set_bytes": 0 if core._kept is None else core._kept.size,
        "index_bytes": core._searcher.held,
        "held_bytes": held,
    }
    host.close()
    print(json.dumps({"mode": opts.mode, "searches": searches, "kept": kept}))
    return 0


if __name__ == "__main__":
    raise SystemExit(_main(sys.argv[1:]))
