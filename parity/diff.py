"""``parity diff A.json B.json``: how journal B differs from journal A (``parity.compare``),
and the account of a changed case that ``record --check`` and ``review`` show too.
"""

from __future__ import annotations

import argparse

from parity import journal as journal_mod
from parity import report
from parity.cli import Exit
from parity.compare import Drift, compare

CASES_SHOWN = 10
"""How many changed cases a bounded account shows (``changes_report``)."""
LINES_SHOWN = 20
"""How many lines of each output and of its diff a bounded account shows."""


def case_report(
    drift: Drift, case: str, *, old_name: str, new_name: str, limit: int | None = None
) -> str:
    """A changed case, readable: its output change and its reads change, B in A's seqs;
    ``limit``: at most that many lines of each output and of the diff."""
    before, after = drift.old.call(case), drift.in_old_seqs(case)
    raw = drift.new.call(case)
    seqs_note = " (seqs as in the old)" if drift.first_seqs is not None else ""
    if before.output != after.output or before.tool != after.tool or before.args != raw.args:
        text = report.mismatch_report(
            title=f"OUTPUT CHANGED {case}",
            case=case,
            tool=raw.tool,
            args=raw.args,
            expected=before.output,
            actual=after.output,
            expected_name=old_name,
            actual_name=new_name + seqs_note,
            limit=limit,
        )
    else:
        text = "\n".join(report.head(f"READS CHANGED {case}", raw.tool, raw.args))
    if before.reads != after.reads and None not in (before.reads, after.reads):
        text += f"\n  reads in {old_name}: {report.reads_text(before.reads)}"
        text += f"\n  reads in {new_name}{seqs_note}: {report.reads_text(after.reads)}"
    return text


def changes_report(drift: Drift, *, old_name: str, new_name: str, full: bool) -> list[str]:
    """Each changed case's report, a blank line before each; unless ``full``, bounded:
    the first ``CASES_SHOWN`` cases, ``LINES_SHOWN`` lines of each output and diff."""
    shown = drift.changes if full else drift.changes[:CASES_SHOWN]
    limit = None if full else LINES_SHOWN
    lines = []
    for change in shown:
        lines += [
            "",
            case_report(drift, change.case, old_name=old_name, new_name=new_name, limit=limit),
        ]
    if len(shown) < len(drift.changes):
        lines += ["", f"… {len(drift.changes) - len(shown)} more changed cases"]
    return lines


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> argparse.ArgumentParser:
    df = sub.add_parser(
        "diff",
        help="explain the differences between two journals",
        description="How journal B differs from journal A, modulo the seqs: the drift, the "
        "seqs, what one journal did not record (reads, versions), and each changed case's "
        "outputs and reads. Exit 0 when B records the same answers as A, 3 on drift.",
    )
    df.add_argument("old", metavar="A.json")
    df.add_argument("new", metavar="B.json")
    return df


def run(args: argparse.Namespace) -> int:
    """``parity diff``: 0 the same answers, 3 drift."""
    old, new = journal_mod.load(args.old), journal_mod.load(args.new)
    drift = compare(old, new)
    if drift.identical:
        print(f"{args.old} and {args.new} record the same thing")
        return Exit.OK
    lines = [f"--- {args.old}", f"+++ {args.new}"]
    if drift:
        lines += [f"drift: {args.new} does not record the answers of {args.old}:", *drift.lines()]
    else:
        lines.append("the same answers, modulo the seqs and what one journal did not record:")
    lines += drift.notes()
    print(*lines, *changes_report(drift, old_name=args.old, new_name=args.new, full=True), sep="\n")
    return Exit.DRIFT if drift else Exit.OK
