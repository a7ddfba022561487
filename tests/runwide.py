"""What a test run makes once, whichever xdist workers ask for it."""

from __future__ import annotations

import fcntl
import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest


def made_once(factory: pytest.TempPathFactory, name: str, make: Callable[[Path], None]) -> Path:
    """The run's directory ``name``, filled by ``make(directory)`` in the first process
    that asks; the others wait for it behind a lock (a ``make`` that raised is redone)."""
    base = factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        base = base.parent  # the run's, above each worker's own
    where = base / name
    with (base / f"{name}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        if not (where / ".made").exists():
            shutil.rmtree(where, ignore_errors=True)
            where.mkdir()
            make(where)
            (where / ".made").touch()
    return where
