"""Where the project checkout is (its Go reference, its goldens), and whether CI runs."""

from __future__ import annotations

import os
from pathlib import Path


def project_root() -> Path:
    """The project checkout's root: the directory holding ``parity/`` (which runs from a
    checkout, never installed)."""
    return Path(__file__).resolve().parents[1]


def in_ci() -> bool:
    """Whether this runs under CI (``$CI`` set, and not ``0``, ``false`` or ``no``)."""
    return os.environ.get("CI", "").lower() not in {"", "0", "false", "no"}
