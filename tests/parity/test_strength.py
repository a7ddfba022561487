"""`parity strength`: the mutator, a small mutation run, Python and Go coverage."""

from __future__ import annotations

import hashlib
import io
import sys
import types
from collections import Counter
from pathlib import Path

import pytest

from parity import strength
from parity.errors import GoReferenceError
from parity.plugin import go_unavailable
from parity.strength import Mutant, generate_mutants, parse_go_profile

ROOT = Path(__file__).resolve().parents[2]
TOOLS = "recall/_tools.py"


@pytest.fixture(scope="module")
def tool_mutants() -> list[Mutant]:
    return generate_mutants(["recall._tools"])


def _find(mutants: list[Mutant], function: str, before: str, after: str) -> Mutant:
    found = [m for m in mutants if (m.function, m.before, m.after) == (function, before, after)]
    assert found, f"no mutant {function}: {before} -> {after}"
    return found[0]


def test_the_mutator_makes_the_operators_of_the_issue(tool_mutants: list[Mutant]) -> None:
    changes = {(m.operator, m.function, m.before, m.after) for m in tool_mutants}
    assert ("constant", "EXCERPT_RUNES", "160", "161") in changes
    assert ("constant", "MAX_LIMIT", "20", "19") in changes
    assert ("comparison", "search_limit", "n >= 1", "n > 1") in changes
    assert ("regex", "_TERMS", "[à-ÿ] at 7", "[á-ÿ]") in changes
    assert ("regex", "_TERMS", "{2,} at 11", "{1,}") in changes
    assert (
        "sort key order",
        "_rank",
        "return (-hit[0], -hit[1].seq)",
        "return (-hit[1].seq, -hit[0])",
    ) in changes
    assert ("min/max", "search_limit", "min(n, MAX_LIMIT)", "max(n, MAX_LIMIT)") in changes
    assert ("slice bound", "excerpt", "[:EXCERPT_RUNES]", "[:EXCERPT_RUNES + 1]") in changes
    assert any(op == "string" and "such as" in before for op, _, before, _ in changes)
    # not the tool logic, docstrings and __all__ are left alone
    assert not [m for m in tool_mutants if m.function.startswith(("MemoryArchive", "Block.id"))]
    assert not [m for m in tool_mutants if "step by step" in m.before or m.before == "'excerpt'"]
    ids = [m.id for m in tool_mutants]
    assert ids == sorted(set(ids))
    assert [(m.line, m.col) for m in tool_mutants] == sorted((m.line, m.col) for m in tool_mutants)


def test_a_mutant_is_compiled_in_memory_and_the_file_is_untouched(
    tool_mutants: list[Mutant],
) -> None:
    path = ROOT / TOOLS
    before = hashlib.sha256(path.read_bytes()).hexdigest()
    mutant = _find(tool_mutants, "EXCERPT_RUNES", "160", "161")
    module = types.ModuleType("mutant_under_test")
    sys.modules[module.__name__] = module  # dataclasses look their module up
    try:
        exec(mutant.code(), module.__dict__)
    finally:
        del sys.modules[module.__name__]
    assert module.EXCERPT_RUNES == 161
    assert hashlib.sha256(path.read_bytes()).hexdigest() == before


def test_regex_variants_move_each_range_bound_and_count() -> None:
    variants = strength._regex_variants("[a-c]{2,}")
    assert [(what, to) for what, to, _ in variants] == [
        ("[a-c] at 1", "[`-c]"),
        ("[a-c] at 1", "[b-c]"),
        ("[a-c] at 1", "[a-b]"),
        ("[a-c] at 1", "[a-d]"),
        ("{2,} at 5", "{1,}"),
        ("{2,} at 5", "{3,}"),
    ]
    assert [pattern for _, _, pattern in variants] == [
        "[`-c]{2,}",
        "[b-c]{2,}",
        "[a-b]{2,}",
        "[a-d]{2,}",
        "[a-c]{1,}",
        "[a-c]{3,}",
    ]


def test_every_explained_mutant_names_exactly_one_mutant() -> None:
    counts = Counter(m.key for m in generate_mutants())
    assert [k for k in strength.EQUIVALENT if counts[k] != 1] == []


# Same outputs as the original for every id of the corpus; only the archive reads
# differ (r0, r1, r9223372036854775807, 19-digit ids): the replay's reads check kills them.
READ_DIFFERING = [
    ("MAX_SEQ", "63", "62"),
    ("MAX_SEQ", "1", "2"),
    ("recall_id_to_seq", "len(digits) > len(str(MAX_SEQ))", "len(digits) >= len(str(MAX_SEQ))"),
    ("recall_id_to_seq", "1 <= seq <= MAX_SEQ", "1 <= seq < MAX_SEQ"),
    ("recall_id_to_seq", "1 <= seq <= MAX_SEQ", "1 < seq <= MAX_SEQ"),
    ("recall_id_to_seq", "1", "2"),
    ("recall_id_to_seq", "1", "0"),
]


def test_mutants_differing_only_in_archive_reads_are_killed(tool_mutants: list[Mutant]) -> None:
    chosen = [_find(tool_mutants, *change) for change in READ_DIFFERING]
    assert len(chosen) == 7
    assert not [m for m in chosen if m.equivalent]
    run = strength.run_mutants(chosen, jobs=2, timeout=60)
    assert [r.status for r in run.results] == ["killed"] * 7
    # the first case that told each apart: an id whose output is "not found" either way
    assert [r.detail for r in run.results] == [
        *["recall-id-max-int64"] * 4,  # r9223372036854775807, read by Go
        *["recall-id-below-first"] * 2,  # r1, read by Go
        "recall-id-zero",  # r0, not read by Go
    ]


def test_a_small_mutation_run_kills_and_reports_survivors(tool_mutants: list[Mutant]) -> None:
    chosen = [
        _find(tool_mutants, "EXCERPT_RUNES", "160", "161"),  # the long-line excerpt kills it
        _find(tool_mutants, "_TERMS", "[à-ÿ] at 7", "[à-Ā]"),  # equivalent
        _find(tool_mutants, "recall_id_to_seq", "'0'", "'0X'"),  # equivalent
    ]
    run = strength.run_mutants(chosen, jobs=1, timeout=60)
    status = {r.mutant.after: r.status for r in run.results}
    assert status == {"161": "killed", "[à-Ā]": "survived", "'0X'": "survived"}
    assert run.killed == 1
    assert [r.mutant.after for r in run.equivalent] == ["[à-Ā]", "'0X'"]
    assert run.unexplained == []
    assert run.killable_score == 100.0
    killed = run.results[0]
    assert killed.detail  # the first case that told it apart
    report = io.StringIO()
    strength._print_mutation(run, ["recall._tools"], report, None)
    text = report.getvalue()
    assert "killed 1/3" in text
    assert "0 unexplained" in text
    assert "equivalent: U+0100 never appears in a lowered query" in text
    line = chosen[2].line
    assert f"recall/_tools.py:{line} recall_id_to_seq (string): '0' -> '0X' #1" in text


def test_python_coverage_under_replay() -> None:
    cov = strength.python_coverage()
    assert cov.failed == 0
    assert cov.passed > 0
    summary = cov.function_summary(TOOLS, "recall_tokens")
    assert summary["percent_covered"] == 100.0
    gaps = cov.gaps()
    not_tool = [g for g in gaps if g.function == "is_space"]
    assert not_tool
    assert not any(g.tool_logic for g in not_tool)
    assert all(g.reason for g in not_tool)
    raise_line = [g for g in gaps if g.file == TOOLS and g.code == "raise UnknownToolError(name)"]
    assert raise_line
    assert raise_line[0].tool_logic
    assert raise_line[0].reason
    tool = cov.tool_logic()
    assert 0 < tool["covered_lines"] <= tool["statements"]


def test_parse_go_profile_merges_counter_files() -> None:
    text = (
        "mode: set\n"
        "recallref/recall/recall.go:65.2,65.18 1 0\n"
        "recallref/recall/recall.go:80.40,82.16 3 1\n"
        "recallref/recall/recall.go:65.2,65.18 1 1\n"
    )
    blocks = parse_go_profile(text)
    assert [(b.start_line, b.statements, b.count) for b in blocks] == [(65, 1, 1), (80, 3, 1)]
    assert blocks[0].package == "recallref/recall"
    assert blocks[1].where == "recallref/recall/recall.go:80.40-82.16"


@pytest.mark.go
def test_go_coverage_while_recording() -> None:
    try:
        cov = strength.go_coverage()
    except GoReferenceError as exc:
        go_unavailable(exc)
        raise
    assert cov.calls > 0
    reached, total = cov.statements(strength.GO_TOOL_PACKAGE)
    assert 0 < reached <= total
    functions = {b.function for b in cov.blocks if b.package == strength.GO_TOOL_PACKAGE}
    assert {"Recall", "RecallSearch", "recallIDToSeq", "excerpt"} <= functions
    id_to_seq = [b for b in cov.blocks if b.function == "recallIDToSeq"]
    assert id_to_seq
    assert all(b.count for b in id_to_seq)
    assert "recallref/server" in cov.packages()


def test_cli_lists_mutants(capsys: pytest.CaptureFixture[str]) -> None:
    assert strength.cli_main(["--list-mutants", "--module", "recall._tools"]) == 0
    out = capsys.readouterr().out
    assert "recall/_tools.py:" in out
    assert "160 -> 161" in out


def test_cli_with_nothing_to_measure_exits_0(capsys: pytest.CaptureFixture[str]) -> None:
    assert strength.cli_main(["--no-go", "--no-python", "--no-mutants"]) == 0
    assert "strength of the goldens" in capsys.readouterr().out
