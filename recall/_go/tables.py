"""Go's Unicode tables: one generated module for each Unicode version that a Go
release the port matches carries (``goref/releases.txt``).

``recall/_go/_unicode_<major>_<minor>_<patch>.py`` is written by goref/cmd/gentables
(``make tables``) from the newest of those releases that carries that version. Go
1.21 to 1.26 carry Unicode 15.0.0, Go 1.27 Unicode 17.0.0 (``unicode.Version``).
``DEFAULT`` is the tables of ``DEFAULT_UNICODE_VERSION``; another is imported when
first asked for.
"""

from __future__ import annotations

import importlib
import os
import pkgutil
import re
from types import ModuleType
from typing import Final

from recall._go import _unicode_17_0_0 as DEFAULT

__all__ = ["DEFAULT", "DEFAULT_UNICODE_VERSION", "load", "unicode_versions"]

DEFAULT_UNICODE_VERSION: Final = "17.0.0"
"""The Unicode version of Go 1.27, the reference's: the hosts' default."""

_MODULE = re.compile(r"_unicode_([0-9]+)_([0-9]+)_([0-9]+)\Z")


def unicode_versions() -> tuple[str, ...]:
    """The Unicode versions there are tables of, oldest first."""
    names = (info.name for info in pkgutil.iter_modules([os.path.dirname(__file__)]))
    found = [m.groups() for name in names if (m := _MODULE.match(name))]
    return tuple(".".join(v) for v in sorted(found, key=lambda v: tuple(map(int, v))))


def load(unicode_version: str) -> ModuleType:
    """The tables of ``unicode_version`` (Go's ``unicode.Version``, such as ``"15.0.0"``).

    TypeError when it is not a str; ValueError, naming the known versions, when
    there are no tables of it.
    """
    if not isinstance(unicode_version, str):
        raise TypeError(f"unicode_version must be a str, not {type(unicode_version).__name__}")
    if unicode_version == DEFAULT_UNICODE_VERSION:
        return DEFAULT
    if unicode_version in unicode_versions():
        return importlib.import_module(f"recall._go._unicode_{unicode_version.replace('.', '_')}")
    known = ", ".join(repr(v) for v in unicode_versions())
    raise ValueError(
        f"unknown unicode_version {unicode_version!r}: the port has Go's tables of {known} "
        "(the unicode.Version of the Go it talks to; `parity probe` names it)"
    )
