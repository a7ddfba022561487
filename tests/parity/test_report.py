"""parity.report: visible characters, the mismatch report."""

from __future__ import annotations

import pytest

from parity.report import mismatch_report, shorten, visible


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("plain text", "plain text"),
        ("a\nb", "a⏎\nb"),
        ("a\n", "a⏎\n"),
        ("tab\there", "tab⟨TAB⟩here"),
        ("cr\r\n", "cr⟨CR⟩⏎\n"),
        ("nul\x00", "nul⟨NUL⟩"),
        ("zw\u200bsp", "zw⟨U+200B⟩sp"),
        ("nb\u00a0sp", "nb⟨U+00A0⟩sp"),
        ("bom\ufeff", "bom⟨U+FEFF⟩"),
        ("ls\u2028ps\u2029", "ls⟨U+2028⟩ps⟨U+2029⟩"),
        ("trailing  \nx", "trailing␠␠⏎\nx"),
        ("inner space", "inner space"),
        ("marker ⟨⏎", "marker ⟨U+27E8⟩⟨U+23CE⟩"),
        ("é😀", "é😀"),
    ],
)
def test_visible(text: str, shown: str) -> None:
    assert visible(text) == shown


def test_shorten() -> None:
    assert shorten("abc", 5) == "abc"
    assert shorten("a" * 10, 4) == "aaaa… (6 more characters)"


def test_mismatch_report() -> None:
    text = mismatch_report(
        title="MISMATCH search-x",
        tool="recall_search",
        args='{"query": "x"}',
        expected="1 of 1\n[r1] a\u200b",
        actual="1 of 1\n[r1] a",
    )
    lines = text.split("\n")
    assert lines[0] == "MISMATCH search-x"
    assert "  tool: recall_search" in lines
    assert '  args: {"query": "x"}' in lines
    assert "  first difference at byte 13 (line 2, col 7)" in lines
    assert "  go (golden) (16 bytes):" in lines
    assert "  python (13 bytes):" in lines
    assert "    -[r1] a⟨U+200B⟩" in lines
    assert "    +[r1] a" in lines


def test_an_args_value_with_a_newline_keeps_the_report_indented() -> None:
    text = mismatch_report(
        title="MISMATCH c",
        tool="recall_search",
        args='{"query":\n"a\\nb"}',
        expected="x",
        actual="y",
    )
    lines = text.splitlines()
    assert lines[0] == "MISMATCH c"
    assert all(line.startswith("  ") for line in lines[1:]), text
    assert '  args: {"query":⏎"a\\nb"}' in lines
