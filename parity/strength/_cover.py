"""Coverage of the tool logic: Go's while recording, Python's under replay.

Go: the reference built with ``go build -cover`` (``GoReference.start(cover=True)``),
the corpus recorded into it as ``make golden`` does, its counters turned into a
profile by ``go tool covdata textfmt``. Python: ``coverage run --branch`` of the
replay of ``make parity`` (``python -m parity replay``), read with ``coverage json``.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from parity.project import project_root
from parity.strength._explain import (
    PACKAGE,
    Explanations,
    Problem,
    module_file,
    statements_of_all,
)

__all__ = ["GO_TOOL_PACKAGE", "Gap", "GoCoverage", "PyCoverage", "go_coverage", "python_coverage"]

GO_TOOL_PACKAGE = "recallref/recall"
"""The Go package holding the tool logic."""


@dataclass(frozen=True)
class Gap:
    """Code no golden reached: a Python line or branch (``line->target``), or a Go block."""

    where: str
    function: str
    code: str
    reason: str | None


@dataclass(frozen=True)
class Figure:
    """Reached of all, and the reachable (all less what is explained as unreachable)."""

    reached: int
    total: int
    explained: int

    @property
    def percent(self) -> float:
        """Percent of all."""
        return 100.0 * self.reached / self.total if self.total else 100.0

    @property
    def reachable_percent(self) -> float:
        """Percent of what a golden can reach."""
        reachable = self.total - self.explained
        return 100.0 * self.reached / reachable if reachable else 100.0


@dataclass
class GoCoverage:
    """Go's statements of the tool logic reached while recording, and every package's."""

    figure: Figure
    gaps: list[Gap]
    packages: dict[str, float]
    calls: int


@dataclass
class PyCoverage:
    """Python's tool logic under replay: lines and branches, and every file of the port."""

    lines: Figure
    branches: Figure
    gaps: list[Gap]
    executed: set[tuple[str, int]]
    """(file, line) of every line of the port that ran."""
    files: dict[str, str]
    """The port's other files: a summary of each."""
    skipped: dict[str, str]
    """What is not tool logic and was not reached: function -> why."""

    @property
    def reachable_percent(self) -> float:
        """Lines and branches together, of what a golden can reach."""
        reached = self.lines.reached + self.branches.reached
        explained = self.lines.explained + self.branches.explained
        total = self.lines.total + self.branches.total
        return Figure(reached, total, explained).reachable_percent


def _run(argv: list[str], what: str) -> None:
    done = subprocess.run(argv, cwd=project_root(), capture_output=True, text=True, check=False)
    if done.returncode != 0:
        from parity.errors import ReplayError

        raise ReplayError(f"{what} failed:\n{(done.stdout + done.stderr).strip()[-2000:]}")


def python_coverage(corpus: str, explanations: Explanations) -> PyCoverage:
    """``coverage run`` of ``parity replay``; the tool logic's lines and branches."""
    with tempfile.TemporaryDirectory(prefix="parity-strength-") as tmp:
        data, report = Path(tmp) / "coverage", Path(tmp) / "coverage.json"
        cov = [sys.executable, "-m", "coverage"]
        run = [*cov, "run", "--branch", f"--source={PACKAGE}", f"--data-file={data}"]
        _run([*run, "-m", "parity", "replay", "--corpus", corpus], "the replay under coverage")
        _run([*cov, "json", f"--data-file={data}", "-o", str(report)], "coverage json")
        files = json.loads(report.read_text("utf-8"))["files"]
    statements = {(s.file, s.line): s for s in statements_of_all(explanations)}
    tool = {module_file(m) for m in explanations.tool_logic_modules()}
    counts = dict.fromkeys(("lines", "lines_hit", "lines_ok", "br", "br_hit", "br_ok"), 0)
    gaps, skipped, others = [], {}, {}
    for file, entry in sorted(files.items()):
        if file not in tool:
            s = entry["summary"]
            others[file] = f"lines {s['percent_statements_covered']:.1f}%, " + (
                f"branches {s['percent_branches_covered']:.1f}%"
            )
            continue

        def measured(line: int) -> bool:
            s = statements.get((file, line))  # noqa: B023 (used in this iteration only)
            if s is None or explanations.is_tool_logic(s.function):
                return True
            if line in entry["missing_lines"]:  # noqa: B023
                skipped[s.function] = explanations.not_tool_logic_reason(s.function) or ""
            return False

        def why(line: int) -> str | None:
            s = statements.get((file, line))  # noqa: B023
            g = s and explanations.group("unreachable", s.key)
            return g.why if g else None

        missing = [n for n in entry["missing_lines"] if measured(n)]
        hit = [n for n in entry["executed_lines"] if measured(n)]
        counts["lines"] += len(missing) + len(hit)
        counts["lines_hit"] += len(hit)
        for n in missing:
            reason = why(n)
            counts["lines_ok"] += reason is not None
            s = statements.get((file, n))
            gaps.append(Gap(f"{file}:{n}", s.function if s else "", s.text if s else "", reason))
        hit_br = [b for b in entry["executed_branches"] if measured(b[0])]
        missing_br = [b for b in entry["missing_branches"] if measured(b[0])]
        counts["br"] += len(hit_br) + len(missing_br)
        counts["br_hit"] += len(hit_br)
        for src, dst in missing_br:
            reason = why(dst) if dst > 0 else None
            counts["br_ok"] += reason is not None
            if dst > 0 and dst in missing:
                continue  # the missing line says it already
            s = statements.get((file, src))
            to = "exit" if dst < 0 else dst
            gaps.append(
                Gap(f"{file}:{src}->{to}", s.function if s else "", s.text if s else "", reason)
            )
    return PyCoverage(
        Figure(counts["lines_hit"], counts["lines"], counts["lines_ok"]),
        Figure(counts["br_hit"], counts["br"], counts["br_ok"]),
        gaps,
        {(f, n) for f, e in files.items() for n in e["executed_lines"]},
        others,
        skipped,
    )


_PROFILE_LINE = re.compile(r"^(.+)/([^/]+):(\d+)(\.\d+,\d+\.\d+) (\d+) (\d+)$")
_GO_FUNC = re.compile(r"^func (?:\([^)]*\) )?(\w+)")


def go_coverage(corpus_name: str, explanations: Explanations) -> GoCoverage:
    """Record the corpus into a Go reference built with ``-cover``; its coverage."""
    from parity.corpus import get_corpus
    from parity.errors import GoReferenceError
    from parity.record import FIRST_SEQ, record
    from parity.reference import GoReference, go_env, go_executable

    reference = GoReference()
    with tempfile.TemporaryDirectory(prefix="parity-strength-go-") as tmp:
        counters, profile = Path(tmp) / "counters", Path(tmp) / "profile.txt"
        counters.mkdir()
        with reference.start(first_seq=FIRST_SEQ, cover=True, cover_dir=counters) as go:
            recorded = record(get_corpus(corpus_name), go_url=go.base_url)
        # stopped with SIGTERM: the counters are written
        argv = [str(go_executable()), "tool", "covdata", "textfmt", "-i", str(counters)]
        done = subprocess.run(
            [*argv, "-o", str(profile)],
            cwd=reference.source,
            env=go_env(),
            capture_output=True,
            text=True,
            check=False,
        )
        if done.returncode != 0:
            raise GoReferenceError(f"`go tool covdata textfmt` failed: {done.stderr.strip()}")
        text = profile.read_text("utf-8")
    blocks: dict[tuple[str, str, int, str], tuple[int, int]] = {}  # merged over counter files
    for m in map(_PROFILE_LINE.match, text.splitlines()):
        if m is not None:
            key = (m[1], m[2], int(m[3]), m[4])
            old = blocks.get(key, (0, 0))
            blocks[key] = (int(m[5]), max(old[1], int(m[6])))
    by_package: dict[str, list[int]] = {}
    gaps = []
    explained = 0
    for (package, file, line, _), (statements, count) in sorted(blocks.items()):
        totals = by_package.setdefault(package, [0, 0])
        totals[0] += statements if count else 0
        totals[1] += statements
        if package != GO_TOOL_PACKAGE or count or not statements:
            continue
        source = (reference.source / package.partition("/")[2] / file).read_text("utf-8")
        lines = source.splitlines()
        function = next((f[1] for f in map(_GO_FUNC.match, lines[line - 1 :: -1]) if f), "")
        code = lines[line - 1].strip()
        group = explanations.group(
            "go_unreachable", (function, re.sub(r"\s+", "", code), "", "", 1)
        )
        explained += statements if group else 0
        gaps.append(Gap(f"{package}/{file}:{line}", function, code, group.why if group else None))
    reached, total = by_package.get(GO_TOOL_PACKAGE, [0, 0])
    percents = {p: 100.0 * r / t if t else 100.0 for p, (r, t) in sorted(by_package.items())}
    return GoCoverage(Figure(reached, total, explained), gaps, percents, len(recorded.calls))


def go_problems(cov: GoCoverage, explanations: Explanations) -> list[Problem]:
    """Go entries that name no unreached block."""
    named = {(g.function, re.sub(r"\s+", "", g.code)) for g in cov.gaps}
    return [
        Problem(g.label, "orphaned", f"no unreached block is {e}")
        for g in explanations.of("go_unreachable")
        for e in g.entries
        if e.key[:2] not in named
    ]
