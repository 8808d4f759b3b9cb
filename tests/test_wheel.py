"""A non-editable install carries everything a user runs: the scenarios, the fixture data, the agents.

The wheel is built from a copy of the checkout (so the build leaves nothing in the tree),
then installed without its dependencies into a fresh virtual environment that sees this
interpreter's packages (numpy, pandas... are not downloaded again), and the CLI is run
from a directory that holds no scenarios.

"This interpreter's packages" are those of the environment running the tests, whether a
plain interpreter (CI) or a virtual environment: ``venv --system-site-packages`` would give
a nested venv the *base* interpreter's packages, not the running venv's, so the nested venv
gets a ``.pth`` file naming this interpreter's site-packages directories instead. They come
after the nested venv's own, so the wheel's ``harness`` is the one imported; and the lines are
plain paths, so ``.pth`` files in those directories (this checkout's editable install among
them) are not run.
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
        assert f"harness/scenarios/shipped/{scenario}" in names
    assert FAMILIES, "no families in the checkout"
    for family in FAMILIES:
        assert f"harness/scenarios/shipped/families/{family}" in names
    assert "harness/fixtures/data/conformance.toml" in names
    assert "harness/py.typed" in names
    entry_points = next(n for n in names if n.endswith(".dist-info/entry_points.txt"))
    text = zipfile.ZipFile(wheel).read(entry_points).decode()
    assert "[harness.agents]" in text and "reader = scripted_agents.reader:ReaderAgent" in text


def site_packages() -> list[str]:
    """This interpreter's site-packages directories (a venv's own, or the interpreter's and the
    user's), in import order; not the checkout, which the tests add to ``sys.path``."""
    dirs = [p for p in sys.path if Path(p).name in ("site-packages", "dist-packages") and Path(p).is_dir()]
    return list(dict.fromkeys(dirs))


def nested_venv(venv: Path, wheel: Path | None = None) -> Path:
    """A fresh venv at ``venv`` (``wheel`` installed in it, without dependencies) that sees this
    interpreter's packages after its own."""
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, capture_output=True)
    python = venv / "bin" / "python"
    if wheel is not None:
        pip = subprocess.run(
            [str(python), "-m", "pip", "install", "-q", "--no-deps", "--no-index", str(wheel)],
            capture_output=True,
            text=True,
            # a PYTHONPATH holding a checkout with its egg-info makes pip call harness installed already
            env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"},
        )
        assert pip.returncode == 0, pip.stderr
    purelib = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    (Path(purelib) / "_tests_parent_site_packages.pth").write_text("".join(f"{d}\n" for d in site_packages()))
    return venv


def test_the_nested_venv_sees_the_packages_of_the_interpreter_running_the_tests(tmp_path: Path) -> None:
    venv = nested_venv(tmp_path / "venv")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    found = subprocess.run(
        [str(venv / "bin" / "python"), "-c", "import fastjsonschema, pandas; print(pandas.__file__)"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
    )
    assert found.returncode == 0, found.stderr
    import pandas

    assert Path(found.stdout.strip()).resolve() == Path(pandas.__file__).resolve()  # this interpreter's


def test_installed_from_the_wheel_list_and_run_work_from_any_directory(wheel: Path, tmp_path: Path) -> None:
    venv = nested_venv(tmp_path / "venv", wheel)
    python = venv / "bin" / "python"
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    where = subprocess.run(
        [str(python), "-c", "import harness; print(harness.__file__)"],
        cwd=elsewhere,
        env=env,
        capture_output=True,
        text=True,
    )
    assert where.returncode == 0, where.stderr
    assert str(venv) in where.stdout, f"the installed copy was not the one imported: {where}"
    harness = venv / "bin" / "harness"
    listed = subprocess.run(
        [str(harness), "list", "--json"], cwd=elsewhere, env=env, capture_output=True, text=True
    )
    assert listed.returncode == 0, listed.stderr
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
