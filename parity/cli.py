"""``parity``: record the golden journals from Go, replay them against Python.

Every subcommand is one module, registered in ``COMMANDS``, with ``add_parser(sub)``
(adds its parser to the subparsers ``sub``) and ``run(args) -> int`` (the exit status);
only the named command's module is imported. ``main`` is the one error handler: a
``ParityError`` is one line on stderr, ``parity: error: ...``, and exit 2. The exit
statuses, one meaning each, are ``Exit`` (docs/faults.md).
"""

from __future__ import annotations

import argparse
import enum
import importlib
import os
import signal
import sys
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

from parity.corpus import CORPORA, Corpus, get_corpus
from parity.errors import ParityError


class Exit(enum.IntEnum):
    """The exit statuses of ``parity``, one meaning each."""

    OK = 0  # done: everything passed, nothing drifted, nothing left to review
    PORT_DIFFERS = 1  # the port departs from Go: a replayed case failed, fuzz found one
    ERROR = 2  # never a verdict on the port: a damaged journal, a bad option, no Go, CI
    DRIFT = 3  # the Go departs from the journal (record --check, diff)
    PENDING = 4  # a recording awaits review: record wrote JOURNAL.new, review left items
    BELOW_GATE = 5  # strength: a figure is under its gate, or something is unexplained
    INTERRUPTED = 128 + signal.SIGINT  # it unwinds, so a Go reference it started stops
    CLOSED_PIPE = 128 + signal.SIGPIPE  # the reader of the output went away
    TERMINATED = 128 + signal.SIGTERM  # it unwinds as for SIGINT


COMMANDS: dict[str, str] = {
    "replay": "parity.replay",
    "record": "parity.record",
    "review": "parity.review",
    "diff": "parity.compare",
    "adopt": "parity.adopt",
    "fuzz": "parity.campaign",
    "strength": "parity.strength._cli",
    "probe": "parity.probe",
}
"""Subcommand name to its module (``add_parser(sub)``, ``run(args)``), in help order."""


def corpus_options(parser: argparse.ArgumentParser) -> None:
    """``--corpus`` and ``--journal``, for the commands that work on journals."""
    parser.add_argument(
        "--corpus",
        action="append",
        metavar="NAME",
        help="only this corpus (repeatable; default: every registered corpus)",
    )
    parser.add_argument(
        "--journal", metavar="PATH", help="the journal file (default: golden/<corpus>.json)"
    )


def corpora(args: argparse.Namespace) -> list[tuple[Corpus, str]]:
    """The corpora that ``corpus_options`` chose, each with its journal's path."""
    names = args.corpus or list(CORPORA)
    if args.journal and len(names) != 1:
        raise ParityError("--journal needs exactly one --corpus (or a single registered corpus)")
    return [(c, args.journal or os.path.relpath(c.journal_path)) for c in map(get_corpus, names)]


def _run(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="parity",
        description="Go<->Python parity harness: golden journals recorded from Go, "
        "replayed against the Python port.",
        epilog="Exit status: 0 done, 1 the port departs from Go, 2 an error, 3 drift, "
        "4 a recording awaits review, 5 strength under its gate, 130/143 interrupted, "
        "141 closed pipe.",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    chosen = argv[0] if argv and argv[0] in COMMANDS else None
    built = {}
    for name, module in COMMANDS.items():  # every parser for the top-level help
        if chosen in (None, name):
            built[name] = importlib.import_module(module).add_parser(sub)
        else:
            sub.add_parser(name)
    args, extra = parser.parse_known_args(argv)
    if extra:
        built.get(args.command, parser).error(f"unrecognized arguments: {' '.join(extra)}")
    try:
        return int(importlib.import_module(COMMANDS[args.command]).run(args))
    except ParityError as e:
        sys.stdout.flush()
        print(f"parity: error: {e}", file=sys.stderr)
        return Exit.ERROR


@contextmanager
def _sigterm_unwinds() -> Iterator[None]:
    """While the command runs, SIGTERM unwinds as ``SystemExit(143)`` (a Go reference it
    started is stopped, not left running); the previous handler is restored after."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(Exit.TERMINATED))
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _silence_closed_pipes() -> None:
    """Point stdout and stderr at /dev/null where their reader is gone, so that the
    interpreter's flush at exit does not fail again (as Python's docs advise)."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except BrokenPipeError:
            os.dup2(devnull, stream.fileno())
        except (OSError, ValueError):  # not a real file (captured, closed): nothing to do
            pass
    os.close(devnull)


def main(argv: Sequence[str] | None = None) -> int:
    """The ``parity`` command; returns its exit status."""
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        with _sigterm_unwinds():
            status = _run(argv)
        sys.stdout.flush()
        return status
    except SystemExit as e:  # argparse: --help (0), a usage error (2); SIGTERM (143)
        return e.code if isinstance(e.code, int) else Exit.ERROR
    except BrokenPipeError:
        _silence_closed_pipes()
        return Exit.CLOSED_PIPE
    except KeyboardInterrupt:
        return Exit.INTERRUPTED
