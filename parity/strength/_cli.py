"""``parity strength``: the three figures, as a report or as a gate."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TextIO

from parity.cli import Exit
from parity.strength._cover import (
    GO_TOOL_PACKAGE,
    Gap,
    GoCoverage,
    PyCoverage,
    go_coverage,
    go_problems,
    python_coverage,
)
from parity.strength._explain import (
    EXPLANATIONS_PATH,
    Explanations,
    Problem,
    load_explanations,
    parse_explanations,
    toml_string,
)
from parity.strength._mutants import Mutant, generate_mutants, sample_mutants, short
from parity.strength._runner import MutantResult, run_mutants

__all__ = ["SMOKE_SAMPLE", "add_parser", "entry_for", "run"]

SMOKE_SAMPLE = 40
"""How many mutants ``--smoke`` runs."""
SEED = 20240611
"""The seed ``--sample`` draws with (the same mutants for the same code)."""


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> argparse.ArgumentParser:
    """``parity strength``'s parser."""
    p = sub.add_parser(
        "strength",
        help="measure how many mutants the replay kills (`make strength`)",
        description="How strong are the goldens: Go coverage of the tool logic while "
        "recording, Python coverage under replay, and a mutation score. A report (exit 0) "
        "unless a --fail-under-* gate or --smoke is given: then exit 5 when a figure is "
        "under its gate, anything is unexplained, or an explanation no longer fits.",
    )
    p.add_argument("--corpus", default="recall", help="the corpus (default: recall)")
    p.add_argument("--no-coverage", dest="coverage", action="store_false", help="skip coverage")
    p.add_argument("--no-mutants", dest="mutants", action="store_false", help="skip mutants")
    p.add_argument("--sample", type=int, metavar="N", help="N mutants, drawn with a fixed seed")
    p.add_argument(
        "--smoke",
        action="store_true",
        help=f"the bounded gate of `make test`: no coverage, --sample {SMOKE_SAMPLE}, "
        "--fail-under-mutation 100",
    )
    p.add_argument(
        "--timeout",
        type=float,
        default=20.0,
        help="seconds per mutant (default 20; at least 10 times the unmutated replay's)",
    )
    p.add_argument("--jobs", type=int, default=min(2, os.cpu_count() or 1), help="worker processes")
    p.add_argument("--list-mutants", action="store_true", help="list the mutants and stop")
    p.add_argument(
        "--refresh",
        action="store_true",
        help="re-key explanations.toml on the code as it is (keeping every reason) and stop",
    )
    p.add_argument("--markdown", metavar="PATH", help="also write the figures as a Markdown table")
    p.add_argument("-v", "--verbose", action="store_true", help="print each mutant's result")
    for what in ("coverage", "mutation"):
        p.add_argument(
            f"--fail-under-{what}",
            type=float,
            metavar="PCT",
            help=f"gate: exit 5 when the {what} is under PCT of what a golden can reach or kill",
        )
    return p


def run(args: argparse.Namespace, out: TextIO | None = None) -> int:
    """``parity strength``: print the three figures; 5 when a gate is missed."""
    out = out or sys.stdout
    if args.smoke:
        args.coverage, args.sample = False, args.sample or SMOKE_SAMPLE
        args.fail_under_mutation = (
            100.0 if args.fail_under_mutation is None else args.fail_under_mutation
        )
    gate = args.fail_under_coverage is not None or args.fail_under_mutation is not None
    ex = load_explanations()
    every = generate_mutants()
    if args.list_mutants:
        for m in every:
            print(f"{m.id:4d} {m.where} {m.function} ({m.operator}): {m.change}", file=out)
            if args.verbose:
                print(f"       {entry_for(m)}", file=out)
        return Exit.OK
    if args.refresh:
        fresh, notes = ex.refreshed(every)
        EXPLANATIONS_PATH.write_text(fresh.dump(), "utf-8")
        parse_explanations(fresh.dump())
        for note in notes or ["every explanation fits"]:
            print(note, file=out)
        return Exit.OK
    failed: list[str] = []
    problems: list[Problem] = []
    reached: set[tuple[str, int]] | None = None
    md: list[str] = []
    print(f"strength of the goldens of corpus {args.corpus!r}", file=out)
    if args.coverage:
        go = go_coverage(args.corpus, ex)
        _print_go(go, out)
        problems += go_problems(go, ex)
        py = python_coverage(args.corpus, ex)
        _print_python(py, out)
        reached = py.executed
        for name, pct, gaps in (
            ("Go", go.figure.reachable_percent, go.gaps),
            ("Python", py.reachable_percent, py.gaps),
        ):
            if any(g.reason is None for g in gaps):
                failed.append(f"unexplained {name} coverage gaps")
            if args.fail_under_coverage is not None and pct < args.fail_under_coverage:
                failed.append(f"{name} coverage {pct:.1f}% < {args.fail_under_coverage}%")
        md += _markdown_coverage(go, py)
        out.flush()
    results: list[MutantResult] = []
    if args.mutants:
        chosen = every if args.sample is None else sample_mutants(every, args.sample, seed=SEED)

        def progress(r: MutantResult) -> None:
            if args.verbose:
                print(
                    f"   {r.status:8s} {r.mutant.where} ({r.mutant.operator}) {r.mutant.change}",
                    file=out,
                    flush=True,
                )

        results = run_mutants(
            chosen, corpus=args.corpus, jobs=args.jobs, timeout=args.timeout, progress=progress
        )
        score, line = _print_mutation(results, len(every), ex, reached, out)
        md.append(line)
        if any(not r.killed and ex.group("equivalent", r.mutant.key) is None for r in results):
            failed.append("unexplained surviving mutants")
        if args.fail_under_mutation is not None and score < args.fail_under_mutation:
            failed.append(f"mutation {score:.1f}% < {args.fail_under_mutation}%")
    problems += ex.problems(
        every, ex.statements(), reached=reached, killed=[r.mutant for r in results if r.killed]
    )
    if problems:
        print(
            f"STALE EXPLANATIONS ({len(problems)}): {EXPLANATIONS_PATH.name} no longer fits "
            "the code (`parity strength --refresh` re-keys what moved)",
            file=out,
        )
        for problem in problems:
            print(f"   - {problem}", file=out)
        failed.append(f"{len(problems)} stale explanation(s)")
    if args.markdown:
        head = (
            "| figure | raw | of what a golden can reach or kill | unexplained |\n|---|---|---|---|"
        )
        Path(args.markdown).write_text("\n".join([head, *md]) + "\n", "utf-8")
    if gate and failed:
        print("under the gate: " + "; ".join(failed), file=out)
        return Exit.BELOW_GATE
    return Exit.OK


def _pct(n: int, d: int) -> str:
    return f"{100.0 * n / d:.1f}%" if d else "100.0%"


def _print_gaps(gaps: Sequence[Gap], out: TextIO) -> None:
    for g in gaps:
        why = f"unreachable: {g.reason}" if g.reason else "UNEXPLAINED: add a corpus case"
        print(f"   - {g.where} {g.function}: {short(g.code)}\n       {why}", file=out)


def _print_go(go: GoCoverage, out: TextIO) -> None:
    f = go.figure
    print(
        f"1. Go coverage of the tool logic ({GO_TOOL_PACKAGE}), recording {go.calls} calls "
        "into a Go reference built with -cover",
        file=out,
    )
    print(
        f"   {_pct(f.reached, f.total)} of statements ({f.reached}/{f.total}); "
        f"{f.reachable_percent:.1f}% of the reachable",
        file=out,
    )
    _print_gaps(go.gaps, out)
    others = ", ".join(f"{p} {pct:.1f}%" for p, pct in go.packages.items() if p != GO_TOOL_PACKAGE)
    print(f"   for information: {others}", file=out)


def _print_python(py: PyCoverage, out: TextIO) -> None:
    lines, branches = py.lines, py.branches
    print("2. Python coverage of the tool logic under replay (every pass)", file=out)
    print(
        f"   lines {_pct(lines.reached, lines.total)} ({lines.reached}/{lines.total}), branches "
        f"{_pct(branches.reached, branches.total)} ({branches.reached}/{branches.total}); "
        f"{py.reachable_percent:.1f}% of the reachable",
        file=out,
    )
    _print_gaps(py.gaps, out)
    if py.skipped:
        print("   not tool logic (unreached, left out of the figure):", file=out)
        for function, why in sorted(py.skipped.items()):
            print(f"   - {function}: {why}", file=out)
    print("   for information, the port's other files:", file=out)
    for file, summary in py.files.items():
        print(f"     {file}: {summary}", file=out)


def _markdown_coverage(go: GoCoverage, py: PyCoverage) -> list[str]:
    g, lines, br = go.figure, py.lines, py.branches
    unexplained = sum(x.reason is None for x in py.gaps)
    return [
        f"| Go coverage of the tool logic (`{GO_TOOL_PACKAGE}`), while recording "
        f"| {_pct(g.reached, g.total)} of statements ({g.reached}/{g.total}) "
        f"| {g.reachable_percent:.1f}% | {sum(x.reason is None for x in go.gaps)} |",
        "| Python coverage of the tool logic under replay (lines, branches) "
        f"| lines {_pct(lines.reached, lines.total)} ({lines.reached}/{lines.total}), branches "
        f"{_pct(br.reached, br.total)} ({br.reached}/{br.total}) "
        f"| {py.reachable_percent:.1f}% | {unexplained} |",
    ]


def entry_for(m: Mutant) -> str:
    """An entry naming ``m``, to paste into an ``[[equivalent]]`` group's ``entries``."""
    fields = {"in": m.function, "line": m.text, "before": m.before, "after": m.after}
    text = ", ".join(f"{k} = {toml_string(v)}" for k, v in fields.items())
    return f"{{ {text}{f', nth = {m.nth}' if m.nth > 1 else ''} }},"


def _print_mutation(
    results: Sequence[MutantResult],
    generated: int,
    ex: Explanations,
    reached: set[tuple[str, int]] | None,
    out: TextIO,
) -> tuple[float, str]:
    """Section 3; the score over the killable, and its Markdown row."""
    n = len(results)
    killed = sum(r.killed for r in results)
    timeouts = sum(r.status == "timeout" for r in results)
    groups: dict[str, list[Mutant]] = {}
    unexplained = []
    for r in results:
        if not r.killed:
            g = ex.group("equivalent", r.mutant.key)
            if g is None:
                unexplained.append(r.mutant)
            else:
                groups.setdefault(g.why, []).append(r.mutant)
    equivalent = n - killed - len(unexplained)
    score = 100.0 * killed / (n - equivalent) if n - equivalent else 100.0
    sampled = "" if n == generated else f" (a sample of {n} of {generated})"
    print(f"3. Mutation score: {n} mutants{sampled}, each replayed in full", file=out)
    print(
        f"   killed {killed}/{n} = {_pct(killed, n)} ({timeouts} by time-out); survived "
        f"{n - killed}: {equivalent} explained, {len(unexplained)} unexplained; score over "
        f"the killable: {score:.1f}%",
        file=out,
    )

    def show(m: Mutant) -> None:
        unreached = reached is not None and (m.file, m.line) not in reached
        note = " [line not reached by any golden]" if unreached else ""
        print(f"     - {m.where} {m.function} ({m.operator}): {m.change}{note}", file=out)

    if unexplained:
        print(
            "   UNEXPLAINED: add a corpus case that kills it, or explain it in "
            f"parity/strength/{EXPLANATIONS_PATH.name}:",
            file=out,
        )
        for m in unexplained:
            show(m)
            print(f"         {entry_for(m)}", file=out)
    for why, members in groups.items():
        print(f"   equivalent: {why}", file=out)
        for m in members:
            show(m)
    row = (
        f"| Mutation score of the Python tool logic ({n} mutants) | {killed} of {n} killed "
        f"({_pct(killed, n)}; {timeouts} by time-out); {n - killed} survivors, {equivalent} "
        f"explained | {score:.1f}% | {len(unexplained)} |"
    )
    return score, row
