"""One style for every usage error, and bare `harness` prints its help.

A malformed invocation that click catches (an unknown option, a missing argument, a
value out of its choices) reads like every other user error: one line on stderr,
``harness: error: ...``, naming the --help to read, exit status 2. Same through
``main()`` (the console script) and through click's own standalone mode (CliRunner).
"""

from __future__ import annotations

import subprocess
import sys

import pytest
from click.testing import CliRunner

from harness.cli.main import cli, main

USAGE_MISTAKES = [
    (["--bogus"], "No such option '--bogus'", "harness --help"),
    (["sesion"], "did you mean 'session'?", "harness --help"),
    (["run", "--bogus"], "No such option '--bogus'", "harness run --help"),
    (["run", "--executor", "nope"], "'nope' is not one of", "harness run --help"),
    (["run", "--workers", "0"], "'--workers'", "harness run --help"),
    (["session"], "Missing argument 'SCENARIO'", "harness session --help"),
    (["compare"], "Missing argument 'DIRECTORY'", "harness compare --help"),
    (["compare", "x", "--format", "xml"], "'--format'", "harness compare --help"),
    (["list", "--bogus"], "No such option '--bogus'", "harness list --help"),
]
IDS = [" ".join(argv) for argv, _, _ in USAGE_MISTAKES]


def _one_error_line(stderr: str, says: str, help_cmd: str) -> None:
    lines = [ln for ln in stderr.splitlines() if ln.strip()]
    assert len(lines) == 1, stderr
    assert lines[0].startswith("harness: error: "), stderr
    assert says in lines[0]
    assert f"(see '{help_cmd}')" in lines[0]
    assert "Usage:" not in stderr and "Traceback" not in stderr


@pytest.mark.parametrize(("argv", "says", "help_cmd"), USAGE_MISTAKES, ids=IDS)
def test_main_prints_a_usage_error_as_one_project_style_line(
    argv: list[str], says: str, help_cmd: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    _one_error_line(captured.err, says, help_cmd)


@pytest.mark.parametrize(("argv", "says", "help_cmd"), USAGE_MISTAKES, ids=IDS)
def test_the_group_run_standalone_uses_the_same_style(argv: list[str], says: str, help_cmd: str) -> None:
    result = CliRunner().invoke(cli, argv, prog_name="harness")
    assert result.exit_code == 2
    _one_error_line(result.stderr, says, help_cmd)


def test_a_user_error_and_a_usage_error_read_alike(capsys: pytest.CaptureFixture[str]) -> None:
    for argv in (["run", "--agents", "redaer"], ["run", "--executor", "nope"]):
        with pytest.raises(SystemExit) as exc:
            main(argv)
        assert exc.value.code == 2
        assert capsys.readouterr().err.startswith("harness: error: ")


def test_bare_harness_prints_help_and_exits_0() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "harness.cli.main"], capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("Usage: harness")
    assert "Commands:" in proc.stdout and "run" in proc.stdout
    assert proc.stderr == ""
    result = CliRunner().invoke(cli, [], prog_name="harness")
    assert result.exit_code == 0
    assert "Commands:" in result.stdout


def test_help_and_version_still_exit_0(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--help"]) == 0
    assert "Commands:" in capsys.readouterr().out
    assert main(["run", "--help"]) == 0
    assert "--resume" in capsys.readouterr().out
    assert main(["--version"]) == 0
    assert "harness, version" in capsys.readouterr().out


def test_the_command_list_imports_no_command_module() -> None:
    """``harness --help`` lists the commands from the table in harness.cli.main, so it neither
    imports a command's module nor what they import (pandas, the simulation)."""
    code = (
        "import sys, contextlib, io\n"
        "from harness.cli.main import COMMANDS, run_cli, cli\n"
        "with contextlib.redirect_stdout(io.StringIO()) as out:\n"
        "    run_cli(cli, ['--help'])\n"
        "assert all(name in out.getvalue() for name in COMMANDS), out.getvalue()\n"
        "heavy = ('pandas', 'harness.session', 'harness.scenarios', *(mod for mod, _ in COMMANDS.values()))\n"
        "loaded = [m for m in heavy if m in sys.modules]\n"
        "print(loaded)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]", done.stdout + done.stderr
