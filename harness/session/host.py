"""The host: what stands between the MCP client and the model, and what it lets through.

Real MCP hosts do not hand the model raw JSON-RPC. A ``tools/call`` *result*
(its content and ``isError``) goes into the model's context as is. A JSON-RPC
*error reply* does not: typical hosts tell the model that the call failed and
drop the server's message (SEP-1303's motivating case: the agent, told nothing,
repeats the identical call). So the host has two modes:

* ``typical`` (default): an RPC error reaches the agent as its code only.
* ``transparent``: the code and the server's message.

This is what makes the ``collapse`` strategy lose the reason while still
"carrying the message" on the wire: the message is in the -32603 reply, and the
typical host drops it.

The observations it builds are the agent's vocabulary (:mod:`harness.session.agent`).
"""

from __future__ import annotations

from typing import Any

from harness.protocol.client import MCPClient
from harness.protocol.errors import RPCError
from harness.session.agent import RPCErrorObservation, ToolResult, ToolsListed

HOSTS: tuple[str, ...] = ("typical", "transparent")


class Host:
    """Turns client outcomes into observations; ``ServerCrashed`` passes through to the session."""

    def __init__(self, client: MCPClient, mode: str = "typical") -> None:
        if mode not in HOSTS:
            raise ValueError(f"unknown host {mode!r}; one of {', '.join(HOSTS)}")
        self.client = client
        self.transparent = mode == "transparent"

    def call(self, tool: str, arguments: dict[str, Any]) -> ToolResult | RPCErrorObservation:
        try:
            result = self.client.call_tool(tool, arguments)
        except RPCError as exc:
            return RPCErrorObservation(tool, arguments, exc.code, exc.message if self.transparent else None)
        content = result.get("content")
        blocks = tuple([b for b in content if isinstance(b, dict)]) if isinstance(content, list) else ()
        return ToolResult(tool, arguments, blocks, result.get("isError") is True)

    def list_tools(self) -> ToolsListed | RPCErrorObservation:
        try:
            return ToolsListed(tuple(self.client.list_tools()))
        except RPCError as exc:
            return RPCErrorObservation(None, {}, exc.code, exc.message if self.transparent else None)
