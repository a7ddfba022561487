"""The harness's pytest plugin (``-p parity.plugin`` in this checkout's pytest config):
the Go reference's fixtures (``parity.fixtures.go``), and the golden tests' options, so
they parse in any run (their fixtures are ``tests/parity/conftest.py``'s):
``--parity-journal PATH`` (repeatable; default: ``golden/<corpus>.json``) and
``--parity-go-url`` (``-ca``, ``-cert``, ``-key``), a live Go for the recording tests.
The ``go`` marker is registered by ``pyproject.toml``.
"""

from __future__ import annotations

import pytest

pytest_plugins = ("parity.fixtures.go",)


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("parity", "Go<->Python parity harness")
    group.addoption(
        "--parity-journal",
        action="append",
        metavar="PATH",
        help="a golden journal to replay (repeatable; default: golden/<corpus>.json)",
    )
    from parity.goclient import TOKEN_ENV, add_go_options

    add_go_options(
        group.addoption,
        prefix="--parity-go",
        url_help=f"a live, empty Go for the recording tests (token in ${TOKEN_ENV}); "
        "default: a fresh Go reference",
    )
