"""A non-editable install carries everything a user runs: the scenarios, the fixture data, the agents.

The wheel is built from a copy of the checkout (so the build leaves nothing in the tree),
then installed without its dependencies into a fresh virtual environment that sees this
interpreter's packages (numpy, pandas... are not downloaded again), and the CLI is run
from a directory that holds no scenarios.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SHIPPED = sorted(p.name for p in (ROOT / "scenarios").glob("*.toml"))
FAMILIES = sorted(p.name for p in (ROOT / "scenarios" / "families").glob("*.toml"))

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    src = tmp_path_factory.mktemp("src")
    skip = shutil.ignore_patterns(".git", ".cache", "results", "build", "dist", "*.egg-info", "__pycache__")
    for name in ("pyproject.toml", "setup.py", "README.md", "harness", "scripted_agents", "scenarios"):
        path = ROOT / name
        if path.is_dir():
            shutil.copytree(path, src / name, ignore=skip)
        else:
            shutil.copy2(path, src / name)
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-q",
            "-w",
            str(out),
            ".",
        ],
        cwd=src,
        check=True,
        capture_output=True,
    )
    (found,) = out.glob("harness-*.whl")
    return found


def test_the_wheel_carries_every_shipped_scenario_and_the_fixture_data(wheel: Path) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    assert SHIPPED, "no scenarios in the checkout"
    for scenario in SHIPPED:
        assert f"harness/scenarios/{scenario}" in names
    assert FAMILIES, "no families in the checkout"
    for family in FAMILIES:
        assert f"harness/scenarios/families/{family}" in names
    assert "harness/fixtures/data/conformance.toml" in names
    assert "harness/py.typed" in names
    entry_points = next(n for n in names if n.endswith(".dist-info/entry_points.txt"))
    text = zipfile.ZipFile(wheel).read(entry_points).decode()
    assert "[harness.agents]" in text and "reader = scripted_agents.reader:ReaderAgent" in text


def test_installed_from_the_wheel_list_and_run_work_from_any_directory(wheel: Path, tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)], check=True)
    python = venv / "bin" / "python"
    subprocess.run(
        [str(python), "-m", "pip", "install", "-q", "--no-deps", str(wheel)], check=True, capture_output=True
    )
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    where = subprocess.run(
        [str(python), "-c", "import harness; print(harness.__file__)"],
        cwd=elsewhere,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert str(venv) in where, f"the installed copy was not the one imported: {where}"
    harness = venv / "bin" / "harness"
    listed = subprocess.run(
        [str(harness), "list", "--json"], cwd=elsewhere, env=env, capture_output=True, text=True, check=True
    )
    assert all(Path(s).stem in listed.stdout for s in SHIPPED)
    assert all(f'"{Path(f).stem}"' in listed.stdout for f in FAMILIES)
    run = subprocess.run(
        [str(harness), "run", "flaky_weather", "--seeds", "2", "--executor", "serial", "--out", "out"],
        cwd=elsewhere,
        env=env,
        capture_output=True,
        text=True,
    )
    assert run.returncode == 0, run.stderr
    assert (elsewhere / "out" / "sessions.parquet").is_file()
