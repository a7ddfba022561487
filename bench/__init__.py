"""``make bench``: recall_search at archive scale, Python against Go (``bench.runner``)."""

from __future__ import annotations


class BenchError(Exception):
    """A measure could not be taken: a child, the Go or its benchmark failed."""


class ParityFailure(BenchError):
    """A measured Python output differs from Go's, or the Python path called Go's tool."""
