"""InMemoryTransport: every message really crosses serialize -> parse, in both directions."""

from __future__ import annotations

from typing import Any

import pytest
from helpers.pair import ClientServerPair, error_code, result_of

from harness.fixtures.demo import add_subtract, build_demo_server
from harness.protocol import CODECS, INTERNAL_ERROR, InMemoryTransport, MCPClient, MCPServer


class Probe:
    """A tool that keeps the exact object it was given."""

    def __init__(self) -> None:
        self.seen: list[Any] = []

    def __call__(self, payload: Any) -> str:
        self.seen.append(payload)
        return "ok"


@pytest.mark.parametrize("codec", CODECS)
def test_the_server_never_sees_the_clients_objects(codec: str) -> None:
    server = MCPServer("s")
    probe = Probe()
    server.add_tool("keep", probe, {"type": "object", "properties": {"payload": {}}})
    pair = ClientServerPair(server, codec=codec)
    payload = {"list": [1, 2], "tuple": (3, 4)}
    pair.client.call_tool("keep", {"payload": payload})
    assert probe.seen == [{"list": [1, 2], "tuple": [3, 4]}]  # the tuple became a JSON array
    assert probe.seen[0] is not payload and probe.seen[0]["list"] is not payload["list"]


@pytest.mark.parametrize("codec", CODECS)
def test_the_client_never_sees_the_servers_objects(codec: str) -> None:
    shared = {"type": "text", "text": "x"}
    server = MCPServer("s")
    server.add_tool("same", lambda: [shared])
    result = ClientServerPair(server, codec=codec).client.call_tool("same")
    assert result["content"] == [shared] and result["content"][0] is not shared


def test_the_tap_sees_every_crossing_as_bytes_in_order() -> None:
    seen: list[tuple[str, bytes]] = []
    transport = InMemoryTransport(build_demo_server(), tap=lambda d, b: seen.append((d, b)))
    client = MCPClient(transport)
    client.initialize()
    client.ping()
    assert [d for d, _ in seen] == ["c2s", "s2c", "c2s", "c2s", "s2c"]  # initialize, initialized, ping
    assert all(isinstance(b, bytes) for _, b in seen)
    assert seen[-1][1] == b'{"jsonrpc":"2.0","id":2,"result":{}}'


def test_notifications_queued_between_sends_cross_too(pair: ClientServerPair) -> None:
    add_subtract(pair.server)  # no message is being handled: a scenario event
    assert pair.notifications == [{"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}]
    assert pair.notifications == []  # drained once


def test_a_notification_from_the_client_returns_none(pair: ClientServerPair) -> None:
    assert (
        pair.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 3}}) is None
    )


def test_an_unencodable_reply_becomes_internal_error_not_a_crash() -> None:
    # A tool's NaN is a tool failure before any reply is built (issue 7); a prompt's is not.
    server = MCPServer("s")
    block = {"type": "text", "text": "x", "_meta": {"v": float("nan")}}
    server.add_prompt("nan", lambda: [{"role": "user", "content": block}])
    pair = ClientServerPair(server)
    assert error_code(pair.request(1, "prompts/get", {"name": "nan"})) == INTERNAL_ERROR
    assert result_of(pair.request(2, "ping")) == {}
    assert pair.transport.crashed is None


def test_close_is_harmless(pair: ClientServerPair) -> None:
    pair.client.close()
    assert result_of(pair.request(9, "ping")) == {}
