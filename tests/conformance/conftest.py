"""The official suite's install, shared by the server and the client scenario tests.

The suite (npm ``@modelcontextprotocol/conformance``, pinned with the Node.js it
needs in ``package.json`` beside this file) is installed into
``.cache/conformance`` by ``.ci/run``, or here if it is missing. A test that
needs it skips only when npm cannot give it to us (no npm, or the registry is
out of reach).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.helpers.npm import npm_install

HERE = Path(__file__).resolve().parent
REPO_ROOT = HERE.parent.parent
CACHE = Path(os.environ.get("HARNESS_CONFORMANCE_CACHE", REPO_ROOT / ".cache" / "conformance"))
PIN = HERE / "package.json"


@pytest.fixture(scope="session")
def suite_bin() -> Path:
    """The directory holding the suite's ``conformance`` and its Node 22 ``node``."""
    npm_install(CACHE, PIN, "the MCP conformance suite")
    return CACHE / "node_modules" / ".bin"
