"""The harness's pytest plugin (loaded by this checkout's pytest config: ``-p parity.plugin``).

Fixtures for the Go reference instance (the golden-journal fixtures and options
are at the end: ``parity_journal``, ``parity_replayers``, ``fake_go``, ``golden_case``):

- ``go_reference``: one instance for the session, its sequence starting at 1000;
- ``fresh_go``: a factory, ``fresh_go(first_seq=..., token=..., **options)``, for an
  empty instance of the test's own, stopped when the test ends (the options are
  those of ``GoReference.start``).
- ``go_certs``: a test PKI for the session (``GoReference.make_certs``), such as
  ``fresh_go(tls=go_certs)`` for a reference behind mutual TLS;
- ``maintainer``: the test runs as a maintainer at a terminal would, ``$CI`` unset,
  so that ``parity record`` and ``parity review`` may write (CI never writes a golden).

A test that needs Go skips when Go cannot be built or started, except under
``CI=true``, where it fails: CI never hides a missing toolchain behind a skip.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pytest

from parity.errors import GoReferenceError, ParityError
from parity.project import in_ci
from parity.reference import GoReference, RunningReference, TLSFiles

if TYPE_CHECKING:
    from parity.fakego import FakeGo
    from parity.goclient import GoConnection
    from parity.journal import Journal, JournalCall
    from parity.replay import Replayer

__all__ = ["FreshGo", "GoldenCase", "go_unavailable"]

FreshGo = Callable[..., RunningReference]


def go_unavailable(exc: GoReferenceError) -> None:
    """Skip the test for a missing Go, or fail it under CI."""
    message = f"the Go reference is unavailable: {exc}"
    if in_ci():
        pytest.fail(message, pytrace=False)
    pytest.skip(message)


def start_reference(reference: GoReference, **options: Any) -> RunningReference:
    """A started reference instance, or the test skipped (failed under CI) without Go.

    The options are those of ``GoReference.start``.
    """
    try:
        return reference.start(**options)
    except GoReferenceError as exc:
        go_unavailable(exc)
        raise  # pragma: no cover - go_unavailable always raises


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "go: needs the Go reference instance")


@pytest.fixture(scope="session")
def go_build() -> GoReference:
    """The Go reference module, built once for the session."""
    try:
        reference = GoReference()
        reference.build()
    except GoReferenceError as exc:
        go_unavailable(exc)
        raise  # pragma: no cover - go_unavailable always raises
    return reference


@pytest.fixture(scope="session")
def go_reference(go_build: GoReference) -> Iterator[RunningReference]:
    """A Go reference instance shared by the session (first seq 1000)."""
    with start_reference(go_build, first_seq=1000) as running:
        yield running


@pytest.fixture(scope="session")
def go_certs(go_build: GoReference, tmp_path_factory: pytest.TempPathFactory) -> TLSFiles:
    """A test PKI for the session: CA, server and client pairs, and a stranger pair."""
    try:
        return go_build.make_certs(tmp_path_factory.mktemp("go-certs"))
    except GoReferenceError as exc:
        go_unavailable(exc)
        raise  # pragma: no cover - go_unavailable always raises


@pytest.fixture
def fresh_go(go_build: GoReference) -> Iterator[FreshGo]:
    """A factory of empty Go reference instances, each stopped when the test ends."""
    started: list[RunningReference] = []

    def start(**options: Any) -> RunningReference:
        running = start_reference(go_build, **options)
        started.append(running)
        return running

    yield start
    for running in started:
        running.stop()


@pytest.fixture
def maintainer(monkeypatch: pytest.MonkeyPatch) -> None:
    """``$CI`` unset for the test: ``parity record`` and ``parity review`` may write."""
    monkeypatch.delenv("CI", raising=False)


# --- the golden journals ---------------------------------------------------------------
#
# Options: --parity-journal PATH (repeatable; default: every registered corpus's
# golden/<corpus>.json) and --parity-go-url URL (a live Go for the tests that record),
# with --parity-go-ca, --parity-go-cert and --parity-go-key for one behind TLS.
# A test that asks for ``golden_case`` runs once per journal call, with the id
# ``<corpus>/<case>``; ``parity_replayers`` replays them against one fake Go per corpus.


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("parity", "Go<->Python parity harness")
    group.addoption(
        "--parity-journal",
        action="append",
        default=None,
        metavar="PATH",
        help="a golden journal to replay (repeatable; default: golden/<corpus>.json)",
    )
    from parity.goclient import TOKEN_ENV, add_go_options

    add_go_options(
        group.addoption,
        prefix="--parity-go",
        url_help=f"a live, empty Go for the recording tests (token in ${TOKEN_ENV}); "
        "default: a fresh Go reference",
    )


@dataclass(frozen=True)
class GoldenCase:
    """One recorded call, as a test parameter: its corpus, journal path and call."""

    corpus: str
    path: str
    call: JournalCall | None
    error: str | None = None

    @property
    def id(self) -> str:
        """The test id, ``<corpus>/<case>``."""
        return f"{self.corpus}/{self.call.case if self.call else 'journal-error'}"


def _journal_paths(config: pytest.Config) -> list[str]:
    from parity.corpus import CORPORA, get_corpus

    given: list[str] | None = config.getoption("parity_journal")
    if given:
        return given
    return [str(get_corpus(name).journal_path) for name in CORPORA]


def _load_journals(config: pytest.Config) -> dict[str, tuple[str, Journal]]:
    """Corpus name to (path, journal), loaded once per session; ParityError if unusable."""
    cached: dict[str, tuple[str, Journal]] | None = getattr(config, "_parity_journals", None)
    if cached is not None:
        return cached
    from parity import journal

    loaded: dict[str, tuple[str, Journal]] = {}
    for path in _journal_paths(config):
        j = journal.load(path)
        if j.corpus in loaded:
            raise ParityError(
                f"two journals record corpus {j.corpus!r}: {loaded[j.corpus][0]}, {path}"
            )
        loaded[j.corpus] = (path, j)
    config._parity_journals = loaded  # type: ignore[attr-defined]
    return loaded


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "golden_case" not in metafunc.fixturenames:
        return
    try:
        cases = [
            GoldenCase(name, path, call)
            for name, (path, j) in _load_journals(metafunc.config).items()
            for call in j.calls
        ]
    except ParityError as exc:
        cases = [GoldenCase("golden", "", None, error=str(exc))]
    metafunc.parametrize("golden_case", cases, ids=[c.id for c in cases])


@pytest.fixture(scope="session")
def parity_go_url(pytestconfig: pytest.Config) -> str | None:
    """The ``--parity-go-url`` option: a live Go to record from, or None (the reference)."""
    url: str | None = pytestconfig.getoption("parity_go_url")
    return url


@pytest.fixture(scope="session")
def parity_go(pytestconfig: pytest.Config) -> GoConnection | None:
    """The live Go of ``--parity-go-url`` (token, TLS files: options, then environment),
    or None (the reference).
    """
    from parity.goclient import connection_from_options

    options = {k: pytestconfig.getoption(f"parity_go_{k}") for k in ("ca", "cert", "key")}
    try:
        return connection_from_options(
            pytestconfig.getoption("parity_go_url"), prefix="--parity-go", **options
        )
    except ParityError as exc:
        pytest.fail(str(exc), pytrace=False)


@pytest.fixture(scope="session")
def parity_journals(pytestconfig: pytest.Config) -> dict[str, Journal]:
    """Every journal of the session, by corpus name (verified on load)."""
    try:
        return {name: j for name, (_, j) in _load_journals(pytestconfig).items()}
    except ParityError as exc:
        pytest.fail(str(exc), pytrace=False)


@pytest.fixture(scope="session")
def parity_journal(parity_journals: dict[str, Journal]) -> Journal:
    """The recall journal (``golden/recall.json`` unless ``--parity-journal`` says otherwise)."""
    if "recall" not in parity_journals:
        pytest.fail("no journal of corpus 'recall' in this session", pytrace=False)
    return parity_journals["recall"]


@pytest.fixture(scope="session")
def parity_replayers(pytestconfig: pytest.Config) -> Iterator[dict[str, Replayer]]:
    """One started ``Replayer`` (fake Go + Python host) per journal, for the session.

    A journal that disagrees with its corpus fails every test that uses this fixture.
    """
    from parity.corpus import get_corpus
    from parity.replay import Replayer, check_consistency

    replayers: dict[str, Replayer] = {}
    try:
        for name, (path, j) in _load_journals(pytestconfig).items():
            corpus = get_corpus(name)
            check_consistency(j, corpus, path=path)
            replayers[name] = Replayer(j, corpus).start()
    except ParityError as exc:
        for replayer in replayers.values():
            replayer.stop()
        pytest.fail(str(exc), pytrace=False)
    yield replayers
    for replayer in replayers.values():
        replayer.stop()


@pytest.fixture
def fake_go(parity_journal: Journal) -> Iterator[FakeGo]:
    """A fake Go serving the recall journal; ``check()`` runs when the test ends."""
    from parity.fakego import FakeGo

    with FakeGo(parity_journal) as fake:
        yield fake
        fake.check()
