"""recall._go against Go itself (goeval): every expected value comes from Go."""

from __future__ import annotations

import json
import math
import struct
import sys
import time
from collections.abc import Iterator
from types import FrameType
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from recall._go import float64_to_int, is_space, quote, to_lower, trim_space, unmarshal_args
from recall._go.json import MAX_NESTING_DEPTH
from recall._go.strconv import is_print
from recall._go.strings import to_lower_latin1

pytestmark = pytest.mark.go

CHUNK = 8192


def _chunks() -> Iterator[str]:
    """Every code point but the surrogates, in strings of at most CHUNK runes."""
    for start in range(0, 0x110000, CHUNK):
        cps = (c for c in range(start, min(start + CHUNK, 0x110000)) if not 0xD800 <= c <= 0xDFFF)
        text = "".join(map(chr, cps))
        if text:
            yield text


CHUNKS = list(_chunks())


def _rune_diffs(source: str, have: str, want: str, limit: int = 8) -> str:
    """Describe where two rune-for-rune results differ (source rune: have vs want)."""
    if len(have) != len(want) or len(have) != len(source):
        return f"lengths: source {len(source)}, python {len(have)}, go {len(want)}"
    out = [
        f"U+{ord(s):04X}: python {h!r} go {w!r}"
        for s, h, w in zip(source, have, want, strict=True)
        if h != w
    ]
    return "; ".join(out[:limit]) + (f" ... ({len(out)} in all)" if len(out) > limit else "")


# --- strings.ToLower ------------------------------------------------------------------


def test_lower_every_code_point(goeval: Any) -> None:
    """to_lower and to_lower_latin1 against Go's strings.ToLower, on every rune.

    Go is asked directly (one batch), not the generated table: this is what shows
    that the table, and the code over it, give Go's lowering with any Python.
    """
    answers = goeval.many([{"op": "lower", "s": chunk} for chunk in CHUNKS])
    for chunk, answer in zip(CHUNKS, answers, strict=True):
        want = answer["r"]
        whole = to_lower(chunk)
        assert whole == want, _rune_diffs(chunk, whole, want)
        each = "".join([to_lower(ch) for ch in chunk])  # every rune alone: each fast path
        assert each == want, _rune_diffs(chunk, each, want)
        # One byte a rune: Go's lower when it is Latin-1, else "?".
        image = to_lower_latin1(chunk).decode("latin-1")
        want_image = want.encode("latin-1", "replace").decode("latin-1")
        assert image == want_image, _rune_diffs(chunk, image, want_image)


LOWER_CASES = [
    "",
    "ASCII Only 123",
    "İstanbul İ",
    "Σ",
    "ΟΔΟΣ",
    "ΟΔΟΣ ΣΟΦΙΑ. AΣ, Σ-Σ",
    "ΣΑΣ",
    "\u0130\u0307",
    "STRASSE ẞ straße",
    "Kelvin \u212a Ohm \u2126 Å \u212b",
    "ǅ ǈ ǋ ǲ",
    "\u1c89\u1c8a \ua7cb\ua7dc \U00010d50 \U00016ea0",
    "ÀÉÎÕÜ àéîõü ÿŸ",
    "\ufffd\x00\x7f\U0010ffff",
    "mixed ΣΣΣ İİ ascii 😀 Ⅻ ⓐⒶ",
]


def test_lower_tricky(goeval: Any) -> None:
    answers = goeval.many([{"op": "lower", "s": s} for s in LOWER_CASES])
    for s, answer in zip(LOWER_CASES, answers, strict=True):
        assert to_lower(s) == answer["r"], s


# --- unicode.IsSpace, strconv.IsPrint, strings.TrimSpace ----------------------------


def test_is_space_every_code_point(goeval: Any) -> None:
    answers = goeval.many([{"op": "isspace", "s": chunk} for chunk in CHUNKS])
    for chunk, answer in zip(CHUNKS, answers, strict=True):
        have = [is_space(ch) for ch in chunk]
        bad = [
            f"U+{ord(c):04X}" for c, h, w in zip(chunk, have, answer["r"], strict=True) if h != w
        ]
        assert not bad, bad[:10]


def test_is_print_every_code_point(goeval: Any) -> None:
    answers = goeval.many([{"op": "isprint", "s": chunk} for chunk in CHUNKS])
    for chunk, answer in zip(CHUNKS, answers, strict=True):
        have = [is_print(ord(ch)) for ch in chunk]
        bad = [
            f"U+{ord(c):04X}" for c, h, w in zip(chunk, have, answer["r"], strict=True) if h != w
        ]
        assert not bad, bad[:10]


SPACES = "\t\n\v\f\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008"
SPACES += "\u2009\u200a\u2028\u2029\u202f\u205f\u3000"
NOT_SPACES = "\x1c\x1d\x1e\x1f\u180e\u200b\u200c\u200d\u2060\ufeff\x00"

TRIM_CASES = [
    "",
    " ",
    SPACES,
    NOT_SPACES,
    SPACES + "x" + SPACES,
    " r7 ",
    "\u3000r 7\u3000",
    *[ch + "x" + ch for ch in SPACES],
    *[ch + "x" + ch for ch in NOT_SPACES],
    *[" " + ch + " " for ch in NOT_SPACES],
    "\xa0\x1c x \u3000\u200b",
    "  inner  spaces  kept  ",
]


def test_trim_space_tricky(goeval: Any) -> None:
    answers = goeval.many([{"op": "trimspace", "s": s} for s in TRIM_CASES])
    for s, answer in zip(TRIM_CASES, answers, strict=True):
        assert trim_space(s) == answer["r"], repr(s)


# --- strconv.Quote ----------------------------------------------------------------------


def test_quote_every_code_point(goeval: Any) -> None:
    answers = goeval.many([{"op": "quote", "s": chunk} for chunk in CHUNKS])
    for chunk, answer in zip(CHUNKS, answers, strict=True):
        want = answer["r"]
        assert quote(chunk) == want
        each = '"' + "".join([quote(ch)[1:-1] for ch in chunk]) + '"'
        assert each == want


QUOTE_CASES = [
    "",
    "r7",
    'say "hi"',
    "back\\slash",
    "tab\tnew\nline\rcr\a\b\f\v",
    "\x00\x01\x1f\x7f\x80\x9f\xa0\xad",
    "é ü ñ Σ İ 日本",
    "\u200b\u200e\u2028\u2029\ufeff\ufffd\uffff",
    "\U0001f600\U000e0001\U0010ffff\U000f0000",
    "'single' `back`",
    "<html>&amp;</html>",
    " r 7 ",
]


def test_quote_tricky(goeval: Any) -> None:
    answers = goeval.many([{"op": "quote", "s": s} for s in QUOTE_CASES])
    for s, answer in zip(QUOTE_CASES, answers, strict=True):
        assert quote(s) == answer["r"], repr(s)


def test_quote_surrogate_is_go_replacement_char(goeval: Any) -> None:
    # A Go string cannot hold a surrogate: it gets U+FFFD in its place.
    want = goeval.call("quote", "a\ufffdb\ufffd")["r"]
    assert quote("a\ud800b\udfff") == want


# --- int(float64) -------------------------------------------------------------------------

F2I_CASES = [
    2.0**63,
    -(2.0**63),
    2.0**63 - 1024,
    -(2.0**63) - 2048,
    0.9,
    -0.9,
    2.9,
    -2.9,
    1.5,
    -1.5,
    0.0,
    -0.0,
    1e300,
    -1e300,
    5e-324,
    -5e-324,
    2.0**53 + 2,
    2.0**62,
    float("inf"),
    float("-inf"),
    float("nan"),
    -float("nan"),
    1e19,
    -1e19,
    9.2e18,
    -9.2e18,
]


def _bits(f: float) -> str:
    return f"{struct.unpack('<Q', struct.pack('<d', f))[0]:016x}"


def test_float64_to_int_edges(goeval: Any) -> None:
    answers = goeval.many([{"op": "f2i", "bits": _bits(f)} for f in F2I_CASES])
    for f, answer in zip(F2I_CASES, answers, strict=True):
        assert float64_to_int(f) == int(answer["r"]), repr(f)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.floats() | st.integers(-(2**64), 2**64).map(float))
def test_float64_to_int_random(goeval: Any, f: float) -> None:
    assert float64_to_int(f) == int(goeval.call("f2i", bits=_bits(f))["r"])


# --- json.Unmarshal into map[string]any ------------------------------------------------


def _python_view(m: dict[str, object]) -> dict[str, tuple[str, object]]:
    out: dict[str, tuple[str, object]] = {}
    for k, v in m.items():
        if isinstance(v, str):
            out[k] = ("string", v)
        elif isinstance(v, bool):
            out[k] = ("bool", v)
        elif isinstance(v, float):
            out[k] = ("float64", _bits(v))
        elif v is None:
            out[k] = ("nil", None)
        else:
            out[k] = ("other", None)
    return out


def _go_view(answer: dict[str, Any]) -> dict[str, tuple[str, object]]:
    if not answer["ok"]:
        return {}  # the contract: any error gives {}, even where Go filled part
    out: dict[str, tuple[str, object]] = {}
    for k, tv in answer["m"].items():
        value = tv["value"]
        out[k] = (tv["type"], value["bits"] if tv["type"] == "float64" else value)
    return out


def _nest(depth: int, kind: str) -> str:
    """A document nested depth deep: a top-level object holding arrays or objects."""
    if kind == "[":
        return '{"a":' + "[" * (depth - 1) + "]" * (depth - 1) + "}"
    return '{"a":' * depth + "1" + "}" * depth


UNMARSHAL_CASES = [
    # the contract's cases
    '{"id":"r7"}',
    '{"id":7}',
    '{"id":" r 7 "}',
    '{"query":"café","limit":2.9}',
    '{"query":"x","limit":"3"}',
    '{"query":"x","limit":-1}',
    '{"query":"x","limit":1e400}',
    '{"Id":"r7","ID":"r8"}',
    "null",
    "[]",
    '["id"]',
    '"r7"',
    "7",
    "true",
    "",
    "not json",
    '{"id":"r7"',
    '{"id":"\\ud800"}',
    # repeated keys, empty key, every type
    '{"id":"r1","id":"r2","id":"r3"}',
    '{"id":"r1","id":null}',
    '{"":"empty","a":true,"b":false,"c":null,"d":[1,2],"e":{"f":1},"g":{}}',
    # strings: Go's escapes and surrogates
    '{"s":"\\ud800"}',
    '{"s":"\\ud800\\ud800\\udc00"}',
    '{"s":"\\udc00x"}',
    '{"s":"\\udc00\\ud800"}',
    '{"s":"\\ud800\\u0041"}',
    '{"s":"\\ud83d\\ude00 \\uD83D\\uDE00"}',
    '{"s":"\\ud800\\\\udc00"}',
    '{"s":"\\"\\\\\\/\\b\\f\\n\\r\\t\\u00e9\\u0000"}',
    '{"s":"\\\'"}',
    '{"s":"\\x41"}',
    '{"s":"\\u00zz"}',
    '{"s":"\\u12"}',
    '{"s":"tab\there"}',
    '{"s":"nul\x00"}',
    '{"s":"del\x7f é 😀 \u2028"}',
    '{"\\u0069\\u0064":"r7"}',
    # whitespace: only space, \t, \n, \r
    ' \t\n\r{"id":"r7"} \t\n\r',
    '\v{"id":"r7"}',
    '{"id":"r7"}\v',
    '\f{"id":"r7"}',
    '{"id":"r7"}\f',
    '\xa0{"id":"r7"}',
    '{"id":"r7"}\xa0',
    '{"id":\xa0"r7"}',
    '\ufeff{"id":"r7"}',
    '{"id":"r7"}\x00',
    # trailing garbage and truncation
    '{"id":"r7"}x',
    '{"id":"r7"}{}',
    '{"id":"r7"},',
    '{"id":"r7",}',
    '{"id" "r7"}',
    '{"id":}',
    '{,"id":"r7"}',
    "{'id':'r7'}",
    '{id:"r7"}',
    '{"a":[1,]}',
    '{"a":[,1]}',
    '{"a":tru}',
    '{"a":nulll}',
    '{"a":True}',
    # numbers
    '{"n":-0}',
    '{"n":-0.0}',
    '{"n":0}',
    '{"n":1E+2}',
    '{"n":1e-2}',
    '{"n":1E2}',
    '{"n":01}',
    '{"n":1.e5}',
    '{"n":.5}',
    '{"n":+1}',
    '{"n":-}',
    '{"n":1e}',
    '{"n":1e+}',
    '{"n":0x10}',
    '{"n":1_000}',
    '{"n":NaN}',
    '{"n":Infinity}',
    '{"n":-Infinity}',
    '{"n":123456789012345678901234567890}',
    '{"n":9007199254740993}',
    '{"n":1e-400}',
    '{"n":-1e-400}',
    '{"n":4.9e-324}',
    '{"n":2.4703282292062327e-324}',
    '{"n":2.4703282292062328e-324}',
    '{"n":1e400}',
    '{"n":-1e400}',
    '{"n":1.7976931348623157e308}',
    '{"n":1.7976931348623158e308}',
    '{"n":1.7976931348623159e308}',
    '{"n":179769313486231580793728971405301e276}',
    '{"n":1e99999999999999999999}',
    '{"n":0e99999999999999999999}',
    '{"n":1e-99999999999999999999}',
    '{"n":0.' + "0" * 400 + "1e400}",
    '{"n":' + "9" * 400 + "}",
    '{"n":[1e400]}',
    '{"n":{"m":[1,2,{"o":1e400}]}}',
    '{"n":1e400,"n":1}',
    '{"n":2.9,"x":1e400}',
    '{"x":1e400,"y":tru}',
    # nesting
    _nest(MAX_NESTING_DEPTH, "["),
    _nest(MAX_NESTING_DEPTH + 1, "["),
    _nest(MAX_NESTING_DEPTH, "{"),
    _nest(MAX_NESTING_DEPTH + 1, "{"),
    "[" * MAX_NESTING_DEPTH + "]" * MAX_NESTING_DEPTH,
    '{"a":' + "[" * (MAX_NESTING_DEPTH + 5),
    '{"a":' + "[" * 20000 + "]" * 20000 + "}",
    # runs of arrays opened at once: with spaces, after an object or an array, at the limit
    '{"a": [ [\t[\n[\r\n[ 1 ] ] ] ] ]}',
    '{"a": [ [ ] , [[ ]] , [[[1]] ,2] ]}',
    '{"a": [[[1]]]]}',
    '{"a": [[[1]}',
    '{"a": [[[ }',
    '{"a": [[[1,]]]}',
    '{"a":{"b":' + "[ " * (MAX_NESTING_DEPTH - 2) + "]" * (MAX_NESTING_DEPTH - 2) + "}}",
    '{"a":{"b":' + "[ " * (MAX_NESTING_DEPTH - 1) + "]" * (MAX_NESTING_DEPTH - 1) + "}}",
    '{"a":[1,' + "[" * (MAX_NESTING_DEPTH - 2) + "]" * (MAX_NESTING_DEPTH - 1) + "}",
    '{"a":[1,' + "[" * (MAX_NESTING_DEPTH - 1) + "]" * MAX_NESTING_DEPTH + "}",
]


def test_unmarshal_tricky(goeval: Any) -> None:
    answers = goeval.many([{"op": "unmarshal", "s": s} for s in UNMARSHAL_CASES])
    for s, answer in zip(UNMARSHAL_CASES, answers, strict=True):
        assert _python_view(unmarshal_args(s)) == _go_view(answer), s[:200]


def test_unmarshal_numbers_are_floats() -> None:
    m = unmarshal_args('{"a":1,"b":-0,"c":2.5}')
    assert all(type(v) is float for v in m.values())
    assert math.copysign(1.0, m["b"]) == -1.0  # type: ignore[arg-type]


def _large_args(n: int) -> str:
    """n members, each with a nested array and object, then a query of 2.5 n escapes."""
    doc = json.dumps({f"k{i}": ["x" * 50, i * 1.5, {"y": [True, None]}] for i in range(n)})
    return doc[:-1] + ',"query":"' + "\\u00e9\\n" * (n * 5 // 2) + '"}'


def _lines_run(text: str) -> int:
    """The Python lines that ``unmarshal_args(text)`` runs (``sys.settrace``)."""
    count = 0

    def trace(frame: FrameType, event: str, arg: object) -> Any:
        nonlocal count
        count += event == "line"
        return trace

    sys.settrace(trace)
    try:
        unmarshal_args(text)
    finally:
        sys.settrace(None)
    return count


def _cpu_seconds(text: str) -> float:
    """The least CPU time of three runs of ``unmarshal_args(text)``."""
    best = math.inf
    for _ in range(3):
        started = time.process_time()
        unmarshal_args(text)
        best = min(best, time.process_time() - started)
    return best


def test_unmarshal_large_is_linear(goeval: Any) -> None:
    # 8 times the input: about 8 times the work; a quadratic decoder does 64 times.
    assert _lines_run(_large_args(2000)) < 8 * 1.25 * _lines_run(_large_args(250))  # its loops
    small, big = _large_args(2500), _large_args(20000)
    assert _cpu_seconds(big) < 8 * 4 * _cpu_seconds(small)  # and its regexes and slices
    assert _python_view(unmarshal_args(big)) == _go_view(goeval.call("unmarshal", big))


FRAGMENTS = [
    "{",
    "}",
    "[",
    "]",
    ",",
    ":",
    '"',
    "\\",
    '"id"',
    '"query"',
    '"limit"',
    '"r7"',
    "null",
    "true",
    "false",
    "nul",
    "0",
    "1",
    "7",
    "-",
    ".",
    "e",
    "E",
    "+",
    "1e400",
    "1e-400",
    "-0",
    "2.9",
    "01",
    " ",
    "\t",
    "\n",
    "\r",
    "\v",
    "\f",
    "\xa0",
    "\ufeff",
    "\\u",
    "d800",
    "dc00",
    "00e9",
    "\\ud800",
    "\\udc00",
    "\\n",
    "\\/",
    "\\'",
    "é",
    "\x00",
    "\x1f",
    "\x7f",
    "Σ",
    "😀",
]

_json_scalars = (
    st.none()
    | st.booleans()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.integers(-(10**30), 10**30)
    | st.text(max_size=10)
)
_json_values = st.recursive(
    _json_scalars,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=4)
    ),
    max_leaves=12,
)


@st.composite
def _json_ish(draw: st.DrawFn) -> str:
    """Valid JSON objects, some with a fragment spliced in, and fragment soup."""
    if draw(st.booleans()):
        return "".join(draw(st.lists(st.sampled_from(FRAGMENTS), max_size=30)))
    doc = json.dumps(
        draw(
            st.dictionaries(
                st.sampled_from(["id", "query", "limit", ""]) | st.text(max_size=4),
                _json_values,
                max_size=5,
            )
        ),
        ensure_ascii=draw(st.booleans()),
    )
    if draw(st.booleans()):
        at = draw(st.integers(0, len(doc)))
        doc = doc[:at] + draw(st.sampled_from(FRAGMENTS)) + doc[at:]
    return doc


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_json_ish())
def test_unmarshal_random(goeval: Any, text: str) -> None:
    answer = goeval.call("unmarshal", text)
    assert _python_view(unmarshal_args(text)) == _go_view(answer)


_tricky_chars = st.sampled_from(
    "\u03a3\u03c3\u03c2\u0130\u0131IiẞßKkÅ\u212a\u2126 \t\n\v\f\r\x85\xa0\u2028\u3000\u200b"
    '\x00\x7f"\\\ufeff\ufffd😀'
)
_texts = st.text(alphabet=st.characters(exclude_categories=("Cs",)) | _tricky_chars, max_size=40)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_texts)
def test_strings_random(goeval: Any, s: str) -> None:
    lower, trimmed, quoted = goeval.many(
        [{"op": "lower", "s": s}, {"op": "trimspace", "s": s}, {"op": "quote", "s": s}]
    )
    assert to_lower(s) == lower["r"]
    assert trim_space(s) == trimmed["r"]
    assert quote(s) == quoted["r"]
