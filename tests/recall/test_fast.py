"""The port's two decoders of /blocks items give the same Blocks, or the same refusal.

``decode_item`` (json's own scanner) is the port as ``pip install .`` gives it;
``decode_item_msgspec`` is what the hosts use when msgspec is installed
(``recall-port[fast]``). Both over Go's own bodies (the golden journal's, the Go
reference's), over adversarial items and over edited bodies; and the hosts with
either against the Go reference, output for output.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import recall._blocks
import recall._fast
from parity import journal
from parity.corpus import golden_dir
from parity.fakego import blocks_body
from parity.fixtures.go import FreshGo, unavailable
from recall import Block
from recall._blocks import (
    Fields,
    ItemDecoder,
    NotBlocks,
    NotCompact,
    decode_item,
    read_set,
)
from recall._fast import MSGSPEC_FROM, decode_item_msgspec, decode_items_msgspec, decoders

from .conftest import MakeHost
from .mockgo import go_body


@pytest.fixture(autouse=True)
def msgspec_installed() -> None:
    """msgspec is a dev dependency: its absence skips, but fails under CI."""
    if not recall._fast.available():
        unavailable("msgspec is not installed (the harness's dev extra installs it)")


def outcome(decode: ItemDecoder, raw: bytes) -> tuple[str, object]:
    try:
        return "block", decode(memoryview(raw))
    except NotCompact:
        return "refused", None


def test_the_hosts_decode_with_msgspec_when_it_is_installed() -> None:
    assert decoders(MSGSPEC_FROM)["decode"] is decode_item_msgspec
    many = {"decode": decode_item_msgspec, "decode_many": decode_items_msgspec}
    assert decoders(0) == many  # once imported, for any body


ITEMS = [
    b'{"seq":1,"label":"a","content":"b"}',
    b'{"seq":1,"label":"a","content":"b","content":"c"}',  # the last repeated key
    b'{"seq":1,"seq":2,"label":"a","content":"b"}',
    b'{"label":"a","content":"b","seq":9223372036854775807}',
    b'{"s\\u0065q":1,"label":"a","content":"b"}',  # an escaped key
    b'{"seq":1,"label":"\\ud800","content":"\\udc00x"}',  # lone surrogates: U+FFFD
    b'{"seq":1,"label":"\\ud83d\\ude00","content":"\\ude00\\ud83d"}',
    b'{"seq":1,"label":"\\u003cb\\u003e \\u0026 \\u2028","content":"\\u0000\\/\\"\\\\"}',
    b'{"seq":1,"label":"a\x7fb","content":"\xef\xbf\xbf\xf4\x8f\xbf\xbf"}',
    b'{"seq":1,"label":"a","content":"b","x":[1,{"y":null}]}',  # an extra field
    b' {"seq":1,"label":"a","content":"b"}',  # whitespace around: json refuses
    b'{"seq":1,"label":"a","content":"b"} ',
    b'{ "seq" : 1 , "label" : "a" , "content" : "b" }',
    b'{"seq":1.0,"label":"a","content":"b"}',
    b'{"seq":1e0,"label":"a","content":"b"}',
    b'{"seq":true,"label":"a","content":"b"}',
    b'{"seq":0,"label":"a","content":"b"}',
    b'{"seq":-0,"label":"a","content":"b"}',
    b'{"seq":-1,"label":"a","content":"b"}',
    b'{"seq":9223372036854775808,"label":"a","content":"b"}',
    b'{"seq":99999999999999999999999,"label":"a","content":"b"}',
    b'{"seq":01,"label":"a","content":"b"}',
    b'{"seq":1,"label":"a","content":null}',
    b'{"seq":1,"label":"a"}',
    b'{"seq":1,"label":"a\nb","content":"b"}',  # a raw control character
    b'{"seq":1,"label":"\xff","content":"b"}',  # not UTF-8
    b'{"seq":1,"label":"a","content":"\xed\xa0\x80"}',  # an encoded surrogate
    b'{"seq":1,"label":"\\x","content":"b"}',
    b'{"seq":1,"label":"a","content":"b",}',
    b'{"seq":NaN,"label":"a","content":"b"}',
    b'{"seq":1,"label":"a","content":"b","x":NaN}',
    b'{"seq":1,"label":"a","content":"b","x":' + b"[" * 5000 + b"]" * 5000 + b"}",
    b"[]",
    b"{}",
    b"",
    b"}",
]


@pytest.mark.parametrize("raw", ITEMS)
def test_the_same_block_or_the_same_refusal(raw: bytes) -> None:
    assert outcome(decode_item_msgspec, raw) == outcome(decode_item, raw)


ANY_TEXT = st.text(
    alphabet=st.one_of(
        st.characters(codec="utf-8"), st.sampled_from(["\ud800", "\udc00", '"', "\\", "<"])
    ),
    max_size=30,
)
EDITS = st.sampled_from(
    [b" ", b",", b"}", b"{", b'"', b"\\", b"\\u", b"\\ud800", b"\xff", b"\xc3", b"NaN", b"1e2"]
)


@settings(max_examples=500, deadline=None)
@given(st.integers(-3, 2**64), ANY_TEXT, ANY_TEXT, st.booleans(), st.data())
@example(7, "\ud800", "x", True, None)
@example(7, "\ud800", "x", False, None)  # an encoded surrogate: not UTF-8
def test_the_decoders_agree_on_any_item(
    seq: int, label: str, content: str, ascii_only: bool, data: st.DataObject | None
) -> None:
    item = {"seq": seq, "label": label, "content": content}
    text = json.dumps(item, separators=(",", ":"), ensure_ascii=ascii_only)
    raw = bytearray(text.encode("utf-8", "surrogatepass"))
    assert outcome(decode_item_msgspec, bytes(raw)) == outcome(decode_item, bytes(raw))
    if data is None:
        return
    for _ in range(data.draw(st.integers(1, 3))):
        at = data.draw(st.integers(0, len(raw)))
        raw[at : at + data.draw(st.integers(0, 2))] = data.draw(EDITS)
    assert outcome(decode_item_msgspec, bytes(raw)) == outcome(decode_item, bytes(raw))


def read_msgspec(body: bytes) -> tuple[str, object]:
    """read_set with msgspec's decoder: the blocks, images and spans, or the error."""
    try:
        got = read_set(bytearray(body), decode=decode_item_msgspec)
    except NotBlocks as exc:
        return "error", str(exc)
    return "blocks", (
        list(got.view()),
        list(got.images),
        list(zip(got.starts, got.stops, strict=True)),
    )


def read_json(body: bytes) -> tuple[str, object]:
    try:
        got = read_set(bytearray(body))
    except NotBlocks as exc:
        return "error", str(exc)
    return "blocks", (
        list(got.view()),
        list(got.images),
        list(zip(got.starts, got.stops, strict=True)),
    )


ITEM_DICTS = st.lists(
    st.builds(
        lambda seq, label, content: {"seq": seq, "label": label, "content": content},
        st.integers(-3, 2**64),
        ANY_TEXT,
        st.one_of(ANY_TEXT, st.just('x"},{"seq":9,"label":"'), st.just("},{\\")),
    ),
    max_size=5,
)
BODY_EDITS = st.sampled_from(
    [b" ", b"\n", b",", b"}", b"{", b"]", b"[", b'"', b"\\", b"\\ud800", b'},{"', b'"x":1', b""]
)


def read_batched(body: bytes) -> tuple[str, object]:
    """read_set as the hosts read a first body with msgspec: items decoded in batches."""
    try:
        got = read_set(
            bytearray(body), decode=decode_item_msgspec, decode_many=decode_items_msgspec
        )
    except NotBlocks as exc:
        return "error", str(exc)
    return "blocks", (
        list(got.view()),
        list(got.images),
        list(zip(got.starts, got.stops, strict=True)),
    )


@pytest.fixture(params=[1 << 20, 1])
def batch(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> int:
    """The batch's bytes: the hosts' own, one item a batch, and a few items a batch."""
    monkeypatch.setattr(recall._blocks, "_BATCH", request.param)
    return int(request.param)


def test_gos_body_is_decoded_in_batches(batch: int) -> None:
    items = [(1, "a", "x \u2028 <b>"), (2, "", "😀 é"), (7, "l", ""), (9, "", "},{ x")]
    body = go_body(items)
    seen: list[int] = []

    def counted(raw: memoryview) -> list[Fields] | None:
        fields = decode_items_msgspec(raw)
        seen.append(-1 if fields is None else len(fields))
        return fields

    got = read_set(bytearray(body), decode=decode_item_msgspec, decode_many=counted)
    assert list(got.view()) == [Block(*item) for item in items]
    assert got.raw is not None  # Go's compact body, kept
    assert seen == ([len(items)] if batch > 100 else [])  # one batch, or one item a batch
    assert read_batched(body) == read_msgspec(body) == read_json(body)
    # Not cut by Go's encoding alone: decoded whole, as before, with no batch.
    spaced = bytes(body).replace(b'},{"', b'}, {"')
    straddled = go_body([*items, (10, "", '"},{"')])  # },{" ends a string
    for other in (spaced, straddled):
        seen.clear()
        assert read_batched(other) == read_msgspec(other) == read_json(other)
        assert seen == []


@settings(max_examples=300, deadline=None)
@given(ITEM_DICTS, st.booleans(), st.sampled_from([1 << 20, 1, 60]), st.data())
def test_batches_read_the_set_item_by_item_reads(
    items: list[dict[str, object]], ascii_only: bool, size: int, data: st.DataObject
) -> None:
    text = json.dumps({"blocks": items}, separators=(",", ":"), ensure_ascii=ascii_only)
    body = bytearray(text.encode("utf-8", "surrogatepass") + b"\n")
    batch = recall._blocks._BATCH
    recall._blocks._BATCH = size
    try:
        assert read_batched(bytes(body)) == read_msgspec(bytes(body)) == read_json(bytes(body))
        for _ in range(data.draw(st.integers(1, 3))):
            at = data.draw(st.integers(0, len(body)))
            body[at : at + data.draw(st.integers(0, 2))] = data.draw(BODY_EDITS)
        assert read_batched(bytes(body)) == read_msgspec(bytes(body)) == read_json(bytes(body))
    finally:
        recall._blocks._BATCH = batch


def read_with(decode: ItemDecoder, body: bytes) -> tuple[str, object]:
    try:
        return "blocks", list(read_set(bytearray(body), decode=decode).view())
    except NotBlocks as exc:
        return "error", str(exc)


def test_the_golden_journals_blocks() -> None:
    golden = journal.load(golden_dir() / "recall.json")
    body = blocks_body(golden.blocks)
    expected = [Block(b.seq, b.label, b.content) for b in golden.blocks]
    assert read_with(decode_item_msgspec, body) == ("blocks", expected)
    assert read_with(decode_item, body) == ("blocks", expected)
    kept = read_set(bytearray(body), decode=decode_item_msgspec)
    assert read_set(bytearray(body), kept, decode=decode_item_msgspec).reused == len(expected)


@pytest.mark.go
def test_the_go_references_bodies(fresh_go: FreshGo) -> None:
    go = fresh_go(first_seq=1)
    for label, content in [
        ("<b>HTML</b> & co", "\u2028 <script> \U0001f600 é \ufffd \x00 \x7f"),
        ('say "hi"', 'back\\slash and "quotes" \t\r\n'),
        ("", ""),
        ("İstanbul", "ΣΟΦΙΑ ǅemal \u212a"),
    ]:
        go.archive(label, content)
    go.archive("locked", "secret", locked=True)
    body = go.client.blocks_read().body or b""
    expected = [Block(**b) for b in go.blocks()]
    assert read_with(decode_item_msgspec, body) == ("blocks", expected)
    assert read_with(decode_item, body) == ("blocks", expected)


# Both decoders in the hosts, against the Go reference.


@pytest.fixture(params=["msgspec", "json"])
def decoder(request: pytest.FixtureRequest) -> Iterator[str]:
    """The hosts' item decoder for the test: msgspec's, or json's (as without msgspec)."""
    chosen = recall._fast._chosen
    recall._fast._chosen = decode_item_msgspec if request.param == "msgspec" else decode_item
    try:
        yield request.param
    finally:
        recall._fast._chosen = chosen


@pytest.mark.go
def test_hosts_with_either_decoder_give_gos_outputs(
    fresh_go: FreshGo, make_host: MakeHost, decoder: str
) -> None:
    go = fresh_go(first_seq=1000)
    seqs = [
        go.archive(f"note {n} Échec", f"déploiement {n} \u2028 <b> & \U0001f600 İK\nligne {n}")
        for n in range(30)
    ]
    queries: list[Callable[[], object]] = [
        lambda: None,
        lambda: go.archive("new", "déploiement nouveau"),
        lambda: go.lock(seqs[3]),
        lambda: go.lock(seqs[3], locked=False),
    ]
    with make_host(go.base_url) as host:
        for change in queries:
            change()
            for query in ("déploiement échec", "note 7 ligne", "ik b", "absent"):
                args = json.dumps({"query": query, "limit": 20})
                assert host.exec_tool("recall_search", args) == go.exec_tool("recall_search", args)
