"""`parity strength`: the mutator, the explanations as data, a small mutation run, the
gate and its smoke, Python and Go coverage."""

from __future__ import annotations

import hashlib
import io
import pickle
import sys
import types
from pathlib import Path
from typing import Any

import pytest

from parity import cli, strength
from parity.errors import GoReferenceError, ReplayError
from parity.fixtures.go import go_unavailable
from parity.strength import (
    Explanations,
    Mutant,
    MutantResult,
    _cli,
    generate_mutants,
    load_explanations,
    mutants_of_source,
    parse_explanations,
)
from parity.strength._explain import module_file
from parity.strength._mutants import Key
from tests.runwide import made_once

ROOT = Path(__file__).resolve().parents[2]
TOOLS = "recall/_tools.py"


@pytest.fixture(scope="module")
def every_mutant() -> list[Mutant]:
    return generate_mutants()


@pytest.fixture(scope="module")
def tool_mutants() -> list[Mutant]:
    return generate_mutants(["recall._tools"])


def _find(mutants: list[Mutant], function: str, before: str, after: str) -> Mutant:
    found = [m for m in mutants if (m.function, m.before, m.after) == (function, before, after)]
    assert found, f"no mutant {function}: {before} -> {after}"
    return found[0]


# --- the mutator ------------------------------------------------------------------------


def test_the_mutator_makes_the_operators_of_the_issue(
    tool_mutants: list[Mutant], every_mutant: list[Mutant]
) -> None:
    changes = {(m.operator, m.function, m.before, m.after) for m in tool_mutants}
    assert ("constant", "EXCERPT_RUNES", "160", "161") in changes
    assert ("constant", "MAX_LIMIT", "20", "19") in changes
    assert ("comparison", "search_limit", "n >= 1", "n > 1") in changes
    assert ("regex", "_TERMS", "[à-ÿ] at 7", "[á-ÿ]") in changes
    assert ("regex", "_TERMS", "{2,} at 11", "{1,}") in changes
    # One ranking (recall._tools.rank) for run_tool and the hosts.
    assert (
        "sort key order",
        "_hit_rank",
        "return (points, at)",
        "return (at, points)",
    ) in {(m.operator, m.function, m.before, m.after) for m in every_mutant}
    assert ("min/max", "search_limit", "min(n, MAX_LIMIT)", "max(n, MAX_LIMIT)") in changes
    assert ("slice bound", "excerpt", "[:EXCERPT_RUNES]", "[:EXCERPT_RUNES + 1]") in changes
    assert any(op == "string" and "such as" in before for op, _, before, _ in changes)
    # not the tool logic, docstrings and __all__ are left alone
    assert not [m for m in tool_mutants if m.function.startswith(("MemoryArchive", "Block.id"))]
    assert not [m for m in tool_mutants if "step by step" in m.before or m.before == "'excerpt'"]
    ids = [m.id for m in tool_mutants]
    assert ids == sorted(set(ids))
    assert [m.line for m in tool_mutants] == sorted(m.line for m in tool_mutants)


def test_the_tool_logic_is_the_port_less_its_io(every_mutant: list[Mutant]) -> None:
    modules = load_explanations().tool_logic_modules()
    assert {"recall._tools", "recall._go.strings", "recall._go.json"} <= set(modules)
    assert not {"recall._client", "recall._host", "recall._go._unicode_17_0_0"} & set(modules)
    assert {m.module for m in every_mutant} == set(modules)


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
    variants = strength.regex_variants("[a-c]{2,}")
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


def test_docstrings_are_left_alone_attributes_too() -> None:
    source = '"""Module."""\nLIMIT = 3\n"""The limit."""\ndef f():\n    """F."""\n    return 1\n'
    changes = {(m.before, m.after) for m in mutants_of_source(source, module="x", file="x.py")}
    assert changes == {("3", "4"), ("3", "2"), ("1", "2"), ("1", "0")}


def test_equal_changes_on_equal_lines_of_a_function_are_counted() -> None:
    source = "def f(p):\n    if p:\n        p += 1\n    else:\n        p  +=  1\n    return p\n"
    bumps = [m for m in mutants_of_source(source, module="x", file="x.py") if m.after == "2"]
    assert [(m.line, m.text, m.nth) for m in bumps] == [(3, "p += 1", 1), (5, "p  +=  1", 2)]
    assert bumps[0].key[:4] == bumps[1].key[:4]  # the same line but for its spaces


# --- the explanations -------------------------------------------------------------------


def test_every_explanation_names_code_of_the_tool_logic(every_mutant: list[Mutant]) -> None:
    ex = load_explanations()
    assert [str(p) for p in ex.problems(every_mutant, ex.statements())] == []
    named = {e.key for g in ex.of("equivalent") for e in g.entries}
    assert len(named) == sum(len(g.entries) for g in ex.of("equivalent"))
    assert len([m for m in every_mutant if m.key in named]) == len(named)


def _sources(ex: Explanations) -> dict[str, str]:
    return {m: (ROOT / module_file(m)).read_text("utf-8") for m in ex.tool_logic_modules()}


def _mutants(sources: dict[str, str], ex: Explanations) -> list[Mutant]:
    out: list[Mutant] = []
    for module, source in sources.items():
        out += mutants_of_source(
            source,
            module=module,
            file=module.replace(".", "/") + ".py",
            first_id=len(out) + 1,
            skip=lambda name: not ex.is_tool_logic(name),
        )
    return out


def test_explanations_survive_moving_code_and_reindenting_it() -> None:
    """The tools split in two modules, their order reversed, indented by 8 spaces: every
    entry still names its mutant."""
    ex = load_explanations()
    sources = _sources(ex)
    lines = sources.pop("recall._tools").splitlines()
    wide = [line.replace("    ", "        ") if line.startswith("    ") else line for line in lines]
    cut = next(i for i, line in enumerate(wide) if line.startswith("def recall_id_to_seq"))
    head = [line for line in wide[:cut] if line.startswith(("import", "from"))]
    sources["recall._tools_late"] = "\n".join(wide[:cut])
    sources["recall._tools_early"] = "\n".join([*head, *wide[cut:]])
    moved = _mutants(sources, ex)
    keys = {m.key for m in moved}
    for g in ex.of("equivalent"):
        assert all(e.key in keys for e in g.entries), g.label
    excerpt = [m for m in moved if m.function == "excerpt" and m.after == "start < len(content)"]
    assert [m.module for m in excerpt] == ["recall._tools_early"]


def test_refresh_rekeys_an_entry_whose_line_or_function_changed() -> None:
    ex = load_explanations()
    sources = _sources(ex)
    tools = sources["recall._tools"]
    assert "    while start <= len(content):\n" in tools
    tools = tools.replace(
        "    while start <= len(content):\n", "    while (\n        start <= len(content)\n    ):\n"
    )
    sources["recall._tools"] = tools.replace("def recall_id_to_seq(", "def id_to_seq(")
    mutants = _mutants(sources, ex)
    stale = ex.problems(mutants, ex.statements())
    assert {p.rule for p in stale} == {
        "equivalent excerpt-last-empty-line",
        "equivalent id-lstrip-digits-only",
    }
    fresh, notes = ex.refreshed(mutants)
    assert fresh.problems(mutants, fresh.statements()) == []
    assert len(notes) == 2
    assert [g.why for g in fresh.groups] == [g.why for g in ex.groups]
    again = parse_explanations(fresh.dump())
    assert again.dump() == fresh.dump()
    entry = next(g for g in again.groups if g.id == "id-lstrip-digits-only").entries[0]
    assert entry.function == "id_to_seq"


def test_the_file_is_what_refresh_writes() -> None:
    ex = load_explanations()
    text = strength._explain.EXPLANATIONS_PATH.read_text("utf-8")
    assert ex.dump() == text


def test_stale_entries_say_which_and_why(every_mutant: list[Mutant]) -> None:
    text = """
[[equivalent]]
id = "demo"
why = "for the test"
entries = [
  { in = "excerpt", line = "while start <= len(content):", before = "start <= len(content)", \
after = "start >= len(content)" },
  { in = "gone", line = "gone(x)", before = "gone(x)", after = "x" },
]

[[unreachable]]
id = "nothing"
why = "for the test"
entries = [ { in = "start_tool", line = "raise NoSuchError()" } ]

[[unreachable]]
id = "reached"
why = "for the test"
entries = [ { in = "excerpt", line = 'return ""' } ]

[not_tool_logic]
"NoSuchClass" = "for the test"
"""
    ex = parse_explanations(text)
    excerpt = next(s for s in ex.statements() if s.function == "excerpt" and s.text == 'return ""')
    killed = _find(every_mutant, "excerpt", "start <= len(content)", "start < len(content)")
    problems = ex.problems(
        every_mutant, ex.statements(), reached={(excerpt.file, excerpt.line)}, killed=[killed]
    )
    assert [(p.rule, p.kind) for p in problems] == [
        ("equivalent demo", "orphaned"),
        ("equivalent demo", "orphaned"),
        ("unreachable nothing", "orphaned"),
        ("unreachable reached", "reached"),
        ("not_tool_logic NoSuchClass", "orphaned"),
    ]
    assert "no code is in gone, `gone(x)`: gone(x) -> x" in str(problems[1])


def test_bad_data_is_a_clear_error() -> None:
    with pytest.raises(strength.StrengthDataError, match=r"\[\[equivalent\]\] #1: `entries`"):
        parse_explanations('[[equivalent]]\nid = "x"\nwhy = "y"\n')
    with pytest.raises(strength.StrengthDataError, match="unknown key"):
        parse_explanations('[[unreachable]]\nid = "x"\nwhy = "y"\nentries = []\nwhen = "z"\n')
    with pytest.raises(strength.StrengthDataError, match="`after` is missing"):
        parse_explanations(
            '[[equivalent]]\nid = "x"\nwhy = "y"\nentries = [{ in = "f", line = "g" }]\n'
        )
    with pytest.raises(strength.StrengthDataError, match="unknown table"):
        parse_explanations("[tool_logic]\n")


# --- running mutants --------------------------------------------------------------------

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


SMALL_RUN = [
    ("EXCERPT_RUNES", "160", "161"),  # the long-line excerpt kills it
    ("_TERMS", "[à-ÿ] at 7", "[à-Ā]"),  # equivalent
    ("recall_id_to_seq", "'0'", "'0X'"),  # equivalent
]


@pytest.fixture(scope="session")
def replayed(tmp_path_factory: pytest.TempPathFactory) -> dict[Key, MutantResult]:
    """One mutation run (two workers, each replaying the unmutated code first) for the
    tests below, made once for the test run: what each test asserts is its result."""

    def run(where: Path) -> None:
        tools = generate_mutants(["recall._tools"])
        chosen = [_find(tools, *change) for change in READ_DIFFERING + SMALL_RUN]
        results = strength.run_mutants(chosen, jobs=2, timeout=60)
        (where / "results.pickle").write_bytes(pickle.dumps(results))

    results = pickle.loads(
        (made_once(tmp_path_factory, "replayed", run) / "results.pickle").read_bytes()
    )
    return {r.mutant.key: r for r in results}


def _results(replayed: dict[Key, MutantResult], chosen: list[Mutant]) -> list[MutantResult]:
    return [MutantResult(m, replayed[m.key].status, replayed[m.key].detail) for m in chosen]


def test_mutants_differing_only_in_archive_reads_are_killed(
    tool_mutants: list[Mutant], replayed: dict[Key, MutantResult]
) -> None:
    chosen = [_find(tool_mutants, *change) for change in READ_DIFFERING]
    assert len(chosen) == 7
    results = _results(replayed, chosen)
    assert [r.status for r in results] == ["killed"] * 7
    # the first case that told each apart: an id whose output is "not found" either way
    assert [r.detail for r in results] == [
        *["recall-id-max-int64"] * 4,  # r9223372036854775807, read by Go
        *["recall-id-below-first"] * 2,  # r1, read by Go
        "recall-id-zero",  # r0, not read by Go
    ]


def test_a_small_mutation_run_kills_and_reports_survivors(
    tool_mutants: list[Mutant], replayed: dict[Key, MutantResult]
) -> None:
    results = _results(replayed, [_find(tool_mutants, *change) for change in SMALL_RUN])
    assert [r.status for r in results] == ["killed", "survived", "survived"]
    assert results[0].detail  # the first case that told it apart
    report = io.StringIO()
    score, row = _cli._print_mutation(results, 698, load_explanations(), None, report)
    text = report.getvalue()
    assert score == 100.0
    assert "killed 1/3" in text
    assert "2 explained, 0 unexplained" in text
    assert "equivalent: U+0100 never appears in a lowered query" in text
    assert "recall_id_to_seq (string): '0' -> '0X'" in text
    assert "| 1 of 3 killed" in row


def _only(
    mutant: Mutant,
    groups: str,
    monkeypatch: pytest.MonkeyPatch,
    replayed: dict[Key, MutantResult],
) -> None:
    """The command sees one mutant, its result in the module's run, and explanations of
    it made of ``groups`` (TOML)."""
    full = load_explanations()
    ex = parse_explanations(groups)
    ex.not_modules, ex.not_tool_logic = full.not_modules, full.not_tool_logic
    monkeypatch.setattr(_cli, "load_explanations", lambda: ex)
    monkeypatch.setattr(_cli, "generate_mutants", lambda: [mutant])

    def run_mutants(chosen: list[Mutant], **options: Any) -> list[MutantResult]:
        assert chosen == [mutant]
        return _results(replayed, chosen)

    monkeypatch.setattr(_cli, "run_mutants", run_mutants)


def test_the_gate_fails_on_an_unexplained_survivor(
    every_mutant: list[Mutant],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    replayed: dict[Key, MutantResult],
) -> None:
    survivor = _find(every_mutant, "_TERMS", "[à-ÿ] at 7", "[à-Ā]")
    _only(survivor, "", monkeypatch, replayed)
    argv = ["--no-coverage", "--fail-under-mutation", "0"]
    assert cli.main(["strength", *argv]) == 5
    out = capsys.readouterr().out
    assert "0 explained, 1 unexplained" in out
    entry = _cli.entry_for(survivor)  # a ready entry to paste
    assert entry in out
    assert entry.startswith('{ in = "_TERMS", line = "_TERMS = re.compile(')
    assert "under the gate: unexplained surviving mutants" in out
    # explained by the ready entry, it passes
    group = f"[[equivalent]]\nid = 'x'\nwhy = 'y'\nentries = [{entry}]\n"
    _only(survivor, group, monkeypatch, replayed)
    assert cli.main(["strength", *argv]) == 0
    assert "1 explained, 0 unexplained" in capsys.readouterr().out
    # without a gate it is a report
    _only(survivor, "", monkeypatch, replayed)
    assert cli.main(["strength", "--no-coverage"]) == 0


def test_the_gate_fails_on_an_explanation_the_replay_disproves(
    every_mutant: list[Mutant],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    replayed: dict[Key, MutantResult],
) -> None:
    killed = _find(every_mutant, "EXCERPT_RUNES", "160", "161")
    entry = _cli.entry_for(killed)
    group = f"[[equivalent]]\nid = 'wrong'\nwhy = 'no'\nentries = [{entry}]\n"
    _only(killed, group, monkeypatch, replayed)
    assert cli.main(["strength", "--no-coverage", "--fail-under-mutation", "0"]) == 5
    out = capsys.readouterr().out
    assert "equivalent wrong: killed: the replay kills recall/_tools.py:" in out


@pytest.mark.once
@pytest.mark.strength_smoke
def test_strength_smoke(capsys: pytest.CaptureFixture[str]) -> None:
    """What `make strength-smoke` runs: a seeded sample of mutants, a gate."""
    status = cli.main(["strength", "--smoke"])
    captured = capsys.readouterr()
    out = captured.out
    assert f"(a sample of {strength.SMOKE_SAMPLE} of " in out, captured.err
    assert status == 0, out


# --- coverage ---------------------------------------------------------------------------


def test_python_coverage_under_replay() -> None:
    ex = load_explanations()
    cov = strength.python_coverage("recall", ex)
    assert 0 < cov.lines.reached < cov.lines.total
    assert cov.reachable_percent == 100.0
    assert "is_space" in cov.skipped  # unreached, not tool logic
    raise_line = [g for g in cov.gaps if g.code == "raise UnknownToolError(name)"]
    assert [g.function for g in raise_line] == ["start_tool"]
    assert raise_line[0].reason == ex.of("unreachable")[0].why
    assert "recall/_sync.py" in cov.files
    assert any(file == TOOLS for file, _ in cov.executed)


@pytest.mark.once
@pytest.mark.go
def test_go_coverage_while_recording() -> None:
    try:
        cov = strength.go_coverage("recall", load_explanations())
    except GoReferenceError as exc:
        go_unavailable(exc)
        raise
    assert cov.calls > 0
    assert 0 < cov.figure.reached == cov.figure.total
    assert cov.gaps == []
    assert "recallref/server" in cov.packages


# --- the command ------------------------------------------------------------------------


def test_cli_lists_mutants(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["strength", "--list-mutants", "-v"]) == 0
    out = capsys.readouterr().out
    assert "recall/_tools.py:" in out
    assert "160 -> 161" in out
    assert (
        '{ in = "EXCERPT_RUNES", line = "EXCERPT_RUNES = 160", before = "160", after = "161" },'
        in out
    )


def test_cli_with_nothing_to_measure_exits_0(capsys: pytest.CaptureFixture[str]) -> None:
    assert (
        cli.main(["strength", "--no-coverage", "--no-mutants", "--fail-under-mutation", "100"]) == 0
    )
    out = capsys.readouterr().out
    assert "strength of the goldens" in out
    assert "STALE" not in out


def test_a_mutation_worker_that_dies_says_why(every_mutant: list[Mutant]) -> None:
    with pytest.raises(ReplayError, match="mutation worker died: CorpusError: no corpus named"):
        strength.run_mutants(every_mutant[:1], corpus="no-such-corpus", jobs=1, timeout=60)
