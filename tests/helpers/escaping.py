"""SIGTERM to ``harness proxy`` while a ``setsid`` daemon of its server holds the server's pipes
(tests/peers/escaping_server.py): what the proxy did, for the tests that check it (issue 49)."""

from __future__ import annotations

import contextlib
import json
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psutil

from tests.helpers.paths import HARNESS, REPO_ROOT

INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {},
    "clientInfo": {"name": "t", "version": "0"}}}  # fmt: skip


@dataclass(frozen=True)
class Stopped:
    returncode: int
    took_s: float
    """Seconds from SIGTERM to the proxy's exit."""
    summary: dict[str, Any]
    stderr: str


def sigterm_with_an_escaped_daemon() -> Stopped:
    """Start the proxy in front of the escaping server, initialize, SIGTERM it, and kill the
    daemon afterwards whatever happened."""
    server = Path(__file__).resolve().parents[1] / "peers" / "escaping_server.py"
    proc = subprocess.Popen(
        [*HARNESS, "proxy", "--", sys.executable, str(server), "60"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=str(REPO_ROOT),
    )  # fmt: skip
    daemons: list[psutil.Process] = []
    try:
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write((json.dumps(INITIALIZE) + "\n").encode())
        proc.stdin.flush()
        assert b'"result"' in proc.stdout.readline()
        daemons = [p for p in psutil.process_iter(["cmdline"])
                   if "escaping_server.py" in " ".join(p.info["cmdline"] or [])]  # fmt: skip
        started = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=20)
        took = time.monotonic() - started
        text = err.decode()
        summary = json.loads(text.split("summary: ", 1)[1].splitlines()[0]) if "summary: " in text else {}
        return Stopped(proc.returncode, took, summary, text)
    finally:
        if proc.poll() is None:
            proc.kill()
        for daemon in daemons:
            with contextlib.suppress(psutil.Error):
                daemon.kill()
