"""``unicode_version=``: each host, and run_tool, quote as the Go of that Unicode version.

Against Go itself: tests/recall/test_go_tables.py (each table, code point by code
point) and tests/parity/test_go_releases.py (the reference built with each release).
"""

from __future__ import annotations

import json
from typing import Any

import pytest

import recall
from parity.probe import version_code_point_ranges
from recall import MemoryArchive, run_tool, unicode_versions
from recall._go import quote_for

from .conftest import MakeHost

# A malformed id and a query without terms: neither reads the archive, so no Go
# needs to answer (the base URL refuses connections).
NOWHERE = "http://127.0.0.1:9"
SEPARATING = "".join(chr(lo) for lo, _ in version_code_point_ranges()[:8]) + "\U0001fae9"
CALLS = [
    ("recall", json.dumps({"id": "x" + SEPARATING})),
    ("recall_search", json.dumps({"query": "\u1c89 " + SEPARATING})),
]


def test_the_default_is_explicit() -> None:
    assert recall.DEFAULT_UNICODE_VERSION == "17.0.0"
    assert recall.DEFAULT_UNICODE_VERSION in unicode_versions()
    numbers = [tuple(map(int, v.split("."))) for v in unicode_versions()]
    assert numbers == sorted(set(numbers))


@pytest.mark.parametrize("version", unicode_versions())
def test_a_host_quotes_as_its_version(make_host: MakeHost, version: str) -> None:
    host = make_host(NOWHERE, unicode_version=version)
    empty = MemoryArchive()
    for tool, args in CALLS:
        assert host.exec_tool(tool, args) == run_tool(tool, args, empty, unicode_version=version)


def test_the_versions_answer_apart(make_host: MakeHost) -> None:
    outputs = {
        v: [make_host(NOWHERE, unicode_version=v).exec_tool(t, a) for t, a in CALLS]
        for v in unicode_versions()
    }
    assert len({tuple(o) for o in outputs.values()}) == len(outputs)
    for v, (not_found, _) in outputs.items():
        assert not_found == "no archived block " + quote_for(v)("x" + SEPARATING)
    default = make_host(NOWHERE)
    assert [default.exec_tool(t, a) for t, a in CALLS] == outputs[recall.DEFAULT_UNICODE_VERSION]


@pytest.mark.parametrize("bad", ["16.0.0", "15.0", "", "go1.26", "15.0.0 ", "1.2.3.4"])
def test_an_unknown_version_is_a_value_error_naming_the_known(
    make_host: MakeHost, bad: str
) -> None:
    known = ", ".join(repr(v) for v in unicode_versions())
    with pytest.raises(ValueError, match=f"unknown unicode_version {bad!r}.*{known}"):
        make_host(NOWHERE, unicode_version=bad)
    with pytest.raises(ValueError, match="unknown unicode_version"):
        run_tool("recall", "{}", MemoryArchive(), unicode_version=bad)


@pytest.mark.parametrize("bad", [15, None, b"15.0.0", ["15.0.0"]])
def test_a_version_that_is_not_a_str_is_a_type_error(make_host: MakeHost, bad: Any) -> None:
    with pytest.raises(TypeError, match="unicode_version must be a str"):
        make_host(NOWHERE, unicode_version=bad)
    with pytest.raises(TypeError, match="unicode_version must be a str"):
        run_tool("recall", "{}", MemoryArchive(), unicode_version=bad)
