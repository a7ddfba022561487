# ruff: noqa: RUF001  (Greek and Cyrillic capitals in the query are the point)
"""Cold start of the port: ``import recall`` and the first call of each Go piece.

Each figure is the median of ``runs`` fresh interpreters, one per probe: wall time and
``<probe> (cpu)`` (thread time, less inflated by load); ``import`` also under ``-X
importtime``. Probes: ``import recall``; the first ``to_lower`` and ``recall_tokens``
of a non-ASCII query; the first ``run_tool`` over 100 blocks of ``bench.data``. Modes:
``pyc`` (all byte code cached: a wheel) and ``source`` (the tree's own modules compiled
at each import: a checkout under ``PYTHONDONTWRITEBYTECODE=1``).

``python -m bench.coldstart [--runs N] [ROOT ...]`` prints the figures of each ROOT (a
tree holding ``recall/`` and ``bench/``; default: this one) as JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Iterable, Sequence
from itertools import product
from pathlib import Path

from bench import BenchError

ROOT = Path(__file__).resolve().parent.parent
PROBES = ("import", "to_lower", "recall_tokens", "recall_search")
MODES = ("source", "pyc")
QUERY = "Éloïse « ΟΔΥΣΣΕΥΣ » МОСКВА déjà-vu İstanbul"
"""The non-ASCII query of the to_lower and recall_tokens probes."""

_CHILD = r"""
import sys, time  # json only at the end: it imports re, which recall imports too
probe, query = sys.argv[1], sys.argv[2]
if probe != "import":
    from recall._go import to_lower
    from recall._tools import Block, MemoryArchive, recall_tokens, run_tool
    if probe == "recall_search":
        from bench.data import QUERIES, generate_blocks
        specs = generate_blocks(100)
        archive = MemoryArchive(Block(i, b.label, b.content) for i, b in enumerate(specs, 1))
        args = QUERIES[0].args()
wall, cpu = time.perf_counter(), time.thread_time()
if probe == "import":
    import recall
elif probe == "to_lower":
    to_lower(query)
elif probe == "recall_tokens":
    recall_tokens(query)
else:
    out = run_tool("recall_search", args, archive)
wall, cpu = time.perf_counter() - wall, time.thread_time() - cpu
if probe == "recall_search":
    assert out.split(" ", 1)[0].isdigit(), out[:200]
import json
print(json.dumps({"wall": wall, "cpu": cpu}))
"""

# "import time: <self us> | <cumulative us> | <indent><module>"
_IMPORTTIME = re.compile(r"^import time:\s*(\d+) \|\s*(\d+) \| \s*(\S+)$", re.MULTILINE)


def _importtime(stderr: str) -> tuple[float, float]:
    """``recall``'s cumulative import and ``recall._go``'s own modules (self, summed), in ms."""
    cumulative = go_self = 0.0
    for self_us, cumulative_us, name in _IMPORTTIME.findall(stderr):
        if name == "recall":
            cumulative = int(cumulative_us) / 1000
        if name == "recall._go" or name.startswith("recall._go."):
            go_self += int(self_us) / 1000
    if not cumulative:
        raise BenchError("python -X importtime did not report `recall`")
    return cumulative, go_self


def _run(root: Path, probe: str, env: dict[str, str]) -> dict[str, float]:
    """One fresh interpreter running one probe in root; its figures in ms."""
    argv = [sys.executable, *["-X", "importtime"] * (probe == "import"), "-c", _CHILD, probe, QUERY]
    env = {**env, "PYTHONPATH": str(root)}  # root's recall/ before any installed one
    done = subprocess.run(argv, cwd=root, env=env, capture_output=True, text=True, timeout=120)
    if done.returncode != 0:
        raise BenchError(f"{probe} in {root} failed:\n{done.stderr[-2000:]}")
    seconds = json.loads(done.stdout)
    figures = {probe: seconds["wall"] * 1000, f"{probe} (cpu)": seconds["cpu"] * 1000}
    if probe == "import":
        names = ("import (importtime, cumulative)", "recall._go (importtime, self)")
        figures.update(zip(names, _importtime(done.stderr), strict=True))
    return figures


def measure(
    roots: Iterable[Path] = (ROOT,), *, runs: int = 10, modes: Sequence[str] = MODES
) -> dict[str, dict[str, dict[str, float]]]:
    """Median milliseconds of each figure, ``{root: {mode: {figure: ms}}}``, the runs
    interleaved so that a shared machine's load falls on all alike."""
    roots = [Path(r).resolve() for r in roots]
    unknown = set(modes) - set(MODES)
    if unknown or runs < 1:
        raise ValueError(f"unknown mode {sorted(unknown)}, or runs < 1")
    samples: dict[tuple[str, str], dict[str, list[float]]] = {}  # by (root, mode), by name
    with tempfile.TemporaryDirectory(prefix="coldstart-") as tmp:
        warm, cold = Path(tmp, "pyc"), Path(tmp, "source")
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        envs = {"pyc": env | {"PYTHONPYCACHEPREFIX": str(warm)}}
        envs["source"] = env | {"PYTHONPYCACHEPREFIX": str(cold), "PYTHONDONTWRITEBYTECODE": "1"}
        for root, probe in product(roots, PROBES):
            _run(root, probe, envs["pyc"])
        shutil.copytree(warm, cold)
        for root in roots:  # the measured trees' own byte code, gone from "source"
            shutil.rmtree(cold / root.relative_to(root.anchor), ignore_errors=True)
        for _, root, mode, probe in product(range(runs), roots, modes, PROBES):
            for name, ms in _run(root, probe, envs[mode]).items():
                samples.setdefault((str(root), mode), {}).setdefault(name, []).append(ms)
    found: dict[str, dict[str, dict[str, float]]] = {str(r): {} for r in roots}
    for (tree, mode), figures in samples.items():
        found[tree][mode] = {name: round(statistics.median(v), 3) for name, v in figures.items()}
    return found


def main(argv: Sequence[str] | None = None) -> int:
    """Print measure()'s figures as JSON."""
    parser = argparse.ArgumentParser(prog="python -m bench.coldstart", description=__doc__)
    parser.add_argument("--runs", type=int, default=10, help="fresh processes per figure")
    parser.add_argument("roots", nargs="*", type=Path, default=[ROOT], help="trees to measure")
    args = parser.parse_args(argv)
    print(json.dumps(measure(args.roots, runs=args.runs), indent=2, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
