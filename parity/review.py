"""``parity review``: accept or reject what a new recording changed, case by case.

``parity record`` keeps a committed journal that the new recording differs from, and
writes the recording beside it, ``<journal>.new`` (as insta writes ``.snap.new``).
The review compares the two (``parity.compare``) and shows each changed case: the old
Go output, the new Go output, the port's output for the new recording, and where the
old and new differ. Then it asks, per case:

- ``a`` accept: the journal takes the new recording's call (its output and reads);
- ``r`` reject: the journal keeps its call;
- ``s`` skip: decide later (the case stays in ``<journal>.new``);
- ``A`` / ``R`` / ``S``: the same for this case and every remaining one;
- ``q`` quit: keep what was decided, leave the rest for later (so does end of input).

Case by case is possible only when the two recordings differ in nothing but some
calls' answers (outputs, reads): the same corpus, cases and args, seqs, blocks and
``recorded_by``. Otherwise (a block changed, other seqs, another Go version or
instance, a case added or removed, only what one Go could not record) the recording
is accepted or rejected as a whole, and the review says why. A rejected case goes
back to its old call in ``<journal>.new``, which is deleted once nothing is left.

Exit status: 0 when nothing is left to review, 4 when cases are left (skipped or
quit), 2 on an error: an unusable journal, or CI (``CI=true``), where nothing writes
a golden.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Literal, TextIO

from parity import journal as journal_mod
from parity import report
from parity.cli import Exit, corpora, corpus_options
from parity.compare import Drift, compare
from parity.corpus import Corpus
from parity.diff import case_report
from parity.errors import ParityError, ReviewError
from parity.journal import Journal
from parity.project import in_ci

__all__ = ["Decision", "add_parser", "run", "run_review", "whole_only"]

Decision = Literal["accept", "reject", "skip"]

_KEYS: Mapping[str, tuple[Decision | None, bool]] = {
    "a": ("accept", False),
    "r": ("reject", False),
    "s": ("skip", False),
    "A": ("accept", True),
    "R": ("reject", True),
    "S": ("skip", True),
    "q": (None, True),
}
_CASE_PROMPT = "accept (a), reject (r), skip (s); the same for all remaining: A, R, S; quit (q)? "
_WHOLE_PROMPT = "accept the whole recording (a), reject it (r), or skip (s, q)? "


def whole_only(drift: Drift) -> list[str]:
    """Why the new recording can only be accepted or rejected as a whole (none: case
    by case is possible)."""
    old, new = drift.old, drift.new
    why = list(drift.other)
    if drift.first_seqs is not None:
        a, b = drift.first_seqs
        why.append(f"other seqs (first seq {a} -> {b})")
    why += [f"block {name} changed" for name in drift.blocks]
    why += [f"case {c} added" for c in drift.added]
    why += [f"case {c} removed" for c in drift.removed]
    why += [
        f"case {c.case}: {' and '.join(w for w in c.what if w in ('tool', 'args'))} changed"
        for c in drift.changes
        if "tool" in c.what or "args" in c.what
    ]
    if old.recorded_by != new.recorded_by and not any("recorded_by" in w for w in why):
        why.append("recorded_by differs (another instance, or versions one Go did not report)")
    if not drift.changes and not why:
        why.append("no case changed: the recordings differ only in what one of them recorded")
    return why


class _Asker:
    """Answers from ``answers`` (one per line), with ``A``/``R``/``S`` sticking."""

    def __init__(self, answers: TextIO, out: TextIO, fixed: Decision | None) -> None:
        self.answers, self.out = answers, out
        self.fixed = fixed
        self.quit = False

    def ask(self, prompt: str, *, keys: str) -> Decision | None:
        """A decision, or None to quit."""
        if self.fixed is not None or self.quit:
            return self.fixed
        while True:
            self.out.write(prompt)
            self.out.flush()
            line = self.answers.readline()
            if not line:  # end of input: quit, keeping what was decided
                self.out.write("\n")
                self.quit = True
                return None
            if not self.answers.isatty():
                self.out.write(line if line.endswith("\n") else line + "\n")  # as typed
            key = line.strip()
            if key in keys and key in _KEYS:
                decision, sticky = _KEYS[key]
                if decision is None:
                    self.quit = True
                elif sticky:
                    self.fixed = decision
                return decision
            print(f"answer one of: {', '.join(keys)}", file=self.out)


class _Port:
    """The port's output for the calls of a recording, against a fake Go serving it."""

    def __init__(self, journal: Journal, corpus: Corpus) -> None:
        from parity.replay import Replayer

        self.journal = journal
        self.replayer: Replayer | None = None
        self.unavailable = ""
        try:
            self.replayer = Replayer(journal, corpus).start()
        except ParityError as e:  # the review goes on without the port's outputs
            self.unavailable = f"(unavailable: {e})"

    def output(self, case: str) -> str:
        if self.replayer is None:
            return self.unavailable
        run = self.replayer.run(self.journal.call(case), mode="archive")
        return run.output if run.output is not None else f"(raised {run.error})"

    def __enter__(self) -> _Port:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.replayer is not None:
            self.replayer.stop()


def _show_case(
    drift: Drift,
    port: _Port,
    case: str,
    place: tuple[int, int],
    *,
    names: tuple[str, str],
    out: TextIO,
) -> None:
    """One changed case: what changed, the old and new Go outputs, the port's output."""
    what = next(c.what for c in drift.changes if c.case == case)
    print(f"\n[{place[0]}/{place[1]}] {case}: {', '.join(what)} changed", file=out)
    print(case_report(drift, case, old_name=names[0], new_name=names[1]), file=out)
    python = port.output(case)
    mapped = drift.in_old_seqs(case, output=python).output
    seqs_note = " (seqs as in the old)" if drift.first_seqs is not None else ""
    if mapped == drift.in_old_seqs(case).output:
        verdict = "the same as the new Go output"
    elif mapped == drift.old.call(case).output:
        verdict = "the same as the old Go output"
    else:
        body = "\n".join("    " + line for line in report.visible(mapped).split("\n"))
        verdict = f"{seqs_note} ({len(mapped.encode('utf-8'))} bytes):\n{body}"
    print(f"  python (the port, on the new recording): {verdict}", file=out)


def run_review(
    corpus: Corpus,
    *,
    journal_path: str,
    decide: Decision | None,
    answers: TextIO,
    out: TextIO,
) -> int:
    """``parity review`` for one corpus: 0 nothing left, 1 cases left for later.

    ``decide`` answers every question (``--accept-all``, ``--reject-all``); otherwise
    each answer is a line of ``answers``.
    """
    if in_ci():
        raise ReviewError("CI is set: CI never writes a golden, so it reviews nothing")
    pending = journal_mod.pending_path(journal_path)
    if not pending.exists():
        print(f"{journal_path}: nothing to review (no {pending})", file=out)
        return 0
    old, new = journal_mod.load(journal_path), journal_mod.load(pending)
    drift = compare(old, new, corpus=corpus)
    if drift.identical:
        pending.unlink()
        print(f"{journal_path}: {pending} records the same thing; deleted it", file=out)
        return 0
    asker = _Asker(answers, out, decide)
    names = (journal_path, str(pending))
    print(f"reviewing {pending} against {journal_path}:", file=out)
    for line in drift.lines() + drift.notes():
        print(line, file=out)
    whole = whole_only(drift)
    if whole:
        return _review_whole(drift, whole, asker, names=names, corpus=corpus, out=out)

    accepted: set[str] = set()
    rejected: set[str] = set()
    with _Port(new, corpus) as port:
        total = len(drift.changes)
        for index, change in enumerate(drift.changes, 1):
            if decide is None and not asker.quit and asker.fixed is None:
                _show_case(drift, port, change.case, (index, total), names=names, out=out)
            decision = asker.ask(f"[{index}/{total}] {change.case}: {_CASE_PROMPT}", keys="arsARSq")
            if decision == "accept":
                accepted.add(change.case)
            elif decision == "reject":
                rejected.add(change.case)
    left = [c.case for c in drift.changes if c.case not in accepted | rejected]
    if accepted:
        calls = tuple(new.call(c.case) if c.case in accepted else c for c in old.calls)
        journal_mod.write(dataclasses.replace(old, calls=calls), journal_path)
    if left:
        calls = tuple(old.call(c.case) if c.case in rejected else c for c in new.calls)
        journal_mod.write(dataclasses.replace(new, calls=calls), pending)
    else:
        pending.unlink()
    print(
        f"{journal_path}: {len(accepted)} accepted, {len(rejected)} rejected, "
        f"{len(left)} left for later" + (f" in {pending}" if left else ""),
        file=out,
    )
    return Exit.PENDING if left else Exit.OK


def _review_whole(
    drift: Drift,
    why: list[str],
    asker: _Asker,
    *,
    names: tuple[str, str],
    corpus: Corpus,
    out: TextIO,
) -> int:
    journal_path, pending = names[0], Path(names[1])
    print("this recording can only be accepted or rejected as a whole:", file=out)
    for reason in why:
        print(f"  {reason}", file=out)
    if asker.fixed is None:
        with _Port(drift.new, corpus) as port:
            total = len(drift.changes)
            for index, change in enumerate(drift.changes, 1):
                _show_case(drift, port, change.case, (index, total), names=names, out=out)
    decision = asker.ask(_WHOLE_PROMPT, keys="arsq")
    if decision == "accept":
        journal_mod.write(drift.new, journal_path)
        pending.unlink()
        print(f"{journal_path}: replaced by the new recording", file=out)
        return 0
    if decision == "reject":
        pending.unlink()
        print(f"{journal_path}: kept; the new recording is deleted", file=out)
        return 0
    print(f"{journal_path}: kept; the new recording is left for later in {pending}", file=out)
    return Exit.PENDING


# --- the command: parity review ------------------------------------------------------

_HELP = """\
Review what `parity record` left beside a journal (JOURNAL.new, a recording
that differs from it), as insta reviews snapshots. Each changed case shows the
old Go output, the new Go output (its seqs written as the journal's), the port's
output on the new recording, and their diff; then asks:

  a  accept: the journal takes the new call (output and reads)
  r  reject: the journal keeps its call
  s  skip: leave it in JOURNAL.new for later
  A, R, S  the same for this and every remaining case
  q  quit, keeping what was decided (end of input does the same)

What can be accepted case by case: changed outputs and reads, when the two
recordings have the same corpus, cases, args, seqs, blocks and recorded_by (Go
and Unicode versions, platform, instance). Anything else (a changed block, other
seqs, another Go version or instance, cases added or removed, only reads or
versions that one Go could not record) keeps the journal consistent only as a
whole: the review then offers to accept or reject the whole recording.

Answers are read one per line from standard input. Exit status: 0 nothing left
to review, 4 cases left for later (skipped, quit), 2 an error: an unusable
journal, or CI=true (CI never writes a golden).
"""


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> argparse.ArgumentParser:
    """``parity review``'s parser."""
    rv = sub.add_parser(
        "review",
        help="accept or reject, case by case, what `parity record` left in JOURNAL.new",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description=_HELP,
    )
    corpus_options(rv)
    decide = rv.add_mutually_exclusive_group()
    decide.add_argument(
        "--accept-all",
        dest="decide",
        action="store_const",
        const="accept",
        help="accept every change (the whole recording), without asking",
    )
    decide.add_argument(
        "--reject-all",
        dest="decide",
        action="store_const",
        const="reject",
        help="reject every change, without asking: the journal stays as it is",
    )
    return rv


def run(args: argparse.Namespace) -> int:
    """``parity review``: the worst status over the corpora."""
    status: int = Exit.OK
    for corpus, path in corpora(args):
        status = max(
            status,
            run_review(
                corpus, journal_path=path, decide=args.decide, answers=sys.stdin, out=sys.stdout
            ),
        )
    return status
