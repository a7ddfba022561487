"""Shared helpers for the harness's tests: small journals, running the CLI, and the golden
tests' fixtures: one test per journal call, id ``<corpus>/<case>``, replayed in every mode
against one fake Go per corpus (``parity_replayers``). The journals are loaded and checked
once per session (``config.stash``); a damaged or stale one is a single failing
``golden/journal-error`` test. Their options: ``parity.plugin``.
"""

from __future__ import annotations

import contextlib
import dataclasses
import io
import signal
from collections.abc import Callable, Iterator
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest

from parity import journal
from parity.cli import main
from parity.corpus import CORPORA, Corpus, get_corpus
from parity.errors import ParityError
from parity.goclient import GoConnection, connection_from_options
from parity.journal import Journal, JournalCall, RecordedBy
from parity.replay import Replayer, check_consistency

GOLDEN = get_corpus("recall").journal_path

RunCli = Callable[..., tuple[int, str, str]]


@pytest.fixture
def interruptible() -> Iterator[None]:
    """The processes a test starts take SIGINT as a terminal's foreground job does, even
    when this run was started with SIGINT ignored (in the background of a shell without
    job control): a handler here is reset to the default in a child, SIG_IGN is not."""
    if signal.getsignal(signal.SIGINT) != signal.SIG_IGN:
        yield
        return
    signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, signal.SIG_IGN)


@pytest.fixture
def run_cli(capsys: pytest.CaptureFixture[str]) -> RunCli:
    """``run_cli(*argv)``: the ``parity`` command's exit status, stdout and stderr."""

    def run(*argv: str) -> tuple[int, str, str]:
        status = main(list(argv))
        captured = capsys.readouterr()
        return status, captured.out, captured.err

    return run


def cli_output(*argv: str) -> tuple[int, str, str]:
    """The ``parity`` command's exit status, stdout and stderr, outside any test's capsys
    (for a fixture wider than a test)."""
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        status = main(list(argv))
    return status, out.getvalue(), err.getvalue()


@pytest.fixture(scope="session")
def golden() -> Journal:
    """The committed recall journal."""
    return journal.load(GOLDEN)


@dataclasses.dataclass(frozen=True)
class Small:
    """The golden cut to a few cases, the recall corpus cut alike, and the journal's file."""

    corpus: Corpus
    journal: Journal
    path: Path


SmallGolden = Callable[..., Small]


@pytest.fixture
def small_golden(golden: Journal, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> SmallGolden:
    """``small_golden(*cases)``: the golden cut to ``cases`` (every block kept), written to
    ``tmp_path/small/recall.json``; for the rest of the test, the recall corpus that the
    ``parity`` commands load is cut alike, so that the journal is consistent with it, and
    that file is its journal by default (``--journal`` not given).

    For a test whose point is a command's behaviour on a case or two, not the whole golden.
    """
    from parity import corpus as corpus_mod
    from parity.corpora import recall

    def cut(*cases: str) -> Small:
        keep = set(cases)
        assert keep <= set(golden.cases), keep - set(golden.cases)
        corpus = dataclasses.replace(
            recall.CORPUS, calls=tuple(c for c in recall.CORPUS.calls if c.case in keep)
        )
        small = dataclasses.replace(golden, calls=tuple(c for c in golden.calls if c.case in keep))
        path = tmp_path / "small" / "recall.json"
        path.parent.mkdir(exist_ok=True)
        monkeypatch.setattr(recall, "CORPUS", corpus)
        monkeypatch.setattr(corpus_mod, "golden_dir", lambda: path.parent)
        journal.write(small, path)
        return Small(corpus, small, path)

    return cut


def small_journal() -> Journal:
    """A two-call journal, for the journal module's own tests."""
    return Journal(
        corpus="recall",
        recorded_by=RecordedBy(
            go_version="go1.27.3",
            unicode_version="17.0.0",
            goos="linux",
            goarch="amd64",
            instance="reference",
        ),
        seqs={"a": 7},
        blocks=(journal.JournalBlock(7, "<b>", "line\u2028é"),),
        calls=(
            JournalCall("one", "recall", '{"id": "r7"}', "[r7] <b>\nline\u2028é", ("block?seq=7",)),
            JournalCall("two", "recall_search", "{}", 'recall_search needs a "query"', ()),
        ),
    )


def with_reads(j: Journal, case: str, reads: tuple[str, ...] | None) -> Journal:
    """``j`` with one call's recorded reads replaced (its digest is recomputed on write)."""
    calls = tuple(dataclasses.replace(c, reads=reads) if c.case == case else c for c in j.calls)
    return dataclasses.replace(j, calls=calls)


def with_output(j: Journal, case: str, output: str) -> Journal:
    """``j`` with one recorded output replaced (its digest is recomputed on write)."""
    calls = tuple(dataclasses.replace(c, output=output) if c.case == case else c for c in j.calls)
    return dataclasses.replace(j, calls=calls)


def copy_with_output(j: Journal, case: str, output: str, path: Path) -> Path:
    """Write ``j`` with one output replaced to ``path``, through parity.journal."""
    journal.write(with_output(j, case, output), path)
    return path


@dataclasses.dataclass(frozen=True)
class GoldenCase:
    """One recorded call, as a test parameter (None: the journals are unusable)."""

    corpus: str
    call: JournalCall | None


_Loaded = dict[str, Journal]  # the session's journals by corpus name
JOURNALS = pytest.StashKey[_Loaded | str]()


def _journals(config: pytest.Config) -> _Loaded | str:
    """The session's journals, loaded, verified and checked against their corpora once;
    or why they are unusable."""
    if JOURNALS in config.stash:
        return config.stash[JOURNALS]
    loaded: _Loaded = {}
    paths: dict[str, str] = {}
    try:
        for path in config.getoption("parity_journal") or [
            str(get_corpus(name).journal_path) for name in CORPORA
        ]:
            j = journal.load(path)
            if j.corpus in loaded:
                raise ParityError(
                    f"two journals record corpus {j.corpus!r}: {paths[j.corpus]}, {path}"
                )
            check_consistency(j, get_corpus(j.corpus), path=path)
            loaded[j.corpus], paths[j.corpus] = j, path
    except ParityError as exc:
        config.stash[JOURNALS] = str(exc)
    else:
        config.stash[JOURNALS] = loaded
    return config.stash[JOURNALS]


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "golden_case" not in metafunc.fixturenames:
        return
    journals = _journals(metafunc.config)
    cases = [
        GoldenCase(name, call)
        for name, j in ({} if isinstance(journals, str) else journals).items()
        for call in j.calls
    ] or [GoldenCase("golden", None)]
    ids = [f"{c.corpus}/{c.call.case if c.call else 'journal-error'}" for c in cases]
    metafunc.parametrize("golden_case", cases, ids=ids)


@pytest.fixture(scope="session")
def parity_go(pytestconfig: pytest.Config) -> GoConnection | None:
    """The live Go of ``--parity-go-url`` (token, TLS files: options, then environment),
    or None (the reference).
    """
    try:
        return connection_from_options(pytestconfig.option, prefix="--parity-go")
    except ParityError as exc:  # the one message: pytrace=False shows no traceback
        pytest.fail(str(exc), pytrace=False)


@pytest.fixture(scope="session")
def parity_replayers(pytestconfig: pytest.Config) -> Iterator[dict[str, Replayer]]:
    """One started ``Replayer`` (fake Go + Python host) per journal, for the session."""
    journals = _journals(pytestconfig)
    if isinstance(journals, str):
        pytest.fail(journals, pytrace=False)
    with contextlib.ExitStack() as stack:
        try:
            replayers = {
                name: stack.enter_context(Replayer(j, get_corpus(name)))
                for name, j in journals.items()
            }
        except ParityError as exc:  # the one message: pytrace=False shows no traceback
            pytest.fail(str(exc), pytrace=False)
        yield replayers
