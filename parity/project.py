"""Where the project checkout is (its Go reference, its goldens), and whether CI runs.

The checkout this package was installed from in editable mode (as ``make`` does), else
``$PARITY_ROOT``, else the nearest directory up holding ``goref/go.mod``.
"""

from __future__ import annotations

import functools
import os
from pathlib import Path

from parity.errors import ParityError

ROOT_ENV = "PARITY_ROOT"
"""The environment variable that names the project checkout explicitly."""


def _is_root(path: Path) -> bool:
    return (path / "goref" / "go.mod").is_file()


@functools.cache
def project_root() -> Path:
    """The project checkout's root directory; ParityError when there is none."""
    named = os.environ.get(ROOT_ENV)
    if named:
        root = Path(named).resolve()
        if not _is_root(root):
            raise ParityError(f"${ROOT_ENV} is {named!r}, which holds no goref/go.mod")
        return root
    here = Path(__file__).resolve().parents[1]  # parity/project.py in a checkout
    if _is_root(here):
        return here
    cwd = Path.cwd().resolve()
    for candidate in (cwd, *cwd.parents):
        if _is_root(candidate):
            return candidate
    raise ParityError(
        "no project checkout: run from inside one, or set "
        f"${ROOT_ENV} to the directory that holds goref/ and golden/"
    )


def in_ci() -> bool:
    """Whether this runs under CI (``$CI`` set, and not ``0``, ``false`` or ``no``)."""
    return os.environ.get("CI", "").lower() not in {"", "0", "false", "no"}
