"""``harness probe``: run the probe's rules against a server command or URL and print the report.

The report has one section per protocol era with rows: the handshake era's rules always, the
2026-07-28 (stateless) era's where ``server/discover`` says the server speaks it.

Usage: ``harness probe [--json] [--tool NAME --args JSON [--reason TEXT]]... -- COMMAND [ARGS...]``,
or ``harness probe [OPTIONS] URL`` for a Streamable HTTP endpoint (``http://`` or ``https://``)
that is already listening: the same rules, in both eras, one POST per message.
``--args`` and ``--reason`` pair with ``--tool`` by position; ``--reason`` may be
given once for every tool, once per tool, or not at all. Exit status 0 when the
probe ran against an MCP server, whatever it found; 1 when the peer is not an
MCP server at all (it echoed our requests back, as ``cat`` does, or wrote JSON
that is no JSON-RPC response), or never completed a handshake in either era (it
died at start, stayed silent, wrote garbage, or could not be reached): one line on
stderr names it and why, and no verdict table is printed (``--json`` still prints
the report); 2 (one line on stderr) for a usage mistake.

``--harvest FILE`` also writes every error the server answered, one JSON object per line
(:mod:`harness.probe.harvest`), under ``--server-name`` (default: its serverInfo name) and
``--stack``; ``--calls FILE.toml`` adds tool calls made only to provoke more errors. Without
``--harvest`` the probe runs and prints exactly as before. One line on stderr says how many
lines were written and which extra calls got no error.
"""

from __future__ import annotations

import json
import shlex
import shutil
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from harness.errors import UserError
from harness.probe.harvest import STACKS
from harness.probe.outcomes import RESULT
from harness.probe.runner import DEFAULT_JOBS, DEFAULT_STARTUP_TIMEOUT, DEFAULT_TIMEOUT
from harness.probe.session import URL_SCHEMES
from harness.probe.steps import ToolCase

if TYPE_CHECKING:
    from harness.probe.report import Report

NOT_MCP_EXIT = 1
"""Exit status when the peer is not an MCP server (2 stays the usage mistake's)."""
NO_HANDSHAKE_EXIT = 1
"""Exit status when the peer completed no handshake in either era: nothing was probed."""

ERROR_LABELS = ("error", "isError")
"""How the outcome labels of a call that got an error begin (``error -32602``, ``isError masked``)."""


def parse_cases(
    tools: tuple[str, ...], args: tuple[str, ...], reasons: tuple[str, ...]
) -> tuple[ToolCase, ...]:
    """Pair --tool, --args and --reason by position; UserError for any mismatch or bad JSON."""
    if len(args) != len(tools):
        raise UserError(f"give one --args per --tool (got {len(tools)} --tool and {len(args)} --args)")
    if reasons and len(reasons) not in (1, len(tools)):
        raise UserError(f"give --reason once, or once per --tool (got {len(reasons)} for {len(tools)} tools)")
    cases = []
    for i, (name, text) in enumerate(zip(tools, args, strict=True)):
        try:
            arguments: Any = json.loads(text)
        except ValueError as exc:
            raise UserError(f"--args for tool {name!r} is not JSON: {exc}") from None
        if not isinstance(arguments, dict):
            raise UserError(f"--args for tool {name!r} must be a JSON object, got {type(arguments).__name__}")
        reason = reasons[i if len(reasons) > 1 else 0] if reasons else None
        cases.append(ToolCase(name, arguments, reason))
    return tuple(cases)


@click.command("probe")
@click.option("--json", "as_json", is_flag=True, help="Print the machine-readable report.")
@click.option("--tool", "tools", multiple=True, metavar="NAME", help="A tool to call so that it fails.")
@click.option(
    "--args", "args", multiple=True, metavar="JSON", help="Arguments for the --tool at the same position."
)
@click.option(
    "--reason", "reasons", multiple=True, metavar="TEXT", help="Text the failure's reason must contain."
)
@click.option(
    "--timeout",
    type=float,
    default=DEFAULT_TIMEOUT,
    show_default=True,
    help="Seconds to wait for each reply.",
)
@click.option(
    "--startup-timeout",
    type=float,
    default=DEFAULT_STARTUP_TIMEOUT,
    show_default=True,
    help="Seconds a fresh process may take to write its first line.",
)
@click.option("--jobs", type=int, default=DEFAULT_JOBS, show_default=True, help="Server processes at once.")
@click.option(
    "--harvest",
    "harvest",
    type=click.Path(dir_okay=False, path_type=Path),
    metavar="FILE",
    help="Also write every error the server answered to FILE, one JSON object per line.",
)
@click.option(
    "--server-name", metavar="NAME", help="The server's name in the harvest (default: its serverInfo name)."
)
@click.option(
    "--stack",
    type=click.Choice(STACKS),
    help="The server's implementation stack, for the harvest (default: other).",
)
@click.option(
    "--calls",
    "calls_file",
    type=click.Path(dir_okay=False, path_type=Path),
    metavar="FILE.toml",
    help="Extra tool calls ([[calls]] tool, arguments) made to provoke errors for the harvest.",
)
@click.argument("server_command", nargs=-1, metavar="-- COMMAND [ARGS]... | URL")
def command(
    as_json: bool,
    tools: tuple[str, ...],
    args: tuple[str, ...],
    reasons: tuple[str, ...],
    timeout: float,
    startup_timeout: float,
    jobs: int,
    harvest: Path | None,
    server_name: str | None,
    stack: str | None,
    calls_file: Path | None,
    server_command: tuple[str, ...],
) -> None:
    """Probe how an MCP server reports errors, rule by rule, in each era it speaks.

    The server is a command run over stdio (after --), or the URL of a Streamable HTTP endpoint.
    """
    for name, value in (("--timeout", timeout), ("--startup-timeout", startup_timeout)):
        if not value > 0:
            raise UserError(f"{name} must be a positive number of seconds, got {value:g}")
    if jobs < 1:
        raise UserError(f"--jobs must be at least 1, got {jobs}")
    if not server_command:
        raise UserError("say which server to probe: harness probe [OPTIONS] -- COMMAND [ARGS...] (or URL)")
    if server_command[0].lower().startswith(URL_SCHEMES):
        if len(server_command) > 1:
            raise UserError(
                f"a URL is probed on its own, got more after it: {shlex.join(server_command[1:])}"
            )
    elif shutil.which(server_command[0]) is None:
        raise UserError(f"command not found: {server_command[0]}")
    if harvest is None:
        given = [
            n for n, v in (("--server-name", server_name), ("--stack", stack), ("--calls", calls_file)) if v
        ]
        if given:
            raise UserError(f"{given[0]} is for the harvest: give --harvest FILE with it")
    cases = parse_cases(tools, args, reasons)
    from harness.probe.harvest import load_calls
    from harness.probe.runner import ProbeConfig, run_probe

    calls = load_calls(calls_file) if calls_file is not None else ()
    report = run_probe(ProbeConfig(server_command, cases, timeout, startup_timeout, jobs, calls))
    if harvest is not None:
        write_harvest_file(report, harvest, server_name, stack or "other")
    if as_json:
        click.echo(json.dumps(report.to_json(), indent=2, ensure_ascii=False))
    target = shlex.join(server_command)
    if report.not_mcp is not None:
        click.echo(f"harness: not an MCP server: {target}: {report.not_mcp}", err=True)
        sys.exit(NOT_MCP_EXIT)  # not ctx.exit: its code is lost under `python -m harness.cli.main`
    if not report.speaks_any_era():
        click.echo(f"harness: no handshake in either era: {target}: {report.why_no_era()}", err=True)
        sys.exit(NO_HANDSHAKE_EXIT)
    if as_json:
        return
    from rich.console import Console

    from harness.probe.report import render_table

    render_table(report, Console(file=sys.stdout))


def write_harvest_file(report: Report, path: Path, name: str | None, stack: str) -> None:
    """Write the report's harvested errors to ``path``; one line on stderr says what was written."""
    from harness.probe.harvest import harvest_line, server_identity, write_harvest

    server, version = server_identity(report.server, name)
    try:
        count = write_harvest(path, (harvest_line(r, server, version, stack) for r in report.harvested))
    except OSError as exc:
        raise UserError(f"--harvest {path}: cannot write: {exc.strerror or exc}") from None
    said = f"harness: harvest: {count} errors from {server} written to {path}"
    if report.calls:
        kept = {i for i, (c, o) in enumerate(report.calls, 1) if c.expect_error and o.label == RESULT}
        quiet = [
            f"#{i} {c.tool} ({o.label})"
            for i, (c, o) in enumerate(report.calls, 1)
            if not o.label.startswith(ERROR_LABELS) and i not in kept
        ]
        provoked = len(report.calls) - len(quiet) - len(kept)
        said += f"; {provoked} of {len(report.calls)} extra calls got an error"
        if kept:
            said += f", {len(kept)} an ordinary result kept as made to fail (expect_error)"
        if quiet:
            said += f", not: {', '.join(quiet)}"
    click.echo(said, err=True)
