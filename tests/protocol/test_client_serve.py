"""Our client in each mode against ``harness serve --demo`` over stdio (a live process, real pipes).

The in-memory tests (``tests/protocol/test_client_memory.py``) pin the rules; this shows they
hold across a process boundary too, including a listen stream written with
``StdioTransport.post`` whose acknowledgement arrives later on the same pipe.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator

import pytest
from helpers.pair import text_of

from harness.protocol import MCPClient, RPCError
from harness.protocol.client import EraError
from harness.transports import StdioTransport

HARNESS = [sys.executable, "-m", "harness.cli.main"]
SETTLED = {
    "legacy": ("handshake", "2025-11-25"),
    "auto": ("stateless", "2026-07-28"),
    "2026-07-28": ("stateless", "2026-07-28"),
}


@pytest.fixture(scope="module", params=list(SETTLED))
def served(request: pytest.FixtureRequest) -> Iterator[tuple[str, MCPClient]]:
    transport = StdioTransport([*HARNESS, "serve", "--demo"], timeout=30)
    client = MCPClient(transport, mode=request.param)
    try:
        client.connect()
        yield request.param, client
    finally:
        client.close()


def test_the_mode_settles_its_era(served: tuple[str, MCPClient]) -> None:
    mode, client = served
    assert (client.era, client.protocol_version) == SETTLED[mode]


def test_list_call_and_a_failing_tools_reason(served: tuple[str, MCPClient]) -> None:
    _, client = served
    assert [t["name"] for t in client.list_tools()] == ["add", "weather", "delete_db"]
    assert text_of(client.call_tool("add", {"x": 2, "y": 3})) == "5"
    failed = client.call_tool("weather", {"city": "Atlantis"})
    assert failed["isError"] is True and "no station near Atlantis" in text_of(failed)
    with pytest.raises(RPCError) as info:
        client.call_tool("delete_db", {})
    assert info.value.code == -32600


def test_a_listen_stream_is_acknowledged_over_the_pipe(served: tuple[str, MCPClient]) -> None:
    mode, client = served
    if mode == "legacy":
        with pytest.raises(EraError):  # the stateless era's; a handshake client has list_changed
            client.listen(tools=True)
        return
    sub = client.listen(tools=True)
    deadline = time.monotonic() + 20
    while not sub.acknowledged and time.monotonic() < deadline:
        client.pump_notifications()
        time.sleep(0.02)
    assert sub.honored == {"toolsListChanged": True}
    assert text_of(client.call_tool("add", {"x": 1, "y": 1})) == "2"  # the open stream blocks nothing
