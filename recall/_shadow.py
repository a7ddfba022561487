"""The shadow, with no I/O: the port compared with Go's /tool/exec on live traffic.

Go is the control, the port the candidate (Scientist's words). The hosts compare a
sampled call off the caller's path (``HostCore._compare``), byte for byte; outputs that
differ are checked once more on both sides (Diffy's noise check): equal then, the
archive changed in between (``raced``); still different, a ``Divergence``.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import logging
import random
import re
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, Literal, NamedTuple, get_args

from recall import _tools
from recall._errors import GoUnavailableError
from recall._protocol import check_type
from recall._tools import Block, BlockRead, BlocksRead, start_tool

logger = logging.getLogger("recall.shadow")

Primary = Literal["python", "go"]
Verdict = Literal["matched", "diverged", "raced", "dropped", "errors", "fell_back"]
COUNTS: Final = ("sampled", "compared", *get_args(Verdict), "pending", "go_failed")
"""The keys of ``shadow_stats()`` (``HostBase.shadow_stats`` says what each counts)."""

MAX_KEPT_BLOCKS: Final = 100  # the bounds of the blocks a divergence keeps,
MAX_KEPT_BYTES: Final = 1 << 20  # their labels and contents in UTF-8
WINDOW: Final = 4  # the bytes on either side of the first difference a redacted one shows
BURST_SECONDS: Final = 60.0  # a failing Go is logged again after this long

_RESULTS = re.compile(r"([0-9]+) of ([0-9]+) matching blocks for ")
_HEADER = re.compile(r"^\[r([0-9]+)\]", re.MULTILINE)
_NO_MATCH: Final = "no archived block matches "
_JSON_VERSION: Final = 1


@dataclass(slots=True)
class PythonRun:
    """The port's run of a call: its output, or the error it raised (a defect: never a
    failed read, which is ``fell_back``), and what it read: the tool's read (None: the
    output needed none), and the block (None: absent) or every block it was given."""

    output: str | None = None
    error: str | None = None
    fell_back: bool = False
    step: BlockRead | BlocksRead | None = None
    block: Block | None = None
    blocks: Sequence[Block] = ()


class Difference(NamedTuple):
    """The first byte where two UTF-8 texts differ: its offset (from 0), line and column
    (from 1; the column counts bytes, as Go's tools do)."""

    offset: int
    line: int
    column: int


def first_difference(expected: str, actual: str) -> Difference | None:
    """Where ``actual``'s UTF-8 bytes first depart from ``expected``'s (a missing byte
    counts); None when they are equal."""
    a, b = (text.encode("utf-8", "surrogatepass") for text in (expected, actual))
    if a == b:
        return None
    at = min(len(a), len(b))  # the common prefix's length
    at = next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), at)
    return Difference(at, a.count(b"\n", 0, at) + 1, at - a.rfind(b"\n", 0, at))


@dataclass(frozen=True, slots=True, kw_only=True)
class Divergence:
    """A sampled call whose port output Go's /tool/exec does not give, checked twice.

    The outputs are the recheck's; ``python_output`` is None when the port raised
    (``python_error``); ``offset``, ``line`` and ``column`` locate the first differing
    byte (``first_difference``). ``blocks`` are those the port read that matter to either
    output, in seq order; not ``complete`` when some were left out past the bounds.

    ``repr``, the log line and ``to_json()`` are redacted (lengths, digests, the first
    difference with ``WINDOW`` bytes on either side, the seqs read: docs/divergences.md);
    ``to_json(include_private_data=True)`` is the full case, which ``from_json`` reads
    back (``parity adopt``). None holds the token, the base URL or a header.
    """

    name: str
    args: str
    primary: Primary
    go_output: str
    python_output: str | None
    python_error: str | None
    blocks: tuple[Block, ...]
    complete: bool
    offset: int | None = field(init=False)
    line: int | None = field(init=False)
    column: int | None = field(init=False)

    def __post_init__(self) -> None:
        port = self.python_output
        where = None if port is None else first_difference(self.go_output, port)
        for key, value in zip(Difference._fields, where or (None,) * 3, strict=True):
            object.__setattr__(self, key, value)

    def __repr__(self) -> str:
        return f"Divergence({self.summary()})"

    def summary(self) -> str:
        """What the log line says: no text of the args, outputs or blocks."""
        if self.python_error is not None:
            what = f"the port raised {self.python_error.partition(':')[0]}"
        else:
            go, python = self.window()
            what = (
                f"the outputs differ at byte {self.offset} (line {self.line}, col"
                f" {self.column}): Go {go!r}, port {python!r} (Go's output"
                f" {_said(self.go_output)}, the port's {_said(self.python_output or '')})"
            )
        return (
            f"{self.name} (args {_said(self.args)}): {what}; primary {self.primary};"
            f" seqs read {list(self.seqs_read())}"
            + ("" if self.complete else " (not all the blocks that mattered kept)")
        )

    def window(self) -> tuple[str, str]:
        """Go's and the port's bytes ``WINDOW`` either side of the first difference, escaped
        where undecodable; empty when the port raised."""
        if self.offset is None or self.python_output is None:
            return "", ""
        start, end = max(0, self.offset - WINDOW), self.offset + WINDOW
        go, python = (
            text.encode("utf-8", "surrogatepass")[start:end].decode("utf-8", "backslashreplace")
            for text in (self.go_output, self.python_output)
        )
        return go, python

    def seqs_read(self) -> tuple[int, ...]:
        """The seqs of the blocks kept; for ``recall``, the seq its id asks for."""
        step = start_tool(self.name, self.args) if self.name == "recall" else None
        return (step.seq,) if isinstance(step, BlockRead) else tuple(b.seq for b in self.blocks)

    def to_json(self, *, include_private_data: bool = False) -> str:
        """One line of ASCII JSON: redacted, or with ``include_private_data`` the whole case."""
        where = None if self.offset is None else {k: getattr(self, k) for k in Difference._fields}
        doc: dict[str, Any] = {"divergence": _JSON_VERSION}
        if include_private_data:
            doc |= {key: getattr(self, key) for key in _FULL if key not in ("blocks", "complete")}
            doc["first_difference"] = where
            doc["blocks"] = [dataclasses.asdict(b) for b in self.blocks]
        else:
            go, python = self.window()
            error, port = self.python_error, self.python_output
            doc |= {
                "redacted": True,
                "name": self.name,
                "primary": self.primary,
                "args": _digest(self.args),
                "go_output": _digest(self.go_output),
                "python_output": None if port is None else _digest(port),
                "python_error": None
                if error is None
                else {"type": error.partition(":")[0], **_digest(error)},
                "first_difference": where and {**where, "go": go, "python": python},
                "seqs_read": list(self.seqs_read()),
                "blocks": [
                    {"seq": b.seq, **_digest(f"{b.label}\0{b.content}")} for b in self.blocks
                ],
            }
        doc["complete"] = self.complete
        return json.dumps(doc, ensure_ascii=True, separators=(",", ":"))

    @classmethod
    def from_json(cls, line: str) -> Divergence:
        """The Divergence ``to_json(include_private_data=True)`` wrote; ValueError saying
        what is wrong with ``line`` (a redacted line holds no case to read back)."""
        try:
            doc = json.loads(line)
        except ValueError as exc:
            cut = "" if line.rstrip().endswith("}") else " (truncated?)"
            raise ValueError(f"not JSON{cut}: {exc}") from None
        if not isinstance(doc, dict) or "divergence" not in doc:
            raise ValueError("a JSON object with 'divergence' is expected")
        if doc["divergence"] != _JSON_VERSION:
            raise ValueError(f"divergence format {doc['divergence']!r} is not {_JSON_VERSION}")
        if doc.get("redacted"):
            raise ValueError(
                "a redacted divergence holds no text to replay: write the case with"
                " to_json(include_private_data=True), to a file that stays local"
            )
        got = {key: _field(doc, key, kind) for key, kind in _FULL.items()}
        if got["primary"] not in ("python", "go"):
            raise ValueError(f"'primary' must be 'python' or 'go', not {got['primary']!r}")
        if (got["python_output"] is None) == (got["python_error"] is None):
            raise ValueError("exactly one of 'python_output' and 'python_error' must be set")
        if got["python_output"] == got["go_output"]:
            raise ValueError("'python_output' and 'go_output' are equal: no divergence")
        blocks: list[Block] = []
        for i, item in enumerate(got["blocks"]):
            if not isinstance(item, dict):
                raise ValueError(f"blocks[{i}] is not an object")
            seq, label, content = (_field(item, k, t, f"blocks[{i}].") for k, t in _BLOCK)
            if isinstance(seq, bool) or seq < 1 or (blocks and seq <= blocks[-1].seq):
                raise ValueError(f"blocks[{i}].seq must be >= 1 and increasing")
            blocks.append(Block(seq, label, content))
        return cls(**got | {"blocks": tuple(blocks)})


# The full form's keys, in its order but for first_difference (computed), and their types.
_FULL: Final[Mapping[str, type | tuple[type, ...]]] = {
    **dict.fromkeys(("name", "args", "primary", "go_output"), str),
    **dict.fromkeys(("python_output", "python_error"), (str, type(None))),
    "blocks": list,
    "complete": bool,
}
_BLOCK: Final = (("seq", int), ("label", str), ("content", str))


def _field(
    doc: Mapping[str, object], key: str, kind: type | tuple[type, ...], where: str = ""
) -> Any:
    if key not in doc:
        raise ValueError(f"'{where}{key}' is missing")
    if not isinstance(value := doc[key], kind):
        wanted = kind[0] if isinstance(kind, tuple) else kind
        raise ValueError(f"'{where}{key}' must be a {wanted.__name__}, not {type(value).__name__}")
    return value


def _said(text: str) -> str:
    """A text's length and digest, as the log line says them."""
    return "{bytes} bytes, sha256 {sha256}".format(**_digest(text))


def _digest(text: str) -> dict[str, Any]:
    """What a redacted divergence says of a text: its UTF-8 length and a digest."""
    data = text.encode("utf-8", "surrogatepass")
    return {"bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()[:16]}


def _kept_blocks(run: PythonRun, go_output: str) -> tuple[tuple[Block, ...], bool]:
    """The blocks a divergence keeps, in seq order, and whether they are all that mattered.

    For ``recall``, the block read. A search's output depends only on the blocks that
    score: the port's matches and the blocks Go cites suffice, unless Go counts more
    matches or its output is not a search's (then every block read). Cited ones first,
    then by the port's rank, within the bounds.
    """
    step = run.step
    if isinstance(step, BlockRead):
        return ((run.block,) if run.block is not None else ()), True
    if not isinstance(step, BlocksRead):
        return (), True
    by_seq = {b.seq: b for b in run.blocks}
    cited = [by_seq[seq] for seq in map(int, _HEADER.findall(go_output)) if seq in by_seq]
    hits = _tools.scan(map(_tools.latin1_images, run.blocks), _tools.terms_as_bytes(step.terms))
    wanted = cited + [run.blocks[at] for _, at in _tools.rank(hits, len(hits))]  # the tool's
    results = _RESULTS.match(go_output)  # None: not Go's search output, or no block matches
    if not go_output.startswith(_NO_MATCH) and (results is None or int(results[2]) > len(hits)):
        wanted += reversed(run.blocks)  # Go may match more: every block, the latest first
    kept: dict[int, Block] = {}
    size, complete = 0, True
    for block in wanted:
        if block.seq not in kept:
            size += len(block.label.encode()) + len(block.content.encode())
            if len(kept) >= MAX_KEPT_BLOCKS or size > MAX_KEPT_BYTES:
                complete = False
                break
            kept[block.seq] = block
    return tuple(sorted(kept.values(), key=lambda b: b.seq)), complete


@dataclass(frozen=True, slots=True, kw_only=True)
class Shadow:
    """The shadow's options, given to a host as ``shadow=Shadow(...)`` (None: no shadow).

    ``rate`` is the fraction of ``recall`` and ``recall_search`` calls compared with Go's
    /tool/exec; ``primary`` whose output the caller gets: ``"python"``, the port's, or
    ``"go"``, Go's (the port serves the call when Go fails). At most ``queue``
    comparisons wait; past that a sampled call is dropped (counted). Each divergence is
    logged (``recall.shadow``, redacted) and passed to ``on_divergence``, off the path.
    TypeError for an option of the wrong type, ValueError for a wrong value.
    """

    rate: float
    primary: Primary = "python"
    on_divergence: Callable[[Divergence], None] | None = None
    queue: int = 256

    def __post_init__(self) -> None:
        check_type("rate", self.rate, (int, float), "a number from 0 to 1")
        if not 0 <= self.rate <= 1:  # nor NaN
            raise ValueError(f"rate must be a number from 0 to 1, not {self.rate!r}")
        check_type("primary", self.primary, str, "a str")
        if self.primary not in ("python", "go"):
            raise ValueError(f"primary must be 'python' or 'go', not {self.primary!r}")
        if self.on_divergence is not None and not callable(self.on_divergence):
            raise TypeError("on_divergence must be a callable or None")
        check_type("queue", self.queue, int, "an int")
        if self.queue < 1:
            raise ValueError(f"queue must be at least 1, not {self.queue}")


class ShadowState:
    """A host's shadow (``of`` its ``Shadow``): the sampling, counts, log and callback.
    Safe for threads and tasks (one lock). Tests set ``_random``, the sampling's floats in
    [0, 1), and ``_clock``, the bursts' (``time.monotonic``)."""

    def __init__(self, options: Shadow, token: str | None, go: str) -> None:
        self.go, self._token = go, token
        self.rate, self.primary, self.queue = float(options.rate), options.primary, options.queue
        self._on_divergence = options.on_divergence
        self._random: Callable[[], float] = random.random
        self._clock: Callable[[], float] = time.monotonic
        self._lock = threading.Lock()
        self._counts = dict.fromkeys(COUNTS, 0)
        self._burst = 0  # failures of Go in the current burst (0: none)
        self._burst_logged = 0.0
        self._closed = False

    @classmethod
    def of(cls, options: object, *, token: str | None, go: str = "") -> ShadowState | None:
        """The state for a host's ``shadow`` option; None when there is nothing to do
        (TypeError unless a Shadow or None)."""
        options = check_type("shadow", options, (Shadow, type(None)), "a recall.Shadow or None")
        if options is None or (options.rate == 0 and options.primary == "python"):
            return None
        return cls(options, token, go)

    def sample(self) -> bool:
        return self.rate >= 1.0 or (self.rate > 0.0 and self._random() < self.rate)

    def stats(self) -> dict[str, int]:
        with self._lock:
            return dict(self._counts)

    def describe(self, exc: BaseException) -> str:
        """An error of the port as a divergence carries it, the token masked."""
        return self.mask(f"{type(exc).__name__}: {exc}")

    def mask(self, text: str) -> str:
        return text.replace(self._token, "***") if self._token else text

    # The counts. Every sampled call ends in one verdict; while it waits it is pending.

    def sampled(self, then: Literal["pending", "fell_back"]) -> None:
        """A sampled call, ``pending`` (handed off the caller's path; dropped once the host
        is closing) or decided on the path."""
        with self._lock:
            self._counts["sampled"] += 1
            self._counts["dropped" if then == "pending" and self._closed else then] += 1

    def settle(
        self,
        verdict: Verdict,
        *,
        divergence: Divergence | None = None,
        error: Exception | None = None,
    ) -> None:
        """A handed-off comparison's verdict (with Go's ``error``, or the ``divergence``);
        none once the host is closing, which dropped it."""
        with self._lock:
            if self._closed:
                return
            self._counts["pending"] -= 1
            self._counts[verdict] += 1
            if verdict in ("matched", "diverged", "raced"):
                self._counts["compared"] += 1
        if error is not None:
            self.go_failed(error)
        if divergence is not None:
            logger.warning("divergence: %s", divergence.summary())
            try:
                if self._on_divergence is not None:
                    self._on_divergence(divergence)
            except Exception as exc:  # the callback's defect never stops the comparisons
                logger.error("on_divergence raised %s", self.describe(exc))

    def go_failed(self, error: Exception, *, served: bool = False, sampled: bool = False) -> None:
        """Go failed a call of the shadow (``served``: the primary's, the port served it;
        ``sampled``: an error). Logged once per burst of failures, and again after
        ``BURST_SECONDS`` if it lasts."""
        if isinstance(error, GoUnavailableError):
            error.at(self.go)
        now = self._clock()
        with self._lock:
            if served:
                self._counts["go_failed"] += 1
                if sampled:
                    self._counts["sampled"] += 1
                    self._counts["errors"] += 1
            self._burst += 1
            first = self._burst == 1
            if not (first or now - self._burst_logged >= BURST_SECONDS):
                return
            self._burst_logged = now
            count = self._burst
        why, role = self.mask(str(error)), "the primary" if served else "a shadow"
        logger.warning(
            f"Go's tool endpoint failed {role} call ({why}); not logged again before it answers"
            f" or for {BURST_SECONDS:g}s"
            if first
            else f"Go's tool endpoint still failing: {count} failures since it last answered"
            f" ({why})"
        )

    def go_answered(self) -> None:
        """Go answered a call of the shadow: a burst of failures, if any, ends."""
        if not self._burst:  # the usual case, without the lock
            return
        with self._lock:
            count, self._burst = self._burst, 0
        if count:
            logger.warning("Go's tool endpoint answers again, after %d failures", count)

    def closed(self) -> None:
        """The host is closing: the comparisons still pending, queued or running, are
        dropped; then the counts, one line."""
        with self._lock:
            self._closed = True
            self._counts["dropped"] += self._counts["pending"]
            self._counts["pending"] = 0
        summary = ", ".join(f"{key} {count}" for key, count in self.stats().items())
        logger.info("shadow (primary %s, rate %g): %s", self.primary, self.rate, summary)

    def divergence(self, name: str, args: str, python: PythonRun, go_output: str) -> Divergence:
        """The Divergence of a call whose port run and Go output differ."""
        blocks, complete = _kept_blocks(python, go_output)
        return Divergence(
            name=name,
            args=args,
            primary=self.primary,
            go_output=go_output,
            python_output=python.output,
            python_error=python.error,
            blocks=blocks,
            complete=complete,
        )
