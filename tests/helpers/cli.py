"""Run the ``harness`` command in process, as a user would, and capture what it printed."""

from __future__ import annotations

import pytest

from harness.cli.main import main


def cli(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    """``harness ARGS``: (exit status, stdout, stderr); a ``SystemExit`` is its status, not an error."""
    try:
        code = main(args)
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    out = capsys.readouterr()
    return int(code or 0), out.out, out.err
