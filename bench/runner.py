"""``make bench``: recall_search in Python and in Go, side by side, on the same data.

Two Go references (``delta``: with conditional and incremental reads; ``plain``:
without) hold the first N blocks of ``bench.data``; sessions (``bench.session``), the
in-process measures (``bench.kernel``), memory and herds (``bench.memory``), the cold
start and ``make parity`` are timed (``bench/NOTES.md``), every output compared with
Go's and the Gos' request logs checked (a divergence: exit 1). The figures go to
stdout, ``results.json`` and ``RESULTS.md``.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import hashlib
import json
import os
import platform
import re
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Sequence
from itertools import islice, pairwise
from pathlib import Path
from statistics import median
from typing import Any

import httpx

from bench import BenchError, ParityFailure, coldstart, kernel
from bench.data import DEFAULT_SEED, QUERIES, SESSION_QUERIES, generate_blocks
from bench.memory import cache_bytes_for
from bench.report import KINDS, render_markdown, render_text, targets
from parity.goclient import ARCHIVE_PATH, GoClient
from parity.reference import GoReference, RunningReference
from recall import Block
from recall._protocol import BLOCKS_PATH, EXEC_PATH, IF_NONE_MATCH

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_SIZES = (100, 10_000, 100_000)
QUICK_SIZES = (50, 300)
TIMEOUT = 300.0
DETAIL_SIZE = 10_000
"""The largest size with the decoders, the index and ``json`` sessions measured."""
GOS = ("delta", "plain")
SESSION_KINDS = tuple(KINDS)
"""``GO/HOW``, the report's ``KINDS``: ``best`` decodes as the hosts do, ``warm`` after
``host.warm()``, ``json`` with json's scanner only (up to ``DETAIL_SIZE``)."""
NOT_MODIFIED_SAMPLES = 6  # 304s timed a round, as many as the searches of a session's six
HERDS = (("sync", 16), ("async", 50))  # (host kind, callers) of the herds after a change
SESSION_CALLS = 1 + 2 * len(SESSION_QUERIES) + 1  # recall_search calls a session, each side
CHILD_ENV = {k: v for k, v in os.environ.items() if k not in {"MAKEFLAGS", "MFLAGS", "MAKELEVEL"}}
CHILD_ENV["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), CHILD_ENV.get("PYTHONPATH")]))


Config = argparse.Namespace
"""What to run: ``parse_args``'s options, ``--quick``'s defaults applied, and ``argv``."""


def _figure(python: list[float], go: list[float]) -> dict[str, Any]:
    py, g = median(python), median(go)
    figure = {"python_s": py, "go_s": g, "ratio": py / g if g > 0 else float("inf")}
    return figure | {"python_samples_s": python, "go_samples_s": go}


def _seconds(samples: list[float]) -> dict[str, Any]:
    return {"seconds": median(samples), "samples_s": samples}


def _log(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def _run(argv: list[str], *, timeout: float) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        argv, cwd=ROOT, env=CHILD_ENV, capture_output=True, text=True, timeout=timeout
    )


def _child(module: str, *args: object, timeout: float = 900, parity: str = "") -> dict[str, Any]:
    """``python -m module args`` in a fresh interpreter: the JSON object of its last line.
    ParityFailure when its field ``parity`` is set (a failure the child found)."""
    done = _run([sys.executable, "-m", module, *map(str, args)], timeout=timeout)
    try:
        found: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    except (IndexError, ValueError):
        found = {}
    if parity and (problem := found.get(parity)):
        detail = "\n".join(problem) if isinstance(problem, list) else f"{problem} outputs differ"
        raise ParityFailure(f"{module}: {detail}")
    if done.returncode != 0 or not found:
        raise BenchError(f"{module} failed:\n{done.stderr.strip()[-3000:]}")
    return found


class Bench:
    """One run: the two Go references, a client of each, the counters."""

    def __init__(
        self, cfg: Config, gos: dict[str, RunningReference], clients: dict[str, GoClient]
    ) -> None:
        self.cfg, self.gos, self.clients = cfg, gos, clients
        self.checked = 0  # outputs compared with Go's
        self.expected = {kind: Counter[str]() for kind in gos}  # each Go's log since checked
        self.log_at = {kind: len(go.requests()) for kind, go in gos.items()}
        self.body_bytes = 0  # the /blocks JSON of the size measured: cache_bytes_for's
        self.tag: str | None = None  # the delta Go's ETag of the bench's last own read

    def expect(
        self, kind: str, *, execs: int = 0, reads: int = 0, searches: int = 0, checked: int = 0
    ) -> None:
        """Count what the Go of this kind is to see (``execs``, ``reads``: the bench's own;
        ``searches``: the Python path's, a read each at most), and outputs compared."""
        self.expected[kind].update(execs=execs, reads=reads, searches=searches)
        self.checked += checked

    def gold(self, args: str) -> str:
        """The delta Go's own output for a search (``/tool/exec``)."""
        self.expect("delta", execs=1)
        return self.clients["delta"].exec_tool("recall_search", args)

    def read(self, kind: str) -> bytes:
        """GET /blocks from the Go of this kind, for the bench itself."""
        self.expect(kind, reads=1)
        answer = self.clients[kind].blocks_read()
        if kind == "delta":
            self.tag = answer.etag
        if not answer.body:
            raise BenchError(f"GET {BLOCKS_PATH}: an empty body")
        return answer.body

    def not_modified(self, samples: int = NOT_MODIFIED_SAMPLES) -> float:
        """The median seconds of a 304 to GET /blocks of the delta Go with the ETag of the
        bench's last read, sent as a host sends a conditional read: a request built once,
        through httpx's transport, over a kept connection (opened by one more, untimed)."""
        connection = self.gos["delta"].connection
        url = connection.base_url.rstrip("/") + BLOCKS_PATH
        tag = self.tag or ""
        headers = {IF_NONE_MATCH: tag, **connection.headers}
        request = httpx.Request("GET", url, params={"since": tag}, headers=headers)
        self.expect("delta", reads=samples + 1)

        def send() -> None:
            response = transport.handle_request(request)
            response.read()
            response.close()
            if response.status_code != 304:
                raise BenchError(f"GET {BLOCKS_PATH} with its ETag: {response.status_code}")

        with httpx.HTTPTransport(verify=connection.ssl_context) as transport:
            send()
            return median(kernel.timed(send) for _ in range(samples))

    def session(self, name: str, *, go_first: bool, steady: bool) -> dict[str, Any]:
        """One bench.session of this kind (``GO/HOW``) in a fresh interpreter."""
        kind, how = name.split("/")
        flags = {"--go-first": go_first, "--warm": how == "warm", "--no-steady": not steady}
        args = [self.gos[kind].base_url, *(flag for flag, on in flags.items() if on)]
        args += ["--decoder", "json" if how == "json" else "best"]
        args += ["--cache-bytes", str(cache_bytes_for(self.body_bytes, kind))]
        found = _child("bench.session", *args, parity="failures")
        calls = SESSION_CALLS - (0 if steady else len(SESSION_QUERIES))
        self.expect(kind, execs=calls, searches=calls + (how == "warm"), checked=calls)
        return found

    def herd(self, size: int, kind: str, callers: int) -> dict[str, Any]:
        """A herd after a change (bench.memory) against the delta Go, of the first query."""
        _log(f"[bench] {size} blocks: {callers} callers of one {kind} host…")
        cache = cache_bytes_for(self.body_bytes, "delta")
        argv = ["--base-url", self.gos["delta"].base_url, "--args", SESSION_QUERIES[0].args()]
        argv += ["--herd", kind, "--callers", str(callers), "--cache-bytes", str(cache)]
        found = _child("bench.memory", *argv, timeout=1800, parity="differ")
        self.expect("delta", execs=1, searches=callers + 1, checked=callers + 1)
        return found | {"ratio": (found["peak_bytes"] or 0) / self.body_bytes}

    def request_log_check(self, kind: str) -> None:
        """The Go's requests since the last check: exactly the bench's own and the Python
        path's reads of /blocks, and no /tool/exec call but the bench's own."""
        new = self.gos[kind].requests(since=self.log_at[kind])
        self.log_at[kind] += len(new)
        paths = [line.split("?")[0] for line in new]
        reads = paths.count(f"GET {BLOCKS_PATH}")
        execs = new.count(f"POST {EXEC_PATH}")
        allowed = {f"GET {BLOCKS_PATH}", f"POST {EXEC_PATH}", f"POST {ARCHIVE_PATH}"}
        others = [line for line, path in zip(new, paths, strict=True) if path not in allowed]
        expected, self.expected[kind] = self.expected[kind], Counter()
        most = expected["searches"] + expected["reads"]  # a read per search at most
        if execs != expected["execs"] or not expected["reads"] <= reads <= most or others:
            raise ParityFailure(
                f"the {kind} Go saw {execs} /tool/exec calls (expected {expected['execs']}, "
                f"the bench's own) and {reads} /blocks reads (expected at most {most}), "
                f"other requests {others[:3]}: the Python path must read the archive and "
                "never call Go's tool"
            )


def _sessions(bench: Bench, size: int) -> dict[str, Any]:
    """Sessions of every kind, alternating, round by round; their figures."""
    kinds = [k for k in SESSION_KINDS if size <= DETAIL_SIZE or not k.endswith("/json")]
    samples: dict[str, list[dict[str, Any]]] = {k: [] for k in kinds}
    fetch: dict[str, list[float]] = {kind: [] for kind in GOS}
    not_modified: list[float] = []  # a round's median each
    for r in range(bench.cfg.rounds):
        for name in kinds:  # past DETAIL_SIZE, the six once: the targets' rows
            session = bench.session(name, go_first=r % 2 == 1, steady=size <= DETAIL_SIZE)
            samples[name].append(session)
        for kind in GOS:  # GET /blocks alone, the body read whole (kept connection)
            fetch[kind].append(kernel.timed(bench.read, kind))
        # A 304 alone: what a search that reuses its set waits for at least.
        not_modified.append(bench.not_modified())
    figures: dict[str, Any] = {name: _session_figures(runs) for name, runs in samples.items()}
    figures["fetch"] = {kind: _seconds(v) for kind, v in fetch.items()}
    figures["not_modified_s"] = median(not_modified)
    return figures


def _session_figures(sessions: list[dict[str, Any]]) -> dict[str, Any]:
    def figure(key: str) -> dict[str, Any] | None:
        runs = [s[key] if isinstance(s[key], list) else [s[key]] for s in sessions]
        if not all(runs):
            return None  # no steady searches
        python = [sum(pair["python"] for pair in pairs) for pairs in runs]
        return _figure(python, [sum(pair["go"] for pair in pairs) for pairs in runs])

    warm = [s["warm_s"] for s in sessions]
    return {
        "import_s": median(s["import_s"] for s in sessions),
        "host_s": median(s["host_s"] for s in sessions),
        "warm_s": None if None in warm else median(warm),
        **{key: figure(key) for key in ("first", "repeated", "steady", "new_block")},
        "repeated_each_ratio": [
            median(s["repeated"][i]["python"] / s["repeated"][i]["go"] for s in sessions)
            for i in range(len(SESSION_QUERIES))
        ],
        "sessions": sessions,
    }


def _go_get_after(bench: Bench, rounds: int) -> dict[str, Any]:
    """The Go's GET /blocks right after one new block (locked again), the dozen reads
    before it 304s (a host with deltas) or full 200s (without)."""
    client = bench.clients["delta"]
    found: dict[str, list[float]] = {"after 304s": [], "after 200s": []}
    for _ in range(rounds):
        for mode, times in found.items():
            tag = client.blocks_read().etag
            for _ in range(12):
                client.blocks_read(etag=tag if mode == "after 304s" else None)
                bench.gold(QUERIES[0].args())
            seq = client.archive("bench: one new block", "nouveau")
            start = time.perf_counter()
            answer = client.blocks_read(etag=tag)
            times.append(time.perf_counter() - start)
            if answer.status != 200:
                raise BenchError(f"GET {BLOCKS_PATH} after a new block: {answer.status}")
            client.lock(seq)
            bench.expect("delta", reads=14)
    return {mode: _seconds(v) for mode, v in found.items()}


def _composition(blocks: Sequence[Block]) -> dict[str, float]:
    """Shares of blocks whose content is ASCII, Latin-1, BMP or wider."""
    tops = [ord(max(block.content, default="\0")) for block in blocks]
    counts = Counter((top >= 0x80) + (top >= 0x100) + (top >= 0x10000) for top in tops)
    kinds = ("ascii", "latin1", "bmp", "astral")
    return {k: round(counts[i] / max(len(blocks), 1), 4) for i, k in enumerate(kinds)}


def _measure_size(bench: Bench, size: int, work_dir: Path) -> dict[str, Any]:
    cfg = bench.cfg
    few = min(cfg.rounds, 3)  # in-process samples and the Go's GET after a new block
    body = bench.read("delta")
    bench.body_bytes = len(body)
    blocks = kernel.blocks_of(body)
    if len(blocks) != size:
        raise BenchError(f"the Go serves {len(blocks)} blocks, {size} were archived")
    entry: dict[str, Any] = {"blocks": size, "body_bytes": len(body)}
    entry["composition"] = _composition(blocks)
    del blocks
    if size <= DETAIL_SIZE:
        _log(f"[bench] {size} blocks: decoders and the word index…")
        entry["decode_s"] = kernel.decoders(body, min(cfg.rounds, 5))
        entry["index"] = kernel.word_index(body, few)
    if cfg.kernel and size == max((s for s in cfg.sizes if s <= DETAIL_SIZE), default=0):
        _log(f"[bench] {size} blocks: kernel…")
        golds = {q.name: bench.gold(q.args()) for q in QUERIES}
        samples, checked = kernel.kernel(body, golds, work_dir, rounds=few, min_time=cfg.min_time)
        entry["kernel"] = {name: _figure(*sides) for name, sides in samples.items()}
        bench.checked += checked
        _log(f"[bench] {size} blocks: the Go's GET after a new block…")
        entry["go_get_after_new_block"] = _go_get_after(bench, few)
    del body
    gc.collect()
    _log(f"[bench] {size} blocks: sessions…")
    entry.update(_sessions(bench, size))
    for kind in GOS:
        bench.request_log_check(kind)
    if cfg.memory and (size >= DETAIL_SIZE or size == max(cfg.sizes)):
        modes = ("rss", "tracemalloc") if size <= DETAIL_SIZE else ("rss",)
        entry["memory"] = _measure_memory(bench, entry, modes)
    if size == max(cfg.sizes):
        entry["herd"] = {kind: bench.herd(size, kind, callers) for kind, callers in HERDS}
        bench.request_log_check("delta")
    return entry


def _measure_memory(bench: Bench, entry: dict[str, Any], modes: Sequence[str]) -> dict[str, Any]:
    """The Python path's peak and kept memory for the first query over this archive."""
    query = SESSION_QUERIES[0]
    _log(f"[bench] {entry['blocks']} blocks: memory of the Python path…")
    digest = hashlib.sha256(bench.gold(query.args()).encode()).hexdigest()
    body_bytes = entry["body_bytes"]
    memory = {"blocks": entry["blocks"], "query": query.name, "body_bytes": body_bytes}
    for mode in modes:
        argv = ["--base-url", bench.gos["delta"].base_url, "--args", query.args(), "--mode", mode]
        argv += ["--searches", "3", "--cache-bytes", str(cache_bytes_for(body_bytes, "delta"))]
        found = _child("bench.memory", *argv)
        for n, search in enumerate(found["searches"], 1):
            bench.expect("delta", searches=1, checked=1)
            if search["output_sha256"] != digest:
                raise ParityFailure(f"memory child ({mode}), search {n}: output differs")
            search["ratio"] = search["peak_bytes"] / body_bytes
        memory[mode] = found["searches"]
        memory[f"{mode}_kept"] = found["kept"]
    bench.request_log_check("delta")
    return memory


def _time_make_parity(runs: int) -> dict[str, Any]:
    seconds: list[float] = []
    for _ in range(runs):
        start = time.perf_counter()
        done = _run(["make", "--no-print-directory", "parity"], timeout=600)
        seconds.append(time.perf_counter() - start)
        found = {"seconds": seconds, "last_line": (done.stdout.strip().splitlines() or [""])[-1]}
        if done.returncode != 0:
            return {"ok": False, **found, "stderr": done.stderr[-500:]}
    return {"ok": True, **found, "median_s": median(seconds)}


def _machine() -> dict[str, object]:
    """What the figures were measured on, as results.json records it."""
    info = Path("/proc/cpuinfo").read_text() if Path("/proc/cpuinfo").exists() else ""
    cpu = re.search(r"^model name\s*:\s*(.+)$", info, re.MULTILINE)
    try:
        memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError):
        memory = 0
    return {
        "cpu": cpu[1].strip() if cpu else platform.processor() or "unknown CPU",
        "cores": os.cpu_count(),
        "memory_gib": round(memory / 2**30, 1) or None,
        "os": f"{platform.system()} {platform.release()} {platform.machine()}",
        "python": f"{platform.python_implementation()} {platform.python_version()}",
        "python_executable": sys.executable,
    }


def _load() -> list[float]:
    """The 1, 5 and 15-minute load averages (empty where unknown)."""
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:
        return []


def run(cfg: Config) -> dict[str, Any]:
    """Run the whole bench; the results (as results.json holds them)."""
    started = time.time()
    config = {"sizes": cfg.sizes, "rounds": cfg.rounds, "min_time_s": cfg.min_time}
    config |= {"seed": cfg.seed, "quick": cfg.quick, "argv": list(cfg.argv)}
    config["queries"] = [{"name": q.name, "args": q.args()} for q in SESSION_QUERIES]
    results: dict[str, Any] = {"machine": _machine(), "load_before": _load(), "config": config}
    results["sizes"] = []
    _log("[bench] cold start (fresh processes)…")
    runs, modes = (1, ("pyc",)) if cfg.quick else (5, coldstart.MODES)
    results["coldstart"] = coldstart.measure(runs=runs, modes=modes)[str(ROOT)]
    specs = generate_blocks(max(cfg.sizes), cfg.seed)
    reference = GoReference()
    (ROOT / ".cache" / "bench").mkdir(parents=True, exist_ok=True)
    with contextlib.ExitStack() as stack:
        enter = stack.enter_context
        work = enter(tempfile.TemporaryDirectory(prefix="run-", dir=ROOT / ".cache" / "bench"))
        gos = {kind: enter(reference.start(etag=kind == "delta")) for kind in GOS}
        clients = {k: enter(GoClient(go.connection, timeout=TIMEOUT)) for k, go in gos.items()}
        results["go"] = gos["delta"].version()
        bench = Bench(cfg, gos, clients)
        for before, size in pairwise([0, *cfg.sizes]):
            _log(f"[bench] {size} blocks: archiving…")
            batch = [(spec.label, spec.content, False) for spec in islice(specs, size - before)]
            chunks = [batch[at : at + 2000] for at in range(0, len(batch), 2000)]
            load_s = max(  # archived by /debug/archive, 2,000 blocks a request
                sum(kernel.timed(client.archive_many, chunk) for chunk in chunks)
                for client in bench.clients.values()
            )
            results["sizes"].append(_measure_size(bench, size, Path(work)) | {"archive_s": load_s})
    if cfg.parity_runs > 0:
        _log("[bench] make parity…")
        results["make_parity"] = _time_make_parity(cfg.parity_runs)
    results["load_after"] = _load()
    # Reached only when every output was identical and the request logs were as expected.
    parity = {"checked_outputs": bench.checked, "all_identical": True}
    results["parity"] = parity | {"python_path_called_go_tool": False}
    results["elapsed_s"] = time.time() - started
    results["targets"] = targets(results)
    return results


def _sizes(text: str) -> list[int]:
    try:
        sizes = sorted({int(part) for part in text.split(",") if part.strip()})
    except ValueError:
        sizes = []
    if not sizes or sizes[0] < 1:
        raise argparse.ArgumentTypeError("sizes are positive integers, such as 1000,10000")
    return sizes


def _positive(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return int(text)


def parse_args(argv: Sequence[str]) -> Config:
    """The Config for the command line."""
    parser = argparse.ArgumentParser(
        prog="python -m bench",
        description="recall_search, Python against Go, side by side (`make bench`).",
    )
    add = parser.add_argument
    add("--sizes", type=_sizes, help="archive sizes (default 100,10000,100000)")
    add("--rounds", type=_positive, help="sessions of each kind per size (default 3)")
    sample = "seconds per kernel sample, each side (default %(default)s)"
    add("--min-time", type=float, default=0.3, help=sample)
    smoke = "smoke run: tiny sizes, 2 rounds, no kernel, one cold start run, no make parity"
    add("--quick", action="store_true", help=smoke)
    add("--no-memory", dest="memory", action="store_false", help="skip the memory measurement")
    add("--no-kernel", dest="kernel", action="store_false", help="skip the kernel measurement")
    add("--parity-runs", type=int, help="times `make parity` is timed (default 3, quick 0)")
    add("--seed", type=int, default=DEFAULT_SEED)
    out = "where results.json and RESULTS.md go (default bench/)"
    add("--out-dir", type=Path, default=ROOT / "bench", help=out)
    cfg = parser.parse_args(argv)
    quick: bool = cfg.quick
    cfg.sizes = cfg.sizes or list(QUICK_SIZES if quick else DEFAULT_SIZES)
    cfg.rounds = cfg.rounds or (2 if quick else 3)
    cfg.kernel = cfg.kernel and not quick
    cfg.parity_runs = (0 if quick else 3) if cfg.parity_runs is None else cfg.parity_runs
    cfg.argv = list(argv)
    return cfg


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``python -m bench``: 0, 1 on a parity failure, 2 when a measure fails."""
    cfg = parse_args(sys.argv[1:] if argv is None else argv)
    try:
        results = run(cfg)
    except ParityFailure as failure:
        print(f"bench: PARITY FAILURE: {failure}", file=sys.stderr)
        return 1
    except BenchError as error:
        print(f"bench: {error}", file=sys.stderr)
        return 2
    text = render_text(results)
    print(text)
    cfg.out_dir.mkdir(parents=True, exist_ok=True)
    (cfg.out_dir / "results.json").write_text(json.dumps(results, indent=2) + "\n")
    (cfg.out_dir / "RESULTS.md").write_text(render_markdown(results, text))
    return 0
