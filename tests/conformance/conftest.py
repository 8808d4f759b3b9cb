"""The official suite's install, shared by the server and the client scenario tests.

The suite (npm ``@modelcontextprotocol/conformance``, pinned with the Node.js it
needs in ``package.json`` beside this file) is installed into
``.cache/conformance`` by ``.ci/run``, or here if it is missing. A test that
needs it skips only when npm cannot give it to us (no npm, or the registry is
out of reach).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
REPO_ROOT = HERE.parent.parent
CACHE = Path(os.environ.get("HARNESS_CONFORMANCE_CACHE", REPO_ROOT / ".cache" / "conformance"))
PIN = HERE / "package.json"


def _pinned_version(package: str) -> str:
    return str(json.loads(PIN.read_text())["dependencies"][package])


def _installed_version(package: str) -> str | None:
    manifest = CACHE / "node_modules" / package / "package.json"
    if not manifest.is_file():
        return None
    return str(json.loads(manifest.read_text()).get("version"))


def _suite_ready() -> bool:
    return all(
        _installed_version(p) == _pinned_version(p) for p in ("@modelcontextprotocol/conformance", "node")
    )


@pytest.fixture(scope="session")
def suite_bin() -> Path:
    """The directory holding the suite's ``conformance`` and its Node 22 ``node``."""
    if not _suite_ready():
        npm = shutil.which("npm")
        if npm is None:
            pytest.skip("npm is not installed, so the MCP conformance suite cannot be installed")
        CACHE.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(PIN, CACHE / "package.json")
        done = subprocess.run(
            [npm, "install", "--no-audit", "--no-fund", "--loglevel=error"],
            cwd=CACHE,
            capture_output=True,
            text=True,
            timeout=240,
        )
        if done.returncode != 0 or not _suite_ready():
            tail = (done.stderr or done.stdout).strip().splitlines()[-3:]
            pytest.skip(f"npm could not install the conformance suite (offline?): {' | '.join(tail)}")
    return CACHE / "node_modules" / ".bin"
