"""Run the ``harness`` command in process, as a user would, and capture what it printed."""

from __future__ import annotations

import contextlib
import io

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


def run_harness(args: list[str]) -> tuple[int, str, str]:
    """``harness ARGS`` in this process, where no ``capsys`` is at hand (a module-scoped fixture):
    (exit status, stdout, stderr). A test of the process itself (signals, exit codes of the
    interpreter, what an import loads) starts one instead."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(args)
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 1
    return int(code or 0), out.getvalue(), err.getvalue()
