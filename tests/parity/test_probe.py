"""``parity probe``: a running Go's Unicode version from its tool endpoint alone."""

from __future__ import annotations

import itertools

import pytest

from parity import probe
from parity.cli import main
from parity.fixtures.go import FreshGo
from recall import MemoryArchive, run_tool, unicode_versions


@pytest.mark.go
def test_the_probe_reads_and_writes_nothing(fresh_go: FreshGo) -> None:
    go = fresh_go()
    before = len(go.requests())
    assert probe.probe(go.connection) == go.version()["unicode_version"]
    assert go.requests(since=before) == ["POST /internal/v1/tool/exec"] * 2
    assert go.client.reads() == []
    assert go.blocks() == []


@pytest.mark.go
def test_answers_that_fit_no_table_exit_2(
    fresh_go: FreshGo, capsys: pytest.CaptureFixture[str]
) -> None:
    go = fresh_go(rewrite_output={"no archived block": "nothing archived"})
    assert main(["probe", "--go-url", go.base_url]) == 2
    err = capsys.readouterr().err
    assert "answered the probe as no known table" in err
    assert "nothing archived" in err


def test_without_a_url_it_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["probe"]) == 2
    assert "needs --go-url" in capsys.readouterr().err


def test_an_unreachable_go_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["probe", "--go-url", "http://127.0.0.1:9"]) == 2
    assert "parity: error:" in capsys.readouterr().err


def test_the_probe_tells_every_two_versions_apart() -> None:
    calls = probe.probe_calls()
    empty = MemoryArchive()
    outputs = {
        v: [run_tool(t, a, empty, unicode_version=v) for t, a in calls] for v in unicode_versions()
    }
    for a, b in itertools.combinations(unicode_versions(), 2):
        assert all(x != y for x, y in zip(outputs[a], outputs[b], strict=True)), (a, b)
