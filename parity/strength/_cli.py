"""``parity strength``: the three figures, as a report or as a gate."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TextIO

from parity.cli import Exit
from parity.strength._cover import Coverage, go_coverage, pct, python_coverage
from parity.strength._explain import (
    EXPLANATIONS_PATH,
    Explanations,
    entry_for,
    generate_mutants,
    load_explanations,
)
from parity.strength._mutants import Mutant, sample_mutants, short
from parity.strength._runner import MutantResult, run_mutants

SEED = 20240611
"""The seed ``--sample`` draws with (the same mutants for the same code)."""


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> argparse.ArgumentParser:
    """``parity strength``'s parser."""
    p = sub.add_parser(
        "strength",
        help="measure how many mutants the replay kills (`make strength`)",
        description="How strong are the goldens: Go coverage of the tool logic while "
        "recording, Python coverage under replay, and a mutation score. A report (exit 0); "
        "with --gate, exit 5 when anything a golden can reach or kill is unexplained, or an "
        "explanation no longer fits.",
    )
    p.add_argument("--corpus", default="recall", help="the corpus (default: recall)")
    p.add_argument("--gate", action="store_true", help="exit 5 unless every figure is 100%%")
    p.add_argument("--no-coverage", dest="coverage", action="store_false", help="skip coverage")
    p.add_argument(
        "--sample", type=int, metavar="N", help="N mutants, drawn with a fixed seed (0: none)"
    )
    p.add_argument(
        "--timeout",
        type=float,
        default=20.0,
        help="seconds per mutant (default 20; at least 10 times the unmutated replay's)",
    )
    p.add_argument("--jobs", type=int, default=min(2, os.cpu_count() or 1), help="worker processes")
    p.add_argument(
        "--list-mutants", action="store_true", help="list the mutants and stop (-v: with entries)"
    )
    p.add_argument("--markdown", metavar="PATH", help="also write the figures as a Markdown table")
    p.add_argument("-v", "--verbose", action="store_true", help="print each mutant's result")
    return p


def run(args: argparse.Namespace, out: TextIO | None = None) -> int:
    """``parity strength``: print the three figures; 5 when ``--gate`` is missed."""
    out = out or sys.stdout
    ex = load_explanations()
    every = generate_mutants()
    if args.list_mutants:
        for m in every:
            print(f"{m.id:4d} {m.where} {m.function} ({m.operator}): {m.change}", file=out)
            if args.verbose:
                print(f"       {entry_for(m, every)}", file=out)
        return Exit.OK
    failed: list[str] = []
    problems: list[str] = []
    reached: set[tuple[str, int]] | None = None
    md = [
        "| figure | raw | of what a golden can reach or kill | unexplained |",
        "|---|---|---|---|",
    ]
    print(f"strength of the goldens of corpus {args.corpus!r}", file=out)
    for n, measure in enumerate((go_coverage, python_coverage) if args.coverage else (), 1):
        cov = measure(args.corpus, ex)
        _print_coverage(n, cov, out)
        problems += cov.stale
        reached = cov.executed or reached  # Python's
        unexplained = sum(g.reason is None for g in cov.gaps)
        if unexplained:
            failed.append(f"unexplained {cov.title.split()[0]} coverage gaps")
        md.append(
            f"| {cov.title} | {cov.summary} | {pct(cov.reached, cov.reachable)} | {unexplained} |"
        )
    results: list[MutantResult] = []
    if args.sample != 0:
        chosen = every if args.sample is None else sample_mutants(every, args.sample, seed=SEED)

        def progress(r: MutantResult) -> None:
            if args.verbose:
                m = r.mutant
                print(f"   {r.status:8s} {m.where} ({m.operator}) {m.change}", file=out, flush=True)

        results = run_mutants(
            chosen, corpus=args.corpus, jobs=args.jobs, timeout=args.timeout, progress=progress
        )
        md.append(_print_mutation(results, every, ex, reached, out))
        if any(not r.killed and ex.why_equivalent(r.mutant) is None for r in results):
            failed.append("unexplained surviving mutants")
    problems += ex.problems(
        every, ex.statements(), reached=reached, killed=[r.mutant for r in results if r.killed]
    )
    if problems:
        print(
            f"STALE EXPLANATIONS ({len(problems)}): {EXPLANATIONS_PATH.name} no longer fits "
            "the code (an unexplained survivor's ready entry may replace an orphaned one)",
            file=out,
        )
        for problem in problems:
            print(f"   - {problem}", file=out)
        failed.append(f"{len(problems)} stale explanation(s)")
    if args.markdown:
        Path(args.markdown).write_text("\n".join(md) + "\n", "utf-8")
    if args.gate and failed:
        print("under the gate: " + "; ".join(failed), file=out)
        return Exit.BELOW_GATE
    return Exit.OK


def _print_coverage(n: int, cov: Coverage, out: TextIO) -> None:
    print(f"{n}. {cov.title}", file=out)
    print(f"   {cov.summary}; {pct(cov.reached, cov.reachable)} of the reachable", file=out)
    for g in cov.gaps:
        why = f"unreachable: {g.reason}" if g.reason else "UNEXPLAINED: add a corpus case"
        print(f"   - {g.where} {g.function}: {short(g.code)}\n       {why}", file=out)
    for note in cov.notes:
        print(note, file=out)
    out.flush()


def _print_mutation(
    results: Sequence[MutantResult],
    every: Sequence[Mutant],
    ex: Explanations,
    reached: set[tuple[str, int]] | None,
    out: TextIO,
) -> str:
    """Section 3, and its Markdown row."""
    n = len(results)
    killed = sum(r.killed for r in results)
    timeouts = sum(r.status == "timeout" for r in results)
    groups: dict[str | None, list[Mutant]] = {}
    for r in results:
        if not r.killed:
            groups.setdefault(ex.why_equivalent(r.mutant), []).append(r.mutant)
    unexplained = groups.pop(None, [])
    equivalent = n - killed - len(unexplained)
    score = 100.0 * killed / (n - equivalent) if n - equivalent else 100.0
    sampled = "" if n == len(every) else f" (a sample of {n} of {len(every)})"
    print(f"3. Mutation score: {n} mutants{sampled}, each replayed in full", file=out)
    print(
        f"   killed {killed}/{n} = {pct(killed, n)} ({timeouts} by time-out); survived "
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
            print(f"         {entry_for(m, every)}", file=out)
    for why, members in groups.items():
        print(f"   equivalent: {why}", file=out)
        for m in members:
            show(m)
    return (
        f"| Mutation score of the Python tool logic ({n} mutants) | {killed} of {n} killed "
        f"({pct(killed, n)}; {timeouts} by time-out); {n - killed} survivors, {equivalent} "
        f"explained | {score:.1f}% | {len(unexplained)} |"
    )
