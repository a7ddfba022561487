"""``parity diff A.json B.json``: what differs between two journals, with deepdiff."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from parity import journal as journal_mod
from parity import report
from parity.journal import Journal

__all__ = ["explain"]


def _keyed(j: Journal) -> dict[str, Any]:
    rb = j.recorded_by
    return {
        "corpus": j.corpus,
        "recorded_by": {
            "go_version": rb.go_version,
            "unicode_version": rb.unicode_version,
            "goos": rb.goos,
            "goarch": rb.goarch,
            "instance": rb.instance,
        },
        "seqs": dict(j.seqs),
        "blocks": {b.seq: {"label": b.label, "content": b.content} for b in j.blocks},
        "calls": {c.case: {"tool": c.tool, "args": c.args, "output": c.output} for c in j.calls},
    }


def explain(old_path: str | Path, new_path: str | Path) -> tuple[str, bool]:
    """A readable account of how journal ``new_path`` differs from ``old_path``; and
    whether they are the same. Both are loaded (and verified) through ``parity.journal``."""
    from deepdiff import DeepDiff  # imported late: only this command needs it

    old, new = journal_mod.load(old_path), journal_mod.load(new_path)
    diff = DeepDiff(_keyed(old), _keyed(new), verbose_level=2)
    if not diff:
        return f"{old_path} and {new_path} record the same thing", True
    lines = [f"--- {old_path}", f"+++ {new_path}", diff.pretty()]
    old_calls = {c.case: c for c in old.calls}
    for call in new.calls:
        before = old_calls.get(call.case)
        if before is not None and before.output != call.output:
            lines.append("")
            lines.append(
                report.mismatch_report(
                    case=call.case,
                    tool=call.tool,
                    args=call.args,
                    expected=before.output,
                    actual=call.output,
                    expected_name=str(old_path),
                    actual_name=str(new_path),
                ).replace("MISMATCH", "OUTPUT CHANGED", 1)
            )
    return "\n".join(lines), False
