# ruff: noqa: RUF001  (the ambiguous look-alike runes are the point)
"""Hypothesis strategies for the recall tools' inputs, aimed where Go and Python disagree
(``unicode.IsSpace``/``str.strip``, ``strings.ToLower``/``str.lower``, ``encoding/json``/
``json.loads``, ``strconv.Quote``/``repr``): values (:func:`ids`, :func:`queries`,
:func:`limits`), ``args`` texts, blocks, and ``(tool, args)`` calls over an archive. What
depends on the running Python's Unicode is computed from it and Go's tables."""

from __future__ import annotations

import functools
import json
import re
import unicodedata
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TypeVar

from hypothesis import strategies as st

from parity.probe import version_code_point_ranges
from recall._go import tables
from recall._tools import replace_surrogates

T = TypeVar("T")

INT64_MAX = 2**63 - 1

GO_SPACES = (
    "\t\n\v\f\r \x85\xa0\u1680"
    + "".join(chr(c) for c in range(0x2000, 0x200B))
    + "\u2028\u2029\u202f\u205f\u3000"
)
"""Every rune for which Go's ``unicode.IsSpace`` is true."""

NOT_GO_SPACES = "\x1c\x1d\x1e\x1f\u180e\u200b\u200c\u200d\u2060\ufeff"
"""Space-like runes Go keeps; Python's ``str.strip`` removes U+001C to U+001F."""

DIGIT_ZEROS = (0x30, 0x660, 0x6F0, 0x7C0, 0x966, 0x9E6, 0xE50, 0xFF10, 0x104A0, 0x1D7CE, 0x1E950)
"""The zero of decimal digit runs (Nd) that Python's ``int`` accepts and Go does not: ASCII,
Arabic-Indic and Extended, NKo, Devanagari, Bengali, Thai, fullwidth, Osmanya, math bold, Adlam."""


def _words(text: str) -> tuple[str, ...]:
    return tuple(text.split())


@functools.cache
def new_code_point_ranges() -> tuple[tuple[int, int], ...]:
    """The ranges (inclusive, ascending) of code points that Go's strconv.IsPrint accepts
    and the running Python does not know (category Cn)."""
    flags = bytearray(0x110000)
    for lo, hi in zip(tables.DEFAULT.PRINT_LO, tables.DEFAULT.PRINT_HI, strict=True):
        for code in range(lo, hi + 1):
            flags[code] = unicodedata.category(chr(code)) == "Cn"
    return tuple((m.start(), m.end() - 1) for m in re.finditer(b"[^\x00]+", flags))


@functools.cache
def lower_changed() -> str:
    """The runes Go's ``strings.ToLower`` and the running Python's ``str.lower`` change
    differently, each alone: ``İ``, and the case pairs newer than Python's Unicode."""
    pairs = tables.DEFAULT.LOWER.items()
    return "".join(chr(upper) for upper, lower in pairs if chr(upper).lower() != chr(lower))


def _code_points(ranges: Sequence[tuple[int, int]]) -> st.SearchStrategy[str]:
    """A code point of the inclusive ``ranges`` (nothing is drawn when there are none)."""
    if not ranges:
        return st.nothing()
    return st.sampled_from(ranges).flatmap(lambda r: st.integers(*r)).map(chr)


_VERSION_MARKERS = tuple("\U0001fae9\u1c89\ua7cb\ua7dc\U00010d50\U00016ea0\u20c1")
"""Code points of :func:`version_code_point_ranges` in common use: Go 1.26 quotes them
(Unicode 16: an emoji, Cyrillic TJE, Latin ram's horn and lambda with stroke, Garay A;
17: Beria Erfe, the Saudi riyal sign)."""


@functools.cache
def _version_code_points() -> st.SearchStrategy[str]:
    """One code point that the Go releases the port matches quote differently: a common
    one, or any (nothing is drawn when every release carries the same Unicode)."""
    if not (ranges := version_code_point_ranges()):
        return st.nothing()
    return st.one_of(st.sampled_from(_VERSION_MARKERS), _code_points(ranges))


_CASE_TRAPS = _words("İ ı Σ ς σ ΣΑΣ ΟΔΥΣΣΕΥΣ ß ẞ ſ K Å Ω ǅ Ÿ ÿ µ ÷ × ª ﬁ Ⅶ Ⓐ ǰ ŉ")
"""Runes whose lower case, or membership in a search term, is a trap (K Å Ω: the Kelvin,
Angstrom and Ohm signs)."""

_PUNCTUATION = (
    *_words("_ __ - . , ; : ! ? ' \" / \\ ( ) [ ] { } < > & « » „ “ ” ‘ ’ ‹ › — – … · • ¿ ¡"),
    *_words("、 。 ， ： ！ 《 》 【 】"),
    "\u00ad",  # soft hyphen: not printable in Go
    "\u2060",
    "\u200d",
    "\u0301",  # combining acute: cuts a term
)

_ODD_RUNES = (
    # U+0378 unassigned, U+E000 private use, U+FFFE a noncharacter, U+202E right-to-left override
    *("\x00", "\x07", "\x1b", "\x7f", "\x85", "\u0378", "\ue000", "\ufffe", "\ufffd", "\U0010ffff"),
    *("\U0001f600", "\U0001f44d\U0001f3fd", "\u202e"),
    # raw lone surrogates and a raw pair (two U+FFFD, not an emoji): a Go string holds none
    *("\ud800", "\udfff", "\ud83d\ude00"),
)

VOCABULARY = _words(
    "recall archive block café Café CAFÉ naïve Éclair été ÉTÉ crème brûlée garçon Straße STRASSE"
    " İstanbul ISTANBUL ΣΟΦΙΑ σοφία ΟΔΥΣΣΕΥΣ Kelvin Ångström ÿes snake_case __init__ func main"
    " parse json http diff ok go py r7 007 2024 x a le la über Œuvre æther þorn ðe øre ÷by"
)
"""Words the blocks and the queries share, so searches match, tie and overflow."""

_ACCENTS = {
    "a": "àáâãäåÀÁÂÃÄÅ",
    "c": "çÇ",
    "e": "èéêëÈÉÊË",
    "i": "ìíîïÌÍÎÏİı",
    "n": "ñÑ",
    "o": "òóôõöøÒÓÔÕÖØ",
    "s": "ßẞſ",
    "u": "ùúûüÙÚÛÜ",
    "y": "ýÿÝŸ",
    "k": "K",
}

_HTML = (
    *("<div>", "</div>", '<a href="x?a=1&b=2">', "<b>bold</b>", "&amp;", "&lt;tag&gt;"),
    *("&#233;", "&nbsp;", "<script>alert(1)</script>", "<!-- comment -->", "<br/>"),
)

_JSONISH = (
    *("},{", '"},{"', '},{"seq":1,"label":"x","content":"y', '{"blocks":[]}', "\\"),
    *('\\"', "\\u2028", "\\ud800", "\\n", "\u2028", "\u2029", "</script>"),
)
"""Text that looks like the JSON the Go serves blocks in, or like its escapes."""


@dataclass(frozen=True)
class BlockSpec:
    """A block to archive: its label, its content, and whether its memory is locked."""

    label: str
    content: str
    locked: bool = False


# -- characters and small pieces ------------------------------------------------------


def _weighted(*choices: tuple[int, st.SearchStrategy[T]]) -> st.SearchStrategy[T]:
    """One of the strategies, each in proportion to its weight (``one_of`` drops repeats)."""
    strategies = [strategy for _, strategy in choices]
    indices = [i for i, (weight, _) in enumerate(choices) for _ in range(weight)]
    return st.sampled_from(indices).flatmap(lambda i: strategies[i])


_SPACE_RUN = st.text(st.sampled_from(GO_SPACES + NOT_GO_SPACES), min_size=1, max_size=3)
_SPACES = _weighted((3, st.just("")), (1, st.just(" ")), (2, _SPACE_RUN))
"""A run of zero to three space runes, Go's or the ones only Python strips."""


_ZEROS = st.sampled_from([0, 0, 0, 1, 2, 3, 25])
_DIGIT_STYLES = st.sampled_from(["ascii"] * 6 + ["zero", "mixed", "odd", "underscore", "space"])
_NON_DECIMAL = st.sampled_from("⁰¹²³⁴⁵⁶⁷⁸⁹₀₁₂₃①②③⑦⑩Ⅶⅶ½")  # isdigit/isnumeric, not decimal


def _digit_text(draw: st.DrawFn, number: int) -> str:
    """The decimal digits of ``number`` (>= 0) in a drawn style: zeros, Unicode digits, junk."""
    text = "0" * draw(_ZEROS) + str(number)
    style = draw(_DIGIT_STYLES)
    if style == "zero":
        zero = draw(st.sampled_from(DIGIT_ZEROS[1:]))
        text = "".join(chr(zero + int(c)) for c in text)
    elif style == "mixed":
        zeros = st.sampled_from(DIGIT_ZEROS)
        text = "".join(chr(draw(zeros) + int(c)) for c in text)
    elif style == "odd":
        at = draw(st.integers(0, len(text)))
        text = text[:at] + draw(_NON_DECIMAL) + text[at:]
    elif style in ("underscore", "space") and len(text) > 1:
        at = draw(st.integers(1, len(text) - 1))
        text = text[:at] + ("_" if style == "underscore" else draw(_SPACES)) + text[at:]
    return text


@functools.lru_cache(maxsize=256)  # built once per archive, not per draw
def _numbers(seqs: Sequence[int]) -> st.SearchStrategy[int]:
    """Seqs: mostly existing ones, else absent ones, and numbers near and past int64 (its
    edge, where Go's ParseInt stops, as often as all the others)."""
    edge = st.sampled_from([INT64_MAX - 1, INT64_MAX, INT64_MAX + 1])
    near = st.sampled_from(
        [0, 1, 2**31 - 1, 2**31, 2**53, 2**53 + 1, 2**64 - 1, 2**64, 10**19, 10**20 - 1, 10**30]
    )
    others = [(2, edge), (2, near), (1, st.integers(0, 2**70)), (1, st.integers(1, 10**6))]
    if not seqs:
        return _weighted(*others)
    existing = st.sampled_from(sorted(set(seqs)))
    return _weighted(
        (8, existing),
        (1, existing.map(lambda s: s + 1)),
        (1, existing.map(lambda s: max(s - 1, 0))),
        *others,
    )


# -- ids ----------------------------------------------------------------------------

_PREFIXES = ("R", "rR", "Rr", "", "rr", "RR", "rRr", "r r", "R r", "ｒ", "r\u0307")
_SIGNS = ("-", "+", "\u2212", "--", "-+")
_TAILS = ("a", ".0", "e0", " x", '"', "\\", "\n7", "\x00", "\u0301", "\ufeff")
_ID_PARTS: dict[str, tuple[str, st.SearchStrategy[str], st.SearchStrategy[str]]] = {
    # a part of r<seq>: as it is, changed alone, changed among others
    "lead": ("", _SPACE_RUN, _SPACES),
    "prefix": ("r", st.sampled_from(_PREFIXES), st.sampled_from(("r",) * 6 + _PREFIXES)),
    "middle": ("", _SPACE_RUN, _SPACES),
    "sign": ("", st.sampled_from(_SIGNS), st.sampled_from(("",) * 10 + _SIGNS)),
    "zeros": ("", st.integers(1, 30).map("0".__mul__), st.just("")),
    "tail": ("", st.sampled_from(_TAILS), st.sampled_from(("",) * 10 + _TAILS)),
    "trail": ("", _SPACE_RUN, _SPACES),
}
_VARIANTS = st.sampled_from(["none", "digits", *_ID_PARTS] * 5 + ["all"] * 27)


@st.composite
def _variant_id(draw: st.DrawFn, numbers: st.SearchStrategy[int]) -> str:
    """``r<seq>`` (a seq of ``numbers``) changed in one way, or in any mix of them."""
    how = draw(_VARIANTS)
    number = draw(numbers)

    def part(name: str) -> str:
        plain, alone, mixed = _ID_PARTS[name]
        return draw(mixed) if how == "all" else draw(alone) if how == name else plain

    head = "".join(map(part, ("lead", "prefix", "middle", "sign", "zeros")))
    digits = _digit_text(draw, number) if how in ("all", "digits") else str(number)
    return head + digits + part("tail") + part("trail")


@functools.lru_cache(maxsize=256)  # built once per archive, not per draw
def ids(seqs: Sequence[int] = ()) -> st.SearchStrategy[str]:
    """Block ids: ``r<seq>`` for existing and absent seqs, with prefixes ``R``/``rR``/``Rr``,
    Go and non-Go spaces, digit variants (Unicode digits, leading zeros, signs,
    underscores), numbers near and past int64, and odd text (quotes, controls,
    surrogates, blanks); one variant at a time, or several at once."""
    odd = st.one_of(
        st.sampled_from(["", "r", "R", "rR", "0", "r0", "r-0", "00", "id", "r7a", '"r7"', "r\\7"]),
        _SPACES.map(lambda s: s or " "),
        st.text(st.sampled_from("rR0123456789 -+_" + GO_SPACES + NOT_GO_SPACES), max_size=8),
        st.sampled_from(_ODD_RUNES + _CASE_TRAPS).map(lambda c: "r" + c),
        st.text(max_size=6),
        st.tuples(_version_code_points(), _numbers(seqs)).map(lambda p: f"r{p[1]}{p[0]}"),
        st.lists(_version_code_points(), min_size=1, max_size=3).map("".join),
    )
    return _weighted((8, _variant_id(_numbers(seqs))), (2, odd))


# -- queries --------------------------------------------------------------------------


def words_of(blocks: Iterable[BlockSpec]) -> tuple[str, ...]:
    """The distinct words (``\\w+`` runs) of the blocks' labels and contents, in order."""
    texts = (text for b in blocks for text in (b.label, b.content))
    return tuple(dict.fromkeys(word for text in texts for word in re.findall(r"\w+", text)))


_CASES: dict[str, Callable[[str], str]] = {
    "upper": str.upper,
    "lower": str.lower,
    "title": str.title,
    "swap": str.swapcase,
    "nfd": functools.partial(unicodedata.normalize, "NFD"),
    "one": lambda word: word[:1],
}
_TRANSFORMS = st.sampled_from(["same", *_CASES, "random", "accent", "cut"])


@st.composite
def _transformed(draw: st.DrawFn, words: st.SearchStrategy[str]) -> str:
    """A word of ``words`` in another case, with accents added, decomposed, cut or repeated."""
    word = draw(words)
    how = draw(_TRANSFORMS)
    if how in _CASES:
        return _CASES[how](word)
    if how == "random":
        flips = draw(st.lists(st.booleans(), min_size=len(word), max_size=len(word)))
        return "".join(c.swapcase() if f else c for c, f in zip(word, flips, strict=True))
    if how == "accent":
        out = []
        for c in word:
            choices = _ACCENTS.get(c.lower())
            out.append(draw(st.sampled_from(choices)) if choices and draw(st.booleans()) else c)
        return "".join(out)
    if how == "cut" and len(word) > 2:
        start = draw(st.integers(0, len(word) - 2))
        return word[start : draw(st.integers(start + 2, len(word)))]
    return word


_VOCABULARY_WORDS = _transformed(st.sampled_from(VOCABULARY))
_SEPARATORS = st.one_of(
    st.sampled_from([" ", " ", " ", "", "_", "-", ", ", "/", "'", "\t", "\n", "  "]),
    st.sampled_from(_PUNCTUATION),
    st.sampled_from(GO_SPACES + NOT_GO_SPACES),
)


@functools.lru_cache(maxsize=256)  # built once per archive, not per draw
def queries(words: Sequence[str] = ()) -> st.SearchStrategy[str]:
    """Search queries: words of the archived blocks in random case, with accents and
    separators, runes Go and Python lower-case differently (``İ``, final ``Σ``, case
    pairs newer than Python's Unicode), underscores, Unicode punctuation, code points
    new to Python, blanks and text without terms."""
    word = _weighted(
        (8, _transformed(st.sampled_from(tuple(dict.fromkeys(words)) or VOCABULARY))),
        (3, _VOCABULARY_WORDS),
        (1, st.sampled_from(_CASE_TRAPS)),
        (1, st.sampled_from(lower_changed())),
        (1, _code_points(new_code_point_ranges())),
        (2, _version_code_points()),
        (1, st.sampled_from(_ODD_RUNES)),
        (1, st.text(max_size=4)),
    )
    more = st.lists(st.tuples(_SEPARATORS, word).map("".join), max_size=4).map("".join)
    sentence = st.tuples(_SPACES, word, more, _SPACES).map("".join)  # 1 to 5 words

    blank = st.one_of(
        st.just(""), _SPACES, st.text(st.sampled_from(GO_SPACES), min_size=1, max_size=3)
    )
    return _weighted((8, sentence), (1, blank), (1, st.text(max_size=12)))


# -- limits ---------------------------------------------------------------------------

_LIMIT_SHAPES = (
    *_words(
        "0 1 2 -1 -0 -0.0 0.5 0.99999999999999999 1.0 2.9 -2.9 3e0 1E1 1e+1 10e-1"
        " 19.999999999999999 20 20.5 21 1e300 -1e300 1.7976931348623157e308 4.9e-324 1e-400"
        " 9.2e18 9.223372036854775e18 9.223372036854776e18 9223372036854775807"
        " 9223372036854775808 -9223372036854775808 -9223372036854775809 18446744073709551616"
    ),
    "1" * 300,
    "2." + "9" * 400,  # rounds to 3.0
    "0." + "0" * 5000 + "1",
    *_words('"3" "abc" "" true false null [] [3]'),
    '{"n": 3}',
)
_NOT_JSON_NUMBERS = (  # the whole args decode to {}
    "1e400",
    "-1e400",
    "1" * 400,  # a valid Python int, out of float64 range
    "1" * 4301,  # past Python's int digit limit too
    *_words("+1 01 .5 1. NaN Infinity -Infinity 0x10 1e 1_000"),
)


@functools.cache
def limits() -> st.SearchStrategy[str]:
    """The JSON text of a ``limit``: ints, floats, exponents, negatives, ``-0``, ``2.9``,
    huge and near-2^63 numbers, text, booleans, null, arrays, and invalid numbers."""
    return _weighted(
        (6, st.sampled_from(_LIMIT_SHAPES)),
        (2, st.integers(-25, 25).map(str)),
        (1, st.integers().map(str)),
        (1, st.floats(allow_nan=False, allow_infinity=False).map(json.dumps)),
        (2, st.floats(-30, 30).map(json.dumps)),
        (1, st.sampled_from(_NOT_JSON_NUMBERS)),
    )


# -- JSON text ------------------------------------------------------------------------


def _escape(c: str, *, upper: bool) -> str:
    """``c`` as ``\\uXXXX`` escapes: one, or a surrogate pair past U+FFFF."""
    hexes = c.encode("utf-16-be", "surrogatepass").hex(" ", 2).split()
    return "".join(f"\\u{h.upper() if upper else h}" for h in hexes)


_SHORT = {'"': '\\"', "\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\b": "\\b", "\f": "\\f"}
_STRING_STYLES = st.sampled_from(["raw", "raw", "ascii", "all", "mixed"])


@st.composite
def json_strings(draw: st.DrawFn, values: st.SearchStrategy[str]) -> str:
    """A value of ``values`` as a JSON string literal (:func:`_json_string`)."""
    return _json_string(draw, draw(values))


def _json_string(draw: st.DrawFn, value: str) -> str:
    """A JSON string literal for ``value``: raw (surrogates stay raw code points in the
    Python text), ASCII-escaped (surrogates become ``\\uD800``-style escapes), or with
    drawn runes escaped as ``\\uXXXX`` in either case, and ``/`` sometimes as ``\\/``."""
    style = draw(_STRING_STYLES)
    if style == "ascii":
        return json.dumps(value, ensure_ascii=True)
    upper = draw(st.booleans())  # the escapes' hex digits
    out = []
    for c in value:
        drawn = style == "all" or (style == "mixed" and draw(st.booleans()))
        if drawn or (c < " " and c not in _SHORT):
            out.append(_escape(c, upper=upper))
        elif c == "/" and draw(st.booleans()):
            out.append("\\/")
        else:
            out.append(_SHORT.get(c, c))
    return '"' + "".join(out) + '"'


_JSON_WHITESPACE = st.sampled_from(["", "", "", "", "", " ", " ", "\n", "\t", "\r\n", "  \n  "])
_ODD_WHITESPACE = st.one_of(
    _JSON_WHITESPACE, st.sampled_from(["\f", "\v", "\xa0", "\u3000", "\x1c", "\x85"])
)
"""JSON whitespace, and spaces that JSON does not allow."""
_DEPTHS = (1, 64, 999, 1000, 1001, 9998, 9999, 10000, 10001, 10002, 30000)
_DEEP = st.sampled_from(
    ["[" * n + "1" + "]" * n for n in _DEPTHS] + ['{"a":' * n + "1" + "}" * n for n in _DEPTHS]
)
"""``1`` nested in arrays or objects near Go's depth limit of 10000."""


_OTHER_VALUES = st.one_of(
    st.sampled_from(["null", "true", "false", "0", "7", "-1", "2.5", "[]", "{}", '"x"']),
    st.sampled_from(['["r1"]', '{"id": "r1"}', "1e400", "1e308", "-0", "NaN"]),
    json_strings(st.text(max_size=6)),
    limits(),
)
"""JSON text of values of every type, a few of them invalid."""


Members = tuple[tuple[str, str], ...]
"""An object's members: (key, JSON text of the value) pairs."""
_LAYOUTS = st.sampled_from(["drawn"] * 7 + ["compact"] * 4 + ["spaced"] * 3 + ["odd"])
_FIXED = {"compact": ("", "", "", ""), "spaced": ("", "", " ", "")}
_TRAILERS = st.sampled_from([""] * 19 + [",", " x", "}", "{}", "\x00"])


def _tool_args(
    key: str, texts: st.SearchStrategy[str], extras: st.SearchStrategy[Members]
) -> st.SearchStrategy[str]:
    """A JSON object with ``key`` (a JSON string of ``texts``, or another JSON value; and the
    members ``extras`` draws), repeated, missing or misspelt, with drawn escapes and
    whitespace; or any :func:`raw_args`."""
    values = _weighted((6, json_strings(texts)), (1, _OTHER_VALUES))
    other_key = st.sampled_from([key, key, key.upper(), key.title(), key + " ", "x", "args", ""])
    other_value = st.one_of(values, _OTHER_VALUES)

    @st.composite
    def tool_args(draw: st.DrawFn) -> str:
        members: list[tuple[str, str]] = []
        if draw(st.integers(0, 9)) < 9:  # the common case first: Hypothesis favours it
            members.append((key, draw(values)))
        members.extend(draw(extras))
        for _ in range(draw(st.sampled_from((0, 0, 0, 0, 1, 2)))):
            members.append((draw(other_key), draw(other_value)))
        if draw(st.integers(0, 399)) == 399:  # rarely: the port decodes Go's deepest nesting slowly
            members.append(("deep", draw(_DEEP)))
        if len(members) > 1:
            members = draw(st.permutations(members))
        # each whitespace run drawn (one object in fifteen with whitespace JSON does not
        # allow), or none, or a space after each colon; one in twenty with text after it
        layout = draw(_LAYOUTS)
        fixed = _FIXED.get(layout)
        ws = _ODD_WHITESPACE if layout == "odd" else _JSON_WHITESPACE

        def space(at: int) -> str:
            return fixed[at] if fixed is not None else draw(ws)

        body = ",".join(
            space(0) + _json_string(draw, key) + space(1) + ":" + space(2) + value + space(3)
            for key, value in members
        )
        end = "}" + draw(_TRAILERS) + space(3)
        return space(0) + "{" + body + ("" if members else space(0)) + end

    return _weighted((6, tool_args()), (1, raw_args()))


# -- raw args -------------------------------------------------------------------------

_RAW = (
    *("", " ", "\n", "null", " null ", "true", "1", "1e400", '"r1"', '"{\\"id\\": \\"r1\\"}"'),
    *("[]", '["r1"]', "{}", "{", "}", "{{}}", '{"id"}', '{"id":}', '{"id": "r1",}'),
    *('{"id": "r1"} x', '{"id": "r1"}{}', '{"id": "r1"}\x00', "{'id': 'r1'}", "{id: 'r1'}"),
    *("\ufeff{}", '{"id": "\\ud800"}', '{"id": "\\udc00\\ud800"}', '{"id": "\\ud83d\\ude00"}'),
    *('{"query": "\\ud800caf\\u00e9"}', '{"id": "r1\\u0000"}', '{"id": "\\x41"}'),
    *('{"id": "\\u12"}', '{"id": "r1\n"}', '{"id": "\\U0001F600"}', '{"query": NaN}'),
    *('{"query": "café", "limit": Infinity}', '{"query": "café", "limit": 1e400}'),
    *('{"query": "café", "x": [1e400]}', '{"id": "r1", "id": 7}', '{"query": 1, "query": "café"}'),
    *('{"\\u0069d": "r1"}', '{"i\\u0064": "r1", "ID": "r2"}', '{"query": "a\\u0301"}'),
)
_ODD_ARGS = st.sampled_from(_ODD_RUNES).map(lambda c: '{"id": "r1' + c + '", "query": "' + c + '"}')


@functools.cache
def raw_args() -> st.SearchStrategy[str]:
    """Raw ``args`` text: valid and invalid JSON, non-objects, repeated keys, lone
    surrogate escapes, raw surrogate code points, huge numbers, deep nesting near
    Go's limit, BOMs and whitespace variants, and arbitrary text."""
    deep_object = _DEEP.map(lambda v: '{"id": "r1", "query": "café", "d": ' + v + "}")
    return _weighted(
        (12, st.sampled_from(_RAW)),
        # rarely: a call nested 10,000 deep costs the port's decoder about 10 ms, a
        # hundred ordinary calls, and a pool plays it in every state
        (1, st.one_of(deep_object, _DEEP)),
        (4, _ODD_ARGS),
        (4, st.text(max_size=20)),
        (4, st.text(st.sampled_from('{}[]":,\\ ud80rRq1e-.'), max_size=20)),
        (4, _OTHER_VALUES),
    )


@functools.lru_cache(maxsize=256)  # built once per archive, not per draw
def recall_args(seqs: Sequence[int] = ()) -> st.SearchStrategy[str]:
    """``args`` for ``recall``: an object whose ``id`` is an :func:`ids` or of another JSON
    type, or any :func:`raw_args`."""
    return _tool_args("id", ids(seqs), st.just(()))


@functools.lru_cache(maxsize=256)  # built once per archive, not per draw
def search_args(words: Sequence[str] = ()) -> st.SearchStrategy[str]:
    """``args`` for ``recall_search``: an object with a ``query`` drawn by :func:`queries`
    and often a ``limit`` drawn by :func:`limits`, or any :func:`raw_args`."""
    limit: st.SearchStrategy[Members] = limits().map(lambda text: (("limit", text),))
    return _tool_args("query", queries(words), st.one_of(st.just(()), limit))


@functools.lru_cache(maxsize=256)  # built once per archive, not per draw
def calls(
    seqs: Sequence[int] = (), words: Sequence[str] = ()
) -> st.SearchStrategy[tuple[str, str]]:
    """``(tool, args)``: ``recall`` with :func:`recall_args`, ``recall_search`` with
    :func:`search_args`, and either with the other's args or :func:`raw_args`."""
    recall = st.tuples(st.just("recall"), recall_args(seqs))
    search = st.tuples(st.just("recall_search"), search_args(words))
    crossed = st.one_of(
        st.tuples(st.just("recall"), search_args(words)),
        st.tuples(st.just("recall_search"), recall_args(seqs)),
    )
    return _weighted((3, recall), (3, search), (1, crossed))


@functools.lru_cache(maxsize=256)  # built once per archive, not per draw
def call_pools(
    seqs: Sequence[int] = (), words: Sequence[str] = (), *, max_size: int = 32
) -> st.SearchStrategy[list[tuple[str, str]]]:
    """Pools of :func:`calls` to play over many states of an archive: 1 to ``max_size``
    calls, their number drawn evenly (``st.lists`` draws mostly short lists); a pool
    shrinks to fewer calls."""
    one = calls(seqs, words)
    return st.integers(1, max_size).flatmap(lambda n: st.lists(one, min_size=n, max_size=n))


# -- blocks ---------------------------------------------------------------------------


_LINE_SEPARATORS = st.sampled_from(["\n"] * 5 + ["\r\n", "\u2028", "\x0b", "\x1c", "\x85"])


@functools.cache
def blocks() -> st.SearchStrategy[BlockSpec]:
    """One block: labels and contents with accents, mixed case, HTML, blank lines, long
    first lines, other line separators, empty content and labels, sometimes locked."""
    units = st.sampled_from(["a", "é", "€", "😀", "e\u0301", "İ", "ab ", "\t"])
    lengths = st.sampled_from([150, 159, 160, 161, 162, 200, 400])
    odd = [r for r in _ODD_RUNES if replace_surrogates(r) == r]  # a Go string holds none
    line = _weighted(
        (4, st.lists(_VOCABULARY_WORDS, max_size=8).map(" ".join)),
        (1, st.lists(st.sampled_from(_HTML + VOCABULARY), max_size=6).map("".join)),
        (1, _SPACES),
        (1, st.tuples(units, lengths).map(lambda p: p[0] * (p[1] // len(p[0])))),
        (1, st.sampled_from([*odd, *_CASE_TRAPS, *lower_changed()])),
        (1, st.lists(st.sampled_from(_JSONISH + VOCABULARY), max_size=4).map("".join)),
        (1, st.text(max_size=30)),
        (1, st.lists(_version_code_points(), min_size=1, max_size=4).map("".join)),
    )
    lines = st.tuples(st.lists(line, max_size=5), _LINE_SEPARATORS)
    label = _weighted(
        (4, st.lists(_VOCABULARY_WORDS, max_size=3).map(" ".join)),
        (1, st.just("")),
        (1, st.sampled_from(_HTML + _CASE_TRAPS + _JSONISH + _VERSION_MARKERS)),
        (1, st.text(max_size=10)),
    )
    content = _weighted((5, lines.map(lambda p: p[1].join(p[0]))), (1, st.just("")))
    return st.builds(
        BlockSpec,
        label.map(replace_surrogates),  # a Go string holds none: U+FFFD instead
        content.map(replace_surrogates),
        st.sampled_from([False] * 5 + [True]),
    )


def _similar(word: str, n: int) -> list[BlockSpec]:
    return [
        BlockSpec(f"note {i} {word}" if i % 3 else "", f"{word} {i}\nline of {word}")
        for i in range(n)
    ]


@functools.cache
def block_sets() -> st.SearchStrategy[list[BlockSpec]]:
    """Blocks to archive together: small varied sets, and sets of many similar blocks
    (so scores tie and more than the maximum limit of 20 blocks match)."""
    similar = st.builds(_similar, st.sampled_from(VOCABULARY), st.integers(18, 26))
    varied = st.lists(blocks(), min_size=1, max_size=8)
    return _weighted(
        (6, varied), (2, st.tuples(varied, similar).map(lambda p: p[0] + p[1])), (1, st.just([]))
    )
