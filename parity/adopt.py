"""``parity adopt FILE.jsonl``: the shadow's divergences as recall corpus cases, shrunk
(``parity.shrink``) against the port and a Go, as the README's "Turning a divergence into
a golden" says. A case cites its blocks as ``{{seq:NAME}}``: corpus blocks of the same
label and content where that keeps their order, the others added after every block.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import os
import runpy
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from parity.corpora import recall_adopted
from parity.corpora.recall import plain_id_seq, symbolic_args
from parity.corpus import CorpusBlock, CorpusCall, get_corpus
from parity.errors import CorpusError, ParityError
from parity.goclient import add_go_options, connection_from_options
from parity.journal import write_atomically
from parity.shrink import Case, GoOracle, shrink
from recall import Block, Divergence
from recall._tools import BlocksRead, score, start_tool

DEFAULT_MODULE = Path(recall_adopted.__file__)


def load_divergences(path: str | os.PathLike[str]) -> list[Divergence]:
    """The divergences of a ``to_json()`` file, one a line (blank lines skipped)."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ParityError(f"{path}: cannot read: {exc}") from exc
    divergences = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            divergences.append(Divergence.from_json(line))
        except ValueError as exc:
            last = number == len(text.splitlines()) and not text.endswith("\n")
            hint = " (the last line, without its newline: cut short?)" if last else ""
            raise ParityError(f"{path}:{number}: not a divergence{hint}: {exc}") from exc
    return divergences


@dataclass
class Adoption:
    """What adopting gives: the new blocks and calls, what was already there, notes."""

    blocks: list[CorpusBlock] = field(default_factory=list)
    calls: list[CorpusCall] = field(default_factory=list)
    present: list[str] = field(default_factory=list)
    """The cases already in the corpus, for divergences seen again."""
    notes: list[str] = field(default_factory=list)

    def source(self) -> str:
        """The new blocks and calls as Python source, with the notes, ready to paste."""
        lines = [f"# {len(self.calls)} new cases ({len(self.present)} already in the corpus)"]
        if self.blocks:
            lines.append("# blocks (add to BLOCKS, after the others):")
            lines += [block.source() + "," for block in self.blocks]
        if self.calls:
            lines.append("# calls (add to CALLS):")
            lines += [call.source() + "," for call in self.calls]
        lines += [f"# {note}" for note in self.notes]
        return "\n".join(lines)


def adopt(
    divergences: Iterable[Divergence],
    blocks: Sequence[CorpusBlock],
    calls: Sequence[CorpusCall],
    *,
    notes: Sequence[str] = (),
) -> Adoption:
    """The cases for ``divergences``, against a corpus of these ``blocks`` and ``calls``;
    ``notes[i]``, when given, is the ``note`` of divergence ``i``'s case."""
    index = {(b.label, b.content): i for i, b in reversed(list(enumerate(blocks))) if not b.locked}
    known = {(c.tool, c.args): c.case for c in calls}
    adoption = Adoption()
    new_blocks: dict[tuple[int, str, str], CorpusBlock] = {}
    for number, d in enumerate(divergences):
        names: dict[int, str] = {}
        last, fresh = -1, False
        for block in d.blocks:
            at = index.get((block.label, block.content))
            if at is not None and not fresh and at > last:
                names[block.seq], last = blocks[at].name, at
                continue
            fresh = True
            key = (block.seq, block.label, block.content)
            if key not in new_blocks:
                new_blocks[key] = CorpusBlock(_block_name(block), block.label, block.content)
            names[block.seq] = new_blocks[key].name
        args = symbolic_args(d.name, d.args, names)
        if (d.name, args) in known:
            adoption.present.append(known[(d.name, args)])
            continue
        note = notes[number] if number < len(notes) else ""
        call = CorpusCall(_case_name(d, args), d.name, args, _literal_seqs(d, names), note)
        known[(d.name, args)] = call.case
        adoption.calls.append(call)
        adoption.notes += _notes(d, call, names, blocks)
    adoption.blocks = [new_blocks[key] for key in sorted(new_blocks)]
    adoption.notes += _changed_cases(adoption.blocks, calls)
    return adoption


def _block_name(block: Block) -> str:
    digest = hashlib.sha256(f"{block.label}\0{block.content}".encode("utf-8", "replace"))
    return f"shadow-r{block.seq}-{digest.hexdigest()[:6]}"


def _case_name(d: Divergence, args: str) -> str:
    text = repr((d.name, args, [(b.label, b.content) for b in d.blocks]))
    digest = hashlib.sha256(text.encode("utf-8", "replace")).hexdigest()[:8]
    return f"shadow-{d.name.replace('_', '-')}-{digest}"


def _literal_seqs(d: Divergence, names: dict[int, str]) -> tuple[int, ...]:
    """A recall id that cites a seq the port read no block for: a literal seq."""
    seq = plain_id_seq(d.args) if d.name == "recall" else None
    return (seq,) if seq is not None and seq not in names else ()


def _notes(
    d: Divergence, call: CorpusCall, names: dict[int, str], blocks: Sequence[CorpusBlock]
) -> list[str]:
    notes = []
    if not d.complete:
        notes.append(
            f"{call.case}: the host kept only some of the blocks that mattered (bounded):"
            " the case may not diverge again"
        )
    if call.literal_seqs:
        notes.append(
            f"{call.case}: the id cites seq {call.literal_seqs[0]}, which the port read"
            " absent: kept as a literal seq (check that the corpus's Go has no such block)"
        )
    elif d.name == "recall" and "{{seq:" not in call.args and d.blocks:
        notes.append(
            f"{call.case}: the id cites seq {d.blocks[0].seq} in escaped digits: write the"
            f" corpus's seq of {names[d.blocks[0].seq]} in their place"
        )
    others = [b.name for b in _matched(d.name, d.args, blocks) if b.name not in names.values()]
    if others:
        notes.append(
            f"{call.case}: the query also matches {len(others)} corpus blocks"
            f" ({_first(others, 5)}): Go's recorded output will count them too"
        )
    return notes


def _matched(tool: str, args: str, blocks: Sequence[CorpusBlock]) -> list[CorpusBlock]:
    """The unlocked ``blocks`` a search with these args scores (none for another call)."""
    step = start_tool(tool, args)
    if not isinstance(step, BlocksRead):
        return []
    return [b for b in blocks if not b.locked and score(Block(1, b.label, b.content), step.terms)]


def _first(names: Sequence[str], count: int) -> str:
    return ", ".join(names[:count]) + (", ..." if len(names) > count else "")


def _changed_cases(new: Sequence[CorpusBlock], calls: Sequence[CorpusCall]) -> list[str]:
    """The existing search cases that the new blocks give new outputs."""
    changed = [
        c.case
        for c in calls
        if c.tool == "recall_search" and "{{seq:" not in c.args and _matched(c.tool, c.args, new)
    ]
    if not changed:
        return []
    return [
        f"the new blocks also match the queries of {len(changed)} existing cases"
        f" ({_first(changed, 8)}): their recorded outputs change too (`parity review` shows them)"
    ]


def module_source(blocks: Sequence[CorpusBlock], calls: Sequence[CorpusCall]) -> str:
    """The adopted module holding these blocks and calls."""
    head = (recall_adopted.__doc__ or "").strip()

    def entries(items: Sequence[CorpusBlock] | Sequence[CorpusCall]) -> str:
        return "(\n" + "".join(f"    {item.source()},\n" for item in items) + ")" if items else "()"

    return (
        f'"""{head}\n"""\n\n'
        "from __future__ import annotations\n\n"
        "from parity.corpus import CorpusBlock, CorpusCall\n\n"
        f"BLOCKS: tuple[CorpusBlock, ...] = {entries(blocks)}\n\n"
        f"CALLS: tuple[CorpusCall, ...] = {entries(calls)}\n"
    )


def _load_module(path: Path) -> tuple[tuple[CorpusBlock, ...], tuple[CorpusCall, ...]]:
    """The blocks and calls an adopted module holds."""
    try:
        module = runpy.run_path(str(path))
    except (OSError, SyntaxError, NameError) as exc:
        raise ParityError(f"{path}: cannot load: {exc}") from exc
    blocks, calls = module.get("BLOCKS"), module.get("CALLS")
    if not isinstance(blocks, tuple) or not isinstance(calls, tuple):
        raise ParityError(f"{path}: defines no BLOCKS and CALLS tuples")
    return blocks, calls


def case_of(d: Divergence) -> Case:
    """A divergence as a case to shrink: its blocks, its args citing them as ``bI``."""
    names = {b.seq: f"b{i}" for i, b in enumerate(d.blocks)}
    blocks = tuple((b.label, b.content) for b in d.blocks)
    return Case(d.name, symbolic_args(d.name, d.args, names), blocks)


def divergence_of(case: Case, outputs: tuple[str, str], primary: str) -> Divergence:
    """A shrunk case as a divergence, its blocks under seqs 1, 2, ... (for ``adopt``)."""
    args = case.args
    for i in range(len(case.blocks)):
        args = args.replace(f"{{{{seq:b{i}}}}}", str(i + 1))
    port, go = outputs
    return Divergence(
        name=case.tool,
        args=args,
        primary="go" if primary == "go" else "python",
        go_output=go,
        python_output=port,
        python_error=None,
        blocks=tuple(Block(i + 1, *block) for i, block in enumerate(case.blocks)),
        complete=True,
    )


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> argparse.ArgumentParser:
    parser = sub.add_parser(
        "adopt",
        help="turn the shadow's divergences (JSON lines) into corpus cases",
        description="Turn the shadow's divergences (Divergence.to_json() lines) into recall "
        "corpus cases: printed, or written into the adopted corpus module.",
    )
    parser.add_argument("file", metavar="FILE.jsonl")
    parser.add_argument(
        "--write",
        action="store_true",
        help=f"write the new cases into the adopted module ({DEFAULT_MODULE.name})",
    )
    parser.add_argument("--module", metavar="PATH", help="write into this module instead")
    parser.add_argument(
        "--keep-unreproduced",
        action="store_true",
        help="adopt a divergence the Go does not reproduce as it was, unshrunk (its users'"
        " text included); by default it is left out",
    )
    add_go_options(
        parser.add_argument,
        url_help="shrink against this Go (with the debug routes: a fresh instance, e.g. a"
        " staging copy of the production Go); default: a fresh Go reference",
    )
    return parser


def run(args: argparse.Namespace) -> int:
    """``parity adopt``: shrink the divergences against the Go (default: a fresh Go
    reference), then print the cases, or write them into the module; 0 done."""
    path, corpus = args.file, get_corpus("recall")
    module = Path(args.module) if args.module else DEFAULT_MODULE if args.write else None
    go = connection_from_options(args)
    divergences = load_divergences(path)
    blocks, calls = list(corpus.blocks), list(corpus.calls)
    written = _load_module(module) if module is not None and module.exists() else ((), ())
    names, cases = {b.name for b in blocks}, {c.case for c in calls}
    blocks += [b for b in written[0] if b.name not in names]
    calls += [c for c in written[1] if c.case not in cases]
    print(f"{path}: {len(divergences)} divergences")
    kept: list[Divergence] = []
    notes: list[str] = []
    drift = ""  # a Go that answered in production unlike the reference
    with contextlib.ExitStack() as stack:
        if go is None:
            from parity.reference import GoReference

            go = stack.enter_context(GoReference().start()).connection
            where = "the Go reference"
            drift = (
                " (the Go that answered in production behaves unlike the reference: drift of"
                " the reference, a finding of its own)"
            )
        else:
            where = f"the Go at {go.url}"
        oracle = stack.enter_context(GoOracle(go, blocks))
        for number, d in enumerate(divergences, 1):  # each shrunk, or left out if not seen
            case = case_of(d)
            if not oracle.diverges(case):
                how = "left out (--keep-unreproduced adopts it as it was)"
                if args.keep_unreproduced:
                    how = "adopted as it was, unshrunk (--keep-unreproduced)"
                    kept.append(d)
                    notes.append(f"not reproduced by {where}; not shrunk")
                print(
                    f"divergence {number} ({d.name}): {where} does not reproduce it over the"
                    f" corpus's blocks{drift}: {how}"
                )
                continue
            shrunk = shrink(case, oracle.diverges)
            outputs = oracle.outputs(shrunk.case)
            assert outputs is not None  # it diverges
            print(f"divergence {number} ({d.name}): {shrunk.summary()}")
            kept.append(divergence_of(shrunk.case, outputs, d.primary))
            notes.append(f"adopted from a divergence, {shrunk.summary()}")
    adoption = adopt(kept, blocks, calls, notes=notes)
    print(adoption.source())
    if module is None or not adoption.calls:
        return 0
    try:  # the corpus must take them: names unique, every cited block known
        replace(corpus, blocks=(*blocks, *adoption.blocks), calls=(*calls, *adoption.calls))
    except CorpusError as exc:
        raise ParityError(f"the adopted cases do not fit the corpus: {exc}") from exc
    source = module_source((*written[0], *adoption.blocks), (*written[1], *adoption.calls))
    write_atomically(module, source.encode("utf-8"))
    print(
        f"wrote {module}: {len(adoption.blocks)} blocks and {len(adoption.calls)} calls added;"
        " record them from Go: `make golden`, then `parity review --accept-all`"
    )
    return 0
