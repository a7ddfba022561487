"""parity.compare: two recordings compared modulo the seqs, never hiding a real change.

The recordings are made from the Go reference, started as a production Go would be
(its sequence at 1, its /debug routes off) or with ``-test-rewrite-output``, a Go
that answers some calls differently.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator

import pytest

from parity import record
from parity.compare import compare
from parity.corpus import Corpus, CorpusBlock, CorpusCall, get_corpus
from parity.fixtures.go import FreshGo, start_reference
from parity.journal import Journal
from parity.reference import GoReference

from .conftest import SmallGolden

pytestmark = pytest.mark.go

CORPUS = get_corpus("recall")
FEW = (
    "recall-id-plain",
    "recall-id-inner-space",
    "recall-id-below-first",
    "search-limit-one",
    "search-accents",
)
"""Cases whose outputs print seqs (a header, a quoted-back id, search results), and one
not comparable across seqs: recorded where a test needs a Go's answers to a few cases."""


@pytest.fixture(scope="module")
def at_one(go_build: GoReference) -> Iterator[Journal]:
    """The corpus recorded from a reference whose sequence starts at 1 (with its reads)."""
    with start_reference(go_build, first_seq=1) as go:
        yield record.record(CORPUS, go_url=go.base_url)


def _recorded(fresh_go: FreshGo, corpus: Corpus, **options: object) -> Journal:
    go = fresh_go(**options)
    return record.record(corpus, go_url=go.base_url)


def test_another_seq_base_is_no_drift_and_says_so(golden: Journal, at_one: Journal) -> None:
    literally = [c.case for c in at_one.calls if c.output != golden.call(c.case).output]
    assert len(literally) > 90  # the seqs the outputs print did differ
    drift = compare(golden, at_one)
    assert not drift
    assert drift.changes == {}
    assert (drift.first_seqs, drift.shifted) == ((1000, 1), True)
    assert drift.not_recorded == {}  # the reads were recorded, and mapped: none differs
    # r1 is no block at 1000, and block 'accents' at 1: that case is not comparable.
    assert list(drift.incomparable) == ["recall-id-below-first"]
    assert "  seqs:    only the seq base differs (first seq 1000 -> 1)" in "\n".join(drift.notes())


def test_the_mapping_is_both_ways(golden: Journal, at_one: Journal) -> None:
    back = compare(at_one, golden)
    assert not back
    assert back.first_seqs == (1, 1000)
    drift = compare(golden, at_one)
    for case in ("recall-id-plain", "search-limit-one", "recall-id-inner-space"):
        mapped, before = drift.in_old_seqs(case), golden.call(case)
        assert (mapped.output, mapped.reads) == (before.output, before.reads)


def test_a_production_go_reports_neither_reads_nor_versions(
    small_golden: SmallGolden, fresh_go: FreshGo
) -> None:
    small = small_golden(*FEW)
    golden = small.journal
    production = _recorded(fresh_go, small.corpus, first_seq=1, debug=False)
    assert {c.reads for c in production.calls} == {None}
    drift = compare(golden, production)
    assert not drift
    compared = len(golden.calls) - len(drift.incomparable)
    assert drift.not_recorded == {
        "new": (
            f"the reads of {compared} calls",
            "go_version",  # its Unicode version is probed from its tools
            "goos",
            "goarch",
        )
    }


# A Go that answers some calls differently, at seq base 1. Each rewrite is what Go
# prints at base 1; the marker is what the committed journal (base 1000) holds where
# that Go answers differently: exactly the cases whose output holds it must change.
_ACCENTS = CORPUS.blocks[0]
_UNICODE = CORPUS.blocks[1]
_REWRITES = {
    "a-text-not-a-seq": ({"crème": "creme"}, "crème"),
    "a-wrong-seq-in-a-header": ({"[r1] Recette": "[r2] Recette"}, "[r1000] Recette"),
    "a-header-with-leading-zeros": ({"[r1] Recette": "[r01] Recette"}, "[r1000] Recette"),
    "the-right-seq-of-another-block": (
        {
            f"[r2] {_UNICODE.label}\n{_UNICODE.content}": (
                f"[r2] {_ACCENTS.label}\n{_ACCENTS.content}"
            )
        },
        f"[r1001] {_UNICODE.label}\n{_UNICODE.content}",
    ),
    "a-wrong-seq-in-a-search-result": (
        {"[r34] deploy log 24 (score": "[r33] deploy log 24 (score"},
        "[r1033] deploy log 24 (score",
    ),
    "the-right-seq-of-another-block-in-a-search-result": (
        {
            "[r34] deploy log 24 (score 3)\n  Deploy step 24 of": (
                "[r34] deploy log 23 (score 3)\n  Deploy step 23 of"
            )
        },
        "[r1033] deploy log 24 (score 3)\n  Deploy step 24 of",
    ),
    "a-wrong-seq-quoted-back": ({'"r-1"': '"r-2"'}, 'no archived block "r-1000"'),
}


@pytest.mark.parametrize(("rewrite", "marker"), _REWRITES.values(), ids=list(_REWRITES))
def test_a_go_that_answers_differently_is_drift_naming_exactly_those_cases(
    golden: Journal,
    at_one: Journal,
    small_golden: SmallGolden,
    fresh_go: FreshGo,
    rewrite: dict[str, str],
    marker: str,
) -> None:
    expected = [c.case for c in golden.calls if marker in c.output]
    assert expected
    # Recorded: every case whose output at base 1 holds what the Go rewrites, and a few
    # others. The rest answer as in `at_one`, which is no drift (the seq base test).
    touched = [c.case for c in at_one.calls if any(text in c.output for text in rewrite)]
    small = small_golden(*expected, *touched, *FEW)
    changed = _recorded(fresh_go, small.corpus, first_seq=1, debug=False, rewrite_output=rewrite)
    drift = compare(small.journal, changed)
    assert drift
    assert tuple(drift.changes) == tuple(expected)
    assert set(drift.changes.values()) == {("output",)}


def test_a_changed_read_is_drift(golden: Journal, at_one: Journal) -> None:
    plain = at_one.call("recall-id-plain")
    assert plain.reads == ("block?seq=1",)
    wrong = dataclasses.replace(plain, reads=("block?seq=2",))  # block 'unicode-case', not 1
    calls = tuple(wrong if c.case == plain.case else c for c in at_one.calls)
    drift = compare(golden, dataclasses.replace(at_one, calls=calls))
    assert drift.changes == {"recall-id-plain": ("reads",)}


def test_versions_both_gos_report_are_compared_unknown_ones_are_not(golden: Journal) -> None:
    rb = golden.recorded_by
    newer = dataclasses.replace(rb, go_version="go9.9", unicode_version="unknown", instance="live")
    drift = compare(golden, dataclasses.replace(golden, recorded_by=newer))
    assert drift.other == (f"recorded_by.go_version ({rb.go_version} -> go9.9)",)
    assert drift.not_recorded == {"new": ("unicode_version",)}
    assert "  instance: reference -> live" in drift.notes()


def test_cases_added_removed_and_reordered(golden: Journal) -> None:
    fewer = dataclasses.replace(golden, calls=golden.calls[1:])
    assert compare(golden, fewer).removed == (golden.calls[0].case,)
    assert compare(fewer, golden).added == (golden.calls[0].case,)
    swapped = dataclasses.replace(
        golden, calls=(golden.calls[1], golden.calls[0], *golden.calls[2:])
    )
    assert compare(golden, swapped).other == ("calls (order)",)
    assert compare(golden, golden).identical


def test_every_read_of_the_journal_is_a_cited_block_or_a_declared_literal(
    golden: Journal,
) -> None:
    """``literal_seqs`` is complete: a seq Go read that no ``{{seq:NAME}}`` cites is declared."""
    for call in golden.calls:
        wanted = CORPUS.call(call.case)
        cited = {golden.seqs[name] for name in wanted.block_names()}
        for read in call.reads or ():
            if read.startswith("block?seq="):
                seq = int(read.removeprefix("block?seq="))
                assert seq in cited | set(wanted.literal_seqs), (call.case, read)


def test_quoted_back_ids_map_only_the_cited_seq(golden: Journal) -> None:
    call = golden.call("recall-id-inner-space")  # {"id": "r1 {{seq:accents}}"}
    assert call.output == 'no archived block "r1 1000"'
    assert CORPUS.printed_seqs is not None
    sites = CORPUS.printed_seqs(
        call.tool,
        call.output,
        template=CORPUS.call(call.case).args,
        seqs=golden.seqs,
        labels={b.seq: b.label for b in golden.blocks},
    )
    assert [(call.output[s.start : s.end], s.start, s.name) for s in sites] == [
        ("1000", call.output.index("1000"), "accents")
    ]


# --- a literal r7 in a block: never a false alarm, never hiding one --------------------
#
# Blocks whose labels and contents hold r7, [r7] (as a header would start) and r1007:
# at seq base 1 there is a block 7, at base 1000 a block 1007. A mapping that looked
# for digits in the text would map them, and find a change where there is none (r7 is
# a seq at base 1, not at 1000), or hide one (r1007 at 1000 and r8 at 1 are one block).

_R7_TEXT = "[r7] quoted header\nsee r7, [r7] and r1007\n[r1007] another header"
_R7 = Corpus(
    name="recall",
    blocks=(
        *(CorpusBlock(f"b{i}", f"label {i}", f"content {i}") for i in range(10)),
        CorpusBlock("tricky", "r7 notes [r7]", _R7_TEXT),
        CorpusBlock("quoted", "[r1007]", "r7\n[r7] (score 3)\n  r7"),
    ),
    calls=(
        CorpusCall("recall-tricky", "recall", '{"id": "r{{seq:tricky}}"}'),
        CorpusCall("recall-quoted", "recall", '{"id": "r{{seq:quoted}}"}'),
        CorpusCall("recall-seven", "recall", '{"id": "r7"}', (7,)),
        CorpusCall("recall-missing-id", "recall", "{}"),  # recall needs an "id", such as "r7"
        CorpusCall("search-r7", "recall_search", '{"query": "r7 r1007", "limit": 20}'),
        CorpusCall("search-header", "recall_search", '{"query": "quoted header"}'),
        CorpusCall("search-no-match", "recall_search", '{"query": "r7qq"}'),
    ),
    host=CORPUS.host,
    tools=CORPUS.tools,
    printed_seqs=CORPUS.printed_seqs,
)


def _r7_recording(fresh_go: FreshGo, **options: object) -> Journal:
    go = fresh_go(**options)
    return record.record(_R7, go_url=go.base_url)


def test_a_literal_r7_in_a_block_is_no_false_alarm(fresh_go: FreshGo) -> None:
    at_1000 = _r7_recording(fresh_go, first_seq=1000)
    at_1 = _r7_recording(fresh_go, first_seq=1)
    assert "[r7] quoted header" in at_1.call("recall-tricky").output
    assert at_1.seqs["b6"] == 7  # r7 is a block's seq at base 1
    drift = compare(at_1000, at_1, corpus=_R7)
    assert not drift, drift.lines()
    assert list(drift.incomparable) == ["recall-seven"]  # r7: absent at 1000, b6 at 1


def test_a_literal_r1007_in_a_block_does_not_hide_a_change(fresh_go: FreshGo) -> None:
    at_1000 = _r7_recording(fresh_go, first_seq=1000)
    assert at_1000.seqs["b7"] == 1007
    # At base 1, block b7 is r8: this Go turns the text r1007 into r8.
    at_1 = _r7_recording(fresh_go, first_seq=1, rewrite_output={"r1007": "r8"})
    drift = compare(at_1000, at_1, corpus=_R7)
    expected = [c.case for c in at_1000.calls if "r1007" in c.output]
    assert expected
    assert tuple(drift.changes) == tuple(expected)
