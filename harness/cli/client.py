"""``harness client``: speak to an MCP server over Streamable HTTP as a client.

``harness client URL`` connects (``--mode``: the handshake by default, ``auto``
or a pinned stateless version, as :class:`~harness.protocol.client.MCPClient`
takes them), lists the tools and prints what it found as JSON. The server's info
comes from ``initialize``, ``server/discover`` or, for a client pinned to a
stateless version (no handshake), the ``_meta`` every stateless result carries.

``harness client --conformance URL`` is the command the official conformance
suite runs (``conformance client --command "harness client --conformance"
--scenario S``): it runs the client scenario the suite names in
``MCP_CONFORMANCE_SCENARIO`` (:data:`harness.fixtures.conformance.CLIENT_SCENARIOS`)
and exits 0 when it did what the scenario asks. An unknown or OAuth scenario is
a one-line error (exit 2); a scenario that fails is a one-line error with exit 1.
"""

from __future__ import annotations

import json
import os

import click

from harness.errors import UserError, unknown_name
from harness.protocol.client import MODES, MCPClient
from harness.protocol.errors import RPCError, TransportError


class ClientFailed(UserError):
    """The server was reached but the exchange went wrong: one line, exit 1."""

    exit_code = 1


@click.command("client")
@click.argument("url")
@click.option(
    "--conformance",
    is_flag=True,
    help="Run the conformance suite's client scenario named by MCP_CONFORMANCE_SCENARIO.",
)
@click.option(
    "--mode",
    type=click.Choice(MODES),
    default="legacy",
    show_default=True,
    help="The era: legacy (initialize), auto (server/discover, then initialize), or a stateless version.",
)
@click.option(
    "--timeout",
    type=click.FloatRange(min=0, min_open=True),
    default=30.0,
    show_default=True,
    help="Seconds to wait for each HTTP exchange.",
)
def command(url: str, conformance: bool, mode: str, timeout: float) -> None:
    """Connect to the MCP server at URL (Streamable HTTP) as a client."""
    if not url.startswith(("http://", "https://")):
        raise UserError(f"URL must start with http:// or https://, got {url!r}")
    try:
        if conformance:
            click.echo(_conformance(url, timeout))
        else:
            click.echo(json.dumps(_summary(url, mode, timeout), indent=2))
    except (TransportError, RPCError) as exc:
        raise ClientFailed(
            str(exc) if isinstance(exc, TransportError) else f"{exc.code}: {exc.message}"
        ) from None


def _conformance(url: str, timeout: float) -> str:
    from harness.fixtures.conformance import (
        CLIENT_SCENARIOS,
        OAUTH_PREFIX,
        OAUTH_REASON,
        SCENARIO_ENV,
        ScenarioFailed,
    )

    name = os.environ.get(SCENARIO_ENV)
    if not name:
        raise UserError(f"--conformance needs the scenario's name in {SCENARIO_ENV}")
    if name.startswith(OAUTH_PREFIX):
        raise UserError(f"client scenario {name!r}: {OAUTH_REASON}")
    scenario = CLIENT_SCENARIOS.get(name)
    if scenario is None:
        raise unknown_name("client scenario", name, CLIENT_SCENARIOS)
    try:
        return f"{name}: {scenario(url, timeout)}"
    except ScenarioFailed as exc:
        raise ClientFailed(f"client scenario {name!r} failed: {exc}") from None


def _summary(url: str, mode: str, timeout: float) -> dict[str, object]:
    from harness.transports.http_client import HTTPClientTransport

    client = MCPClient(HTTPClientTransport(url, timeout=timeout), mode=mode)
    try:
        client.connect()
        tools = client.list_tools()
    finally:
        client.close()
    return {
        "era": client.era,
        "protocolVersion": client.protocol_version,
        "serverInfo": client.server_info,
        "tools": [t.get("name") for t in tools],
    }
