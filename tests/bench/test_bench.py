"""Smoke test of `make bench`: its quickest form runs, reports ratios, checks parity.

Speed is never asserted here: only that the bench runs end to end, that every
figure it reports is a positive time with its ratio, and that it compares outputs.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

from bench import BenchError, ParityFailure
from bench.data import QUERIES, SESSION_QUERIES, generate_blocks
from bench.kernel import check_parity, ns_per_op
from bench.memory import CACHE_PER_JSON_BYTE, cache_bytes_for
from bench.report import targets
from bench.runner import CHILD_ENV, ROOT, SESSION_CALLS, SESSION_KINDS, Bench, _child, parse_args
from parity.errors import GoReferenceError
from parity.fixtures.go import go_unavailable
from parity.goclient import GoClient, GoConnection
from parity.reference import go_executable
from recall._core import DEFAULT_CACHE_BYTES
from recall._index import Searcher
from recall._protocol import BLOCKS_PATH, EXEC_PATH
from tests.recall.mockgo import MockGo, go_body


def test_data_is_deterministic_and_realistic() -> None:
    first = list(generate_blocks(200, seed=7))
    assert first == list(generate_blocks(200, seed=7))
    assert first[:50] == list(generate_blocks(50, seed=7))  # the sizes nest
    assert first != list(generate_blocks(200, seed=8))
    contents = [b.content for b in first]
    assert all(1500 < len(c.encode()) < 4000 for c in contents)
    assert any(not c.isascii() for c in contents)
    assert any(max(c) > "\xff" for c in contents)
    assert any(c != c.lower() for c in contents)
    assert any("<" in c and "&" in c for c in contents)
    assert any(not b.label for b in first)
    assert all(json.loads(q.args())["query"] for q in QUERIES)
    assert len({q.args() for q in SESSION_QUERIES}) == 6  # six different queries
    assert SESSION_QUERIES[: len(QUERIES)] == QUERIES


def test_ns_per_op() -> None:
    text = (
        "goos: linux\nBenchmarkSearch-2   \t      12\t  98765432 ns/op\t  10000 blocks\n"
        "BenchmarkSearch \t 3\t 1.5e+09 ns/op\nPASS\n"
    )
    assert ns_per_op(text) == [(12, 98765432.0), (3, 1.5e9)]


def test_check_parity_names_the_first_difference() -> None:
    check_parity("same", "abc", "abc")
    with pytest.raises(ParityFailure, match="at character 2"):
        check_parity("kernel", "abX", "abc")
    with pytest.raises(ParityFailure, match="at character 3"):
        check_parity("kernel", "abc", "abcd")


def test_options() -> None:
    quick = parse_args(["--quick"])
    assert quick.quick
    assert max(quick.sizes) < 1000
    assert quick.parity_runs == 0
    assert not quick.kernel
    full = parse_args(["--sizes", "1000,10_000", "--rounds", "3"])
    assert full.sizes == [1000, 10_000]
    assert full.rounds == 3
    assert full.parity_runs == 3
    assert full.kernel
    assert parse_args([]).sizes == [100, 10_000, 100_000]


def test_targets_without_the_target_sizes_are_not_measured() -> None:
    found = targets({"sizes": []})
    assert all("met" not in t for t in found)
    assert {t["limit"] for t in found} >= {1.5, 0.5, 0.3, 1.3, 0.15}


@pytest.mark.once
def test_quick_bench_runs_reports_ratios_and_checks_parity(tmp_path: Path) -> None:
    try:
        go_executable()
    except GoReferenceError as exc:
        go_unavailable(exc)
    done = subprocess.run(
        [sys.executable, "-m", "bench", "--quick", "--out-dir", str(tmp_path)],
        cwd=ROOT,
        env=CHILD_ENV,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "ratio" in done.stdout
    assert "byte parity:" in done.stdout
    results = json.loads((tmp_path / "results.json").read_text())
    assert (tmp_path / "RESULTS.md").read_text().startswith("# `make bench` results")
    sizes = results["sizes"]
    assert [s["blocks"] for s in sizes] == results["config"]["sizes"]
    rounds = results["config"]["rounds"]
    for entry in sizes:
        assert entry["body_bytes"] > 0
        for kind in SESSION_KINDS:
            figures = entry[kind]
            assert len(figures["sessions"]) == rounds
            assert figures["import_s"] > 0
            assert figures["host_s"] > 0
            assert len(figures["repeated_each_ratio"]) == len(SESSION_QUERIES)
            for key in ("first", "repeated", "steady", "new_block"):
                figure = figures[key]
                assert figure["python_s"] > 0
                assert figure["go_s"] > 0
                assert figure["ratio"] == pytest.approx(figure["python_s"] / figure["go_s"])
                assert f"{figure['ratio']:.2f}x" in done.stdout
        assert entry["index"]["index_bytes"] > 0
        assert set(entry["fetch"]) == {"delta", "plain"}
        assert entry["not_modified_s"] > 0  # its 304s counted in the delta Go's log
    memory = sizes[-1]["memory"]
    for mode in ("rss", "tracemalloc"):
        first, *again = memory[mode]
        assert len(again) == 2
        assert first["ratio"] > 0  # the first search reads and decodes the body
        # A search again reuses the kept set: its RSS may stay under the high-water mark.
        assert all(s["ratio"] > 0 if mode == "tracemalloc" else s["ratio"] >= 0 for s in again)
        assert memory[f"{mode}_kept"]["set_bytes"] > 0
    herds = sizes[-1]["herd"]
    assert {kind: herd["callers"] for kind, herd in herds.items()} == {"sync": 16, "async": 50}
    assert all(herd["differ"] == 0 and herd["seconds"] > 0 for herd in herds.values())
    assert sizes[-1]["delta/warm"]["first"]["python_s"] > 0
    cold = results["coldstart"]["pyc"]
    assert cold["import"] > 0
    assert cold["recall_search"] > 0
    parity = results["parity"]
    assert parity["all_identical"]
    assert not parity["python_path_called_go_tool"]
    # Every output of every session, and the memory searches, compared with Go's.
    calls = len(sizes) * len(SESSION_KINDS) * rounds * SESSION_CALLS
    assert parity["checked_outputs"] >= calls + 2 * 3 + 16 + 50
    assert {t["target"].split(",")[0] for t in results["targets"]} >= {
        "first search in a fresh process",
        "make parity",
    }


@pytest.mark.parametrize(
    ("go", "options"),
    [("delta", {"deltas": True}), ("plain", {}), ("plain", {"etag": True})],
    ids=["go-with-deltas", "go-without", "go-with-etag-only"],
)
def test_cache_bytes_sized_as_the_readme_says_keeps_the_set_and_its_index(
    go: str, options: dict[str, bool]
) -> None:
    """The sizing the bench gives its hosts past the default (``CACHE_PER_JSON_BYTE``), over
    the bench's blocks: the set is kept, through a change, with its index. 3,000 blocks:
    an index's share of the JSON only falls with more."""
    items = [(seq, b.label, b.content) for seq, b in enumerate(generate_blocks(3001), 1)]
    body = go_body(items[:-1])
    budget = math.ceil(CACHE_PER_JSON_BYTE[go] * len(body))  # the rule without its floor
    assert cache_bytes_for(len(body), go) == DEFAULT_CACHE_BYTES  # the floor, at this size
    mock = MockGo(body, **options)
    with mock.host("sync", cache_bytes=budget) as host:
        core = host.host._core
        core._searcher = Searcher(budget, index_cost=0)  # indexed as soon as searched again
        for at, query in enumerate([*SESSION_QUERIES, *SESSION_QUERIES[:2]]):
            if at == len(SESSION_QUERIES):
                mock.body = go_body(items)  # one block archived
            host.exec_tool("recall_search", query.args())
            kept = core._kept
            assert kept is not None
            if mock.kinds[-1] != "full":  # a whole re-read of a compacted set: a new lineage
                assert at == 0 or core._searcher.index_of(kept) is not None
            assert kept.size + core._searcher.held <= budget
        assert core._searcher.index_of(kept) is not None
        assert kept.complete == (options != {"deltas": True})  # whole where a re-read may come
    assert mock.kinds[len(SESSION_QUERIES)] == ("delta" if options.get("deltas") else "full")


class _LoggedGo:
    """What Bench needs of a running Go: its connection and its request log."""

    def __init__(self) -> None:
        self.connection = GoConnection("http://127.0.0.1:9")
        self.log: list[str] = []

    def requests(self, *, since: int = 0) -> list[str]:
        return self.log[since:]


def test_request_log_check_refuses_a_tool_call_or_a_read_not_accounted_for() -> None:
    gos = {"delta": _LoggedGo(), "plain": _LoggedGo()}
    clients = {kind: GoClient(go.connection) for kind, go in gos.items()}  # never used here
    bench = Bench(parse_args(["--quick"]), gos, clients)  # type: ignore[arg-type]
    read, execute = f"GET {BLOCKS_PATH}", f"POST {EXEC_PATH}"
    bench.expect("delta", execs=1, reads=1, searches=2, checked=2)
    gos["delta"].log += [execute, read, f"{read}?since=3", read]  # the bench's, the searches'
    bench.request_log_check("delta")
    assert bench.checked == 2
    bench.expect("delta", searches=1)
    gos["delta"].log += [read, execute]  # the Python path called Go's tool
    with pytest.raises(ParityFailure, match="1 /tool/exec calls"):
        bench.request_log_check("delta")
    bench.expect("delta", searches=1)
    gos["delta"].log += [read, read]  # two reads for one search
    with pytest.raises(ParityFailure, match="2 /blocks reads"):
        bench.request_log_check("delta")
    gos["plain"].log += ["GET /debug/requests"]
    with pytest.raises(ParityFailure, match="other requests"):
        bench.request_log_check("plain")
    for client in clients.values():
        client.close()


def test_a_child_reports_its_parity_failure_or_its_error(tmp_path: Path) -> None:
    def printed(doc: str) -> Path:  # `python -m json.tool --compact FILE` prints it on a line
        path = tmp_path / "printed.json"
        path.write_text(doc)
        return path

    assert _child("json.tool", "--compact", printed('{"failures": []}'), parity="failures") == {
        "failures": []
    }
    doc = printed('{"failures": ["first: python \'a\'", "first: go \'b\'"]}')
    with pytest.raises(ParityFailure, match=r"json\.tool: first: python 'a'\nfirst: go 'b'"):
        _child("json.tool", "--compact", doc, parity="failures")
    with pytest.raises(ParityFailure, match="3 outputs differ"):
        _child("json.tool", "--compact", printed('{"differ": 3}'), parity="differ")
    with pytest.raises(BenchError, match=r"json\.tool failed:\n(.|\n)*Expecting value"):
        _child("json.tool", "--compact", printed("not json"))
