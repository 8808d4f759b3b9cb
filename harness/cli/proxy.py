"""``harness proxy``: sit between a real MCP client and a real MCP server, and change how errors arrive.

Usage: ``harness proxy [OPTIONS] -- COMMAND [ARGS]...`` runs the server ``COMMAND`` over stdio
and speaks MCP to its own client on stdin/stdout; ``--upstream URL`` puts it in front of a
Streamable HTTP server instead; ``--http`` gives it an HTTP front. ``--strategy`` rewrites the
server's tool failures, ``--faults FILE.toml`` injects faults and tool-list events on the real
tools (``docs/proxy.md``), ``--trace FILE.jsonl`` records both sides of the wire.

stderr carries the proxy's own lines only, each ``harness proxy: ...`` (the server's stderr
passes through as it is): a warning when the faults name what the server does not have, one
line for each kind of upstream trouble, and the summary on exit. A usage mistake (a bad
faults file, a missing command) is one ``harness: error:`` line and exit 2.

The end of stdin, SIGTERM and SIGINT, in any order, end the proxy the same way: every request
still waiting is answered (-32603 once a stop is asked for), the server is stopped (its input
closed, then SIGTERM, then SIGKILL to its process group), the summary is printed and written
to the trace, and the exit status is 0. The handlers are in place from before the server starts
until the summary is out.
"""

from __future__ import annotations

import json
import shlex
import shutil
import sys
from collections.abc import Sized
from pathlib import Path
from typing import IO

import click

from harness.cli.choices import NameChoice
from harness.errors import UserError
from harness.protocol.server import DEFAULT_MAX_MESSAGE_BYTES
from harness.protocol.strategies import STRATEGIES
from harness.proxy.core import DEFAULT_MAX_SESSIONS


def _say(line: str) -> None:
    click.echo(f"harness proxy: {line}", err=True)


def _count(items: Sized, what: str) -> str:
    return f"{len(items)} {what}{'' if len(items) == 1 else 's'}"


def _trace_stream(trace: str | None, use_http: bool) -> IO[bytes] | None:
    if trace is None:
        return None
    if trace == "-":
        if not use_http:
            raise UserError("--trace - writes to stdout, which the stdio front speaks MCP on: give a file")
        return sys.stdout.buffer
    path = Path(trace)
    try:
        return path.open("wb")
    except OSError as exc:
        raise UserError(f"--trace {trace}: cannot write: {exc.strerror or exc}") from None


@click.command("proxy")
@click.option(
    "--strategy",
    type=NameChoice("strategy", STRATEGIES),
    default="is_error",
    show_default=True,
    help="How the server's tool failures (and injected faults) reach the client.",
)
@click.option(
    "--faults",
    "faults_file",
    type=click.Path(path_type=Path),
    metavar="FILE.toml",
    help="[[faults]] and [[events]] tables on the server's real tools (the scenario format).",
)
@click.option(
    "--seed", type=click.IntRange(min=0), default=0, show_default=True, help="Seeds the fault draws."
)
@click.option("--trace", metavar="FILE.jsonl", help="Write both sides of the wire and what the proxy did.")
@click.option(
    "--http", "use_http", is_flag=True, help="Serve Streamable HTTP to the client instead of stdio."
)
@click.option("--host", default="127.0.0.1", show_default=True, help="HTTP front: bind address.")
@click.option(
    "--port", type=click.IntRange(0, 65535), default=8000, show_default=True, help="HTTP front: port."
)
@click.option(
    "--upstream", metavar="URL", help="A Streamable HTTP server to sit in front of (instead of a command)."
)
@click.option(
    "--timeout",
    type=click.FloatRange(min=0),
    default=30.0,
    show_default=True,
    help="Seconds an upstream request may take before the client gets -32603 (0: no limit).",
)
@click.option(
    "--session-idle",
    type=click.FloatRange(min=0),
    default=300.0,
    show_default=True,
    metavar="S",
    help="HTTP front: close a session (and stop its server) after S seconds with nothing in flight "
    "and no stream open (0: never). A session whose client hung up mid-call closes within a second.",
)
@click.option(
    "--max-sessions",
    type=click.IntRange(min=1),
    default=DEFAULT_MAX_SESSIONS,
    show_default=True,
    metavar="N",
    help="HTTP front: live sessions (each one a server process) held at once; past N a new session "
    "gets HTTP 503 and a JSON-RPC error, and no server is started.",
)
@click.option(
    "--max-message",
    type=click.IntRange(min=1024),
    default=DEFAULT_MAX_MESSAGE_BYTES,
    show_default=True,
    metavar="BYTES",
    help="Bytes one message may hold, from the client or the server (stdio or HTTP); a longer one is "
    "read past (never held) and answered with an error: -32600 to a client, -32603 for the requests "
    "in flight when the server's is dropped.",
)
@click.argument("server_command", nargs=-1, metavar="-- COMMAND [ARGS]...")
def command(
    strategy: str,
    faults_file: Path | None,
    seed: int,
    trace: str | None,
    use_http: bool,
    host: str,
    port: int,
    upstream: str | None,
    timeout: float,
    session_idle: float,
    max_sessions: int,
    max_message: int,
    server_command: tuple[str, ...],
) -> None:
    """Proxy MCP between a client and a real server, rewriting errors and injecting faults.

    The server is COMMAND, run over stdio (after --), or --upstream URL.
    """
    if upstream is not None and server_command:
        raise UserError(f"give the server once: --upstream {upstream} or a command, not both")
    if upstream is None and not server_command:
        raise UserError(
            "say which server to proxy: harness proxy [OPTIONS] -- COMMAND [ARGS]... (or --upstream URL)"
        )
    if upstream is not None and not upstream.lower().startswith(("http://", "https://")):
        raise UserError(f"--upstream must be an http:// or https:// URL, got {upstream!r}")
    if server_command and shutil.which(server_command[0]) is None:
        raise UserError(f"command not found: {server_command[0]}")
    from harness.proxy.plan import load_plan
    from harness.proxy.run import ProxyConfig, TraceFile, run_http, run_stdio, stop_on_signals

    plan = load_plan(faults_file) if faults_file is not None else None
    config = ProxyConfig(
        command=server_command,
        url=upstream,
        strategy=strategy,
        plan=plan,
        seed=seed,
        timeout=timeout or None,
        session_idle=session_idle or None,
        max_sessions=max_sessions,
        max_message=max_message,
    )
    stream = _trace_stream(trace, use_http)
    target = upstream if upstream is not None else shlex.join(server_command)
    rules = (
        f"{_count(plan.faults, 'fault rule')}, {_count(plan.events, 'event')}, seed {seed}"
        if plan
        else "no faults"
    )
    # A signal from here on stops the proxy the orderly way, the summary's line included.
    with stop_on_signals() as stop:
        try:
            if use_http:
                summary = run_http(
                    config,
                    host=host,
                    port=port,
                    trace=TraceFile(stream),
                    warn=lambda line: _say(f"warning: {line}"),
                    ready=lambda actual: _say(
                        f"listening on http://{host}:{actual}/mcp in front of {target} ({strategy}, {rules})"
                    ),
                    stop=stop,
                )
            else:
                _say(f"{target} behind stdio ({strategy}, {rules})")
                summary = run_stdio(
                    config,
                    sys.stdin.buffer,
                    sys.stdout.buffer,
                    TraceFile(stream),
                    lambda line: _say(f"warning: {line}"),
                    stop=stop,
                )
        finally:
            if stream is not None and stream is not sys.stdout.buffer:
                stream.close()
        if stop.requested:
            _say(f"stopped by {stop.why}")
        _say(f"summary: {json.dumps(summary, separators=(', ', ': '))}")
