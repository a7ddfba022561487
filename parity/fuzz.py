"""Stateless differential fuzzing: an example of :func:`fuzz_reference` plays a pool of
calls over each of its :func:`archives`, through a fresh host, against Go's own tools; a
divergence shrinks to a ready corpus case. :func:`fuzz_go_url` reads a running Go's
archive. The profiles ``ci`` (derandomized, bounded) and ``dev`` are registered on import."""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from parity import rig
from parity.corpora.recall import plain_id_seq, symbolic_args
from parity.corpus import CorpusBlock, CorpusCall
from parity.errors import ParityError
from parity.goclient import GoClient, GoConnection
from parity.probe import probe
from parity.report import mismatch_report
from parity.strategies import INT64_MAX, BlockSpec, block_sets, call_pools, calls, words_of
from recall._tools import replace_surrogates

PROFILES = ("ci", "dev")
_HEALTH = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.large_base_example]
_COMMON: dict[str, Any] = {"deadline": None, "print_blob": True, "suppress_health_check": _HEALTH}
# ci: a stateless example plays a pool of calls over many archives; dev: derandomize off
# explicitly, as under CI=true Hypothesis's own default is derandomized
settings.register_profile("ci", derandomize=True, max_examples=50, database=None, **_COMMON)
settings.register_profile("dev", derandomize=False, max_examples=1000, **_COMMON)

CALLS_PER_EXAMPLE = 20
"""At most this many calls in an example of the fuzzer over a running Go."""

POOL = 64
"""The calls a stateless example draws, at most: its pool, played over each of its archives."""

ARCHIVES = 12
"""A stateless example's blocks are archived in this many steps at most, then their
memories locked in as many (:func:`archives`)."""

FIRST_SEQS = (1000, 1, 7, 2**53 - 3, INT64_MAX - 64)
"""The first seq of each fresh Go: small, beyond float64's exact integers, near int64's end."""


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
    blocks: tuple[tuple[int, BlockSpec], ...]  # with their seqs: all, or those the case cites
    go_output: str
    python_output: str
    reasons: tuple[str, ...]
    host_requests: tuple[str, ...] = ()
    first_seq: int | None = None
    archived: int | None = None  # how many blocks the Go held

    @property
    def case(self) -> str:
        """A kebab-case case name, stable for the same call and blocks."""
        key = repr((self.tool, self.args, self.blocks)).encode("utf-8", "replace")
        return f"fuzz-{self.tool.replace('_', '-')}-{hashlib.sha256(key).hexdigest()[:8]}"

    def symbolic_args(self) -> str:
        """The args, each archived seq a ``recall`` string cites in decimal as ``{{seq:NAME}}``."""
        names = {seq: f"{self.case}-b{i}" for i, (seq, _) in enumerate(self.blocks)}
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
            named = CorpusBlock(f"{self.case}-b{i}", block.label, block.content, block.locked)
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
        call = (self.tool, self.args, "python GoTurnHost")
        head = report_head(self, f"{len(self.blocks)} blocks archived{where}", call)
        return "\n".join([*head, self.corpus_case()])

    def size(self) -> tuple[int, int, int]:
        """Its blocks, the args' length, the blocks' characters."""
        blocks = self.blocks
        return (len(blocks), len(self.args), sum(len(b.label + b.content) for _, b in blocks))


def report_head(divergence: Any, what: str, call: tuple[str, str, str] | None) -> list[str]:
    """A divergence report's first lines: its name, ``what``, its reasons, its requests;
    then, for a ``(tool, args, host)`` call, Go's output and the host's, made visible."""
    lines = [
        f"DIVERGENCE {divergence.case} ({what})",
        *(f"  - {reason}" for reason in divergence.reasons),
        f"  host requests: {list(divergence.host_requests)}",
    ]
    if call is not None:
        tool, args, host = call
        lines.append(
            mismatch_report(
                title=f"MISMATCH {divergence.case}",
                tool=tool,
                args=args,
                expected=divergence.go_output,
                actual=divergence.python_output,
                expected_name="go /tool/exec",
                actual_name=host,
            )
        )
    return lines


# -- against fresh Go references ---------------------------------------------------


def static_divergence(
    played: rig.Played,
    expected: str,
    reasons: tuple[str, ...],
    blocks: Sequence[tuple[int, BlockSpec]],
    first_seq: int | None,
) -> Divergence:
    """The divergence of a call played over a static archive of ``blocks`` (of more than 12:
    those the call or the outputs cite)."""
    cited = tuple(blocks)
    if len(blocks) > 12:
        text = f"{expected} {played.output}" + (played.args if played.tool == "recall" else "")
        cited = tuple((s, b) for s, b in blocks if re.search(rf"(?<!\d){s}(?!\d)", text))
    output, requests = played.output, played.requests
    return Divergence(
        played.tool, played.args, cited, expected, output, reasons, requests, first_seq, len(blocks)
    )


def archives(n: int) -> list[tuple[int, int]]:
    """An example's archives of ``n`` blocks as ``(archived, locked)`` (the first ``locked``
    under a locked memory): the blocks as they grow, in :data:`ARCHIVES` steps evenly apart
    at most, then locked as many (but the last: none readable is the empty archive)."""
    ends = sorted({-(-n * k // ARCHIVES) for k in range(1, ARCHIVES + 1)} | {n})
    return [(end, 0) for end in ends] + [(n, k) for k in ends if 0 < k < n]


@dataclass
class _Example:
    """A stateless example: its pool over each of its :func:`archives`, the Go's archive
    emptied and filled again for each, a fresh host for each."""

    run: rig.Run
    session: rig.GoSession
    first_seq: int
    specs: Sequence[BlockSpec]
    spec: rig.HostSpec

    def compare(self, pool: Sequence[tuple[str, str]]) -> None:
        """DivergenceFound at the first call that diverges (Abort on a harness error)."""
        run, session, stats = self.run, self.session, self.run.stats
        for archived, locked in archives(len(self.specs)):
            blocks = [
                (self.first_seq + i, replace(b, locked=True) if i < locked else b)
                for i, b in enumerate(self.specs[:archived])
            ]
            state = rig.state_key(blocks)
            if not (batch := stats.fresh(state, pool)):
                continue
            try:
                session.load(self.first_seq, [b for _, b in blocks])
                stats.archives += 1
                at = len(run.recording)
                # a fresh host: what a host keeps is stateful's
                with contextlib.closing(run.host(self.spec, session)) as host:
                    played = host.play_many(batch)
                expected, log, _ = session.settle(batch)  # Go's outputs and log in one request
                log_reasons = rig.log_verdict(log, run.recording[at:])
                unmatched = self.pinpoint(blocks, batch, log_reasons) if log_reasons else None
            except rig.HARNESS_ERRORS as exc:
                raise rig.Abort(exc) from exc
            for call, output in zip(played, expected, strict=True):
                stats.count(state, call.tool, call.args)
                if reasons := rig.verdict(call, output):
                    run.diverged(static_divergence(call, output, reasons, blocks, self.first_seq))
            if unmatched is not None:
                run.diverged(unmatched)

    def pinpoint(
        self,
        blocks: Sequence[tuple[int, BlockSpec]],
        batch: Sequence[tuple[str, str]],
        reasons: tuple[str, ...],
    ) -> Divergence:
        """The call whose requests the Go's log does not match, ``batch`` played again over
        ``blocks`` and the log read after each call (else the first call, with ``reasons``)."""
        self.session.load(self.first_seq, [b for _, b in blocks])
        with contextlib.closing(self.run.host(self.spec, self.session)) as host:
            for tool, args in batch:
                (played,) = host.play_many([(tool, args)])
                (expected,), log, _ = self.session.settle([(tool, args)])
                if call_reasons := rig.log_verdict(log, played.requests):
                    return static_divergence(played, expected, call_reasons, blocks, self.first_seq)
            (played,) = host.play_many(batch[:1])
        (expected,), _, _ = self.session.settle([batch[0]])
        return static_divergence(played, expected, reasons, blocks, self.first_seq)


def fuzz_reference(run: rig.Run) -> rig.FuzzStats:
    """Fuzz calls over static archives; the run's stats, a divergence (shrunk for the
    run's ``shrink_seconds`` at most) in ``divergences``."""

    @run.settings_with()
    @given(st.sampled_from(FIRST_SEQS), block_sets(), st.booleans(), rig.HOST_SPECS, st.data())
    def fuzz_against_reference(
        first_seq: int, specs: list[BlockSpec], etag: bool, spec: rig.HostSpec, data: st.DataObject
    ) -> None:
        seqs = range(first_seq, first_seq + len(specs))
        pool = data.draw(call_pools(seqs, words_of(specs), max_size=POOL), label="pool")
        with run.example():
            session = run.session(mode="etag" if etag else "plain")
            _Example(run, session, first_seq, specs, spec).compare(list(dict.fromkeys(pool)))

    with contextlib.closing(run):
        run.fuzz(fuzz_against_reference)
    return run.stats


# -- against a running Go -------------------------------------------------------------


def fuzz_go_url(connection: GoConnection, run: rig.Run) -> rig.FuzzStats:
    """Fuzz calls over a running Go's archive, read only: Go's outputs from its /tool/exec,
    the fallback checked on the host's own requests (the Go's log may hold other clients'),
    the Go's Unicode version probed."""
    with GoClient(connection) as go, contextlib.closing(run):
        blocks = [(b.seq, BlockSpec(b.label, b.content)) for b in go.blocks()]
        some = calls(tuple(seq for seq, _ in blocks), words_of(b for _, b in blocks))
        state = rig.state_key(blocks)

        @run.settings_with()
        @given(batch=st.lists(some, min_size=1, max_size=CALLS_PER_EXAMPLE))
        def fuzz_against_go_url(batch: list[tuple[str, str]]) -> None:
            with run.example():
                for tool, args in batch:
                    try:
                        expected = go.exec_tool(tool, replace_surrogates(args))
                    except rig.HARNESS_ERRORS as exc:
                        raise rig.Abort(exc) from exc
                    (played,) = host.play_many([(tool, args)])
                    run.stats.count(state, tool, args)
                    if reasons := rig.verdict(played, expected):
                        run.diverged(static_divergence(played, expected, reasons, blocks, None))

        host = rig.Host(rig.HostSpec(), connection, run, unicode_version=probe(connection))
        with contextlib.closing(host):  # built last: nothing can raise before it is closed
            run.fuzz(fuzz_against_go_url)
    return run.stats
