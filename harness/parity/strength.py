"""How strong are the goldens: Go coverage, Python coverage and a mutation score.

``parity strength`` (``make strength``) measures three things about a corpus and its
journal, and prints each figure with what is missing:

1. **Go coverage** of the tool logic (package ``recallref/recall``) while the
   recorder plays the corpus into a Go reference built with ``-cover``
   (``GOCOVERDIR``); the statements that no recorded call reaches;
2. **Python coverage** of ``recall/`` (lines and branches, ``coverage.py``) while
   the replay that ``make parity`` runs (both passes) replays the journal; the
   lines and branches of the tool logic that no golden case reaches;
3. a **mutation score**: the Python tool logic mutated one mutant at a time (in
   memory: the mutated module is compiled from its AST and imported in a worker
   process in place of the file, which is never touched), each mutant run through
   the full golden replay; the surviving mutants, with the reason when a survivor
   is equivalent (no input can tell it apart).

What no golden can reach, or no input can kill, is listed here with the reason
(``GO_UNREACHABLE``, ``PY_NOT_TOOL_LOGIC``, ``PY_UNREACHABLE``, ``EQUIVALENT``);
anything else missing is reported "unexplained", and is a case to add to the
corpus. Exit status 0 (it is a report) unless a ``--fail-under-*`` gate is given
and missed (1); 2 on a harness error.
"""

from __future__ import annotations

import argparse
import ast
import base64
import copy
import dataclasses
import importlib.abc
import importlib.machinery
import importlib.util
import json
import marshal
import os
import re
import select
import subprocess
import sys
import tempfile
import threading
import time
import types
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, TextIO

from parity.project import project_root

__all__ = [
    "DEFAULT_MUTATION_MODULES",
    "EQUIVALENT",
    "GO_UNREACHABLE",
    "PY_NOT_TOOL_LOGIC",
    "PY_TOOL_LOGIC",
    "PY_UNREACHABLE",
    "GoBlock",
    "GoCoverage",
    "Mutant",
    "MutantResult",
    "MutationRun",
    "PyCoverage",
    "PyGap",
    "cli_main",
    "generate_mutants",
    "go_coverage",
    "parse_go_profile",
    "python_coverage",
    "run_mutants",
]


# --- what is explained ------------------------------------------------------------------

GO_TOOL_PACKAGE = "recallref/recall"
"""The Go package holding the tool logic."""

GO_UNREACHABLE: dict[tuple[str, str], str] = {}
"""Go statements of the tool logic that no recorded call can reach: (function, code) -> why."""

PY_TOOL_LOGIC: tuple[str, ...] = (
    "recall/_tools.py",
    "recall/_go/strings.py",
    "recall/_go/strconv.py",
    "recall/_go/json.py",
)
"""The files of the Python tool logic (less ``PY_NOT_TOOL_LOGIC``)."""

PY_NOT_TOOL_LOGIC: dict[tuple[str, str], str] = {
    ("recall/_tools.py", "Block.id"): "not used by the tools (the header is built from seq)",
    ("recall/_tools.py", "MemoryArchive"): (
        "the in-memory archive, for run_tool's other callers; the host reads over HTTP"
    ),
    ("recall/_tools.py", "Archive"): "a Protocol: no code",
    ("recall/_tools.py", "run_tool"): (
        "the tools over an Archive, for run_tool's callers; the hosts start and finish "
        "each tool themselves around their HTTP reads"
    ),
    ("recall/_tools.py", "score"): (
        "reached only through _score_all's fallback, which the tools never take "
        "(their terms always match _TERMS); tests/recall covers it"
    ),
    ("recall/_go/strings.py", "is_space"): "not used by the tools",
    ("recall/_go/json.py", "Opaque.__repr__"): "a debugging aid",
}
"""Functions or classes (by qualified name prefix) in those files that are not tool logic."""

PY_UNREACHABLE: dict[tuple[str, str, str], str] = {
    ("recall/_tools.py", "start_tool", "raise UnknownToolError(name)"): (
        "GoTurnHost.exec_tool sends any other tool name to Go before start_tool"
    ),
    **{
        ("recall/_tools.py", "_score_all", code): (
            "the fallback on score() for terms that do not match _TERMS: the tools' "
            "terms come from recallTokens and always match"
        )
        for code in (
            "for block in blocks:",
            "points = score(block, terms)",
            "if points:",
            "hits.append((points, block))",
            "return hits",
        )
    },
    ("recall/_go/json.py", "unmarshal_args", 'text = _SURROGATE.sub("\\ufffd", text)'): (
        "GoTurnHost.exec_tool has already replaced every surrogate by U+FFFD"
    ),
    ("recall/_go/strconv.py", "_escape", 'return "\\ufffd"'): (
        "the quoted id or query comes from args, whose surrogates GoTurnHost.exec_tool "
        "and unmarshal_args have already replaced"
    ),
}
"""Lines of the Python tool logic that no golden can reach: (file, function, code) -> why."""

_T = "recall/_tools.py"
_S = "recall/_go/strings.py"
_C = "recall/_go/strconv.py"
_J = "recall/_go/json.py"


Key = tuple[str, str, str, str]
"""(file, function, before, after): a mutant as the report names it."""


def _group(file: str, reason: str, *changes: tuple[str, str, str]) -> dict[Key, str]:
    return {(file, function, before, after): reason for function, before, after in changes}


_SURROGATE_FREE = (
    "no surrogate reaches it: GoTurnHost.exec_tool replaces them in args first, and "
    "unmarshal_args decodes a lone surrogate escape to U+FFFD"
)
_HEX_CHECKED = (
    "_STRING has already checked that every \\u has four hex digits, so a class "
    "widened by one rune matches nothing more"
)

EQUIVALENT: dict[Key, str] = {
    (_T, "_TERMS", "[à-ÿ] at 7", "[à-Ā]"): (
        "U+0100 never appears in a lowered query: ToLower maps it to U+0101, "
        "and no rune lowers to U+0100"
    ),
    (_T, "recall_id_to_seq", "'0'", "'0X' #1"): (
        "lstrip('0X') strips what lstrip('0') strips: s holds ASCII digits only by then"
    ),
    (_T, "excerpt", "start <= len(content)", "start < len(content)"): (
        "the iteration it drops, at start == len(content), looks at an empty last "
        "line, which is never returned"
    ),
    (_T, "excerpt", "[start:end]", "[start:end + 1]"): (
        "the character it adds is the line's \\n, which trim_space removes"
    ),
    (_T, "start_tool", "UnknownToolError(name)", "name"): (
        "the raise is unreachable through GoTurnHost, which sends other names to Go"
    ),
    **_group(
        _T,
        "every term comes from recallTokens, so each matches _TERMS: the fallback on "
        "score() is never taken, and score() gives the same points when it is",
        (
            "_score_all",
            "not all((_TERMS.fullmatch(term) for term in terms))",
            "all((_TERMS.fullmatch(term) for term in terms))",
        ),
        (
            "_score_all",
            "all((_TERMS.fullmatch(term) for term in terms))",
            "(_TERMS.fullmatch(term) for term in terms)",
        ),
        ("_score_all", "_TERMS.fullmatch(term)", "term"),
        ("_score_all", "if points:", "if not points: #1"),
        ("_score_all", "hits.append((points, block))", "pass #1"),
    ),
    **_group(
        _T,
        "codec names are case-insensitive",
        ("_score_all", "'latin-1'", "'LATIN-1'"),
    ),
    **_group(
        _S,
        "codec names are case-insensitive",
        ("to_lower_latin1", "'latin-1'", "'LATIN-1'"),
    ),
    **_group(
        _C,
        "Python compares an int and a float exactly: 2**63 bounds f alike either way",
        ("_TWO_63", "float(1 << 63)", "1 << 63"),
    ),
    **_group(
        _C,
        "only n >= 1 is looked at: MinInt64 stands for any value below 1",
        ("_MIN_INT64", "1", "2"),
        ("_MIN_INT64", "1", "0"),
        ("_MIN_INT64", "63", "64"),
        ("_MIN_INT64", "63", "62"),
    ),
    **_group(
        _C,
        "the fast path for plain ASCII shrinks by one rune, which the escaping path "
        "copies as it is (printable)",
        ("_PLAIN_ASCII", "[#-\\[] at 3", "[$-\\[]"),
        ("_PLAIN_ASCII", "[\\]-~] at 7", "[\\]-}]"),
    ),
    **_group(
        _C,
        _SURROGATE_FREE,
        ("_escape", "55296 <= r <= 57343", "55296 < r <= 57343"),
        ("_escape", "55296 <= r <= 57343", "55296 <= r < 57343"),
        ("_escape", "55296", "55297"),
        ("_escape", "57343", "57342"),
        ("_escape", "'\ufffd'", "''"),
        ("_escape", "'\ufffd'", "'\ufffdX'"),
    ),
    **_group(
        _C,
        "U+0020 and U+10000 are printable: they never reach these tests",
        ("_escape", "r < 32", "r <= 32"),
        ("_escape", "32", "33"),
        ("_escape", "r < 65536", "r <= 65536"),
        ("_escape", "65536", "65537"),
    ),
    **_group(
        _C,
        "-2**63 converts to -2**63, which is MinInt64 anyway",
        ("float64_to_int", "-_TWO_63 <= f < _TWO_63", "-_TWO_63 < f < _TWO_63"),
    ),
    **_group(
        _J,
        "arrays and objects are opaque to the tools: only their validity counts",
        ("ARRAY", "'array'", "''"),
        ("ARRAY", "'array'", "'ARRAY'"),
        ("OBJECT", "'object'", "''"),
        ("OBJECT", "'object'", "'OBJECT'"),
        ("_member_value", "c == '{'", "c != '{'"),
        ("_member_value", "'{'", "'' #2"),
        ("_member_value", "'{'", "'{X' #2"),
    ),
    **_group(
        _J,
        "a boolean is neither a string nor a number: both tools ignore it, true or false",
        ("_LITERALS", "True", "False"),
        ("_LITERALS", "False", "True"),
    ),
    **_group(
        _J,
        "the alternative 0 is tried first, so a leading 0 never reaches [0-9]",
        ("_NUMBER", "[1-9] at 8", "[0-9]"),
    ),
    **_group(
        _J,
        _HEX_CHECKED,
        *[
            ("_ESCAPE", f"[{lo}-{hi}] at {at}", to)
            for at, lo, hi, tos in (
                (17, "0", "9", ("[/-9]", "[0-:]")),
                (20, "a", "f", ("[`-f]", "[a-g]")),
                (23, "A", "F", ("[@-F]", "[A-G]")),
                (40, "c", "f", ("[c-g]",)),
                (43, "C", "F", ("[C-G]",)),
                (48, "0", "9", ("[/-9]", "[0-:]")),
                (51, "a", "f", ("[`-f]", "[a-g]")),
                (54, "A", "F", ("[@-F]", "[A-G]")),
                (68, "0", "9", ("[/-9]", "[0-:]")),
                (71, "a", "f", ("[`-f]", "[a-g]")),
                (74, "A", "F", ("[@-F]", "[A-G]")),
            )
            for to in tos
        ],
    ),
    **_group(
        _J,
        "a lone surrogate escape then decodes to the surrogate itself instead of "
        "U+FFFD: it is never a term rune, never a digit, and quote() writes it as U+FFFD",
        ("_unescape", "55296 <= r <= 57343", "55296 < r <= 57343"),
        ("_unescape", "55296 <= r <= 57343", "55296 <= r < 57343"),
        ("_unescape", "55296", "55297 #2"),
        ("_unescape", "57343", "57342"),
    ),
    **_group(
        _J,
        "the same decoding, slower: the escape pass then runs on every string",
        ("_string", "'\\\\'", "''"),
    ),
    **_group(
        _J,
        "_string raises for a missing quote as the test did",
        ("_key", "'\"'", "''"),
    ),
    **_group(
        _J,
        "a rune below '0' (other than '\"' and '-') then fails in _number as it failed "
        "at the end; one rune compares with '9X' as with '9'",
        ("_skip_value", "'0'", "''"),
        ("_skip_value", "'9'", "'9X'"),
        ("_member_value", "'0'", "''"),
        ("_member_value", "'9'", "'9X'"),
    ),
    **_group(
        _J,
        "an empty object and an error both give {}",
        ("_object", "'}'", "'}X' #1"),
        ("_object", "pos += 1", "pos -= 1 #1"),
        ("_object", "1", "2 #2"),
        ("_object", "1", "0 #2"),
    ),
    **_group(
        _J,
        _SURROGATE_FREE,
        (
            "unmarshal_args",
            "if not text.isascii() and _SURROGATE.search(text):",
            "if not (not text.isascii() and _SURROGATE.search(text)):",
        ),
        (
            "unmarshal_args",
            "not text.isascii() and _SURROGATE.search(text)",
            "not text.isascii() or _SURROGATE.search(text)",
        ),
        ("unmarshal_args", "not text.isascii()", "text.isascii()"),
        ("unmarshal_args", "_SURROGATE.search(text)", "text"),
        ("unmarshal_args", "'\ufffd'", "''"),
        ("unmarshal_args", "'\ufffd'", "'\ufffdX'"),
    ),
}
"""Mutants that no input through GoTurnHost can kill: (file, function, before, after) -> why.

Same outputs is not enough: the replay also checks that each call reads the archive
as Go's tool did (the journal's ``reads``), so a mutant that reads a block Go does not
(``r0`` as seq 0) or skips one Go reads (``r1`` as malformed) is killed, not equivalent.
"""

DEFAULT_MUTATION_MODULES: tuple[str, ...] = (
    "recall._tools",
    "recall._go.strings",
    "recall._go.strconv",
    "recall._go.json",
)


# --- 1. Go coverage ---------------------------------------------------------------------


@dataclass(frozen=True)
class GoBlock:
    """A block of a Go coverage profile: a source range, its statements, its count."""

    file: str
    """The import path of the file, e.g. ``recallref/recall/recall.go``."""
    start_line: int
    start_col: int
    end_line: int
    end_col: int
    statements: int
    count: int
    function: str = ""
    code: str = ""
    """The block's source, stripped and on one line (when the source was available)."""

    @property
    def package(self) -> str:
        """The import path of the block's package."""
        return self.file.rsplit("/", 1)[0]

    @property
    def where(self) -> str:
        """``file:line.col-line.col``."""
        return f"{self.file}:{self.start_line}.{self.start_col}-{self.end_line}.{self.end_col}"

    @property
    def reason(self) -> str | None:
        """Why no recorded call can reach it, when that is explained."""
        return GO_UNREACHABLE.get((self.function, self.code))


_PROFILE_LINE = re.compile(r"^(.+):(\d+)\.(\d+),(\d+)\.(\d+) (\d+) (\d+)$")


def parse_go_profile(text: str) -> list[GoBlock]:
    """The blocks of a text coverage profile (``go tool covdata textfmt``), merged by range."""
    merged: dict[tuple[str, int, int, int, int], GoBlock] = {}
    for line in text.splitlines():
        m = _PROFILE_LINE.match(line.strip())
        if m is None:
            continue
        file = m.group(1)
        sl, sc, el, ec, stmts, count = (int(g) for g in m.groups()[1:])
        key = (file, sl, sc, el, ec)
        old = merged.get(key)
        if old is None or count > old.count:
            merged[key] = GoBlock(file, sl, sc, el, ec, stmts, count)
    return sorted(merged.values(), key=lambda b: (b.file, b.start_line, b.start_col))


_GO_FUNC = re.compile(r"^func (?:\([^)]*\) )?(\w+)", re.MULTILINE)


def _annotate(blocks: list[GoBlock], module_path: str, source_dir: Path) -> list[GoBlock]:
    """The blocks with their enclosing function and their source code."""
    sources: dict[str, list[str] | None] = {}
    out = []
    for b in blocks:
        rel = b.file.removeprefix(module_path + "/") if b.file != module_path else b.file
        if rel not in sources:
            path = source_dir / rel
            sources[rel] = path.read_text("utf-8").splitlines() if path.is_file() else None
        lines = sources[rel]
        if lines is None or b.end_line > len(lines):
            out.append(b)
            continue
        function = ""
        for i in range(b.start_line - 1, -1, -1):
            fm = _GO_FUNC.match(lines[i])
            if fm:
                function = fm.group(1)
                break
        if b.start_line == b.end_line:
            chunk = [lines[b.start_line - 1][b.start_col - 1 : b.end_col - 1]]
        else:
            chunk = [lines[b.start_line - 1][b.start_col - 1 :]]
            chunk += lines[b.start_line : b.end_line - 1]
            chunk.append(lines[b.end_line - 1][: b.end_col - 1])
        code = " ".join(part.strip() for part in chunk if part.strip())
        out.append(
            GoBlock(
                b.file,
                b.start_line,
                b.start_col,
                b.end_line,
                b.end_col,
                b.statements,
                b.count,
                function,
                code,
            )
        )
    return out


@dataclass
class GoCoverage:
    """The Go reference's coverage while the recorder played the corpus into it."""

    blocks: list[GoBlock]
    calls: int
    drift: list[str] = field(default_factory=list)
    """How the recording differs from the committed journal (empty when it does not)."""

    def packages(self) -> list[str]:
        """The packages of the profile, sorted."""
        return sorted({b.package for b in self.blocks})

    def statements(self, package: str) -> tuple[int, int]:
        """(reached, total) statements of a package."""
        blocks = [b for b in self.blocks if b.package == package]
        return sum(b.statements for b in blocks if b.count), sum(b.statements for b in blocks)

    def percent(self, package: str) -> float:
        """Percent of the package's statements reached."""
        reached, total = self.statements(package)
        return 100.0 * reached / total if total else 100.0

    def unreached(self, package: str = GO_TOOL_PACKAGE) -> list[GoBlock]:
        """The package's blocks (with statements) that no call reached."""
        return [b for b in self.blocks if b.package == package and b.statements and not b.count]

    def unexplained(self, package: str = GO_TOOL_PACKAGE) -> list[GoBlock]:
        """The unreached blocks of the package that no entry of GO_UNREACHABLE explains."""
        return [b for b in self.unreached(package) if b.reason is None]

    def reachable_percent(self, package: str = GO_TOOL_PACKAGE) -> float:
        """Percent reached of the statements that a recorded call can reach."""
        reached, total = self.statements(package)
        explained = sum(b.statements for b in self.unreached(package) if b.reason)
        total -= explained
        return 100.0 * reached / total if total else 100.0


def _go_module_path(source: Path) -> str:
    for line in (source / "go.mod").read_text("utf-8").splitlines():
        if line.startswith("module "):
            return line.split()[1]
    raise ValueError(f"no module line in {source / 'go.mod'}")


def go_coverage(corpus_name: str = "recall", *, journal_path: str | None = None) -> GoCoverage:
    """Record the corpus into a Go reference built with -cover; the coverage profile."""
    from parity import journal as journal_mod
    from parity.compare import compare
    from parity.corpus import get_corpus
    from parity.errors import GoReferenceError, JournalError
    from parity.record import FIRST_SEQ, record
    from parity.reference import GoReference, go_env, go_executable

    corpus = get_corpus(corpus_name)
    reference = GoReference()
    with tempfile.TemporaryDirectory(prefix="parity-strength-go-") as tmp:
        counters = Path(tmp) / "counters"
        counters.mkdir()
        with reference.start(first_seq=FIRST_SEQ, cover=True, cover_dir=counters) as go:
            recorded = record(corpus, go_url=go.base_url)
        # stopped with SIGTERM: the counters are written
        profile = Path(tmp) / "profile.txt"
        argv = [str(go_executable()), "tool", "covdata", "textfmt"]
        argv += ["-i", str(counters), "-o", str(profile)]
        done = subprocess.run(
            argv,
            cwd=reference.source,
            env=go_env(),
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        if done.returncode != 0 or not profile.is_file():
            raise GoReferenceError(f"`go tool covdata textfmt` failed: {done.stderr.strip()}")
        blocks = parse_go_profile(profile.read_text("utf-8"))
    blocks = _annotate(blocks, _go_module_path(reference.source), reference.source)
    drift: list[str] = []
    try:
        committed = journal_mod.load(journal_path or corpus.journal_path)
    except JournalError as e:
        drift.append(f"no usable committed journal: {e}")
    else:
        d = compare(committed, recorded)
        drift = [line.strip() for line in d.lines() if "recorded_by" not in line]
    return GoCoverage(blocks, len(recorded.calls), drift)


# --- 2. Python coverage -----------------------------------------------------------------


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
            s = self.report["files"][file]["summary"]
            out["statements"] += s["num_statements"]
            out["covered_lines"] += s["covered_lines"]
            out["branches"] += s.get("num_branches", 0)
            out["covered_branches"] += s.get("covered_branches", 0)
        return out

    def tool_logic(self) -> dict[str, int]:
        """Statements and branches of the tool logic (PY_NOT_TOOL_LOGIC left out)."""
        out = dict.fromkeys(("statements", "covered_lines", "branches", "covered_branches"), 0)
        for file in PY_TOOL_LOGIC:
            entry = self.report["files"].get(file)
            if entry is None:
                continue
            s = entry["summary"]
            out["statements"] += s["num_statements"]
            out["covered_lines"] += s["covered_lines"]
            out["branches"] += s.get("num_branches", 0)
            out["covered_branches"] += s.get("covered_branches", 0)
            for name, fn in _outermost(entry["functions"]).items():
                if _not_tool_logic(file, name) is None:
                    continue
                fs = fn["summary"]
                out["statements"] -= fs["num_statements"]
                out["covered_lines"] -= fs["covered_lines"]
                out["branches"] -= fs.get("num_branches", 0)
                out["covered_branches"] -= fs.get("covered_branches", 0)
        return out

    def reachable_percent(self) -> float:
        """Percent reached of the tool logic's lines and branches that a golden can reach."""
        t = self.tool_logic()
        every = self.gaps(PY_TOOL_LOGIC, collapse=False)
        explained = sum(1 for g in every if g.tool_logic and g.reason)
        reachable = t["statements"] + t["branches"] - explained
        covered = t["covered_lines"] + t["covered_branches"]
        return 100.0 * covered / reachable if reachable else 100.0

    def gaps(self, files: Iterable[str] | None = None, *, collapse: bool = True) -> list[PyGap]:
        """Every line and branch that no case reached, in ``files`` (default: all).

        With ``collapse``, a branch into a line that is itself unreached is left out
        (the line says it already).
        """
        out: list[PyGap] = []
        for file in files if files is not None else self.files():
            entry = self.report["files"].get(file)
            if entry is None:
                continue
            lines = _read_lines(project_root() / file)
            owner = _line_owners(entry["functions"])
            missing = set(entry["missing_lines"])
            for line in sorted(missing):
                out.append(self._gap(file, line, None, owner, lines))
            for src, dst in entry.get("missing_branches", []):
                if collapse and dst > 0 and dst in missing:
                    continue  # the missing line says it already
                out.append(self._gap(file, src, dst, owner, lines))
        return out

    def _gap(
        self, file: str, line: int, target: int | None, owner: dict[int, str], lines: list[str]
    ) -> PyGap:
        function = owner.get(line, "")
        code = _code(lines, line)
        tool = file in PY_TOOL_LOGIC and _not_tool_logic(file, function) is None
        reason: str | None
        if file in PY_TOOL_LOGIC and not tool:
            reason = _not_tool_logic(file, function)
        elif target is None:
            reason = PY_UNREACHABLE.get((file, function, code))
        else:
            to = _code(lines, target)
            reason = PY_UNREACHABLE.get((file, function, to)) if target > 0 else None
        return PyGap(file, line, target, function, code, tool, reason)


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


def _not_tool_logic(file: str, function: str) -> str | None:
    for (f, prefix), reason in PY_NOT_TOOL_LOGIC.items():
        if f == file and (function == prefix or function.startswith(prefix + ".")):
            return reason
    return None


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
        code = "import sys; from parity.strength import _coverage_child; _coverage_child(sys.argv)"
        argv = [sys.executable, "-c", code, corpus_name, journal_path or "", str(out)]
        done = subprocess.run(
            argv, cwd=project_root(), capture_output=True, text=True, timeout=timeout, check=False
        )
        if done.returncode != 0 or not out.is_file():
            from parity.errors import ReplayError

            raise ReplayError(f"the replay under coverage failed:\n{done.stderr.strip()[-2000:]}")
        doc = json.loads(out.read_text("utf-8"))
    return PyCoverage(doc["coverage"], doc["passed"], doc["failed"])


def _coverage_child(argv: list[str]) -> None:
    """In a fresh interpreter: replay under coverage, write the JSON report to argv[3]."""
    import coverage

    corpus_name, journal_path, out = argv[1], argv[2], argv[3]
    _purge("recall")  # measured from their first line on
    cov = coverage.Coverage(
        data_file=None, branch=True, source=[str(_package_dir("recall"))], config_file=False
    )
    cov.start()
    try:
        result = _replay(corpus_name, journal_path or None)
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


def _replay(corpus_name: str, journal_path: str | None) -> tuple[int, int]:
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


def _purge(package: str, keep: Sequence[str] = ()) -> None:
    for name in list(sys.modules):
        if (name == package or name.startswith(package + ".")) and name not in keep:
            del sys.modules[name]


# --- 3. Mutants -------------------------------------------------------------------------


@dataclass(frozen=True)
class Mutant:
    """One change to one module of the tool logic."""

    id: int
    module: str
    """The module's import name, e.g. ``recall._tools``."""
    file: str
    """Its file, relative to the project."""
    line: int
    col: int
    function: str
    """The qualified name of the enclosing function or class, or ``<module>``."""
    operator: str
    before: str
    after: str
    node: int = field(repr=False, compare=False)
    """The index of the changed node in ``ast.walk`` order."""
    variant: int = field(repr=False, compare=False)
    source: str = field(default="", repr=False, compare=False)
    occurrence: int = 0
    """When several mutants of one function make the same change: which one, from 1, in
    the order of the source (0 when the change is unique)."""
    """The module's source when the mutant was made (the file may change meanwhile)."""

    @property
    def where(self) -> str:
        """``file:line``."""
        return f"{self.file}:{self.line}"

    @property
    def change(self) -> str:
        """``before -> after``, for a report."""
        return f"{_short(self.before)} -> {_short(self.key[3])}"

    @property
    def key(self) -> Key:
        """(file, function, before, after): how EQUIVALENT names it.

        ``after`` ends with `` #n`` when the same change is made at several places of
        the function (the n-th, in the order of the source).
        """
        after = f"{self.after} #{self.occurrence}" if self.occurrence else self.after
        return (self.file, self.function, self.before, after)

    @property
    def equivalent(self) -> str | None:
        """Why the goldens cannot kill it (EQUIVALENT), when that is known."""
        return EQUIVALENT.get(self.key)

    def code(self) -> types.CodeType:
        """The mutated module, compiled (with the file's name and line numbers)."""
        path = project_root() / self.file
        tree = ast.parse(self.source or path.read_text("utf-8"), filename=str(path))
        nodes = list(ast.walk(tree))
        target = nodes[self.node]
        replacement = _Mutator(tree, self.file).replacement(target, self.variant)
        _replace(tree, target, replacement)
        ast.fix_missing_locations(tree)
        return compile(tree, str(path), "exec", dont_inherit=True)


def _short(text: str, width: int = 70) -> str:
    text = text.replace("\n", "\\n").encode("utf-8", "backslashreplace").decode("utf-8")
    return text if len(text) <= width else text[: width - 1] + "…"


def _replace(tree: ast.AST, old: ast.AST, new: ast.AST) -> None:
    for parent in ast.walk(tree):
        for name, value in ast.iter_fields(parent):
            if value is old:
                setattr(parent, name, new)
                return
            if isinstance(value, list):
                for i, item in enumerate(value):
                    if item is old:
                        value[i] = new
                        return
    raise ValueError("node not found")


_CMP_SWAPS: dict[type[ast.cmpop], tuple[type[ast.cmpop], ...]] = {
    ast.Lt: (ast.LtE, ast.GtE),
    ast.LtE: (ast.Lt, ast.Gt),
    ast.Gt: (ast.GtE, ast.LtE),
    ast.GtE: (ast.Gt, ast.Lt),
    ast.Eq: (ast.NotEq,),
    ast.NotEq: (ast.Eq,),
    ast.In: (ast.NotIn,),
    ast.NotIn: (ast.In,),
    ast.Is: (ast.IsNot,),
    ast.IsNot: (ast.Is,),
}
_SKIP_NAMES = frozenset({"__all__", "__slots__"})
_NO_DROP = frozenset({"re.compile", "frozenset", "tuple", "dict", "list", "chr", "ord", "len"})
_REGEX_RANGE = re.compile(r"(\\.|[^\\\]])-(\\.|[^\\\]])")
_REGEX_COUNT = re.compile(r"\{(\d+)(,?)(\d*)\}")


def _bump_char(c: str, delta: int) -> str | None:
    code = ord(c) + delta
    if not 0x20 <= code < 0x110000 or 0xD800 <= code <= 0xDFFF:
        return None
    ch = chr(code)
    return "\\" + ch if ch in "]\\^-[" else ch


def _regex_variants(pattern: str) -> list[tuple[str, str, str]]:
    """(what, changed to, mutated pattern): each class range bound moved by one, each count.

    ``what`` names the range or count and its offset in the pattern, as in ``[a-z] at 1``.
    """
    out: list[tuple[str, str, str]] = []
    for cls in re.finditer(r"\[((?:\\.|[^\\\]])*)\]", pattern):
        body_start = cls.start(1)
        for rng in _REGEX_RANGE.finditer(cls.group(1)):
            lo, hi = rng.group(1), rng.group(2)
            what = f"[{lo}-{hi}] at {body_start + rng.start()}"
            for side, ch in (("low", lo), ("high", hi)):
                if len(ch) != 1:
                    continue
                for delta in (-1, 1):
                    new = _bump_char(ch, delta)
                    if new is None:
                        continue
                    start = body_start + (rng.start(1) if side == "low" else rng.start(2))
                    mutated = pattern[:start] + new + pattern[start + 1 :]
                    to = f"[{new}-{hi}]" if side == "low" else f"[{lo}-{new}]"
                    out.append((what, to, mutated))
    for cnt in _REGEX_COUNT.finditer(pattern):
        n = int(cnt.group(1))
        for delta in (-1, 1):
            if n + delta < 0:
                continue
            mutated = pattern[: cnt.start(1)] + str(n + delta) + pattern[cnt.end(1) :]
            to = "{" + str(n + delta) + cnt.group(2) + cnt.group(3) + "}"
            out.append((f"{cnt.group()} at {cnt.start()}", to, mutated))
    valid = []
    for what, to, mutated in out:
        try:
            re.compile(mutated)
        except re.error:
            continue
        valid.append((what, to, mutated))
    return valid


@dataclass(frozen=True)
class _Site:
    function: str
    regex: bool


class _Mutator:
    """Where a module can be mutated, and how: each node's variants, in a stable order."""

    def __init__(self, tree: ast.Module, file: str) -> None:
        self.tree = tree
        self.file = file
        self.sites: dict[int, _Site] = {}
        self._visit(tree, "<module>", skip=False, regex=False)

    def _visit(self, node: ast.AST, function: str, *, skip: bool, regex: bool) -> None:
        if not skip:
            self.sites[id(node)] = _Site(function, regex)
        body = getattr(node, "body", None)
        docstring = None
        if (
            isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
            and isinstance(body, list)
            and body
            and isinstance(body[0], ast.Expr)
            and isinstance(body[0].value, ast.Constant)
            and isinstance(body[0].value.value, str)
        ):
            docstring = body[0]
        for name, value in ast.iter_fields(node):
            children = value if isinstance(value, list) else [value]
            for child in children:
                if not isinstance(child, ast.AST):
                    continue
                child_function = function
                child_skip = skip or child is docstring
                child_regex = False
                if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                    if name in ("decorator_list", "returns"):
                        child_skip = True
                    prefix = "" if function == "<module>" else function + "."
                    child_function = prefix + node.name
                if name == "annotation" or isinstance(node, ast.Import | ast.ImportFrom):
                    child_skip = True
                if isinstance(node, ast.Assign | ast.AnnAssign) and _assigns_skipped(node):
                    child_skip = True
                if isinstance(node, ast.Module) and isinstance(child, ast.Assign | ast.AnnAssign):
                    targets = child.targets if isinstance(child, ast.Assign) else [child.target]
                    if len(targets) == 1 and isinstance(targets[0], ast.Name):
                        child_function = targets[0].id
                if isinstance(node, ast.Call) and _call_name(node) == "re.compile":
                    child_regex = name == "args" and child is node.args[0]
                if isinstance(child, ast.FunctionDef | ast.ClassDef):
                    prefix = "" if child_function == "<module>" else child_function + "."
                    if _not_tool_logic(self.file, prefix + child.name) is not None:
                        child_skip = True
                self._visit(child, child_function, skip=child_skip, regex=child_regex)

    def mutants(self, module: str, file: str, first_id: int, source: str) -> list[Mutant]:
        """Every mutant of the tree, by position in the file."""
        found: list[tuple[int, int, int, int, str, str, str, str]] = []
        for index, node in enumerate(ast.walk(self.tree)):
            site = self.sites.get(id(node))
            if site is None:
                continue
            line, col = getattr(node, "lineno", 0), getattr(node, "col_offset", 0)
            for variant, (operator, before, after) in enumerate(self._describe(node, site)):
                found.append((line, col, index, variant, site.function, operator, before, after))
        found.sort(key=lambda f: f[:4])
        return [
            Mutant(
                id=first_id + i,
                module=module,
                file=file,
                line=line,
                col=col,
                function=function,
                operator=operator,
                before=before,
                after=after,
                node=index,
                variant=variant,
                source=source,
            )
            for i, (line, col, index, variant, function, operator, before, after) in enumerate(
                found
            )
        ]

    def _variants(
        self, node: ast.AST, site: _Site
    ) -> list[tuple[str, ast.AST, tuple[str, str] | None]]:
        """(operator, replacement node, (before, after) or None) for each mutation of ``node``."""
        out: list[tuple[str, ast.AST]] = []
        described: list[tuple[str, ast.AST, tuple[str, str] | None]] = []
        if isinstance(node, ast.Compare):
            for i, op in enumerate(node.ops):
                for swap in _CMP_SWAPS.get(type(op), ()):
                    new = copy.deepcopy(node)
                    new.ops[i] = swap()
                    out.append(("comparison", new))
        elif isinstance(node, ast.BoolOp):
            new_b = copy.deepcopy(node)
            new_b.op = ast.Or() if isinstance(node.op, ast.And) else ast.And()
            out.append(("boolean operator", new_b))
        elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not | ast.USub):
            out.append(("drop unary operator", copy.deepcopy(node.operand)))
        elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add | ast.Sub):
            new_o = copy.deepcopy(node)
            new_o.op = ast.Sub() if isinstance(node.op, ast.Add) else ast.Add()
            out.append(("arithmetic", new_o))
        elif isinstance(node, ast.AugAssign) and isinstance(node.op, ast.Add | ast.Sub):
            new_a = copy.deepcopy(node)
            new_a.op = ast.Sub() if isinstance(node.op, ast.Add) else ast.Add()
            out.append(("arithmetic", new_a))
        elif isinstance(node, ast.Constant):
            described += self._constant_variants(node, site)
        elif isinstance(node, ast.Slice):
            for bound in ("lower", "upper"):
                value = getattr(node, bound)
                if value is None or isinstance(value, ast.Constant):
                    continue  # constants are mutated as constants
                for arith in (ast.Add(), ast.Sub()):
                    new_s = copy.deepcopy(node)
                    bumped = ast.BinOp(copy.deepcopy(value), arith, ast.Constant(1))
                    setattr(new_s, bound, bumped)
                    out.append(("slice bound", new_s))
        elif isinstance(node, ast.Call):
            name = _call_name(node)
            if name in ("min", "max"):
                new_c = copy.deepcopy(node)
                new_c.func = ast.Name("max" if name == "min" else "min", ast.Load())
                out.append(("min/max", new_c))
            if name.endswith(".sort") or name == "sorted":
                if node.keywords:
                    new_k = copy.deepcopy(node)
                    new_k.keywords = []
                    out.append(("sort key", new_k))
                new_r = copy.deepcopy(node)
                new_r.keywords.append(ast.keyword("reverse", ast.Constant(True)))
                out.append(("sort order", new_r))
            if (
                len(node.args) == 1
                and not node.keywords
                and not isinstance(node.args[0], ast.Starred)
                and name not in _NO_DROP
                and site.function != "<module>"
                and not _is_statement_call(self.tree, node)
            ):
                out.append(("drop call", copy.deepcopy(node.args[0])))
        elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
            out.append(("drop statement", ast.Pass()))
        elif isinstance(node, ast.Continue):
            out.append(("continue/break", ast.Break()))
        elif isinstance(node, ast.Break):
            out.append(("continue/break", ast.Continue()))
        elif (
            isinstance(node, ast.Return)
            and isinstance(node.value, ast.Tuple)
            and len(node.value.elts) == 2
            and site.function.endswith("_rank")
        ):
            new_t = copy.deepcopy(node)
            assert isinstance(new_t.value, ast.Tuple)
            new_t.value.elts.reverse()
            out.append(("sort key order", new_t))
        if isinstance(node, ast.If | ast.While | ast.IfExp) and not isinstance(
            node.test, ast.Compare | ast.UnaryOp
        ):
            new_n = copy.deepcopy(node)
            new_n.test = ast.UnaryOp(ast.Not(), copy.deepcopy(node.test))
            out.append(("negate condition", new_n))
        described += [(op, new, None) for op, new in out]
        return [(op, ast.copy_location(new, node), desc) for op, new, desc in described]

    def _constant_variants(
        self, node: ast.Constant, site: _Site
    ) -> list[tuple[str, ast.AST, tuple[str, str] | None]]:
        value = node.value
        out: list[tuple[str, ast.AST, tuple[str, str] | None]] = []
        if isinstance(value, bool):
            out.append(("constant", ast.Constant(not value), None))
        elif isinstance(value, int):
            for delta in (1, -1):
                if value + delta >= 0 or value < 0:
                    out.append(("constant", ast.Constant(value + delta), None))
        elif isinstance(value, str):
            if site.regex:
                for what, to, pattern in _regex_variants(value):
                    out.append(("regex", ast.Constant(pattern), (what, to)))
            elif value == "":
                out.append(("string", ast.Constant("X"), None))
            else:
                out.append(("string", ast.Constant(""), None))
                swapped = value.swapcase()
                changed = swapped if swapped != value else value + "X"
                out.append(("string", ast.Constant(changed), None))
        return out

    def replacement(self, node: ast.AST, variant: int) -> ast.AST:
        site = self.sites[id(node)]
        return self._variants(node, site)[variant][1]

    def _describe(self, node: ast.AST, site: _Site) -> list[tuple[str, str, str]]:
        before = _source(node)
        return [
            (op, *(desc or (before, _source(new)))) for op, new, desc in self._variants(node, site)
        ]


def _source(node: ast.AST) -> str:
    if isinstance(node, ast.Constant):
        return repr(node.value)
    if isinstance(node, ast.If | ast.While):
        keyword = "if" if isinstance(node, ast.If) else "while"
        return f"{keyword} {ast.unparse(node.test)}:"
    if isinstance(node, ast.Pass):
        return "pass"
    if isinstance(node, ast.Slice):
        lower = ast.unparse(node.lower) if node.lower else ""
        upper = ast.unparse(node.upper) if node.upper else ""
        return f"[{lower}:{upper}]"
    return ast.unparse(node)


def _call_name(node: ast.Call) -> str:
    parts: list[str] = []
    func: ast.AST = node.func
    while isinstance(func, ast.Attribute):
        parts.append(func.attr)
        func = func.value
    if isinstance(func, ast.Name):
        parts.append(func.id)
    else:
        parts.append("?")
    return ".".join(reversed(parts))


def _is_statement_call(tree: ast.AST, call: ast.Call) -> bool:
    return any(isinstance(n, ast.Expr) and n.value is call for n in ast.walk(tree))


def _assigns_skipped(node: ast.Assign | ast.AnnAssign) -> bool:
    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
    return any(isinstance(t, ast.Name) and t.id in _SKIP_NAMES for t in targets)


def _module_file(module: str) -> str:
    spec = importlib.util.find_spec(module)
    if spec is None or spec.origin is None:
        raise ImportError(f"no module {module}")
    return Path(spec.origin).resolve().relative_to(project_root()).as_posix()


def generate_mutants(modules: Sequence[str] = DEFAULT_MUTATION_MODULES) -> list[Mutant]:
    """Every mutant of these modules of the tool logic (not the non-tool functions)."""
    out: list[Mutant] = []
    for module in modules:
        file = _module_file(module)
        path = project_root() / file
        source = path.read_text("utf-8")
        tree = ast.parse(source, filename=str(path))
        out += _Mutator(tree, file).mutants(module, file, len(out) + 1, source)
    counts = Counter((m.file, m.function, m.before, m.after) for m in out)
    seen: Counter[tuple[str, str, str, str]] = Counter()
    numbered = []
    for m in out:
        same = (m.file, m.function, m.before, m.after)
        seen[same] += 1
        numbered.append(dataclasses.replace(m, occurrence=seen[same] if counts[same] > 1 else 0))
    return numbered


@dataclass(frozen=True)
class MutantResult:
    """What the replay did to one mutant."""

    mutant: Mutant
    status: str
    """``killed``, ``timeout`` (counted as killed), ``survived``."""
    detail: str = ""
    """The first failing case, or the error that killed it."""
    seconds: float = 0.0

    @property
    def killed(self) -> bool:
        """Whether the goldens told the mutant apart."""
        return self.status != "survived"


@dataclass
class MutationRun:
    """The results of a mutation run."""

    results: list[MutantResult]
    total_generated: int
    seconds: float

    @property
    def killed(self) -> int:
        """How many mutants the replay killed (time-outs included)."""
        return sum(r.killed for r in self.results)

    @property
    def timeouts(self) -> int:
        """How many mutants were killed by the time-out."""
        return sum(r.status == "timeout" for r in self.results)

    @property
    def survivors(self) -> list[MutantResult]:
        """The mutants the replay did not kill."""
        return [r for r in self.results if not r.killed]

    @property
    def equivalent(self) -> list[MutantResult]:
        """The survivors that EQUIVALENT explains."""
        return [r for r in self.survivors if r.mutant.equivalent]

    @property
    def unexplained(self) -> list[MutantResult]:
        """The survivors that EQUIVALENT does not explain."""
        return [r for r in self.survivors if not r.mutant.equivalent]

    @property
    def score(self) -> float:
        """Killed over run, in percent."""
        return 100.0 * self.killed / len(self.results) if self.results else 100.0

    @property
    def killable_score(self) -> float:
        """Killed over run less the equivalent mutants, in percent."""
        killable = len(self.results) - len(self.equivalent)
        return 100.0 * self.killed / killable if killable else 100.0


class _Worker:
    """A worker interpreter that replays the journal against one mutant at a time."""

    def __init__(self, corpus: str, journal_path: str | None) -> None:
        code = "from parity.strength import _worker_main; _worker_main()"
        self.process = subprocess.Popen(
            [sys.executable, "-c", code],
            cwd=project_root(),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            bufsize=0,
        )
        self._buffer = b""
        self._send({"corpus": corpus, "journal": journal_path or ""})

    def _send(self, message: dict[str, Any]) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps(message).encode() + b"\n")

    def _receive(self, timeout: float) -> dict[str, Any] | None:
        assert self.process.stdout is not None
        fd = self.process.stdout.fileno()
        deadline = time.monotonic() + timeout
        while b"\n" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            ready, _, _ = select.select([fd], [], [], left)
            if not ready:
                return None
            chunk = os.read(fd, 65536)
            if not chunk:
                raise EOFError("the mutation worker died")
            self._buffer += chunk
        line, self._buffer = self._buffer.split(b"\n", 1)
        answer: dict[str, Any] = json.loads(line)
        return answer

    def run(self, mutant: Mutant | None, timeout: float) -> tuple[str, str] | None:
        """(status, detail), or None on a time-out (the worker is then unusable)."""
        if mutant is None:
            payload = {"module": "", "code": ""}
        else:
            raw = marshal.dumps(mutant.code())
            payload = {"module": mutant.module, "code": base64.b64encode(raw).decode()}
        self._send(payload)
        answer = self._receive(timeout)
        if answer is None:
            return None
        return str(answer["status"]), str(answer["detail"])

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()
        for stream in (self.process.stdin, self.process.stdout):
            if stream is not None:
                stream.close()


class _MutantFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Imports one module from a compiled mutant instead of its file."""

    def __init__(self, module: str, code: types.CodeType) -> None:
        self.module = module
        self.code = code

    def find_spec(
        self,
        fullname: str,
        path: Sequence[str] | None,
        target: types.ModuleType | None = None,
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname != self.module:
            return None
        return importlib.util.spec_from_loader(fullname, self, origin=self.code.co_filename)

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType | None:
        return None

    def exec_module(self, module: types.ModuleType) -> None:
        module.__file__ = self.code.co_filename
        exec(self.code, module.__dict__)


_LEAVES = ("recall._go._tables", "recall._go.strings", "recall._go.strconv", "recall._go.json")


def _worker_main() -> None:
    """A mutation worker: one JSON line in per mutant, one JSON line out."""
    out = os.fdopen(os.dup(1), "wb", buffering=0)
    os.dup2(2, 1)  # whatever the replay prints must not mix with the answers
    stdin = sys.stdin.buffer
    setup = json.loads(stdin.readline())
    from parity import journal as journal_mod
    from parity.corpus import get_corpus
    from parity.replay import MODES, Replayer

    corpus = get_corpus(setup["corpus"])
    loaded = journal_mod.load(setup["journal"] or corpus.journal_path)
    for line in stdin:
        request = json.loads(line)
        module = request["module"]
        status, detail = "survived", ""
        finder = None
        _purge("recall", keep=[leaf for leaf in _LEAVES if leaf != module])
        if module:
            code = marshal.loads(base64.b64decode(request["code"]))
            finder = _MutantFinder(module, code)
            sys.meta_path.insert(0, finder)
        try:
            with Replayer(loaded, corpus) as replayer:
                # case by case, both modes each, as replay() runs them; the first failure kills
                for call in loaded.calls:
                    if not replayer.run_case(call, modes=MODES).passed:
                        status, detail = "killed", call.case
                        break
        except Exception as e:
            status, detail = "killed", f"{type(e).__name__}: {_short(str(e), 120)}"
        finally:
            if finder is not None:
                sys.meta_path.remove(finder)
            _purge("recall", keep=[leaf for leaf in _LEAVES if leaf != module])
        out.write(json.dumps({"status": status, "detail": detail}).encode() + b"\n")


def run_mutants(
    mutants: Sequence[Mutant],
    *,
    corpus: str = "recall",
    journal_path: str | None = None,
    jobs: int = 2,
    timeout: float = 20.0,
    progress: Callable[[MutantResult], None] | None = None,
) -> MutationRun:
    """Replay the journal against each mutant, in ``jobs`` worker interpreters.

    The unmutated code is replayed first in each worker: it must pass, else the
    run stops with ReplayError (a mutant is only killed by what it changed).
    """
    from parity.errors import ReplayError

    started = time.monotonic()
    queue = list(reversed(mutants))
    lock = threading.Lock()
    results: dict[int, MutantResult] = {}
    errors: list[BaseException] = []

    def take() -> Mutant | None:
        with lock:
            return queue.pop() if queue and not errors else None

    def work() -> None:
        worker: _Worker | None = None
        try:
            worker = _Worker(corpus, journal_path)
            baseline = worker.run(None, timeout=max(timeout, 120.0))
            if baseline != ("survived", ""):
                raise ReplayError(f"the replay fails without any mutant: {baseline}")
            while (mutant := take()) is not None:
                t0 = time.monotonic()
                answer = worker.run(mutant, timeout)
                if answer is None:
                    worker.stop()
                    worker = _Worker(corpus, journal_path)
                    result = MutantResult(mutant, "timeout", f"more than {timeout:g}s", timeout)
                else:
                    result = MutantResult(mutant, *answer, time.monotonic() - t0)
                with lock:
                    results[mutant.id] = result
                if progress is not None:
                    progress(result)
        except BaseException as e:
            with lock:
                errors.append(e)
        finally:
            if worker is not None:
                worker.stop()

    threads = [threading.Thread(target=work, daemon=True) for _ in range(max(1, jobs))]
    for t in threads:
        t.start()
    try:
        for t in threads:
            t.join()
    except KeyboardInterrupt:
        with lock:
            queue.clear()
        for t in threads:
            t.join()
        raise
    if errors:
        err = errors[0]
        if isinstance(err, ReplayError):
            raise err
        raise ReplayError(f"the mutation run failed: {type(err).__name__}: {err}") from err
    ordered = [results[m.id] for m in mutants if m.id in results]
    return MutationRun(ordered, len(mutants), time.monotonic() - started)


def select_mutants(mutants: Sequence[Mutant], limit: int | None) -> list[Mutant]:
    """At most ``limit`` mutants, evenly spread over the list (all when ``limit`` is None)."""
    if limit is None or limit >= len(mutants):
        return list(mutants)
    if limit <= 0:
        return []
    step = len(mutants) / limit
    return [mutants[int(i * step)] for i in range(limit)]


# --- the report -------------------------------------------------------------------------


def _pct(n: int, d: int) -> str:
    return f"{100.0 * n / d:.1f}%" if d else "100.0%"


def _print_go(cov: GoCoverage, out: TextIO) -> None:
    reached, total = cov.statements(GO_TOOL_PACKAGE)
    unreached = cov.unreached()
    explained = [b for b in unreached if b.reason]
    print(
        f"1. Go coverage of the tool logic ({GO_TOOL_PACKAGE}), recording {cov.calls} calls "
        "into a Go reference built with -cover",
        file=out,
    )
    print(
        f"   {_pct(reached, total)} of statements ({reached}/{total}); "
        f"{cov.reachable_percent():.1f}% of the reachable "
        f"({len(explained)} unreached block(s) explained, "
        f"{len(unreached) - len(explained)} unexplained)",
        file=out,
    )
    for b in unreached:
        why = f"unreachable: {b.reason}" if b.reason else "UNEXPLAINED: add a corpus case"
        print(f"   - {b.where} {b.function}: {b.code}", file=out)
        print(f"       {why}", file=out)
    others = [p for p in cov.packages() if p != GO_TOOL_PACKAGE]
    if others:
        info = ", ".join(f"{p} {cov.percent(p):.1f}%" for p in others)
        print(f"   for information: {info}", file=out)
    for line in cov.drift:
        print(f"   NOTE the committed journal differs from this recording: {line}", file=out)


def _print_python(cov: PyCoverage, out: TextIO) -> None:
    t = cov.tool_logic()
    print(
        f"2. Python coverage of recall/ under replay ({cov.passed} passed, {cov.failed} failed; "
        "archive and fallback passes)",
        file=out,
    )
    print(
        f"   tool logic ({', '.join(PY_TOOL_LOGIC)}): "
        f"lines {_pct(t['covered_lines'], t['statements'])} "
        f"({t['covered_lines']}/{t['statements']}), "
        f"branches {_pct(t['covered_branches'], t['branches'])} "
        f"({t['covered_branches']}/{t['branches']})",
        file=out,
    )
    gaps = cov.gaps(PY_TOOL_LOGIC)
    tool_gaps = [g for g in gaps if g.tool_logic]
    unexplained = [g for g in tool_gaps if g.reason is None]
    print(
        f"   {cov.reachable_percent():.1f}% of the reachable lines and branches; unreached: "
        f"{len(tool_gaps)} ({len(tool_gaps) - len(unexplained)} explained, "
        f"{len(unexplained)} unexplained)",
        file=out,
    )
    for g in tool_gaps:
        why = f"unreachable: {g.reason}" if g.reason else "UNEXPLAINED: add a corpus case"
        print(f"   - {g.where} {g.function}: {_short(g.code)}", file=out)
        print(f"       {why}", file=out)
    skipped = sorted({(g.file, g.function, g.reason) for g in gaps if not g.tool_logic})
    if skipped:
        print("   not tool logic (unreached, left out of the figure):", file=out)
        for file, function, reason in skipped:
            print(f"   - {file} {function}: {reason}", file=out)
    s = cov.summary()
    print(
        f"   for information, all of recall/: lines {_pct(s['covered_lines'], s['statements'])}, "
        f"branches {_pct(s['covered_branches'], s['branches'])}; by file:",
        file=out,
    )
    for file in cov.files():
        if file in PY_TOOL_LOGIC:
            continue
        f = cov.summary([file])
        missing = sorted(
            {g.line for g in cov.gaps([file]) if g.target is None}
            | {g.line for g in cov.gaps([file]) if g.target is not None}
        )
        print(
            f"     {file}: lines {_pct(f['covered_lines'], f['statements'])}, "
            f"branches {_pct(f['covered_branches'], f['branches'])}"
            + (f"; unreached lines/branches at {_ranges(missing)}" if missing else ""),
            file=out,
        )


def _ranges(lines: Sequence[int]) -> str:
    parts: list[str] = []
    start = prev = None
    for n in lines:
        if start is None:
            start = prev = n
        elif prev is not None and n == prev + 1:
            prev = n
        else:
            parts.append(f"{start}" if start == prev else f"{start}-{prev}")
            start = prev = n
    if start is not None:
        parts.append(f"{start}" if start == prev else f"{start}-{prev}")
    return ", ".join(parts)


def _print_mutation(
    run: MutationRun, modules: Sequence[str], out: TextIO, py: PyCoverage | None
) -> None:
    n = len(run.results)
    sampled = "" if n == run.total_generated else f" (a spread of {n} of {run.total_generated})"
    print(
        f"3. Mutation score: {n} mutants{sampled} of {', '.join(modules)}, "
        f"each replayed in full ({run.seconds:.0f}s)",
        file=out,
    )
    print(
        f"   killed {run.killed}/{n} = {run.score:.1f}% "
        f"({run.timeouts} by time-out); survived {len(run.survivors)}: "
        f"{len(run.equivalent)} explained, {len(run.unexplained)} unexplained; "
        f"score over the killable: {run.killable_score:.1f}%",
        file=out,
    )
    groups: dict[str, list[Mutant]] = {}
    for r in run.unexplained:
        groups.setdefault("UNEXPLAINED: add a corpus case, or explain it in EQUIVALENT", [])
        groups["UNEXPLAINED: add a corpus case, or explain it in EQUIVALENT"].append(r.mutant)
    for r in run.equivalent:
        m = r.mutant
        groups.setdefault(f"equivalent: {EQUIVALENT[m.key]}", []).append(m)
    for why, members in groups.items():
        print(f"   {why}", file=out)
        for m in members:
            reached = ""
            if py is not None and m.line not in py.executed_lines(m.file):
                reached = " [line not reached by any golden]"
            print(f"     - {m.where} {m.function} ({m.operator}): {m.change}{reached}", file=out)


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="parity strength",
        description="How strong are the goldens: Go coverage of the tool logic while "
        "recording, Python coverage of recall/ under replay, and a mutation score.",
    )
    p.add_argument("--corpus", default="recall", help="the corpus (default: recall)")
    p.add_argument("--journal", metavar="PATH", help="the journal (default: golden/<corpus>.json)")
    p.add_argument("--no-go", dest="go", action="store_false", help="skip the Go coverage")
    p.add_argument(
        "--no-python", dest="python", action="store_false", help="skip the Python coverage"
    )
    p.add_argument(
        "--no-mutants", dest="mutants", action="store_false", help="skip the mutation run"
    )
    p.add_argument(
        "--module",
        action="append",
        metavar="MODULE",
        help="mutate this module (repeatable; default: " + ", ".join(DEFAULT_MUTATION_MODULES),
    )
    p.add_argument("--max-mutants", type=int, metavar="N", help="at most N mutants, spread out")
    p.add_argument("--timeout", type=float, default=20.0, help="seconds per mutant (default 20)")
    p.add_argument("--jobs", type=int, default=min(2, os.cpu_count() or 1), help="worker processes")
    p.add_argument("--list-mutants", action="store_true", help="list the mutants and stop")
    p.add_argument("--json", metavar="PATH", help="also write the figures as JSON")
    p.add_argument("-v", "--verbose", action="store_true", help="print each mutant's result")
    for what in ("go", "python", "mutation"):
        p.add_argument(
            f"--fail-under-{what}",
            type=float,
            metavar="PCT",
            help=f"exit 1 when the {what} figure is under PCT (of the reachable/killable)",
        )
    return p


def cli_main(argv: list[str]) -> int:
    """``parity strength``: print the three figures; 0 unless a --fail-under gate is missed."""
    from parity.errors import ParityError

    args = _parser().parse_args(argv)
    out = sys.stdout
    try:
        return _main(args, out)
    except ParityError as e:
        out.flush()
        print(f"parity strength: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


def _main(args: argparse.Namespace, out: TextIO) -> int:
    modules = tuple(args.module or DEFAULT_MUTATION_MODULES)
    if args.list_mutants:
        for m in generate_mutants(modules):
            print(f"{m.id:4d} {m.where} {m.function} ({m.operator}): {m.change}", file=out)
        return 0
    figures: dict[str, Any] = {"corpus": args.corpus}
    failed: list[str] = []
    print(f"strength of the goldens of corpus {args.corpus!r}", file=out)
    if args.go:
        go = go_coverage(args.corpus, journal_path=args.journal)
        _print_go(go, out)
        reached, total = go.statements(GO_TOOL_PACKAGE)
        figures["go"] = {
            "package": GO_TOOL_PACKAGE,
            "statements": total,
            "reached": reached,
            "percent": round(go.percent(GO_TOOL_PACKAGE), 2),
            "reachable_percent": round(go.reachable_percent(), 2),
            "unreached": [asdict(b) | {"reason": b.reason} for b in go.unreached()],
            "packages": {p: round(go.percent(p), 2) for p in go.packages()},
        }
        if args.fail_under_go is not None and go.reachable_percent() < args.fail_under_go:
            failed.append(f"go {go.reachable_percent():.1f}% < {args.fail_under_go}%")
        out.flush()
    py: PyCoverage | None = None
    if args.python:
        py = python_coverage(args.corpus, journal_path=args.journal)
        _print_python(py, out)
        t = py.tool_logic()
        unexplained = [g for g in py.gaps(PY_TOOL_LOGIC) if g.tool_logic and g.reason is None]
        reachable_pct = py.reachable_percent()
        figures["python"] = {
            "tool_logic": t,
            "reachable_percent": round(reachable_pct, 2),
            "gaps": [asdict(g) for g in py.gaps()],
            "all": py.summary(),
        }
        if args.fail_under_python is not None and (
            reachable_pct < args.fail_under_python or unexplained
        ):
            failed.append(f"python {reachable_pct:.1f}% < {args.fail_under_python}%")
        out.flush()
    if args.mutants:
        mutants = select_mutants(generate_mutants(modules), args.max_mutants)
        progress = None
        if args.verbose:

            def progress(r: MutantResult) -> None:
                m = r.mutant
                print(f"   {r.status:8s} {m.where} ({m.operator}) {m.change}", file=out)
                out.flush()

        run = run_mutants(
            mutants,
            corpus=args.corpus,
            journal_path=args.journal,
            jobs=args.jobs,
            timeout=args.timeout,
            progress=progress,
        )
        run.total_generated = len(generate_mutants(modules))
        _print_mutation(run, modules, out, py)
        figures["mutation"] = {
            "modules": list(modules),
            "run": len(run.results),
            "generated": run.total_generated,
            "killed": run.killed,
            "timeouts": run.timeouts,
            "equivalent": len(run.equivalent),
            "unexplained": len(run.unexplained),
            "score": round(run.score, 2),
            "killable_score": round(run.killable_score, 2),
            "survivors": [
                {
                    "where": r.mutant.where,
                    "function": r.mutant.function,
                    "operator": r.mutant.operator,
                    "before": r.mutant.before,
                    "after": r.mutant.after,
                    "equivalent": r.mutant.equivalent,
                }
                for r in run.survivors
            ],
        }
        if args.fail_under_mutation is not None and run.killable_score < args.fail_under_mutation:
            failed.append(f"mutation {run.killable_score:.1f}% < {args.fail_under_mutation}%")
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=2, ensure_ascii=False) + "\n")
    if failed:
        print("under the gate: " + "; ".join(failed), file=out)
        return 1
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(cli_main(sys.argv[1:]))
