"""The golden tests: one per journal call, ``recall/<case>``, replayed against Python in
every mode (``pytest tests/parity/test_golden.py``; fixtures: ``conftest.py``)."""

from __future__ import annotations

import pytest

from parity.replay import Replayer

from .conftest import GoldenCase


@pytest.mark.golden_replay
def test_golden(golden_case: GoldenCase, parity_replayers: dict[str, Replayer]) -> None:
    if golden_case.call is None:
        pytest.fail("no journal call to replay", pytrace=False)
    result = parity_replayers[golden_case.corpus].run_case(golden_case.call)
    if not result.passed:
        pytest.fail(result.report(), pytrace=False)
