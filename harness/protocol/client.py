"""The MCP client: handshake, requests with checked ids, tools cache, list_changed.

The client is transport-agnostic: a transport is anything with ``send(message)
-> reply | None`` (None for notifications), ``take_notifications()`` and
``close()``. Ids increase monotonically from 1 and every reply's id is checked
against its request's. An error reply raises :class:`RPCError` with the code.
"""

from __future__ import annotations

from typing import Any, Protocol

from harness import __version__
from harness.protocol.errors import INVALID_REQUEST, RPCError, TransportError
from harness.protocol.messages import TOOLS_LIST_CHANGED, Message, check_response, is_valid_id, notification
from harness.protocol.versions import LATEST_VERSION, SUPPORTED_VERSIONS


class Transport(Protocol):
    """What :class:`MCPClient` needs from a transport."""

    def send(self, message: Message) -> Message | None: ...

    def take_notifications(self) -> list[Message]: ...

    def close(self) -> None: ...


class MCPClient:
    """One client session over ``transport``."""

    def __init__(
        self,
        transport: Transport,
        *,
        client_info: dict[str, Any] | None = None,
        protocol_version: str = LATEST_VERSION,
        capabilities: dict[str, Any] | None = None,
    ) -> None:
        self.transport = transport
        self.client_info = client_info or {"name": "harness", "version": __version__}
        self.requested_version = protocol_version
        self.capabilities = capabilities or {}
        self.protocol_version: str | None = None
        self.server_capabilities: dict[str, Any] = {}
        self.server_info: dict[str, Any] = {}
        self.tools_cache: dict[str, dict[str, Any]] = {}
        self.list_changes_seen = 0
        self._next_id = 1

    # -- plumbing ------------------------------------------------------------------

    def request(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        """Send a request and return its result; an error reply raises RPCError."""
        req_id = self._next_id
        self._next_id += 1
        message: Message = {"jsonrpc": "2.0", "id": req_id, "method": method}
        if params is not None:
            message["params"] = params
        reply = self.transport.send(message)
        if reply is None:
            raise TransportError(f"no reply to request {req_id} ({method})")
        got = reply.get("id")
        # type(got) is int: an int and not a bool, so is_valid_id would pass it
        if (type(got) is not int or got != req_id) and (not is_valid_id(got) or got != req_id):
            # strict: true == 1 and 1.0 == 1 in Python
            raise TransportError(f"reply id {reply.get('id')!r} does not match request id {req_id}")
        if "error" in reply or "result" not in reply:  # a result alone passes check_response
            try:
                check_response(reply)
            except RPCError as exc:
                raise TransportError(f"malformed reply to {method}: {exc.message}") from None
            raise RPCError.from_error(reply["error"])
        result = reply["result"]
        if not isinstance(result, dict):
            raise TransportError(f"result of {method} is not an object")
        return result

    def notify(self, method: str, params: dict[str, Any] | None = None) -> None:
        """Send a notification (no id; nothing comes back)."""
        self.transport.send(notification(method, params))

    # -- lifecycle -----------------------------------------------------------------

    def initialize(self) -> dict[str, Any]:
        """The handshake: initialize, store what was negotiated, then notifications/initialized."""
        result = self.request(
            "initialize",
            {
                "protocolVersion": self.requested_version,
                "capabilities": self.capabilities,
                "clientInfo": self.client_info,
            },
        )
        version = result.get("protocolVersion")
        if not isinstance(version, str):
            raise RPCError(INVALID_REQUEST, "initialize result has no protocolVersion")
        if version not in SUPPORTED_VERSIONS:
            # spec: a client that cannot use the server's answer disconnects (no initialized)
            raise TransportError(f"server answered protocol version {version!r}, which we do not speak")
        self.protocol_version = version
        self.server_capabilities = result.get("capabilities") or {}
        self.server_info = result.get("serverInfo") or {}
        self.notify("notifications/initialized")
        return result

    def ping(self) -> dict[str, Any]:
        return self.request("ping")

    def close(self) -> None:
        self.transport.close()

    # -- tools -----------------------------------------------------------------------

    def list_tools(self) -> list[dict[str, Any]]:
        """Every tool, following cursors to the end; refills ``tools_cache``."""
        tools: list[dict[str, Any]] = []
        cursor: str | None = None
        seen: set[str] = set()
        while True:
            result = self.request("tools/list", {"cursor": cursor} if cursor is not None else None)
            tools.extend(result.get("tools", []))
            next_cursor = result.get("nextCursor")
            if not next_cursor:
                break
            if not isinstance(next_cursor, str) or next_cursor in seen:
                # a paginator that never ends must not hang the client
                raise TransportError(f"tools/list returned a repeated or non-string cursor {next_cursor!r}")
            seen.add(next_cursor)
            cursor = next_cursor
        self.tools_cache = {t["name"]: t for t in tools}
        return tools

    def call_tool(self, name: str, arguments: dict[str, Any] | None = None) -> dict[str, Any]:
        """Call a tool; a tool failure is a result with isError, a protocol error raises."""
        return self.request("tools/call", {"name": name, "arguments": arguments or {}})

    def pump_notifications(self) -> list[Message]:
        """Drain notifications; on tools list_changed re-list (a bare invalidation, no diff)."""
        notes = self.transport.take_notifications()
        if notes and any(n.get("method") == TOOLS_LIST_CHANGED for n in notes):
            self.list_changes_seen += 1
            self.list_tools()
        return notes

    # -- resources and prompts ---------------------------------------------------------

    def list_resources(self) -> list[dict[str, Any]]:
        return list(self.request("resources/list").get("resources", []))

    def read_resource(self, uri: str) -> dict[str, Any]:
        return self.request("resources/read", {"uri": uri})

    def list_prompts(self) -> list[dict[str, Any]]:
        return list(self.request("prompts/list").get("prompts", []))

    def get_prompt(self, name: str, arguments: dict[str, Any] | None = None) -> dict[str, Any]:
        return self.request("prompts/get", {"name": name, "arguments": arguments or {}})
