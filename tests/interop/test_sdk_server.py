"""Interop, the other direction: our MCPClient over StdioTransport drives an official-SDK server.

The peer is ``tests/peers/sdk_server.py`` (mcp 2.3.0 ``MCPServer``: ``add(x, y)`` and
``weather(city)``, which raises ``ValueError("no station near <city>")``). What it
does, recorded here as assertions (docs/probe.md describes the same peer):

* it answers our initialize offering 2025-11-25 with 2025-11-25, tools
  ``listChanged: false``;
* a raising tool is ``isError`` with the reason masked: "Error executing tool weather";
* an unknown tool is ``isError`` "Unknown tool: nope", not a -32601 protocol error;
* a missing argument is ``isError`` with pydantic's validation text;
* a string "3" for an integer is coerced, not rejected;
* an unknown method is -32601, which our client raises as RPCError.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers.pair import text_of

from harness.protocol import MCPClient, RPCError
from harness.transports import StdioTransport

pytestmark = pytest.mark.interop

PEER = Path(__file__).resolve().parent.parent / "peers" / "sdk_server.py"


@pytest.fixture(scope="module")
def sdk() -> Iterator[MCPClient]:
    """One SDK server process for the module (it takes most of a second to import)."""
    transport = StdioTransport([sys.executable, str(PEER)], timeout=30)
    client = MCPClient(transport)
    client.initialize()
    try:
        yield client
    finally:
        transport.close()


def test_handshake_with_the_sdk_server(sdk: MCPClient) -> None:
    assert sdk.protocol_version == "2025-11-25"
    assert sdk.server_info["name"] == "sdk-weather"
    assert sdk.server_capabilities["tools"] == {"listChanged": False}


def test_our_client_lists_the_sdk_tools(sdk: MCPClient) -> None:
    tools = sdk.list_tools()
    assert [t["name"] for t in tools] == ["add", "weather"]
    assert tools[0]["inputSchema"]["required"] == ["x", "y"]
    assert set(sdk.tools_cache) == {"add", "weather"}


def test_a_call_succeeds(sdk: MCPClient) -> None:
    result = sdk.call_tool("add", {"x": 2, "y": 3})
    assert text_of(result) == "5" and result["isError"] is False
    assert result["structuredContent"] == {"result": 5}


def test_the_sdk_masks_a_raising_tools_reason(sdk: MCPClient) -> None:
    result = sdk.call_tool("weather", {"city": "Atlantis"})
    assert result["isError"] is True
    assert text_of(result) == "Error executing tool weather"
    assert "Atlantis" not in text_of(result)


def test_the_sdk_answers_an_unknown_tool_with_is_error(sdk: MCPClient) -> None:
    result = sdk.call_tool("nope", {})
    assert result["isError"] is True and text_of(result) == "Unknown tool: nope"


def test_the_sdk_reports_a_missing_argument_as_is_error_naming_it(sdk: MCPClient) -> None:
    result = sdk.call_tool("add", {"x": 1})
    assert result["isError"] is True
    assert "validation error" in text_of(result) and "\ny\n" in text_of(result)


def test_the_sdk_coerces_a_numeric_string(sdk: MCPClient) -> None:
    assert text_of(sdk.call_tool("add", {"x": "3", "y": 4})) == "7"


def test_an_unknown_method_raises_rpc_error(sdk: MCPClient) -> None:
    with pytest.raises(RPCError) as info:
        sdk.request("tools/nope")
    assert info.value.code == -32601


def test_ping(sdk: MCPClient) -> None:
    assert sdk.ping() == {}
