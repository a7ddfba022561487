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
    assert len(_tables.PRINT_LO) == len(_tables.PRINT_HI) > 0
    spans = list(zip(_tables.PRINT_LO, _tables.PRINT_HI, strict=True))
    assert all(lo <= hi for lo, hi in spans)
    assert all(a[1] + 1 < b[0] for a, b in itertools.pairwise(spans))
    lower = _tables.LOWER
    assert len(lower) > 1000
    assert all(type(k) is int and type(v) is int and k != v for k, v in lower.items())
    assert list(_tables.SPACE) == sorted(set(_tables.SPACE))
    # The Latin-1 images agree with LOWER: one byte a rune, "?" beyond U+00FF.
    want = bytes(lower.get(c, c) if lower.get(c, c) <= 0xFF else ord("?") for c in range(256))
    assert want == _tables.LATIN1_LOWER
    wide = tuple((chr(c), chr(v)) for c, v in lower.items() if c > 0xFF and v <= 0xFF)
    assert wide == _tables.WIDE_TO_LATIN1
