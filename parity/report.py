"""Mismatch reports: where two outputs first differ (byte offset, line:col counting
bytes from 1, as Go's tools do), both made visible, and a unified diff; a changed case
of two journals (``case_report``: ``diff``, ``record --check``, ``review``); and a
replay's reports for machines, ``write_json`` and ``write_junitxml``.
"""

from __future__ import annotations

import difflib
import json
import re
import unicodedata
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from parity.errors import ParityError
from recall._shadow import first_difference

if TYPE_CHECKING:
    from parity.compare import Drift
    from parity.replay import CaseResult, ReplayResult

_NAMES = {"\t": "TAB", "\r": "CR", "\x00": "NUL", "\x1b": "ESC", "\x7f": "DEL"}
_MARKERS = frozenset("⟨⟩⏎␠")
_INVISIBLE = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp", "Zs"})


def _mark(ch: str) -> str:
    return f"⟨{_NAMES.get(ch) or f'U+{ord(ch):04X}'}⟩"


def visible(text: str) -> str:
    """``text`` with line ends as ``⏎`` (then a real newline), spaces ending a line as ``␠``,
    controls, format characters, unusual spaces and the markers themselves as
    ``⟨U+XXXX⟩`` (``⟨TAB⟩``, ``⟨CR⟩``, ``⟨NUL⟩``)."""

    def shown(line: str) -> str:
        body = line.rstrip(" ")
        return "".join(
            _mark(ch)
            if ch in _MARKERS or (ch != " " and unicodedata.category(ch) in _INVISIBLE)
            else ch
            for ch in body
        ) + "␠" * (len(line) - len(body))

    return "⏎\n".join(map(shown, text.split("\n")))


def shorten(text: str, limit: int = 400) -> str:
    """``text`` cut to ``limit`` characters, saying how many were left out."""
    return text if len(text) <= limit else f"{text[:limit]}… ({len(text) - limit} more characters)"


def reads_text(reads: Sequence[str] | None) -> str:
    """Reads for a report: ``[block?seq=1000, blocks]``, ``none``, or ``not recorded``."""
    if reads is None:
        return "not recorded"
    return "[" + ", ".join(reads) + "]" if reads else "none"


def _bounded(lines: list[str], limit: int | None) -> list[str]:
    """``lines`` indented, the first ``limit`` of them (None: all), saying how many more."""
    if limit is not None and len(lines) > limit:
        lines = [*lines[:limit], f"… {len(lines) - limit} more lines"]
    return ["    " + line for line in lines]


def block(title: str, text: str, limit: int | None = None) -> str:
    """``text`` made visible under ``title`` and its size, indented; ``limit``: at most
    that many lines."""
    body = "\n".join(_bounded(visible(text).split("\n"), limit))
    return f"  {title} ({len(text.encode('utf-8'))} bytes):\n{body}"


def head(title: str, tool: str, args: str) -> list[str]:
    """A report's first lines: its title, the tool, the args (visible on one line, its line
    ends as ``⏎`` alone; shortened)."""
    shown = visible(shorten(args)).replace("⏎\n", "⏎")
    return [title, f"  tool: {tool}", f"  args: {shown}"]


def mismatch_report(
    *,
    tool: str,
    args: str,
    expected: str,
    actual: str,
    expected_name: str = "go (golden)",
    actual_name: str = "python",
    title: str,
    limit: int | None = None,
) -> str:
    """A readable account, under ``title``, of why ``actual`` is not ``expected``;
    ``limit``: at most that many lines of each output and of the diff."""
    d = first_difference(expected, actual)
    where = "the outputs are equal"
    if d is not None:
        where = f"first difference at byte {d.offset} (line {d.line}, col {d.column})"
    lines = [
        *head(title, tool, args),
        f"  {where}",
        block(expected_name, expected, limit),
        block(actual_name, actual, limit),
        "  diff:",
    ]
    diff = difflib.unified_diff(
        visible(expected).split("\n"),
        visible(actual).split("\n"),
        fromfile=expected_name,
        tofile=actual_name,
        lineterm="",
    )
    return "\n".join([*lines, *_bounded(list(diff), limit)])


CASES_SHOWN = 10  # how many changed cases a bounded account shows (changes_report)
LINES_SHOWN = 20  # how many lines of each output and of its diff a bounded account shows


def case_report(
    drift: Drift, case: str, *, old_name: str, new_name: str, limit: int | None = None
) -> str:
    """A changed case, readable: its output change and its reads change, B in A's seqs;
    ``limit``: at most that many lines of each output and of the diff."""
    before, after = drift.old.call(case), drift.in_old_seqs(case)
    raw = drift.new.call(case)
    seqs_note = " (seqs as in the old)" if drift.first_seqs is not None else ""
    if before.output != after.output or before.tool != after.tool or before.args != raw.args:
        text = mismatch_report(
            title=f"OUTPUT CHANGED {case}",
            tool=raw.tool,
            args=raw.args,
            expected=before.output,
            actual=after.output,
            expected_name=old_name,
            actual_name=new_name + seqs_note,
            limit=limit,
        )
    else:
        text = "\n".join(head(f"READS CHANGED {case}", raw.tool, raw.args))
    if before.reads != after.reads and None not in (before.reads, after.reads):
        text += f"\n  reads in {old_name}: {reads_text(before.reads)}"
        text += f"\n  reads in {new_name}{seqs_note}: {reads_text(after.reads)}"
    return text


def changes_report(drift: Drift, *, old_name: str, new_name: str, full: bool) -> list[str]:
    """Each changed case's report, a blank line before each; unless ``full``, bounded:
    the first ``CASES_SHOWN`` cases, ``LINES_SHOWN`` lines of each output and diff."""
    shown = list(drift.changes) if full else list(drift.changes)[:CASES_SHOWN]
    limit = None if full else LINES_SHOWN
    lines = []
    for case in shown:
        lines += ["", case_report(drift, case, old_name=old_name, new_name=new_name, limit=limit)]
    if len(shown) < len(drift.changes):
        lines += ["", f"… {len(drift.changes) - len(shown)} more changed cases"]
    return lines


def case_record(corpus: str, result: CaseResult) -> dict[str, Any]:
    """A replayed case for a JSON report: ``first_difference`` that of the first pass whose
    output differs (null: none), ``reads`` Go's (null: not recorded) and those of the
    first pass that reads the archive itself (null: none ran)."""
    call = result.call
    difference = None
    for run in result.runs:
        if run.output is not None and run.output != call.output:
            where = first_difference(call.output, run.output)
            difference = {"mode": run.mode, **where._asdict()} if where else None
            break
    made = next((list(r.reads) for r in result.runs if r.mode != "fallback"), None)
    return {
        "name": f"{corpus}/{call.case}",
        "corpus": corpus,
        "case": call.case,
        "tool": call.tool,
        "pass": result.passed,
        "first_difference": difference,
        "reads": {"go": None if call.reads is None else list(call.reads), "python": made},
        "failed_modes": [r.mode for r in result.runs if r.failed(call.output)],
        "report": None if result.passed else result.report(),
    }


def _write(path: str | Path, data: bytes) -> None:
    try:
        Path(path).write_bytes(data)
    except OSError as e:
        raise ParityError(f"{path}: cannot write the report: {e.strerror or e}") from e


def write_json(path: str | Path, results: Sequence[ReplayResult], *, seconds: float) -> None:
    """A JSON report of a replay: the counts, then one record per case (``case_record``)."""
    cases = [case_record(r.corpus, c) for r in results for c in r.results]
    passed = sum(c["pass"] for c in cases)
    obj = dict(passed=passed, failed=len(cases) - passed, seconds=round(seconds, 3), cases=cases)
    _write(path, (json.dumps(obj, indent=2, ensure_ascii=False) + "\n").encode("utf-8"))


_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def _xml_text(text: str) -> str:
    """``text`` with the characters XML 1.0 cannot hold spelled out, as ``visible`` does."""
    return _NOT_XML.sub(lambda m: _mark(m.group()), text)


def write_junitxml(path: str | Path, results: Sequence[ReplayResult], *, seconds: float) -> None:
    """A JUnit XML report of a replay: a ``testsuite`` per corpus, a ``testcase`` per case."""
    suites = ET.Element("testsuites", name="parity replay", time=f"{seconds:.3f}")
    for result in results:
        suite_name = f"parity.replay.{result.corpus}"
        suite = ET.SubElement(
            suites,
            "testsuite",
            name=suite_name,
            tests=str(len(result.results)),
            failures=str(result.failed),
            errors="0",
            skipped="0",
        )
        for case in result.results:
            element = ET.SubElement(suite, "testcase", classname=suite_name, name=case.case)
            if not case.passed:
                record = case_record(result.corpus, case)
                where = record["first_difference"]
                message = (
                    f"[{where['mode']} replay] first difference at byte {where['offset']} "
                    f"(line {where['line']}, col {where['column']})"
                    if where
                    else f"failed in {', '.join(record['failed_modes'])}"
                )
                failure = ET.SubElement(element, "failure", message=_xml_text(message))
                failure.text = _xml_text(case.report())
    ET.indent(suites)
    _write(path, ET.tostring(suites, encoding="utf-8", xml_declaration=True) + b"\n")
