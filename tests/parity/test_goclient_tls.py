"""A Go behind mutual TLS (the reference with -tls-cert, -tls-key, -client-ca): `parity
record` and `parity fuzz` reach it with the right CA and client certificate, given as
flags or environment, and fail with one clear line (exit 2, no traceback) otherwise.
"""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from parity import cli, journal
from parity.corpus import get_corpus
from parity.errors import GoClientError
from parity.fixtures.go import FreshGo
from parity.goclient import (
    ARCHIVE_PATH,
    CA_ENV,
    CERT_ENV,
    KEY_ENV,
    TOKEN_ENV,
    GoClient,
    GoConnection,
)
from parity.reference import GoReference, RunningReference, TLSFiles

from .conftest import RunCli, SmallGolden

pytestmark = pytest.mark.go

TOKEN = "tok-TLS-91c3-never-shown"


def flags(files: TLSFiles) -> list[str]:
    """The CLI's TLS flags for these files (the client pair only when there is one)."""
    argv = ["--go-ca", str(files.ca)]
    if files.client_cert is not None:
        argv += ["--go-cert", str(files.client_cert)]
    if files.client_key is not None:
        argv += ["--go-key", str(files.client_key)]
    return argv


@pytest.fixture
def tls_go(
    fresh_go: FreshGo, go_certs: TLSFiles, monkeypatch: pytest.MonkeyPatch
) -> RunningReference:
    """An empty reference behind mutual TLS and a token (in $PARITY_GO_TOKEN), first seq 1000."""
    for name in (CA_ENV, CERT_ENV, KEY_ENV):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv(TOKEN_ENV, TOKEN)
    return fresh_go(first_seq=1000, token=TOKEN, tls=go_certs)


@pytest.fixture(scope="module")
def other_ca(go_build: GoReference, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The CA of another test PKI: one that did not sign the reference's certificate."""
    return go_build.make_certs(tmp_path_factory.mktemp("other-pki")).ca


def test_the_client_reaches_a_go_behind_mutual_tls(
    tls_go: RunningReference, go_certs: TLSFiles
) -> None:
    connection = GoConnection(
        tls_go.base_url,
        token=TOKEN,
        ca=go_certs.ca,
        cert=go_certs.client_cert,
        key=go_certs.client_key,
    )
    with GoClient(connection) as client:
        seq = client.archive("l", "c")
        assert client.block(seq) is not None
        assert client.exec_tool("recall", f'{{"id": "r{seq}"}}') == tls_go.exec_tool(
            "recall", f'{{"id": "r{seq}"}}'
        )


@pytest.mark.usefixtures("maintainer")  # records into a journal: not under CI=true
def test_record_and_check_over_tls(
    tls_go: RunningReference,
    fresh_go: FreshGo,
    go_certs: TLSFiles,
    small_golden: SmallGolden,
    tmp_path: Path,
    run_cli: RunCli,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Recorded with the flags, checked with the environment against a second TLS Go (a
    few cases of the corpus: the point is the transport)."""
    golden = small_golden("recall-id-plain", "recall-id-zero", "search-accents").journal
    path = tmp_path / "tls.json"
    status, out, err = run_cli(
        "record", "--go-url", tls_go.base_url, *flags(go_certs), "--journal", str(path)
    )
    assert (status, err) == (0, ""), out
    recorded = journal.load(path)
    assert recorded.recorded_by.instance == "live"
    assert recorded.seqs == golden.seqs
    assert recorded.calls == golden.calls  # the same answers as over plain HTTP
    second = fresh_go(first_seq=1000, token=TOKEN, tls=go_certs)
    assert go_certs.client_cert is not None
    assert go_certs.client_key is not None
    monkeypatch.setenv(CA_ENV, str(go_certs.ca))
    monkeypatch.setenv(CERT_ENV, str(go_certs.client_cert))
    monkeypatch.setenv(KEY_ENV, str(go_certs.client_key))
    status, out, err = run_cli(
        "record", "--go-url", second.base_url, "--check", "--journal", str(path)
    )
    assert (status, err) == (0, ""), out
    assert "matches the Go" in out
    assert TOKEN not in out + path.read_text(encoding="utf-8")


def _refusals(files: TLSFiles, other_ca: Path) -> dict[str, tuple[list[str], str]]:
    """Each wrong set of TLS options, and what the message must say."""
    directory = files.ca.parent
    stranger = replace(
        files, client_cert=directory / "stranger.pem", client_key=directory / "stranger-key.pem"
    )
    return {
        "no-client-certificate": (
            ["--go-ca", str(files.ca)],
            "the Go requires a client certificate: give it with --go-cert and --go-key",
        ),
        "wrong-ca": (
            [*flags(files)[2:], "--go-ca", str(other_ca)],
            "the Go's certificate is not signed by a CA trusted here",
        ),
        "no-ca": (flags(files)[2:], "CERTIFICATE_VERIFY_FAILED"),
        "stranger-certificate": (
            flags(stranger),
            "the Go does not trust the client certificate's CA",
        ),
        "key-of-another-certificate": (
            [*flags(files)[:4], "--go-key", str(directory / "stranger-key.pem")],
            "key values mismatch",
        ),
        "no-such-ca-file": (
            [*flags(files)[2:], "--go-ca", str(directory / "missing.pem")],
            "missing.pem: no such file or directory",
        ),
    }


@pytest.mark.parametrize(
    "refusal",
    [
        "no-client-certificate",
        "wrong-ca",
        "no-ca",
        "stranger-certificate",
        "key-of-another-certificate",
        "no-such-ca-file",
    ],
)
@pytest.mark.usefixtures("maintainer")  # would write a journal: not under CI=true
def test_record_refused_by_tls_is_one_clear_line(
    tls_go: RunningReference,
    go_certs: TLSFiles,
    other_ca: Path,
    tmp_path: Path,
    run_cli: RunCli,
    refusal: str,
) -> None:
    argv, message = _refusals(go_certs, other_ca)[refusal]
    path = tmp_path / "j.json"
    status, out, err = run_cli("record", "--go-url", tls_go.base_url, *argv, "--journal", str(path))
    assert status == 2, out
    assert err.startswith("parity: error: ")
    assert len(err.splitlines()) == 1, err
    assert message in err
    assert "Traceback" not in out + err
    assert TOKEN not in out + err
    assert not path.exists()


def test_fuzz_over_tls(
    tls_go: RunningReference, go_certs: TLSFiles, capsys: pytest.CaptureFixture[str]
) -> None:
    tls_go.archive("Crème brûlée", "İSTANBUL\n\n  first line")
    tls_go.archive("Notes", "deploy the café")
    argv = ["--go-url", tls_go.base_url, *flags(go_certs), "--examples", "20", "--profile", "ci"]
    assert cli.main(["fuzz", *argv]) == 0
    out, err = capsys.readouterr()
    assert "0 divergences" in out
    assert TOKEN not in out + err


@pytest.mark.parametrize("refusal", ["no-client-certificate", "wrong-ca"])
def test_fuzz_refused_by_tls_exits_2(
    tls_go: RunningReference,
    go_certs: TLSFiles,
    other_ca: Path,
    capsys: pytest.CaptureFixture[str],
    refusal: str,
) -> None:
    argv, message = _refusals(go_certs, other_ca)[refusal]
    assert cli.main(["fuzz", "--go-url", tls_go.base_url, *argv, "--examples", "20"]) == 2
    out, err = capsys.readouterr()
    assert err.startswith("parity: error: GET /internal/v1/recall/blocks: "), err
    assert len(err.splitlines()) == 1
    assert message in err
    assert "Traceback" not in out + err


def test_tls_options_need_a_url(run_cli: RunCli, go_certs: TLSFiles) -> None:
    status, _, err = run_cli("record", *flags(go_certs), "--journal", "unused.json")
    assert status == 2
    assert "--go-ca, --go-cert, --go-key apply to --go-url, which is not given" in err
    assert cli.main(["fuzz", *flags(go_certs), "--examples", "1"]) == 2


def test_tls_files_for_a_plain_url_are_refused(go_certs: TLSFiles) -> None:
    with pytest.raises(GoClientError, match="is not https://"):
        GoConnection("http://127.0.0.1:1", ca=go_certs.ca)


def test_the_pytest_plugin_records_over_tls(tls_go: RunningReference, go_certs: TLSFiles) -> None:
    """`pytest --parity-go-url https://... --parity-go-ca ...`: the live-Go recording test
    runs against the Go behind TLS (the client pair from the environment)."""
    assert go_certs.client_cert is not None
    assert go_certs.client_key is not None
    env = {
        **os.environ,
        TOKEN_ENV: TOKEN,
        CERT_ENV: str(go_certs.client_cert),
        KEY_ENV: str(go_certs.client_key),
    }
    test = Path(__file__).with_name("test_record.py")
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-p",
            "no:cacheprovider",
            "-q",
            f"{test}::test_a_live_go_by_url_records_and_replays_against_python",
            "--parity-go-url",
            tls_go.base_url,
            "--parity-go-ca",
            str(go_certs.ca),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
        check=False,
    )
    out = done.stdout + done.stderr
    assert done.returncode == 0, out
    assert "1 passed" in out
    archived = [r for r in tls_go.client.requests() if r == f"POST {ARCHIVE_PATH}"]
    assert len(archived) == len(get_corpus("recall").blocks)  # recorded from this Go
