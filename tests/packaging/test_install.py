"""The port installs alone: `pip install .` gives `recall` and nothing of the harness."""

from __future__ import annotations

import importlib.util
import json
import shutil
import subprocess
import sys
import venv
from pathlib import Path

import pytest

from tests.runwide import made_once

ROOT = Path(__file__).resolve().parents[2]


def _run(argv: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=600, check=False)


def _pip(python: Path) -> list[str]:
    """pip for the venv of ``python``: this interpreter's run with ``--python`` (the venv
    needs no pip of its own, whose install takes seconds), else the venv's own."""
    if importlib.util.find_spec("pip") is not None:
        return [sys.executable, "-m", "pip", "--python", str(python)]
    return [str(python), "-m", "pip"]


@pytest.fixture(scope="session")
def fresh_install(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A new venv (this interpreter, no site-packages) where `pip install .` ran.

    From a copy of what a checkout's root holds for the port (pyproject.toml, README.md,
    recall/), so the build leaves nothing in the checkout and needs nothing else. One
    for the run: under xdist the workers share it (built by the first, behind a lock),
    wherever their tests land.
    """
    return made_once(tmp_path_factory, "fresh-install", _install) / "venv" / "bin" / "python"


def _install(where: Path) -> None:
    python = where / "venv" / "bin" / "python"
    source = where / "src"
    source.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(ROOT / name, source / name)
    shutil.copytree(
        ROOT / "recall", source / "recall", ignore=shutil.ignore_patterns("__pycache__")
    )
    own_pip = importlib.util.find_spec("pip") is None
    venv.EnvBuilder(with_pip=own_pip, clear=True).create(where / "venv")
    done = _run([*_pip(python), "install", "--quiet", "."], cwd=source)
    assert done.returncode == 0, done.stderr


@pytest.mark.once
def test_the_port_imports_and_the_harness_is_absent(fresh_install: Path, tmp_path: Path) -> None:
    code = """
import importlib.util, json, importlib.metadata as md
import recall
found = {m: importlib.util.find_spec(m) is not None for m in ("parity", "bench", "tests")}
fast = [m for m in ("msgspec", "stringzilla", "sniffio") if importlib.util.find_spec(m) is not None]
dist = md.distribution("recall-port")
print(json.dumps({
    "public": sorted(recall.__all__),
    "found": found,
    "fast": fast,
    "requires": dist.requires or [],
    "entry_points": sorted(f"{e.group}:{e.name}" for e in dist.entry_points),
    "pytest11": sorted(e.name for e in md.entry_points(group="pytest11")),
    "top_level": sorted({f.parts[0] for f in dist.files or [] if f.suffix == ".py"}),
}))
"""
    done = _run([str(fresh_install), "-c", code], cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    facts = json.loads(done.stdout)
    assert {"GoTurnHost", "AsyncGoTurnHost"} <= set(facts["public"])
    assert facts["found"] == {"parity": False, "bench": False, "tests": False}
    # httpx alone; msgspec, stringzilla and sniffio with the `fast` extra alone.
    plain = [r for r in facts["requires"] if ";" not in r]
    extras = [r.replace(" ", "") for r in facts["requires"] if ";" in r]
    assert [r.split(">")[0].split("<")[0].strip() for r in plain] == ["httpx"]
    assert [r.split(">")[0] for r in extras] == ["msgspec", "stringzilla", "sniffio"]
    assert all(r.endswith(';extra=="fast"') for r in extras), extras
    assert facts["fast"] == []  # not installed by `pip install .`
    assert facts["entry_points"] == []
    assert "parity" not in facts["pytest11"]  # httpx brings anyio, which has its own
    assert facts["top_level"] == ["recall"]


@pytest.mark.once
def test_pytest_loads_no_parity_plugin(fresh_install: Path, tmp_path: Path) -> None:
    done = _run([*_pip(fresh_install), "install", "--quiet", "pytest"], cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    (tmp_path / "test_nothing.py").write_text("def test_nothing():\n    pass\n")
    version = _run([str(fresh_install), "-m", "pytest", "-VV"], cwd=tmp_path)
    assert version.returncode == 0, version.stderr
    assert "pytest" in version.stdout + version.stderr
    assert "parity" not in (version.stdout + version.stderr).lower()
    # The plugin's own option would be known if it were loaded.
    helped = _run([str(fresh_install), "-m", "pytest", "--help"], cwd=tmp_path)
    assert helped.returncode == 0, helped.stderr
    assert "--parity-journal" not in helped.stdout


def test_this_checkout_loads_the_harness_plugin(pytestconfig: pytest.Config) -> None:
    """The other side: pytest in this checkout loads the plugin (pyproject's addopts),
    and no distribution registers it."""
    import importlib.metadata as md

    assert pytestconfig.pluginmanager.has_plugin("parity.plugin")
    assert "parity" not in {e.name for e in md.entry_points(group="pytest11")}
    assert sys.prefix != sys.base_prefix
