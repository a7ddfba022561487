"""recall/_go/_tables.py is what goref/cmd/gentables writes with the venv's Go."""

from __future__ import annotations

import difflib
import itertools
from pathlib import Path
from typing import Any

import pytest

from recall._go import _tables

ROOT = Path(__file__).resolve().parents[2]
COMMITTED = ROOT / "recall" / "_go" / "_tables.py"


@pytest.mark.go
def test_tables_match_a_fresh_generation(go_tool: Any, tmp_path: Path) -> None:
    fresh = tmp_path / "_tables.py"
    go_tool.run("run", "./cmd/gentables", "-o", str(fresh))
    want = fresh.read_text(encoding="utf-8")
    have = COMMITTED.read_text(encoding="utf-8")
    if have != want:
        diff = difflib.unified_diff(
            have.splitlines(), want.splitlines(), "committed", "generated", lineterm="", n=1
        )
        shown = "\n".join(list(diff)[:40])
        pytest.fail(f"{COMMITTED} is stale; run `make tables`:\n{shown}", pytrace=False)


@pytest.mark.go
def test_tables_name_the_go_that_runs(go_tool: Any) -> None:
    assert go_tool.run("env", "GOVERSION").strip() == _tables.GO_VERSION


def test_tables_are_well_formed() -> None:
    assert _tables.PRINT_FOLLOWS == "strconv.IsPrint"
    assert _tables.PRINT_DISAGREES == ()
    spans = _tables.PRINT
    assert all(lo <= hi for lo, hi in spans)
    assert all(a[1] + 1 < b[0] for a, b in itertools.pairwise(spans))
    assert all(k != v for k, v in _tables.LOWER.items())
