"""``make bench``: recall_search in Python and in Go, side by side, on the same data.

For each archive size (the first N blocks of ``bench.data``'s seeded stream,
archived in one Go reference instance step by step) and each query:

- kernel: Python's ``run_tool`` over the blocks in memory (a ``MemoryArchive``
  built from the ``/blocks`` body) against Go's ``BenchmarkSearch`` over the same
  body written to a file; samples alternate between Go and Python;
- end to end: ``GoTurnHost.exec_tool`` (fetch ``/blocks``, decode, score, render)
  against the Go's own ``POST /internal/v1/tool/exec`` (which scores in memory),
  for a first search (a new host, a new connection; a new httpx client for Go)
  and a repeated one (same host; a kept client for Go), alternating too; and in
  the same rounds ``GET /blocks`` alone (the Go's encoding and the transfer: the
  floor under any path that reads the archive).

Then the Python path's peak memory for a search of the largest archive, in a
fresh process (``bench.memory``), against the size of the ``/blocks`` body, and
the time of ``make parity``.

Every output measured is compared with Go's, byte for byte: a divergence stops
the run (exit 1). The Go's request log proves that the Python path read the
archive and never called ``/tool/exec``. Figures are medians; only the ratios
Python / Go, measured in the same run, mean anything on a shared machine.
"""

from __future__ import annotations

import argparse
import gc
import hashlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench import machine
from bench.data import DEFAULT_SEED, QUERIES, BlockSpec, Query, generate_blocks
from bench.decoders import time_decoders
from bench.gokernel import GoKernel
from bench.memory import measure
from bench.report import render_markdown, render_text, targets
from parity.goclient import ARCHIVE_PATH, BLOCKS_PATH, EXEC_PATH, GoClient, GoConnection
from parity.reference import GoReference, RunningReference
from recall import Block, GoTurnHost, MemoryArchive, run_tool

__all__ = ["Config", "ParityFailure", "check_parity", "main", "parse_args", "run"]

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_SIZES = (1000, 10_000, 50_000)
QUICK_SIZES = (50, 300)
TIMEOUT = 120.0


class ParityFailure(Exception):
    """A measured Python output differs from Go's, or the Python path called Go's tool."""


@dataclass
class Config:
    """What to run."""

    sizes: list[int]
    repeat: int
    min_time: float
    out_dir: Path
    work_dir: Path
    seed: int = DEFAULT_SEED
    memory: bool = True
    parity_runs: int = 3
    quick: bool = False
    queries: Sequence[Query] = QUERIES
    argv: Sequence[str] = ()


@dataclass
class Counter:
    """Parity-checked calls, and the calls made to Go's /tool/exec by the bench itself."""

    checked: int = 0
    go_exec: int = 0
    python_e2e: int = 0
    fetches: int = 0
    notes: list[str] = field(default_factory=list)


def _median(values: Sequence[float]) -> float:
    return statistics.median(values)


def _ratio(python: float, go: float) -> float:
    return python / go if go > 0 else float("inf")


def _figure(python: list[float], go: list[float]) -> dict[str, Any]:
    py, g = _median(python), _median(go)
    return {
        "python_s": py,
        "go_s": g,
        "ratio": _ratio(py, g),
        "python_samples_s": python,
        "go_samples_s": go,
    }


class Archiver:
    """POSTs blocks to the Go one by one over one kept-alive connection."""

    def __init__(self, connection: GoConnection) -> None:
        self._go = GoClient(connection, timeout=TIMEOUT)
        self.count = 0

    def archive(self, blocks: Iterator[BlockSpec], count: int) -> float:
        """Archive the next ``count`` blocks; the seconds it took."""
        start = time.perf_counter()
        for _ in range(count):
            spec = next(blocks)
            self._go.archive(spec.label, spec.content)
            self.count += 1
        return time.perf_counter() - start

    def close(self) -> None:
        self._go.close()


def _blocks_of(body: bytes) -> list[Block]:
    doc = json.loads(body)
    return [Block(b["seq"], b["label"], b["content"]) for b in doc["blocks"]]


def _composition(blocks: Sequence[Block]) -> dict[str, float]:
    """Shares of blocks whose content is ASCII, Latin-1, BMP or wider."""
    counts = {"ascii": 0, "latin1": 0, "bmp": 0, "astral": 0}
    for block in blocks:
        top = max(block.content, default="\0")
        if top < "\x80":
            counts["ascii"] += 1
        elif top <= "\xff":
            counts["latin1"] += 1
        elif top <= "\uffff":
            counts["bmp"] += 1
        else:
            counts["astral"] += 1
    n = max(len(blocks), 1)
    return {k: round(v / n, 4) for k, v in counts.items()}


def _matches(output: str) -> int:
    """The total in ``"N of T matching blocks for ..."``, 0 for no match."""
    head = output.split(" matching blocks for ", 1)[0]
    if " of " not in head:
        return 0
    return int(head.rsplit(" of ", 1)[1])


class Bench:
    """One run: the Go reference, the Go kernel binary, the counters."""

    def __init__(self, cfg: Config, go: RunningReference, kernel: GoKernel) -> None:
        self.cfg = cfg
        self.go = go
        self.kernel_binary = kernel
        self.count = Counter()
        self.go_client = GoClient(go.connection, timeout=TIMEOUT)

    def close(self) -> None:
        self.go_client.close()

    def log(self, text: str) -> None:
        print(text, file=sys.stderr, flush=True)

    def check(self, what: str, got: str, gold: str) -> None:
        self.count.checked += 1
        check_parity(what, got, gold)

    # Go's /tool/exec from a Python httpx client: what the façade used to call.

    def _go_exec(self, client: GoClient, args: str) -> str:
        self.count.go_exec += 1
        return client.exec_tool("recall_search", args)

    def go_exec_timed(self, args: str, *, fresh: bool) -> tuple[float, str]:
        if fresh:
            with GoClient(self.go.connection, timeout=TIMEOUT) as client:
                start = time.perf_counter()
                output = self._go_exec(client, args)
                return time.perf_counter() - start, output
        start = time.perf_counter()
        output = self._go_exec(self.go_client, args)
        return time.perf_counter() - start, output

    def gold(self, args: str) -> str:
        return self._go_exec(self.go_client, args)

    # The kernel.

    def kernel(
        self, blocks_file: Path, archive: MemoryArchive, query: Query, gold: str, rounds: int
    ) -> dict[str, Any]:
        args = query.args()
        self.check(f"kernel {query.name} (warm-up)", run_tool("recall_search", args, archive), gold)
        python: list[float] = []
        go: list[float] = []
        for r in range(rounds):
            for side in ("go", "python") if r % 2 == 0 else ("python", "go"):
                if side == "go":
                    sample = self.kernel_binary.run(blocks_file, args, benchtime=self.cfg.min_time)
                    self.check(f"Go BenchmarkSearch {query.name}", sample.output, gold)
                    go.append(sample.ns_per_op / 1e9)
                else:
                    python.append(self._python_kernel_sample(archive, args, gold, query.name))
        return _figure(python, go)

    def _python_kernel_sample(
        self, archive: MemoryArchive, args: str, gold: str, name: str
    ) -> float:
        spent = 0.0
        calls = 0
        while spent < self.cfg.min_time or calls == 0:
            start = time.perf_counter()
            output = run_tool("recall_search", args, archive)
            spent += time.perf_counter() - start
            calls += 1
            self.check(f"kernel {name}", output, gold)
        return spent / calls

    # End to end.

    def end_to_end(self, query: Query, gold: str, rounds: int) -> dict[str, Any]:
        args = query.args()
        first: dict[str, list[float]] = {"python": [], "go": []}
        repeated: dict[str, list[float]] = {"python": [], "go": []}
        fetch: list[float] = []
        for r in range(rounds):
            order = ("go", "python") if r % 2 == 0 else ("python", "go")
            host = GoTurnHost(self.go.base_url, timeout=TIMEOUT)
            try:
                for phase, sink in (("first", first), ("repeated", repeated)):
                    for side in order:
                        if side == "go":
                            seconds, output = self.go_exec_timed(args, fresh=phase == "first")
                            self.check(f"Go /tool/exec {query.name}", output, gold)
                        else:
                            start = time.perf_counter()
                            output = host.exec_tool("recall_search", args)
                            seconds = time.perf_counter() - start
                            self.count.python_e2e += 1
                            self.check(f"GoTurnHost {phase} {query.name}", output, gold)
                        sink[side].append(seconds)
            finally:
                host.close()
            fetch.append(self.fetch_only())
        return {
            "first": _figure(first["python"], first["go"]),
            "repeated": _figure(repeated["python"], repeated["go"]),
            "fetch": {"seconds": _median(fetch), "samples_s": fetch},
        }

    def fetch_only(self) -> float:
        """GET /blocks alone, the body read whole (kept connection): the Go's encoding
        and the transfer, the floor under any Python path that reads the archive."""
        start = time.perf_counter()
        body = self.go_client.blocks_read().body
        seconds = time.perf_counter() - start
        self.count.fetches += 1
        if not body:
            raise RuntimeError(f"GET {BLOCKS_PATH}: an empty body")
        return seconds

    def request_log_check(self, since: int, expect_blocks_reads: int, expect_exec: int) -> int:
        """Check the Go's request log from ``since``: the reads and calls expected, no more."""
        new = self.go.requests(since=since)
        reads = sum(1 for line in new if line == f"GET {BLOCKS_PATH}")
        execs = sum(1 for line in new if line == f"POST {EXEC_PATH}")
        expected = {f"GET {BLOCKS_PATH}", f"POST {EXEC_PATH}", f"POST {ARCHIVE_PATH}"}
        others = [line for line in new if line not in expected]
        if execs != expect_exec or reads != expect_blocks_reads or others:
            raise ParityFailure(
                f"the Go saw {execs} /tool/exec calls (expected {expect_exec}, the bench's own) "
                f"and {reads} /blocks reads (expected {expect_blocks_reads}), "
                f"other requests {others[:3]}: the Python path must read the archive "
                "and never call Go's tool"
            )
        return since + len(new)


def check_parity(what: str, got: str, gold: str) -> None:
    """ParityFailure, naming the first differing character, unless got == gold."""
    if got == gold:
        return
    at = next((i for i, (a, b) in enumerate(zip(got, gold, strict=False)) if a != b), None)
    at = min(len(got), len(gold)) if at is None else at
    raise ParityFailure(
        f"{what}: Python's output differs from Go's at character {at}:\n"
        f"  python: {got[max(0, at - 60) : at + 60]!r}\n"
        f"  go:     {gold[max(0, at - 60) : at + 60]!r}"
    )


def _rounds(cfg: Config, size: int) -> int:
    """Samples per figure: at most 3 for the largest archives (a search takes seconds)."""
    if size >= 50_000:
        return max(1, min(cfg.repeat, 3))
    return cfg.repeat


def _time_make_parity(runs: int) -> dict[str, Any]:
    env = {k: v for k, v in os.environ.items() if k not in {"MAKEFLAGS", "MFLAGS", "MAKELEVEL"}}
    seconds: list[float] = []
    last = ""
    for _ in range(runs):
        start = time.perf_counter()
        done = subprocess.run(
            ["make", "--no-print-directory", "parity"],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
        seconds.append(time.perf_counter() - start)
        last = (done.stdout.strip().splitlines() or [""])[-1]
        if done.returncode != 0:
            return {
                "ok": False,
                "seconds": seconds,
                "last_line": last,
                "stderr": done.stderr[-500:],
            }
    return {"ok": True, "seconds": seconds, "median_s": _median(seconds), "last_line": last}


def run(cfg: Config) -> dict[str, Any]:
    """Run the whole bench; the results (as results.json holds them)."""
    started = time.time()
    results: dict[str, Any] = {
        "machine": machine.describe(),
        "load_before": machine.load_average(),
        "config": {
            "sizes": cfg.sizes,
            "repeat": cfg.repeat,
            "min_time_s": cfg.min_time,
            "seed": cfg.seed,
            "quick": cfg.quick,
            "argv": list(cfg.argv),
            "queries": [{"name": q.name, "args": q.args()} for q in cfg.queries],
        },
        "sizes": [],
    }
    cfg.work_dir.mkdir(parents=True, exist_ok=True)
    # A directory of this run's own: runs at the same time (tests) share nothing.
    with tempfile.TemporaryDirectory(prefix="run-", dir=cfg.work_dir) as work:
        return _run(cfg, Path(work), results, started)


def _measure_size(bench: Bench, size: int, work_dir: Path) -> dict[str, Any]:
    """Kernel, decoders and end to end for the archive as it is now (``size`` blocks)."""
    cfg = bench.cfg
    rounds = _rounds(cfg, size)
    body = bench.go_client.blocks_read().body or b""
    blocks_file = work_dir / f"blocks-{size}.json"
    blocks_file.write_bytes(body)
    blocks = _blocks_of(body)
    if len(blocks) != size:
        raise RuntimeError(f"the Go serves {len(blocks)} blocks, {size} were archived")
    archive = MemoryArchive(blocks)
    entry: dict[str, Any] = {
        "blocks": size,
        "body_bytes": len(body),
        "composition": _composition(blocks),
        "queries": [],
    }
    golds = {query.name: bench.gold(query.args()) for query in cfg.queries}
    kernels: dict[str, dict[str, Any]] = {}
    for query in cfg.queries:
        bench.log(f"[bench] {size} blocks, {query.name}: kernel…")
        kernels[query.name] = bench.kernel(blocks_file, archive, query, golds[query.name], rounds)
    blocks_file.unlink()
    bench.log(f"[bench] {size} blocks: decoders…")
    entry["decode_s"] = time_decoders(body, rounds)
    # The end-to-end searches run without the kernel's blocks in this process
    # (Python's collector would walk them too).
    del archive, blocks, body
    gc.collect()
    for query in cfg.queries:
        bench.log(f"[bench] {size} blocks, {query.name}: end to end…")
        gold = golds[query.name]
        entry["queries"].append(
            {
                "name": query.name,
                "args": query.args(),
                "matches": _matches(gold),
                "kernel": kernels[query.name],
                **bench.end_to_end(query, gold, rounds),
            }
        )
    return entry


def _measure_memory(bench: Bench, largest: dict[str, Any]) -> dict[str, Any]:
    """The Python path's peak memory for the first query over the largest archive."""
    query = bench.cfg.queries[0]
    bench.log(f"[bench] {largest['blocks']} blocks: peak memory of the Python path…")
    digest = hashlib.sha256(bench.gold(query.args()).encode()).hexdigest()
    body_bytes = largest["body_bytes"]
    memory: dict[str, Any] = {
        "blocks": largest["blocks"],
        "query": query.name,
        "body_bytes": body_bytes,
    }
    for mode in ("rss", "tracemalloc"):
        searches = measure(bench.go.base_url, query.args(), mode)["searches"]
        assert isinstance(searches, list)
        for n, search in enumerate(searches):
            bench.count.checked += 1
            if search["output_sha256"] != digest:
                raise ParityFailure(f"memory child ({mode}), search {n + 1}: output differs")
            search["ratio"] = search["peak_bytes"] / body_bytes
        memory[mode] = searches
    return memory


def _run(cfg: Config, work_dir: Path, results: dict[str, Any], started: float) -> dict[str, Any]:
    kernel = GoKernel(work_dir)
    kernel.build()
    specs = generate_blocks(max(cfg.sizes), cfg.seed)
    with GoReference().start(first_seq=1) as go:
        results["go"] = go.version()
        bench = Bench(cfg, go, kernel)
        archiver = Archiver(go.connection)
        log_at = len(go.requests())
        try:
            for size in sorted(cfg.sizes):
                bench.log(f"[bench] {size} blocks: archiving…")
                load_s = archiver.archive(specs, size - archiver.count)
                count = bench.count
                before = (count.go_exec, count.python_e2e, count.fetches)
                entry = _measure_size(bench, size, work_dir)
                entry["archive_s"] = load_s
                # Reads of /blocks: the bench's own, GET /blocks alone, the Python path.
                reads = 1 + (count.fetches - before[2]) + (count.python_e2e - before[1])
                log_at = bench.request_log_check(
                    log_at, expect_blocks_reads=reads, expect_exec=count.go_exec - before[0]
                )
                results["sizes"].append(entry)
            if cfg.memory:
                results["memory"] = _measure_memory(bench, results["sizes"][-1])
                log_at = bench.request_log_check(log_at, expect_blocks_reads=4, expect_exec=1)
        finally:
            archiver.close()
            bench.close()
    if cfg.parity_runs > 0:
        bench.log("[bench] make parity…")
        results["make_parity"] = _time_make_parity(cfg.parity_runs)
    results["load_after"] = machine.load_average()
    results["parity"] = {
        "checked_outputs": bench.count.checked,
        "all_identical": True,
        "python_path_called_go_tool": False,
    }
    results["elapsed_s"] = time.time() - started
    results["targets"] = targets(results)
    return results


def _sizes(text: str) -> list[int]:
    sizes = sorted({int(part.replace("_", "")) for part in text.split(",") if part.strip()})
    if not sizes or sizes[0] < 1:
        raise argparse.ArgumentTypeError("sizes are positive integers, such as 1000,10000")
    return sizes


def parse_args(argv: Sequence[str]) -> Config:
    """The Config for the command line."""
    parser = argparse.ArgumentParser(
        prog="python -m bench",
        description="recall_search, Python against Go, side by side (`make bench`).",
    )
    parser.add_argument("--sizes", type=_sizes, help="archive sizes (default 1000,10000,50000)")
    parser.add_argument("--repeat", type=int, help="samples per figure; medians (default 5)")
    parser.add_argument(
        "--min-time", type=float, help="seconds per kernel sample, each side (default 0.5)"
    )
    parser.add_argument(
        "--quick", action="store_true", help="smoke run: tiny sizes, 2 samples, no make parity"
    )
    parser.add_argument("--no-memory", action="store_true", help="skip the memory measurement")
    parser.add_argument(
        "--parity-runs", type=int, help="times `make parity` is timed (default 3, quick 0)"
    )
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
    parser.add_argument(
        "--out-dir",
        type=Path,
        default=ROOT / "bench",
        help="where results.json and RESULTS.md go (default bench/)",
    )
    opts = parser.parse_args(argv)
    quick = bool(opts.quick)
    repeat = opts.repeat if opts.repeat is not None else (2 if quick else 5)
    if repeat < 1:
        parser.error("--repeat must be at least 1")
    return Config(
        sizes=opts.sizes or list(QUICK_SIZES if quick else DEFAULT_SIZES),
        repeat=repeat,
        min_time=opts.min_time if opts.min_time is not None else (0.02 if quick else 0.5),
        out_dir=opts.out_dir,
        work_dir=ROOT / ".cache" / "bench",
        seed=opts.seed,
        memory=not opts.no_memory,
        parity_runs=opts.parity_runs if opts.parity_runs is not None else (0 if quick else 3),
        quick=quick,
        argv=list(argv),
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``python -m bench``: 0, or 1 on a parity failure."""
    cfg = parse_args(sys.argv[1:] if argv is None else argv)
    try:
        results = run(cfg)
    except ParityFailure as failure:
        print(f"bench: PARITY FAILURE: {failure}", file=sys.stderr)
        return 1
    text = render_text(results)
    print(text)
    cfg.out_dir.mkdir(parents=True, exist_ok=True)
    (cfg.out_dir / "results.json").write_text(json.dumps(results, indent=2) + "\n")
    (cfg.out_dir / "RESULTS.md").write_text(render_markdown(results, text))
    return 0
