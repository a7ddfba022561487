"""Python coverage of ``recall/`` while the journal is replayed (both passes).

A fresh interpreter starts ``coverage.Coverage(branch=True)`` before anything of the
port is imported, then runs the replay of ``make parity``. The tool logic is every
module of the port but ``[tool_logic.not_modules]`` of ``explanations.toml``, less the
functions ``[not_tool_logic]`` names; what no golden reaches is listed, with the
reason when an ``[[unreachable]]`` entry names its statement.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import sys
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from parity.project import project_root
from parity.strength._explain import Explanations, Problem, Statement, load_explanations

__all__ = ["PyCoverage", "PyGap", "python_coverage", "replay_counts"]


@dataclass(frozen=True)
class PyGap:
    """A line, or a branch (``line->target``; target < 0 is the exit), that no case reached."""

    file: str
    line: int
    target: int | None
    function: str
    code: str
    tool_logic: bool
    reason: str | None

    @property
    def where(self) -> str:
        """``file:line`` or ``file:line->target``."""
        if self.target is None:
            return f"{self.file}:{self.line}"
        to = "exit" if self.target < 0 else str(self.target)
        return f"{self.file}:{self.line}->{to}"


@dataclass
class PyCoverage:
    """coverage.py's view of ``recall/`` while the journal was replayed."""

    report: dict[str, Any]
    """coverage's JSON report (``files`` -> per file ``functions``, lines, branches)."""
    passed: int
    failed: int
    explanations: Explanations = field(default_factory=load_explanations)
    _statements: list[Statement] | None = field(default=None, repr=False)

    def tool_logic_files(self) -> list[str]:
        """The files of the tool logic, relative to the project."""
        root = project_root()
        ex = self.explanations
        return [ex.module_path(m).relative_to(root).as_posix() for m in ex.tool_logic_modules()]

    def files(self) -> list[str]:
        """The measured files, relative to the project."""
        return sorted(self.report["files"])

    def executed_lines(self, file: str) -> set[int]:
        """The lines of ``file`` that ran."""
        entry = self.report["files"].get(file)
        return set(entry["executed_lines"]) if entry else set()

    def function_summary(self, file: str, function: str) -> dict[str, Any]:
        """coverage's summary of one function (qualified name)."""
        return dict(self.report["files"][file]["functions"][function]["summary"])

    def summary(self, files: Iterable[str] | None = None) -> dict[str, int]:
        """Statements and branches of ``files`` (default: all): totals and covered."""
        out = dict.fromkeys(("statements", "covered_lines", "branches", "covered_branches"), 0)
        for file in files if files is not None else self.files():
            _add(out, self.report["files"][file]["summary"], 1)
        return out

    def tool_logic(self) -> dict[str, int]:
        """Statements and branches of the tool logic (``not_tool_logic`` left out)."""
        out = dict.fromkeys(("statements", "covered_lines", "branches", "covered_branches"), 0)
        for file in self.tool_logic_files():
            entry = self.report["files"].get(file)
            if entry is None:
                continue
            _add(out, entry["summary"], 1)
            for name, fn in _outermost(entry["functions"]).items():
                if self.explanations.not_tool_logic_reason(name) is not None:
                    _add(out, fn["summary"], -1)
        return out

    def reachable_percent(self) -> float:
        """Percent reached of the tool logic's lines and branches that a golden can reach."""
        t = self.tool_logic()
        every = self.gaps(self.tool_logic_files(), collapse=False)
        explained = sum(1 for g in every if g.tool_logic and g.reason)
        reachable = t["statements"] + t["branches"] - explained
        covered = t["covered_lines"] + t["covered_branches"]
        return 100.0 * covered / reachable if reachable else 100.0

    def statements(self) -> list[Statement]:
        """The statements of the tool logic (read once)."""
        if self._statements is None:
            self._statements = self.explanations.tool_logic_statements()
        return self._statements

    def problems(self) -> list[Problem]:
        """Line explanations that name no statement, or one that a golden reaches; names
        of ``not_tool_logic`` and ``not_modules`` that name nothing."""
        statements = self.statements()
        ex = self.explanations
        problems = ex.line_problems(statements, lambda s: s.line in self.executed_lines(s.file))
        return problems + ex.name_problems()

    def gaps(self, files: Iterable[str] | None = None, *, collapse: bool = True) -> list[PyGap]:
        """Every line and branch that no case reached, in ``files`` (default: all).

        With ``collapse``, a branch into a line that is itself unreached is left out
        (the line says it already).
        """
        tool_files = set(self.tool_logic_files())
        by_line: dict[tuple[str, int], list[Statement]] = {}
        for s in self.statements():
            by_line.setdefault((s.file, s.line), []).append(s)
        out: list[PyGap] = []
        for file in files if files is not None else self.files():
            entry = self.report["files"].get(file)
            if entry is None:
                continue
            lines = _read_lines(project_root() / file)
            owner = _line_owners(entry["functions"])
            missing = set(entry["missing_lines"])
            for line in sorted(missing):
                out.append(self._gap(file, line, None, owner, lines, tool_files, by_line))
            for src, dst in entry.get("missing_branches", []):
                if collapse and dst > 0 and dst in missing:
                    continue  # the missing line says it already
                out.append(self._gap(file, src, dst, owner, lines, tool_files, by_line))
        return out

    def _gap(
        self,
        file: str,
        line: int,
        target: int | None,
        owner: dict[int, str],
        lines: list[str],
        tool_files: set[str],
        by_line: dict[tuple[str, int], list[Statement]],
    ) -> PyGap:
        function = owner.get(line, "")
        code = _code(lines, line)
        not_tool = self.explanations.not_tool_logic_reason(function)
        tool = file in tool_files and not_tool is None
        reason: str | None = None
        if file in tool_files and not tool:
            reason = not_tool
        elif target is None or target > 0:
            at = line if target is None else target
            for s in by_line.get((file, at), ()):
                reason = self.explanations.line_reason(s)
                if reason:
                    break
        return PyGap(file, line, target, function, code, tool, reason)


def _add(out: dict[str, int], summary: dict[str, int], sign: int) -> None:
    out["statements"] += sign * summary["num_statements"]
    out["covered_lines"] += sign * summary["covered_lines"]
    out["branches"] += sign * summary.get("num_branches", 0)
    out["covered_branches"] += sign * summary.get("covered_branches", 0)


def _code(lines: list[str], line: int) -> str:
    """The source of a line, stripped, without a trailing comment."""
    text = lines[line - 1].strip() if 0 < line <= len(lines) else ""
    return re.sub(r"\s+#[^\"']*$", "", text)


def _outermost(functions: dict[str, Any]) -> dict[str, Any]:
    """coverage's functions whose names are not nested in another listed function."""
    return {
        n: f
        for n, f in functions.items()
        if n and not any(n.startswith(o + ".") for o in functions if o and o != n)
    }


def _line_owners(functions: dict[str, Any]) -> dict[int, str]:
    """Line -> the innermost function (qualified name) that holds it, from coverage's report."""
    owner: dict[int, str] = {}
    for name in sorted((n for n in functions if n), key=len):
        f = functions[name]
        for line in (*f["executed_lines"], *f["missing_lines"], *f.get("excluded_lines", ())):
            owner[line] = name
    return owner


def _read_lines(path: Path) -> list[str]:
    try:
        return path.read_text("utf-8").splitlines()
    except OSError:
        return []


def _package_dir(name: str) -> Path:
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        raise ImportError(f"no package {name}")
    return Path(next(iter(spec.submodule_search_locations)))


def python_coverage(
    corpus_name: str = "recall", *, journal_path: str | None = None, timeout: float = 600
) -> PyCoverage:
    """Replay the journal (both passes) in a fresh interpreter under coverage.py."""
    with tempfile.TemporaryDirectory(prefix="parity-strength-py-") as tmp:
        out = Path(tmp) / "coverage.json"
        code = "import sys; from parity.strength._pycover import coverage_child; coverage_child()"
        argv = [sys.executable, "-c", code, corpus_name, journal_path or "", str(out)]
        done = subprocess.run(
            argv, cwd=project_root(), capture_output=True, text=True, timeout=timeout, check=False
        )
        if done.returncode != 0 or not out.is_file():
            from parity.errors import ReplayError

            raise ReplayError(f"the replay under coverage failed:\n{done.stderr.strip()[-2000:]}")
        doc = json.loads(out.read_text("utf-8"))
    return PyCoverage(doc["coverage"], doc["passed"], doc["failed"])


def coverage_child() -> None:
    """In a fresh interpreter: replay under coverage, write the JSON report to argv[3]."""
    import coverage

    from parity.strength._runner import purge

    corpus_name, journal_path, out = sys.argv[1], sys.argv[2], sys.argv[3]
    package = load_explanations().package
    purge(package)  # measured from their first line on
    cov = coverage.Coverage(
        data_file=None, branch=True, source=[str(_package_dir(package))], config_file=False
    )
    cov.start()
    try:
        result = replay_counts(corpus_name, journal_path or None)
    finally:
        cov.stop()
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "report.json"
        old = os.getcwd()
        os.chdir(project_root())  # file names relative to the project
        try:
            cov.json_report(outfile=str(report))
        finally:
            os.chdir(old)
        doc = json.loads(report.read_text("utf-8"))
    payload = {"coverage": doc, "passed": result[0], "failed": result[1]}
    Path(out).write_text(json.dumps(payload), "utf-8")


def replay_counts(corpus_name: str, journal_path: str | None) -> tuple[int, int]:
    """The replay of ``make parity`` (both modes): (passed, failed)."""
    from parity import journal as journal_mod
    from parity.corpus import get_corpus
    from parity.replay import MODES, Replayer, check_consistency

    corpus = get_corpus(corpus_name)
    path = journal_path or str(corpus.journal_path)
    loaded = journal_mod.load(path)
    check_consistency(loaded, corpus, path=path)
    with Replayer(loaded, corpus) as replayer:
        result = replayer.replay(modes=MODES)
    return result.passed, result.failed
