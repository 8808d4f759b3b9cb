"""Entry point of the ``harness`` command: a click group whose subcommands load lazily.

Subcommands are named in :data:`COMMANDS` as ``module:attribute`` so that
``harness --help`` stays fast and one broken optional stack (say, the HTTP
transport's) cannot take down the others.

Every error a user can cause reads the same way: one line on stderr,
``harness: error: ...``, and exit status 2 -- a :class:`~harness.errors.UserError`
from a command as much as a malformed invocation that click itself catches (an
unknown option, a missing argument, a bad value), which adds where to look
(``see 'harness run --help'``) instead of click's usage block. Bare ``harness``
prints the help and exits 0.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from collections.abc import Sequence
from typing import Any

import click

from harness import __version__
from harness.errors import OutputError, UserError, cannot_write, one_line, unknown_name

COMMANDS: dict[str, tuple[str, str]] = {
    "serve": ("harness.cli.serve", "Serve the demo lab (or a fixture) over stdio or HTTP."),
    "list": ("harness.cli.listing", "List the shipped scenarios, agents and strategies."),
    "session": ("harness.cli.session", "Run one session and print its record."),
    "generate": ("harness.cli.generate", "Sample a scenario family into scenario files."),
    "check": ("harness.cli.check", "Lint scenario files; check that the oracle can solve each."),
    "run": ("harness.cli.run", "Run a batch over a grid of sessions (the main job)."),
    "compare": ("harness.cli.compare", "Compare error-handling strategies in a results directory."),
    "effects": (
        "harness.cli.effects",
        "Per-scenario effects of readable errors and the features behind them.",
    ),
    "plot": ("harness.cli.plot", "Draw PNG figures from a results directory."),
    "bench": ("harness.cli.bench", "Benchmark dispatch, serialization and sessions."),
    "probe": ("harness.cli.probe", "Probe how a real MCP server over stdio reports errors."),
    "client": ("harness.cli.client", "Speak to an MCP server over HTTP as a client (--conformance)."),
    "view": ("harness.cli.view", "Browse a run, a bench output or a probe report in a local page."),
    "proxy": ("harness.cli.proxy", "Proxy a real MCP server: rewrite its errors, inject seeded faults."),
    "read": ("harness.cli.read", "Read tool error texts (category, argument, valid form); --evaluate."),
    "worlds": ("harness.cli.worlds", "Fair world events; what the reader finds in AgentDojo's injections."),
}


class LazyGroup(click.Group):
    """A group that imports a subcommand's module only when it is invoked.

    Run standalone (``harness``, or ``CliRunner().invoke(cli, ...)``) it reports errors
    the project's way (:func:`run_cli`), not with click's usage block.
    """

    def main(
        self,
        args: Sequence[str] | None = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        **extra: Any,
    ) -> Any:
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, False, **extra)
        sys.exit(run_cli(self, args, prog_name or "harness", **extra))

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if not args and self.no_args_is_help and not ctx.resilient_parsing:
            click.echo(ctx.get_help(), color=ctx.color)  # what a bare ``harness`` asks for
            ctx.exit(0)
        return super().parse_args(ctx, args)

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(name for name in COMMANDS if _available(name))

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The command list from :data:`COMMANDS` alone, so that ``harness --help`` imports no
        command module (click's own lists each command's help and so imports them all)."""
        rows = [(name, COMMANDS[name][1]) for name in self.list_commands(ctx)]
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        if args and args[0] not in COMMANDS and not args[0].startswith("-"):
            ctx.fail(str(unknown_name("command", args[0], self.list_commands(ctx))))
        return super().resolve_command(ctx, args)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in COMMANDS:
            return None
        module_name, _ = COMMANDS[cmd_name]
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            if exc.name == module_name:
                return None
            raise
        command = getattr(module, "command", None)
        return command if isinstance(command, click.Command) else None


def _available(name: str) -> bool:
    return importlib.util.find_spec(COMMANDS[name][0]) is not None


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="harness")
def cli() -> None:
    """Simulate MCP agent loops under tool failures and compare error-handling strategies."""


def usage_line(exc: click.UsageError) -> str:
    """A malformed invocation as one line, in the style of every other user error."""
    message = exc.format_message().rstrip()
    where = exc.ctx.command_path if exc.ctx is not None else "harness"
    return f"harness: error: {message} (see '{where} --help')"


def run_cli(
    group: click.Command, argv: Sequence[str] | None, prog_name: str = "harness", **extra: Any
) -> int:
    """Run ``group``; return its exit status, printing a user's error as one line (never a traceback)."""
    try:
        rc = click.Command.main(group, args=argv, prog_name=prog_name, standalone_mode=False, **extra)
        return rc if isinstance(rc, int) else 0
    except UserError as exc:
        click.echo(f"harness: error: {one_line(str(exc))}", err=True)
        return exc.exit_code
    except OSError as exc:
        if not cannot_write(exc):
            raise
        # A full disk or a read-only file system met where no command expected it: still one line.
        where = f"{exc.filename}: " if exc.filename else ""
        click.echo(one_line(f"harness: error: {where}cannot write ({exc.strerror or exc})"), err=True)
        return OutputError.exit_code
    except click.exceptions.Abort:
        click.echo("harness: aborted", err=True)
        return 130
    except click.UsageError as exc:
        click.echo(usage_line(exc), err=True)
        return 2
    except click.ClickException as exc:
        click.echo(f"harness: error: {one_line(exc.format_message())}", err=True)
        return 2 if exc.exit_code in (1, 2) else exc.exit_code
    except click.exceptions.Exit as exc:
        return exc.exit_code


def main(argv: list[str] | None = None) -> Any:
    """Run the CLI; user errors exit 2 with one line, never a traceback."""
    rc = run_cli(cli, argv)
    if rc:
        sys.exit(rc)
    return 0


if __name__ == "__main__":
    sys.exit(main())
