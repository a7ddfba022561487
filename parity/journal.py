"""The golden journal: the only module that reads or writes one.

A journal is what the recorder saw a Go do with a corpus: the blocks ``/blocks`` served,
and each call's raw args, exact ``/tool/exec`` output and the archive reads Go's tool
made (``GET /debug/reads``: ``"block?seq=N"``, ``"blocks"``; ``[]`` none, ``null``
unknown and not checked). Digests, checked on load, cover all the replay reads, so an
edit or a lost entry is a damaged journal (exit 2), never a port failure. Each is the
hex SHA-256 of compact JSON (``separators=(",", ":")``, UTF-8): a block's of ``[seq,
label, content]``, ``blocks_sha256`` of ``{"seqs": seqs, "blocks": [their sha256]}``,
``reads_sha256`` of the reads; a call's ``sha256`` is that of the output's UTF-8.

Format 3, keys in this order::

    {
      "format": 3,
      "corpus": "recall",
      "recorded_by": {"go_version": "go1.27.3", "unicode_version": "15.0.0",
                      "goos": "linux", "goarch": "amd64", "instance": "reference"},
      "seqs": {"<block name>": <seq Go assigned>, ...},
      "blocks": [{"seq": 1000, "label": "...", "content": "...", "sha256": "..."}, ...],
      "blocks_sha256": "...",
      "calls": [{"case": "...", "tool": "recall", "args": "...", "output": "...",
                 "sha256": "...", "reads": ["block?seq=1000"] or null,
                 "reads_sha256": "..."}, ...]
    }

Writing is canonical (this key order, two-space indent, UTF-8 unescaped, a final
newline) and atomic (a temporary file, then ``os.replace``): one Go, the same bytes.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, cast

from parity.errors import JournalError

FORMAT = 3
"""The format version this module reads and writes (3: the blocks carry digests)."""

INSTANCES = ("reference", "live")
"""The kinds of Go instance a journal can be recorded from."""

Instance = Literal["reference", "live"]

VERSION_KEYS = ("go_version", "unicode_version", "goos", "goarch")
"""The ``recorded_by`` fields a Go reports about itself."""

UNKNOWN = "unknown"
"""A version the Go could not report (it has no ``/debug/version``)."""

_CASE_RE = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*\Z")
_HEX_RE = re.compile(r"[0-9a-f]{64}\Z")
_TOP_KEYS = ("format", "corpus", "recorded_by", "seqs", "blocks", "blocks_sha256", "calls")
_RECORDED_BY_KEYS = (*VERSION_KEYS, "instance")
_BLOCK_KEYS = ("seq", "label", "content", "sha256")
_CALL_KEYS = ("case", "tool", "args", "output", "sha256", "reads", "reads_sha256")
_READ_RE = re.compile(r"(?:blocks|block\?seq=(?:0|-?[1-9][0-9]*))\Z")


def digest(output: str) -> str:
    """The hex SHA-256 of ``output``'s UTF-8 bytes, as the journal stores it."""
    return hashlib.sha256(output.encode("utf-8")).hexdigest()


def reads_digest(reads: Sequence[str] | None) -> str:
    """The hex SHA-256 of ``reads`` as compact JSON (``null`` when unknown)."""
    text = json.dumps(None if reads is None else list(reads), separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _compact_digest(value: object) -> str:
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def blocks_digest(seqs: Mapping[str, int], blocks: Sequence[JournalBlock]) -> str:
    """The hex SHA-256 of the seqs and the blocks' digests, as ``blocks_sha256``."""
    return _compact_digest({"seqs": dict(seqs), "blocks": [b.sha256 for b in blocks]})


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

    @property
    def sha256(self) -> str:
        """The digest of the block, as written to the journal."""
        return _compact_digest([self.seq, self.label, self.content])


@dataclass(frozen=True)
class JournalCall:
    """One tool call: its case name, tool, raw args text, the Go's exact output, and
    the archive reads Go's tool made for it (``None``: unknown, not checked)."""

    case: str
    tool: str
    args: str
    output: str
    reads: tuple[str, ...] | None = None

    @property
    def sha256(self) -> str:
        """The digest of the output, as written to the journal."""
        return digest(self.output)

    @property
    def reads_sha256(self) -> str:
        """The digest of the reads, as written to the journal."""
        return reads_digest(self.reads)


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


# --- writing -----------------------------------------------------------------------------


def _to_obj(journal: Journal) -> dict[str, Any]:
    rb = journal.recorded_by
    return {
        "format": FORMAT,
        "corpus": journal.corpus,
        "recorded_by": {k: getattr(rb, k) for k in _RECORDED_BY_KEYS},
        "seqs": dict(journal.seqs),
        "blocks": [{k: getattr(b, k) for k in _BLOCK_KEYS} for b in journal.blocks],
        "blocks_sha256": blocks_digest(journal.seqs, journal.blocks),
        "calls": [
            {k: getattr(c, k) for k in _CALL_KEYS}
            | {"reads": None if c.reads is None else list(c.reads)}
            for c in journal.calls
        ],
    }


def dumps(journal: Journal, *, path: str | Path = "<journal>") -> str:
    """The canonical text of ``journal`` (validated first, as ``load`` would)."""
    obj = _to_obj(journal)
    _validate(obj, str(path))
    return json.dumps(obj, indent=2, ensure_ascii=False) + "\n"


def write(journal: Journal, path: str | Path) -> None:
    """Write ``journal`` canonically and atomically to ``path``."""
    path = Path(path)
    data = dumps(journal, path=path).encode("utf-8")
    directory = path.parent if str(path.parent) else Path(".")
    try:
        directory.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=directory, prefix=f".{path.name}.", suffix=".tmp")
    except OSError as e:
        raise JournalError(path, f"cannot write: {e.strerror or e}") from e
    try:
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
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise JournalError(path, f"cannot write: {e.strerror or e}") from e


# --- reading -----------------------------------------------------------------------------


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
        raise JournalError(
            path, _where(detail, data[: e.start]), case=_case_before(data[: e.start])
        ) from e
    return loads(text, path=path)


class _DuplicateKeyError(ValueError):
    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj: dict[str, Any] = {}
    for k, v in pairs:
        if k in obj:
            raise _DuplicateKeyError(k)
        obj[k] = v
    return obj


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def loads(text: str, *, path: str | Path = "<journal>") -> Journal:
    """Parse and verify a journal's text; ``path`` is only used in error messages."""
    where = str(path)
    try:
        obj = json.loads(text, object_pairs_hook=_pairs, parse_constant=_no_constant)
    except _DuplicateKeyError as e:
        raise JournalError(where, f"a JSON object repeats the key {e.key!r}", field=e.key) from e
    except json.JSONDecodeError as e:
        head = text[: e.pos].encode("utf-8", "surrogatepass")
        truncated = not text[e.pos :].strip()
        detail = (
            f"ends early at line {e.lineno} column {e.colno} (truncated?)"
            if truncated
            else f"not valid JSON at line {e.lineno} column {e.colno}: {e.msg} (corrupted?)"
        )
        raise JournalError(where, _where(detail, head), case=_case_before(head)) from e
    except (ValueError, RecursionError) as e:
        raise JournalError(where, f"not a journal: {e}") from e
    return _validate(obj, where)


_CASE_TEXT_RE = re.compile(rb'"case"\s*:\s*"((?:[^"\\]|\\.)*)"')


def _where(detail: str, prefix: bytes) -> str:
    """``detail``, saying so when the damage comes before the first call."""
    return detail if _case_before(prefix) else f"{detail}, before the first call"


def _case_before(prefix: bytes) -> str | None:
    """The last case name that starts before a parse error, if any."""
    found = _CASE_TEXT_RE.findall(prefix)
    if not found:
        return None
    try:
        name = json.loads(b'"' + found[-1] + b'"')
    except ValueError:
        return None
    return name if isinstance(name, str) else None


class _Checker:
    def __init__(self, path: str) -> None:
        self.path = path

    def fail(self, detail: str, *, case: str | None = None, fld: str | None = None) -> JournalError:
        return JournalError(self.path, detail, case=case, field=fld)

    def obj(
        self, value: Any, keys: tuple[str, ...], *, what: str, case: str | None = None
    ) -> dict[str, Any]:
        if not isinstance(value, dict):
            raise self.fail(f"{what} must be a JSON object", case=case, fld=what)
        for k in keys:
            if k not in value:
                raise self.fail(f"missing in {what}", case=case, fld=k)
        for k in value:
            if k not in keys:
                raise self.fail(f"unknown field in {what}", case=case, fld=k)
        return cast(dict[str, Any], value)

    def text(self, value: Any, *, fld: str, case: str | None = None) -> str:
        if not isinstance(value, str):
            raise self.fail(f"must be a string, not {_json_type(value)}", case=case, fld=fld)
        try:
            value.encode("utf-8")
        except UnicodeEncodeError as e:
            raise self.fail(
                f"holds a lone surrogate at index {e.start} (not UTF-8 text)", case=case, fld=fld
            ) from e
        return value

    def seq(self, value: Any, *, fld: str) -> int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.fail(f"must be an integer, not {_json_type(value)}", fld=fld)
        if value < 1:
            raise self.fail(f"seq {value} is below 1", fld=fld)
        return value


_JSON_TYPES = {bool: "a boolean", int: "a number", float: "a number", str: "a string"}


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    return _JSON_TYPES.get(type(value), "an array" if isinstance(value, list) else "an object")


def _check_digest(
    ck: _Checker, recorded: Any, actual: str, fld: str, of: str, what: str, case: str | None = None
) -> None:
    """A recorded digest (field ``fld``) is well formed and is ``actual``, that of ``of``."""
    recorded = ck.text(recorded, fld=fld, case=case)
    if not _HEX_RE.match(recorded):
        raise ck.fail("must be 64 lowercase hex digits", case=case, fld=fld)
    if recorded != actual:
        raise ck.fail(
            f"digest mismatch: {what} SHA-256 is {actual}, the journal says {recorded} "
            "(damaged or edited by hand; re-record with `make golden`)",
            case=case,
            fld=of,
        )


def _reads(ck: _Checker, value: Any, case: str) -> tuple[str, ...] | None:
    """A call's ``reads``: null, or an array of "block?seq=N" and "blocks"."""
    if value is None:
        return None
    if not isinstance(value, list):
        raise ck.fail(f"must be an array or null, not {_json_type(value)}", case=case, fld="reads")
    for j, read in enumerate(value):
        fld = f"reads[{j}]"
        if not _READ_RE.match(ck.text(read, fld=fld, case=case)):
            raise ck.fail(
                f'{read!r:.80} is not a read ("block?seq=N" or "blocks")', case=case, fld=fld
            )
    return tuple(value)


def _validate(obj: Any, path: str) -> Journal:
    ck = _Checker(path)
    if isinstance(obj, dict) and "format" in obj:
        version = obj["format"]
        if isinstance(version, bool) or not isinstance(version, int):
            raise ck.fail(
                f"format version must be an integer, not {_json_type(version)}", fld="format"
            )
        if version < FORMAT:
            raise ck.fail(
                f"format version {version} is older than this harness's ({FORMAT}: digests "
                "cover the blocks too); re-record with `make golden`",
                fld="format",
            )
        if version != FORMAT:
            raise ck.fail(
                f"unknown format version {version} (this harness reads format {FORMAT})",
                fld="format",
            )
    top = ck.obj(obj, _TOP_KEYS, what="journal")
    corpus = ck.text(top["corpus"], fld="corpus")

    rb = ck.obj(top["recorded_by"], _RECORDED_BY_KEYS, what="recorded_by")
    meta = {k: ck.text(rb[k], fld=f"recorded_by.{k}") for k in _RECORDED_BY_KEYS}
    if meta["instance"] not in INSTANCES:
        raise ck.fail(
            f"must be one of {', '.join(INSTANCES)}, not {meta['instance']!r}",
            fld="recorded_by.instance",
        )
    recorded_by = RecordedBy(**cast("dict[str, Any]", meta))  # the instance checked above

    raw_seqs = top["seqs"]
    if not isinstance(raw_seqs, dict):
        raise ck.fail("must be a JSON object of block name to seq", fld="seqs")
    seqs: dict[str, int] = {}
    for name, seq in raw_seqs.items():
        seqs[name] = ck.seq(seq, fld=f"seqs.{name}")

    raw_blocks = top["blocks"]
    if not isinstance(raw_blocks, list):
        raise ck.fail("must be an array", fld="blocks")
    blocks: list[JournalBlock] = []
    for i, raw in enumerate(raw_blocks):
        what = f"blocks[{i}]"
        b = ck.obj(raw, _BLOCK_KEYS, what=what)
        seq = ck.seq(b["seq"], fld=f"{what}.seq")
        if blocks and seq <= blocks[-1].seq:
            raise ck.fail(f"seq {seq} does not follow {blocks[-1].seq}", fld=f"{what}.seq")
        block = JournalBlock(
            seq,
            ck.text(b["label"], fld=f"{what}.label"),
            ck.text(b["content"], fld=f"{what}.content"),
        )
        _check_digest(ck, b["sha256"], block.sha256, f"{what}.sha256", what, f"{what}'s")
        blocks.append(block)
    blocks_sha256 = blocks_digest(seqs, blocks)
    _check_digest(
        ck, top["blocks_sha256"], blocks_sha256, "blocks_sha256", "blocks", "the seqs' and blocks'"
    )

    raw_calls = top["calls"]
    if not isinstance(raw_calls, list):
        raise ck.fail("must be an array", fld="calls")
    calls: list[JournalCall] = []
    seen: set[str] = set()
    for i, raw in enumerate(raw_calls):
        what = f"calls[{i}]"
        case_hint = raw.get("case") if isinstance(raw, dict) else None
        hint = case_hint if isinstance(case_hint, str) else None
        c = ck.obj(raw, _CALL_KEYS, what=what, case=hint)
        case = ck.text(c["case"], fld=f"{what}.case")
        if not _CASE_RE.match(case):
            raise ck.fail(
                "case names are kebab-case ([a-z0-9] words joined by '-')", case=case, fld="case"
            )
        if case in seen:
            raise ck.fail("duplicate case", case=case, fld="case")
        seen.add(case)
        tool = ck.text(c["tool"], fld="tool", case=case)
        if not tool:
            raise ck.fail("empty tool name", case=case, fld="tool")
        args = ck.text(c["args"], fld="args", case=case)
        output = ck.text(c["output"], fld="output", case=case)
        _check_digest(ck, c["sha256"], digest(output), "sha256", "output", "the output's", case)
        reads = _reads(ck, c["reads"], case)
        reads_sha256 = reads_digest(reads)
        _check_digest(
            ck, c["reads_sha256"], reads_sha256, "reads_sha256", "reads", "the reads'", case
        )
        calls.append(JournalCall(case, tool, args, output, reads))

    return Journal(
        corpus=corpus,
        recorded_by=recorded_by,
        seqs=seqs,
        blocks=tuple(blocks),
        calls=tuple(calls),
    )
