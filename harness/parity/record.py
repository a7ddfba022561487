"""The recorder: plays a corpus into a Go and writes what it answered as a journal.

Against a Go reference started for it (``first_seq`` 1000, so re-recording gives
the same bytes) or a live Go (``go_url``; its token comes from the caller, which
reads ``PARITY_GO_TOKEN``, and is never written anywhere). The Go's archive must be
empty: the recorder archives the corpus's blocks, then twice reads the served
blocks and runs every call through ``POST /internal/v1/tool/exec``; it refuses a
Go whose two passes differ, in outputs or in reads.

The archive reads of each call are what ``GET /debug/reads`` (every read the Go's
tools made since it started, in order) gained during that call: the recorder takes
the list before the first call and after each one, runs the calls one at a time,
and refuses a list whose earlier reads changed (another client using the Go). A
live Go without ``/debug/reads`` (404) gives ``reads`` null: unknown, not checked.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, TextIO

import httpx

from parity import journal as journal_mod
from parity.compare import Drift, compare
from parity.corpus import Corpus
from parity.errors import JournalError, RecordError
from parity.journal import (
    UNKNOWN,
    VERSION_KEYS,
    Instance,
    Journal,
    JournalBlock,
    JournalCall,
    RecordedBy,
)
from parity.project import in_ci

__all__ = ["FIRST_SEQ", "TOKEN_ENV", "record", "run_record"]

FIRST_SEQ = 1000
"""The first seq of a reference started for recording (not 1, so seqs are not small counts)."""

TOKEN_ENV = "PARITY_GO_TOKEN"
"""The environment variable holding a live Go's token."""

_ARCHIVE = "/internal/v1/recall/archive"
_BLOCKS = "/internal/v1/recall/blocks"
_EXEC = "/internal/v1/tool/exec"
_VERSION = "/debug/version"
_READS = "/debug/reads"


class _Go:
    """The few requests the recorder makes, over one client; errors are RecordErrors."""

    def __init__(self, base_url: str, *, token: str | None, timeout: float = 30.0) -> None:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        self.base_url = base_url.rstrip("/")
        self._token = token
        self._http = httpx.Client(
            base_url=self.base_url, headers=headers, timeout=timeout, trust_env=False
        )

    def close(self) -> None:
        self._http.close()

    def _mask(self, text: str) -> str:
        return text.replace(self._token, "***") if self._token else text

    def request(self, method: str, path: str, what: str, *, body: Any = None) -> httpx.Response:
        try:
            return self._http.request(method, path, json=body)
        except httpx.HTTPError as e:
            detail = self._mask(f"{type(e).__name__}: {e}")
            raise RecordError(f"{what}: the Go at {self.base_url} did not answer: {detail}") from e

    def json(self, method: str, path: str, what: str, *, body: Any = None) -> Any:
        response = self.request(method, path, what, body=body)
        if response.status_code != 200:
            snippet = self._mask(response.text[:200])
            raise RecordError(f"{what}: the Go answered {response.status_code}: {snippet}")
        try:
            return response.json()
        except ValueError as e:
            raise RecordError(f"{what}: the Go's answer is not JSON: {e}") from e

    def version(self) -> dict[str, str] | None:
        response = self.request("GET", _VERSION, "version")
        if response.status_code == 404:
            return None
        if response.status_code != 200:
            raise RecordError(f"version: the Go answered {response.status_code}")
        doc = response.json()
        if not isinstance(doc, dict):
            raise RecordError("version: the Go's answer is not a JSON object")
        return {k: str(doc[k]) for k in VERSION_KEYS if isinstance(doc.get(k), str)}

    def reads(self) -> list[str] | None:
        """Every archive read the Go's tools made so far; None when it has no /debug/reads."""
        response = self.request("GET", _READS, "reads")
        if response.status_code == 404:
            return None
        if response.status_code != 200:
            snippet = self._mask(response.text[:200])
            raise RecordError(f"reads: the Go answered {response.status_code}: {snippet}")
        try:
            doc = response.json()
        except ValueError as e:
            raise RecordError(f"reads: the Go's answer is not JSON: {e}") from e
        reads = doc.get("reads") if isinstance(doc, dict) else None
        if not isinstance(reads, list) or not all(isinstance(r, str) for r in reads):
            raise RecordError('reads: the Go\'s answer has no "reads" array of strings')
        return reads

    def blocks(self) -> list[JournalBlock]:
        doc = self.json("GET", _BLOCKS, "blocks")
        items = doc.get("blocks") if isinstance(doc, dict) else None
        if not isinstance(items, list):
            raise RecordError('blocks: the Go\'s answer has no "blocks" array')
        blocks = []
        for item in items:
            try:
                seq, label, content = item["seq"], item["label"], item["content"]
            except (TypeError, KeyError) as e:
                raise RecordError(f"blocks: not a block: {item!r:.200}") from e
            if type(seq) is not int or not isinstance(label, str) or not isinstance(content, str):
                raise RecordError(f"blocks: not a block: {item!r:.200}")
            blocks.append(JournalBlock(seq, label, content))
        return blocks

    def archive(self, label: str, content: str, *, locked: bool) -> int:
        body = {"label": label, "content": content, "locked": locked}
        doc = self.json("POST", _ARCHIVE, f"archive {label!r:.60}", body=body)
        seq = doc.get("seq") if isinstance(doc, dict) else None
        if type(seq) is not int:
            raise RecordError(f"archive: the Go's answer has no integer seq: {doc!r:.200}")
        return seq

    def exec_tool(self, case: str, name: str, args: str) -> str:
        doc = self.json("POST", _EXEC, f"case {case!r}", body={"name": name, "args": args})
        output = doc.get("output") if isinstance(doc, dict) else None
        if not isinstance(output, str):
            raise RecordError(f'case {case!r}: the Go\'s answer has no "output" string')
        return output


def _archive(go: _Go, corpus: Corpus) -> dict[str, int]:
    present = go.blocks()
    if present:
        raise RecordError(
            f"the Go at {go.base_url} already holds {len(present)} readable blocks; "
            "record against an empty instance (a fresh one)"
        )
    seqs: dict[str, int] = {}
    last = 0
    for block in corpus.blocks:
        seq = go.archive(block.label, block.content, locked=block.locked)
        if seq <= last:
            raise RecordError(f"block {block.name!r}: seq {seq} does not follow {last}")
        seqs[block.name] = last = seq
    return seqs


_Pass = tuple[tuple[JournalBlock, ...], tuple[JournalCall, ...]]


def _pass(go: _Go, corpus: Corpus, seqs: Mapping[str, int]) -> _Pass:
    """One reading of everything: the served blocks, then every call's output."""
    blocks = go.blocks()
    expected = [
        JournalBlock(seqs[b.name], b.label, b.content) for b in corpus.blocks if not b.locked
    ]
    if blocks != expected:
        served = {b.seq for b in blocks}
        wanted = {b.seq for b in expected}
        detail = (
            f"seqs served but not expected: {sorted(served - wanted)}; "
            f"expected but not served: {sorted(wanted - served)}"
            if served != wanted
            else "a block's label or content came back changed"
        )
        raise RecordError(f"the served blocks are not the archived readable ones ({detail})")
    calls = []
    before = go.reads()
    for c in corpus.calls:
        args = c.resolve(seqs)
        output = go.exec_tool(c.case, c.tool, args)
        reads: tuple[str, ...] | None = None
        if before is not None:
            after = go.reads()
            if after is None or after[: len(before)] != before:
                raise RecordError(
                    f"case {c.case!r}: the Go's /debug/reads no longer lists the earlier reads "
                    "(restarted, or another client?); record against a Go used by no one else"
                )
            reads, before = tuple(after[len(before) :]), after
        calls.append(JournalCall(c.case, c.tool, args, output, reads))
    return tuple(blocks), tuple(calls)


def record(
    corpus: Corpus,
    *,
    go_url: str | None = None,
    token: str | None = None,
    versions: Mapping[str, str] | None = None,
) -> Journal:
    """Record ``corpus`` from a fresh Go reference, or from the live Go at ``go_url``.

    ``versions`` gives the go_version, unicode_version, goos and goarch of a live Go
    that does not serve ``/debug/version``; what is missing is recorded "unknown".
    """
    if go_url is None:
        from parity.reference import GoReference

        with GoReference().start(first_seq=FIRST_SEQ) as reference:
            return _record(
                corpus, reference.base_url, token=None, instance="reference", versions=versions
            )
    return _record(corpus, go_url, token=token, instance="live", versions=versions)


def _record(
    corpus: Corpus,
    base_url: str,
    *,
    token: str | None,
    instance: Instance,
    versions: Mapping[str, str] | None,
) -> Journal:
    go = _Go(base_url, token=token)
    try:
        served = go.version() or {}
        meta = {k: served.get(k) or (versions or {}).get(k) or UNKNOWN for k in VERSION_KEYS}
        seqs = _archive(go, corpus)
        first, second = _pass(go, corpus, seqs), _pass(go, corpus, seqs)
    finally:
        go.close()
    if first != second:
        unstable = [
            a.case if a.output != b.output else f"{a.case} (reads)"
            for a, b in zip(first[1], second[1], strict=True)
            if a != b
        ]
        what = f"cases {', '.join(unstable)}" if unstable else "the served blocks"
        raise RecordError(f"the Go answered differently on the second pass ({what}); not written")
    return Journal(
        corpus=corpus.name,
        recorded_by=RecordedBy(
            go_version=meta["go_version"],
            unicode_version=meta["unicode_version"],
            goos=meta["goos"],
            goarch=meta["goarch"],
            instance=instance,
        ),
        seqs=seqs,
        blocks=first[0],
        calls=first[1],
    )


def run_record(
    corpus: Corpus,
    *,
    journal_path: str,
    go_url: str | None,
    token: str | None,
    versions: Mapping[str, str],
    check: bool,
    out: TextIO,
) -> int:
    """``parity record`` for one corpus; what it prints, and its exit status.

    With ``check``, nothing is written: 0 when the Go answers as the journal says
    (modulo the seqs, and what one side could not report), 1 on drift. Without it, a
    journal that is absent (or unusable) is written; one that the new recording
    differs from is kept, and the recording written beside it (``<journal>.new``)
    for ``parity review``: 1, the changes listed. 0 when nothing differs. Under CI
    nothing is written: ``RecordError``.
    """
    if not check and in_ci():
        raise RecordError(
            "CI is set: CI never writes a golden; `parity record --check` checks for drift"
        )
    source = go_url if go_url is not None else "a fresh Go reference"
    print(f"recording corpus {corpus.name!r} from {source}", file=out)
    new = record(corpus, go_url=go_url, token=token, versions=versions)
    pending = journal_mod.pending_path(journal_path)
    old: Journal | None = None
    try:
        old = journal_mod.load(journal_path)
    except JournalError as e:
        if check:
            raise
        if Path(journal_path).exists():
            print(f"the committed journal is unusable, replacing it: {e}", file=out)
    if check:
        assert old is not None
        return _check(compare(old, new, corpus=corpus), journal_path, out)
    if old is not None:
        drift = compare(old, new, corpus=corpus)
        if not drift.identical:
            journal_mod.write(new, pending)
            _report(
                out,
                f"{journal_path}: kept; the new recording differs, written to {pending}:",
                drift.lines() + drift.notes(),
                "review it: `parity review` (case by case), or `parity review --accept-all` "
                "or `--reject-all`",
            )
            return 1
        print(f"{journal_path}: no change ({len(new.calls)} calls)", file=out)
    else:
        journal_mod.write(new, journal_path)
        print(f"wrote {journal_path}: {len(new.blocks)} blocks, {len(new.calls)} calls", file=out)
    if pending.exists():
        pending.unlink()
        print(f"removed {pending}: the recording it held is out of date", file=out)
    return 0


def _check(drift: Drift, journal_path: str, out: TextIO) -> int:
    """``record --check``'s verdict on ``drift``: 0 no drift, 1 drift."""
    calls = len(drift.new.calls)
    if drift.identical:
        print(f"{journal_path}: matches the Go ({calls} calls)", file=out)
        return 0
    if not drift:
        how = "nothing the Go reports differs"
        if drift.first_seqs is not None:
            how = "only the seq base differs" if drift.shifted else "the seqs differ"
        head = f"{journal_path}: matches the Go modulo its seqs ({calls} calls): {how}"
        _report(out, head, drift.notes())
        return 0
    _report(
        out,
        f"{journal_path}: DRIFT, the Go no longer answers as recorded:",
        drift.lines() + drift.notes(),
        "record it with `parity record` (the same options, without --check), "
        "then `parity review` the changes",
    )
    return 1


def _report(out: TextIO, head: str, lines: list[str], hint: str | None = None) -> None:
    """A verdict: its first line, one line per difference, what to do next."""
    for line in [head, *lines, *([hint] if hint else [])]:
        print(line, file=out)
