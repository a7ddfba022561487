"""``parity``: record the golden journals from Go, replay them against Python.

Exit status: 0 when everything passes, 1 on a parity failure (or drift for
``record --check`` and ``diff``, a recording left for review by ``record``, cases
left for later by ``review``), 2 on a harness or journal error (a message, no
traceback; also ``record`` and ``review`` under CI, which never write a golden),
130 on Ctrl-C (SIGINT) and 143 on SIGTERM: both unwind, so a Go reference started
for the command is stopped and no journal is half written.
"""

from __future__ import annotations

import argparse
import importlib
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from types import FrameType
from typing import TYPE_CHECKING, TextIO

if TYPE_CHECKING:
    from parity.corpus import Corpus

__all__ = ["main"]

_DELEGATED = {
    "adopt": ("parity.adopt", "turn the shadow's divergences (JSON lines) into corpus cases"),
    "fuzz": ("parity.campaign", "look for divergences with Hypothesis (`make fuzz`)"),
    "probe": ("parity.probe", "name a running Go's Unicode version from its tool endpoint"),
    "strength": ("parity.strength", "measure how many mutants the replay kills (`make strength`)"),
}


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="parity",
        description="Go<->Python parity harness: golden journals recorded from Go, "
        "replayed against the Python port.",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    rp = sub.add_parser("replay", help="replay the golden journals against Python (`make parity`)")
    _corpus_options(rp)
    rp.add_argument(
        "--no-fallback",
        dest="fallback",
        action="store_false",
        help="skip the last replay, where the archive fails and /tool/exec answers",
    )
    rp.add_argument("--case", action="append", metavar="CASE", help="replay only this case")
    rp.add_argument("-v", "--verbose", action="store_true", help="list every case")

    rc = sub.add_parser(
        "record",
        help="record the golden journals from Go (`make golden`)",
        description="Record each corpus from Go. A journal that does not exist is written; "
        "one that the new recording differs from is kept, and the recording written beside "
        "it (JOURNAL.new) for `parity review` (exit 1). Drift is judged modulo the seqs "
        "(another seq base is not a change) and what a Go cannot report (reads, versions) "
        "is 'not recorded', never 'changed'. Under CI=true, only --check runs (else exit 2).",
    )
    _corpus_options(rc)
    from parity.goclient import TOKEN_ENV, add_go_options

    add_go_options(
        rc.add_argument,
        url_help=f"a live, empty Go instance (token in ${TOKEN_ENV}); "
        "default: a fresh Go reference",
    )
    rc.add_argument(
        "--check",
        action="store_true",
        help="record in memory, write nothing; exit 1 when the Go no longer answers as the "
        "committed journal says (drift)",
    )
    for key in ("go-version", "unicode-version", "goos", "goarch"):
        rc.add_argument(
            f"--{key}",
            metavar="V",
            help=f"{key} to record for a live Go without /debug/version (else 'unknown')",
        )

    rv = sub.add_parser(
        "review",
        help="accept or reject, case by case, what `parity record` left in JOURNAL.new",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description=_REVIEW_HELP,
    )
    _corpus_options(rv)
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

    df = sub.add_parser(
        "diff",
        help="explain the differences between two journals",
        description="How journal B differs from journal A, modulo the seqs: the drift, the "
        "seqs, what one journal did not record (reads, versions), and each changed case's "
        "outputs and reads. Exit 0 when B records the same answers as A, 1 on drift.",
    )
    df.add_argument("old", metavar="A.json")
    df.add_argument("new", metavar="B.json")

    for name, (_, help_text) in _DELEGATED.items():
        sub.add_parser(name, help=help_text, add_help=False)
    return parser


_REVIEW_HELP = """\
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
to review, 1 cases left for later (skipped, quit), 2 an error: an unusable
journal, or CI=true (CI never writes a golden).
"""


def _corpus_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--corpus",
        action="append",
        metavar="NAME",
        help="only this corpus (repeatable; default: every registered corpus)",
    )
    parser.add_argument(
        "--journal", metavar="PATH", help="the journal file (default: golden/<corpus>.json)"
    )


def _corpora(args: argparse.Namespace) -> list[tuple[Corpus, str]]:
    from parity.corpus import CORPORA, get_corpus
    from parity.errors import ParityError

    names = args.corpus or list(CORPORA)
    if args.journal and len(names) != 1:
        raise ParityError("--journal needs exactly one --corpus (or a single registered corpus)")
    chosen: list[tuple[Corpus, str]] = []
    for name in names:
        corpus = get_corpus(name)
        chosen.append((corpus, args.journal or str(_display(corpus.journal_path))))
    return chosen


def _display(path: os.PathLike[str] | str) -> str:
    """``path`` relative to the working directory when it is inside it."""
    try:
        return os.path.relpath(path)
    except ValueError:
        return str(path)


def _replay(args: argparse.Namespace, out: TextIO) -> int:
    from parity import journal
    from parity.replay import ALL_MODES, Replayer, check_consistency

    started = time.perf_counter()
    passed = failed = not_modified = 0
    modes = tuple(m for m in ALL_MODES if args.fallback or m != "fallback")
    for corpus, path in _corpora(args):
        loaded = journal.load(path)
        check_consistency(loaded, corpus, path=path)
        with Replayer(loaded, corpus) as replayer:
            result = replayer.replay(modes=modes, cases=args.case)
        for case in result.results:
            if not case.passed:
                print(case.report(), file=out)
                print(file=out)
            elif args.verbose:
                print(f"ok {corpus.name}/{case.case}", file=out)
        passed += result.passed
        failed += result.failed
        not_modified += result.not_modified
        unchecked = sum(1 for r in result.results if r.call.reads is None)
        if unchecked:
            print(
                f"{path}: the reads of {unchecked} calls were not recorded "
                "(a Go without /debug/reads): not checked",
                file=out,
            )
    elapsed = time.perf_counter() - started
    if args.verbose:
        print(f"replayed in {elapsed:.2f}s ({' + '.join(modes)})", file=out)
        print(f"conditional pass: {not_modified} reads of /blocks answered 304", file=out)
    print(f"{passed} passed, {failed} failed", file=out)
    return 0 if failed == 0 else 1


def _record(args: argparse.Namespace, out: TextIO) -> int:
    from parity.goclient import connection_from_options
    from parity.record import run_record

    versions = {
        key: value
        for key in ("go_version", "unicode_version", "goos", "goarch")
        if (value := getattr(args, key))
    }
    go = connection_from_options(args.go_url, ca=args.go_ca, cert=args.go_cert, key=args.go_key)
    status = 0
    for corpus, path in _corpora(args):
        status = max(
            status,
            run_record(
                corpus,
                journal_path=path,
                go=go,
                versions=versions,
                check=args.check,
                out=out,
            ),
        )
    return status


def _review(args: argparse.Namespace, out: TextIO) -> int:
    from parity.review import run_review

    status = 0
    for corpus, path in _corpora(args):
        status = max(
            status,
            run_review(corpus, journal_path=path, decide=args.decide, answers=sys.stdin, out=out),
        )
    return status


def _diff(args: argparse.Namespace, out: TextIO) -> int:
    from parity.diff import explain

    text, same = explain(args.old, args.new)
    print(text, file=out)
    return 0 if same else 1


_COMMANDS: dict[str, Callable[[argparse.Namespace, TextIO], int]] = {
    "replay": _replay,
    "record": _record,
    "review": _review,
    "diff": _diff,
}


def _delegate(command: str, argv: list[str]) -> int:
    module_name, _ = _DELEGATED[command]
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as e:
        if e.name != module_name:
            raise
        print(
            f"parity: error: `parity {command}` is not available ({module_name} is absent)",
            file=sys.stderr,
        )
        return 2
    cli_main = getattr(module, "cli_main", None)
    if not callable(cli_main):
        print(f"parity: error: {module_name} has no cli_main(argv)", file=sys.stderr)
        return 2
    return int(cli_main(argv))


class _Terminated(BaseException):
    """SIGTERM, raised in the main thread so that every ``with`` and ``finally`` runs."""


def _raise_terminated(signum: int, frame: FrameType | None) -> None:
    raise _Terminated


@contextmanager
def _sigterm_unwinds() -> Iterator[None]:
    """While the command runs, SIGTERM unwinds like Ctrl-C instead of killing outright.

    Killed outright, the command would leave the Go reference it started running
    (the reference has a session of its own). The previous handler is restored after.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGTERM, _raise_terminated)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def main(argv: Sequence[str] | None = None) -> int:
    """The ``parity`` console script."""
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        with _sigterm_unwinds():
            return _main(argv)
    except KeyboardInterrupt:
        return 130
    except _Terminated:
        return 128 + signal.SIGTERM


def _main(argv: list[str]) -> int:
    if argv and argv[0] in _DELEGATED:
        return _delegate(argv[0], argv[1:])
    args = _parser().parse_args(argv)
    from parity.errors import ParityError

    try:
        return _COMMANDS[args.command](args, sys.stdout)
    except ParityError as e:
        sys.stdout.flush()
        print(f"parity: error: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
