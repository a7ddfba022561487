"""Security: what never reaches the archive, what seq looks like on the wire, where the
token never shows, and where the Go instances listen.

- a malformed id never reaches the archive: the live reference's request log shows no
  request at all for it (and the output is still Go's);
- ``seq`` is only ever sent as canonical decimal digits (``r007`` reads ``seq=7``);
- the token never shows in a host's ``repr``, an error, a log record, a journal,
  the recorder's output or its drift report (the fault matrix checks every one of
  its errors too, token configured);
- the fake Go and the Go reference listen on loopback only.

The tests of a host run over each kind of host (``make_host``, ``host_kind``).
"""

from __future__ import annotations

import dataclasses
import json
import logging
import re
import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from parity import journal
from parity.cli import main as parity_main
from parity.fakego import FakeGo
from parity.fixtures.go import FreshGo, start_reference
from parity.goclient import TOKEN_ENV
from parity.reference import GoReference, RunningReference
from recall import FallbackFailedError, GoUnavailableError, RecallError
from recall._protocol import BLOCK_PATH

from .conftest import MakeHost
from .hosts import Host

TOKEN = "tok-SEC-7b2d-never-shown"
GOLDEN = Path(__file__).resolve().parents[2] / "golden" / "recall.json"

# Malformed ids: the contract's examples, other digits, signs, spaces, sizes.
MALFORMED_IDS = [
    # the contract's
    "Rr7",
    "r-7",
    "r+7",
    "r0",
    "r7a",
    "r99999999999999999999",
    # digits that are not ASCII (Python's int() takes most of them)
    "r\u0667",  # ARABIC-INDIC DIGIT SEVEN
    "r\u06f7",  # EXTENDED ARABIC-INDIC DIGIT SEVEN
    "r\u0967",  # DEVANAGARI DIGIT SEVEN
    "r\uff17",  # FULLWIDTH DIGIT SEVEN
    "r\U0001d7d5",  # MATHEMATICAL BOLD DIGIT SEVEN
    "r\u2077",  # SUPERSCRIPT SEVEN
    "r\u2466",  # CIRCLED DIGIT SEVEN
    "r\u216e",  # ROMAN NUMERAL
    "r7\u0667",
    "r\u0660\u0667",
    # signs
    "-7",
    "+7",
    "r-0",
    "r+0",
    "r\u22127",  # MINUS SIGN
    "r--7",
    "r7-",
    "r7+",
    "r-9223372036854775808",
    # spaces and invisibles inside
    "r7 7",
    "r 7 7",
    "r1 000",
    "r1,000",
    "r1_000",
    "r\u200b7",  # ZERO WIDTH SPACE is not a space for Go
    "r7\u200b",
    "r7\x00",
    "r\t7\n8",
    "r7\ufeff",
    # other shapes and sizes
    "r",
    "R",
    "rr7",
    "RR7",
    "Rr",
    "r7.0",
    "r7e0",
    "r0x7",
    "r0b111",
    "7r",
    "id:r7",
    "r0000",
    "r9223372036854775808",
    "r18446744073709551616",
    "r" + "9" * 400,
    # blank: a missing id, no read either
    "",
    " ",
    "\u00a0\u2003",
]

# Well-formed ids and the one read each must make.
CANONICAL = {
    "r7": "7",
    "r007": "7",
    "r" + "0" * 40 + "7": "7",
    " R07 ": "7",
    "rR0007": "7",
    "\u00a0r07\u2003": "7",
    "\u0085r\u3000007\n": "7",
    "07": "7",
    "r010": "10",
    "r0100": "100",
    "r09223372036854775807": "9223372036854775807",
    "r" + "0" * 30 + "9223372036854775807": "9223372036854775807",
}


@pytest.fixture(scope="module")
def live(go_build: GoReference) -> Iterator[RunningReference]:
    """A Go reference (token set) holding seqs 1 to 12."""
    with start_reference(go_build, first_seq=1, token=TOKEN) as go:
        for i in range(12):
            go.archive(f"label {i + 1}", f"content {i + 1}")
        yield go


@pytest.fixture(scope="module")
def host(live: RunningReference, host_kind: str) -> Iterator[Host]:
    with Host(host_kind, live.base_url, token=TOKEN) as host:
        yield host


@pytest.mark.go
@pytest.mark.parametrize("block_id", MALFORMED_IDS, ids=ascii)
def test_a_malformed_id_never_reaches_the_archive(
    live: RunningReference, host: Host, block_id: str
) -> None:
    for args in (json.dumps({"id": block_id}), json.dumps({"id": block_id}, ensure_ascii=False)):
        before = len(live.requests())
        output = host.exec_tool("recall", args)
        assert live.requests()[before:] == []  # no read, and no fallback either
        assert output == live.exec_tool("recall", args)


@pytest.mark.go
@pytest.mark.parametrize(("block_id", "seq"), CANONICAL.items(), ids=ascii)
def test_seq_is_sent_as_canonical_digits(
    live: RunningReference, host: Host, block_id: str, seq: str
) -> None:
    args = json.dumps({"id": block_id})
    before = len(live.requests())
    output = host.exec_tool("recall", args)
    assert live.requests()[before:] == [f"GET {BLOCK_PATH}?seq={seq}"]
    assert output == live.exec_tool("recall", args)


@pytest.mark.go
def test_every_seq_on_the_wire_is_canonical(live: RunningReference, host: Host) -> None:
    """Over every read of this module's Go: seq= is [1-9][0-9]*, nothing else."""
    for block_id in [*MALFORMED_IDS, *CANONICAL]:
        host.exec_tool("recall", json.dumps({"id": block_id}))
    reads = [r for r in live.requests() if r.startswith(f"GET {BLOCK_PATH}?")]
    assert reads
    for read in reads:
        assert re.fullmatch(rf"GET {re.escape(BLOCK_PATH)}\?seq=[1-9][0-9]{{0,18}}", read), read


# The token.


def test_token_not_in_the_host_repr(make_host: MakeHost) -> None:
    with make_host("http://user:pa55@127.0.0.1:9/", token=TOKEN) as host:
        assert TOKEN not in repr(host)
        assert "pa55" not in repr(host)
        assert repr(host) == f"{type(host.host).__name__}('http://127.0.0.1:9/')"


@pytest.mark.go
def test_token_not_in_errors_or_logs_of_a_go_refusing_it(
    fresh_go: FreshGo, caplog: pytest.LogCaptureFixture, make_host: MakeHost
) -> None:
    """A Go whose token is another: 401 on the read and the fallback, token nowhere."""
    caplog.set_level(logging.DEBUG)
    go = fresh_go(token="tok-the-go-s-own")
    errors: list[RecallError] = []
    with make_host(go.base_url, token=TOKEN, timeout=2.0) as host:
        for name, args in [("recall", '{"id": "r1"}'), ("recall_search", '{"query": "ab"}')]:
            with pytest.raises(FallbackFailedError, match="status 401") as caught:
                host.exec_tool(name, args)
            errors.append(caught.value)
        with pytest.raises(GoUnavailableError, match="status 401") as other:
            host.exec_tool("web_fetch", "{}")
        errors.append(other.value)
        shown = [repr(host), caplog.text]
    for error in errors:
        shown += [str(error), repr(error), str(error.__cause__), repr(error.__cause__)]
        if isinstance(error, FallbackFailedError):
            shown += [repr(error.read_error), repr(error.exec_error)]
    for text in shown:
        assert TOKEN not in text
        assert "tok-the-go-s-own" not in text


@pytest.mark.go
def test_token_not_in_journal_report_or_logs(
    fresh_go: FreshGo,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    caplog: pytest.LogCaptureFixture,
    maintainer: None,
) -> None:
    """`parity record` from a token-protected Go: the journal, its output, the drift report."""
    caplog.set_level(logging.DEBUG)
    go = fresh_go(first_seq=1000, token=TOKEN)
    monkeypatch.setenv(TOKEN_ENV, TOKEN)
    path = tmp_path / "recall.json"
    assert parity_main(["record", "--go-url", go.base_url, "--journal", str(path)]) == 0
    written = journal.load(path)
    # A drift report: the journal with one output changed, checked against a fresh Go.
    changed = tmp_path / "changed.json"
    calls = tuple(
        dataclasses.replace(c, output="stale") if c.case == "search-limit-one" else c
        for c in written.calls
    )
    journal.write(dataclasses.replace(written, calls=calls), changed)
    second = fresh_go(first_seq=1000, token=TOKEN)
    argv = ["record", "--go-url", second.base_url, "--check", "--journal", str(changed)]
    status = parity_main(argv)
    out, err = capsys.readouterr()
    assert status == 1
    assert "changed: search-limit-one" in out
    # A wrong token: refused, neither token shown.
    monkeypatch.setenv(TOKEN_ENV, "tok-wrong-one")
    third = fresh_go(token=TOKEN)
    assert (
        parity_main(["record", "--go-url", third.base_url, "--journal", str(tmp_path / "x.json")])
        == 2
    )
    out2, err2 = capsys.readouterr()
    assert "401" in err2
    for text in (path.read_text(encoding="utf-8"), out, err, out2, err2, caplog.text):
        assert TOKEN not in text
        assert "tok-wrong-one" not in text
    assert not (tmp_path / "x.json").exists()


# Loopback only.


def _listening(port: int) -> set[str]:
    """The local addresses of the sockets listening on ``port`` (from /proc/net/tcp{,6}).

    Linux only, as the project: without /proc/net/tcp the test fails, never skips.
    """
    if not Path("/proc/net/tcp").exists():
        pytest.fail("no /proc/net/tcp: cannot list the listening sockets here", pytrace=False)
    found: set[str] = set()
    for table, width in (("/proc/net/tcp", 8), ("/proc/net/tcp6", 32)):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            address, hex_port = fields[1].split(":")
            if fields[3] == "0A" and int(hex_port, 16) == port:  # 0A: LISTEN
                raw = bytes.fromhex(address)
                if width == 8:
                    found.add(socket.inet_ntop(socket.AF_INET, raw[::-1]))
                else:
                    words = b"".join(raw[i : i + 4][::-1] for i in range(0, 16, 4))
                    found.add(socket.inet_ntop(socket.AF_INET6, words))
    return found


def _port(base_url: str) -> int:
    return int(base_url.rsplit(":", 1)[1].strip("/"))


@pytest.mark.go
def test_the_reference_listens_on_loopback_only(fresh_go: FreshGo) -> None:
    go = fresh_go()
    assert go.base_url.startswith("http://127.0.0.1:")
    assert _listening(_port(go.base_url)) == {"127.0.0.1"}


def test_the_fake_go_listens_on_loopback_only() -> None:
    with FakeGo(journal.load(GOLDEN)) as fake:
        assert fake.base_url.startswith("http://127.0.0.1:")
        assert _listening(_port(fake.base_url)) == {"127.0.0.1"}


@pytest.mark.go
@pytest.mark.parametrize("addr", ["0.0.0.0:0", ":0", "[::]:0", "192.0.2.1:0", "example.com:0"])
def test_the_reference_refuses_a_non_loopback_address(go_build: GoReference, addr: str) -> None:
    done = subprocess.run(
        [str(go_build.build()), "-addr", addr],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert done.returncode != 0
    assert not done.stdout.startswith("http://")
    assert "loopback" in done.stderr
