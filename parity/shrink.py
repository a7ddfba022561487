"""Shrinking a divergence before it is adopted, by delta debugging (:func:`ddmin`): the
fewest blocks, lines, words and characters, then filler (``x``), as long as it diverges
as the replay will see it (:class:`GoOracle`)."""

from __future__ import annotations

import functools
import itertools
import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import TypeVar

from parity.corpus import CorpusBlock, CorpusCall, split_template
from parity.errors import CorpusError, GoClientError, ParityError
from parity.goclient import GoClient, GoConnection
from parity.record import FIRST_SEQ
from recall import GoTurnHost, RecallError

FILLER = "x"
"""What replaces a character that the divergence needs to be there, but not as it was."""

MAX_TRIES = 5000
"""The candidates one shrink tries at most; past that, the smallest found so far is kept."""

T = TypeVar("T")


@dataclass(frozen=True)
class Case:
    """A call over its blocks: ``args`` may cite block ``i`` as ``{{seq:bI}}``."""

    tool: str
    args: str
    blocks: tuple[tuple[str, str], ...]  # (label, content), in archive order

    def size(self) -> int:
        """The characters of users' text the case holds (labels, contents and query)."""
        texts = sum(len(label) + len(content) for label, content in self.blocks)
        return texts + len(query_of(self.args) or "")


def query_of(args: str) -> str | None:
    """A search's query, when the args are a JSON object with a string ``query``."""
    try:
        doc = json.loads(args)
    except ValueError:
        return None
    query = doc.get("query") if isinstance(doc, dict) else None
    return query if isinstance(query, str) else None


def _with_query(args: str, query: str) -> str:
    return json.dumps({**json.loads(args), "query": query}, ensure_ascii=False)


class GoOracle:
    """Whether a case diverges: the port (a ``GoTurnHost``) and a Go, over the corpus's
    blocks then the case's. The Go must have the debug routes (``/debug/reset``,
    ``/debug/archive``), as the reference and a fresh instance of it have."""

    def __init__(self, connection: GoConnection, corpus_blocks: Sequence[CorpusBlock]) -> None:
        self.connection = connection
        self._go = GoClient(connection)
        self._host = GoTurnHost(
            connection.base_url,
            token=connection.token,
            verify=connection.ssl_context,
            cache_bytes=0,
        )
        self._corpus = [(b.label, b.content, b.locked) for b in corpus_blocks]

    def __enter__(self) -> GoOracle:
        try:
            self._go.reset(first_seq=FIRST_SEQ)
        except GoClientError as exc:
            if exc.status != 404:
                raise
            self.__exit__()
            raise ParityError(
                f"the Go at {self.connection.url} has no debug routes (/debug/reset answered"
                " 404): shrinking empties and fills the Go for each try, so it needs a fresh"
                " instance that has them (a staging copy), or the reference (no --go-url)"
            ) from exc
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._host.close()
        self._go.close()

    def outputs(self, case: Case) -> tuple[str, str] | None:
        """(the port's output, Go's) for ``case``; None when the case cannot be played
        (its args cite a block it no longer has) or the port's read failed."""
        self._go.reset(first_seq=FIRST_SEQ)
        seqs = self._go.archive_many(
            [*self._corpus, *((label, content, False) for label, content in case.blocks)]
        )[len(self._corpus) :]
        names = {f"b{i}": seq for i, seq in enumerate(seqs)}
        try:
            args = CorpusCall("", case.tool, case.args).resolve(names)
        except CorpusError:
            return None
        go = self._go.exec_tool(case.tool, args)
        try:
            port = self._host.exec_tool(case.tool, args)
        except RecallError:
            return None
        except Exception as exc:  # the port's defect: a divergence of its own
            port = f"the port raised {type(exc).__name__}"
        return port, go

    def diverges(self, case: Case) -> bool:
        """Whether the port's output and Go's differ for ``case``."""
        both = self.outputs(case)
        return both is not None and both[0] != both[1]


@dataclass(frozen=True)
class Shrunk:
    """A shrink's result: the case, what it started from, the candidates tried."""

    case: Case
    original: Case
    tries: int

    def summary(self) -> str:
        """What was shrunk and how much is left, in one line."""
        before, after = self.original, self.case
        query = ""
        if (q := query_of(before.args)) is not None:
            query = f", query {len(q)} -> {len(query_of(after.args) or '')} characters"
        return (
            f"shrunk: blocks {len(before.blocks)} -> {len(after.blocks)}, characters"
            f" {before.size()} -> {after.size()}{query} ({self.tries} tries)"
        )


def shrink(case: Case, diverges: Callable[[Case], bool], *, max_tries: int = MAX_TRIES) -> Shrunk:
    """The smallest case found that still ``diverges`` (``case`` must diverge)."""
    tried: dict[Case, bool] = {}

    def test(candidate: Case) -> bool:
        if candidate not in tried:
            if len(tried) >= max_tries:
                return False
            tried[candidate] = diverges(candidate)
        return tried[candidate]

    current = case
    for _ in range(4):  # to a fixed point: a smaller text may let a block go, and back
        before = current
        for step in (_fewer_blocks, _smaller_query, _smaller_texts, _filled):
            current = step(current, test)
        if current == before:
            break
    return Shrunk(current, case, len(tried))


def ddmin(items: list[T], test: Callable[[list[T]], bool]) -> list[T]:
    """``items`` with chunks removed while ``test`` holds, down to single items (the
    complement-removal form of delta debugging: the result is 1-minimal)."""
    n = 2
    while items:
        size = max(1, len(items) // n)
        for start in range(0, len(items), size):
            candidate = items[:start] + items[start + size :]
            if test(candidate):
                items, n = candidate, max(n - 1, 2)
                break
        else:
            if size == 1:
                return items
            n = min(2 * n, len(items))
    return items


_UNITS = (
    re.compile(r"[^\n]*\n|[^\n]+"),  # lines
    re.compile(r"\s+|\S+"),  # words and the space between them
    re.compile(r".", re.DOTALL),  # characters
)
_WORD = re.compile(r"\w+")
_UNFILLED = re.compile(rf"[^\s{re.escape(FILLER)}]")


def _fewer_blocks(case: Case, test: Callable[[Case], bool]) -> Case:
    if split_template(case.args)[1::2]:  # a recall case: the block it cites stays
        return case
    kept = ddmin(list(case.blocks), lambda blocks: test(replace(case, blocks=tuple(blocks))))
    return replace(case, blocks=tuple(kept))


def _smaller_text(text: str, test: Callable[[str], bool]) -> str:
    for unit in _UNITS:
        text = "".join(ddmin(unit.findall(text), lambda parts: test("".join(parts))))
    return text


def _smaller_query(case: Case, test: Callable[[Case], bool]) -> Case:
    query = query_of(case.args)
    if query is None or not test(replace(case, args=_with_query(case.args, query))):
        return case  # the args' own form may matter: left as they are
    query = _smaller_text(query, lambda q: test(replace(case, args=_with_query(case.args, q))))
    return replace(case, args=_with_query(case.args, query))


def _set(case: Case, i: int, field: int, text: str) -> Case:
    """``case`` with the label (``field`` 0) or content (1) of block ``i`` set to ``text``."""
    label, content = case.blocks[i]
    block = (text, content) if field == 0 else (label, text)
    return replace(case, blocks=(*case.blocks[:i], block, *case.blocks[i + 1 :]))


def _smaller_texts(case: Case, test: Callable[[Case], bool]) -> Case:
    for i, field in itertools.product(range(len(case.blocks)), (0, 1)):
        holds = functools.partial(lambda c, i, f, t: test(_set(c, i, f, t)), case, i, field)
        case = _set(case, i, field, _smaller_text(case.blocks[i][field], holds))
    return case


def _filled(case: Case, test: Callable[[Case], bool]) -> Case:
    """Each word, then each character, that can be is replaced by filler."""
    for pattern, i, field in itertools.product((_WORD, _UNFILLED), range(len(case.blocks)), (0, 1)):
        for match in reversed(list(pattern.finditer(case.blocks[i][field]))):
            text = case.blocks[i][field]
            filled = text[: match.start()] + FILLER * len(match[0]) + text[match.end() :]
            if filled != text and test(candidate := _set(case, i, field, filled)):
                case = candidate
    return case
