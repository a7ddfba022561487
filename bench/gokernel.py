"""Go's side of the kernel: ``BenchmarkSearch`` of ``goref/recall`` over a blocks file.

The test binary is built once per run (``go test -c``, Go's build cache makes it
quick) and run once per sample, so that Go and Python samples can alternate.
Each run also writes Go's output for the search (``RECALL_BENCH_OUTPUT``), which
the caller compares with Python's, byte for byte.
"""

from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

from parity.reference import go_env, go_executable

__all__ = ["GoBenchError", "GoKernel", "GoSample", "parse_ns_per_op"]

_ROOT = Path(__file__).resolve().parent.parent
_LINE = re.compile(
    r"^BenchmarkSearch(?:-\d+)?\s+(\d+)\s+([0-9]+(?:\.[0-9]*)?(?:e[+-]?[0-9]+)?) ns/op",
    re.MULTILINE,
)


class GoBenchError(Exception):
    """The Go benchmark could not be built or run, or printed no figure."""


@dataclass(frozen=True)
class GoSample:
    """One run of BenchmarkSearch: iterations, ns/op, and the search's output."""

    iterations: int
    ns_per_op: float
    output: str


def parse_ns_per_op(text: str) -> list[tuple[int, float]]:
    """The (iterations, ns/op) of each BenchmarkSearch line in ``go test -bench`` output."""
    return [(int(m[1]), float(m[2])) for m in _LINE.finditer(text)]


class GoKernel:
    """The BenchmarkSearch test binary, built into ``workdir``."""

    def __init__(self, workdir: Path) -> None:
        self.workdir = workdir
        self.binary = workdir / "recall.test"

    def build(self) -> None:
        """``go test -c`` the package goref/recall."""
        self.workdir.mkdir(parents=True, exist_ok=True)
        done = subprocess.run(
            [str(go_executable()), "test", "-c", "-o", str(self.binary), "./recall"],
            cwd=_ROOT / "goref",
            env=go_env(),
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
        if done.returncode != 0:
            raise GoBenchError(f"go test -c ./recall failed:\n{done.stderr.strip()}")

    def run(self, blocks_file: Path, args: str, *, benchtime: float) -> GoSample:
        """One BenchmarkSearch run over ``blocks_file`` with the tool arguments ``args``."""
        output_file = self.workdir / "go-output.txt"
        output_file.unlink(missing_ok=True)
        env = go_env(
            {
                "RECALL_BENCH_BLOCKS": str(blocks_file),
                "RECALL_BENCH_ARGS": args,
                "RECALL_BENCH_OUTPUT": str(output_file),
            }
        )
        argv = [
            str(self.binary),
            "-test.run",
            "^$",
            "-test.bench",
            "^BenchmarkSearch$",
            "-test.count",
            "1",
            "-test.benchtime",
            f"{benchtime}s",
        ]
        done = subprocess.run(
            argv, env=env, capture_output=True, text=True, timeout=600, check=False
        )
        figures = parse_ns_per_op(done.stdout)
        if done.returncode != 0 or len(figures) != 1:
            detail = (done.stdout + done.stderr).strip()[-2000:]
            raise GoBenchError(f"BenchmarkSearch failed (exit {done.returncode}):\n{detail}")
        iterations, ns = figures[0]
        output = output_file.read_bytes().decode("utf-8")
        return GoSample(iterations, ns, output)
