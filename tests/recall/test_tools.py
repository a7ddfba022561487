"""The tools' pieces, over the in-memory archive: facts the contract states.

Full outputs are compared with the Go reference in test_host.py.
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Sequence

import pytest
from hypothesis import given
from hypothesis import strategies as st

from recall import Archive, Block, MemoryArchive, UnknownToolError, run_tool
from recall._tools import (
    MAX_SEQ,
    TEXT_MISSING_ID,
    TEXT_MISSING_QUERY,
    BlockRead,
    BlocksRead,
    excerpt,
    header,
    recall_id_to_seq,
    recall_tokens,
    score,
    search_limit,
    start_tool,
)


class RecordingArchive:
    """An archive that records its reads."""

    def __init__(self, blocks: Sequence[Block] = ()) -> None:
        self.inner = MemoryArchive(blocks)
        self.reads: list[str] = []

    def get_block(self, seq: int) -> Block | None:
        self.reads.append(f"get_block({seq})")
        return self.inner.get_block(seq)

    def all_blocks(self) -> Sequence[Block]:
        self.reads.append("all_blocks")
        return self.inner.all_blocks()


SAMPLE = [
    Block(7, "Notes", "alpha beta\nsecond line"),
    Block(8, "", ""),
    Block(9, "Alpha", "gamma"),
]


# recall_id_to_seq: the contract's examples.


@pytest.mark.parametrize(
    ("block_id", "seq"),
    [
        ("r7", 7),
        ("R7", 7),
        ("rR7", 7),
        (" r 7 ", 7),
        ("r007", 7),
        ("7", 7),
        ("r9223372036854775807", MAX_SEQ),
        ("r" + "0" * 5000 + "1", 1),  # leading zeros, however many
    ],
)
def test_id_to_seq_well_formed(block_id: str, seq: int) -> None:
    assert recall_id_to_seq(block_id) == seq


@pytest.mark.parametrize(
    "block_id",
    [
        "Rr7",
        "r-7",
        "r+7",
        "r0",
        "r000",
        "r7a",
        "r99999999999999999999",
        "r9223372036854775808",
        "r",
        "",
        "rr7",
        "r 7 7",
        "r\uff17",  # a digit, but not an ASCII one
        "r\u0667",
        "r7.0",
        "r1_000",
    ],
)
def test_id_to_seq_malformed(block_id: str) -> None:
    assert recall_id_to_seq(block_id) is None


# recall_tokens.


def test_tokens_lowered_cut_and_deduplicated() -> None:
    assert recall_tokens("Foo_BAR foo x ab AB") == ["foo", "bar", "ab"]


def test_tokens_go_lowering_of_dotted_i_and_sigma() -> None:
    assert recall_tokens("İİ") == ["ii"]  # Go lowers İ to i (Python's lower gives i + U+0307)
    assert recall_tokens("ΣΣ ab") == ["ab"]  # Go lowers Σ to U+03C3, not a term rune: it cuts


def test_tokens_latin1_range() -> None:
    assert recall_tokens("x÷y") == ["x÷y"]  # U+00F7 is in à-ÿ
    assert recall_tokens("straße") == ["stra"]  # ß (U+00DF) cuts; "e" is too short
    assert recall_tokens("ÀÉ ÿÿ") == ["àé", "ÿÿ"]


def test_tokens_none() -> None:
    assert recall_tokens("a b c ! ?? —") == []


# search_limit.


@pytest.mark.parametrize(
    ("value", "limit"),
    [
        (None, 5),
        (1.0, 1),
        (2.9, 2),
        (0.99, 5),
        (-1.0, 5),
        (20.0, 20),
        (21.0, 20),
        (1e300, 5),  # out of int64 range: MinInt64
        (-1e300, 5),
        (math.nan, 5),
        ("3", 5),  # another JSON type is ignored
        (True, 5),
    ],
)
def test_search_limit(value: object, limit: int) -> None:
    assert search_limit(value) == limit


# score, excerpt, header, Block.


def test_score_content_one_label_two_both_three() -> None:
    block = Block(1, "Alpha", "ALPHA alpha beta")
    assert score(block, ["alpha"]) == 3
    assert score(block, ["beta"]) == 1
    assert score(Block(1, "beta", ""), ["beta"]) == 2
    assert score(block, ["gamma"]) == 0


def test_excerpt_first_non_blank_line_trimmed() -> None:
    assert excerpt("\n  \t\n  first  \nsecond") == "first"
    assert excerpt("") == ""
    assert excerpt("\n \n\t") == ""
    assert excerpt("a\rb\nc") == "a\rb"  # lines split on "\n" only


def test_excerpt_cut_at_160_runes() -> None:
    assert excerpt("é" * 160) == "é" * 160
    assert excerpt("é" * 161) == "é" * 160 + "\u2026"
    assert excerpt("\U0001f600" * 200 + "\nx") == "\U0001f600" * 160 + "\u2026"


def test_header_and_id() -> None:
    assert header(Block(7, "", "x")) == "[r7]"
    assert header(Block(7, "a label", "x")) == "[r7] a label"
    assert Block(7, "", "").id == "r7"


def test_block_is_frozen() -> None:
    block = Block(7, "", "")
    with pytest.raises(dataclasses.FrozenInstanceError):
        block.seq = 8  # type: ignore[misc]
    assert not hasattr(block, "__dict__")


def test_memory_archive() -> None:
    archive = MemoryArchive(reversed(SAMPLE))
    assert list(archive.all_blocks()) == SAMPLE
    assert archive.get_block(9) == SAMPLE[2]
    assert archive.get_block(10) is None
    with pytest.raises(ValueError, match="seq 7"):
        MemoryArchive([SAMPLE[0], SAMPLE[0]])


# run_tool: the texts the contract fixes, and where the archive is read.


def test_fixed_texts() -> None:
    assert TEXT_MISSING_ID == 'recall needs an "id", such as "r7"'
    assert TEXT_MISSING_QUERY == 'recall_search needs a "query"'


@pytest.mark.parametrize(
    ("name", "args"),
    [
        ("recall", "{}"),
        ("recall", '{"id": 7}'),
        ("recall", '{"id": " \\t "}'),
        ("recall", '{"id": "r7a"}'),
        ("recall", '{"id": "r0"}'),
        ("recall", "not json"),
        ("recall_search", "{}"),
        ("recall_search", '{"query": "  "}'),
        ("recall_search", '{"query": "a b !"}'),
        ("recall_search", '{"query": "alpha", "x": 1e400}'),  # an error empties the map
    ],
)
def test_no_archive_read(name: str, args: str) -> None:
    archive = RecordingArchive(SAMPLE)
    assert isinstance(run_tool(name, args, archive), str)
    assert archive.reads == []


def test_recall_reads_only_get_block() -> None:
    archive = RecordingArchive(SAMPLE)
    assert run_tool("recall", '{"id": " R007 "}', archive).startswith("[r7] Notes\n")
    assert run_tool("recall", '{"id": "r10"}', archive).startswith("no archived block ")
    assert archive.reads == ["get_block(7)", "get_block(10)"]


def test_search_reads_only_all_blocks() -> None:
    archive = RecordingArchive(SAMPLE)
    run_tool("recall_search", '{"query": "alpha"}', archive)
    assert archive.reads == ["all_blocks"]


@pytest.mark.parametrize(
    ("name", "args", "read"),
    [
        ("recall", '{"id": " R007 "}', BlockRead(7, " R007 ")),
        ("recall", '{"id": "r10"}', BlockRead(10, "r10")),
        ("recall", '{"id": "r7a"}', None),
        ("recall_search", '{"query": "Alpha beta", "limit": 2}', BlocksRead("Alpha beta", [], 2)),
        ("recall_search", '{"query": "alpha ALPHA"}', BlocksRead("alpha ALPHA", [], 5)),
        ("recall_search", '{"query": "a b !"}', None),
    ],
)
def test_start_names_the_read_and_finish_gives_run_tools_output(
    name: str, args: str, read: BlockRead | BlocksRead | None
) -> None:
    """start_tool reads nothing: it gives the output, or the read and how to finish it."""
    step = start_tool(name, args)
    archive = MemoryArchive(SAMPLE)
    expected = run_tool(name, args, archive)
    if read is None:
        assert step == expected
    elif isinstance(read, BlockRead):
        assert step == read
        assert isinstance(step, BlockRead)
        assert step.finish(archive.get_block(step.seq)) == expected
    else:
        assert isinstance(step, BlocksRead)
        assert (step.query, step.limit) == (read.query, read.limit)
        assert step.terms == recall_tokens(read.query)
        assert step.finish(archive.all_blocks()) == expected


def test_search_order_score_then_most_recent() -> None:
    blocks = [Block(1, "", "beta"), Block(2, "", "beta"), Block(3, "beta", "x")]
    out = run_tool("recall_search", '{"query": "beta", "limit": 2}', MemoryArchive(blocks))
    lines = out.split("\n")
    assert lines[0].startswith("2 of 3 ")
    assert lines[1].startswith("[r3] beta (score 2)")
    assert lines[3].startswith("[r2] (score 1)")


def test_unknown_tool() -> None:
    with pytest.raises(UnknownToolError) as caught:
        run_tool("frobnicate", "{}", MemoryArchive())
    assert caught.value.name == "frobnicate"
    with pytest.raises(UnknownToolError):
        start_tool("Recall", "{}")


@given(name=st.sampled_from(["recall", "recall_search"]), args=st.text())
def test_any_args_text_works(name: str, args: str) -> None:
    archive: Archive = MemoryArchive(SAMPLE)
    assert isinstance(run_tool(name, args, archive), str)


@given(
    name=st.sampled_from(["recall", "recall_search"]),
    value=st.one_of(st.text(), st.integers(), st.floats(allow_nan=False), st.booleans()),
)
def test_any_json_args_work(name: str, value: object) -> None:
    args = json.dumps({"id": value, "query": value, "limit": value})
    assert isinstance(run_tool(name, args, MemoryArchive(SAMPLE)), str)
