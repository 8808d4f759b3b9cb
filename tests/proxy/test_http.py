"""The proxy with HTTP on either side: ``--http`` (a Streamable HTTP front) and ``--upstream URL``.

Our own client drives it in both eras: ``legacy`` (initialize, a session per client, an upstream
per session) and ``auto`` (server/discover answered by the demo lab, so stateless traffic).
"""

from __future__ import annotations

import socket
import time
from typing import Any

import pytest

from harness.protocol import MCPClient
from harness.protocol.errors import RPCError
from harness.transports import HTTPClientTransport, StdioTransport
from tests.proxy.conftest import DEMO, HARNESS, REPO, LiveProxy, proxy, start_http

EVENTS = '[[events]]\nkind = "remove_tool"\ntool = "add"\nat_call = 1\n'


def outcome(call: Any) -> Any:
    try:
        return call()
    except RPCError as exc:
        return {"error": exc.code, "message": exc.message}


def wait_for(take: Any, wait: float = 5.0) -> list[Any]:
    deadline = time.monotonic() + wait
    got: list[Any] = []
    while not got and time.monotonic() < deadline:
        got = take()
        time.sleep(0.02)
    return got


@pytest.mark.parametrize("mode", ["legacy", "auto"])
def test_the_http_front_speaks_both_eras_and_rewrites(
    live: list[LiveProxy], mode: str, tmp_path: Any
) -> None:
    events = tmp_path / "events.toml"
    events.write_text(EVENTS)
    front = start_http(proxy("--http", "--port", "0", "--strategy", "collapse", "--faults", str(events)))
    live.append(front)
    client = MCPClient(HTTPClientTransport(front.url, timeout=30), mode=mode)
    client.connect()
    assert client.era == ("handshake" if mode == "legacy" else "stateless")
    assert [t["name"] for t in client.list_tools()] == ["add", "weather", "delete_db"]
    failed = outcome(lambda: client.call_tool("weather", {"city": "Atlantis"}))
    assert failed == {"error": -32603, "message": "ERROR: no station near Atlantis"}
    if mode == "legacy":  # the event goes down the session's GET stream
        assert wait_for(client.transport.take_notifications) == [
            {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}
        ]
    assert outcome(lambda: client.call_tool("add", {"x": 1, "y": 1}))["error"] == -32601
    client.close()
    stderr = front.stop()
    assert '"rewrites": {"collapse": 1, "unknown tool": 1}' in stderr


def test_a_stateless_listen_stream_through_the_front_hears_the_event(
    live: list[LiveProxy], tmp_path: Any
) -> None:
    events = tmp_path / "events.toml"
    events.write_text(EVENTS)
    front = start_http(proxy("--http", "--port", "0", "--faults", str(events)))
    live.append(front)
    client = MCPClient(HTTPClientTransport(front.url, timeout=30), mode="2026-07-28")
    client.connect()
    subscription = client.listen(tools=True)
    wait_for(lambda: client.pump_notifications() or ([1] if subscription.honored is not None else []))
    client.call_tool("weather", {"city": "Oslo"})
    deadline = time.monotonic() + 5
    while subscription.changes == 0 and time.monotonic() < deadline:
        client.pump_notifications()
        time.sleep(0.05)
    assert subscription.changes >= 1
    assert "add" not in [t["name"] for t in client.list_tools()]
    client.close()


def test_upstream_url_puts_the_proxy_in_front_of_a_real_http_server(live: list[LiveProxy]) -> None:
    server = start_http([*DEMO, "--http", "--port", "0"])
    live.append(server)
    transport = StdioTransport(
        [*HARNESS, "proxy", "--strategy", "masked", "--upstream", server.url], timeout=30, cwd=str(REPO)
    )
    client = MCPClient(transport)
    client.initialize()
    assert client.call_tool("add", {"x": 2, "y": 3}) == {"content": [{"type": "text", "text": "5"}]}
    assert (
        client.call_tool("weather", {"city": "Atlantis"})["content"][0]["text"]
        == "Error executing tool weather"
    )
    client.close()
    transport.process.wait(timeout=20)


def test_http_on_both_sides(live: list[LiveProxy]) -> None:
    server = start_http([*DEMO, "--http", "--port", "0"])
    live.append(server)
    front = start_http(
        [*HARNESS, "proxy", "--http", "--port", "0", "--strategy", "collapse", "--upstream", server.url]
    )
    live.append(front)
    for mode in ("legacy", "auto"):
        client = MCPClient(HTTPClientTransport(front.url, timeout=30), mode=mode)
        client.connect()
        assert client.call_tool("add", {"x": 2, "y": 3})["content"][0]["text"] == "5"
        assert outcome(lambda c=client: c.call_tool("weather", {"city": "Atlantis"}))["error"] == -32603
        client.close()


def test_an_upstream_url_nobody_answers_gives_internal_error_and_one_line() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    transport = StdioTransport(
        [*HARNESS, "proxy", "--upstream", f"http://127.0.0.1:{port}/mcp"], timeout=30, cwd=str(REPO)
    )
    client = MCPClient(transport)
    with pytest.raises(RPCError) as info:
        client.initialize()
    assert info.value.code == -32603 and "upstream server failed" in info.value.message
    client.close()
    transport.process.wait(timeout=20)
    time.sleep(0.1)
    lines = [x for x in transport.stderr_lines if "warning" in x]
    assert len(lines) == 1 and "upstream request failed" in lines[0]


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
def test_input_required_asks_through_the_http_front_in_either_era(
    live: list[LiveProxy], mode: str, tmp_path: Any
) -> None:
    faults = tmp_path / "f.toml"
    faults.write_text(
        '[[faults]]\nkind = "bad_argument"\ntool = "weather"\nrate = 1.0\nargument = "city"\nvalid = "Oslo"\n'
    )
    front = start_http(
        proxy("--http", "--port", "0", "--strategy", "input_required", "--faults", str(faults))
    )
    live.append(front)
    asked: list[Any] = []

    def answer(method: str, params: dict[str, Any]) -> dict[str, Any]:
        asked.append((method, params))
        return {"action": "accept", "content": {"city": "Oslo"}}

    client = MCPClient(
        HTTPClientTransport(front.url, timeout=30),
        mode=mode,
        input_handler=answer,
        input_methods=["elicitation/create"],
    )
    client.connect()
    reply = client.call_tool("weather", {"city": "oslo"})
    assert reply["content"][0]["text"] == "Oslo: 4°C, light rain"
    ((method, params),) = asked
    assert method == "elicitation/create" and "expected form 'Oslo'" in params["message"]
    client.close()
