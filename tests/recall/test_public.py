"""The public surface of ``recall``: what it exports, and what importing it costs."""

from __future__ import annotations

import subprocess
import sys

import pytest

import recall


def test_every_name_of_all_is_there() -> None:
    for name in recall.__all__:
        assert getattr(recall, name) is not None, name
    from recall._async import AsyncGoTurnHost

    assert recall.AsyncGoTurnHost is AsyncGoTurnHost


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="has no attribute 'nope'"):
        _ = recall.nope  # type: ignore[attr-defined]


def test_a_threads_only_user_never_imports_asyncio() -> None:
    code = (
        "import sys, recall\n"
        "host = recall.GoTurnHost('http://127.0.0.1:9')\n"
        "host.close()\n"
        "print('asyncio' in sys.modules)\n"
        "from recall import AsyncGoTurnHost\n"
        "print('asyncio' in sys.modules)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.split() == ["False", "True"]
