"""Pinned npm packages for the tests that run Node programs, installed on first use or skipped.

A ``package.json`` beside the tests pins what they need; :func:`npm_install` installs it into a
cache folder unless every pinned package is there already, and skips the test, saying why, when
npm cannot give it (npm missing, the registry out of reach).
"""

from __future__ import annotations

import fcntl
import json
import shutil
import subprocess
from pathlib import Path

import pytest


def pinned_installed(cache: Path, pin: Path) -> bool:
    """Whether every dependency ``pin`` names is installed in ``cache`` at its pinned version."""
    for package, version in json.loads(pin.read_text())["dependencies"].items():
        manifest = cache / "node_modules" / package / "package.json"
        if not manifest.is_file() or json.loads(manifest.read_text()).get("version") != version:
            return False
    return True


def npm_install(cache: Path, pin: Path, what: str) -> None:
    """Have ``pin``'s packages installed in ``cache`` (``npm install`` there if they are not);
    skip the test when npm is missing or fails, naming ``what`` it could not install."""
    if pinned_installed(cache, pin):
        return
    npm = shutil.which("npm")
    if npm is None:
        pytest.skip(f"npm is not installed, so {what} cannot be installed")
    cache.mkdir(parents=True, exist_ok=True)
    # pytest-xdist workers may ask for the same cache at once: one installs, the others wait.
    with (cache / ".install.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not pinned_installed(cache, pin):
            _install(npm, cache, pin, what)


def _install(npm: str, cache: Path, pin: Path, what: str) -> None:
    shutil.copyfile(pin, cache / "package.json")
    done = subprocess.run(
        [npm, "install", "--no-audit", "--no-fund", "--loglevel=error"],
        cwd=cache,
        capture_output=True,
        text=True,
        timeout=240,
    )
    if done.returncode != 0 or not pinned_installed(cache, pin):
        tail = (done.stderr or done.stdout).strip().splitlines()[-3:]
        pytest.skip(f"npm could not install {what} (offline?): {' | '.join(tail)}")
