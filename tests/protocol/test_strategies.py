"""The tool_errors strategies: what a raising tool turns into, the variable the harness compares."""

from __future__ import annotations

import pytest
from helpers.pair import ClientServerPair, error_code, result_of, text_of

from harness.fixtures.demo import build_demo_server
from harness.protocol import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    STRATEGIES,
    InMemoryTransport,
    MCPClient,
    MCPServer,
    RPCError,
    ServerCrashed,
)

WEATHER_FAILS = {"name": "weather", "arguments": {"city": "Atlantis"}}
REASON = "no station near Atlantis"


def test_the_strategy_names_are_the_public_four_then_input_required() -> None:
    # The four encodings keep their names and order; issue 19 appends the asking strategy.
    assert STRATEGIES == ("is_error", "masked", "collapse", "escape", "input_required")


def test_is_error_delivers_the_reason_as_readable_content() -> None:
    result = result_of(
        ClientServerPair(build_demo_server("is_error")).request(5, "tools/call", WEATHER_FAILS)
    )
    assert result == {"content": [{"type": "text", "text": f"ERROR: {REASON}"}], "isError": True}


def test_masked_hides_the_reason_behind_the_sdk_text() -> None:
    result = result_of(ClientServerPair(build_demo_server("masked")).request(5, "tools/call", WEATHER_FAILS))
    assert result["isError"] is True
    assert text_of(result) == "Error executing tool weather"
    assert "Atlantis" not in str(result)


def test_collapse_turns_the_failure_into_internal_error_carrying_the_message() -> None:
    reply = ClientServerPair(build_demo_server("collapse")).request(5, "tools/call", WEATHER_FAILS)
    assert error_code(reply) == INTERNAL_ERROR
    assert reply["error"]["message"] == REASON


def test_escape_lets_the_exception_leave_handle() -> None:
    server = build_demo_server("escape")
    pair = ClientServerPair(server)
    with pytest.raises(ValueError, match=REASON):
        server.handle({"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": WEATHER_FAILS})
    with pytest.raises(ValueError, match=REASON):
        server.handle_text(
            '{"jsonrpc":"2.0","id":6,"method":"tools/call","params":'
            '{"name":"weather","arguments":{"city":"Atlantis"}}}'
        )
    assert result_of(pair.request(7, "ping")) == {}  # the object survives; a transport treats it as dead


def test_escape_over_in_memory_raises_server_crashed_then_and_afterwards() -> None:
    transport = InMemoryTransport(build_demo_server("escape"))
    client = MCPClient(transport)
    client.initialize()
    assert text_of(client.call_tool("add", {"x": 2, "y": 3})) == "5"
    with pytest.raises(ServerCrashed, match=REASON) as info:
        client.call_tool("weather", {"city": "Atlantis"})
    assert isinstance(info.value.__cause__, ValueError)
    assert isinstance(transport.crashed, ValueError)
    with pytest.raises(ServerCrashed):
        client.call_tool("add", {"x": 2, "y": 3})
    with pytest.raises(ServerCrashed):
        client.ping()


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_every_strategy_leaves_protocol_errors_and_successes_alone(strategy: str) -> None:
    pair = ClientServerPair(build_demo_server(strategy), protocol_version="2025-06-18")
    assert text_of(pair.client.call_tool("add", {"x": 2, "y": 3})) == "5"
    assert (
        error_code(pair.request(1, "tools/call", {"name": "delete_db", "arguments": {}})) == INVALID_REQUEST
    )
    assert error_code(pair.request(2, "tools/call", {"name": "add", "arguments": {"x": 1}})) == INVALID_PARAMS


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_a_tool_raising_rpc_error_is_a_protocol_error_under_every_strategy(strategy: str) -> None:
    server = MCPServer("s", tool_errors=strategy)

    def coded() -> str:
        raise RPCError(-32050, "quota exceeded")

    server.add_tool("coded", coded)
    reply = ClientServerPair(server).request(1, "tools/call", {"name": "coded"})
    assert error_code(reply) == -32050


@pytest.mark.parametrize("strategy", [s for s in STRATEGIES if s != "escape"])
def test_a_handler_bug_outside_tools_is_internal_error_under_every_strategy(strategy: str) -> None:
    server = MCPServer("s", tool_errors=strategy)
    server.add_resource_template("x://{id}", "x", lambda id: {}[id])
    assert (
        error_code(ClientServerPair(server).request(1, "resources/read", {"uri": "x://1"})) == INTERNAL_ERROR
    )


def test_escape_does_not_leak_handler_bugs_outside_tools() -> None:
    server = MCPServer("s", tool_errors="escape")
    server.add_resource_template("x://{id}", "x", lambda id: {}[id])
    assert (
        error_code(ClientServerPair(server).request(1, "resources/read", {"uri": "x://1"})) == INTERNAL_ERROR
    )


def test_an_unknown_strategy_is_refused_with_the_valid_names() -> None:
    with pytest.raises(ValueError, match="is_error, masked, collapse, escape"):
        MCPServer("s", tool_errors="swallow")
