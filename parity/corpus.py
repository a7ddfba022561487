"""Corpora: a tool set's named blocks and calls (args cite a block as ``{{seq:NAME}}``),
how to build its Python implementation, and where its outputs print seqs. Another tool
moved from Go adds a module under ``parity/corpora/`` and a line in ``CORPORA``."""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from parity.errors import CorpusError
from parity.journal import CASE_RE
from parity.project import project_root


def golden_dir() -> Path:
    """Where the committed journals live, one ``<corpus>.json`` per corpus."""
    return project_root() / "golden"


CORPORA: Mapping[str, str] = {"recall": "parity.corpora.recall"}
"""Corpus name to the module that defines it (as ``CORPUS``), imported on demand."""

_SEQ_RE = re.compile(r"\{\{seq:([^{}]*)\}\}")


def split_template(text: str) -> list[str]:
    """``text``'s pieces around each ``{{seq:NAME}}``: text, name, text, ..., text."""
    return _SEQ_RE.split(text)


class ToolHost(Protocol):
    """The Python implementation under test, as the replay drives it."""

    def exec_tool(self, name: str, args: str) -> str:
        """The tool's output for these raw args."""


@dataclass(frozen=True)
class SeqSite:
    """Where a tool's output prints a seq: the span of its decimal digits."""

    start: int
    end: int
    name: str | None = None
    """The block name when the digits quote back an args ``{{seq:NAME}}``; None for a
    block's own seq (a header), which maps through the recording's seqs by value."""


class PrintedSeqs(Protocol):
    """Where an output prints seqs; ``template``: the call's args template, when the recorded
    args are it resolved with ``seqs``; ``labels`` by seq. Found from the output's
    structure, never by searching digits (a content may hold ``r7`` citing no block)."""

    def __call__(
        self,
        tool: str,
        output: str,
        *,
        template: str | None,
        seqs: Mapping[str, int],
        labels: Mapping[int, str],
    ) -> Sequence[SeqSite]:
        """The sites, in order; none when the output prints no seq, or is not understood."""


@dataclass(frozen=True)
class CorpusBlock:
    """A block to archive, known to the calls by ``name``."""

    name: str
    label: str
    content: str
    locked: bool = False

    def source(self) -> str:
        locked = ", locked=True" if self.locked else ""
        return f"CorpusBlock({self.name!r}, {self.label!r}, {self.content!r}{locked})"


@dataclass(frozen=True)
class CorpusCall:
    """A tool call; ``args`` is raw text where ``{{seq:NAME}}`` stands for a block's seq."""

    case: str
    tool: str
    args: str
    literal_seqs: tuple[int, ...] = ()
    """Seqs the args cite as plain digits (``r1``) and the tool reads: the case means
    the same in two recordings only where each is the same block, or no block, in both."""
    note: str = ""
    """Where the case came from (an adopted case: what was shrunk, how much is left)."""

    def source(self) -> str:
        """This call as Python source, for a corpus module."""
        literal = f", {self.literal_seqs!r}" if self.literal_seqs else ""
        note = f", note={self.note!r}" if self.note else ""
        return f"CorpusCall({self.case!r}, {self.tool!r}, {self.args!r}{literal}{note})"

    def block_names(self) -> list[str]:
        return _SEQ_RE.findall(self.args)

    def resolve(self, seqs: Mapping[str, int]) -> str:
        """The args text with every ``{{seq:NAME}}`` replaced by that block's seq."""

        def seq(match: re.Match[str]) -> str:
            name = match.group(1)
            if name not in seqs:
                raise CorpusError(f"case {self.case!r}: args cite an unknown block {name!r}")
            return str(seqs[name])

        return _SEQ_RE.sub(seq, self.args)


@dataclass(frozen=True, kw_only=True)
class Corpus:
    """A tool set's inputs, and how to build its Python implementation."""

    name: str
    blocks: tuple[CorpusBlock, ...]
    calls: tuple[CorpusCall, ...]
    host: Callable[..., ToolHost] = field(repr=False)
    """``host(base_url, timeout=..., unicode_version=...)``: the implementation under test,
    talking to that Go (whose ``unicode.Version`` that is, when given)."""
    tools: frozenset[str] = frozenset()
    """The tool names the Python side runs itself (any other goes to Go)."""
    printed_seqs: PrintedSeqs | None = field(default=None, repr=False)
    """Where its tools' outputs print seqs; None: they print none."""

    def __post_init__(self) -> None:
        names, cases = [b.name for b in self.blocks], [c.case for c in self.calls]
        problems = [f"two blocks are named {n!r}" for n in names if names.count(n) > 1]
        problems += [f"case {c!r} is not kebab-case" for c in cases if not CASE_RE.match(c)]
        problems += [f"two calls are named {c!r}" for c in cases if cases.count(c) > 1]
        problems += [
            f"case {c.case!r} cites an unknown block {cited!r}"
            for c in self.calls
            for cited in c.block_names()
            if cited not in names
        ]
        if problems:
            raise CorpusError(f"corpus {self.name!r}: {problems[0]}")

    @property
    def journal_path(self) -> Path:
        return golden_dir() / f"{self.name}.json"

    @property
    def cases(self) -> tuple[str, ...]:
        return tuple(c.case for c in self.calls)

    def call(self, case: str) -> CorpusCall:
        """The call named ``case`` (``KeyError`` when there is none)."""
        return {c.case: c for c in self.calls}[case]


def get_corpus(name: str) -> Corpus:
    """The corpus registered under ``name``."""
    if name not in CORPORA:
        raise CorpusError(f"no corpus named {name!r} (known: {', '.join(sorted(CORPORA))})")
    module = importlib.import_module(CORPORA[name])
    corpus = getattr(module, "CORPUS", None)
    if not isinstance(corpus, Corpus):
        raise CorpusError(f"{CORPORA[name]} defines no CORPUS")
    return corpus
