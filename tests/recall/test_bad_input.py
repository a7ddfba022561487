"""Bad input: whatever the args text and the tool name, exec_tool answers as Go or raises
only the documented error.

Against a live Go reference holding a few blocks (seqs 1 to 5, so that small ids
hit), through each kind of host: ``recall`` and ``recall_search`` give byte for
byte the output of Go's own /tool/exec for the surrogate-cleaned args, without
falling back; another name is Go's ``UnknownToolError``. Hypothesis draws
arbitrary text (surrogates included), arbitrary JSON values serialized as args,
and arbitrary names; example counts are bounded, and the run is derandomized
(the ``ci`` profile of ``parity.fuzz``).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator
from dataclasses import dataclass

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.errors import InvalidArgument

from parity.fixtures.go import start_reference
from parity.reference import GoReference, RunningReference
from recall import RecallError, UnknownToolError
from recall._protocol import EXEC_PATH

from .hosts import Host

try:
    import parity.fuzz  # noqa: F401  (registers the "ci" profile)

    BASE = settings.get_profile("ci")
except (ImportError, InvalidArgument):  # pragma: no cover - the fuzzing module is absent
    BASE = settings(derandomize=True, database=None, deadline=None)

EXAMPLES = 120
CHECKS = settings(
    BASE,
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)

TOOLS = ("recall", "recall_search")
BLOCKS = [
    ("alpha note", "alpha beta gamma\nsecond line"),
    ("<b>Café</b>", "crème brûlée & co\u2028 İstanbul"),
    ("", ""),
    ("beta", "r1 r2 r3 1 2 3 limit query id"),
    ("ΣΟΦΙΑ", "σοφια \U0001f600 null true false"),
]
SURROGATE = re.compile("[\ud800-\udfff]")
EXEC_REQUEST = f"POST {EXEC_PATH}"


def cleaned(text: str) -> str:
    """What the contract says Go is sent: each surrogate code point becomes U+FFFD."""
    return SURROGATE.sub("\ufffd", text)


@dataclass
class Live:
    go: RunningReference
    host: Host
    seen: int = 0
    """How much of Go's request log an earlier check read (the log only grows)."""

    def check(self, name: str, args: str) -> None:
        """exec_tool(name, args) is Go's answer for the cleaned call, or Go's unknown tool."""
        before = self.seen + len(self.go.requests(since=self.seen))
        try:
            output: str | None = self.host.exec_tool(name, args)
            error: RecallError | None = None
        except RecallError as exc:  # anything else escapes and fails the test
            output, error = None, exc
        made = self.go.requests(since=before)
        self.seen = before + len(made)
        go_name, go_args = cleaned(name), cleaned(args)
        if go_name in TOOLS:
            assert error is None, repr(error)
            assert EXEC_REQUEST not in made  # computed here, no fallback
            assert output == self.go.exec_tool(go_name, go_args)
        else:
            assert isinstance(error, UnknownToolError), repr(error)
            assert error.name == go_name
            assert made == [EXEC_REQUEST]


@pytest.fixture(scope="module")
def live(go_build: GoReference, host_kind: str) -> Iterator[Live]:
    with start_reference(go_build, first_seq=1) as go, Host(host_kind, go.base_url) as host:
        for label, content in BLOCKS:
            go.archive(label, content)
        go.archive("locked", "never shown", locked=True)
        yield Live(go, host)


ANY_CHAR = st.characters(categories=["Cs"]) | st.characters() | st.sampled_from('{}[]":,\\ ')
ANY_TEXT = st.text(ANY_CHAR, max_size=60)

KEYS = st.sampled_from(["id", "query", "limit", "ID", ""]) | ANY_TEXT
SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.sampled_from([10**400, -(10**400), math.nan, math.inf, -math.inf])  # not JSON for Go
    | ANY_TEXT
)
JSON_VALUES = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(KEYS, inner, max_size=4),
    max_leaves=12,
)
IDS = st.from_regex(r"\A[ \trR]{0,3}[+-]?0*[0-9]{1,3}[ a]?\Z") | ANY_TEXT
WORDS = st.lists(
    st.sampled_from(["alpha", "BETA", "crème", "İstanbul", "σοφια", "r1", "3", "&", "<b>"])
    | ANY_TEXT,
    max_size=4,
).map(" ".join)
LIMITS = st.integers(min_value=-30, max_value=30) | st.floats() | st.sampled_from([10**400])


def serialized(value: object, ensure_ascii: bool) -> str:
    """``value`` as JSON text; a surrogate stays raw without ensure_ascii, an escape with it."""
    return json.dumps(value, ensure_ascii=ensure_ascii)


JSON_ARGS = st.builds(serialized, JSON_VALUES, st.booleans())
TOOL_ARGS = st.builds(
    serialized,
    st.fixed_dictionaries(
        {},
        optional={
            "id": IDS | JSON_VALUES,
            "query": WORDS | JSON_VALUES,
            "limit": LIMITS | JSON_VALUES,
            "x": JSON_VALUES,
        },
    ),
    st.booleans(),
)


@pytest.mark.go
@CHECKS
@given(name=st.sampled_from(TOOLS), args=ANY_TEXT)
def test_any_text_as_args(live: Live, name: str, args: str) -> None:
    live.check(name, args)


@pytest.mark.go
@CHECKS
@given(name=st.sampled_from(TOOLS), args=st.one_of(JSON_ARGS, TOOL_ARGS, TOOL_ARGS))
def test_any_json_value_as_args(live: Live, name: str, args: str) -> None:
    live.check(name, args)


@pytest.mark.go
@settings(CHECKS, max_examples=EXAMPLES // 2)
@given(
    name=ANY_TEXT | st.sampled_from([*TOOLS, "recall\ud800", "Recall", " recall", ""]),
    args=ANY_TEXT | TOOL_ARGS,
)
def test_any_tool_name(live: Live, name: str, args: str) -> None:
    live.check(name, args)


@pytest.mark.go
@pytest.mark.parametrize(
    "args",
    [
        "[" * 20000 + "]" * 20000,  # deeper than Go's nesting limit
        '{"query": "alpha", "x": ' + "[" * 9000 + "]" * 9000 + "}",
        '{"id": "r1", "x": 1e400}',
        '{"query": "alpha", "limit": NaN}',
        '{"query": "alpha", "limit": ' + "9" * 400 + "}",
        '{"query": "' + "alpha " * 20000 + '"}',  # long, but well under Go's body limit
        '{"id": "r1"}\x00',
        '\ufeff{"id": "r1"}',  # a BOM is not JSON whitespace
        '{"id": "\\ud800\\udc00r1"}',
        '{"id": "r1\ud800"}',
        "\udfff" * 100,
    ],
    ids=lambda args: repr(args[:24]),
)
def test_hostile_args(live: Live, args: str) -> None:
    for name in TOOLS:
        live.check(name, args)


def test_json_values_draw_what_go_rejects() -> None:
    """The strategy reaches the values Go's decoder rejects (numbers out of range, NaN)."""
    texts = [serialized(v, True) for v in (math.nan, math.inf, 10**400)]
    assert texts == ["NaN", "Infinity", str(10**400)]
