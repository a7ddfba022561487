"""parity.plugin: the `go` marker registered once, the journals kept in `config.stash`."""

from __future__ import annotations

import pytest

from parity.replay import Replayer

from .conftest import JOURNALS


def test_the_go_marker_is_registered_once(pytestconfig: pytest.Config) -> None:
    markers = [line for line in pytestconfig.getini("markers") if line.split(":")[0] == "go"]
    assert len(markers) == 1, markers


def test_the_journals_are_kept_in_the_stash(
    pytestconfig: pytest.Config, parity_replayers: dict[str, Replayer]
) -> None:
    assert not hasattr(pytestconfig, "_parity_journals")
    kept = pytestconfig.stash[JOURNALS]
    assert not isinstance(kept, str), kept  # not why the journals are unusable
    assert kept == {name: replayer.journal for name, replayer in parity_replayers.items()}
