"""A clone of the project needs nothing outside it: no tracked file points outside the repo."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# A path that climbs out of the checkout's root: "../x" written at the root level, or
# the team's shared folder by name.
_OUTSIDE = re.compile(r"(?<![\w./])\.\./(?:shared|seed|spec)\b|\bshared/spec/")


def _tracked() -> list[Path]:
    done = subprocess.run(
        ["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True, timeout=60
    )
    return [ROOT / name for name in done.stdout.decode().split("\0") if name]


def test_no_tracked_file_points_outside_the_repository() -> None:
    offenders = []
    for path in _tracked():
        if path.suffix not in {".py", ".go", ".md", ".toml", ".mod", ""} or not path.is_file():
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        offenders += [
            f"{path.relative_to(ROOT)}:{n}: {line.strip()}"
            for n, line in enumerate(text.splitlines(), 1)
            if _OUTSIDE.search(line) and path.name != "test_self_contained.py"
        ]
    assert offenders == []


def test_the_contract_is_in_the_repository() -> None:
    contract = (ROOT / "docs" / "contract.md").read_text(encoding="utf-8")
    for section in (
        "## The Go HTTP API",
        "### Conditional reads of `/blocks`",
        "### Incremental reads of `/blocks`",
        "## `recall`",
        "## `recall_search`",
        "## The texts",
        "## The façade: `GoTurnHost.exec_tool`",
        "## The golden journal",
    ):
        assert section in contract
