"""The harness's pytest plugin (``-p parity.plugin`` in this checkout's pytest config):
the Go reference's fixtures (``parity.fixtures.go``) and the goldens'
(``parity.fixtures.golden``). The ``go`` marker is registered by ``pyproject.toml``.
"""

from __future__ import annotations

pytest_plugins = ("parity.fixtures.go", "parity.fixtures.golden")
