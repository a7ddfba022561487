"""``make bench``: recall_search at archive scale, Python against Go (``bench.runner``)."""

from __future__ import annotations

import time
from collections.abc import Callable

__all__ = ["BenchError", "ParityFailure", "timed"]


class BenchError(Exception):
    """A measure could not be taken: a child, the Go or its benchmark failed."""


class ParityFailure(BenchError):
    """A measured Python output differs from Go's, or the Python path called Go's tool."""


def timed(call: Callable[..., object], *args: object) -> float:
    """The seconds ``call(*args)`` takes; what it returns is freed after the clock stops."""
    start = time.perf_counter()
    _kept = call(*args)
    return time.perf_counter() - start
