"""``parity review``: accept or reject what a new recording changed, one item at a time.

``parity record`` leaves a recording that differs from the journal beside it,
``<journal>.new`` (as insta writes ``.snap.new``); the review compares the two
(``parity.compare``) and asks about each item, as ``_HELP`` says: 0 nothing left,
4 items left, 2 an error (or CI, where nothing writes a golden), 130 Ctrl-C.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import sys
from collections.abc import Callable, Mapping
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Literal, TextIO

from parity import journal as journal_mod
from parity import report
from parity.cli import Exit, corpora, corpus_options
from parity.compare import RECORDED_BY, Drift, compare
from parity.corpus import Corpus
from parity.errors import ParityError
from parity.journal import Journal
from parity.project import in_ci
from parity.report import LINES_SHOWN, case_report

if TYPE_CHECKING:
    from parity.replay import Replayer

Decision = Literal["accept", "reject", "skip"]
_Answer = Decision | Literal["details"]

# An answer's key, in lower case; its capital (A, R, S) answers every item left.
_KEYS: Mapping[str, _Answer | None] = dict(a="accept", r="reject", s="skip", d="details", q=None)
_ITEM_PROMPT = (
    "accept (a), reject (r), skip (s), details (d); the same for all remaining: A, R, S; quit (q)? "
)
_WHOLE_PROMPT = "accept the whole recording (a), reject it (r), skip (s, q), details (d)? "
_INTERRUPTED = "interrupted (Ctrl-C): what was decided is kept, as with q"


def whole_only(drift: Drift) -> list[str]:
    """Why the new recording can only be accepted or rejected as a whole (none: item by
    item is possible): the corpus, a block or the seqs differ, so every case's seqs and
    outputs hang together; or no item differs."""
    why = [w for w in drift.other if w.startswith(("corpus ", "seqs "))]
    if drift.first_seqs is not None:
        a, b = drift.first_seqs
        why.append(f"other seqs (first seq {a} -> {b})")
    old, new = drift.old.seqs, drift.new.seqs
    for name in drift.blocks:
        how = "added" if name not in old else "removed" if name not in new else "changed"
        why.append(f"block {name} {how}")
    if not why and not items(drift):
        why.append("no case changed: the recordings differ only in what one of them recorded")
    return why


def items(drift: Drift) -> list[tuple[str, str]]:
    """What can be decided on its own, with what differs: each changed, added and
    removed case (by name), then ``RECORDED_BY`` when it differs."""
    out = [(case, f"{', '.join(what)} changed") for case, what in drift.changes.items()]
    out += [(case, "added (not in the journal)") for case in drift.added]
    out += [(case, "removed (not recorded now)") for case in drift.removed]
    old, new = asdict(drift.old.recorded_by), asdict(drift.new.recorded_by)
    if changed := [f"{k} {old[k]} -> {new[k]}" for k in old if old[k] != new[k]]:
        out.append((RECORDED_BY, ", ".join(changed)))
    return out


class _Asker:
    """Answers from ``answers`` (one per line), with ``A``/``R``/``S`` sticking."""

    def __init__(self, answers: TextIO, out: TextIO, fixed: Decision | None) -> None:
        self.answers, self.out, self.fixed = answers, out, fixed
        self.quit = False

    @property
    def asking(self) -> bool:
        """Whether the next question is put to the user (not answered in advance)."""
        return self.fixed is None and not self.quit

    def ask(self, prompt: str, *, keys: str) -> _Answer | None:
        """An answer, or None to quit."""
        if not self.asking:
            return self.fixed
        while True:
            print(prompt, end="", file=self.out, flush=True)
            line = self.answers.readline()
            if not line:  # end of input: quit, keeping what was decided
                self.out.write("\n")
                self.quit = True
                return None
            if not self.answers.isatty():
                self.out.write(line if line.endswith("\n") else line + "\n")  # as typed
            key = line.strip()
            if len(key) == 1 and key in keys:
                answer = _KEYS[key.lower()]
                if answer is None:
                    self.quit = True
                elif key.isupper() and answer != "details":
                    self.fixed = answer
                return answer
            print(f"answer one of: {', '.join(keys)}", file=self.out)


_Port = Callable[[str], str]


def _port(journal: Journal, corpus: Corpus, stack: contextlib.ExitStack) -> _Port:
    """The port's output for a case of ``journal``, against a fake Go serving it (started
    on ``stack`` at the first output asked for)."""

    @functools.cache
    def replayer() -> Replayer | str:  # a str: why there is none
        from parity.replay import Replayer

        try:
            return stack.enter_context(Replayer(journal, corpus))
        except ParityError as e:  # the review goes on without the port's outputs
            return f"(unavailable: {e})"

    def output(case: str) -> str:
        if isinstance(started := replayer(), str):
            return started
        run = started.run(journal.call(case), mode="archive")
        return run.output if run.output is not None else f"(raised {run.error})"

    return output


def _show(
    drift: Drift, port: _Port, key: str, head: str, *, names: tuple[str, str], full: bool
) -> list[str]:
    """One item: a bounded account of it (``full``: all of it)."""
    limit = None if full else LINES_SHOWN
    if key == RECORDED_BY:
        return ["", head]
    if key not in drift.changes:
        side, name = (drift.new, names[1]) if key in drift.new.cases else (drift.old, names[0])
        call = side.call(key)
        lines = ["", *report.head(head, call.tool, call.args)]
        return [*lines, report.block(f"output in {name}", call.output, limit)]
    lines = ["", head, case_report(drift, key, old_name=names[0], new_name=names[1], limit=limit)]
    mapped = drift.in_old_seqs(key, output=port(key)).output
    if mapped == drift.in_old_seqs(key).output:
        verdict = " the same as the new Go output"
    elif mapped == drift.old.call(key).output:
        verdict = " the same as the old Go output"
    else:
        seqs = " (seqs as in the old)" if drift.first_seqs is not None else ""
        verdict = "\n" + report.block(seqs.strip() or "its output", mapped, limit)
    return [*lines, f"  python (the port, on the new recording):{verdict}"]


def run_review(
    corpus: Corpus, *, journal_path: str, decide: Decision | None, answers: TextIO, out: TextIO
) -> int:
    """``parity review`` for one corpus: 0 nothing left, 4 items left for later.

    ``decide`` answers every question (``--accept-all``, ``--reject-all``); otherwise
    each answer is a line of ``answers``. Ctrl-C (``KeyboardInterrupt``) keeps what
    was decided, says so, and is raised again.
    """
    if in_ci():
        raise ParityError("CI is set: CI never writes a golden, so it reviews nothing")
    pending = journal_mod.pending_path(journal_path)
    if not pending.exists():
        print(f"{journal_path}: nothing to review (no {pending})", file=out)
        return Exit.OK
    drift = compare(journal_mod.load(journal_path), journal_mod.load(pending), corpus=corpus)
    if drift.identical:
        pending.unlink()
        print(f"{journal_path}: {pending} records the same thing; deleted it", file=out)
        return Exit.OK
    asker = _Asker(answers, out, decide)
    names = (journal_path, str(pending))
    print(
        f"reviewing {pending} against {journal_path}:",
        *drift.lines(),
        *drift.notes(),
        sep="\n",
        file=out,
    )
    review = _review_whole if whole_only(drift) else _review_items
    with contextlib.ExitStack() as stack:
        return review(drift, asker, _port(drift.new, corpus, stack), names=names, out=out)


def _review_items(
    drift: Drift, asker: _Asker, port: _Port, *, names: tuple[str, str], out: TextIO
) -> int:
    todo = items(drift)
    print(f"{len(todo)} to decide one by one (d shows one in full)", file=out)
    decided: dict[str, Decision] = {}
    interrupted = False
    try:
        for index, (key, what) in enumerate(todo, 1):
            place = f"[{index}/{len(todo)}] {key}"
            full = False
            while True:
                if asker.asking:
                    shown = _show(drift, port, key, f"{place}: {what}", names=names, full=full)
                    print("\n".join(shown), file=out)
                answer = asker.ask(f"{place}: {_ITEM_PROMPT}", keys="arsdARSq")
                if answer != "details":
                    break
                full = True
            if answer in ("accept", "reject"):
                decided[key] = answer
    except KeyboardInterrupt:
        interrupted = True
        print(file=out)
    journal_path, pending = names[0], Path(names[1])
    accepted = [k for k, d in decided.items() if d == "accept"]
    rejected = [k for k, d in decided.items() if d == "reject"]
    left = len(todo) - len(decided)
    if accepted:
        journal_mod.write(drift.merged(accepted), journal_path)
    if left:
        journal_mod.write(drift.merged(rejected, base="new"), pending)
    else:
        pending.unlink()
    print(
        f"{journal_path}: {len(accepted)} accepted, {len(rejected)} rejected, "
        f"{left} left for later" + (f" in {pending}" if left else ""),
        file=out,
    )
    if interrupted:
        print(_INTERRUPTED, file=out)
        raise KeyboardInterrupt
    return Exit.PENDING if left else Exit.OK


def _review_whole(
    drift: Drift, asker: _Asker, port: _Port, *, names: tuple[str, str], out: TextIO
) -> int:
    journal_path, pending = names[0], Path(names[1])
    why = [f"  {reason}" for reason in whole_only(drift)]
    print("this recording can only be accepted or rejected as a whole:", *why, sep="\n", file=out)
    left = f"{journal_path}: kept; the new recording is left for later in {pending}"
    try:
        while (answer := asker.ask(_WHOLE_PROMPT, keys="arsdq")) == "details":
            for index, (key, what) in enumerate(items(drift), 1):
                head = f"[{index}] {key}: {what}"
                print("\n".join(_show(drift, port, key, head, names=names, full=True)), file=out)
    except KeyboardInterrupt:
        print("", left, _INTERRUPTED, sep="\n", file=out)
        raise
    if answer == "accept":
        journal_mod.write(drift.new, journal_path)
        pending.unlink()
        print(f"{journal_path}: replaced by the new recording", file=out)
        return Exit.OK
    if answer == "reject":
        pending.unlink()
        print(f"{journal_path}: kept; the new recording is deleted", file=out)
        return Exit.OK
    print(left, file=out)
    return Exit.PENDING


_HELP = """\
Review what `parity record` left beside a journal (JOURNAL.new, a recording
that differs from it), as insta reviews snapshots: a summary first, then each
item on its own: a changed case (a bounded diff of the old and new Go outputs,
the new in the journal's seqs, and the port's output on the new recording), an
added case, a removed case, and recorded_by (versions, platform, instance) when
it differs. For each it asks:

  a  accept: the journal takes the new recording's item (a removed case goes)
  r  reject: the journal keeps its own
  s  skip: leave it in JOURNAL.new for later
  d  details: the item in full, then the question again
  A, R, S  the same for this and every remaining item
  q  quit, keeping what was decided (end of input and Ctrl-C do the same)

The whole recording is accepted or rejected at once only where its items hang
together: the corpus, a block or the seqs differ (the review says which), or
nothing but what one Go could not record (reads, versions) differs.

Answers are read one per line from standard input. Exit status: 0 nothing left
to review, 4 items left for later (skipped, quit), 2 an error: an unusable
journal, or CI=true (CI never writes a golden), 130 Ctrl-C (what was decided
is written).
"""


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> argparse.ArgumentParser:
    rv = sub.add_parser(
        "review",
        help="accept or reject, item by item, what `parity record` left in JOURNAL.new",
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
        help="accept every item (or the whole recording), without asking",
    )
    decide.add_argument(
        "--reject-all",
        dest="decide",
        action="store_const",
        const="reject",
        help="reject every item, without asking: the journal stays as it is",
    )
    return rv


def run(args: argparse.Namespace) -> int:
    """``parity review``: the worst status over the corpora."""
    statuses = [
        run_review(corpus, journal_path=path, decide=args.decide, answers=sys.stdin, out=sys.stdout)
        for corpus, path in corpora(args)
    ]
    return max(statuses, default=Exit.OK)
