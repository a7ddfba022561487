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

The parent (``measure``) compares them with the size of the blocks' JSON.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import subprocess
import sys
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Final

from recall._core import DEFAULT_CACHE_BYTES

__all__ = ["CACHE_PER_JSON_BYTE", "DEFAULT_CACHE_BYTES", "cache_bytes_for", "measure"]

_ROOT = Path(__file__).resolve().parent.parent
CACHE_PER_JSON_BYTE: Final = {"delta": 1.75, "plain": 2.75}
"""``cache_bytes`` per byte of the /blocks JSON, as the README sizes it: the kept set
(compacted against a Go with ETag and deltas, whole otherwise) and its word index."""


def cache_bytes_for(json_bytes: int, go: str) -> int:
    """The ``cache_bytes`` of a host for an archive of ``json_bytes`` served by ``go``
    (``delta`` or ``plain``): the README's sizing, never below the default."""
    return max(DEFAULT_CACHE_BYTES, math.ceil(CACHE_PER_JSON_BYTE[go] * json_bytes))


def _status_kib(field: str) -> int | None:
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    return None


def _reset_hwm() -> bool:
    try:
        Path("/proc/self/clear_refs").write_text("5")
    except OSError:
        return False
    return True


def _rss_search(run: Callable[[], str], count: int) -> list[dict[str, object]]:
    import resource

    found: list[dict[str, object]] = []
    for _ in range(count):
        reset = _reset_hwm()
        before = _status_kib("VmRSS")
        if before is None:
            before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        start = time.perf_counter()
        output = run()
        seconds = time.perf_counter() - start
        peak = _status_kib("VmHWM") if reset else None
        if peak is None:
            peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        found.append(
            {
                "peak_bytes": (peak - before) * 1024,
                "hwm_reset": reset,
                "seconds": seconds,
                "output_sha256": hashlib.sha256(output.encode()).hexdigest(),
            }
        )
    return found


def _tracemalloc_search(run: Callable[[], str], count: int) -> list[dict[str, object]]:
    found: list[dict[str, object]] = []
    if not tracemalloc.is_tracing():
        tracemalloc.start()
    for _ in range(count):
        tracemalloc.reset_peak()
        before, _ = tracemalloc.get_traced_memory()
        start = time.perf_counter()
        output = run()
        seconds = time.perf_counter() - start
        _, peak = tracemalloc.get_traced_memory()
        found.append(
            {
                "peak_bytes": peak - before,
                "seconds": seconds,
                "output_sha256": hashlib.sha256(output.encode()).hexdigest(),
            }
        )
    return found


def _child(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.memory")
    parser.add_argument("--base-url", required=True)
    parser.add_argument("--args", required=True)
    parser.add_argument("--mode", choices=("rss", "tracemalloc"), required=True)
    parser.add_argument("--searches", type=int, default=2)
    parser.add_argument("--cache-bytes", type=int, default=DEFAULT_CACHE_BYTES)
    opts = parser.parse_args(argv)

    from recall import GoTurnHost

    if opts.mode == "tracemalloc":
        tracemalloc.start()
    rss_before = _status_kib("VmRSS")
    traced_before = tracemalloc.get_traced_memory()[0]
    host = GoTurnHost(opts.base_url, timeout=120.0, cache_bytes=opts.cache_bytes)

    def run() -> str:
        return host.exec_tool("recall_search", opts.args)

    if opts.mode == "rss":
        searches = _rss_search(run, opts.searches)
        after = _status_kib("VmRSS")
        held = None if rss_before is None or after is None else (after - rss_before) * 1024
    else:
        searches = _tracemalloc_search(run, opts.searches)
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


def measure(
    base_url: str, args: str, mode: str, *, searches: int = 2, cache_bytes: int
) -> dict[str, object]:
    """Run the measuring child for ``mode`` and return what it printed."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(_ROOT), env.get("PYTHONPATH")]))
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "bench.memory",
            "--base-url",
            base_url,
            "--args",
            args,
            "--mode",
            mode,
            "--searches",
            str(searches),
            "--cache-bytes",
            str(cache_bytes),
        ],
        cwd=_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"bench.memory ({mode}) failed:\n{done.stderr.strip()[-2000:]}")
    result: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


if __name__ == "__main__":
    raise SystemExit(_child(sys.argv[1:]))
