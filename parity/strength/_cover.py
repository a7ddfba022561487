"""Coverage of the tool logic, Go's while recording and Python's under replay: the tools'
own (``go build -cover``, ``coverage run --branch``), their figures over the tool logic
less what the explanations leave out (``docs/strength.md``)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from parity.errors import ParityError
from parity.project import project_root
from parity.strength._explain import PACKAGE, Explanations, Statement, module_file

GO_TOOL_PACKAGE = "recallref/recall"
"""The Go package holding the tool logic."""


@dataclass(frozen=True)
class Gap:
    """Code no golden reached: a Python line or branch (``line->target``), or a Go block."""

    where: str
    function: str
    code: str
    reason: str | None
    """Why no golden can reach it, if an explanation says it."""


@dataclass
class Coverage:
    """One side's coverage of the tool logic under the goldens."""

    title: str
    summary: str
    """The raw figure, as ``100.0% of statements (89/89)``."""
    reached: int
    reachable: int
    """All less what is explained as unreachable."""
    gaps: list[Gap]
    notes: list[str]
    """Lines for information (the other packages or files, what is left out)."""
    executed: set[tuple[str, int]] = field(default_factory=set)
    """(file, line) of every line of the port that ran (Python)."""
    stale: list[str] = field(default_factory=list)
    """Explanations that name no unreached code (Go)."""


def pct(n: int, d: int) -> str:
    """``n`` of ``d`` as a percentage."""
    return f"{100.0 * n / d:.1f}%" if d else "100.0%"


def _run(argv: list[str], what: str) -> None:
    done = subprocess.run(argv, cwd=project_root(), capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise ParityError(f"{what} failed:\n{(done.stdout + done.stderr).strip()[-2000:]}")


def _gap(file: str, s: Statement | None, where: str, reason: str | None) -> Gap:
    return Gap(f"{file}:{where}", s.function if s else "", s.text if s else "", reason)


def python_coverage(corpus: str, explanations: Explanations) -> Coverage:
    """``coverage run`` of ``parity replay``; the tool logic's lines and branches."""
    with tempfile.TemporaryDirectory(prefix="parity-strength-") as tmp:
        data, report = Path(tmp) / "coverage", Path(tmp) / "coverage.json"
        cov = [sys.executable, "-m", "coverage"]
        run = [*cov, "run", "--branch", f"--source={PACKAGE}", f"--data-file={data}"]
        _run([*run, "-m", "parity", "replay", "--corpus", corpus], "the replay under coverage")
        _run([*cov, "json", f"--data-file={data}", "-o", str(report)], "coverage json")
        files = json.loads(report.read_text("utf-8"))["files"]
    statements: dict[str, dict[int, Statement]] = {}
    for s in explanations.statements():
        statements.setdefault(s.file, {})[s.line] = s
    tool = {module_file(m) for m in explanations.tool_logic_modules()}
    lines, branches = [0, 0, 0], [0, 0, 0]  # reached, total, explained
    gaps, skipped, others = [], set(), []
    for file, entry in sorted(files.items()):
        if file not in tool:
            summary = entry["summary"]
            others.append(
                f"     {file}: lines {summary['percent_statements_covered']:.1f}%, "
                f"branches {summary['percent_branches_covered']:.1f}%"
            )
            continue
        at = statements.get(file, {})
        out = {
            n: s.function for n, s in at.items() if explanations.not_tool_logic_reason(s.function)
        }
        skipped |= {out[n] for n in entry["missing_lines"] if n in out}
        missing = [n for n in entry["missing_lines"] if n not in out]
        hit = [n for n in entry["executed_lines"] if n not in out]
        missing_br = [(src, dst) for src, dst in entry["missing_branches"] if src not in out]
        hit_br = sum(src not in out for src, _ in entry["executed_branches"])
        lines[0] += len(hit)
        lines[1] += len(missing) + len(hit)
        branches[0] += hit_br
        branches[1] += hit_br + len(missing_br)
        ends = {*missing, *(dst for _, dst in missing_br)}
        reasons = {n: explanations.why_unreachable(at[n]) for n in ends if n in at}
        for n in missing:
            gaps.append(_gap(file, at.get(n), str(n), reasons.get(n)))
            lines[2] += gaps[-1].reason is not None
        for src, dst in missing_br:
            branches[2] += reasons.get(dst) is not None
            if dst not in missing:  # else the missing line says it already
                where = f"{src}->{'exit' if dst < 0 else dst}"
                gaps.append(_gap(file, at.get(src), where, reasons.get(dst)))
    notes = ["   not tool logic (unreached, left out of the figure):"] if skipped else []
    why = explanations.not_tool_logic_reason
    notes += [f"   - {function}: {why(function)}" for function in sorted(skipped)]
    return Coverage(
        "Python coverage of the tool logic under replay (lines, branches)",
        f"lines {pct(*lines[:2])} ({lines[0]}/{lines[1]}), "
        f"branches {pct(*branches[:2])} ({branches[0]}/{branches[1]})",
        lines[0] + branches[0],
        lines[1] + branches[1] - lines[2] - branches[2],
        gaps,
        [*notes, "   for information, the port's other files:", *others],
        {(f, n) for f, e in files.items() for n in e["executed_lines"]},
    )


_PROFILE_LINE = re.compile(r"^(.+)/([^/]+):(\d+)(\.\d+,\d+\.\d+) (\d+) (\d+)$")
_GO_FUNC = re.compile(r"^func (?:\([^)]*\) )?(\w+)")


def go_coverage(corpus_name: str, explanations: Explanations) -> Coverage:
    """Record the corpus into a Go reference built with ``-cover``; its coverage."""
    from parity.corpus import get_corpus
    from parity.record import FIRST_SEQ, record
    from parity.reference import GoReference

    reference = GoReference()
    with tempfile.TemporaryDirectory(prefix="parity-strength-go-") as tmp:
        counters, profile = Path(tmp) / "counters", Path(tmp) / "profile.txt"
        counters.mkdir()
        with reference.start(first_seq=FIRST_SEQ, cover=True, cover_dir=counters) as go:
            recorded = record(get_corpus(corpus_name), go_url=go.base_url)
        # stopped with SIGTERM: the counters are written
        reference.go("tool", "covdata", "textfmt", "-i", str(counters), "-o", str(profile))
        text = profile.read_text("utf-8")
    # covdata merges the counter files: one profile line a block
    matches = (m for m in map(_PROFILE_LINE.match, text.splitlines()) if m is not None)
    blocks = sorted((m[1], m[2], int(m[3]), m[4], int(m[5]), int(m[6])) for m in matches)
    by_package: dict[str, list[int]] = {}
    gaps, explained, named = [], 0, set()
    for package, file, line, _, statements, count in blocks:
        totals = by_package.setdefault(package, [0, 0])
        totals[0] += statements if count else 0
        totals[1] += statements
        if package != GO_TOOL_PACKAGE or count or not statements:
            continue
        source = (reference.source / package.partition("/")[2] / file).read_text("utf-8")
        lines = source.splitlines()
        function = next((f[1] for f in map(_GO_FUNC.match, lines[line - 1 :: -1]) if f), "")
        hits = [
            (g, e) for g in explanations.go_unreachable for e in g.entries if e.names(source, line)
        ]
        named |= {e for _, e in hits}
        explained += statements if hits else 0
        why = hits[0][0].why if hits else None
        gaps.append(Gap(f"{package}/{file}:{line}", function, lines[line - 1].strip(), why))
    reached, total = by_package.get(GO_TOOL_PACKAGE, [0, 0])
    others = [
        f"{p} {pct(r, t)}" for p, (r, t) in sorted(by_package.items()) if p != GO_TOOL_PACKAGE
    ]
    return Coverage(
        f"Go coverage of the tool logic ({GO_TOOL_PACKAGE}), recording "
        f"{len(recorded.calls)} calls into a Go reference built with -cover",
        f"{pct(reached, total)} of statements ({reached}/{total})",
        reached,
        total - explained,
        gaps,
        [f"   for information: {', '.join(others)}"],
        stale=[
            f"go_unreachable {g.id}: orphaned: no unreached block is {e}"
            for g in explanations.go_unreachable
            for e in g.entries
            if e not in named
        ],
    )
