"""The harness's pytest plugin, loaded by this checkout's pytest config (``-p parity.plugin``).

It only gathers two fixture modules:

- ``parity.fixtures.go``: the Go reference (``go_reference``, ``fresh_go``,
  ``go_certs``, ``maintainer``);
- ``parity.fixtures.golden``: the golden journals (``--parity-journal``,
  ``--parity-go-url``; ``golden_case``, ``parity_replayers``, ``parity_journal``,
  ``fake_go``), the tests of ``tests/parity/test_golden.py``.

The ``go`` marker is registered by ``pyproject.toml``.
"""

from __future__ import annotations

pytest_plugins = ("parity.fixtures.go", "parity.fixtures.golden")
