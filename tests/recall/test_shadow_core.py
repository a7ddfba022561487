"""The shadow's decisions without I/O (recall._shadow): the first differing byte, the
blocks a divergence keeps, the Divergence's JSON line, sampling, the burst log."""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Callable

import pytest

from recall import Block, Divergence
from recall._shadow import (
    BURST_SECONDS,
    MAX_KEPT_BLOCKS,
    Primary,
    PythonRun,
    Shadow,
    ShadowState,
    first_difference,
)
from recall._tools import start_tool


@pytest.mark.parametrize(
    ("expected", "actual", "where"),
    [
        ("abc", "abc", None),
        ("abc", "abd", (2, 1, 3)),
        ("ab\ncd\nef", "ab\ncd\neX", (7, 3, 2)),
        ("ab\n", "ab", (2, 1, 3)),  # a missing byte counts
        ("ab", "ab\n", (2, 1, 3)),
        ("", "x", (0, 1, 1)),
        ("é\nà", "é\ná", (4, 2, 2)),  # columns count bytes
        ("é", "è", (1, 1, 2)),  # within a rune: its second byte
    ],
)
def test_first_difference(expected: str, actual: str, where: tuple[int, int, int] | None) -> None:
    assert first_difference(expected, actual) == where


def shadow(
    rate: float = 1.0,
    primary: Primary = "python",
    source: Callable[[], float] | None = None,
    clock: Callable[[], float] = lambda: 0.0,
) -> ShadowState:
    made = ShadowState.of(Shadow(rate=rate, primary=primary, queue=4), token="tok-core-SECRET")
    assert made is not None
    made._clock = clock
    if source is not None:
        made._random = source
    return made


def search_run(query: str, blocks: list[Block], output: str | None = None) -> PythonRun:
    step = start_tool("recall_search", json.dumps({"query": query}))
    assert not isinstance(step, str)
    error = None if output is not None else "ValueError: x"
    return PythonRun(output, error, step=step, blocks=blocks)


BLOCKS = [
    Block(10, "apple", "an apple a day"),
    Block(11, "pear", "no fruit here"),
    Block(12, "", "apple pie"),
    Block(13, "plum", "plums only"),
]


def test_a_search_keeps_the_port_s_matches_and_what_go_cites() -> None:
    run = search_run("apple", BLOCKS, "port")
    go = '2 of 2 matching blocks for "apple":\n[r13] plum (score 1)\n[r10] apple (score 3)'
    d = shadow().divergence("recall_search", '{"query": "apple"}', run, go)
    assert [b.seq for b in d.blocks] == [10, 12, 13]
    assert d.complete


@pytest.mark.parametrize(
    "go",
    [
        '3 of 3 matching blocks for "apple":\n[r10] apple (score 3)',  # Go counts more
        "something else entirely",  # not an output Go's search gives
    ],
)
def test_a_search_keeps_every_block_when_go_may_match_more(go: str) -> None:
    d = shadow().divergence("recall_search", "{}", search_run("apple", BLOCKS, "port"), go)
    assert d.blocks == tuple(BLOCKS)
    assert d.complete


def test_the_blocks_kept_are_bounded_cited_first() -> None:
    many = [Block(seq, "", "apple") for seq in range(1, 3 * MAX_KEPT_BLOCKS)]
    go = '1 of 1 matching blocks for "x":\n[r250] (score 1)'
    d = shadow().divergence("recall_search", "{}", search_run("apple", many, "port"), go)
    assert len(d.blocks) == MAX_KEPT_BLOCKS
    assert not d.complete
    assert 250 in {b.seq for b in d.blocks}
    assert [b.seq for b in d.blocks] == sorted(b.seq for b in d.blocks)


def test_a_divergence_is_one_line_of_json_read_back() -> None:
    d = shadow().divergence(
        "recall_search",
        '{"query": "caf\u00e9 \u2028"}',
        search_run("apple", [Block(7, "l\u2029", "apple \U0001f600\n")], "1 of 1\u2028"),
        '1 of 2 \u00e9"',
    )
    line = d.to_json(include_private_data=True)
    assert line.isascii()
    assert line.splitlines() == [line]
    assert Divergence.from_json(line) == d
    assert Divergence.from_json(line + "\n") == d


GOOD = (
    shadow()
    .divergence("recall", "{}", search_run("apple", BLOCKS, "a"), "b")
    .to_json(include_private_data=True)
)


def edited(**changes: object) -> str:
    doc = json.loads(GOOD)
    for key, value in changes.items():
        if value is KeyError:
            del doc[key]
        else:
            doc[key] = value
    return json.dumps(doc)


@pytest.mark.parametrize(
    ("line", "message"),
    [
        (GOOD[: len(GOOD) // 2], "not JSON (truncated?): "),
        ("", "not JSON (truncated?): "),
        ("[1]", "a JSON object with 'divergence' is expected"),
        (edited(divergence=2), "divergence format 2 is not 1"),
        (edited(name=KeyError), "'name' is missing"),
        (edited(args=7), "'args' must be a str, not int"),
        (edited(primary="rust"), "'primary' must be 'python' or 'go', not 'rust'"),
        (edited(python_error="E: x"), "exactly one of 'python_output' and 'python_error'"),
        (edited(python_output="b"), "'python_output' and 'go_output' are equal"),
        (edited(blocks={}), "'blocks' must be a list, not dict"),
        (edited(blocks=[1]), "blocks[0] is not an object"),
        (edited(blocks=[{"seq": "1", "label": "", "content": ""}]), "'blocks[0].seq' must be"),
        (
            edited(blocks=[{"seq": 2, "label": "", "content": ""}] * 2),
            "blocks[1].seq must be >= 1 and increasing",
        ),
        (edited(blocks=[{"seq": True, "label": "", "content": ""}]), "blocks[0].seq must be"),
        (edited(complete="yes"), "'complete' must be a bool, not str"),
    ],
)
def test_a_bad_line_is_said_clearly(line: str, message: str) -> None:
    with pytest.raises(ValueError, match="^" + re.escape(message)):
        Divergence.from_json(line)


def test_sampling_draws_only_for_a_fraction() -> None:
    draws: list[float] = []

    def source() -> float:
        draws.append(0.5)
        return 0.5

    assert shadow(1.0, source=source).sample()
    assert not shadow(0.0, primary="go", source=source).sample()
    assert draws == []
    assert shadow(0.6, source=source).sample()
    assert not shadow(0.4, source=source).sample()
    assert draws == [0.5, 0.5]
    assert ShadowState.of(Shadow(rate=0), token=None) is None  # nothing to do: no shadow at all
    assert ShadowState.of(None, token=None) is None


def test_a_failing_go_is_logged_once_per_burst(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="recall.shadow")
    now = [100.0]
    s = shadow(clock=lambda: now[0])
    error = RuntimeError("down, tok-core-SECRET")
    for _ in range(5):
        s.go_failed(error)
    s.go_answered()
    s.go_answered()
    s.go_failed(error)
    now[0] += BURST_SECONDS - 1
    s.go_failed(error)
    now[0] += 1
    s.go_failed(error)
    messages = [r.getMessage() for r in caplog.records]
    assert messages == [
        "Go's tool endpoint failed a shadow call (down, ***); not logged again before it"
        " answers or for 60s",
        "Go's tool endpoint answers again, after 5 failures",
        "Go's tool endpoint failed a shadow call (down, ***); not logged again before it"
        " answers or for 60s",
        "Go's tool endpoint still failing: 3 failures since it last answered (down, ***)",
    ]


def test_a_divergence_leaves_the_process_redacted_by_default() -> None:
    secret = "confidential-customer-plan"
    run = search_run(secret, [Block(7, "plan", f"{secret}\tdraft")], f"[r7] plan\n  {secret} draft")
    d = shadow().divergence(
        "recall_search", json.dumps({"query": secret}), run, f"[r7] plan\n  {secret}\tdraft"
    )
    redacted = json.loads(d.to_json())
    where = 12 + len(secret)  # the tab, in Go's output
    assert redacted == {
        "divergence": 1,
        "redacted": True,
        "name": "recall_search",
        "primary": "python",
        "args": {"bytes": len(d.args), "sha256": redacted["args"]["sha256"]},
        "go_output": {"bytes": len(d.go_output), "sha256": redacted["go_output"]["sha256"]},
        "python_output": {"bytes": where + 6, "sha256": redacted["python_output"]["sha256"]},
        "python_error": None,
        "first_difference": {
            "offset": where,
            "line": 2,
            "column": where - 9,
            "go": "plan\tdra",
            "python": "plan dra",
        },
        "seqs_read": [7],
        "blocks": [{"seq": 7, "bytes": 37, "sha256": redacted["blocks"][0]["sha256"]}],
        "complete": True,
    }
    assert redacted["go_output"]["sha256"] != redacted["python_output"]["sha256"]
    for text in (d.to_json(), repr(d), d.summary()):
        assert "customer" not in text
    assert "customer" in d.to_json(include_private_data=True)
    with pytest.raises(ValueError, match=r"^a redacted divergence holds no text to replay"):
        Divergence.from_json(d.to_json())
