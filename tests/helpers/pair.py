"""``ClientServerPair``: a server and a client joined by a link that checks every message.

Why (after h11's ``ConnectionPair``): most protocol tests are "send this, expect
that". The pair builds an :class:`~harness.protocol.MCPServer` (the demo lab
unless given one), an :class:`~harness.protocol.InMemoryTransport` whose tap
feeds a :class:`~helpers.mcp_schema.WireChecker`, and an
:class:`~harness.protocol.MCPClient` on top. So every reply and notification
that crosses in any test using the pair is validated against the official
``mcp_types`` models for the negotiated version, with no extra line in the test.
Raw dicts go through :meth:`send`; raw text through :meth:`text` (the byte edge).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from harness.fixtures.demo import build_demo_server
from harness.protocol import LATEST_VERSION, InMemoryTransport, MCPClient, MCPServer, get_codec
from helpers.mcp_schema import WireChecker

INIT_PARAMS: dict[str, Any] = {
    "protocolVersion": LATEST_VERSION,
    "capabilities": {},
    "clientInfo": {"name": "tests", "version": "0"},
}


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def strict_loads(text: str | bytes) -> Any:
    """json.loads that refuses NaN and Infinity, which are not JSON."""
    return json.loads(text, parse_constant=_reject_constant)


class ClientServerPair:
    """One server session and one client, every crossing checked against the official models."""

    def __init__(
        self,
        server: MCPServer | None = None,
        *,
        codec: str = "json",
        protocol_version: str = LATEST_VERSION,
        handshake: bool = True,
    ) -> None:
        self.server = server if server is not None else build_demo_server()
        self.checker = WireChecker()
        self.transport = InMemoryTransport(self.server, codec, tap=self.checker.tap(get_codec(codec).decode))
        self.client = MCPClient(self.transport, protocol_version=protocol_version)
        if handshake:
            self.client.initialize()

    def send(self, message: dict[str, Any]) -> dict[str, Any] | None:
        """Send a raw message through the transport; the reply, or None."""
        return self.transport.send(message)

    def text(self, raw: str | bytes) -> dict[str, Any] | None:
        """Feed raw text to ``handle_text`` (the byte edge); the parsed, checked reply or None."""
        try:
            sent = strict_loads(raw)
        except (ValueError, RecursionError):
            sent = None
        self.checker.client_sent(sent)
        out = self.server.handle_text(raw)
        if out is None:
            return None
        reply = strict_loads(out)
        self.checker.server_sent(reply)
        assert isinstance(reply, dict)
        return reply

    def request(self, id: int | str, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        """A well-formed request whose reply must exist and echo ``id``."""
        msg: dict[str, Any] = {"jsonrpc": "2.0", "id": id, "method": method}
        if params is not None:
            msg["params"] = params
        reply = self.send(msg)
        assert reply is not None, f"no reply to {method}"
        assert reply["id"] == id and type(reply["id"]) is type(id)
        return reply

    @property
    def notifications(self) -> list[dict[str, Any]]:
        """Server notifications that crossed so far (drained from the transport)."""
        return self.transport.take_notifications()


def error_code(reply: dict[str, Any] | None) -> int:
    """The error code of ``reply``, failing the test if it is not an error response."""
    assert reply is not None, "expected an error response, got no reply"
    assert "error" in reply and "result" not in reply, f"expected an error, got {reply}"
    code = reply["error"]["code"]
    assert isinstance(code, int)
    return code


def result_of(reply: dict[str, Any] | None) -> dict[str, Any]:
    """The result of ``reply``, failing the test if it is not a success response."""
    assert reply is not None, "expected a result, got no reply"
    assert "result" in reply and "error" not in reply, f"expected a result, got {reply}"
    result = reply["result"]
    assert isinstance(result, dict)
    return result


def text_of(result: dict[str, Any]) -> str:
    """The concatenated text blocks of a tools/call result."""
    return "".join(b["text"] for b in result["content"] if b.get("type") == "text")


class CountingTool:
    """A tool function that counts its executions and can be told to raise."""

    def __init__(self, raises: BaseException | None = None) -> None:
        self.calls: list[dict[str, Any]] = []
        self.raises = raises

    def __call__(self, **arguments: Any) -> str:
        self.calls.append(arguments)
        if self.raises is not None:
            raise self.raises
        return "ran"


def counting_server(
    *,
    allowed: Iterable[str] | None = None,
    tool_errors: str = "is_error",
    raises: BaseException | None = None,
    page_size: int | None = None,
) -> tuple[MCPServer, CountingTool]:
    """A server with one tool ``echo(text: string, required)`` whose runs are counted."""
    server = MCPServer("counting", allowed_tools=allowed, tool_errors=tool_errors, page_size=page_size)
    tool = CountingTool(raises)
    schema = {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}
    server.add_tool("echo", tool, schema, "Echo text back.")
    return server, tool


class CheckedTransport:
    """Wrap any client transport (stdio, say) so every message it carries is checked."""

    def __init__(self, inner: Any, checker: WireChecker | None = None) -> None:
        self.inner = inner
        self.checker = checker if checker is not None else WireChecker()

    def send(self, message: dict[str, Any]) -> dict[str, Any] | None:
        self.checker.client_sent(message)
        reply: dict[str, Any] | None = self.inner.send(message)
        if reply is not None:
            self.checker.server_sent(reply)
        return reply

    def take_notifications(self) -> list[dict[str, Any]]:
        notes: list[dict[str, Any]] = self.inner.take_notifications()
        for note in notes:
            self.checker.server_sent(note)
        return notes

    def close(self) -> None:
        self.inner.close()
