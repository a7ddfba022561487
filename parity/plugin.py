"""The harness's pytest plugin (registered under ``pytest11``).

Fixtures for the Go reference instance:

- ``go_reference``: one instance for the session, its sequence starting at 1000;
- ``fresh_go``: a factory, ``fresh_go(first_seq=..., token=...)``, for an empty
  instance of the test's own, stopped when the test ends.

A test that needs Go skips when Go cannot be built or started, except under
``CI=true``, where it fails: CI never hides a missing toolchain behind a skip.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator

import pytest

from parity.errors import GoReferenceError
from parity.reference import GoReference, RunningReference

__all__ = ["FreshGo", "go_unavailable"]

FreshGo = Callable[..., RunningReference]


def _in_ci() -> bool:
    return os.environ.get("CI", "").lower() not in {"", "0", "false", "no"}


def go_unavailable(exc: GoReferenceError) -> None:
    """Skip the test for a missing Go, or fail it under CI."""
    message = f"the Go reference is unavailable: {exc}"
    if _in_ci():
        pytest.fail(message, pytrace=False)
    pytest.skip(message)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "go: needs the Go reference instance")


@pytest.fixture(scope="session")
def go_build() -> GoReference:
    """The Go reference module, built once for the session."""
    try:
        reference = GoReference()
        reference.build()
    except GoReferenceError as exc:
        go_unavailable(exc)
        raise  # pragma: no cover - go_unavailable always raises
    return reference


@pytest.fixture(scope="session")
def go_reference(go_build: GoReference) -> Iterator[RunningReference]:
    """A Go reference instance shared by the session (first seq 1000)."""
    try:
        running = go_build.start(first_seq=1000)
    except GoReferenceError as exc:
        go_unavailable(exc)
        raise  # pragma: no cover
    with running:
        yield running


@pytest.fixture
def fresh_go(go_build: GoReference) -> Iterator[FreshGo]:
    """A factory of empty Go reference instances, each stopped when the test ends."""
    started: list[RunningReference] = []

    def start(*, first_seq: int = 1, token: str | None = None) -> RunningReference:
        try:
            running = go_build.start(first_seq=first_seq, token=token)
        except GoReferenceError as exc:
            go_unavailable(exc)
            raise  # pragma: no cover
        started.append(running)
        return running

    yield start
    for running in started:
        running.stop()
