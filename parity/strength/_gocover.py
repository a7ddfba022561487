"""Go coverage of the tool logic while the recorder plays the corpus into Go.

The reference is built with ``-cover`` and started with ``GOCOVERDIR``; the recorder
plays the corpus into it as ``make golden`` does; SIGTERM makes it write its counters
and ``go tool covdata textfmt`` turns them into a profile.
"""

from __future__ import annotations

import re
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from parity.strength._explain import Problem, load_explanations

__all__ = ["GO_TOOL_PACKAGE", "GoBlock", "GoCoverage", "go_coverage", "parse_go_profile"]

GO_TOOL_PACKAGE = "recallref/recall"
"""The Go package holding the tool logic."""


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
        """Why no recorded call can reach it, when ``explanations.toml`` says."""
        return load_explanations().go_reason(self.function, self.code)


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
        """The unreached blocks of the package that no explanation names."""
        return [b for b in self.unreached(package) if b.reason is None]

    def problems(self, package: str = GO_TOOL_PACKAGE) -> list[Problem]:
        """Go explanations that name no unreached block of the package."""
        unreached = {(b.function, b.code) for b in self.unreached(package)}
        return [
            Problem(rule.label, "orphaned", f"no unreached block is `{rule.code}`")
            for rule in load_explanations().go_unreachable
            if (rule.function, rule.code) not in unreached
        ]

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
