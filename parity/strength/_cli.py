"""``parity strength``: the three figures, as a report or as a gate."""

from __future__ import annotations

import argparse
import json
import os
import sys
from dataclasses import asdict
from pathlib import Path
from typing import Any, TextIO

from parity.cli import Exit
from parity.errors import ParityError
from parity.strength._explain import Problem, load_explanations
from parity.strength._gocover import GO_TOOL_PACKAGE, go_coverage
from parity.strength._mutants import generate_mutants, sample_mutants, select_mutants
from parity.strength._pycover import PyCoverage, python_coverage
from parity.strength._report import (
    Figures,
    markdown,
    print_go,
    print_mutation,
    print_problems,
    print_python,
)
from parity.strength._runner import MutantResult, run_mutants

__all__ = ["SMOKE_SAMPLE", "SMOKE_SEED", "add_parser", "run"]

SMOKE_SAMPLE = 40
"""How many mutants ``--smoke`` runs."""
SMOKE_SEED = 20240611
"""The seed ``--smoke`` draws them with (the same mutants for the same code)."""


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> argparse.ArgumentParser:
    """``parity strength``'s parser."""
    p = sub.add_parser(
        "strength",
        help="measure how many mutants the replay kills (`make strength`)",
        description="How strong are the goldens: Go coverage of the tool logic while "
        "recording, Python coverage of recall/ under replay, and a mutation score. "
        "A report (exit 0) unless a --fail-under-* gate or --smoke is given: then "
        "exit 5 when a figure is under its gate, or anything is unexplained, or an "
        "explanation no longer fits the code.",
    )
    p.add_argument("--corpus", default="recall", help="the corpus (default: recall)")
    p.add_argument("--journal", metavar="PATH", help="the journal (default: golden/<corpus>.json)")
    p.add_argument("--no-go", dest="go", action="store_false", help="skip the Go coverage")
    p.add_argument(
        "--no-python", dest="python", action="store_false", help="skip the Python coverage"
    )
    p.add_argument(
        "--no-mutants", dest="mutants", action="store_false", help="skip the mutation run"
    )
    p.add_argument(
        "--module",
        action="append",
        metavar="MODULE",
        help="mutate this module (repeatable; default: the tool logic, explanations.toml)",
    )
    p.add_argument(
        "--mutant",
        type=int,
        action="append",
        metavar="ID",
        help="run this mutant (repeatable; ids as --list-mutants gives them)",
    )
    p.add_argument("--max-mutants", type=int, metavar="N", help="at most N mutants, spread out")
    p.add_argument("--sample", type=int, metavar="N", help="N mutants drawn at random (--seed)")
    p.add_argument("--seed", type=int, default=SMOKE_SEED, help="the seed of --sample")
    p.add_argument(
        "--smoke",
        action="store_true",
        help=f"the bounded gate CI runs: no coverage, {SMOKE_SAMPLE} mutants drawn with "
        f"seed {SMOKE_SEED}, fail on an unexplained survivor or a stale explanation",
    )
    p.add_argument("--timeout", type=float, default=20.0, help="seconds per mutant (default 20)")
    p.add_argument("--jobs", type=int, default=min(2, os.cpu_count() or 1), help="worker processes")
    p.add_argument("--list-mutants", action="store_true", help="list the mutants and stop")
    p.add_argument("--json", metavar="PATH", help="also write the figures as JSON")
    p.add_argument("--markdown", metavar="PATH", help="also write the figures as a Markdown table")
    p.add_argument("-v", "--verbose", action="store_true", help="print each mutant's result")
    for what, of in (
        ("go", "Go coverage"),
        ("python", "Python coverage"),
        ("coverage", "Go and Python coverage"),
        ("mutation", "mutation score"),
    ):
        p.add_argument(
            f"--fail-under-{what}",
            type=float,
            metavar="PCT",
            help=f"gate: exit 5 when the {of} is under PCT (of the reachable or killable)",
        )
    return p


def run(args: argparse.Namespace) -> int:
    """``parity strength``: print the three figures; 5 when a gate is missed."""
    return _main(args, sys.stdout)


def _main(args: argparse.Namespace, out: TextIO) -> int:
    if args.smoke:
        args.go = args.python = False
        args.sample = args.sample or SMOKE_SAMPLE
        if args.fail_under_mutation is None:
            args.fail_under_mutation = 100.0
    if args.fail_under_coverage is not None:
        for what in ("go", "python"):
            if getattr(args, f"fail_under_{what}") is None:
                setattr(args, f"fail_under_{what}", args.fail_under_coverage)
    gate = args.smoke or any(
        getattr(args, f"fail_under_{w}") is not None for w in ("go", "python", "mutation")
    )
    explanations = load_explanations()
    modules = tuple(args.module or explanations.tool_logic_modules())
    every = generate_mutants()
    mutants = generate_mutants(modules) if args.module else every
    if args.list_mutants:
        for m in mutants:
            print(f"{m.id:4d} {m.where} {m.function} ({m.operator}): {m.change}", file=out)
            if args.verbose:
                s = m.shape
                print(f"       site {s.site} | {s.before} -> {s.after}", file=out)
                for header in s.contexts:
                    print(f"       within {header}", file=out)
        return 0
    figures = Figures(args.corpus)
    failed: list[str] = []
    match = explanations.match_mutants(every)
    problems: list[Problem] = list(match.problems)
    print(f"strength of the goldens of corpus {args.corpus!r}", file=out)
    if args.go:
        go = go_coverage(args.corpus, journal_path=args.journal)
        print_go(go, out)
        reached, total = go.statements(GO_TOOL_PACKAGE)
        figures.go = {
            "package": GO_TOOL_PACKAGE,
            "statements": total,
            "reached": reached,
            "percent": round(go.percent(GO_TOOL_PACKAGE), 2),
            "reachable_percent": round(go.reachable_percent(), 2),
            "unexplained": len(go.unexplained()),
            "unreached": [asdict(b) | {"reason": b.reason} for b in go.unreached()],
            "packages": {p: round(go.percent(p), 2) for p in go.packages()},
        }
        problems += go.problems()
        if go.unexplained():
            failed.append(f"{len(go.unexplained())} unexplained Go block(s)")
        if args.fail_under_go is not None and go.reachable_percent() < args.fail_under_go:
            failed.append(f"go {go.reachable_percent():.1f}% < {args.fail_under_go}%")
        out.flush()
    py: PyCoverage | None = None
    if args.python:
        py = python_coverage(args.corpus, journal_path=args.journal)
        print_python(py, out)
        unexplained = [
            g for g in py.gaps(py.tool_logic_files()) if g.tool_logic and g.reason is None
        ]
        reachable_pct = py.reachable_percent()
        figures.python = {
            "tool_logic": py.tool_logic(),
            "reachable_percent": round(reachable_pct, 2),
            "unexplained": len(unexplained),
            "gaps": [asdict(g) for g in py.gaps()],
            "all": py.summary(),
        }
        problems += py.problems()
        if unexplained:
            failed.append(f"{len(unexplained)} unexplained Python line(s) or branch(es)")
        if args.fail_under_python is not None and reachable_pct < args.fail_under_python:
            failed.append(f"python {reachable_pct:.1f}% < {args.fail_under_python}%")
        out.flush()
    else:
        statements = explanations.tool_logic_statements()
        problems += explanations.line_problems(statements) + explanations.name_problems()
    if args.mutants:
        if args.mutant:
            unknown = set(args.mutant) - {m.id for m in mutants}
            if unknown:
                raise ParityError(f"no mutant {', '.join(map(str, sorted(unknown)))}")
            chosen = [m for m in mutants if m.id in args.mutant]
        elif args.sample is not None:
            chosen = sample_mutants(mutants, args.sample, seed=args.seed)
        else:
            chosen = select_mutants(mutants, args.max_mutants)
        progress = None
        if args.verbose:

            def progress(r: MutantResult) -> None:
                m = r.mutant
                print(f"   {r.status:8s} {m.where} ({m.operator}) {m.change}", file=out)
                out.flush()

        run = run_mutants(
            chosen,
            corpus=args.corpus,
            journal_path=args.journal,
            jobs=args.jobs,
            timeout=args.timeout,
            total_generated=len(mutants),
            explained=match,
            progress=progress,
        )
        print_mutation(run, modules, out, py)
        problems = [p for p in problems if p not in match.problems] + run.problems
        figures.mutation = {
            "modules": list(modules),
            "run": len(run.results),
            "generated": run.total_generated,
            "killed": run.killed,
            "timeouts": run.timeouts,
            "equivalent": len(run.equivalent),
            "unexplained": len(run.unexplained),
            "score": round(run.score, 2),
            "killable_score": round(run.killable_score, 2),
            "survivors": [
                {
                    "where": r.mutant.where,
                    "function": r.mutant.function,
                    "operator": r.mutant.operator,
                    "before": r.mutant.before,
                    "after": r.mutant.after,
                    "site": r.mutant.shape.site,
                    "equivalent": run.why(r.mutant),
                }
                for r in run.survivors
            ],
        }
        if run.unexplained:
            failed.append(f"{len(run.unexplained)} unexplained surviving mutant(s)")
        if args.fail_under_mutation is not None and run.killable_score < args.fail_under_mutation:
            failed.append(f"mutation {run.killable_score:.1f}% < {args.fail_under_mutation}%")
    print_problems(problems, out)
    stale = [p for p in problems if p.fails]
    if stale:
        failed.append(f"{len(stale)} stale explanation(s)")
    if args.json:
        doc: dict[str, Any] = asdict(figures)
        doc["problems"] = [asdict(p) for p in problems]
        Path(args.json).write_text(json.dumps(doc, indent=2, ensure_ascii=False) + "\n")
    if args.markdown:
        Path(args.markdown).write_text(markdown(figures), "utf-8")
    if gate and failed:
        print("under the gate: " + "; ".join(failed), file=out)
        return Exit.BELOW_GATE
    return Exit.OK
