"""Measured in the bench's own process: the kernel beside Go's, the decoders, the index.

Go's side of the kernel is ``BenchmarkSearch`` of ``goref/recall``, its test binary
built once and run once per sample, so that Go and Python samples alternate; each run
writes Go's output (``RECALL_BENCH_OUTPUT``), compared with Python's byte for byte.
"""

from __future__ import annotations

import contextlib
import gc
import importlib
import json
import re
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from statistics import median
from typing import Any

from bench import BenchError, ParityFailure
from bench.data import QUERIES
from parity.reference import go_env, go_executable
from recall import Block, MemoryArchive, run_tool
from recall._blocks import read_set
from recall._fast import available, decode_item_msgspec, decode_items_msgspec
from recall._index import WordIndex

_ROOT = Path(__file__).resolve().parent.parent
_LINE = re.compile(
    r"^BenchmarkSearch(?:-\d+)?\s+(\d+)\s+([0-9]+(?:\.[0-9]*)?(?:e[+-]?[0-9]+)?) ns/op",
    re.MULTILINE,
)


def timed(call: Callable[..., object], *args: object) -> float:
    """The seconds ``call(*args)`` takes; what it returns is freed after the clock stops."""
    start = time.perf_counter()
    _kept = call(*args)
    return time.perf_counter() - start


def check_parity(what: str, got: str, gold: str) -> None:
    """ParityFailure, naming the first differing character, unless got == gold."""
    if got == gold:
        return
    pairs = enumerate(zip(got, gold, strict=False))
    at = next((i for i, (a, b) in pairs if a != b), min(len(got), len(gold)))
    raise ParityFailure(
        f"{what}: Python's output differs from Go's at character {at}:\n"
        f"  python: {got[max(0, at - 60) : at + 60]!r}\n"
        f"  go:     {gold[max(0, at - 60) : at + 60]!r}"
    )


def ns_per_op(text: str) -> list[tuple[int, float]]:
    """The (iterations, ns/op) of each BenchmarkSearch line in ``go test -bench`` output."""
    return [(int(m[1]), float(m[2])) for m in _LINE.finditer(text)]


def _go(argv: list[str], what: str, **kwargs: Any) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(argv, capture_output=True, text=True, timeout=600, **kwargs)
    if done.returncode != 0:
        detail = (done.stdout + done.stderr).strip()[-2000:]
        raise BenchError(f"{what} failed (exit {done.returncode}):\n{detail}")
    return done


def _go_search(binary: Path, blocks_file: Path, args: str, benchtime: float) -> tuple[float, str]:
    """One BenchmarkSearch run over ``blocks_file``: seconds a search, and its output."""
    output_file = binary.with_name("go-output.txt")
    output_file.unlink(missing_ok=True)
    extra = {"RECALL_BENCH_BLOCKS": str(blocks_file), "RECALL_BENCH_ARGS": args}
    extra["RECALL_BENCH_OUTPUT"] = str(output_file)
    argv = [str(binary), "-test.run", "^$", "-test.bench", "^BenchmarkSearch$", "-test.count", "1"]
    done = _go([*argv, "-test.benchtime", f"{benchtime}s"], "BenchmarkSearch", env=go_env(extra))
    figures = ns_per_op(done.stdout)
    if len(figures) != 1:
        raise BenchError(f"BenchmarkSearch printed {len(figures)} figures:\n{done.stdout[-2000:]}")
    return figures[0][1] / 1e9, output_file.read_bytes().decode("utf-8")


Samples = dict[str, tuple[list[float], list[float]]]  # seconds a search by query: (Python, Go)


def blocks_of(body: bytes) -> list[Block]:
    """The blocks of a ``/blocks`` body."""
    return [Block(b["seq"], b["label"], b["content"]) for b in json.loads(body)["blocks"]]


def kernel(
    body: bytes, golds: dict[str, str], work_dir: Path, *, rounds: int, min_time: float
) -> tuple[Samples, int]:
    """run_tool over the blocks in memory against Go's BenchmarkSearch, alternating, for
    each of ``QUERIES`` (``golds``: Go's outputs by name); the samples, the outputs checked.
    The test binary and the blocks it reads are left in ``work_dir`` (the run's own)."""
    binary, blocks_file = work_dir / "recall.test", work_dir / "blocks.json"
    cmd = [str(go_executable()), "test", "-c", "-o", str(binary), "./recall"]
    _go(cmd, "go test -c ./recall", cwd=_ROOT / "goref", env=go_env())
    blocks_file.write_bytes(body)
    archive = MemoryArchive(blocks_of(body))
    found: Samples = {}
    checked = 0
    for query in QUERIES:
        args, gold = query.args(), golds[query.name]
        python, go = found[query.name] = ([], [])
        for r in range(rounds):
            for side in ("go", "python") if r % 2 == 0 else ("python", "go"):
                if side == "go":
                    seconds, output = _go_search(binary, blocks_file, args, min_time)
                    check_parity(f"Go BenchmarkSearch {query.name}", output, gold)
                    go.append(seconds)
                    continue
                spent, calls = 0.0, 0
                while spent < min_time or calls == 0:
                    start = time.perf_counter()
                    output = run_tool("recall_search", args, archive)
                    spent += time.perf_counter() - start
                    calls += 1
                    check_parity(f"kernel {query.name}", output, gold)
                checked += calls
                python.append(spent / calls)
    return found, checked


def word_index(body: bytes, rounds: int) -> dict[str, Any]:
    """The word index over the whole set: its build time and its size, in this process."""
    blocks = read_set(bytearray(body), decode=decode_item_msgspec)
    seconds: list[float] = []
    for _ in range(rounds):
        gc.collect()
        index = WordIndex()
        start = time.perf_counter()
        for images in blocks.images:
            index.add(images)
        seconds.append(time.perf_counter() - start)
    found: dict[str, Any] = {"build_s": median(seconds), "build_samples_s": seconds}
    found |= {"index_bytes": index.size, "set_bytes": blocks.size}
    return found | {"image_bytes": blocks.image_bytes, "body_bytes": len(body)}


def decoders(body: bytes, rounds: int) -> dict[str, float]:
    """The median seconds of each decoder on body (the copy into a bytearray included), by
    name: the port's, json.loads, and those installed."""
    found: dict[str, Callable[[bytes], object]] = {
        "port, json (decoded and lowered)": lambda body: read_set(bytearray(body)),
    }
    if available():
        found["port, msgspec (decoded and lowered)"] = lambda body: read_set(
            bytearray(body), decode=decode_item_msgspec, decode_many=decode_items_msgspec
        )
    found["json.loads (whole body, decoded only)"] = json.loads
    with contextlib.suppress(ImportError):
        found["orjson (decoded only)"] = importlib.import_module("orjson").loads
    if available():
        msgspec: Any = importlib.import_module("msgspec")
        item = msgspec.defstruct("Item", [("seq", int), ("label", str), ("content", str)])
        doc = msgspec.defstruct("Doc", [("blocks", list[item])])  # type: ignore[valid-type]
        found["msgspec typed (decoded only)"] = msgspec.json.Decoder(doc).decode
    return {name: median(timed(f, body) for _ in range(rounds)) for name, f in found.items()}
