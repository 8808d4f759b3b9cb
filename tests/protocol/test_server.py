"""MCPServer.handle: envelope rules, the three-tier dispatch, ids, and the byte edge (handle_text)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from helpers.pair import ClientServerPair, error_code, result_of

from harness.fixtures.demo import add_subtract, build_demo_server
from harness.protocol import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    PARSE_ERROR,
    InMemoryTransport,
    MCPClient,
    MCPServer,
    RPCError,
    State,
)
from harness.protocol.errors import InvalidParams

ENVELOPE: list[tuple[str, dict[str, Any], int]] = [
    ("id null is an invalid request", {"jsonrpc": "2.0", "id": None, "method": "ping"}, INVALID_REQUEST),
    ('jsonrpc "1.0" is an invalid request', {"jsonrpc": "1.0", "id": 1, "method": "ping"}, INVALID_REQUEST),
    (
        "jsonrpc as number 2.0 is an invalid request",
        {"jsonrpc": 2.0, "id": 1, "method": "ping"},
        INVALID_REQUEST,
    ),
    ("missing jsonrpc is an invalid request", {"id": 1, "method": "ping"}, INVALID_REQUEST),
    ("missing method is an invalid request", {"jsonrpc": "2.0", "id": 1}, INVALID_REQUEST),
    ("non-string method is an invalid request", {"jsonrpc": "2.0", "id": 1, "method": 5}, INVALID_REQUEST),
    ("bool id is an invalid request", {"jsonrpc": "2.0", "id": True, "method": "ping"}, INVALID_REQUEST),
    ("float id is an invalid request", {"jsonrpc": "2.0", "id": 1.5, "method": "ping"}, INVALID_REQUEST),
    ("object id is an invalid request", {"jsonrpc": "2.0", "id": {}, "method": "ping"}, INVALID_REQUEST),
    (
        "positional params are invalid params",
        {"jsonrpc": "2.0", "id": 1, "method": "ping", "params": [1]},
        INVALID_PARAMS,
    ),
    (
        "scalar params are an invalid request",
        {"jsonrpc": "2.0", "id": 1, "method": "ping", "params": 3},
        INVALID_REQUEST,
    ),
    (
        "unknown method is method not found",
        {"jsonrpc": "2.0", "id": 1, "method": "tools/nope"},
        METHOD_NOT_FOUND,
    ),
]


@pytest.mark.parametrize("message", [e[1] for e in ENVELOPE], ids=[e[0] for e in ENVELOPE])
def test_envelope_rules(pair: ClientServerPair, message: dict[str, Any]) -> None:
    expected = next(code for _, m, code in ENVELOPE if m is message)
    reply = pair.send(message)
    assert error_code(reply) == expected


@pytest.mark.parametrize(
    ("message", "echo"),
    [
        ({"jsonrpc": "2.0", "id": None, "method": "ping"}, None),
        ({"jsonrpc": "2.0", "id": True, "method": "ping"}, None),
        ({"jsonrpc": "1.0", "id": 9, "method": "ping"}, 9),
        ({"jsonrpc": "2.0", "id": "s", "method": "tools/nope"}, "s"),
    ],
    ids=[
        "null id answered with null",
        "bool id answered with null",
        "valid id echoed on a bad envelope",
        "string id echoed on an error",
    ],
)
def test_error_replies_carry_the_id_when_it_can_be_read(
    pair: ClientServerPair, message: dict[str, Any], echo: object
) -> None:
    reply = pair.send(message)
    assert reply is not None and reply["id"] == echo and type(reply["id"]) is type(echo)


IDS = [0, 1, -5, 2**53 + 1, "", "abc", "1", "ü-id"]


@pytest.mark.parametrize("req_id", IDS, ids=[f"id {i!r} echoed" for i in IDS])
def test_string_and_integer_ids_are_echoed_exactly(pair: ClientServerPair, req_id: int | str) -> None:
    for method in ("ping", "tools/list"):
        result_of(pair.request(req_id, method))  # request() asserts id and its type


NOTIFICATIONS: list[tuple[str, dict[str, Any]]] = [
    ("unknown notification", {"jsonrpc": "2.0", "method": "notifications/whatever"}),
    ("notification naming a request method", {"jsonrpc": "2.0", "method": "tools/list"}),
    ("cancelled", {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}}),
    ("notification with positional params", {"jsonrpc": "2.0", "method": "notifications/x", "params": [1]}),
    ("notification with scalar params", {"jsonrpc": "2.0", "method": "notifications/x", "params": 1}),
    ("a response from the client", {"jsonrpc": "2.0", "id": 4, "result": {}}),
    ("an error response from the client", {"jsonrpc": "2.0", "id": 4, "error": {"code": 1, "message": "m"}}),
]


@pytest.mark.parametrize("message", [n[1] for n in NOTIFICATIONS], ids=[n[0] for n in NOTIFICATIONS])
def test_notifications_and_responses_never_get_a_reply(
    pair: ClientServerPair, message: dict[str, Any]
) -> None:
    assert pair.send(message) is None


def test_never_both_result_and_error(pair: ClientServerPair) -> None:
    # every reply in a varied session is checked by the pair's WireChecker; count the kinds seen
    pair.client.list_tools()
    pair.client.call_tool("add", {"x": 1, "y": 2})
    pair.client.call_tool("weather", {"city": "Atlantis"})
    pair.send({"jsonrpc": "2.0", "id": 99, "method": "nope"})
    assert set(pair.checker.kinds) == {"result", "error"}
    for msg in pair.checker.server_messages:
        assert ("result" in msg) != ("error" in msg)


# -- three-tier dispatch -------------------------------------------------------------


def _server_with_bugs() -> MCPServer:
    server = MCPServer("bugs")

    def broken_template(id: str) -> str:
        raise KeyError(id)

    def coded_template(id: str) -> str:
        raise InvalidParams(f"id {id} is not a number")

    def broken_prompt() -> str:
        return str(1 / 0)

    server.add_resource_template("bug://broken/{id}", "broken", broken_template)
    server.add_resource_template("bug://coded/{id}", "coded", coded_template)
    server.add_prompt("broken", broken_prompt)
    return server


TIERS: list[tuple[str, str, dict[str, Any], int]] = [
    (
        "RPCError raised in a handler keeps its code",
        "resources/read",
        {"uri": "bug://coded/x"},
        INVALID_PARAMS,
    ),
    ("handler bug in a resource is -32603", "resources/read", {"uri": "bug://broken/x"}, INTERNAL_ERROR),
    ("handler bug in a prompt is -32603", "prompts/get", {"name": "broken"}, INTERNAL_ERROR),
]


@pytest.mark.parametrize(("method", "params", "code"), [t[1:] for t in TIERS], ids=[t[0] for t in TIERS])
def test_three_tier_dispatch(method: str, params: dict[str, Any], code: int) -> None:
    pair = ClientServerPair(_server_with_bugs())
    reply = pair.request(1, method, params)
    assert error_code(reply) == code
    assert "Traceback" not in reply["error"]["message"]


def test_a_handler_bug_is_internal_error_and_the_session_survives(
    pair: ClientServerPair, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(server: MCPServer, params: dict[str, Any]) -> dict[str, Any]:
        raise RuntimeError("oops in tools/list")

    monkeypatch.setitem(pair.server._methods, "tools/list", broken)
    reply = pair.request(1, "tools/list")
    assert error_code(reply) == INTERNAL_ERROR
    assert "oops in tools/list" in reply["error"]["message"]
    assert "Traceback" not in json.dumps(reply)
    assert result_of(pair.request(2, "ping")) == {}


def test_a_raised_rpc_error_with_data_keeps_the_data(
    pair: ClientServerPair, monkeypatch: pytest.MonkeyPatch
) -> None:
    def coded(server: MCPServer, params: dict[str, Any]) -> dict[str, Any]:
        raise RPCError(-32099, "custom", {"why": "test"})

    monkeypatch.setitem(pair.server._methods, "prompts/list", coded)
    assert pair.request(3, "prompts/list")["error"] == {
        "code": -32099,
        "message": "custom",
        "data": {"why": "test"},
    }


def test_a_notification_returns_none_even_when_its_handling_would_fail(pair: ClientServerPair) -> None:
    assert pair.server.handle({"jsonrpc": "2.0", "method": "tools/call", "params": {"name": "nope"}}) is None


# -- the byte edge ---------------------------------------------------------------------

EDGE: list[tuple[str, str | bytes, int]] = [
    ("unparseable text is -32700 with id null", "{not json", PARSE_ERROR),
    ("truncated object is -32700", '{"jsonrpc": "2.0", "id": 1, "method": "pi', PARSE_ERROR),
    ("empty text is -32700", "", PARSE_ERROR),
    ("non-UTF-8 bytes are -32700", b"\xff\xfe\x00garbage", PARSE_ERROR),
    ("NaN is not JSON", '{"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"x": NaN}}', PARSE_ERROR),
    (
        "Infinity is not JSON",
        '{"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"x": -Infinity}}',
        PARSE_ERROR,
    ),
    (
        "a number overflowing a double is -32700",
        '{"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"x": 1e999}}',
        PARSE_ERROR,
    ),
    ("deep nesting is a parse error, not a crash", "[" * 100_000 + "]" * 100_000, PARSE_ERROR),
    (
        "a JSON array is -32600 (no batches)",
        '[{"jsonrpc": "2.0", "id": 1, "method": "ping"}]',
        INVALID_REQUEST,
    ),
    ("an empty array is -32600", "[]", INVALID_REQUEST),
    ("a JSON string is -32600", '"ping"', INVALID_REQUEST),
    ("a JSON number is -32600", "42", INVALID_REQUEST),
    ("JSON null is -32600", "null", INVALID_REQUEST),
]


@pytest.mark.parametrize("text", [e[1] for e in EDGE], ids=[e[0] for e in EDGE])
def test_handle_text_edge(pair: ClientServerPair, text: str | bytes) -> None:
    expected = next(code for _, t, code in EDGE if t is text)
    reply = pair.text(text)
    assert error_code(reply) == expected
    assert reply is not None and reply["id"] is None


def test_handle_text_serves_a_valid_line_and_returns_compact_json(pair: ClientServerPair) -> None:
    out = pair.server.handle_text('{"jsonrpc": "2.0", "id": 1, "method": "ping"}')
    assert out == '{"jsonrpc":"2.0","id":1,"result":{}}'
    assert pair.server.handle_text(b'{"jsonrpc": "2.0", "method": "notifications/x"}') is None


def test_handle_text_refuses_oversized_messages_before_parsing() -> None:
    pair = ClientServerPair(MCPServer("small", max_message_bytes=64))
    reply = pair.text(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"pad": "x" * 100}}))
    assert error_code(reply) == INVALID_REQUEST


def test_handle_text_never_emits_nan_from_a_tool_result() -> None:
    # A result JSON cannot carry is a tool failure, reported through the strategy (issue 7).
    server = MCPServer("nan")
    server.add_tool("nan", lambda: {"content": [{"type": "text", "text": "x", "_meta": {"v": float("nan")}}]})
    pair = ClientServerPair(server)
    reply = pair.text('{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "nan"}}')
    assert result_of(reply)["isError"] is True
    assert "nan" in result_of(reply)["content"][0]["text"]


def test_initialize_without_protocol_version_is_invalid_params(fresh_pair: ClientServerPair) -> None:
    reply = fresh_pair.request(
        1, "initialize", {"capabilities": {}, "clientInfo": {"name": "c", "version": "1"}}
    )
    assert error_code(reply) == INVALID_PARAMS


# -- one registry, many sessions (MCPServer.new_session) -----------------------------------


def _transcript(server: MCPServer) -> list[str]:
    """Every reply and notification of one scripted session, as wire text."""
    out: list[str] = []
    seen = InMemoryTransport(server, tap=lambda direction, wire: out.append(wire.decode()))
    client = MCPClient(seen)
    client.initialize()
    client.list_tools()
    client.call_tool("add", {"x": 2, "y": 3})
    client.call_tool("weather", {"city": "Atlantis"})
    add_subtract(server)
    client.pump_notifications()
    client.call_tool("subtract", {"x": 5, "y": 1})
    return out


def test_a_new_session_speaks_byte_for_byte_as_a_freshly_built_server() -> None:
    lab = build_demo_server()
    assert _transcript(lab.new_session()) == _transcript(build_demo_server())


def test_a_new_session_starts_before_the_handshake_whatever_its_parent_did(pair: ClientServerPair) -> None:
    pair.client.request("logging/setLevel", {"level": "error"})
    pair.client.request("resources/subscribe", {"uri": "lab://readme"})
    add_subtract(pair.server)  # queues list_changed in the parent's outbox
    child = pair.server.new_session()
    assert child.state is State.NEW
    assert (child.protocol_version, child.client_info, child.log_level) == (None, None, None)
    assert not child.subscriptions and not child.has_notifications
    reply = child.handle({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
    assert reply is not None and reply["error"]["code"] == INVALID_REQUEST  # the gate holds
    assert pair.server.state is State.READY and pair.server.has_notifications  # parent untouched


def test_registrations_made_in_one_session_stay_in_that_session() -> None:
    lab = build_demo_server()
    child = lab.new_session()
    add_subtract(child)
    child.remove_tool("weather")
    child.set_allowed_tools(["add", "subtract"])
    assert list(lab.tools) == ["add", "weather", "delete_db"]
    assert lab.allowed_tools == {"add", "subtract", "weather"}
    assert list(lab.new_session().tools) == ["add", "weather", "delete_db"]
    assert list(child.tools) == ["add", "delete_db", "subtract"]
