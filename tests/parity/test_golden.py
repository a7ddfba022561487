"""One test per golden case: ``recall/<case>``, replayed against Python in every mode."""

from __future__ import annotations

import pytest

from parity.plugin import GoldenCase
from parity.replay import Replayer


@pytest.mark.golden_replay
def test_golden(golden_case: GoldenCase, parity_replayers: dict[str, Replayer]) -> None:
    if golden_case.error is not None or golden_case.call is None:
        pytest.fail(golden_case.error or "no call", pytrace=False)
    result = parity_replayers[golden_case.corpus].run_case(golden_case.call)
    if not result.passed:
        pytest.fail(result.report(), pytrace=False)
