"""The golden journal: the only module that reads or writes one.

A journal is what the recorder saw a Go do with a corpus: the blocks ``/blocks`` served,
and each call's raw args, exact ``/tool/exec`` output and the archive reads Go's tool
made (``GET /debug/reads``: ``"block?seq=N"``, ``"blocks"``; ``null``: unknown, not
checked). Digests, checked on load, cover all the replay reads, so an edit or a lost
entry is a damaged journal (exit 2), never a port failure: each the hex SHA-256 of a
string's UTF-8 or of compact JSON (``digest``): a block's of ``[seq, label, content]``,
``blocks_sha256`` of ``{"seqs": seqs, "blocks": [their sha256]}``, a call's ``sha256``
of its output and ``reads_sha256`` of its reads. Format 3, keys in this order::

    {"format": 3, "corpus": "recall",
     "recorded_by": {"go_version": "go1.27.3", "unicode_version": "15.0.0",
                     "goos": "linux", "goarch": "amd64", "instance": "reference"},
     "seqs": {"<block name>": <seq Go assigned>, ...},
     "blocks": [{"seq": 1000, "label": "...", "content": "...", "sha256": "..."}, ...],
     "blocks_sha256": "...",
     "calls": [{"case": "...", "tool": "recall", "args": "...", "output": "...",
                "sha256": "...", "reads": ["block?seq=1000"] or null, "reads_sha256": "..."}]}

Writing is canonical (this key order, two-space indent, UTF-8 unescaped, a final
newline) and atomic (a temporary file, then ``os.replace``): one Go, the same bytes.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os
import re
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, cast, get_args

from parity.errors import JournalError

FORMAT = 3  # the format version this module reads and writes (3: the blocks carry digests)
Instance = Literal["reference", "live"]  # the kinds of Go a journal is recorded from
VERSION_KEYS = ("go_version", "unicode_version", "goos", "goarch")  # what a Go reports
UNKNOWN = "unknown"  # a version the Go could not report (it has no /debug/version)

CASE_RE = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*\Z")  # a case name: kebab-case
_HEX_RE = re.compile(r"[0-9a-f]{64}\Z")
_READ_RE = re.compile(r"(?:blocks|block\?seq=(?:0|-?[1-9][0-9]*))\Z")
_CASE_TEXT_RE = re.compile(rb'"case"\s*:\s*"((?:[^"\\]|\\.)*)"')
_TOP_KEYS = ("format", "corpus", "recorded_by", "seqs", "blocks", "blocks_sha256", "calls")
_RECORDED_BY_KEYS = (*VERSION_KEYS, "instance")
_BLOCK_KEYS = ("seq", "label", "content", "sha256")
_CALL_KEYS = ("case", "tool", "args", "output", "sha256", "reads", "reads_sha256")


def digest(value: object) -> str:
    """The hex SHA-256 the journal stores: of a string's UTF-8, else of compact JSON."""
    if not isinstance(value, str):
        value = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(value.encode("utf-8")).hexdigest()


@dataclass(frozen=True, kw_only=True)
class RecordedBy:
    """What produced a journal: the Go and Unicode versions, the platform, the instance."""

    go_version: str
    unicode_version: str
    goos: str
    goarch: str
    instance: Instance


@dataclass(frozen=True)
class JournalBlock:
    """A block as the Go served it."""

    seq: int
    label: str
    content: str


@dataclass(frozen=True)
class JournalCall:
    """One tool call: its case name, tool, raw args text, the Go's exact output, and
    the archive reads Go's tool made for it (``None``: unknown, not checked)."""

    case: str
    tool: str
    args: str
    output: str
    reads: tuple[str, ...] | None = None


@dataclass(frozen=True, kw_only=True)
class Journal:
    """A whole journal, as loaded (and verified) or about to be written."""

    corpus: str
    recorded_by: RecordedBy
    seqs: Mapping[str, int] = field(default_factory=dict)
    blocks: tuple[JournalBlock, ...] = ()
    calls: tuple[JournalCall, ...] = ()

    @property
    def cases(self) -> tuple[str, ...]:
        return tuple(c.case for c in self.calls)

    def call(self, case: str) -> JournalCall:
        """The call recorded under ``case`` (``KeyError`` when there is none)."""
        return {c.case: c for c in self.calls}[case]


def pending_path(path: str | Path) -> Path:
    """Where a recording that differs from the journal at ``path`` awaits review."""
    return Path(f"{path}.new")


def _block_digest(b: JournalBlock) -> str:
    return digest([b.seq, b.label, b.content])


def _blocks_digest(seqs: Mapping[str, int], blocks: list[str]) -> str:
    return digest({"seqs": dict(seqs), "blocks": blocks})


def dumps(journal: Journal, *, path: str | Path = "<journal>") -> str:
    """The canonical text of ``journal`` (validated first, as ``load`` would)."""
    blocks = [{**vars(b), "sha256": _block_digest(b)} for b in journal.blocks]
    calls = [
        {**vars(c), "sha256": digest(c.output), "reads": reads, "reads_sha256": digest(reads)}
        for c in journal.calls
        for reads in [None if c.reads is None else list(c.reads)]
    ]
    obj = {
        "format": FORMAT,
        "corpus": journal.corpus,
        "recorded_by": {k: getattr(journal.recorded_by, k) for k in _RECORDED_BY_KEYS},
        "seqs": dict(journal.seqs),
        "blocks": blocks,
        "blocks_sha256": _blocks_digest(journal.seqs, [b["sha256"] for b in blocks]),
        "calls": [{k: c[k] for k in _CALL_KEYS} for c in calls],
    }
    _validate(obj, str(path))
    return json.dumps(obj, indent=2, ensure_ascii=False) + "\n"


def write(journal: Journal, path: str | Path) -> None:
    """Write ``journal`` canonically and atomically to ``path``."""
    write_atomically(Path(path), dumps(journal, path=path).encode("utf-8"))


def write_atomically(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically, keeping its mode; JournalError when that fails."""
    tmp = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        mode = 0o644
        with contextlib.suppress(OSError):
            mode = path.stat().st_mode & 0o777
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except OSError as e:
        if tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
        raise JournalError(path, f"cannot write: {e.strerror or e}") from e


def _pairs(path: Path, pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    if len(obj := dict(pairs)) < len(pairs):  # the first key that repeats one before it
        keys = [k for k, _ in pairs]
        key = next(k for i, k in enumerate(keys) if k in keys[:i])
        raise JournalError(path, f"a JSON object repeats the key {key!r}", field=key)
    return obj


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def load(path: str | Path) -> Journal:
    """Read and verify the journal at ``path``; any defect raises ``JournalError``."""
    path = Path(path)
    try:
        data = path.read_bytes()
    except FileNotFoundError as e:
        raise JournalError(path, "no such file (record it with `parity record`)") from e
    except OSError as e:
        raise JournalError(path, f"cannot read: {e.strerror or e}") from e
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        cut = e.end == len(data) and e.reason == "unexpected end of data"
        detail = (
            "ends inside a UTF-8 sequence (truncated?)" if cut else f"not UTF-8 at byte {e.start}"
        )
        raise _damaged(path, detail, data[: e.start]) from e
    try:
        obj = json.loads(
            text, object_pairs_hook=functools.partial(_pairs, path), parse_constant=_no_constant
        )
    except json.JSONDecodeError as e:
        detail = (
            f"ends early at line {e.lineno} column {e.colno} (truncated?)"
            if not text[e.pos :].strip()
            else f"not valid JSON at line {e.lineno} column {e.colno}: {e.msg} (corrupted?)"
        )
        raise _damaged(path, detail, text[: e.pos].encode("utf-8", "surrogatepass")) from e
    except (ValueError, RecursionError) as e:
        raise JournalError(path, f"not a journal: {e}") from e
    return _validate(obj, str(path))


def _damaged(path: str | Path, detail: str, prefix: bytes) -> JournalError:
    """A parse error, named by the last case that starts before it (if any)."""
    case = None
    if found := _CASE_TEXT_RE.findall(prefix):
        with contextlib.suppress(ValueError):
            case = json.loads(b'"' + found[-1] + b'"')
    return JournalError(path, detail if case else f"{detail}, before the first call", case=case)


_JSON_TYPES = {bool: "a boolean", int: "a number", float: "a number", str: "a string"}


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    return _JSON_TYPES.get(type(value), "an array" if isinstance(value, list) else "an object")


def _validate(obj: Any, path: str) -> Journal:
    fail = functools.partial(JournalError, path)

    def fields(value: Any, keys: tuple[str, ...], what: str, case: str | None = None) -> Any:
        if not isinstance(value, dict):
            raise fail(f"{what} must be a JSON object", case=case, field=what)
        for k in [k for k in keys if k not in value] + [k for k in value if k not in keys]:  # 1st
            raise fail(
                f"{'missing in' if k in keys else 'unknown field in'} {what}", case=case, field=k
            )
        return value

    def text(value: Any, fld: str, case: str | None = None) -> str:
        if not isinstance(value, str):
            raise fail(f"must be a string, not {_json_type(value)}", case=case, field=fld)
        try:
            value.encode("utf-8")
        except UnicodeEncodeError as e:
            raise fail(
                f"holds a lone surrogate at index {e.start} (not UTF-8 text)", case=case, field=fld
            ) from e
        return value

    def seq(value: Any, fld: str) -> int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise fail(f"must be an integer, not {_json_type(value)}", field=fld)
        if value < 1:
            raise fail(f"seq {value} is below 1", field=fld)
        return value

    def check(
        recorded: Any, actual: str, fld: str, of: str, what: str, case: str | None = None
    ) -> None:
        """A recorded digest (field ``fld``) is well formed and is ``actual``, that of ``of``."""
        if not _HEX_RE.match(text(recorded, fld, case)):
            raise fail("must be 64 lowercase hex digits", case=case, field=fld)
        if recorded != actual:
            raise fail(
                f"digest mismatch: {what} SHA-256 is {actual}, the journal says {recorded} "
                "(damaged or edited by hand; re-record with `make golden`)",
                case=case,
                field=of,
            )

    version = obj.get("format", FORMAT) if isinstance(obj, dict) else FORMAT
    if type(version) is not int:
        raise fail(f"format version must be an integer, not {_json_type(version)}", field="format")
    if version != FORMAT:
        raise fail(
            f"format version {version} is older than this harness's ({FORMAT}: digests "
            "cover the blocks too); re-record with `make golden`"
            if version < FORMAT
            else f"unknown format version {version} (this harness reads format {FORMAT})",
            field="format",
        )
    top = fields(obj, _TOP_KEYS, "journal")
    corpus = text(top["corpus"], "corpus")
    rb = fields(top["recorded_by"], _RECORDED_BY_KEYS, "recorded_by")
    meta = {k: text(rb[k], f"recorded_by.{k}") for k in _RECORDED_BY_KEYS}
    if meta["instance"] not in get_args(Instance):
        raise fail(
            f"must be one of {', '.join(get_args(Instance))}, not {meta['instance']!r}",
            field="recorded_by.instance",
        )
    if not isinstance(top["seqs"], dict):
        raise fail("must be a JSON object of block name to seq", field="seqs")
    seqs = {name: seq(value, f"seqs.{name}") for name, value in top["seqs"].items()}

    if not isinstance(top["blocks"], list):
        raise fail("must be an array", field="blocks")
    blocks: list[JournalBlock] = []
    for i, raw in enumerate(top["blocks"]):
        what = f"blocks[{i}]"
        b = fields(raw, _BLOCK_KEYS, what)
        n = seq(b["seq"], f"{what}.seq")
        if blocks and n <= blocks[-1].seq:
            raise fail(f"seq {n} does not follow {blocks[-1].seq}", field=f"{what}.seq")
        block = JournalBlock(
            n, text(b["label"], f"{what}.label"), text(b["content"], f"{what}.content")
        )
        check(b["sha256"], _block_digest(block), f"{what}.sha256", what, f"{what}'s")
        blocks.append(block)
    actual = _blocks_digest(seqs, [_block_digest(b) for b in blocks])
    check(top["blocks_sha256"], actual, "blocks_sha256", "blocks", "the seqs' and blocks'")

    if not isinstance(top["calls"], list):
        raise fail("must be an array", field="calls")
    calls: list[JournalCall] = []
    for i, raw in enumerate(top["calls"]):
        hint = raw.get("case") if isinstance(raw, dict) else None
        c = fields(raw, _CALL_KEYS, f"calls[{i}]", hint if isinstance(hint, str) else None)
        case = text(c["case"], f"calls[{i}].case")
        in_case = functools.partial(fail, case=case)
        if not CASE_RE.match(case):
            raise in_case("case names are kebab-case ([a-z0-9] words joined by '-')", field="case")
        if case in (done.case for done in calls):
            raise in_case("duplicate case", field="case")
        tool = text(c["tool"], "tool", case)
        if not tool:
            raise in_case("empty tool name", field="tool")
        args, output = text(c["args"], "args", case), text(c["output"], "output", case)
        check(c["sha256"], digest(output), "sha256", "output", "the output's", case)
        reads = c["reads"]
        if reads is not None and not isinstance(reads, list):
            raise in_case(f"must be an array or null, not {_json_type(reads)}", field="reads")
        for j, read in enumerate(reads or ()):
            if not _READ_RE.match(text(read, f"reads[{j}]", case)):
                raise in_case(
                    f'{read!r:.80} is not a read ("block?seq=N" or "blocks")', field=f"reads[{j}]"
                )
        check(c["reads_sha256"], digest(reads), "reads_sha256", "reads", "the reads'", case)
        calls.append(JournalCall(case, tool, args, output, None if reads is None else tuple(reads)))
    recorded_by = RecordedBy(**cast("dict[str, Any]", meta))  # the instance checked above
    return Journal(
        corpus=corpus, recorded_by=recorded_by, seqs=seqs, blocks=tuple(blocks), calls=tuple(calls)
    )
