"""``harness serve``: the demo lab over stdio (default) or Streamable HTTP."""

from __future__ import annotations

import logging
import sys

import click

from harness.cli.choices import NameChoice
from harness.errors import UserError
from harness.protocol.runner import DEFAULT_CALL_TIMEOUT, ThreadedRunner
from harness.protocol.server import DEFAULT_MAX_MESSAGE_BYTES, MCPServer
from harness.protocol.strategies import STRATEGIES


@click.command("serve")
@click.option("--demo", is_flag=True, help="Serve the reference lab (add, weather, delete_db).")
@click.option(
    "--strategy",
    type=NameChoice("strategy", STRATEGIES),
    default="is_error",
    show_default=True,
    help="How a raising tool is reported (tool_errors).",
)
@click.option("--page-size", type=click.IntRange(min=1), default=None, help="Paginate tools/list.")
@click.option(
    "--elicit", is_flag=True, help="Add book(city?), a demo tool that asks the client for a missing city."
)
@click.option("--http", "use_http", is_flag=True, help="Serve Streamable HTTP instead of stdio.")
@click.option("--host", default="127.0.0.1", show_default=True, help="HTTP bind address.")
@click.option("--port", type=click.IntRange(0, 65535), default=8000, show_default=True, help="HTTP port.")
@click.option("--conformance", is_flag=True, help="Serve the fixture the MCP conformance suite calls.")
@click.option(
    "--call-timeout",
    type=click.FloatRange(min=0),
    default=DEFAULT_CALL_TIMEOUT,
    show_default=True,
    help="Seconds a tool call may run before it is cut and reported as failed (0: no limit).",
)
@click.option(
    "--max-message-bytes",
    type=click.IntRange(min=64),
    default=DEFAULT_MAX_MESSAGE_BYTES,
    show_default=True,
    help="Larger messages are refused with -32600 (over HTTP: 413, as soon as the body passes it).",
)
@click.option(
    "--header-timeout",
    type=click.FloatRange(min=0),
    default=10.0,
    show_default=True,
    help="HTTP: seconds a request's headers may take to arrive; then 408, connection closed (0: no limit).",
)
@click.option(
    "--body-timeout",
    type=click.FloatRange(min=0),
    default=30.0,
    show_default=True,
    help="HTTP: seconds a POST body may take to arrive after its headers; then 408 (0: no limit).",
)
def command(
    demo: bool,
    strategy: str,
    page_size: int | None,
    elicit: bool,
    use_http: bool,
    host: str,
    port: int,
    conformance: bool,
    call_timeout: float,
    max_message_bytes: int,
    header_timeout: float,
    body_timeout: float,
) -> None:
    """Serve an MCP server; logs go to stderr, stdout carries only JSON-RPC."""
    logging.basicConfig(stream=sys.stderr, level=logging.INFO, format="harness serve: %(message)s")
    if demo == conformance:
        raise UserError("say what to serve: --demo or --conformance")
    if conformance:
        from harness.fixtures.conformance import build_conformance_server  # type: ignore[import-not-found,unused-ignore]

        factory = build_conformance_server
    else:
        from harness.fixtures.demo import build_demo_server

        def factory() -> MCPServer:
            return build_demo_server(strategy, page_size=page_size, elicit=elicit)

    def configured() -> MCPServer:
        server = factory()
        server.tool_runner = ThreadedRunner(call_timeout) if call_timeout > 0 else None
        server.max_message_bytes = max_message_bytes
        return server

    if use_http:
        from harness.transports.http import serve_http  # type: ignore[import-not-found,unused-ignore]

        serve_http(
            configured,
            host=host,
            port=port,
            max_body_bytes=max_message_bytes,
            header_timeout=header_timeout or None,
            body_timeout=body_timeout or None,
        )
        return
    from harness.transports.stdio import serve_stdio

    logging.getLogger("harness.serve").info("serving over stdio (strategy=%s)", strategy)
    serve_stdio(configured(), sys.stdin.buffer, sys.stdout.buffer)
