"""Comparing two journals of one corpus: what changed, modulo the seqs each Go assigned.

The one comparison behind ``parity record`` (``--check``: drift), ``review`` and
``parity diff A.json B.json`` (this module's command: how B differs from A).
Seqs are mapped through the block names (``Journal.seqs``), only where a seq stands: in
an output where the corpus says its tool prints one (``Corpus.printed_seqs``), in a read
``block?seq=N``, in the blocks (by name) and the args (resolved from the corpus's
template); the rest byte for byte. A case whose args cite a seq as digits naming other
blocks in the two recordings is not comparable. What a Go cannot report (reads ``null``,
versions ``"unknown"``) and the instance kind are notes, never a change.
"""

from __future__ import annotations

import argparse
import contextlib
import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Literal

from parity import journal, report
from parity.cli import Exit
from parity.corpus import Corpus, CorpusCall, get_corpus
from parity.errors import CorpusError
from parity.journal import UNKNOWN, VERSION_KEYS, Journal, JournalCall

RECORDED_BY = "recorded_by"  # the item of Drift.merged that is the journal's recorded_by
_READ_SEQ_RE = re.compile(r"block\?seq=([0-9]+)\Z")


@dataclass(frozen=True)
class _Name:
    """A seq, named by its block: the same in both recordings."""

    name: str


_Canonical = tuple[str | _Name, ...]


class _Recording:
    """One journal, with what its seqs map to."""

    def __init__(self, journal: Journal, corpus: Corpus | None) -> None:
        self.journal, self.corpus = journal, corpus
        self.names = {str(seq): name for name, seq in journal.seqs.items()}
        self.labels = {b.seq: b.label for b in journal.blocks}
        self.calls = {c.case: c for c in journal.calls}

    def template(self, call: JournalCall, wanted: CorpusCall | None) -> str | None:
        """The corpus's args template for ``call``, when its args are that template
        resolved with this recording's seqs."""
        if wanted is None or wanted.tool != call.tool:
            return None
        with contextlib.suppress(CorpusError):
            if wanted.resolve(self.journal.seqs) == call.args:
                return wanted.args
        return None

    def output(self, call: JournalCall, template: str | None) -> _Canonical:
        """``call.output`` with each printed seq named by its block."""
        printed = self.corpus.printed_seqs if self.corpus is not None else None
        if printed is None:
            return (call.output,)
        seqs, labels = self.journal.seqs, self.labels
        sites = printed(call.tool, call.output, template=template, seqs=seqs, labels=labels)
        return self._canonical(call.output, [(s.start, s.end, s.name) for s in sites])

    def reads(self, reads: Sequence[str]) -> tuple[_Canonical, ...]:
        """Each read with its seq named by its block (a seq no block has stays as is)."""
        found = [(read, _READ_SEQ_RE.match(read)) for read in reads]
        return tuple(self._canonical(r, [(*m.span(1), None)] if m else []) for r, m in found)

    def _canonical(self, text: str, spans: Sequence[tuple[int, int, str | None]]) -> _Canonical:
        parts: list[str | _Name] = []
        run, pos = "", 0  # the text since the last name
        for start, end, quoted in sorted(spans):
            if start < pos or end > len(text) or start >= end:
                return (text,)  # sites that make no sense: compared as it is
            digits = text[start:end]
            if quoted is not None:  # the name is the block's only where the digits are its seq
                name = quoted if str(self.journal.seqs.get(quoted)) == digits else None
            else:
                name = self.names.get(digits)
            if name is None:
                run += text[pos:end]
            else:
                parts += [run + text[pos:start], _Name(name)]
                run = ""
            pos = end
        return tuple(p for p in [*parts, run + text[pos:]] if p != "")

    def render(self, canonical: _Canonical, raw: str) -> str:
        """A canonical text with this recording's seqs (``raw`` where one has none)."""
        seqs = self.journal.seqs
        if not all(p.name in seqs for p in canonical if isinstance(p, _Name)):
            return raw
        return "".join(str(seqs[p.name]) if isinstance(p, _Name) else p for p in canonical)


@dataclass(frozen=True, kw_only=True)
class Drift:
    """How a new recording differs from an old one (the committed journal).

    True when the new Go answers differently: a case changed, added or removed, a
    block, the corpus, the order of the calls, or a version both Gos reported.
    Seqs, what one Go could not report and cases not comparable across seqs are
    reported (``notes``) but are not drift.
    """

    old: Journal = field(repr=False)
    new: Journal = field(repr=False)
    corpus: Corpus | None = field(default=None, repr=False)  # None: outputs as they are
    changes: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    """Each case recorded in both whose answer changed: what of tool, args, output and
    reads (modulo the seqs)."""
    added: tuple[str, ...] = ()  # cases recorded now that the old journal lacks
    removed: tuple[str, ...] = ()  # cases of the old journal no longer recorded
    blocks: tuple[str, ...] = ()  # by name: label or content differ, or one journal lacks it
    other: tuple[str, ...] = ()
    """``corpus``, ``seqs`` (block names), ``calls (order)``, and ``recorded_by.KEY (A
    -> B)`` for a version both Gos reported."""
    first_seqs: tuple[int, int] | None = None  # the first block's seq in each, if they differ
    shifted: bool = False  # whether the seqs differ by one offset (only the base differs)
    not_recorded: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    """What each side (``"old"``, ``"new"``) could not report, so was not compared:
    ``"the reads of N calls"``, and the version keys it has as ``"unknown"``."""
    incomparable: Mapping[str, str] = field(default_factory=dict)  # case: why not compared

    @property
    def identical(self) -> bool:
        """Whether the two journals are the same, byte for byte once written."""
        return self.old == self.new and list(self.old.seqs) == list(self.new.seqs)

    def __bool__(self) -> bool:
        return bool(self.changes or self.added or self.removed or self.blocks or self.other)

    def lines(self) -> list[str]:
        """One line per difference that is drift."""
        out = [f"  changed: {case} ({', '.join(what)})" for case, what in self.changes.items()]
        out += [f"  added:   {c}" for c in self.added]
        out += [f"  removed: {c}" for c in self.removed]
        out += [f"  differs: block {b}" for b in self.blocks]
        out += [f"  differs: {s}" for s in self.other]
        return out

    def notes(self) -> list[str]:
        """One line per difference that is not drift."""
        out = []
        if self.first_seqs is not None:
            a, b = self.first_seqs
            how = "only the seq base differs" if self.shifted else "the seqs differ"
            out.append(f"  seqs:    {how} (first seq {a} -> {b}); mapped through the block names")
        if self.first_seqs is not None and getattr(self.corpus, "printed_seqs", None) is None:
            out.append("  seqs:    no corpus says where outputs print seqs: compared as they are")
        out += [
            f"  not recorded in the {side} journal (not compared): {', '.join(what)}"
            for side, what in self.not_recorded.items()
        ]
        out += [
            f"  not comparable across seqs: {case} ({why})"
            for case, why in self.incomparable.items()
        ]
        was, now = self.old.recorded_by.instance, self.new.recorded_by.instance
        if was != now:
            out.append(f"  instance: {was} -> {now}")
        return out

    def merged(self, taken: Collection[str], *, base: Literal["old", "new"] = "old") -> Journal:
        """The ``base`` journal with the items ``taken`` (case names, ``RECORDED_BY``) as
        the other has them (a case it lacks dropped), in the new recording's order (a case
        only the old has after its predecessor there). For the same blocks and seqs."""
        a, b = (self.old, self.new) if base == "old" else (self.new, self.old)
        calls = {c.case: c for c in a.calls}
        for key in taken:
            if key in b.cases:
                calls[key] = b.call(key)
            else:
                calls.pop(key, None)
        order = list(self.new.cases)
        for i, case in enumerate(self.old.cases):
            if case not in order:
                after = self.old.cases[i - 1] if i else None
                order.insert(order.index(after) + 1 if after in order else 0, case)
        rb = b.recorded_by if RECORDED_BY in taken else a.recorded_by
        return replace(a, recorded_by=rb, calls=tuple(calls[c] for c in order if c in calls))

    def in_old_seqs(self, case: str, *, output: str | None = None) -> JournalCall:
        """The new call of ``case``, the seqs its output and reads print written as the
        old journal's (each left as it is where they cannot all be mapped); ``output``:
        another output in the new seqs (the port's) to write so instead."""
        old, new = _Recording(self.old, self.corpus), _Recording(self.new, self.corpus)
        call = new.calls[case] if output is None else replace(new.calls[case], output=output)
        printed = new.output(call, new.template(call, _corpus_call(self.corpus, case)))
        reads = None
        if call.reads is not None:
            reads = tuple(map(old.render, new.reads(call.reads), call.reads))
        return replace(call, output=old.render(printed, call.output), reads=reads)


def _corpus_call(corpus: Corpus | None, case: str) -> CorpusCall | None:
    return corpus.call(case) if corpus is not None and case in corpus.cases else None


def _blocks(old: _Recording, new: _Recording) -> tuple[str, ...]:
    def by_name(r: _Recording) -> dict[str, tuple[str, str]]:
        return {
            r.names.get(str(b.seq)) or f"seq {b.seq}": (b.label, b.content)
            for b in r.journal.blocks
        }

    a, b = by_name(old), by_name(new)
    return tuple(n for n in {**a, **b} if a.get(n) != b.get(n))


def _literal_mismatch(call: CorpusCall | None, old: _Recording, new: _Recording) -> str | None:
    """Why ``call`` means different things in the two recordings, if it does."""
    for seq in call.literal_seqs if call is not None else ():
        a, b = old.names.get(str(seq)), new.names.get(str(seq))
        if a != b:
            a, b = ("no block" if n is None else f"block {n!r}" for n in (a, b))
            return f"its args cite seq {seq} as digits: {a} in the old, {b} in the new"
    return None


def compare(old: Journal, new: Journal, *, corpus: Corpus | None = None) -> Drift:
    """What changed from ``old`` to ``new``; ``corpus`` (by default the one ``old``
    names, if registered) says where outputs print seqs and what the args cite."""
    if corpus is None:
        with contextlib.suppress(CorpusError):
            corpus = get_corpus(old.corpus)
    o, n = _Recording(old, corpus), _Recording(new, corpus)
    other = [] if old.corpus == new.corpus else [f"corpus ({old.corpus} -> {new.corpus})"]
    if list(old.seqs) != list(new.seqs):
        other.append("seqs (the block names differ)")
    first_seqs, shifted = None, False
    common = [name for name in old.seqs if name in new.seqs]
    offsets = {new.seqs[name] - old.seqs[name] for name in common}
    if offsets - {0}:  # the seqs differ, not only the names
        first_seqs, shifted = (old.seqs[common[0]], new.seqs[common[0]]), len(offsets) == 1

    changes: dict[str, tuple[str, ...]] = {}
    incomparable: dict[str, str] = {}
    reads_old = reads_new = 0
    for call in new.calls:
        if (before := o.calls.get(call.case)) is None:
            continue
        wanted = _corpus_call(corpus, call.case)
        if (why := _literal_mismatch(wanted, o, n)) is not None:
            incomparable[call.case] = why
            continue
        t_old, t_new = o.template(before, wanted), n.template(call, wanted)
        reads_old += before.reads is None
        reads_new += call.reads is None
        differs = {
            "tool": before.tool != call.tool,
            "args": before.args != call.args and (t_old is None or t_new is None),
            "output": o.output(before, t_old) != n.output(call, t_new),
            "reads": before.reads is not None
            and call.reads is not None
            and o.reads(before.reads) != n.reads(call.reads),
        }
        if what := [k for k, d in differs.items() if d]:
            changes[call.case] = tuple(what)

    not_recorded: dict[str, tuple[str, ...]] = {}
    for side, reads, j in (("old", reads_old, old), ("new", reads_new, new)):
        unknown = tuple(k for k in VERSION_KEYS if getattr(j.recorded_by, k) == UNKNOWN)
        if missing := ((f"the reads of {reads} calls",) if reads else ()) + unknown:
            not_recorded[side] = missing
    if [c for c in old.cases if c in n.calls] != [c for c in new.cases if c in o.calls]:
        other.append("calls (order)")
    pairs = [(k, getattr(old.recorded_by, k), getattr(new.recorded_by, k)) for k in VERSION_KEYS]
    other += [
        f"recorded_by.{k} ({a} -> {b})" for k, a, b in pairs if a != b and UNKNOWN not in (a, b)
    ]
    return Drift(
        old=old,
        new=new,
        changes=changes,
        added=tuple(c.case for c in new.calls if c.case not in o.calls),
        removed=tuple(c.case for c in old.calls if c.case not in n.calls),
        blocks=_blocks(o, n),
        other=tuple(other),
        first_seqs=first_seqs,
        shifted=shifted,
        not_recorded=not_recorded,
        incomparable=incomparable,
        corpus=corpus,
    )


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
    drift = compare(journal.load(args.old), journal.load(args.new))
    if drift.identical:
        print(f"{args.old} and {args.new} record the same thing")
        return Exit.OK
    lines = [f"--- {args.old}", f"+++ {args.new}"]
    if drift:
        lines += [f"drift: {args.new} does not record the answers of {args.old}:", *drift.lines()]
    else:
        lines.append("the same answers, modulo the seqs and what one journal did not record:")
    lines += drift.notes()
    print(
        *lines,
        *report.changes_report(drift, old_name=args.old, new_name=args.new, full=True),
        sep="\n",
    )
    return Exit.DRIFT if drift else Exit.OK
