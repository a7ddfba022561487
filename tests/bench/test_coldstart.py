"""bench.coldstart runs end to end: every probe in both byte-code modes, a figure each.

Speed is never asserted (the machine is shared): only that each figure is there
and is a positive time, and that the import figures agree with each other.
"""

from __future__ import annotations

import json

import pytest

from bench import BenchError, coldstart


@pytest.mark.once
def test_every_figure_of_both_modes(capsys: pytest.CaptureFixture[str]) -> None:
    assert coldstart.main(["--runs", "1"]) == 0  # measure(), printed as JSON
    figures = json.loads(capsys.readouterr().out)
    assert list(figures) == [str(coldstart.ROOT)]
    by_mode = figures[str(coldstart.ROOT)]
    assert list(by_mode) == list(coldstart.MODES)
    for mode, named in by_mode.items():
        assert set(named) == {
            *coldstart.PROBES,
            *(f"{probe} (cpu)" for probe in coldstart.PROBES),
            "import (importtime, cumulative)",
            "recall._go (importtime, self)",
        }, mode
        assert all(ms > 0 for ms in named.values()), (mode, named)
        # One run: -X importtime's figure is part of the same wall-clock import.
        assert named["import (importtime, cumulative)"] <= named["import"] + 0.5
        assert named["recall._go (importtime, self)"] < named["import (importtime, cumulative)"]


def test_bad_arguments_are_refused() -> None:
    with pytest.raises(ValueError, match="unknown mode"):
        coldstart.measure(runs=1, modes=["wheel"])
    with pytest.raises(ValueError, match="runs < 1"):
        coldstart.measure(runs=0)


def test_importtime_is_parsed() -> None:
    stderr = (
        "import time: self [us] | cumulative | imported package\n"
        "import time:       120 |        120 |     recall._go._tables\n"
        "import time:        30 |        150 |   recall._go\n"
        "import time:      2000 |       5000 | recall\n"
    )
    assert coldstart._importtime(stderr) == (5.0, 0.15)
    with pytest.raises(BenchError, match="recall"):
        coldstart._importtime("import time:  1 |  1 | json\n")
