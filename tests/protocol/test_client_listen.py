"""Stateless tool lists in MCPClient: ``ttlMs`` caching on an injected clock, and ``subscriptions/listen``.

A cached ``tools/list`` is reused until its ``ttlMs`` runs out on the client's clock
(virtual time here: nothing sleeps, the same steps give the same requests). A listen
stream's ``notifications/tools/list_changed`` is a level trigger: the client drops the
cache and lists again, whatever the TTL. Without one, a client with a fresh cache calls a
tool that is gone: the new way to fail the study looks for.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.protocol import MCPClient, RPCError
from harness.protocol.client import EraError

SUB_ID = "io.modelcontextprotocol/subscriptionId"


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


class ListingServer:
    """A stateless peer: tools/list with caching hints (paged when ``page_size``), listen streams.

    ``listen`` is answered with nothing (the stream stays open) and an acknowledgement;
    :meth:`remove` drops a tool and sends ``tools/list_changed`` on every open stream.
    """

    def __init__(self, tools: list[str], *, ttl_ms: Any = 5000, page_size: int | None = None) -> None:
        self.tools = list(tools)
        self.ttl_ms, self.page_size = ttl_ms, page_size
        self.sent: list[dict[str, Any]] = []
        self.notes: list[dict[str, Any]] = []
        self.streams: list[Any] = []
        self.listen_reply: dict[str, Any] | None = None

    def send(self, message: dict[str, Any]) -> dict[str, Any] | None:
        self.sent.append(message)
        if "id" not in message:
            return None
        method, params = message["method"], message.get("params") or {}
        if method == "subscriptions/listen":
            if self.listen_reply is not None:
                return {"jsonrpc": "2.0", "id": message["id"], **self.listen_reply}
            self.streams.append(message["id"])
            honored = {k: v for k, v in params["notifications"].items() if k == "toolsListChanged"}
            self.notes.append(self._note("notifications/subscriptions/acknowledged", message["id"], honored))
            return None
        start = int(params.get("cursor", 0))
        end = len(self.tools) if self.page_size is None else start + self.page_size
        result: dict[str, Any] = {
            "tools": [{"name": n, "inputSchema": {"type": "object"}} for n in self.tools[start:end]],
            "resultType": "complete",
            "cacheScope": "private",
        }
        if self.ttl_ms is not None:
            result["ttlMs"] = self.ttl_ms[start] if isinstance(self.ttl_ms, list) else self.ttl_ms
        if end < len(self.tools):
            result["nextCursor"] = str(end)
        return {"jsonrpc": "2.0", "id": message["id"], "result": result}

    @staticmethod
    def _note(method: str, sub: Any, notifications: dict[str, Any] | None = None) -> dict[str, Any]:
        params: dict[str, Any] = {"_meta": {SUB_ID: sub}}
        if notifications is not None:
            params["notifications"] = notifications
        return {"jsonrpc": "2.0", "method": method, "params": params}

    def remove(self, name: str) -> None:
        self.tools.remove(name)
        for sub in self.streams:
            self.notes.append(self._note("notifications/tools/list_changed", sub))

    def take_notifications(self) -> list[dict[str, Any]]:
        out, self.notes = self.notes, []
        return out

    def close(self) -> None:
        pass

    @property
    def lists(self) -> int:
        return sum(m.get("method") == "tools/list" for m in self.sent)


def client_of(server: ListingServer, mode: str = "2026-07-28") -> tuple[MCPClient, Clock]:
    clock = Clock()
    return MCPClient(server, mode=mode, clock=clock), clock


# -- ttlMs ----------------------------------------------------------------------------------------


def test_a_list_is_reused_until_its_ttl_runs_out_on_the_clock() -> None:
    server = ListingServer(["a", "b"], ttl_ms=5000)
    client, clock = client_of(server)
    client.list_tools()
    clock.now += 4.999
    assert [t["name"] for t in client.list_tools()] == ["a", "b"]
    assert server.lists == 1 and client.tools_cache_hits == 1
    clock.now += 0.001
    client.list_tools()
    assert server.lists == 2


@pytest.mark.parametrize(
    "ttl", [0, None, -5, "5000", 2.5], ids=["0", "absent", "negative", "a string", "a float"]
)
def test_a_list_without_a_positive_integer_ttl_is_fetched_every_time(ttl: Any) -> None:
    server = ListingServer(["a"], ttl_ms=ttl)
    client, _ = client_of(server)
    client.list_tools()
    client.list_tools()
    assert server.lists == 2 and client.tools_fresh_until is None


def test_refresh_bypasses_a_fresh_cache() -> None:
    server = ListingServer(["a"])
    client, _ = client_of(server)
    client.list_tools()
    client.list_tools(refresh=True)
    assert server.lists == 2


def test_the_shortest_ttl_of_the_pages_counts() -> None:
    server = ListingServer(["a", "b", "c"], ttl_ms=[9000, 0, 2000], page_size=1)
    client, clock = client_of(server)
    client.list_tools()
    assert client.tools_fresh_until is None  # one page said "stale at once"
    server.ttl_ms = [9000, 3000, 2000]
    client.list_tools()
    assert client.tools_fresh_until == clock.now + 2.0
    assert client.tools_cache_scope == "private"


def test_the_handshake_era_ignores_caching_hints() -> None:
    server = ListingServer(["a"], ttl_ms=60_000)
    client = MCPClient(server, clock=Clock())
    client.list_tools()
    client.list_tools()
    assert server.lists == 2 and client.tools_fresh_until is None


def test_a_stale_cache_sends_the_agent_to_a_tool_that_is_gone() -> None:
    server = ListingServer(["search", "book"], ttl_ms=60_000)
    client, clock = client_of(server)
    client.list_tools()
    server.tools.remove("book")  # removed, and nobody listening
    clock.now += 30
    assert "book" in {t["name"] for t in client.list_tools()}  # still fresh by its TTL


# -- subscriptions/listen -------------------------------------------------------------------------


def test_listen_is_acknowledged_with_what_the_server_honours() -> None:
    server = ListingServer(["a"])
    client, _ = client_of(server)
    sub = client.listen(tools=True, prompts=True)
    request = server.sent[-1]
    assert request["method"] == "subscriptions/listen" and request["id"] == sub.id
    assert request["params"]["notifications"] == {"toolsListChanged": True, "promptsListChanged": True}
    assert "io.modelcontextprotocol/protocolVersion" in request["params"]["_meta"]
    assert sub.acknowledged and sub.honored == {"toolsListChanged": True}


def test_a_change_on_the_stream_drops_a_fresh_cache_and_lists_again() -> None:
    server = ListingServer(["search", "book"], ttl_ms=60_000)
    client, _ = client_of(server)
    client.list_tools()
    sub = client.listen()
    server.remove("book")
    client.pump_notifications()
    assert sub.changes == 1 and client.list_changes_seen == 1
    assert list(client.tools_cache) == ["search"] and server.lists == 2


def test_several_changes_in_one_pump_are_one_refetch() -> None:
    server = ListingServer(["a", "b", "c"])
    client, _ = client_of(server)
    sub = client.listen()
    server.remove("b")
    server.remove("c")
    client.pump_notifications()
    assert sub.changes == 2 and server.lists == 1 and list(client.tools_cache) == ["a"]


def test_events_for_another_subscription_are_not_counted_on_ours() -> None:
    server = ListingServer(["a", "b"])
    client, _ = client_of(server)
    sub = client.listen()
    server.notes.append(ListingServer._note("notifications/tools/list_changed", "someone-else"))
    client.pump_notifications()
    assert sub.changes == 0


@pytest.mark.parametrize(
    "ending",
    [
        {"jsonrpc": "2.0", "id": 1, "result": {"resultType": "complete", "_meta": {}}},
        {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}},
    ],
    ids=["the listen result (graceful close)", "notifications/cancelled naming it (stdio)"],
)
def test_the_server_ending_the_stream_closes_the_subscription(ending: dict[str, Any]) -> None:
    server = ListingServer(["a"])
    client, _ = client_of(server)
    sub = client.listen()
    assert sub.id == 1 and not sub.closed
    server.notes.append(ending)
    client.pump_notifications()
    assert sub.closed and sub.error is None


def test_a_refused_listen_raises_the_servers_error() -> None:
    server = ListingServer(["a"])
    server.listen_reply = {"error": {"code": -32602, "message": "bad filter"}}
    client, _ = client_of(server)
    with pytest.raises(RPCError) as info:
        client.listen()
    assert info.value.code == -32602 and client.subscriptions == {}


def test_stop_listening_cancels_the_stream() -> None:
    server = ListingServer(["a"])
    client, _ = client_of(server)
    sub = client.listen()
    client.stop_listening(sub)
    assert server.sent[-1] == {
        "jsonrpc": "2.0",
        "method": "notifications/cancelled",
        "params": {"requestId": sub.id, "reason": "client stopped listening"},
    }
    assert sub.closed and client.subscriptions == {}


def test_listen_belongs_to_the_stateless_era() -> None:
    client = MCPClient(ListingServer(["a"]))
    with pytest.raises(EraError):
        client.listen()


def test_a_transport_with_post_writes_the_request_without_waiting() -> None:
    class Posting(ListingServer):
        def __init__(self) -> None:
            super().__init__(["a"])
            self.posted: list[dict[str, Any]] = []

        def post(self, message: dict[str, Any]) -> None:
            self.posted.append(message)

    server = Posting()
    client, _ = client_of(server)
    sub = client.listen()
    assert [m["method"] for m in server.posted] == ["subscriptions/listen"] and server.sent == []
    assert not sub.acknowledged  # the acknowledgement comes later, through pump_notifications


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=8,
)
methods = st.sampled_from(
    [
        "notifications/tools/list_changed",
        "notifications/subscriptions/acknowledged",
        "notifications/cancelled",
        "notifications/progress",
    ]
)
messages = st.fixed_dictionaries(
    {"jsonrpc": st.just("2.0")},
    optional={
        "method": methods | json_values,
        "id": json_values | st.just(1),
        "params": json_values,
        "result": json_values,
        "error": json_values,
    },
)


@given(st.lists(messages, max_size=6))
def test_whatever_arrives_on_a_stream_pumping_never_raises(notes: list[dict[str, Any]]) -> None:
    server = ListingServer(["a"])
    client, _ = client_of(server)
    sub = client.listen()
    server.notes.extend(notes)
    assert client.pump_notifications() == notes
    assert sub.changes <= len(notes)
