"""``make bench``: recall_search in Python and in Go, side by side, on the same data.

For each archive size (the first N blocks of ``bench.data``'s seeded stream, archived
in two Go reference instances, one with the contract's extensions of ``/blocks``, the
conditional and incremental reads, and one without, ``-no-etag``):

- **sessions** (``bench.session``, each in a fresh interpreter): ``import recall``
  and ``GoTurnHost(...)`` timed, then the first search, six different queries
  (repeated), the same six again (steady), and a search after one new block, each
  beside the Go's own ``POST /internal/v1/tool/exec`` in the same process; against
  each Go, against the Go with the extensions once more after ``host.warm()``, and
  (up to 10,000 blocks) with json's decoder only (as without the ``fast`` extra);
- ``GET /blocks`` alone between sessions (the Go's encoding and the transfer: the
  floor under any read of the whole archive);
- up to 10,000 blocks, the decoders of the ``/blocks`` body and the word index's
  build and size; at 10,000 (the largest size up to it) the kernel (``run_tool`` over
  blocks in memory against Go's ``BenchmarkSearch``) and the Go's own ``GET /blocks``
  after a new block;
- from 10,000 blocks (and at the largest size), the Python path's memory
  (``bench.memory``: the peak of a first search, the kept set).

Then, at the largest size, a herd after a change (``bench.herd``: 16 threads on one
``GoTurnHost``, 50 tasks on one ``AsyncGoTurnHost``); the cold start
(``bench.coldstart``: import and first calls in fresh processes); the time of
``make parity``.

Every output measured is compared with Go's, byte for byte: a divergence stops the
run (exit 1). The Go's request log proves that the Python path never called
``/tool/exec``. Figures are medians; only the ratios Python / Go, measured in the
same run, mean anything on a shared machine.
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

import httpx

from bench import coldstart, machine
from bench.data import DEFAULT_SEED, QUERIES, SESSION_QUERIES, BlockSpec, Query, generate_blocks
from bench.decoders import time_decoders
from bench.gokernel import GoKernel
from bench.memory import cache_bytes_for, measure
from bench.report import render_markdown, render_text, targets
from parity.goclient import ARCHIVE_PATH, BLOCKS_PATH, EXEC_PATH, GoClient, GoConnection
from parity.reference import GoReference, RunningReference
from recall import Block, MemoryArchive, run_tool
from recall._blocks import read_set
from recall._fast import decode_item_msgspec
from recall._index import WordIndex

__all__ = ["Config", "ParityFailure", "check_parity", "main", "parse_args", "run"]

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_SIZES = (100, 10_000, 100_000)
QUICK_SIZES = (50, 300)
TIMEOUT = 300.0
DETAIL_SIZE = 10_000
"""The largest size with the decoders, the index and ``json`` sessions measured."""
GOS = ("delta", "plain")
"""The two Gos: with the conditional and incremental reads of /blocks, and without
(``-no-etag``)."""
SESSION_KINDS = ("delta/best", "delta/warm", "plain/best", "delta/json")
"""The kinds of session, ``GO/HOW``: ``best`` decodes as the hosts do (msgspec when
installed), ``warm`` too, after ``host.warm()``, ``json`` with json's scanner only (the
port without its ``fast`` extra; up to ``DETAIL_SIZE``)."""
HERDS = (("sync", 16), ("async", 50))
"""(host kind, callers) of the herds after a change."""
SESSION_CALLS = 1 + 2 * len(SESSION_QUERIES) + 1
"""recall_search calls in a session, on each side."""


class ParityFailure(Exception):
    """A measured Python output differs from Go's, or the Python path called Go's tool."""


@dataclass
class Config:
    """What to run."""

    sizes: list[int]
    rounds: int
    min_time: float
    out_dir: Path
    work_dir: Path
    seed: int = DEFAULT_SEED
    memory: bool = True
    kernel: bool = True
    coldstart_runs: int = 5
    parity_runs: int = 3
    quick: bool = False
    queries: Sequence[Query] = SESSION_QUERIES
    argv: Sequence[str] = ()


@dataclass
class Counter:
    """Parity-checked outputs, and the requests the bench itself made of the Gos."""

    checked: int = 0
    go_exec: dict[str, int] = field(default_factory=lambda: dict.fromkeys(GOS, 0))
    python_reads: dict[str, int] = field(default_factory=lambda: dict.fromkeys(GOS, 0))
    bench_reads: dict[str, int] = field(default_factory=lambda: dict.fromkeys(GOS, 0))


def _median(values: Sequence[float]) -> float:
    return statistics.median(values)


def _figure(python: list[float], go: list[float]) -> dict[str, Any]:
    py, g = _median(python), _median(go)
    return {
        "python_s": py,
        "go_s": g,
        "ratio": py / g if g > 0 else float("inf"),
        "python_samples_s": python,
        "go_samples_s": go,
    }


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


class Archiver:
    """Archives blocks in a Go, in batches over one kept-alive connection."""

    def __init__(self, connection: GoConnection) -> None:
        self._go = GoClient(connection, timeout=TIMEOUT)
        self.count = 0

    def archive(self, blocks: Iterator[BlockSpec], count: int) -> float:
        """Archive the next ``count`` blocks (``/debug/archive``, 2,000 a request); the
        seconds it took."""
        start = time.perf_counter()
        while count > 0:
            batch = [(spec.label, spec.content, False) for spec in _take(blocks, min(count, 2000))]
            self._go.archive_many(batch)
            self.count += len(batch)
            count -= len(batch)
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


def _log(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def _child_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in {"MAKEFLAGS", "MFLAGS", "MAKELEVEL"}}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    return env


class Bench:
    """One run: the two Go references, the counters."""

    def __init__(self, cfg: Config, gos: dict[str, RunningReference]) -> None:
        self.cfg = cfg
        self.gos = gos
        self.count = Counter()
        self.clients = {kind: GoClient(go.connection, timeout=TIMEOUT) for kind, go in gos.items()}
        self.log_at = {kind: len(go.requests()) for kind, go in gos.items()}
        self.body_bytes = 0
        """The /blocks JSON of the size measured: the children's ``cache_bytes_for``."""
        self.tags: dict[str, str | None] = dict.fromkeys(gos)
        """The ETag of each Go's last /blocks answer to the bench's own reads."""

    def close(self) -> None:
        for client in self.clients.values():
            client.close()

    def log(self, text: str) -> None:
        _log(text)

    def read(self, kind: str) -> bytes:
        """GET /blocks from the Go of this kind, for the bench itself."""
        self.count.bench_reads[kind] += 1
        answer = self.clients[kind].blocks_read()
        self.tags[kind] = answer.etag
        return answer.body or b""

    def fetch_only(self, kind: str) -> float:
        """GET /blocks alone, the body read whole (kept connection)."""
        start = time.perf_counter()
        body = self.read(kind)
        seconds = time.perf_counter() - start
        if not body:
            raise RuntimeError(f"GET {BLOCKS_PATH}: an empty body")
        return seconds

    def not_modified_only(self) -> float:
        """A conditional GET /blocks of the Go with the extensions, with the tag of the
        bench's last read of it, answered 304, alone (kept connection): what a search
        that reuses its set waits for at least."""
        start = time.perf_counter()
        answer = self.clients["delta"].blocks_read(etag=self.tags["delta"])
        seconds = time.perf_counter() - start
        self.count.bench_reads["delta"] += 1
        if answer.status != 304:
            raise RuntimeError(f"GET {BLOCKS_PATH} with its own ETag: {answer.status}, not 304")
        return seconds

    def session(self, name: str, *, go_first: bool, steady: bool = True) -> dict[str, Any]:
        """One bench.session of this kind (``GO/HOW``) in a fresh interpreter."""
        kind, how = name.split("/")
        argv = [sys.executable, "-m", "bench.session", self.gos[kind].base_url]
        argv += ["--decoder", "json" if how == "json" else "best"]
        argv += (["--go-first"] if go_first else []) + (["--warm"] if how == "warm" else [])
        argv += [] if steady else ["--no-steady"]
        argv += ["--cache-bytes", str(cache_bytes_for(self.body_bytes, kind))]
        done = subprocess.run(
            argv, cwd=ROOT, env=_child_env(), capture_output=True, text=True, timeout=900
        )
        try:
            found: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
        except (IndexError, ValueError):
            raise RuntimeError(f"bench.session failed:\n{done.stderr.strip()[-3000:]}") from None
        if found["failures"]:
            raise ParityFailure("bench.session: " + "\n".join(found["failures"]))
        if done.returncode != 0:
            raise RuntimeError(f"bench.session failed:\n{done.stderr.strip()[-3000:]}")
        calls = SESSION_CALLS - (0 if steady else len(SESSION_QUERIES))
        self.count.checked += calls
        self.count.go_exec[kind] += calls
        self.count.python_reads[kind] += calls + (how == "warm")
        return found

    def herd(self, kind: str, callers: int, args: str) -> dict[str, Any]:
        """One bench.herd in a fresh interpreter against the Go with the extensions."""
        argv = [sys.executable, "-m", "bench.herd", self.gos["delta"].base_url]
        argv += ["--kind", kind, "--callers", str(callers), "--args", args]
        argv += ["--cache-bytes", str(cache_bytes_for(self.body_bytes, "delta"))]
        done = subprocess.run(
            argv, cwd=ROOT, env=_child_env(), capture_output=True, text=True, timeout=1800
        )
        try:
            found: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
        except (IndexError, ValueError):
            raise RuntimeError(f"bench.herd failed:\n{done.stderr.strip()[-3000:]}") from None
        if found["differ"]:
            raise ParityFailure(f"bench.herd: {found['differ']} outputs of {callers} differ")
        self.count.checked += callers + 1
        self.count.go_exec["delta"] += 1
        self.count.python_reads["delta"] += callers + 1
        return found

    def request_log_check(self, kind: str) -> None:
        """The Go's requests since the last check: exactly the bench's own and the Python
        path's reads of /blocks, and no /tool/exec call but the bench's own."""
        go = self.gos[kind]
        new = go.requests(since=self.log_at[kind])
        self.log_at[kind] += len(new)
        reads = sum(1 for line in new if line.split("?")[0] == f"GET {BLOCKS_PATH}")
        execs = sum(1 for line in new if line == f"POST {EXEC_PATH}")
        expected = {f"GET {BLOCKS_PATH}", f"POST {EXEC_PATH}", f"POST {ARCHIVE_PATH}"}
        others = [line for line in new if line.split("?")[0] not in expected]
        count = self.count
        most = count.python_reads[kind] + count.bench_reads[kind]  # a read per search at most
        if execs != count.go_exec[kind] or not count.bench_reads[kind] <= reads <= most or others:
            raise ParityFailure(
                f"the {kind} Go saw {execs} /tool/exec calls (expected {count.go_exec[kind]}, "
                f"the bench's own) and {reads} /blocks reads (expected at most {most}), "
                f"other requests {others[:3]}: the Python path must read the archive and "
                "never call Go's tool"
            )
        count.go_exec[kind] = count.python_reads[kind] = count.bench_reads[kind] = 0


def _sessions(bench: Bench, rounds: int, size: int) -> dict[str, Any]:
    """Sessions of every kind, alternating, round by round; their figures."""
    kinds = [k for k in SESSION_KINDS if size <= DETAIL_SIZE or not k.endswith("/json")]
    samples: dict[str, list[dict[str, Any]]] = {k: [] for k in kinds}
    fetch: dict[str, list[float]] = {kind: [] for kind in GOS}
    not_modified: list[float] = []
    for r in range(rounds):
        for name in kinds:
            steady = size <= DETAIL_SIZE  # past it, the six once: the targets' rows
            samples[name].append(bench.session(name, go_first=r % 2 == 1, steady=steady))
        for kind in GOS:
            fetch[kind].append(bench.fetch_only(kind))
        not_modified.append(bench.not_modified_only())
    found: dict[str, Any] = {}
    for name, sessions in samples.items():
        found[name] = _session_figures(sessions)
    found["fetch"] = {kind: {"seconds": _median(v), "samples_s": v} for kind, v in fetch.items()}
    found["not_modified_s"] = _median(not_modified)
    return found


def _session_figures(sessions: list[dict[str, Any]]) -> dict[str, Any]:
    def total(pairs: list[dict[str, float]], side: str) -> float:
        return sum(pair[side] for pair in pairs)

    each = [
        _median([s["repeated"][i]["python"] / s["repeated"][i]["go"] for s in sessions])
        for i in range(len(SESSION_QUERIES))
    ]
    return {
        "import_s": _median([s["import_s"] for s in sessions]),
        "host_s": _median([s["host_s"] for s in sessions]),
        "warm_s": _median([s["warm_s"] for s in sessions])
        if all(s.get("warm_s") is not None for s in sessions)
        else None,
        "first": _figure(
            [s["first"]["python"] for s in sessions], [s["first"]["go"] for s in sessions]
        ),
        "repeated": _figure(
            [total(s["repeated"], "python") for s in sessions],
            [total(s["repeated"], "go") for s in sessions],
        ),
        "repeated_each_ratio": each,
        "steady": _figure(
            [total(s["steady"], "python") for s in sessions],
            [total(s["steady"], "go") for s in sessions],
        )
        if all(s["steady"] for s in sessions)
        else None,
        "new_block": _figure(
            [s["new_block"]["python"] for s in sessions], [s["new_block"]["go"] for s in sessions]
        ),
        "sessions": sessions,
    }


def _index_figures(body: bytes, rounds: int) -> dict[str, Any]:
    """The word index over the whole set: its build time and its size, in this process."""
    blocks = read_set(bytearray(body), decode=decode_item_msgspec)
    seconds: list[float] = []
    index = WordIndex()
    for _ in range(max(1, min(rounds, 3))):
        gc.collect()
        index = WordIndex()
        start = time.perf_counter()
        for images in blocks.images:
            index.add(images)
        seconds.append(time.perf_counter() - start)
    return {
        "build_s": _median(seconds),
        "build_samples_s": seconds,
        "index_bytes": index.size,
        "set_bytes": blocks.size,
        "image_bytes": blocks.image_bytes,
        "body_bytes": len(body),
    }


def _go_get_after(bench: Bench, rounds: int) -> dict[str, Any]:
    """The Go's own GET /blocks right after one new block, when the dozen reads before it
    were 304s (a host of the extension) or full 200s (a host without): the Go's side of
    "after a new block". Each new block is locked again afterwards."""
    go = bench.gos["delta"]
    client = bench.clients["delta"]
    found: dict[str, list[float]] = {"after 304s": [], "after 200s": []}
    with httpx.Client(base_url=go.base_url, timeout=TIMEOUT, trust_env=False) as reader:
        for _ in range(rounds):
            for mode in found:
                tag = reader.get(BLOCKS_PATH).headers["etag"]
                for _ in range(12):
                    headers = {"If-None-Match": tag} if mode == "after 304s" else {}
                    reader.get(BLOCKS_PATH, headers=headers)
                    client.exec_tool("recall_search", QUERIES[0].args())
                seq = client.archive("bench: one new block", "nouveau")
                start = time.perf_counter()
                answer = reader.get(BLOCKS_PATH, headers={"If-None-Match": tag})
                found[mode].append(time.perf_counter() - start)
                if answer.status_code != 200:
                    raise RuntimeError(f"GET {BLOCKS_PATH} after a new block: {answer.status_code}")
                client.lock(seq)
                bench.count.bench_reads["delta"] += 14
                bench.count.go_exec["delta"] += 12
    return {mode: {"seconds": _median(v), "samples_s": v} for mode, v in found.items()}


def _kernel(bench: Bench, body: bytes, work_dir: Path, golds: dict[str, str]) -> dict[str, Any]:
    """run_tool over the blocks in memory against Go's BenchmarkSearch, alternating."""
    cfg = bench.cfg
    kernel = GoKernel(work_dir)
    kernel.build()
    blocks_file = work_dir / "blocks.json"
    blocks_file.write_bytes(body)
    archive = MemoryArchive(_blocks_of(body))
    found: dict[str, Any] = {}
    try:
        for query in QUERIES:
            args, gold = query.args(), golds[query.name]
            python: list[float] = []
            go: list[float] = []
            for r in range(max(1, min(cfg.rounds, 3))):
                for side in ("go", "python") if r % 2 == 0 else ("python", "go"):
                    if side == "go":
                        sample = kernel.run(blocks_file, args, benchtime=cfg.min_time)
                        check_parity(f"Go BenchmarkSearch {query.name}", sample.output, gold)
                        go.append(sample.ns_per_op / 1e9)
                        continue
                    spent, calls = 0.0, 0
                    while spent < cfg.min_time or calls == 0:
                        start = time.perf_counter()
                        output = run_tool("recall_search", args, archive)
                        spent += time.perf_counter() - start
                        calls += 1
                        check_parity(f"kernel {query.name}", output, gold)
                        bench.count.checked += 1
                    python.append(spent / calls)
            found[query.name] = _figure(python, go)
    finally:
        blocks_file.unlink(missing_ok=True)
    return found


def _measure_size(bench: Bench, size: int, work_dir: Path) -> dict[str, Any]:
    cfg = bench.cfg
    body = bench.read("delta")
    bench.body_bytes = len(body)
    blocks = _blocks_of(body)
    if len(blocks) != size:
        raise RuntimeError(f"the Go serves {len(blocks)} blocks, {size} were archived")
    entry: dict[str, Any] = {
        "blocks": size,
        "body_bytes": len(body),
        "composition": _composition(blocks),
    }
    del blocks
    if size <= DETAIL_SIZE:
        bench.log(f"[bench] {size} blocks: decoders and the word index…")
        entry["decode_s"] = time_decoders(body, max(1, min(cfg.rounds, 5)))
        entry["index"] = _index_figures(body, cfg.rounds)
    if cfg.kernel and size == max((s for s in cfg.sizes if s <= DETAIL_SIZE), default=0):
        bench.log(f"[bench] {size} blocks: kernel…")
        golds = {
            q.name: bench.clients["delta"].exec_tool("recall_search", q.args()) for q in QUERIES
        }
        bench.count.go_exec["delta"] += len(QUERIES)
        entry["kernel"] = _kernel(bench, body, work_dir, golds)
        bench.log(f"[bench] {size} blocks: the Go's GET after a new block…")
        entry["go_get_after_new_block"] = _go_get_after(bench, max(1, min(cfg.rounds, 3)))
    del body
    gc.collect()
    bench.log(f"[bench] {size} blocks: sessions…")
    entry.update(_sessions(bench, cfg.rounds, size))
    for kind in GOS:
        bench.request_log_check(kind)
    if cfg.memory and (size >= DETAIL_SIZE or size == max(cfg.sizes)):
        modes = ("rss", "tracemalloc") if size <= DETAIL_SIZE else ("rss",)
        entry["memory"] = _measure_memory(bench, entry, modes)
    if size == max(cfg.sizes):
        entry["herd"] = {}
        for kind, callers in HERDS:
            bench.log(f"[bench] {size} blocks: {callers} callers of one {kind} host…")
            herd = bench.herd(kind, callers, cfg.queries[0].args())
            herd["ratio"] = (herd["peak_bytes"] or 0) / entry["body_bytes"]
            entry["herd"][kind] = herd
        bench.request_log_check("delta")
    return entry


def _measure_memory(bench: Bench, entry: dict[str, Any], modes: Sequence[str]) -> dict[str, Any]:
    """The Python path's peak and kept memory for the first query over this archive."""
    query = bench.cfg.queries[0]
    go = bench.gos["delta"]
    bench.log(f"[bench] {entry['blocks']} blocks: memory of the Python path…")
    digest = hashlib.sha256(
        bench.clients["delta"].exec_tool("recall_search", query.args()).encode()
    )
    bench.count.go_exec["delta"] += 1
    body_bytes = entry["body_bytes"]
    memory: dict[str, Any] = {
        "blocks": entry["blocks"],
        "query": query.name,
        "body_bytes": body_bytes,
    }
    for mode in modes:
        cache_bytes = cache_bytes_for(body_bytes, "delta")
        found = measure(go.base_url, query.args(), mode, searches=3, cache_bytes=cache_bytes)
        searches = found["searches"]
        assert isinstance(searches, list)
        for n, search in enumerate(searches):
            bench.count.checked += 1
            bench.count.python_reads["delta"] += 1
            if search["output_sha256"] != digest.hexdigest():
                raise ParityFailure(f"memory child ({mode}), search {n + 1}: output differs")
            search["ratio"] = search["peak_bytes"] / body_bytes
        memory[mode] = searches
        memory[f"{mode}_kept"] = found.get("kept")
    bench.request_log_check("delta")
    return memory


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
            "rounds": cfg.rounds,
            "min_time_s": cfg.min_time,
            "seed": cfg.seed,
            "quick": cfg.quick,
            "argv": list(cfg.argv),
            "queries": [{"name": q.name, "args": q.args()} for q in cfg.queries],
        },
        "sizes": [],
    }
    cfg.work_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="run-", dir=cfg.work_dir) as work:
        return _run(cfg, Path(work), results, started)


def _run(cfg: Config, work_dir: Path, results: dict[str, Any], started: float) -> dict[str, Any]:
    _log("[bench] cold start (fresh processes)…")
    modes = ("pyc",) if cfg.quick else coldstart.MODES
    cold = coldstart.measure(runs=cfg.coldstart_runs, modes=modes)
    results["coldstart"] = cold[str(coldstart.ROOT)]
    specs = generate_blocks(max(cfg.sizes), cfg.seed)
    reference = GoReference()
    with (
        reference.start(first_seq=1) as with_extensions,
        reference.start(first_seq=1, etag=False) as without,
    ):
        gos = {"delta": with_extensions, "plain": without}
        results["go"] = with_extensions.version()
        bench = Bench(cfg, gos)
        archivers = {kind: Archiver(go.connection) for kind, go in gos.items()}
        try:
            archived = 0
            for size in sorted(cfg.sizes):
                bench.log(f"[bench] {size} blocks: archiving…")
                batch = list(_take(specs, size - archived))
                load_s = [archivers[kind].archive(iter(batch), len(batch)) for kind in GOS]
                archived = size
                entry = _measure_size(bench, size, work_dir)
                entry["archive_s"] = max(load_s)
                results["sizes"].append(entry)
        finally:
            for archiver in archivers.values():
                archiver.close()
            bench.close()
    if cfg.parity_runs > 0:
        _log("[bench] make parity…")
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


def _take(specs: Iterator[BlockSpec], count: int) -> Iterator[BlockSpec]:
    for _ in range(count):
        yield next(specs)


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
    parser.add_argument("--sizes", type=_sizes, help="archive sizes (default 100,10000,100000)")
    parser.add_argument("--rounds", type=int, help="sessions of each kind per size (default 3)")
    parser.add_argument(
        "--min-time", type=float, help="seconds per kernel sample, each side (default 0.3)"
    )
    parser.add_argument(
        "--quick",
        action="store_true",
        help="smoke run: tiny sizes, 2 rounds, no kernel, one cold start run, no make parity",
    )
    parser.add_argument("--no-memory", action="store_true", help="skip the memory measurement")
    parser.add_argument("--no-kernel", action="store_true", help="skip the kernel measurement")
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
    rounds = opts.rounds if opts.rounds is not None else (2 if quick else 3)
    if rounds < 1:
        parser.error("--rounds must be at least 1")
    return Config(
        sizes=opts.sizes or list(QUICK_SIZES if quick else DEFAULT_SIZES),
        rounds=rounds,
        min_time=opts.min_time if opts.min_time is not None else 0.3,
        out_dir=opts.out_dir,
        work_dir=ROOT / ".cache" / "bench",
        seed=opts.seed,
        memory=not opts.no_memory,
        kernel=not (opts.no_kernel or quick),
        coldstart_runs=1 if quick else 5,
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
