"""parity.record and `parity record`: recorded from Go, reproducible, refusing what is unsafe."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from parity import goclient, journal, record
from parity.corpus import get_corpus
from parity.errors import GoClientError, RecordError
from parity.goclient import TOKEN_ENV, GoClient, GoConnection
from parity.journal import Journal
from parity.plugin import FreshGo
from parity.replay import Replayer

from .conftest import GOLDEN, RunCli, copy_with_output

pytestmark = pytest.mark.go

CORPUS = get_corpus("recall")


def test_recording_reproduces_the_golden_journal_byte_for_byte(
    fresh_go: FreshGo, tmp_path: Path, run_cli: RunCli
) -> None:
    fresh_go()  # skips (or fails under CI) when Go is unavailable
    path = tmp_path / "recall.json"
    path.write_bytes(GOLDEN.read_bytes())
    status, out, err = run_cli("record", "--journal", str(path))
    assert (status, err) == (0, "")
    assert "no change" in out
    assert path.read_bytes() == GOLDEN.read_bytes()


def test_check_passes_on_the_committed_journal(fresh_go: FreshGo, run_cli: RunCli) -> None:
    fresh_go()
    status, out, _ = run_cli("record", "--check")
    assert status == 0
    assert "matches the Go" in out


def test_check_reports_drift_listing_cases(
    fresh_go: FreshGo, golden: Journal, tmp_path: Path, run_cli: RunCli
) -> None:
    fresh_go()
    path = copy_with_output(golden, "search-limit-one", "stale", tmp_path / "j.json")
    before = path.read_bytes()
    status, out, _ = run_cli("record", "--check", "--journal", str(path))
    assert status == 1
    assert "DRIFT" in out
    assert "  changed: search-limit-one" in out.splitlines()
    assert path.read_bytes() == before  # --check never writes


def test_record_lists_changed_cases(
    fresh_go: FreshGo, golden: Journal, tmp_path: Path, run_cli: RunCli
) -> None:
    fresh_go()
    path = copy_with_output(golden, "recall-id-zero", "stale", tmp_path / "j.json")
    status, out, _ = run_cli("record", "--journal", str(path))
    assert status == 0
    assert "  changed: recall-id-zero" in out.splitlines()
    assert path.read_bytes() == GOLDEN.read_bytes()


def test_refuses_an_archive_that_is_not_empty(fresh_go: FreshGo) -> None:
    go = fresh_go(first_seq=1000)
    go.archive("someone else's", "block")
    with pytest.raises(RecordError, match="already holds 1 readable blocks"):
        record.record(CORPUS, go_url=go.base_url)


def test_live_go_with_a_token(
    fresh_go: FreshGo, tmp_path: Path, run_cli: RunCli, monkeypatch: pytest.MonkeyPatch
) -> None:
    token = "tok-5ecret-never-written"
    go = fresh_go(first_seq=1, token=token)
    monkeypatch.setenv(TOKEN_ENV, token)
    path = tmp_path / "live.json"
    status, out, err = run_cli("record", "--go-url", go.base_url, "--journal", str(path))
    assert (status, err) == (0, ""), out
    assert token not in out
    text = path.read_text(encoding="utf-8")
    assert token not in text
    live = journal.load(path)
    assert live.recorded_by.instance == "live"
    assert live.recorded_by.go_version.startswith("go")
    assert live.seqs["accents"] == 1
    assert live.call("recall-id-plain").args == '{"id": "r1"}'
    assert live.call("recall-id-plain").reads == ("block?seq=1",)  # /debug/reads, with the token
    # Other seqs, same corpus: the journal replays all the same.
    with Replayer(live, CORPUS) as replayer:
        assert replayer.replay().failures == []


def test_live_go_with_a_wrong_token_is_refused(
    fresh_go: FreshGo, monkeypatch: pytest.MonkeyPatch
) -> None:
    go = fresh_go(token="right")
    with pytest.raises(GoClientError, match="answered 401") as info:
        record.record(CORPUS, go_url=go.base_url, token="wrong")
    assert info.value.status == 401
    assert "wrong" not in str(info.value)


def test_live_go_without_debug_routes(fresh_go: FreshGo, tmp_path: Path) -> None:
    """A production Go (no /debug/): versions as given, else unknown; reads null."""
    go = fresh_go(first_seq=1000, debug=False)
    live = record.record(
        CORPUS, go_url=go.base_url, versions={"go_version": "go1.99", "goos": "plan9"}
    )
    assert dataclasses.astuple(live.recorded_by) == (
        "go1.99",
        "unknown",
        "plan9",
        "unknown",
        "live",
    )
    assert [c.reads for c in live.calls] == [None] * len(live.calls)
    golden = journal.load(GOLDEN)
    assert [c.output for c in live.calls] == [c.output for c in golden.calls]
    path = tmp_path / "live.json"
    journal.write(live, path)
    assert '"reads": null' in path.read_text(encoding="utf-8")
    assert journal.load(path) == live
    # Unknown reads are not checked: a port reading more than Go still passes.
    with Replayer(live, CORPUS) as replayer:
        assert replayer.replay(modes=["archive"]).failures == []


def test_a_debug_route_failing_otherwise_is_an_error(
    fresh_go: FreshGo, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Only a 404 means "no such route": another status from /debug/reads stops the recording."""
    go = fresh_go(first_seq=1000)
    monkeypatch.setattr(goclient, "READS_PATH", "/debug/reads?since=x")  # the Go answers 400
    with pytest.raises(GoClientError, match="answered 400"):
        record.record(CORPUS, go_url=go.base_url)


def test_reads_are_what_each_call_added_to_debug_reads(fresh_go: FreshGo) -> None:
    go = fresh_go(first_seq=1000)
    j = record.record(CORPUS, go_url=go.base_url)
    assert [(c.case, c.reads) for c in j.calls] == [
        (c.case, c.reads) for c in journal.load(GOLDEN).calls
    ]
    total = go.client.reads()
    # Two passes, each call's reads in order, nothing else.
    per_pass = [r for c in j.calls for r in c.reads or ()]
    assert total == per_pass * 2


def test_refuses_a_go_whose_reads_differ_on_the_second_pass(
    fresh_go: FreshGo, monkeypatch: pytest.MonkeyPatch
) -> None:
    go = fresh_go()
    seen: set[str] = set()
    original = record._exec

    def extra_read(client: GoClient, case: str, name: str, args: str) -> str:
        if case == "recall-id-zero" and case in seen:  # a read Go's tool did not make before
            original(client, case, "recall_search", '{"query": "deploy"}')
        seen.add(case)
        return original(client, case, name, args)

    monkeypatch.setattr(record, "_exec", extra_read)
    with pytest.raises(
        RecordError, match=r"second pass \(cases recall-id-zero \(reads\)\); not written"
    ):
        record.record(CORPUS, go_url=go.base_url)


def test_refuses_debug_reads_that_forget_earlier_reads(
    fresh_go: FreshGo, monkeypatch: pytest.MonkeyPatch
) -> None:
    go = fresh_go()
    original = GoClient.reads

    def forgetful(self: GoClient, *, since: int | None = None) -> list[str]:
        reads = original(self, since=since)
        return [] if len(reads) > 3 else reads

    monkeypatch.setattr(GoClient, "reads", forgetful)
    with pytest.raises(RecordError, match="no longer lists the earlier reads"):
        record.record(CORPUS, go_url=go.base_url)


def test_refuses_a_go_that_answers_differently_twice(
    fresh_go: FreshGo, monkeypatch: pytest.MonkeyPatch
) -> None:
    go = fresh_go()
    calls = iter(range(10**6))
    original = record._exec

    def flaky(client: GoClient, case: str, name: str, args: str) -> str:
        out = original(client, case, name, args)
        return out + "!" if case == "search-no-result" and next(calls) > 0 else out

    monkeypatch.setattr(record, "_exec", flaky)
    with pytest.raises(RecordError, match=r"second pass \(cases search-no-result\); not written"):
        record.record(CORPUS, go_url=go.base_url)


def test_unreachable_go_exits_2(run_cli: RunCli, tmp_path: Path) -> None:
    status, _, err = run_cli(
        "record", "--go-url", "http://127.0.0.1:9", "--journal", str(tmp_path / "j.json")
    )
    assert status == 2
    assert "did not answer" in err
    assert not (tmp_path / "j.json").exists()


def test_compare() -> None:
    old = journal.load(GOLDEN)
    new = dataclasses.replace(old, calls=old.calls[1:])
    drift = record.compare(old, new)
    assert drift.removed == (old.calls[0].case,)
    assert not record.compare(old, old)


def test_a_live_go_by_url_records_and_replays_against_python(
    parity_go: GoConnection | None, fresh_go: FreshGo
) -> None:
    """A live Go by URL, recorded then replayed: the one of --parity-go-url (token in
    $PARITY_GO_TOKEN, TLS files in --parity-go-ca... or $PARITY_GO_CA...), else a
    fresh reference with a token, driven only by its URL."""
    if parity_go is None:
        go = fresh_go(first_seq=1000, token="live-go-token")
        parity_go = GoConnection(go.base_url, token=go.token)
    live = record.record(CORPUS, go_url=parity_go)
    assert live.recorded_by.instance == "live"
    with Replayer(live, CORPUS) as replayer:
        failures = replayer.replay().failures
    assert failures == [], "\n\n".join(f.report() for f in failures)
    golden = journal.load(GOLDEN)
    if live.seqs == golden.seqs:
        assert record.compare(golden, live).changed == ()


def test_compare_names_recorded_by_changes() -> None:
    old = journal.load(GOLDEN)
    rb = dataclasses.replace(old.recorded_by, go_version="go9.9", instance="live")
    drift = record.compare(old, dataclasses.replace(old, recorded_by=rb))
    assert drift.other == (
        f"recorded_by.go_version ({old.recorded_by.go_version} -> go9.9)",
        "recorded_by.instance (reference -> live)",
    )
