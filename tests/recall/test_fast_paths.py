# ruff: noqa: RUF001, RUF003  (the look-alike runes are the point)
"""The fast paths `make bench` led to give exactly what the plain ones give.

- ``to_lower_latin1`` and the search's scoring over it (``recall._tools.scan``, with
  each finder, over images joined at once, a chunk at a time, or piece by piece)
  against ``to_lower`` and ``score``: same scores for every block and term;
- ``read_set`` (Go's compact /blocks body decoded item by item, alone or reusing the
  set read before from the same body) and ``BodyStream`` (the body fed in pieces,
  decoded a batch at a time and dropped) against the whole body decoded at once
  (``_listed``): the same Blocks (the same images and heads), or the same error, for
  Go's bodies and bodies of every other shape.
"""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Callable

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import recall._blocks
import recall._tools
from parity.fakego import go_json
from parity.fixtures.go import unavailable
from parity.project import in_ci
from parity.strategies import blocks, queries
from recall import Block
from recall._blocks import (
    DELTA_SINCE,
    NOT_IN_ORDER,
    BlockSet,
    BodyStream,
    Decoders,
    NotBlocks,
    _doc,
    _listed,
    decode_item,
    head_of,
    read_set,
)
from recall._fast import decode_item_msgspec, decode_items_msgspec
from recall._go.strings import LATIN1_LOWER, to_lower, to_lower_latin1
from recall._tools import (
    FINDERS,
    LOWERINGS,
    Images,
    latin1_images,
    recall_tokens,
    scan,
    score,
    terms_as_bytes,
)

# Runes around every edge of the Latin-1 image: the wide runes whose Go lower is
# Latin-1 (İ Ÿ ẞ K Å), Latin-1 letters and signs (× ÷ ß µ ÿ), "?", wider letters,
# astral runes, lone surrogates (a Python str may hold them).
EDGE = "aAzZ09?éÉàÀÿŸİiKkÅåẞß×÷µΣσςЖж€😀\ud800\udfff \n"
TERM_TEXT = st.text(alphabet=st.sampled_from(EDGE + "bcdxyz"), max_size=40)


@settings(deadline=None)
@given(TERM_TEXT, st.lists(st.text(alphabet="abkiåÿàé÷09", min_size=1, max_size=4), max_size=4))
@example("İK Ÿ Å", ["ik", "ÿ", "å", "k"])
@example("× ÷", ["÷"])
@example("a?b", ["b"])
def test_to_lower_latin1_finds_what_to_lower_finds(text: str, terms: list[str]) -> None:
    lowered = to_lower(text)
    image = to_lower_latin1(text)
    assert len(image) == len(text)
    assert latin1_images(Block(1, text, text)) == (image, image)
    for term in terms:
        assert (term.encode("latin-1") in image) == (term in lowered), (text, term)


@pytest.fixture(scope="module", params=["bytes", "stringzilla"])
def finder(request: pytest.FixtureRequest) -> recall._tools.Finder:
    """Each finder of the scan; stringzilla (the fast extra, in the dev group) skips when
    absent, but fails under CI."""
    if request.param not in FINDERS:
        unavailable("stringzilla is not installed (the harness's dev group installs it)")
    return FINDERS[request.param]


@pytest.fixture(scope="module")
def finders() -> list[recall._tools.Finder]:
    """Every finder, for the tests that check each on the same drawn input; under CI
    stringzilla must be one."""
    if in_ci():
        assert "stringzilla" in FINDERS, "stringzilla is not installed"
    return list(FINDERS.values())


@pytest.fixture(scope="module")
def lowerings() -> list[Callable[[bytearray, int], None]]:
    """Every lowering of ``Images.extend``; under CI stringzilla's must be one."""
    if in_ci():
        assert "stringzilla" in LOWERINGS, "stringzilla is not installed"
    return list(LOWERINGS.values())


def test_the_scan_uses_stringzilla_when_it_is_installed() -> None:
    if "stringzilla" not in FINDERS:
        assert not in_ci(), "stringzilla is not installed"  # CI installs the fast extra
        pytest.skip("stringzilla is not installed")
    assert recall._tools.FINDER is FINDERS["stringzilla"]
    assert recall._tools.LOWERING is LOWERINGS["stringzilla"]


@settings(max_examples=300, deadline=None)
@given(st.lists(blocks(), max_size=6), st.one_of(queries(), TERM_TEXT), st.integers(0, 6))
def test_search_scores_are_scores(
    finders: list[recall._tools.Finder], specs: list[object], query: str, cut: int
) -> None:
    archive = [Block(seq, b.label, b.content) for seq, b in enumerate(specs, 1)]  # type: ignore[attr-defined]
    terms = recall_tokens(query)
    expected = [(p, at) for at, b in enumerate(archive) if (p := score(b, terms))]
    needles = terms_as_bytes(terms)
    pairs = list(map(latin1_images, archive))
    joined = Images(pairs)
    pieced = Images(pairs[:cut])  # a set built from kept runs and new blocks
    pieced.extend_from(joined, cut, len(pairs))
    assert list(pieced) == pairs
    assert pieced.nbytes == joined.nbytes == sum(len(c) + len(lab) for c, lab in pairs)
    for finder in finders:
        assert scan(iter(pairs), needles, finder=finder) == expected
        assert scan(joined, needles, finder=finder) == expected
        assert scan(pieced, needles, finder=finder) == expected


_PAIRS = st.tuples(st.binary(max_size=12), st.binary(max_size=4)).map(
    lambda p: (p[0].replace(b"\0", b" "), p[1].replace(b"\0", b" "))
)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.lists(st.one_of(st.tuples(st.integers(0, 30), st.integers(0, 30)), _PAIRS))),
    st.sampled_from([0, 8, 1 << 20]),
)
def test_images_read_again_share_runs_and_give_every_image(
    finders: list[recall._tools.Finder],
    reads: list[list[tuple[int, int] | tuple[bytes, bytes]]],
    small: int,
) -> None:
    # Each read builds a set's images from runs of the one before and new images.
    before, model = Images(), []
    terms = [b"ab", b"a", b" "]
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(recall._tools, "_SEGMENT_BYTES", small)
        for steps in reads:
            images, expected = Images(), []
            for step in steps:
                if isinstance(step[0], int):
                    first, upto = sorted(step)  # type: ignore[type-var]
                    upto = min(upto, len(model))
                    images.extend_from(before, first, upto)  # type: ignore[arg-type]
                    expected += model[first:upto]
                else:
                    images.append(step)  # type: ignore[arg-type]
                    expected.append(step)
            assert list(images) == expected
            assert images.nbytes == sum(len(c) + len(lab) for c, lab in expected)
            plain = [
                (p, at)
                for at, (c, lab) in enumerate(expected)
                if (p := sum((t in c) + 2 * (t in lab) for t in terms))
            ]
            for finder in finders:
                assert scan(images, terms, finder=finder) == plain
            before, model = images, expected


def _layout(images: Images) -> list[tuple[bytes, bytes, list[int], list[int], int, int]]:
    return [
        (bytes(s.content), bytes(s.label), s.content_at, s.label_at, first, upto)
        for s, first, upto in images._runs
    ]


@settings(max_examples=200, deadline=None)
@given(st.lists(_PAIRS), st.lists(_PAIRS), st.sampled_from([0, 8, 20, 1 << 20]))
def test_images_extended_are_laid_out_as_images_appended_one_by_one(
    before: list[tuple[bytes, bytes]], pairs: list[tuple[bytes, bytes]], small: int
) -> None:
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(recall._tools, "_SEGMENT_BYTES", small)
        appended, extended = Images(), Images()
        for pair in before:
            appended.append(pair)
            extended.append(pair)
        for pair in pairs:
            appended.append(pair)
        extended.extend(pairs)
    assert list(extended) == before + pairs
    assert _layout(extended) == _layout(appended)
    assert extended.nbytes == appended.nbytes


@settings(max_examples=200, deadline=None)
@given(st.lists(_PAIRS), st.lists(_PAIRS), st.sampled_from([0, 8, 20, 1 << 20]))
def test_images_extended_unlowered_are_lowered_there_and_nothing_else_is(
    lowerings: list[Callable[[bytearray, int], None]],
    before: list[tuple[bytes, bytes]],
    pairs: list[tuple[bytes, bytes]],
    small: int,
) -> None:
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(recall._tools, "_SEGMENT_BYTES", small)
        appended = Images(before)  # the images before, copied into a new segment or not
        for content, label in pairs:
            appended.append((content.translate(LATIN1_LOWER), label.translate(LATIN1_LOWER)))
        for lowering in lowerings:
            extended = Images(before)
            extended.extend(pairs, lowered=False, lowering=lowering)
            assert _layout(extended) == _layout(appended)


def test_images_given_one_by_one_are_scanned_a_chunk_at_a_time(
    finder: recall._tools.Finder, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(recall._tools, "_CHUNK_BYTES", 10)
    pairs = [(b"alpha beta", b""), (b"beta", b"alpha"), (b"", b""), (b"gamma alpha", b"x")]
    assert scan(iter(pairs), [b"alpha", b"beta"], finder=finder) == [(2, 0), (3, 1), (1, 3)]


def _whole_in_order(buffer: bytearray) -> list[Block]:
    """The plain way: the whole body decoded at once, then the order checked."""
    blocks = _listed(*_doc(buffer))
    if any(a.seq >= b.seq for a, b in itertools.pairwise(blocks)):
        raise NotBlocks(NOT_IN_ORDER)
    return blocks


def _outcome(decode: Callable[[bytearray], list[Block]], body: bytes) -> tuple[str, object]:
    buffer = bytearray(body)
    try:
        return "ok", decode(buffer)
    except NotBlocks as exc:
        return "error", str(exc)


def _emptying(buffer: bytearray) -> list[Block]:
    """read_set's Blocks, checked to empty the buffer when it fails."""
    try:
        return list(read_set(buffer).view())
    except NotBlocks:
        assert not buffer
        raise


def _reusing(kept: BlockSet | None) -> Callable[[bytearray], list[Block]]:
    """read_set after the set ``kept``."""
    return lambda buffer: list(read_set(buffer, kept).view())


_STREAM_DECODERS: list[Decoders] = [
    {"decode": decode_item},
    {"decode": decode_item_msgspec, "decode_many": decode_items_msgspec},
]


def _images_and_heads(blocks: list[Block]) -> tuple[list[int], list[Block], list[object]]:
    heads = [head_of(b.seq, b.label, b.content) for b in blocks]
    return [b.seq for b in blocks], heads, [latin1_images(b) for b in blocks]


def _plain(message: str) -> str:
    """An error without its places (a stream counts them without the blocks dropped)."""
    return re.sub(r"[0-9]+", "N", message.partition(" (bytes ")[0])


def _streamed(body: bytes, piece: int, decoders: Decoders) -> tuple[tuple[str, object], int]:
    """BodyStream's outcome for the body fed ``piece`` bytes at a time, and the most bytes
    it held at once."""
    stream = BodyStream(lambda size: decoders)
    held = 0
    try:
        for at in range(0, len(body), piece):
            stream.feed(body[at : at + piece])
            held = max(held, len(stream.pending))
        blocks = stream.read(tag='"t"')
    except NotBlocks as exc:
        return ("error", _plain(str(exc))), held
    assert not stream.pending
    assert not blocks.complete  # images and heads alone
    return ("ok", (blocks.seqs, blocks.heads, list(blocks.images))), held


def _same_streamed(body: bytes, expected: tuple[str, object]) -> None:
    kind, value = expected
    if kind == "ok":
        assert isinstance(value, list)
        expected = kind, _images_and_heads(value)
    else:
        expected = kind, _plain(str(value))
    with pytest.MonkeyPatch.context() as patch:
        for batch, piece, decoders in itertools.product(
            (16, 1 << 20), (1, 7, 64, max(1, len(body))), _STREAM_DECODERS
        ):
            patch.setattr(recall._blocks, "_BATCH", batch)
            assert _streamed(body, piece, decoders)[0] == expected, (batch, piece, body[:300])


def _same(body: bytes) -> None:
    expected = _outcome(_whole_in_order, body)
    assert _outcome(_emptying, body) == expected, body[:300]
    _same_streamed(body, expected)
    assert _outcome(_reusing(None), body) == expected, body[:300]
    try:
        kept = read_set(bytearray(body))
    except NotBlocks:
        return
    assert _outcome(_reusing(kept), body) == expected, body[:300]  # every item reused


BLOCK_DICTS = st.lists(
    st.builds(
        lambda seq, label, content: {"seq": seq, "label": label, "content": content},
        st.integers(-3, 2**64),
        st.text(max_size=20),
        st.one_of(st.text(max_size=60), st.just('x"},{"seq":9,"label":"'), st.just("},{\\")),
    ),
    max_size=5,
)


@settings(max_examples=300, deadline=None)
@given(BLOCK_DICTS)
def test_read_set_on_go_bodies(items: list[dict[str, object]]) -> None:
    body = go_json({"blocks": items})
    _same(body)
    kind, decoded = _outcome(_emptying, body)
    seqs = [item["seq"] for item in items]
    if all(type(s) is int and 1 <= s < 2**63 for s in seqs) and seqs == sorted(set(seqs)):
        assert kind == "ok"
        assert decoded == [Block(**i) for i in items]  # type: ignore[arg-type]
        cut = read_set(bytearray(body))
        with pytest.MonkeyPatch.context() as patch:  # items cut by bytes.find, not stringzilla
            patch.setattr(recall._blocks, "FINDER", FINDERS["bytes"])
            by_bytes = read_set(bytearray(body))
        assert cut.raw is not None  # Go's body is cut into its items
        assert (by_bytes.starts, by_bytes.stops) == (cut.starts, cut.stops)
        with pytest.MonkeyPatch.context() as patch:  # streamed: a batch of 16 bytes or so
            patch.setattr(recall._blocks, "_BATCH", 16)
            _, held = _streamed(body, 7, _STREAM_DECODERS[1])
        longest = max(map(len, (go_json(item) for item in items)), default=0)
        assert held <= 16 + 7 + longest + len(b'{"blocks":[')  # never the whole body
    else:
        assert kind == "error"


@settings(max_examples=300, deadline=None)
@given(BLOCK_DICTS, st.data())
def test_read_set_on_other_bodies(items: list[dict[str, object]], data: st.DataObject) -> None:
    body = bytearray(go_json({"blocks": items}))
    for _ in range(data.draw(st.integers(1, 3))):
        at = data.draw(st.integers(0, len(body)))
        edit = data.draw(
            st.sampled_from(
                [
                    b" ",
                    b"\n",
                    b",",
                    b"}",
                    b"{",
                    b"]",
                    b"[",
                    b'"',
                    b"\\",
                    b"NaN",
                    b"\xff",
                    b"\xc3",
                    b'},{"',
                    b'"x":[{"a":1},{"b":2}]',
                    b"\\ud800",
                    b"\\udc00",
                    b"1e400",
                    b"",
                ]
            )
        )
        cut = data.draw(st.integers(0, 3))
        body[at : at + cut] = edit
    _same(bytes(body))


@pytest.mark.parametrize(
    "body",
    [
        b'{"blocks":[]}\n',
        b'{"blocks":[]}',
        b' { "blocks" : [ ] } ',
        b'{"blocks":[{"seq":1,"label":"a","content":"b"}]}',
        b'{"blocks":[{"seq":1,"label":"a","content":"b"} ]}',
        b'{"blocks":[ {"seq":1,"label":"a","content":"b"}]}',
        b'{"blocks":[{"seq":1,"label":"a","content":"b"}, {"seq":2,"label":"a","content":"b"}]}',
        b'{"blocks":[{"seq":1,"label":"a","content":"b"},{"seq":2,"label":"a","content":"b"},]}',
        b'{"blocks":[{"seq":1,"label":"a","content":"b"}],"blocks":[]}',
        b'{"blocks":[{"seq":1,"label":"a","content":"b"},{"seq":2,"label":"a","content":"b"}],'
        b'"blocks":[{"seq":3,"label":"","content":"c"}]}',
        b'{"blocks":[{"seq":1,"label":"a","content":"b"},{"seq":2,"label":"a","content":"b"}],'
        b'"blocks":{}}',
        b'{"blocks":[{"seq":1,"label":"a","content":"b"},{"seq":2,"label":"a","content":"b"}],'
        b'"more":{"blocks":[]}}',
        b'{"blocks":[{"seq":1,"label":"a","content":"b"},{"seq":2,"label":"a","content":"b"},'
        b'{"seq":3,"label":"a","content":"b"} ]}\n',
        b'{"blocks":[{"seq":1,"label":"a","content":"b"},{"seq":2,"label":"a","content":"b"},'
        b'{"seq":3,"label":"a","content":"b"},{"seq":4,"label":"a","content":"b"}]',
        b'{"blocks":[{"seq":1,"label":"a","content":"b"},{"seq":2,"label":"a","content":"b"},'
        b'{"seq":1,"label":"a","content":"b"},{"seq":4,"label":"a","content":"b"}]}',
        b'{"blocks":[{"seq":1,"label":"a","content":"b"},{"seq":2,"label":"a","content":"b"},'
        b'{"seq":3,"label":"a","content":"b\xff"},{"seq":4,"label":"a","content":"b"}]}',
        b'{"blocks":[{"seq":1,"label":"a","content":"b"},{"seq":2,"label":"a","content":"b"},'
        b'{"seq":3,"label":"a","content":"\xed\xa0\x80"},{"seq":4,"label":"a","content":"b"}]}',
        b'{"blocks":[{"seq":1,"label":"a","content":"b"},{"seq":2,"label":"a","content":"b"},'
        b'{"seq":3, "label":"a","content":"b"} , {"seq":4,"label":"a","x":[{},{"y":"},{"}]}]}',
        b'{"blocks":[{"seq":1,"label":"a","content":"b"},{"seq":2,"label":"a","content":"b"},'
        b'{"seq":3,"label":"a","content":"b"}}]}',
        b'{"blocks":[{"seq":1,"x":[{"a":1},{"b":2}],"label":"a","content":"b"}]}',
        b'{"blocks":[{"seq":1,"label":"\\ud800","content":"\\udc00x"}]}',
        b'{"blocks":[{"seq":1,"label":"a","content":"b"},{"seq":NaN}]}',
        b'{"blocks":[{"seq":1,"label":"a","content":"\xff"}]}',
        b'\xef\xbb\xbf{"blocks":[]}',
        b'{"blocks":[1,2,3]}',
        b'{"blocks":["a"},{"b"]}',
        b'{"blocks":[{}]}',
        b'{"blocks":[{"a":' + b"[" * 5000 + b"]" * 5000 + b"}]}",
        b'{"blocks":[',
        b'{"blocks":]}',
        b"",
        b"null",
    ],
)
def test_read_set_edges(body: bytes) -> None:
    _same(body)


@pytest.mark.parametrize("at", ["first", "last"])
def test_a_stream_refuses_a_delta_it_did_not_ask_for(at: str) -> None:
    items = b'"blocks":[{"seq":1,"label":"a","content":"b"},{"seq":2,"label":"a","content":"b"}]'
    body = b'{"since":"x",' + items + b"}" if at == "first" else b"{" + items + b',"since":"x"}'
    with pytest.raises(NotBlocks) as whole:
        read_set(bytearray(body))
    _same_streamed(body, ("error", str(whole.value)))
    assert str(whole.value) == DELTA_SINCE


def test_go_json_escapes_html() -> None:
    assert json.loads(go_json({"a": "<&>"})) == {"a": "<&>"}
