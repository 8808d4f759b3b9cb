"""Shared pieces of the proxy's process tests: commands, a live HTTP proxy, the npm packages.

The npm packages (the MCP Inspector and the reference server ``server-everything``, pinned with
the Node.js 22 the Inspector needs in ``package.json`` beside this file) are installed into the
gitignored ``.cache/proxy`` on first use; a test that needs them skips, saying why, when npm
cannot give them.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from helpers.npm import npm_install

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
PEERS = REPO / "tests" / "peers"
CACHE = Path(os.environ.get("HARNESS_PROXY_CACHE", REPO / ".cache" / "proxy"))
PIN = HERE / "package.json"
HARNESS = (sys.executable, "-m", "harness.cli.main")
DEMO = (*HARNESS, "serve", "--demo")
SDK_SERVER = (sys.executable, str(PEERS / "sdk_server.py"))


def proxy(*options: str, upstream: tuple[str, ...] = DEMO) -> list[str]:
    """``harness proxy OPTIONS -- UPSTREAM``."""
    return [*HARNESS, "proxy", *options, "--", *upstream]


@pytest.fixture(scope="session")
def npm_bin() -> Path:
    """The folder with ``mcp-inspector``, ``mcp-server-everything`` and Node 22's ``node``."""
    npm_install(CACHE, PIN, "the MCP Inspector and server-everything")
    return CACHE / "node_modules" / ".bin"


def node_env(npm_bin: Path) -> dict[str, str]:
    """The environment that puts the pinned Node first (the Inspector needs Node 22)."""
    return {**os.environ, "PATH": f"{npm_bin}{os.pathsep}{os.environ.get('PATH', '')}"}


@dataclass
class LiveProxy:
    """A ``harness proxy --http`` (or ``harness serve --http``) process and its URL."""

    process: subprocess.Popen[str]
    url: str
    stderr: list[str]

    def stop(self) -> str:
        """SIGTERM, then the rest of its stderr."""
        if self.process.poll() is None:
            self.process.terminate()
        try:
            _, rest = self.process.communicate(timeout=20)
        except subprocess.TimeoutExpired:
            self.process.kill()
            _, rest = self.process.communicate()
        return "".join(self.stderr) + (rest or "")


def start_http(argv: list[str], *, says: str = "listening on ") -> LiveProxy:
    """Start an HTTP server command with ``--port 0`` in ``argv``; wait for its listening line."""
    process = subprocess.Popen(
        argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, cwd=REPO
    )
    assert process.stderr is not None
    lines: list[str] = []
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        line = process.stderr.readline()
        if not line:
            break
        lines.append(line)
        found = re.search(r"http://[\w.\[\]:]+:(\d+)/mcp", line)
        if says in line and found:
            return LiveProxy(process, found.group(0), lines)
    process.kill()
    process.communicate()
    raise AssertionError(f"no listening line from {argv}: {''.join(lines)}")


@pytest.fixture
def live() -> Iterator[list[LiveProxy]]:
    """HTTP processes a test starts; all stopped at its end."""
    started: list[LiveProxy] = []
    yield started
    for one in started:
        one.stop()
