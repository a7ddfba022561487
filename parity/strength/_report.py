"""The report of ``parity strength``: the three figures as text, a Markdown table of
them, and what no longer fits in the explanations."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TextIO

from parity.strength._explain import Problem
from parity.strength._gocover import GO_TOOL_PACKAGE, GoCoverage
from parity.strength._mutants import Mutant, short
from parity.strength._pycover import PyCoverage
from parity.strength._runner import MutationRun

__all__ = ["Figures", "entry_for", "markdown", "print_go", "print_mutation", "print_problems"]


def _pct(n: int, d: int) -> str:
    return f"{100.0 * n / d:.1f}%" if d else "100.0%"


def print_go(cov: GoCoverage, out: TextIO) -> None:
    """Section 1: Go coverage, every unreached block with its reason."""
    reached, total = cov.statements(GO_TOOL_PACKAGE)
    unreached = cov.unreached()
    explained = [b for b in unreached if b.reason]
    print(
        f"1. Go coverage of the tool logic ({GO_TOOL_PACKAGE}), recording {cov.calls} calls "
        "into a Go reference built with -cover",
        file=out,
    )
    print(
        f"   {_pct(reached, total)} of statements ({reached}/{total}); "
        f"{cov.reachable_percent():.1f}% of the reachable "
        f"({len(explained)} unreached block(s) explained, "
        f"{len(unreached) - len(explained)} unexplained)",
        file=out,
    )
    for b in unreached:
        _print_unreached(f"{b.where} {b.function}: {b.code}", b.reason, out)
    others = [p for p in cov.packages() if p != GO_TOOL_PACKAGE]
    if others:
        info = ", ".join(f"{p} {cov.percent(p):.1f}%" for p in others)
        print(f"   for information: {info}", file=out)
    for line in cov.drift:
        print(f"   NOTE the committed journal differs from this recording: {line}", file=out)


def _print_unreached(place: str, reason: str | None, out: TextIO) -> None:
    """One unreached place, and why (or that a corpus case must reach it)."""
    why = f"unreachable: {reason}" if reason else "UNEXPLAINED: add a corpus case"
    print(f"   - {place}", file=out)
    print(f"       {why}", file=out)


def print_python(cov: PyCoverage, out: TextIO) -> None:
    """Section 2: Python coverage, every unreached line and branch with its reason."""
    t = cov.tool_logic()
    files = cov.tool_logic_files()
    print(
        f"2. Python coverage of recall/ under replay ({cov.passed} passed, {cov.failed} failed; "
        "archive and fallback passes)",
        file=out,
    )
    print(
        f"   tool logic ({', '.join(files)}): "
        f"lines {_pct(t['covered_lines'], t['statements'])} "
        f"({t['covered_lines']}/{t['statements']}), "
        f"branches {_pct(t['covered_branches'], t['branches'])} "
        f"({t['covered_branches']}/{t['branches']})",
        file=out,
    )
    gaps = cov.gaps(files)
    tool_gaps = [g for g in gaps if g.tool_logic]
    unexplained = [g for g in tool_gaps if g.reason is None]
    print(
        f"   {cov.reachable_percent():.1f}% of the reachable lines and branches; unreached: "
        f"{len(tool_gaps)} ({len(tool_gaps) - len(unexplained)} explained, "
        f"{len(unexplained)} unexplained)",
        file=out,
    )
    for g in tool_gaps:
        _print_unreached(f"{g.where} {g.function}: {short(g.code)}", g.reason, out)
    skipped = sorted({(g.file, g.function, g.reason) for g in gaps if not g.tool_logic})
    if skipped:
        print("   not tool logic (unreached, left out of the figure):", file=out)
        for file, function, reason in skipped:
            print(f"   - {file} {function}: {reason}", file=out)
    s = cov.summary()
    print(
        f"   for information, all of recall/: lines {_pct(s['covered_lines'], s['statements'])}, "
        f"branches {_pct(s['covered_branches'], s['branches'])}; by file:",
        file=out,
    )
    for file in cov.files():
        if file in files:
            continue
        f = cov.summary([file])
        missing = sorted({g.line for g in cov.gaps([file])})
        print(
            f"     {file}: lines {_pct(f['covered_lines'], f['statements'])}, "
            f"branches {_pct(f['covered_branches'], f['branches'])}"
            + (f"; unreached lines/branches at {_ranges(missing)}" if missing else ""),
            file=out,
        )


def _ranges(lines: Sequence[int]) -> str:
    parts: list[str] = []
    start = prev = None
    for n in lines:
        if start is None:
            start = prev = n
        elif prev is not None and n == prev + 1:
            prev = n
        else:
            parts.append(f"{start}" if start == prev else f"{start}-{prev}")
            start = prev = n
    if start is not None:
        parts.append(f"{start}" if start == prev else f"{start}-{prev}")
    return ", ".join(parts)


def _toml_string(text: str) -> str:
    if "'" not in text and all(ord(c) >= 0x20 and c != "\x7f" for c in text):
        return f"'{text}'"
    return json.dumps(text, ensure_ascii=False)


def entry_for(mutant: Mutant) -> str:
    """A ``[[equivalent.mutant]]`` entry naming ``mutant``, to paste under an explanation."""
    shape = mutant.shape
    lines = ["[[equivalent.mutant]]", f"in = {_toml_string(mutant.function)}"]
    if shape.site != shape.before:
        lines.append(f"site = {_toml_string(shape.site)}")
    lines += [f"before = {_toml_string(shape.before)}", f"after = {_toml_string(shape.after)}"]
    if shape.contexts:
        lines.append(f"# within = {_toml_string(shape.contexts[0])}  (if it names several)")
    return "\n".join(lines)


def print_mutation(
    run: MutationRun, modules: Sequence[str], out: TextIO, py: PyCoverage | None
) -> None:
    """Section 3: the mutation score, every survivor with its explanation."""
    n = len(run.results)
    sampled = "" if n == run.total_generated else f" (a sample of {n} of {run.total_generated})"
    print(
        f"3. Mutation score: {n} mutants{sampled} of {', '.join(modules)}, "
        f"each replayed in full ({run.seconds:.0f}s)",
        file=out,
    )
    print(
        f"   killed {run.killed}/{n} = {_pct(run.killed, n)} "
        f"({run.timeouts} by time-out); survived {len(run.survivors)}: "
        f"{len(run.equivalent)} explained, {len(run.unexplained)} unexplained; "
        f"score over the killable: {run.killable_score:.1f}%",
        file=out,
    )
    if run.unexplained:
        print(
            "   UNEXPLAINED: add a corpus case that kills it, or explain it in "
            "parity/strength/explanations.toml:",
            file=out,
        )
        for r in run.unexplained:
            _print_mutant(r.mutant, out, py)
            for line in entry_for(r.mutant).splitlines():
                print(f"         {line}", file=out)
    groups: dict[str, list[Mutant]] = {}
    for r in run.equivalent:
        groups.setdefault(run.why(r.mutant) or "", []).append(r.mutant)
    for why, members in groups.items():
        print(f"   equivalent: {why}", file=out)
        for m in members:
            _print_mutant(m, out, py)


def _print_mutant(m: Mutant, out: TextIO, py: PyCoverage | None) -> None:
    reached = ""
    if py is not None and m.line not in py.executed_lines(m.file):
        reached = " [line not reached by any golden]"
    print(f"     - {m.where} {m.function} ({m.operator}): {m.change}{reached}", file=out)


def print_problems(problems: Sequence[Problem], out: TextIO) -> None:
    """What no longer fits in the explanations (and the notes on entries that moved)."""
    failing = [p for p in problems if p.fails]
    moved = [p for p in problems if not p.fails]
    if failing:
        print(
            f"STALE EXPLANATIONS ({len(failing)}): parity/strength/explanations.toml "
            "no longer fits the code",
            file=out,
        )
        for p in failing:
            print(f"   - {p}", file=out)
    if moved:
        print(f"   note: {len(moved)} explanation(s) found their code elsewhere:", file=out)
        for p in moved:
            print(f"   - {p}", file=out)


@dataclass
class Figures:
    """The figures of a run, for JSON and Markdown."""

    corpus: str
    go: dict[str, object] = field(default_factory=dict)
    python: dict[str, object] = field(default_factory=dict)
    mutation: dict[str, object] = field(default_factory=dict)


def markdown(figures: Figures) -> str:
    """The figures as the Markdown table of docs/strength.md."""
    rows = [
        "| figure | raw | of what a golden can reach or kill | unexplained |",
        "|---|---|---|---|",
    ]
    go = figures.go
    if go:
        rows.append(
            f"| Go coverage of the tool logic (`{go['package']}`), while recording "
            f"| {go['percent']}% of statements ({go['reached']}/{go['statements']}) "
            f"| {go['reachable_percent']}% | {go['unexplained']} |"
        )
    py = figures.python
    if py:
        t = py["tool_logic"]
        assert isinstance(t, dict)
        rows.append(
            "| Python coverage of the tool logic under replay (lines, branches) "
            f"| lines {_pct(t['covered_lines'], t['statements'])} "
            f"({t['covered_lines']}/{t['statements']}), branches "
            f"{_pct(t['covered_branches'], t['branches'])} "
            f"({t['covered_branches']}/{t['branches']}) "
            f"| {py['reachable_percent']}% | {py['unexplained']} |"
        )
    mu = figures.mutation
    if mu:
        run, killed = mu["run"], mu["killed"]
        assert isinstance(run, int)
        assert isinstance(killed, int)
        rows.append(
            f"| Mutation score of the Python tool logic ({run} mutants) "
            f"| {killed} of {run} killed ({_pct(killed, run)}; {mu['timeouts']} by time-out); "
            f"{run - killed} survivors, {mu['equivalent']} explained "
            f"| {mu['killable_score']}% | {mu['unexplained']} |"
        )
    return "\n".join(rows) + "\n"
