"""Interop, both eras: our MCPClient in each mode against the official SDK's dual-era server.

The peer is ``tests/peers/sdk_server.py --input-tools`` over stdio (mcp 2.3.0 ``MCPServer``):
``add``, ``weather`` (raises, reason masked), ``delete_file`` (asks the client to confirm,
through the SDK's resolver: an InputRequiredResult in 2026-07-28, an ``elicitation/create``
request mid-call in the handshake era) and ``retire`` (removes a tool and tells listen
streams). What the SDK does, recorded as assertions:

* ``server/discover`` answers ``supportedVersions: ["2026-07-28"]``, its info under
  ``_meta["io.modelcontextprotocol/serverInfo"]``; so ``auto`` settles on 2026-07-28;
* every 2026-07-28 result carries ``resultType: "complete"`` (or ``"input_required"``);
* ``ping`` is gone in 2026-07-28 (the client refuses it locally);
* a tool removed mid-session reaches a listening client as ``notifications/tools/list_changed``
  stamped with the listen request's id, after the acknowledgement.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers.inputs import Confirmer
from helpers.pair import text_of

from harness.protocol import MCPClient, RPCError
from harness.protocol.client import EraError, Subscription
from harness.transports import StdioTransport

pytestmark = pytest.mark.interop

PEER = Path(__file__).resolve().parent.parent / "peers" / "sdk_server.py"
MODES = ("legacy", "auto", "2026-07-28")
SETTLED = {
    "legacy": ("handshake", "2025-11-25"),
    "auto": ("stateless", "2026-07-28"),
    "2026-07-28": ("stateless", "2026-07-28"),
}


def connect(mode: str, handler: Confirmer | None = None) -> MCPClient:
    transport = StdioTransport([sys.executable, str(PEER), "--input-tools"], timeout=30)
    client = MCPClient(transport, mode=mode, input_handler=handler, input_methods=["elicitation/create"])
    client.connect()
    return client


@pytest.fixture(scope="module", params=MODES)
def sdk(request: pytest.FixtureRequest) -> Iterator[tuple[str, MCPClient, Confirmer]]:
    """One SDK server process per mode (it takes most of a second to import)."""
    handler = Confirmer()
    client = connect(request.param, handler)
    try:
        yield request.param, client, handler
    finally:
        client.close()


def test_the_mode_settles_the_era_the_sdk_speaks(sdk: tuple[str, MCPClient, Confirmer]) -> None:
    mode, client, _ = sdk
    assert (client.era, client.protocol_version) == SETTLED[mode]
    if mode == "auto":
        assert client.discover_result is not None
        assert client.discover_result["supportedVersions"] == ["2026-07-28"]
        assert client.server_info["name"] == "sdk-weather"
    if mode == "2026-07-28":
        assert client.discover_result is None  # pinned: no traffic before the first request


def test_our_client_lists_the_sdk_tools(sdk: tuple[str, MCPClient, Confirmer]) -> None:
    _, client, _ = sdk
    names = [t["name"] for t in client.list_tools()]
    assert names[:3] == ["add", "weather", "delete_file"]


def test_a_call_succeeds(sdk: tuple[str, MCPClient, Confirmer]) -> None:
    mode, client, _ = sdk
    result = client.call_tool("add", {"x": 2, "y": 3})
    assert text_of(result) == "5" and result["isError"] is False
    assert ("resultType" in result) == (mode != "legacy")


def test_a_failing_tools_reason_arrives_as_is_error(sdk: tuple[str, MCPClient, Confirmer]) -> None:
    _, client, _ = sdk
    result = client.call_tool("weather", {"city": "Atlantis"})
    assert result["isError"] is True
    assert text_of(result) == "Error executing tool weather"  # the SDK masks the reason in both eras


def test_the_sdk_asks_for_input_and_our_handler_answers(sdk: tuple[str, MCPClient, Confirmer]) -> None:
    mode, client, handler = sdk
    before, rounds = len(handler.asked), client.input_rounds
    result = client.call_tool("delete_file", {"path": "/tmp/a"})
    assert text_of(result) == "deleted /tmp/a"
    method, params = handler.asked[before]
    assert method == "elicitation/create" and params["message"] == "Delete /tmp/a?"
    # stateless: one MRTR retry; handshake: the request came mid-call, no retry
    assert client.input_rounds - rounds == (0 if mode == "legacy" else 1)


def test_ping_exists_only_in_the_handshake_era(sdk: tuple[str, MCPClient, Confirmer]) -> None:
    mode, client, _ = sdk
    if mode == "legacy":
        assert client.ping() == {}
        return
    with pytest.raises(EraError) as info:
        client.ping()
    assert info.value.code == -32601


def test_an_unknown_method_raises_rpc_error(sdk: tuple[str, MCPClient, Confirmer]) -> None:
    _, client, _ = sdk
    with pytest.raises(RPCError) as info:
        client.request("tools/nope")
    assert info.value.code == -32601


@pytest.mark.parametrize("mode", MODES)
def test_without_a_handler_no_capability_is_declared_and_the_sdk_refuses_with_32021(mode: str) -> None:
    client = connect(mode)
    try:
        with pytest.raises(RPCError) as info:
            client.call_tool("delete_file", {"path": "/tmp/b"})
    finally:
        client.close()
    assert info.value.code == -32021  # MISSING_REQUIRED_CLIENT_CAPABILITY, in both eras


@pytest.mark.parametrize("mode", ["auto", "2026-07-28"])
def test_a_declared_capability_without_a_handler_returns_the_input_required_result(mode: str) -> None:
    transport = StdioTransport([sys.executable, str(PEER), "--input-tools"], timeout=30)
    client = MCPClient(transport, mode=mode, capabilities={"elicitation": {}})
    try:
        client.connect()
        result = client.call_tool("delete_file", {"path": "/tmp/b"})
    finally:
        client.close()
    assert result["resultType"] == "input_required"
    assert isinstance(result["requestState"], str)
    assert [r["method"] for r in result["inputRequests"].values()] == ["elicitation/create"]


def _pump_until(client: MCPClient, sub: Subscription, done: Any, seconds: float = 20.0) -> None:
    deadline = time.monotonic() + seconds
    while not done(sub) and time.monotonic() < deadline:
        client.pump_notifications()
        time.sleep(0.02)


def test_a_tool_removed_mid_session_reaches_a_listening_client() -> None:
    client = connect("2026-07-28")
    try:
        assert "delete_file" in {t["name"] for t in client.list_tools()}
        sub = client.listen(tools=True)
        _pump_until(client, sub, lambda s: s.acknowledged)
        assert sub.honored == {"toolsListChanged": True}
        assert text_of(client.call_tool("retire", {"name": "delete_file"})) == "retired delete_file"
        _pump_until(client, sub, lambda s: s.changes > 0)
        assert sub.changes == 1 and client.list_changes_seen == 1
        assert "delete_file" not in client.tools_cache  # the level trigger made it list again
        gone = client.call_tool("delete_file", {"path": "/tmp/d"})
        assert gone["isError"] is True and text_of(gone) == "Unknown tool: delete_file"
    finally:
        client.close()
