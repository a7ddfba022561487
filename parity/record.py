"""The recorder: plays a corpus into a Go (a fresh reference, or a live one whose archive
is empty, or for ``--check`` holds exactly the journal's blocks) and writes what it
answered as a journal. Everything is read twice; two passes that differ are refused. A
call's reads are what ``GET /debug/reads`` gained during it (null without the route).
"""

from __future__ import annotations

import argparse
import contextlib
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TextIO, TypeVar

from parity import goclient
from parity import journal as journal_mod
from parity.cli import Exit, corpora, corpus_options
from parity.compare import Drift, compare
from parity.corpus import Corpus
from parity.errors import GoClientError, JournalError, ParityError
from parity.goclient import GoClient, GoConnection, add_go_options, connection_from_options
from parity.journal import UNKNOWN, VERSION_KEYS, Journal, JournalBlock, JournalCall, RecordedBy
from parity.probe import ProbeError, probe
from parity.project import in_ci
from parity.report import changes_report

FIRST_SEQ = 1000  # of a reference started for recording (not 1: seqs are not small counts)

_T = TypeVar("_T")


def _unless_absent(route: Callable[[], _T]) -> _T | None:
    """What a debug route answers, or None when the Go has no such route (404)."""
    try:
        return route()
    except GoClientError as e:
        if e.status == 404:
            return None
        raise


def _exec(go: GoClient, case: str, tool: str, args: str) -> str:
    """One case's output from the Go's ``/tool/exec``; a failure names the case."""
    try:
        return go.exec_tool(tool, args)
    except GoClientError as e:
        raise GoClientError(f"case {case!r}: {e}", status=e.status) from e


def _readable(corpus: Corpus, seqs: Mapping[str, int]) -> list[JournalBlock]:
    """The corpus's readable blocks, as a Go that gave them ``seqs`` serves them."""
    return [JournalBlock(seqs[b.name], b.label, b.content) for b in corpus.blocks if not b.locked]


def _held(present: list[JournalBlock], corpus: Corpus, held: Journal) -> dict[str, int] | None:
    """The seqs of the corpus's blocks, when ``present`` (the served blocks) are exactly
    the corpus's readable ones, in order, each at its seq in ``held`` plus one offset:
    what an earlier recording of ``held``'s kind left in this Go. None otherwise."""
    readable = [b.name for b in corpus.blocks if not b.locked]
    if list(held.seqs) != [b.name for b in corpus.blocks] or len(present) != len(readable):
        return None
    offset = present[0].seq - held.seqs[readable[0]]
    seqs = {name: seq + offset for name, seq in held.seqs.items()}
    return seqs if present == _readable(corpus, seqs) else None


def _archive(go: GoClient, corpus: Corpus, held: Journal | None) -> dict[str, int]:
    if present := go.blocks():
        if held is not None and (kept := _held(present, corpus, held)) is not None:
            return kept
        other = " other than exactly the corpus's" if held is not None else ""
        raise ParityError(
            f"the Go at {go.connection.url} already holds {len(present)} readable blocks"
            f"{other}; record against an empty instance (a fresh one)"
        )
    seqs: dict[str, int] = {}
    last = 0
    for block in corpus.blocks:
        seq = go.archive(block.label, block.content, locked=block.locked)
        if seq <= last:
            raise ParityError(f"block {block.name!r}: seq {seq} does not follow {last}")
        seqs[block.name] = last = seq
    return seqs


_Pass = tuple[tuple[JournalBlock, ...], tuple[JournalCall, ...]]


def _pass(go: GoClient, corpus: Corpus, seqs: Mapping[str, int]) -> _Pass:
    """One reading of everything: the served blocks, then every call's output."""
    blocks = go.blocks()
    if blocks != (expected := _readable(corpus, seqs)):
        served, wanted = {b.seq for b in blocks}, {b.seq for b in expected}
        detail = (
            f"seqs served but not expected: {sorted(served - wanted)}; "
            f"expected but not served: {sorted(wanted - served)}"
            if served != wanted
            else "a block's label or content came back changed"
        )
        raise ParityError(f"the served blocks are not the archived readable ones ({detail})")
    calls = []
    before = _unless_absent(go.reads)
    for c in corpus.calls:
        args = c.resolve(seqs)
        output = _exec(go, c.case, c.tool, args)
        reads: tuple[str, ...] | None = None
        if before is not None:
            after = _unless_absent(go.reads)
            if after is None or after[: len(before)] != before:
                raise ParityError(
                    f"case {c.case!r}: the Go's /debug/reads no longer lists the earlier reads "
                    "(restarted, or another client?); record against a Go used by no one else"
                )
            reads, before = tuple(after[len(before) :]), after
        calls.append(JournalCall(c.case, c.tool, args, output, reads))
    return tuple(blocks), tuple(calls)


def record(
    corpus: Corpus, *, go_url: str | GoConnection | None = None, held: Journal | None = None
) -> Journal:
    """Record ``corpus`` from a fresh Go reference, or the live Go at ``go_url`` (a URL,
    or a ``GoConnection`` with its token and TLS). A Go without ``/debug/version``: its
    versions "unknown", the Unicode version probed (``parity.probe``). ``held``: a
    journal of ``corpus`` whose blocks a Go may already hold, at its seqs plus one
    offset (as an earlier ``--check`` leaves it), recorded as it is."""
    instance: journal_mod.Instance = "reference" if go_url is None else "live"
    with contextlib.ExitStack() as stack:
        if go_url is None:
            from parity.reference import GoReference

            go_url = stack.enter_context(GoReference().start(first_seq=FIRST_SEQ)).connection
        elif isinstance(go_url, str):
            go_url = GoConnection(go_url)
        go = stack.enter_context(GoClient(go_url))
        served = _unless_absent(go.version) or {}
        meta = {k: served.get(k) or UNKNOWN for k in VERSION_KEYS}
        if meta["unicode_version"] == UNKNOWN:  # a Go without /debug/version: its tools tell
            with contextlib.suppress(ProbeError):
                meta["unicode_version"] = probe(go)
        seqs = _archive(go, corpus, held)
        first, second = _pass(go, corpus, seqs), _pass(go, corpus, seqs)
    if first != second:
        unstable = [
            a.case if a.output != b.output else f"{a.case} (reads)"
            for a, b in zip(first[1], second[1], strict=True)
            if a != b
        ]
        what = f"cases {', '.join(unstable)}" if unstable else "the served blocks"
        raise ParityError(f"the Go answered differently on the second pass ({what}); not written")
    return Journal(
        corpus=corpus.name,
        recorded_by=RecordedBy(**meta, instance=instance),
        seqs=seqs,
        blocks=first[0],
        calls=first[1],
    )


def run_record(
    corpus: Corpus,
    *,
    journal_path: str,
    go: GoConnection | None,
    check: bool,
    out: TextIO,
    full: bool = False,
    new_only: bool = False,
) -> int:
    """``parity record`` for one corpus (from ``go``, else a fresh Go reference).

    ``check``: nothing written; 0 the Go answers as the journal says (modulo the seqs),
    3 drift (bounded unless ``full``). Else an absent or unusable journal is written, a
    recording that differs goes beside it (``<journal>.new``): 4. ``new_only``: the
    journal takes only the cases it lacks (VCR's ``new_episodes``). Under CI: refused."""
    if not check and in_ci():
        raise ParityError(
            "CI is set: CI never writes a golden; `parity record --check` checks for drift"
        )
    source = go.url if go is not None else "a fresh Go reference"
    print(f"recording corpus {corpus.name!r} from {source}", file=out)
    old: Journal | None = None
    try:
        old = journal_mod.load(journal_path)
    except JournalError as e:
        if check:
            raise
        if Path(journal_path).exists():
            print(f"the committed journal is unusable, replacing it: {e}", file=out)
    if go is not None and old is not None:
        _unicode_note(go, old, out)
    new = record(corpus, go_url=go, held=old if check else None)
    pending = journal_mod.pending_path(journal_path)
    if old is not None:
        drift = compare(old, new, corpus=corpus)
        if check:
            return _check(drift, journal_path, out, full=full)
        if new_only:
            return _add_new(drift, journal_path, out)
        if not drift.identical:
            journal_mod.write(new, pending)
            print(
                f"{journal_path}: kept; the new recording differs, written to {pending}:",
                *drift.lines(),
                *drift.notes(),
                "review it: `parity review` (case by case), or `parity review --accept-all` "
                "or `--reject-all`",
                sep="\n",
                file=out,
            )
            return Exit.PENDING
        print(f"{journal_path}: no change ({len(new.calls)} calls)", file=out)
    else:
        journal_mod.write(new, journal_path)
        print(f"wrote {journal_path}: {len(new.blocks)} blocks, {len(new.calls)} calls", file=out)
    if pending.exists():
        pending.unlink()
        print(f"removed {pending}: the recording it held is out of date", file=out)
    return Exit.OK


def _unicode_note(go: GoConnection, old: Journal, out: TextIO) -> None:
    """Say when the live Go's probed Unicode version is not the one the journal records."""
    recorded = old.recorded_by.unicode_version
    try:
        probed = probe(go)
    except ProbeError as e:
        print(f"unicode: {e}", file=out)
        return
    if probed != recorded:
        print(
            f"unicode: the Go at {go.url} answers as Unicode {probed} (parity probe); the "
            f"journal was recorded from Unicode {recorded}: its hosts need "
            f'unicode_version="{probed}"',
            file=out,
        )


def _add_new(drift: Drift, journal_path: str, out: TextIO) -> int:
    """``record --new-only``: the journal takes the cases it lacks, nothing else."""
    from parity.review import whole_only

    why = whole_only(drift)
    if why and drift.added:
        raise ParityError(
            f"{journal_path}: --new-only adds cases to a journal of the same blocks and seqs, "
            f"and here {'; '.join(why)}: record without --new-only, then `parity review`"
        )
    if drift.added:
        journal_mod.write(drift.merged(drift.added), journal_path)
    print(f"{journal_path}: new cases added: {', '.join(drift.added) or 'none'}", file=out)
    if rest := [line for line in drift.lines() if not line.startswith("  added:")]:
        print("not taken (`parity record` records them for review):", *rest, sep="\n", file=out)
    return Exit.OK


def _check(drift: Drift, journal_path: str, out: TextIO, *, full: bool) -> int:
    """``record --check``'s verdict on ``drift``: 0 no drift, 3 drift."""
    calls = len(drift.new.calls)
    if drift.identical:
        print(f"{journal_path}: matches the Go ({calls} calls)", file=out)
        return Exit.OK
    if not drift:  # the differences are notes (the seqs, what one side did not record)
        head = f"{journal_path}: matches the Go ({calls} calls) but for what follows:"
        print(head, *drift.notes(), sep="\n", file=out)
        return Exit.OK
    print(
        f"{journal_path}: DRIFT, the Go no longer answers as recorded:",
        *drift.lines(),
        *drift.notes(),
        "record it with `parity record` (the same options, without --check), "
        "then `parity review` the changes",
        *changes_report(drift, old_name=journal_path, new_name="the Go", full=full),
        sep="\n",
        file=out,
    )
    if drift.changes and not full:
        print("(bounded: `-v` shows every changed case in full)", file=out)
    return Exit.DRIFT


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> argparse.ArgumentParser:
    rc = sub.add_parser(
        "record",
        help="record the golden journals from Go (`make golden`)",
        description="Record each corpus from Go. A journal that does not exist is written; "
        "one that the new recording differs from is kept, and the recording written beside "
        "it (JOURNAL.new) for `parity review` (exit 4). Drift is judged modulo the seqs "
        "(another seq base is not a change) and what a Go cannot report (reads, versions) "
        "is 'not recorded', never 'changed'. Under CI=true, only --check runs (else exit 2).",
    )
    corpus_options(rc)
    add_go_options(
        rc.add_argument,
        url_help=f"a live, empty Go instance (token in ${goclient.TOKEN_ENV}); "
        "default: a fresh Go reference",
    )
    mode = rc.add_mutually_exclusive_group()
    mode.add_argument(
        "--new-only",
        action="store_true",
        help="add to the journal the cases it lacks (such as adopted ones) and change nothing "
        "else; what else differs is listed, not taken",
    )
    mode.add_argument(
        "--check",
        action="store_true",
        help="record in memory, write nothing; exit 3 when the Go no longer answers as the "
        "committed journal says (drift), with each changed case's first differing byte and "
        "diff (bounded)",
    )
    rc.add_argument(
        "-v",
        "--verbose",
        action="store_true",
        help="with --check: every changed case, each output and diff in full",
    )
    return rc


def run(args: argparse.Namespace) -> int:
    """``parity record``: the worst status over the corpora."""
    go = connection_from_options(args)
    statuses = [
        run_record(
            corpus,
            journal_path=path,
            go=go,
            check=args.check,
            out=sys.stdout,
            full=args.verbose,
            new_only=args.new_only,
        )
        for corpus, path in corpora(args)
    ]
    return max(statuses, default=Exit.OK)
