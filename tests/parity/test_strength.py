"""`parity strength`: the mutator, the explanations as data, a small mutation run, the
gate and its smoke, Python and Go coverage."""

from __future__ import annotations

import ast
import gc
import hashlib
import io
import sys
import threading
import types
from pathlib import Path

import pytest

from parity import cli, strength
from parity.errors import GoReferenceError
from parity.fixtures.go import go_unavailable
from parity.strength import (
    Explanations,
    Mutant,
    generate_mutants,
    load_explanations,
    mutants_of_source,
    parse_explanations,
    parse_go_profile,
)
from parity.strength._normal import ModuleIndex, canonical

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
    # The hosts rank their hits in recall._search (recall._tools' _rank is run_tool's).
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
    assert [(m.line, m.col) for m in tool_mutants] == sorted((m.line, m.col) for m in tool_mutants)


def test_the_tool_logic_is_the_port_less_its_io(every_mutant: list[Mutant]) -> None:
    modules = load_explanations().tool_logic_modules()
    assert {"recall._tools", "recall._go.strings", "recall._go.json"} <= set(modules)
    assert not {"recall._client", "recall._host", "recall._go._tables"} & set(modules)
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


class _Finalized:
    """Garbage whose finalizer runs Python code: a collection inside the AST converter
    then lets another thread run (how CPython 3.11's AST state race shows)."""

    def __del__(self) -> None:
        sum(range(50))


def test_mutants_compile_from_several_threads_at_once(tool_mutants: list[Mutant]) -> None:
    # The runner's threads compile mutants concurrently; CPython 3.11 failed that with
    # "SystemError: AST constructor recursion depth mismatch" once in CI. Without the
    # lock in Mutant.code this failed on 3.11.7 in 7 runs of 7.
    chosen = tool_mutants[:15]
    errors: list[BaseException] = []

    def compile_all() -> None:
        try:
            for mutant in chosen:
                junk = [_Finalized() for _ in range(30)]
                for item in junk:
                    item.cycle = item  # type: ignore[attr-defined]
                del junk
                mutant.code()
        except BaseException as e:  # collected, asserted below
            errors.append(e)

    threshold = gc.get_threshold()
    gc.set_threshold(40, 2, 2)
    try:
        threads = [threading.Thread(target=compile_all) for _ in range(6)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        gc.set_threshold(*threshold)
    assert errors == []


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


def test_sample_is_seeded_and_in_order(every_mutant: list[Mutant]) -> None:
    a = strength.sample_mutants(every_mutant, 30, seed=7)
    assert a == strength.sample_mutants(every_mutant, 30, seed=7)
    assert a != strength.sample_mutants(every_mutant, 30, seed=8)
    assert len(a) == 30
    assert [m.id for m in a] == sorted(m.id for m in a)


# --- normalized forms -------------------------------------------------------------------


def _shapes(source: str) -> list[tuple[str, str, str, tuple[str, ...]]]:
    return [
        (m.shape.site, m.shape.before, m.shape.after, m.shape.contexts)
        for m in mutants_of_source(source, module="recall._x", file="x.py")
    ]


def test_forms_number_locals_and_ignore_layout_and_privacy() -> None:
    one = "def f(text, n):\n    if n:\n        return text.find('\\n', n + 1)\n"
    two = 'def g(s,   k):  # renamed, reformatted\n    if k: return s.find("\\n", k+1)\n'
    assert _shapes(one) == _shapes(two)
    assert ("_1.find('\\n', _2 + 1)", "'\\n'", "''", ("if _1:",)) in _shapes(one)
    private = "_LIMIT = 3\ndef f(a):\n    return a < _LIMIT\n"
    public = "LIMIT = 3\ndef f(b):\n    return b < LIMIT\n"
    assert _shapes(private) == _shapes(public)
    assert ("_1 < LIMIT", "_1 < LIMIT", "_1 <= LIMIT", ()) in _shapes(public)


def test_forms_drop_a_module_of_the_same_package() -> None:
    index = ModuleIndex(
        ast.parse("from recall._go import strings\nx = strings.to_lower('A')\n"),
        package="recall",
    )
    call = index.tree.body[1].value  # type: ignore[attr-defined]
    assert index.namer(call).form(call) == "to_lower('A')"


def test_canonical_forms_of_hand_written_data() -> None:
    assert canonical("if  not (x) :") == "if not x:"
    assert canonical('_1.lstrip( "0" )') == "_1.lstrip('0')"
    assert canonical("[à-ÿ] at 7") == "[à-ÿ] at 7"
    assert canonical("[à-Ā]") == "[à-Ā]"
    assert canonical("for _1 in _2: else:") == "for _1 in _2: else:"


# --- the explanations -------------------------------------------------------------------


def test_every_explanation_names_exactly_one_mutant(every_mutant: list[Mutant]) -> None:
    explanations = load_explanations()
    match = explanations.match_mutants(every_mutant)
    assert [str(p) for p in match.problems if p.fails] == []
    assert len(match.by_mutant) == len(explanations.equivalent)


def test_every_line_explanation_and_name_still_fits() -> None:
    explanations = load_explanations()
    statements = explanations.tool_logic_statements()
    problems = explanations.line_problems(statements) + explanations.name_problems()
    assert [str(p) for p in problems] == []


def _module_mutants(
    sources: dict[str, str], explanations: Explanations, first_id: int = 1
) -> list[Mutant]:
    out: list[Mutant] = []
    for module, source in sources.items():
        out += mutants_of_source(
            source,
            module=module,
            file=module.replace(".", "/") + ".py",
            first_id=first_id + len(out),
            skip=explanations.not_tool_logic_of(module),
        )
    return out


def _original_sources(explanations: Explanations) -> dict[str, str]:
    return {
        m: explanations.module_path(m).read_text("utf-8") for m in explanations.tool_logic_modules()
    }


class _RenameLocals(ast.NodeTransformer):
    """Every local of every function renamed ``v_<name>``."""

    def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.AST:
        local = {a.arg for a in (*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs)}
        local |= {
            n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
        }
        for sub in ast.walk(node):
            if isinstance(sub, ast.Name) and sub.id in local:
                sub.id = "v_" + sub.id
            elif isinstance(sub, ast.arg) and sub.arg in local:
                sub.arg = "v_" + sub.arg
        return node


def _split_functions(tree: ast.Module) -> None:
    """Each function of two statements or more split into ``*_start`` and ``*_finish``,
    as a sans-IO core splits each tool: the first half of its statements, then the
    rest, the names the second half takes from the first as its parameters."""
    body: list[ast.stmt] = []
    for node in tree.body:
        if not (isinstance(node, ast.FunctionDef) and len(node.body) >= 2):
            body.append(node)
            continue
        half = len(node.body) // 2
        first, rest = node.body[:half], node.body[half:]
        known = {a.arg for a in node.args.args} | {
            n.id
            for s in first
            for n in ast.walk(s)
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
        }
        used = sorted({n.id for s in rest for n in ast.walk(s) if isinstance(n, ast.Name)} & known)
        start = ast.FunctionDef(
            name=node.name + "_start",
            args=node.args,
            body=[*first, ast.Return(ast.Tuple([ast.Name(n, ast.Load()) for n in used]))],
            decorator_list=[],
            returns=None,
            type_params=[],
        )
        finish = ast.FunctionDef(
            name=node.name + "_finish",
            args=ast.arguments([], [ast.arg(n) for n in used], None, [], [], None, []),
            body=rest,
            decorator_list=[],
            returns=None,
            type_params=[],
        )
        body += [start, finish]
    tree.body = body


def _refactor(source: str) -> tuple[str, str]:
    """The module split in two (the second half of its definitions moved to a new module),
    its functions split into start and finish, every local renamed, and the whole
    reformatted."""
    tree = ast.parse(source)
    _RenameLocals().visit(tree)
    _split_functions(tree)
    ast.fix_missing_locations(tree)
    imports = [n for n in tree.body if isinstance(n, ast.Import | ast.ImportFrom)]
    defs = [n for n in tree.body if not isinstance(n, ast.Import | ast.ImportFrom)]
    half = len(defs) // 2
    first = ast.Module([*imports, *defs[:half]], [])
    second = ast.Module([*imports, *defs[half:]], [])
    return ast.unparse(first), ast.unparse(second)


def test_explanations_survive_a_refactor_of_the_tools() -> None:
    explanations = load_explanations()
    sources = _original_sources(explanations)
    before = explanations.match_mutants(_module_mutants(sources, explanations))
    tools, moved = _refactor(sources["recall._tools"])
    assert "v_content" in tools + moved
    assert "def tool_recall_search_finish(" in tools + moved
    assert "def excerpt_finish(v_content, v_start)" in tools + moved
    refactored = dict(sources)
    refactored["recall._tools"] = tools
    refactored["recall._tools_moved"] = moved
    mutants = _module_mutants(refactored, explanations)
    after = explanations.match_mutants(mutants)
    assert [str(p) for p in after.problems if p.fails] == []
    assert len(after.by_mutant) == len(before.by_mutant) == len(explanations.equivalent)
    # each explanation still names the same change, found where the code went
    old = {rule.label: key for key, rule in before.by_mutant.items()}
    new = {rule.label: key for key, rule in after.by_mutant.items()}
    assert old.keys() == new.keys()
    by_ident = {m.ident: m for m in mutants}
    modules = {by_ident[k].module for k in new.values()}
    assert "recall._tools_moved" in modules
    moved_notes = [p for p in after.problems if p.kind == "moved"]
    assert any("now in excerpt_finish" in p.message for p in moved_notes)


def _most_explained_function(explanations: Explanations, mutants: list[Mutant]) -> str:
    match = explanations.match_mutants(mutants)
    counts: dict[str, int] = {}
    for m in mutants:
        if m.ident in match.by_mutant and "." not in m.function and m.function.islower():
            counts[m.function] = counts.get(m.function, 0) + 1
    return max(counts, key=lambda f: counts[f])


def test_explanations_of_removed_code_are_orphaned_clearly() -> None:
    """A function removed (as _python_differs goes when its tables become data): the
    explanations of its code are reported orphaned, with their entry and why; every
    other one still fits."""
    explanations = load_explanations()
    sources = _original_sources(explanations)
    mutants = _module_mutants(sources, explanations)
    function = _most_explained_function(explanations, mutants)
    module = next(m.module for m in mutants if m.function == function)
    tree = ast.parse(sources[module])
    tree.body = [n for n in tree.body if getattr(n, "name", None) != function]
    changed = dict(sources)
    changed[module] = ast.unparse(tree)
    match = explanations.match_mutants(_module_mutants(changed, explanations))
    before = explanations.match_mutants(mutants)
    gone = {r.label for k, r in before.by_mutant.items() if k[0] == module}
    gone -= {r.label for r in match.by_mutant.values()}
    assert gone
    failing = [p for p in match.problems if p.fails]
    assert {p.rule for p in failing} == gone
    for p in failing:
        assert p.kind in ("orphaned", "overlap")
        assert p.rule.startswith("equivalent ")
    assert any("any more (removed or rewritten)" in p.message for p in failing)


def test_stale_entries_say_which_and_why(every_mutant: list[Mutant]) -> None:
    text = """
[[equivalent]]
id = "demo"
why = "for the test"

[[equivalent.mutant]]
before = "_1 <= len(_2)"
after = "_1 >= len(_2)"

[[equivalent.mutant]]
site = "_1.lstrip('0')"
before = "'0'"
after = "'0X'"
within = "while True:"

[[equivalent.mutant]]
before = "gone_function(_1)"
after = "_1"

[[equivalent.mutant]]
site = "_1 += 1"
before = "1"
after = "2"

[[unreachable]]
id = "nothing"
statement = "raise NoSuchError()"
why = "for the test"
"""
    explanations = parse_explanations(text)
    problems = {p.rule: p for p in explanations.match_mutants(every_mutant).problems}
    assert problems["equivalent demo #1"].kind == "orphaned"
    assert (
        "no mutant changes `_1 <= len(_2)` to `_1 >= len(_2)`"
        in problems["equivalent demo #1"].message
    )
    assert "not within `while True:`" in problems["equivalent demo #2"].message
    assert (
        "no code of the tool logic has the form `gone_function(_1)`"
        in problems["equivalent demo #3"].message
    )
    assert problems["equivalent demo #4"].kind == "ambiguous"
    assert "add `within` or `in`" in problems["equivalent demo #4"].message
    lines = explanations.line_problems(load_explanations().tool_logic_statements())
    assert [(p.rule, p.kind) for p in lines] == [("unreachable nothing", "orphaned")]


def test_bad_data_is_a_clear_error() -> None:
    with pytest.raises(strength.StrengthDataError, match=r"\[\[equivalent\]\] #1: `why`"):
        parse_explanations('[[equivalent]]\nid = "x"\n')
    with pytest.raises(strength.StrengthDataError, match="unknown key"):
        parse_explanations('[[equivalent]]\nid = "x"\nwhy = "y"\nwhen = "z"\n')
    with pytest.raises(strength.StrengthDataError, match="statement"):
        parse_explanations('[[unreachable]]\nid = "x"\nwhy = "y"\n')


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


def test_mutants_differing_only_in_archive_reads_are_killed(tool_mutants: list[Mutant]) -> None:
    chosen = [_find(tool_mutants, *change) for change in READ_DIFFERING]
    assert len(chosen) == 7
    run = strength.run_mutants(chosen, jobs=2, timeout=60)
    assert not run.equivalent
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
    assert run.explained_but_killed == []
    assert run.killable_score == 100.0
    killed = run.results[0]
    assert killed.detail  # the first case that told it apart
    report = io.StringIO()
    strength.print_mutation(run, ["recall._tools"], report, None)
    text = report.getvalue()
    assert "killed 1/3" in text
    assert "0 unexplained" in text
    assert "equivalent: U+0100 never appears in a lowered query" in text
    assert "recall/_tools.py:" in text
    assert "recall_id_to_seq (string): '0' -> '0X'" in text


def _id_of(mutants: list[Mutant], function: str, before: str, after: str) -> str:
    return str(_find(mutants, function, before, after).id)


def test_the_gate_fails_on_an_unexplained_survivor(
    every_mutant: list[Mutant],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    survivor = _id_of(every_mutant, "_TERMS", "[à-ÿ] at 7", "[à-Ā]")
    argv = ["--no-go", "--no-python", "--mutant", survivor, "--fail-under-mutation", "0"]
    assert cli.main(["strength", *argv]) == 0
    assert "1 explained, 0 unexplained" in capsys.readouterr().out
    full = load_explanations()
    less = Explanations(
        full.package,
        full.not_modules,
        full.not_tool_logic,
        full.unreachable,
        [r for r in full.equivalent if r.group != "terms-class-u0100"],
        full.go_unreachable,
    )
    monkeypatch.setattr("parity.strength._cli.load_explanations", lambda: less)
    assert cli.main(["strength", *argv]) == 5
    out = capsys.readouterr().out
    assert "0 explained, 1 unexplained" in out
    assert "[[equivalent.mutant]]" in out  # a ready entry to paste
    assert "site = \"re.compile('[a-z0-9à-ÿ]{2,}')\"" in out
    assert "under the gate: 1 unexplained surviving mutant(s)" in out
    # without a gate it is a report
    assert cli.main(["strength", *argv[:4]]) == 0


def test_the_gate_fails_on_an_explanation_the_replay_disproves(
    every_mutant: list[Mutant],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    killed = _find(every_mutant, "EXCERPT_RUNES", "160", "161")
    wrong = parse_explanations(
        "[[equivalent]]\nid = 'wrong'\nwhy = 'it is not'\n[[equivalent.mutant]]\n"
        f"site = {killed.shape.site!r}\nbefore = '160'\nafter = '161'\n"
    )
    full = load_explanations()
    wrong.not_modules, wrong.not_tool_logic = full.not_modules, full.not_tool_logic
    monkeypatch.setattr("parity.strength._cli.load_explanations", lambda: wrong)
    argv = ["--no-go", "--no-python", "--mutant", str(killed.id), "--fail-under-mutation", "0"]
    assert cli.main(["strength", *argv]) == 5
    out = capsys.readouterr().out
    assert "equivalent wrong #1: killed:" in out
    assert "it is not equivalent, delete the entry" in out


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
    assert [str(p) for p in cov.problems()] == []


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


@pytest.mark.once
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
    assert cov.problems() == []


# --- the command ------------------------------------------------------------------------


def test_cli_lists_mutants(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["strength", "--list-mutants", "-v", "--module", "recall._tools"]) == 0
    out = capsys.readouterr().out
    assert "recall/_tools.py:" in out
    assert "160 -> 161" in out
    assert "site EXCERPT_RUNES = 160 | 160 -> 161" in out


def test_cli_with_nothing_to_measure_exits_0(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["strength", "--no-go", "--no-python", "--no-mutants"]) == 0
    out = capsys.readouterr().out
    assert "strength of the goldens" in out
    assert "STALE" not in out


def test_cli_unknown_mutant_is_an_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["strength", "--no-go", "--no-python", "--mutant", "999999"]) == 2
    assert "no mutant 999999" in capsys.readouterr().err


def test_a_mutation_worker_that_dies_says_why() -> None:
    from parity.strength import _runner

    worker = _runner._Worker("no-such-corpus", None)
    try:
        with pytest.raises(EOFError, match=r"worker died: .*no corpus named 'no-such-corpus'"):
            worker.run(None, timeout=60)
    finally:
        worker.stop()
