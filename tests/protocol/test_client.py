"""MCPClient: handshake state, cursors and cache, errors, ids, list_changed."""

from __future__ import annotations

from typing import Any

import pytest
from helpers.pair import ClientServerPair, text_of

from harness.fixtures.demo import add_subtract, build_demo_server
from harness.protocol import (
    INVALID_REQUEST,
    MCPClient,
    MCPServer,
    RPCError,
    TransportError,
)
from harness.protocol.errors import InvalidRequest, MethodNotFound


class ScriptedTransport:
    """A transport that answers from a script, to feed the client replies a server would not send."""

    def __init__(self, *replies: dict[str, Any] | None) -> None:
        self.replies = list(replies)
        self.sent: list[dict[str, Any]] = []
        self.notes: list[dict[str, Any]] = []

    def send(self, message: dict[str, Any]) -> dict[str, Any] | None:
        self.sent.append(message)
        return self.replies.pop(0) if "id" in message else None

    def take_notifications(self) -> list[dict[str, Any]]:
        out, self.notes = self.notes, []
        return out

    def close(self) -> None:
        pass


def test_initialize_stores_negotiated_version_capabilities_and_server_info() -> None:
    pair = ClientServerPair(protocol_version="2025-03-26")
    client = pair.client
    assert client.protocol_version == "2025-03-26"
    assert client.server_capabilities["tools"] == {"listChanged": True}
    assert client.server_info == {"name": "harness-demo", "version": "0.1.0"}


def test_initialize_sends_initialized_as_a_notification_without_id() -> None:
    transport = ScriptedTransport(
        {"jsonrpc": "2.0", "id": 1, "result": {"protocolVersion": "2025-06-18", "capabilities": {}}}
    )
    MCPClient(transport).initialize()
    assert [m["method"] for m in transport.sent] == ["initialize", "notifications/initialized"]
    assert "id" not in transport.sent[1]


def test_list_tools_follows_cursors_and_fills_the_cache() -> None:
    pair = ClientServerPair(build_demo_server(page_size=1))
    tools = pair.client.list_tools()
    assert [t["name"] for t in tools] == ["add", "weather", "delete_db"]
    assert list(pair.client.tools_cache) == ["add", "weather", "delete_db"]
    lists = [m for m in pair.checker.server_messages if "tools" in m.get("result", {})]
    assert len(lists) == 3  # one request per page


def test_call_tool_returns_the_result_and_a_tool_failure_is_not_raised(pair: ClientServerPair) -> None:
    assert text_of(pair.client.call_tool("add", {"x": 2, "y": 3})) == "5"
    failed = pair.client.call_tool("weather", {"city": "Atlantis"})
    assert failed["isError"] is True


@pytest.mark.parametrize(
    ("name", "code", "cls"),
    [("delete_db", INVALID_REQUEST, InvalidRequest), ("nope", -32601, MethodNotFound)],
    ids=["not allow-listed raises RPCError -32600", "unknown tool raises RPCError -32601"],
)
def test_call_tool_raises_rpc_error_on_an_error_reply(
    pair: ClientServerPair, name: str, code: int, cls: type[RPCError]
) -> None:
    with pytest.raises(cls) as info:
        pair.client.call_tool(name, {})
    assert info.value.code == code


def test_ids_increase_monotonically_from_one(pair: ClientServerPair) -> None:
    pair.client.list_tools()
    pair.client.ping()
    pair.client.call_tool("add", {"x": 1, "y": 1})
    with pytest.raises(RPCError):
        pair.client.call_tool("nope", {})
    pair.client.ping()
    sent_ids = [m["id"] for m in pair.checker.server_messages]
    assert sent_ids == list(range(1, len(sent_ids) + 1))


BAD_REPLIES: list[tuple[str, dict[str, Any] | None]] = [
    ("no reply to a request", None),
    ("reply with another id", {"jsonrpc": "2.0", "id": 2, "result": {}}),
    ("reply with the id as a string", {"jsonrpc": "2.0", "id": "1", "result": {}}),
    ("reply with the id as a bool", {"jsonrpc": "2.0", "id": True, "result": {}}),
    ("reply with the id as a float", {"jsonrpc": "2.0", "id": 1.0, "result": {}}),
    (
        "reply with both result and error",
        {"jsonrpc": "2.0", "id": 1, "result": {}, "error": {"code": 1, "message": "m"}},
    ),
    ("reply with neither result nor error", {"jsonrpc": "2.0", "id": 1}),
    ("result not an object", {"jsonrpc": "2.0", "id": 1, "result": [1]}),
    ("malformed error", {"jsonrpc": "2.0", "id": 1, "error": "boom"}),
]


@pytest.mark.parametrize("reply", [b[1] for b in BAD_REPLIES], ids=[b[0] for b in BAD_REPLIES])
def test_a_reply_that_does_not_answer_the_request_is_a_transport_error(reply: dict[str, Any] | None) -> None:
    with pytest.raises(TransportError):
        MCPClient(ScriptedTransport(reply)).ping()


def test_initialize_without_protocol_version_is_refused() -> None:
    transport = ScriptedTransport({"jsonrpc": "2.0", "id": 1, "result": {"capabilities": {}}})
    with pytest.raises(RPCError):
        MCPClient(transport).initialize()


def test_pump_notifications_relists_on_list_changed(pair: ClientServerPair) -> None:
    pair.client.list_tools()
    assert "subtract" not in pair.client.tools_cache
    add_subtract(pair.server)
    notes = pair.client.pump_notifications()
    assert [n["method"] for n in notes] == ["notifications/tools/list_changed"]
    assert notes[0].get("params") is None  # a bare invalidation, no diff
    assert "subtract" in pair.client.tools_cache
    assert pair.client.list_changes_seen == 1
    assert text_of(pair.client.call_tool("subtract", {"x": 5, "y": 3})) == "2"


def test_pump_notifications_without_list_changed_does_not_relist(pair: ClientServerPair) -> None:
    pair.client.list_tools()
    before = len(pair.checker.server_messages)
    assert pair.client.pump_notifications() == []
    assert len(pair.checker.server_messages) == before
    assert pair.client.list_changes_seen == 0


def test_removing_a_tool_invalidates_the_cache(pair: ClientServerPair) -> None:
    pair.client.list_tools()
    pair.server.remove_tool("weather")
    pair.client.pump_notifications()
    assert list(pair.client.tools_cache) == ["add", "delete_db"]


LIST_CHANGED: list[tuple[str, str, int]] = [
    ("add_tool notify before initialize queues nothing", "new", 0),
    ("add_tool notify between initialize and initialized queues nothing", "initializing", 0),
    ("add_tool notify when ready queues one", "ready", 1),
]


@pytest.mark.parametrize(("stage", "count"), [r[1:] for r in LIST_CHANGED], ids=[r[0] for r in LIST_CHANGED])
def test_list_changed_only_after_initialization(stage: str, count: int) -> None:
    pair = ClientServerPair(handshake=False)
    if stage != "new":
        pair.request(1, "initialize", {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {}})
    if stage == "ready":
        pair.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    add_subtract(pair.server)
    notes = pair.notifications
    assert len(notes) == count
    assert all(n == {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"} for n in notes)


@pytest.mark.parametrize(
    ("change", "count"),
    [("add silently", 0), ("remove", 1), ("remove silently", 0), ("remove unknown", 0), ("revoke", 1)],
    ids=[
        "add_tool without notify is silent",
        "remove_tool notifies by default",
        "remove_tool notify=False is silent",
        "removing an unknown tool is silent",
        "set_allowed_tools notify queues one",
    ],
)
def test_which_changes_notify(pair: ClientServerPair, change: str, count: int) -> None:
    server: MCPServer = pair.server
    if change == "add silently":
        server.add_tool("x", lambda: "x")
    elif change == "remove":
        server.remove_tool("add")
    elif change == "remove silently":
        server.remove_tool("add", notify=False)
    elif change == "remove unknown":
        server.remove_tool("nope")
    else:
        server.set_allowed_tools(["add"], notify=True)
    assert len(pair.notifications) == count


def test_a_server_repeating_a_cursor_cannot_hang_list_tools() -> None:
    page = {"tools": [{"name": "a", "inputSchema": {"type": "object"}}], "nextCursor": "again"}
    transport = ScriptedTransport(
        {"jsonrpc": "2.0", "id": 1, "result": page},
        {"jsonrpc": "2.0", "id": 2, "result": page},
        {"jsonrpc": "2.0", "id": 3, "result": page},
    )
    with pytest.raises(TransportError, match="repeated"):
        MCPClient(transport).list_tools()
    assert len(transport.sent) == 2


@pytest.mark.parametrize("answer", ["2026-07-28", "1.0"], ids=["a stateless-era answer", "a nonsense answer"])
def test_a_version_the_client_cannot_speak_ends_the_handshake(answer: str) -> None:
    reply = {"jsonrpc": "2.0", "id": 1, "result": {"protocolVersion": answer, "capabilities": {}}}
    transport = ScriptedTransport(reply)
    client = MCPClient(transport)
    with pytest.raises(TransportError, match="which we do not speak"):
        client.initialize()
    assert [m["method"] for m in transport.sent] == ["initialize"]  # no initialized after a bad answer
    assert client.protocol_version is None
