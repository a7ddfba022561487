"""``parity``: record the golden journals from Go, replay them against Python.

Exit status: 0 when everything passes, 1 on a parity failure (or drift, or a
difference for ``diff``), 2 on a harness or journal error (a message, no traceback),
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
    "fuzz": ("parity.fuzz", "look for divergences with Hypothesis (`make fuzz`)"),
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
        help="skip the second replay, where the archive fails and /tool/exec answers",
    )
    rp.add_argument("--case", action="append", metavar="CASE", help="replay only this case")
    rp.add_argument("-v", "--verbose", action="store_true", help="list every case")

    rc = sub.add_parser("record", help="record the golden journals from Go (`make golden`)")
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
        help="record in memory; exit 1 when the committed journal no longer matches (drift)",
    )
    for key in ("go-version", "unicode-version", "goos", "goarch"):
        rc.add_argument(f"--{key}", metavar="V", help=f"{key} of a live Go without /debug/version")

    df = sub.add_parser("diff", help="explain the differences between two journals")
    df.add_argument("old", metavar="A.json")
    df.add_argument("new", metavar="B.json")

    for name, (_, help_text) in _DELEGATED.items():
        sub.add_parser(name, help=help_text, add_help=False)
    return parser


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
    from parity.replay import MODES, Replayer, check_consistency

    started = time.perf_counter()
    passed = failed = 0
    modes = MODES if args.fallback else MODES[:1]
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
    elapsed = time.perf_counter() - started
    if args.verbose:
        print(f"replayed in {elapsed:.2f}s ({' + '.join(modes)})", file=out)
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


def _diff(args: argparse.Namespace, out: TextIO) -> int:
    from parity.diff import explain

    text, same = explain(args.old, args.new)
    print(text, file=out)
    return 0 if same else 1


_COMMANDS: dict[str, Callable[[argparse.Namespace, TextIO], int]] = {
    "replay": _replay,
    "record": _record,
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
