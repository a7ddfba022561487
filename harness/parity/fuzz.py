"""Differential fuzzing: ``GoTurnHost.exec_tool`` against a live Go, with Hypothesis.

Each example archives a block set (:func:`parity.strategies.block_sets`) into a
fresh Go reference, then plays calls (:func:`parity.strategies.calls`) through a
``GoTurnHost`` reading that Go's archive and through the Go's own
``/internal/v1/tool/exec``. The outputs must be equal byte for byte, and the host
must not have fallen back on ``POST /internal/v1/tool/exec`` (checked on the Go's
``/debug/requests`` log and on the host's own transport). A divergence shrinks,
and is reported as a ready corpus case (``CorpusBlock``/``CorpusCall``).

The Hypothesis settings profiles ``ci`` (derandomized, bounded) and ``dev``
(longer) are registered here, on import; ``HYPOTHESIS_PROFILE`` selects one for
:func:`profile`. ``parity fuzz`` runs :func:`cli_main`.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import re
import secrets
import sys
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import httpx
from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st

from parity.corpora.recall import plain_id_seq, symbolic_args
from parity.corpus import CorpusBlock, CorpusCall
from parity.errors import GoReferenceError, ParityError
from parity.goclient import (
    BLOCK_PATH,
    BLOCKS_PATH,
    EXEC_PATH,
    TOKEN_ENV,
    GoClient,
    GoConnection,
    add_go_options,
    connection_from_options,
)
from parity.reference import GoReference, RunningReference
from parity.report import mismatch_report
from parity.strategies import INT64_MAX, BlockSpec, block_sets, calls, words_of
from recall import GoTurnHost

__all__ = [
    "CALLS_PER_EXAMPLE",
    "EXEC_REQUEST",
    "FIRST_SEQS",
    "PROFILES",
    "SHRINK_SECONDS",
    "Divergence",
    "DivergenceFound",
    "FuzzStats",
    "cli_main",
    "fuzz_go_url",
    "fuzz_reference",
    "profile",
]

PROFILES = ("ci", "dev")
_HEALTH = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.large_base_example]
settings.register_profile(
    "ci",
    derandomize=True,
    max_examples=150,
    deadline=None,
    print_blob=True,
    database=None,
    suppress_health_check=_HEALTH,
)
settings.register_profile(
    "dev",
    derandomize=False,  # explicit: under CI=true Hypothesis's own default is derandomized
    max_examples=1000,
    deadline=None,
    print_blob=True,
    suppress_health_check=_HEALTH,
)

SHRINK_SECONDS = 60.0
"""Shrinking a divergence stops after this long, with the smallest one found."""

CALLS_PER_EXAMPLE = 20
"""At most this many calls are played against each archived block set."""

FIRST_SEQS = (1000, 1, 7, 2**53 - 3, INT64_MAX - 64)
"""The first seq of each fresh Go: small, beyond float64's exact integers, near int64's end."""

EXEC_REQUEST = f"POST {EXEC_PATH}"
_READ_REQUESTS = (f"GET {BLOCK_PATH}?", f"GET {BLOCKS_PATH}")
_SURROGATE = re.compile("[\ud800-\udfff]")
_MISSING = ('recall needs an "id", such as "r7"', 'recall_search needs a "query"')


def profile(name: str | None = None) -> settings:
    """The settings profile ``name``, else ``$HYPOTHESIS_PROFILE``, else ``ci``."""
    chosen = name or os.environ.get("HYPOTHESIS_PROFILE") or "ci"
    if chosen not in PROFILES:
        raise ParityError(f"unknown Hypothesis profile {chosen!r} (known: {', '.join(PROFILES)})")
    return settings.get_profile(chosen)


# -- results --------------------------------------------------------------------------


@dataclass(frozen=True)
class Divergence:
    """A call whose Python run differs from the Go's: outputs, fallback or archive reads."""

    tool: str
    args: str
    blocks: tuple[tuple[int, BlockSpec], ...]
    """The archived blocks with their seqs (all of them, or the ones the case cites)."""
    go_output: str
    python_output: str
    reasons: tuple[str, ...]
    host_requests: tuple[str, ...] = ()
    first_seq: int | None = None
    archived: int | None = None
    """How many blocks the Go held (more than ``blocks`` when only the cited are kept)."""

    @property
    def case(self) -> str:
        """A kebab-case case name, stable for the same call and blocks."""
        digest = hashlib.sha256(
            repr((self.tool, self.args, self.blocks)).encode("utf-8", "replace")
        )
        return f"fuzz-{self.tool.replace('_', '-')}-{digest.hexdigest()[:8]}"

    def block_name(self, index: int) -> str:
        """The corpus name of the ``index``-th block."""
        return f"{self.case}-b{index}"

    def symbolic_args(self) -> str:
        """The args with each archived seq that a ``recall`` string cites in decimal
        (leading zeros kept) as ``{{seq:NAME}}``.
        """
        names = {seq: self.block_name(i) for i, (seq, _) in enumerate(self.blocks)}
        return symbolic_args(self.tool, self.args, names)

    def cites_literally(self) -> bool:
        """Whether a ``recall`` case's args cite an archived seq only in escaped digits."""
        return (
            self.tool == "recall"
            and "{{seq:" not in self.symbolic_args()
            and any(seq == plain_id_seq(self.args) for seq, _ in self.blocks)
        )

    def corpus_case(self) -> str:
        """The case as Python source for ``parity/corpora/recall.py``: blocks, then the call."""
        lines = ["# blocks (add to BLOCKS):"]
        if self.archived is not None and self.archived > len(self.blocks):
            lines.append(
                f"# {len(self.blocks)} of the {self.archived} blocks archived:"
                " those the call or the outputs cite"
            )
        for i, (_, block) in enumerate(self.blocks):
            named = CorpusBlock(self.block_name(i), block.label, block.content, block.locked)
            lines.append(named.source() + ",")
        lines.append("# call (add to CALLS):")
        lines.append(CorpusCall(self.case, self.tool, self.symbolic_args()).source() + ",")
        if self.cites_literally():
            lines.append(
                f"# the id cites seq {plain_id_seq(self.args)} in escaped digits: "
                "write the corpus's seq for that block in their place"
            )
        return "\n".join(lines)

    def report(self) -> str:
        """What diverged, both outputs made visible, and the ready corpus case."""
        where = f", first seq {self.first_seq}" if self.first_seq is not None else ""
        lines = [
            f"DIVERGENCE {self.case} ({len(self.blocks)} blocks archived{where})",
            *(f"  - {reason}" for reason in self.reasons),
            f"  host requests: {list(self.host_requests)}",
            mismatch_report(
                case=self.case,
                tool=self.tool,
                args=self.args,
                expected=self.go_output,
                actual=self.python_output,
                expected_name="go /tool/exec",
                actual_name="python GoTurnHost",
            ),
            self.corpus_case(),
        ]
        return "\n".join(lines)


class DivergenceFound(AssertionError):
    """Raised inside a fuzz example for a divergence, so Hypothesis shrinks it."""

    def __init__(self, divergence: Divergence) -> None:
        super().__init__(divergence.report())
        self.divergence = divergence


class _Abort(BaseException):
    """A harness error inside an example: ends the run at once, without shrinking."""

    def __init__(self, error: BaseException) -> None:
        super().__init__(str(error))
        self.error = error


class _TimeUp(BaseException):
    """The time budget is spent (raised between examples, never while shrinking)."""


class _ShrinkTimeUp(BaseException):
    """Shrinking has taken its time: the smallest divergence so far is the result."""


@dataclass
class _Clock:
    """The run's time budget, and shrinking's (counted from the first divergence)."""

    deadline: float | None
    shrink_seconds: float
    found_at: float | None = None

    def tick(self, stats: FuzzStats) -> None:
        """Before playing an example: end the run when its time is spent, nothing found."""
        spent = self.deadline is not None and time.monotonic() > self.deadline
        if spent and not stats.divergences:
            raise _TimeUp

    def shrink_spent(self) -> bool:
        """Whether a divergence was found longer ago than the shrinking's budget."""
        if self.found_at is None:
            return False
        return time.monotonic() - self.found_at > self.shrink_seconds


@dataclass
class FuzzStats:
    """What a fuzz run did."""

    examples: int = 0
    calls: int = 0
    archives: int = 0
    seconds: float = 0.0
    divergences: list[Divergence] = field(default_factory=list)

    def summary(self) -> str:
        """One line: examples, calls, rates and divergences."""
        secs = max(self.seconds, 1e-9)
        return (
            f"{self.examples} examples ({self.calls} distinct calls compared,"
            f" {self.archives} fresh Go archives)"
            f" in {self.seconds:.1f} s: {self.examples / secs:.1f} examples/s,"
            f" {self.calls / secs:.1f} calls/s; {len(self.divergences)} divergences"
        )


# -- one Go, one host -----------------------------------------------------------------


class _Recorder(httpx.BaseTransport):
    """An httpx transport that notes ``"METHOD /path?query"`` of every request it sends."""

    def __init__(self, connection: GoConnection) -> None:
        self._inner = connection.transport()
        self.seen: list[str] = []

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        self.seen.append(f"{request.method} {request.url.raw_path.decode('ascii')}")
        return self._inner.handle_request(request)

    def close(self) -> None:
        self._inner.close()


def _go_text(text: str) -> str:
    """``text`` as a Go string holds it: every surrogate code point becomes U+FFFD."""
    return _SURROGATE.sub("\ufffd", text)


class _Checker:
    """Plays calls through a GoTurnHost and through the Go, and compares them."""

    def __init__(
        self,
        go: GoClient,
        blocks: Sequence[tuple[int, BlockSpec]],
        *,
        server_log: bool,
        first_seq: int | None = None,
    ) -> None:
        self.go = go
        self.blocks = tuple(blocks)
        self.first_seq = first_seq
        self.seqs = [seq for seq, _ in self.blocks]
        self.words = words_of(t for _, b in self.blocks for t in (b.label, b.content))
        connection = go.connection
        self._recorder = _Recorder(connection)
        self.host = GoTurnHost(
            connection.base_url, token=connection.token, transport=self._recorder
        )
        self._log_at = len(go.requests()) if server_log else None
        self._checked: dict[tuple[str, str], Divergence | None] = {}
        self.compared = 0
        self.calls = st.lists(calls(self.seqs, self.words), min_size=1, max_size=CALLS_PER_EXAMPLE)

    def close(self) -> None:
        self.host.close()

    def _server_requests(self) -> list[str] | None:
        """The host's requests in the Go's log, after the fuzzer's own exec."""
        if self._log_at is None:
            return None
        log = self.go.requests(since=self._log_at)
        if log[:1] != [EXEC_REQUEST]:
            raise GoReferenceError(
                f"the Go's request log is not the fuzzer's alone: expected {EXEC_REQUEST!r} "
                f"at {self._log_at}, found {log[:1]!r}"
            )
        self._log_at += len(log)
        return log[1:]

    def check(self, tool: str, args: str) -> Divergence | None:
        """Compare one call (once: the same call gives the same answer); the divergence,
        or None when Python and Go agree.
        """
        key = (tool, args)
        if key not in self._checked:
            self._checked[key] = self._check(tool, args)
            self.compared += 1
        return self._checked[key]

    def _check(self, tool: str, args: str) -> Divergence | None:
        expected = self.go.exec_tool(tool, _go_text(args))
        self._recorder.seen.clear()
        reasons: list[str] = []
        try:
            actual = self.host.exec_tool(tool, args)
        except Exception as exc:  # any error of the host is a divergence, never a crash
            actual = f"<{type(exc).__name__}: {exc}>"
            reasons.append(f"the host raised {type(exc).__name__}")
        client_seen = list(self._recorder.seen)
        server_seen = self._server_requests()
        seen = client_seen if server_seen is None else server_seen
        if actual != expected and not reasons:
            reasons.append("the outputs differ")
        if EXEC_REQUEST in client_seen or EXEC_REQUEST in seen:
            reasons.append(f"the host fell back on {EXEC_REQUEST}")
        if expected in _MISSING and any(r.startswith(_READ_REQUESTS) for r in seen):
            reasons.append("the host read the archive for a call without an id or a query")
        if server_seen is not None and server_seen != client_seen:
            reasons.append(f"the Go saw {server_seen}, the host sent {client_seen}")
        if not reasons:
            return None
        return Divergence(
            tool=tool,
            args=args,
            blocks=self._cited(tool, args, expected, actual),
            go_output=expected,
            python_output=actual,
            reasons=tuple(reasons),
            host_requests=tuple(seen),
            first_seq=self.first_seq,
            archived=len(self.blocks),
        )

    def _cited(self, tool: str, args: str, *outputs: str) -> tuple[tuple[int, BlockSpec], ...]:
        """The blocks a case needs: all of a small set, else those the call or outputs cite."""
        if len(self.blocks) <= 12:
            return self.blocks
        text = " ".join(outputs) + (args if tool == "recall" else "")
        return tuple((s, b) for s, b in self.blocks if re.search(rf"(?<!\d){s}(?!\d)", text))


# -- the reference run ----------------------------------------------------------------


class _ReferencePool:
    """Fresh Go references, one per (first seq, block set), the last few kept for shrinking."""

    def __init__(self, reference: GoReference, stats: FuzzStats, keep: int = 3) -> None:
        self._reference = reference
        self._stats = stats
        self._keep = keep
        self._live: OrderedDict[
            tuple[int, tuple[BlockSpec, ...]], tuple[RunningReference, _Checker]
        ] = OrderedDict()

    def checker(self, first_seq: int, specs: tuple[BlockSpec, ...]) -> _Checker:
        key = (first_seq, specs)
        if key in self._live:
            self._live.move_to_end(key)
            return self._live[key][1]
        while len(self._live) >= self._keep:
            _, (old, old_checker) = self._live.popitem(last=False)
            old_checker.close()
            old.stop()
        go = self._reference.start(first_seq=first_seq)
        try:
            archived = [(go.archive(b.label, b.content, locked=b.locked), b) for b in specs]
            checker = _Checker(go.client, archived, server_log=True, first_seq=first_seq)
        except BaseException:
            go.stop()
            raise
        self._stats.archives += 1
        self._live[key] = (go, checker)
        return checker

    def close(self) -> None:
        while self._live:
            _, (go, checker) = self._live.popitem()
            checker.close()
            go.stop()


def _play(
    checker: _Checker, batch: Iterable[tuple[str, str]], stats: FuzzStats, clock: _Clock
) -> None:
    """Check each call of a batch; raise DivergenceFound at the first divergence.

    Once shrinking's time is spent, a new example ends the run (``_ShrinkTimeUp``)
    unless it replays a divergence already found, as Hypothesis' final run does.
    """
    for tool, args in batch:
        before = checker.compared
        try:
            divergence = checker.check(tool, args)
        except (ParityError, httpx.HTTPError, OSError, ValueError) as exc:
            raise _Abort(exc) from exc
        stats.calls += checker.compared - before
        if divergence is not None:
            if divergence not in stats.divergences:
                if clock.shrink_spent():
                    raise _ShrinkTimeUp
                stats.divergences.append(divergence)
            if clock.found_at is None:
                clock.found_at = time.monotonic()
            raise DivergenceFound(divergence)
    if clock.shrink_spent():
        raise _ShrinkTimeUp


def _size(divergence: Divergence) -> tuple[int, int, int]:
    blocks = divergence.blocks
    return (len(blocks), len(divergence.args), sum(len(b.label + b.content) for _, b in blocks))


def _run(
    test: Callable[[], None], stats: FuzzStats, base: settings, seed_value: int | None
) -> Divergence | None:
    """Run a Hypothesis test; the shrunk divergence it found, if any."""
    if seed_value is not None:
        test = seed(seed_value)(test)
    started = time.monotonic()
    try:
        test()
    except _TimeUp:
        pass
    except _ShrinkTimeUp:
        return min(stats.divergences, key=_size)
    except _Abort as abort:
        raise abort.error from None
    except DivergenceFound as found:
        return found.divergence
    except BaseExceptionGroup as group:
        matched, rest = group.split(DivergenceFound)
        if rest is not None or matched is None:
            raise
        first = matched.exceptions[0]
        while isinstance(first, BaseExceptionGroup):
            first = first.exceptions[0]
        assert isinstance(first, DivergenceFound)
        return first.divergence
    finally:
        stats.seconds += time.monotonic() - started
    return None


def _settings(
    base: settings, examples: int | None, seconds: float | None, seed_value: int | None
) -> settings:
    changes: dict[str, Any] = {}
    if examples is not None:
        changes["max_examples"] = examples
    if seconds is not None:
        changes["max_examples"] = 10**9
    if seed_value is not None:
        changes["derandomize"] = False
    return settings(base, **changes)


def fuzz_reference(
    *,
    base: settings | None = None,
    examples: int | None = None,
    seconds: float | None = None,
    seed_value: int | None = None,
    reference: GoReference | None = None,
    stats: FuzzStats | None = None,
    shrink_seconds: float = SHRINK_SECONDS,
) -> FuzzStats:
    """Fuzz against fresh Go references, one per block set; the run's stats.

    A divergence ends the run once shrunk (for ``shrink_seconds`` at most) and is
    ``stats.divergences[0]``; a harness error (Go not built, not answering) is raised.
    """
    stats = stats if stats is not None else FuzzStats()
    chosen = _settings(base or profile(), examples, seconds, seed_value)
    clock = _Clock(None if seconds is None else time.monotonic() + seconds, shrink_seconds)
    pool = _ReferencePool(reference or GoReference(), stats)

    @chosen
    @given(first_seq=st.sampled_from(FIRST_SEQS), specs=block_sets(), data=st.data())
    def fuzz_against_reference(first_seq: int, specs: list[BlockSpec], data: st.DataObject) -> None:
        try:
            checker = pool.checker(first_seq, tuple(specs))
        except (ParityError, httpx.HTTPError, OSError, ValueError) as exc:
            raise _Abort(exc) from exc
        batch = data.draw(checker.calls, label="calls")
        clock.tick(stats)  # after every draw: a replay of this example draws the same
        stats.examples += 1
        _play(checker, batch, stats, clock)

    try:
        found = _run(fuzz_against_reference, stats, chosen, seed_value)
    finally:
        pool.close()
    _keep_shrunk(stats, found)
    return stats


def _keep_shrunk(stats: FuzzStats, found: Divergence | None) -> None:
    """Keep only the shrunk divergence (the ones met while shrinking are its drafts)."""
    stats.divergences[:] = [found] if found is not None else []


# -- against a running Go -------------------------------------------------------------


def fuzz_go_url(
    base_url: str | GoConnection,
    *,
    token: str | None = None,
    base: settings | None = None,
    examples: int | None = None,
    seconds: float | None = None,
    seed_value: int | None = None,
    stats: FuzzStats | None = None,
    shrink_seconds: float = SHRINK_SECONDS,
) -> FuzzStats:
    """Fuzz calls over a running Go's existing archive, without writing to it.

    ``base_url`` is a URL (with ``token``) or a ``GoConnection``. The fallback is
    checked on the requests the host itself sent (the Go's log may hold other
    clients' requests, or not exist).
    """
    stats = stats if stats is not None else FuzzStats()
    chosen = _settings(base or profile(), examples, seconds, seed_value)
    clock = _Clock(None if seconds is None else time.monotonic() + seconds, shrink_seconds)
    if isinstance(base_url, str):
        base_url = GoConnection(base_url, token=token)
    elif token is not None:
        raise ValueError("token goes with a URL; a GoConnection holds its own")
    go = GoClient(base_url)
    try:
        archived = [(b.seq, BlockSpec(b.label, b.content)) for b in go.blocks()]
        checker = _Checker(go, archived, server_log=False)
    except BaseException:
        go.close()
        raise

    @chosen
    @given(batch=checker.calls)
    def fuzz_against_go_url(batch: list[tuple[str, str]]) -> None:
        clock.tick(stats)  # after every draw: a replay of this example draws the same
        stats.examples += 1
        _play(checker, batch, stats, clock)

    try:
        found = _run(fuzz_against_go_url, stats, chosen, seed_value)
    finally:
        checker.close()
        go.close()
    _keep_shrunk(stats, found)
    return stats


# -- the command ----------------------------------------------------------------------


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="parity fuzz",
        description="Differential fuzzing of GoTurnHost.exec_tool against a live Go.",
    )
    amount = parser.add_mutually_exclusive_group()
    amount.add_argument("--examples", type=int, metavar="N", help="examples to run")
    amount.add_argument("--seconds", type=float, metavar="S", help="run for S seconds")
    add_go_options(
        parser.add_argument,
        url_help=f"fuzz over this running Go's archive, read only (token: ${TOKEN_ENV}); "
        "default: fresh Go references",
    )
    parser.add_argument(
        "--profile",
        choices=PROFILES,
        help="Hypothesis profile (default: $HYPOTHESIS_PROFILE, else dev)",
    )
    parser.add_argument("--seed", type=int, metavar="N", help="random seed (not derandomized)")
    return parser


def cli_main(argv: list[str]) -> int:
    """``parity fuzz``: 0 when no divergence, 1 when one was found, 2 on a harness error."""
    try:
        options = _parser().parse_args(argv)
    except SystemExit as exc:
        return 0 if exc.code == 0 else 2
    if options.examples is not None and options.examples < 1:
        print("parity fuzz: --examples must be at least 1", file=sys.stderr)
        return 2
    if options.seconds is not None and options.seconds <= 0:
        print("parity fuzz: --seconds must be positive", file=sys.stderr)
        return 2
    stats = FuzzStats()
    try:
        base = profile(options.profile or os.environ.get("HYPOTHESIS_PROFILE") or "dev")
        seed_value = options.seed
        if seed_value is None and not base.derandomize:
            # Our own seed, printed first: a run ended by --seconds is then no
            # "failure" that Hypothesis would offer to reproduce.
            seed_value = secrets.randbits(64)
        if seed_value is not None:
            print(f"parity fuzz: seed {seed_value} (again with --seed {seed_value})", flush=True)
        amount: dict[str, Any] = {
            "base": base,
            "examples": options.examples,
            "seconds": options.seconds,
            "seed_value": seed_value,
            "stats": stats,
            "shrink_seconds": SHRINK_SECONDS,
        }
        go = connection_from_options(
            options.go_url, ca=options.go_ca, cert=options.go_cert, key=options.go_key
        )
        if go is not None:
            print(f"parity fuzz: the Go at {go.url}, read only", flush=True)
            fuzz_go_url(go, **amount)
        else:
            print("parity fuzz: fresh Go references, one per block set", flush=True)
            fuzz_reference(**amount)
    except KeyboardInterrupt:
        print(f"parity fuzz: interrupted after {stats.summary()}", file=sys.stderr)
        return 2
    except (ParityError, httpx.HTTPError, OSError, ValueError) as exc:
        print(f"parity fuzz: harness error: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 2
    except Exception as exc:  # Hypothesis' own errors (health checks, flakiness)
        print(f"parity fuzz: harness error: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 2
    for divergence in stats.divergences:
        print(divergence.report(), flush=True)
    print(f"parity fuzz: {stats.summary()}", flush=True)
    return 1 if stats.divergences else 0
