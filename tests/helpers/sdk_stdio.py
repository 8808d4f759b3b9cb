"""The official SDK client's stdio server, recorded: ``harness serve --demo`` behind ``stdio_tee.py``.

The interop tests in both eras start our server the same way and check the
recorded lines the same way: every server line validated in context by a
:class:`~helpers.mcp_schema.WireChecker`.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from mcp import StdioServerParameters

from helpers.mcp_schema import WireChecker

TESTS = Path(__file__).resolve().parent.parent
REPO = TESTS.parent
TEE = TESTS / "helpers" / "stdio_tee.py"


def serve_params(log: Path, *args: str) -> StdioServerParameters:
    """``harness serve --demo ARGS`` with every line both ways recorded into ``log``."""
    command = [sys.executable, "-m", "harness.cli.main", "serve", "--demo", *args]
    return StdioServerParameters(
        command=sys.executable, args=[str(TEE), str(log), "--", *command], cwd=str(REPO)
    )


def read_log(log: Path) -> list[tuple[str, Any]]:
    """The recorded lines, parsed: ``(direction, message)``, oldest first."""
    rows = [json.loads(x) for x in log.read_text().splitlines()]
    return [(r["dir"], json.loads(r["line"])) for r in rows]


def check_log(log: Path) -> list[tuple[str, Any]]:
    """Validate every server line in context; the parsed log."""
    checker = WireChecker()
    wire = read_log(log)
    for direction, message in wire:
        if direction == "c2s":
            checker.client_sent(message)
        else:
            checker.server_sent(message)
    return wire
