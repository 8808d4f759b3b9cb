"""Entry point of the ``harness`` command: a click group whose subcommands load lazily.

Subcommands are named in :data:`COMMANDS` as ``module:attribute`` so that
``harness --help`` stays fast and one broken optional stack (say, the HTTP
transport's) cannot take down the others. A :class:`~harness.errors.UserError`
from any command becomes one line on stderr and exit status 2.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from typing import Any

import click

from harness import __version__
from harness.errors import UserError, unknown_name

COMMANDS: dict[str, tuple[str, str]] = {
    "serve": ("harness.cli.serve", "Serve the demo lab (or a fixture) over stdio or HTTP."),
    "list": ("harness.cli.listing", "List the shipped scenarios, agents and strategies."),
    "session": ("harness.cli.session", "Run one session and print its record."),
    "run": ("harness.cli.run", "Run a batch over a grid of sessions (the main job)."),
    "compare": ("harness.cli.compare", "Compare error-handling strategies in a results directory."),
    "plot": ("harness.cli.plot", "Draw PNG figures from a results directory."),
    "bench": ("harness.cli.bench", "Benchmark dispatch, serialization and sessions."),
    "probe": ("harness.cli.probe", "Probe how a real MCP server over stdio reports errors."),
}


class LazyGroup(click.Group):
    """A group that imports a subcommand's module only when it is invoked."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(name for name in COMMANDS if _available(name))

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


def main(argv: list[str] | None = None) -> Any:
    """Run the CLI; user errors exit 2 with one line, never a traceback."""
    try:
        rc = cli.main(args=argv, prog_name="harness", standalone_mode=False)
        return rc if isinstance(rc, int) else 0
    except UserError as exc:
        click.echo(f"harness: error: {exc}", err=True)
        sys.exit(exc.exit_code)
    except click.exceptions.Abort:
        click.echo("harness: aborted", err=True)
        sys.exit(130)
    except click.ClickException as exc:
        exc.show()
        sys.exit(2 if exc.exit_code in (1, 2) else exc.exit_code)
    except click.exceptions.Exit as exc:
        sys.exit(exc.exit_code)


if __name__ == "__main__":
    main()
