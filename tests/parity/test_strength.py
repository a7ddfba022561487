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

from parity import cli
from parity.errors import GoReferenceError, ParityError
from parity.fixtures.go import go_unavailable
from parity.strength import _cli
from parity.strength._cover import go_coverage, python_coverage
from parity.strength._explain import (
    Explanations,
    StrengthDataError,
    entry_for,
    generate_mutants,
    load_explanations,
    module_file,
    parse_explanations,
)
from parity.strength._mutants import Mutant, mutants_of_source, regex_variants
from parity.strength._runner import MutantResult, run_mutants
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
    variants = regex_variants("[a-c]{2,}")
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


def test_an_entry_tells_equal_lines_apart_by_the_lines_before_them() -> None:
    source = "def f(p):\n    if p:\n        p += 1\n    else:\n        p  +=  1\n    return p\n"
    every = mutants_of_source(source, module="x", file="x.py")
    bumps = [m for m in every if m.after == "2"]
    assert [(m.line, m.text) for m in bumps] == [(3, "p += 1"), (5, "p  +=  1")]
    entries = [entry_for(m, every) for m in bumps]
    assert entries == [
        '{ code = "if p:\\np += 1", before = "1", after = "2" },',
        '{ code = "else:\\np  +=  1", before = "1", after = "2" },',
    ]
    for entry, bump in zip(entries, bumps, strict=True):
        ex = parse_explanations(f"[[equivalent]]\nid = 'x'\nwhy = 'y'\nentries = [{entry}]\n")
        assert [m for m in every if ex.why_equivalent(m)] == [bump]
    # one line alone names both: the explanation is stale until it says which
    ex = parse_explanations(
        "[[equivalent]]\nid = 'x'\nwhy = 'y'\nentries = [{ code = 'p += 1', before = '1', "
        "after = '2' }]\n"
    )
    assert ex.problems(every, []) == ["equivalent x: ambiguous: 2 places are `p += 1`: 1 -> 2"]


# --- the explanations -------------------------------------------------------------------


def test_every_explanation_names_code_of_the_tool_logic(every_mutant: list[Mutant]) -> None:
    ex = load_explanations()
    assert ex.problems(every_mutant, ex.statements()) == []  # each names one place
    entries = [e for g in ex.equivalent for e in g.entries]
    assert len(set(entries)) == len(entries)
    assert len([m for m in every_mutant if ex.why_equivalent(m)]) == len(entries)


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
            skip=ex.not_tool_logic_reason,
        )
    return out


def test_explanations_survive_moving_code_renaming_and_reindenting_it() -> None:
    """The tools split in two modules, their order reversed, indented by 8 spaces, a
    function renamed: every entry still names its mutant, and it alone."""
    ex = load_explanations()
    sources = _sources(ex)
    tools = sources.pop("recall._tools").replace("def excerpt(", "def excerpt_of(")
    lines = tools.replace(" excerpt(", " excerpt_of(").splitlines()
    wide = [line.replace("    ", "        ") if line.startswith("    ") else line for line in lines]
    cut = next(i for i, line in enumerate(wide) if line.startswith("def recall_id_to_seq"))
    head = [line for line in wide[:cut] if line.startswith(("import", "from"))]
    sources["recall._tools_late"] = "\n".join(wide[:cut])
    sources["recall._tools_early"] = "\n".join([*head, *wide[cut:]])
    moved = _mutants(sources, ex)
    assert [p for p in ex.problems(moved, ex.statements()) if p.startswith("equivalent")] == []
    why = next(g.why for g in ex.equivalent if g.id == "excerpt-last-empty-line")
    excerpt = [m for m in moved if ex.why_equivalent(m) == why]
    assert [(m.module, m.function) for m in excerpt] == [("recall._tools_early", "excerpt_of")]


def test_a_rewritten_line_is_stale_and_its_survivor_gets_a_ready_entry() -> None:
    ex = load_explanations()
    sources = _sources(ex)
    old = "    while start <= len(content):\n"
    assert old in sources["recall._tools"]
    new = "    while (\n        start <= len(content)\n    ):\n"
    sources["recall._tools"] = sources["recall._tools"].replace(old, new)
    mutants = _mutants(sources, ex)
    assert [p for p in ex.problems(mutants, ex.statements()) if p.startswith("equivalent")] == [
        "equivalent excerpt-last-empty-line: orphaned: no code is "
        "`while start <= len(content):`: start <= len(content) -> start < len(content)"
    ]
    survivor = next(m for m in mutants if m.after == "start < len(content)")
    entry = entry_for(survivor, mutants)
    assert entry == (
        '{ code = "start <= len(content)", before = "start <= len(content)", '
        'after = "start < len(content)" },'
    )
    fixed = parse_explanations(f"[[equivalent]]\nid = 'x'\nwhy = 'y'\nentries = [{entry}]\n")
    assert [m for m in mutants if fixed.why_equivalent(m)] == [survivor]


def test_stale_entries_say_which_and_why(every_mutant: list[Mutant]) -> None:
    text = """
[[equivalent]]
id = "demo"
why = "for the test"
entries = [
  { code = "while start <= len(content):", before = "start <= len(content)", \
after = "start >= len(content)" },
  { code = "gone(x)", before = "gone(x)", after = "x" },
]

[[unreachable]]
id = "nothing"
why = "for the test"
entries = [ { code = "raise NoSuchError()" } ]

[[unreachable]]
id = "reached"
why = "for the test"
entries = [ { code = 'return ""' } ]

[[unreachable]]
id = "twice"
why = "for the test"
entries = [ { code = "pos += 1" } ]

[not_tool_logic]
"NoSuchClass" = "for the test"
"""
    ex = parse_explanations(text)
    excerpt = next(s for s in ex.statements() if s.function == "excerpt" and s.text == 'return ""')
    killed = _find(every_mutant, "excerpt", "start <= len(content)", "start < len(content)")
    problems = ex.problems(
        every_mutant, ex.statements(), reached={(excerpt.file, excerpt.line)}, killed=[killed]
    )
    assert [p.split(": ")[:2] for p in problems] == [
        ["equivalent demo", "orphaned"],
        ["equivalent demo", "orphaned"],
        ["unreachable nothing", "orphaned"],
        ["unreachable reached", "reached"],
        ["unreachable twice", "ambiguous"],
        ["not_tool_logic NoSuchClass", "orphaned"],
    ]
    assert problems[1] == "equivalent demo: orphaned: no code is `gone(x)`: gone(x) -> x"


def test_bad_data_is_a_clear_error() -> None:
    with pytest.raises(StrengthDataError, match=r"field `entries` - at `\$.equivalent\[0\]`"):
        parse_explanations('[[equivalent]]\nid = "x"\nwhy = "y"\n')
    with pytest.raises(StrengthDataError, match="unknown field `when`"):
        parse_explanations('[[unreachable]]\nid = "x"\nwhy = "y"\nentries = []\nwhen = "z"\n')
    with pytest.raises(StrengthDataError, match=r"field `after` - at `\$.equivalent\[0\].entries"):
        parse_explanations(
            '[[equivalent]]\nid = "x"\nwhy = "y"\nentries = [{ code = "g", before = "f" }]\n'
        )
    with pytest.raises(StrengthDataError, match=r"explanations.toml: .*unknown field `tool_l"):
        parse_explanations("[tool_logic]\n")
    with pytest.raises(StrengthDataError, match=r"matching regex"):
        parse_explanations('[[unreachable]]\nid = "x"\nwhy = " "\nentries = []\n')
    with pytest.raises(StrengthDataError, match=r"id\(s\) used twice: \['x'\]"):
        parse_explanations('[[unreachable]]\nid = "x"\nwhy = "y"\nentries = []\n' * 2)


# --- running mutants --------------------------------------------------------------------

# Same outputs as the original for every id of the corpus; only the archive reads
# differ (r0, r1, r9223372036854775807, 19-digit ids): the replay's reads check kills them.
Change = tuple[str, str, str]
"""(function, before, after): a mutant of recall._tools."""

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
def replayed(tmp_path_factory: pytest.TempPathFactory) -> dict[Change, MutantResult]:
    """One mutation run (two workers, each replaying the unmutated code first) for the
    tests below, made once for the test run: what each test asserts is its result."""

    def run(where: Path) -> None:
        tools = generate_mutants(["recall._tools"])
        chosen = [_find(tools, *change) for change in READ_DIFFERING + SMALL_RUN]
        results = run_mutants(chosen, jobs=2, timeout=60)
        (where / "results.pickle").write_bytes(pickle.dumps(results))

    results = pickle.loads(
        (made_once(tmp_path_factory, "replayed", run) / "results.pickle").read_bytes()
    )
    return {(r.mutant.function, r.mutant.before, r.mutant.after): r for r in results}


def _results(replayed: dict[Change, MutantResult], chosen: list[Mutant]) -> list[MutantResult]:
    found = [replayed[m.function, m.before, m.after] for m in chosen]
    return [MutantResult(m, r.status, r.detail) for m, r in zip(chosen, found, strict=True)]


def test_mutants_differing_only_in_archive_reads_are_killed(
    tool_mutants: list[Mutant], replayed: dict[Change, MutantResult]
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
    every_mutant: list[Mutant], replayed: dict[Change, MutantResult]
) -> None:
    results = _results(replayed, [_find(every_mutant, *change) for change in SMALL_RUN])
    assert [r.status for r in results] == ["killed", "survived", "survived"]
    assert results[0].detail  # the first case that told it apart
    report = io.StringIO()
    row = _cli._print_mutation(results, every_mutant, load_explanations(), None, report)
    text = report.getvalue()
    assert "score over the killable: 100.0%" in text
    assert f"(a sample of 3 of {len(every_mutant)})" in text
    assert "killed 1/3" in text
    assert "2 explained, 0 unexplained" in text
    assert "equivalent: U+0100 never appears in a lowered query" in text
    assert "recall_id_to_seq (string): '0' -> '0X'" in text
    assert "| 1 of 3 killed" in row


def _only(
    mutant: Mutant,
    groups: str,
    monkeypatch: pytest.MonkeyPatch,
    replayed: dict[Change, MutantResult],
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
    replayed: dict[Change, MutantResult],
) -> None:
    survivor = _find(every_mutant, "_TERMS", "[à-ÿ] at 7", "[à-Ā]")
    _only(survivor, "", monkeypatch, replayed)
    argv = ["--no-coverage", "--gate"]
    assert cli.main(["strength", *argv]) == 5
    out = capsys.readouterr().out
    assert "0 explained, 1 unexplained" in out
    entry = entry_for(survivor, [survivor])  # a ready entry to paste
    assert entry in out
    assert entry.startswith('{ code = "_TERMS = re.compile(')
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
    replayed: dict[Change, MutantResult],
) -> None:
    killed = _find(every_mutant, "EXCERPT_RUNES", "160", "161")
    entry = entry_for(killed, [killed])
    group = f"[[equivalent]]\nid = 'wrong'\nwhy = 'no'\nentries = [{entry}]\n"
    _only(killed, group, monkeypatch, replayed)
    assert cli.main(["strength", "--no-coverage", "--gate"]) == 5
    out = capsys.readouterr().out
    assert "equivalent wrong: killed: the replay kills recall/_tools.py:" in out


@pytest.mark.once
@pytest.mark.strength_smoke
def test_strength_smoke(capsys: pytest.CaptureFixture[str]) -> None:
    """What `make strength-smoke` runs (its arguments): a seeded sample of mutants, a gate."""
    status = cli.main(["strength", "--gate", "--no-coverage", "--sample", "40"])
    captured = capsys.readouterr()
    out = captured.out
    assert "(a sample of 40 of " in out, captured.err
    assert status == 0, out


# --- coverage ---------------------------------------------------------------------------


def test_python_coverage_under_replay() -> None:
    ex = load_explanations()
    cov = python_coverage("recall", ex)
    assert 0 < cov.reached == cov.reachable
    assert "   - is_space: not used by the tools" in cov.notes  # unreached, not tool logic
    raise_line = [g for g in cov.gaps if g.code == "raise UnknownToolError(name)"]
    assert [g.function for g in raise_line] == ["start_tool"]
    assert raise_line[0].reason == ex.unreachable[0].why
    assert any(note.startswith("     recall/_sync.py: lines ") for note in cov.notes)
    assert any(file == TOOLS for file, _ in cov.executed)


@pytest.mark.once
@pytest.mark.go
def test_go_coverage_while_recording() -> None:
    try:
        cov = go_coverage("recall", load_explanations())
    except GoReferenceError as exc:
        go_unavailable(exc)
        raise
    assert " recording 0 calls" not in cov.title
    assert 0 < cov.reached == cov.reachable
    assert cov.summary == f"100.0% of statements ({cov.reached}/{cov.reached})"
    assert cov.gaps == [] == cov.stale
    assert "recallref/server " in cov.notes[0]


# --- the command ------------------------------------------------------------------------


def test_cli_lists_mutants(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["strength", "--list-mutants", "-v"]) == 0
    out = capsys.readouterr().out
    assert "recall/_tools.py:" in out
    assert "160 -> 161" in out
    assert '{ code = "EXCERPT_RUNES = 160", before = "160", after = "161" },' in out


def test_cli_with_nothing_to_measure_exits_0(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["strength", "--no-coverage", "--sample", "0", "--gate"]) == 0
    out = capsys.readouterr().out
    assert "strength of the goldens" in out
    assert "STALE" not in out


def test_a_mutation_worker_that_dies_says_why(every_mutant: list[Mutant]) -> None:
    with pytest.raises(ParityError, match="mutation worker died: CorpusError: no corpus named"):
        run_mutants(every_mutant[:1], corpus="no-such-corpus", jobs=1, timeout=60)
