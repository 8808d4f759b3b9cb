"""Our dual-era client against our own dual-era server, in memory, in every mode.

The server is the demo lab (``add``, ``weather``, which raises for a city with no station,
and ``delete_db``, not allow-listed) plus ``delete_file``, which asks the client to confirm
with :func:`harness.protocol.inputs.ask`: MRTR in the stateless era, a server-to-client
``elicitation/create`` answered through the transport's ``on_request`` in the handshake era.
Every crossing goes through ``InMemoryTransport`` (serialized both ways).
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from helpers.inputs import Confirmer
from helpers.pair import text_of

from harness.fixtures.demo import build_demo_server
from harness.protocol import InMemoryTransport, MCPClient, MCPServer, RPCError
from harness.protocol.inputs import ask, elicit, list_roots, sample

MODES = ("legacy", "auto", "2026-07-28")
SETTLED = {
    "legacy": ("handshake", "2025-11-25"),
    "auto": ("stateless", "2026-07-28"),
    "2026-07-28": ("stateless", "2026-07-28"),
}
CONFIRM_SCHEMA = {"type": "object", "properties": {"confirm": {"type": "boolean"}}, "required": ["confirm"]}


def delete_file(path: str) -> str:
    answer = ask("confirm", elicit(f"Delete {path}?", CONFIRM_SCHEMA))
    if answer.get("action") == "accept" and (answer.get("content") or {}).get("confirm"):
        return f"deleted {path}"
    return f"kept {path}"


def lab(**kwargs: Any) -> MCPServer:
    server = build_demo_server(**kwargs)
    schema = {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}
    server.add_tool("delete_file", delete_file, schema, "Delete a file once the user confirms.")
    if server.allowed_tools is not None:
        server.allowed_tools.add("delete_file")
    return server


def connect(mode: str, server: MCPServer | None = None, **kwargs: Any) -> tuple[MCPClient, InMemoryTransport]:
    transport = InMemoryTransport(server if server is not None else lab())
    client = MCPClient(transport, mode=mode, **kwargs)
    client.connect()
    return client, transport


@pytest.mark.parametrize("mode", MODES)
def test_each_mode_settles_its_era_against_our_server(mode: str) -> None:
    client, _ = connect(mode)
    assert (client.era, client.protocol_version) == SETTLED[mode]
    if mode == "auto":
        assert (
            client.discover_result is not None and "2026-07-28" in client.discover_result["supportedVersions"]
        )
        assert client.server_info["name"] == "harness-demo"


@pytest.mark.parametrize("mode", MODES)
def test_list_call_and_a_failing_tools_reason(mode: str) -> None:
    client, _ = connect(mode)
    assert [t["name"] for t in client.list_tools()] == ["add", "weather", "delete_db", "delete_file"]
    assert text_of(client.call_tool("add", {"x": 2, "y": 3})) == "5"
    failed = client.call_tool("weather", {"city": "Atlantis"})
    assert failed["isError"] is True and "no station near Atlantis" in text_of(failed)
    with pytest.raises(RPCError) as info:
        client.call_tool("delete_db", {})
    assert info.value.code == -32600  # the allow-list holds in both eras


@pytest.mark.parametrize("confirm", [True, False])
@pytest.mark.parametrize("mode", MODES)
def test_a_tool_that_asks_gets_the_handlers_answer(mode: str, confirm: bool) -> None:
    handler = Confirmer(confirm)
    client, _ = connect(mode, input_handler=handler, input_methods=["elicitation/create"])
    result = client.call_tool("delete_file", {"path": "/a"})
    assert text_of(result) == ("deleted /a" if confirm else "kept /a")
    assert [m for m, _ in handler.asked] == ["elicitation/create"]
    assert handler.asked[0][1]["message"] == "Delete /a?"
    assert client.input_rounds == (0 if mode == "legacy" else 1)
    assert client.inputs_answered == 1


@pytest.mark.parametrize("mode", MODES)
def test_without_a_handler_the_tool_cannot_ask(mode: str) -> None:
    client, _ = connect(mode)
    with pytest.raises(RPCError) as info:
        client.call_tool("delete_file", {"path": "/a"})
    assert info.value.code == -32021  # the client declared no elicitation capability


def test_a_tampered_request_state_is_refused_and_the_tool_does_not_run() -> None:
    ran: list[str] = []

    def spy(path: str) -> str:
        ask("confirm", elicit("Sure?", CONFIRM_SCHEMA))
        ran.append(path)
        return "done"

    server = lab()
    server.add_tool("spy", spy, {"type": "object", "properties": {"path": {"type": "string"}}})
    if server.allowed_tools is not None:
        server.allowed_tools.add("spy")
    client, _ = connect("2026-07-28", server, capabilities={"elicitation": {}})
    first = client.call_tool("spy", {"path": "/a"})
    assert first["resultType"] == "input_required"
    state = first["requestState"]
    with pytest.raises(RPCError) as info:
        client.request(
            "tools/call",
            {
                "name": "spy",
                "arguments": {"path": "/a"},
                "inputResponses": {"confirm": {"action": "accept", "content": {"confirm": True}}},
                "requestState": state[:-2] + ("AA" if not state.endswith("AA") else "BB"),
            },
        )
    assert info.value.code == -32602 and ran == []


def test_a_stale_cache_calls_a_tool_that_is_gone_until_a_listen_stream_says_so() -> None:
    server = lab()
    server.cache_ttl_ms = 60_000
    now = [0.0]
    client, _ = connect("2026-07-28", server, clock=lambda: now[0])
    client.list_tools()
    server.remove_tool("delete_file")
    now[0] += 30
    assert "delete_file" in {t["name"] for t in client.list_tools()}  # fresh by its TTL, stale in fact
    assert client.tools_cache_hits == 1
    with pytest.raises(RPCError) as info:
        client.call_tool("delete_file", {"path": "/a"})
    assert info.value.code == -32601  # the new way to fail: a cached tool that is gone
    sub = client.listen(tools=True)
    assert sub.acknowledged and sub.honored == {"toolsListChanged": True}
    server.remove_tool("weather")
    client.pump_notifications()
    assert sub.changes == 1 and list(client.tools_cache) == ["add", "delete_db"]


QUESTIONS = {
    "elicitation/create": elicit("Name?", {"type": "object", "properties": {"name": {"type": "string"}}}),
    "sampling/createMessage": sample([{"role": "user", "content": {"type": "text", "text": "hi"}}], 10),
    "roots/list": list_roots(),
}
ANSWERS: dict[str, dict[str, Any]] = {
    "elicitation/create": {"action": "accept", "content": {"name": "Ada"}},
    "sampling/createMessage": {
        "role": "assistant",
        "content": {"type": "text", "text": "hello"},
        "model": "m",
    },
    "roots/list": {"roots": [{"uri": "file:///work", "name": "work"}]},
}


def asking_lab(method: str) -> MCPServer:
    def asker() -> str:
        return json.dumps(ask("q", QUESTIONS[method]), sort_keys=True)

    server = lab()
    server.add_tool("asker", asker, {"type": "object", "properties": {}})
    if server.allowed_tools is not None:
        server.allowed_tools.add("asker")
    return server


@pytest.mark.parametrize("method", list(QUESTIONS))
@pytest.mark.parametrize("mode", MODES)
def test_each_kind_of_input_reaches_the_handler_and_its_answer_the_tool(mode: str, method: str) -> None:
    asked: list[str] = []

    def handler(m: str, params: dict[str, Any]) -> dict[str, Any]:
        asked.append(m)
        return ANSWERS[m]

    client, _ = connect(mode, asking_lab(method), input_handler=handler)
    result = client.call_tool("asker", {})
    assert asked == [method]
    assert json.loads(text_of(result)) == ANSWERS[method]


@pytest.mark.parametrize("method", ["sampling/createMessage", "roots/list"])
@pytest.mark.parametrize("mode", MODES)
def test_a_question_the_handler_does_not_serve_is_never_asked(mode: str, method: str) -> None:
    client, _ = connect(
        mode, asking_lab(method), input_handler=Confirmer(), input_methods=["elicitation/create"]
    )
    with pytest.raises(RPCError) as info:
        client.call_tool("asker", {})
    assert info.value.code == -32021  # not declared, so the server does not ask
