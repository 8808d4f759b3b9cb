"""A tool asks the client for input: MRTR (stateless era), server-to-client requests (handshake era)."""

from __future__ import annotations

from typing import Any

import pytest
from helpers.mcp_schema import WireChecker

from harness.protocol import InMemoryTransport, MCPServer, get_codec
from harness.protocol.errors import INVALID_PARAMS, MISSING_REQUIRED_CLIENT_CAPABILITY
from harness.protocol.inputs import InputRequest, ask, ask_all, elicit, list_roots, sample
from harness.protocol.versions import META_CLIENT_CAPABILITIES, META_PROTOCOL_VERSION, STATELESS_VERSION

CITY = elicit(
    "Which city?",
    {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
)
KEY = b"k" * 32


class Booker:
    """A tool that asks for the city when it is missing, and counts how often it got past asking."""

    def __init__(self) -> None:
        self.booked: list[str] = []

    def __call__(self, city: str = "") -> str:
        if not city:
            answer = ask("city", CITY)
            if answer.get("action") != "accept":
                return "nothing booked"
            city = answer["content"]["city"]
        self.booked.append(city)
        return f"booked {city}"


def booking_server(key: bytes = KEY) -> tuple[MCPServer, Booker]:
    server = MCPServer("booking", state_key=key)
    tool = Booker()
    server.add_tool("book", tool, {"type": "object", "properties": {"city": {"type": "string"}}})
    return server, tool


def meta(caps: dict[str, Any] | None = None) -> dict[str, Any]:
    return {META_PROTOCOL_VERSION: STATELESS_VERSION, META_CLIENT_CAPABILITIES: caps or {}}


def call(
    req_id: int, arguments: dict[str, Any], caps: dict[str, Any] | None = None, **extra: Any
) -> dict[str, Any]:
    params = {"name": "book", "arguments": arguments, "_meta": meta(caps), **extra}
    return {"jsonrpc": "2.0", "id": req_id, "method": "tools/call", "params": params}


ELICITING = {"elicitation": {}}
ACCEPT = {"action": "accept", "content": {"city": "Oslo"}}


def test_a_stateless_call_that_needs_input_answers_input_required_then_completes_on_retry() -> None:
    server, tool = booking_server()
    first = server.handle(call(1, {}, ELICITING))
    assert first is not None
    result = first["result"]
    assert result["resultType"] == "input_required"
    assert result["inputRequests"] == {"city": {"method": "elicitation/create", "params": CITY.params}}
    assert tool.booked == []
    retry = call(2, {}, ELICITING, inputResponses={"city": ACCEPT}, requestState=result["requestState"])
    second = server.handle(retry)
    assert second is not None and second["result"]["resultType"] == "complete"
    assert second["result"]["content"] == [{"type": "text", "text": "booked Oslo"}]
    assert tool.booked == ["Oslo"]


@pytest.mark.parametrize(
    "spoil",
    [
        pytest.param(lambda s: s[:-2] + ("AA" if not s.endswith("AA") else "BB"), id="tampered mac"),
        pytest.param(lambda s: s.replace("s1.", "s1.e", 1), id="tampered payload"),
        pytest.param(lambda s: "not a state", id="garbage"),
    ],
)
def test_a_tampered_request_state_is_refused_and_the_tool_does_not_run(spoil: Any) -> None:
    server, tool = booking_server()
    first = server.handle(call(1, {}, ELICITING))
    assert first is not None
    state = spoil(first["result"]["requestState"])
    reply = server.handle(call(2, {}, ELICITING, inputResponses={"city": ACCEPT}, requestState=state))
    assert reply is not None and reply["error"]["code"] == INVALID_PARAMS
    assert tool.booked == []


def test_a_state_from_another_server_is_refused() -> None:
    ours, tool = booking_server(b"a" * 32)
    theirs, _ = booking_server(b"b" * 32)
    first = theirs.handle(call(1, {}, ELICITING))
    assert first is not None
    reply = ours.handle(call(2, {}, ELICITING, inputResponses={"city": ACCEPT}, **_state(first)))
    assert reply is not None and reply["error"]["code"] == INVALID_PARAMS
    assert tool.booked == []


def test_a_replayed_state_is_refused_the_second_time() -> None:
    server, tool = booking_server()
    first = server.handle(call(1, {}, ELICITING))
    assert first is not None
    retry = call(2, {}, ELICITING, inputResponses={"city": ACCEPT}, **_state(first))
    assert "result" in (server.handle(retry) or {})
    again = server.handle({**retry, "id": 3})
    assert again is not None and again["error"]["code"] == INVALID_PARAMS
    assert tool.booked == ["Oslo"]


def test_a_state_is_bound_to_the_tool_arguments() -> None:
    server, tool = booking_server()
    first = server.handle(call(1, {}, ELICITING))
    assert first is not None
    moved = call(2, {"city": ""}, ELICITING, inputResponses={"city": ACCEPT}, **_state(first))
    reply = server.handle(moved)
    assert reply is not None and reply["error"]["code"] == INVALID_PARAMS
    assert tool.booked == []


def test_without_the_capability_the_stateless_call_gets_missing_capability() -> None:
    server, tool = booking_server()
    reply = server.handle(call(1, {}, {}))
    assert reply is not None and reply["error"]["code"] == MISSING_REQUIRED_CLIENT_CAPABILITY
    assert reply["error"]["data"] == {"requiredCapabilities": {"elicitation": {"form": {}}}}
    assert tool.booked == []


def _state(reply: dict[str, Any]) -> dict[str, Any]:
    return {"requestState": reply["result"]["requestState"]}


# -- the handshake era: requests to the client mid-call -----------------------------------


def handshake(server: MCPServer, caps: dict[str, Any]) -> InMemoryTransport:
    transport = InMemoryTransport(server)
    init = {
        "protocolVersion": "2025-11-25",
        "capabilities": caps,
        "clientInfo": {"name": "t", "version": "0"},
    }
    transport.send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": init})
    transport.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    return transport


def test_a_handshake_call_sends_elicitation_to_the_client_and_replies_once_answered() -> None:
    server, tool = booking_server()
    transport = handshake(server, ELICITING)
    seen: list[dict[str, Any]] = []

    def answer(request: dict[str, Any]) -> dict[str, Any]:
        seen.append(request)
        return {"jsonrpc": "2.0", "id": request["id"], "result": ACCEPT}

    transport.on_request = answer
    params = {"name": "book", "arguments": {}}
    reply = transport.send({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": params})
    assert reply == {
        "jsonrpc": "2.0",
        "id": 2,
        "result": {"content": [{"type": "text", "text": "booked Oslo"}]},
    }
    assert [r["method"] for r in seen] == ["elicitation/create"]
    assert seen[0]["params"] == CITY.params and isinstance(seen[0]["id"], str)
    assert tool.booked == ["Oslo"]


def test_sans_io_the_pending_call_returns_none_and_the_response_returns_its_reply() -> None:
    server, _ = booking_server()
    handshake(server, ELICITING)
    server.take_notifications()
    params = {"name": "book", "arguments": {}}
    assert server.handle({"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": params}) is None
    asked = server.take_notifications()
    assert len(asked) == 1 and asked[0]["method"] == "elicitation/create"
    reply = server.handle({"jsonrpc": "2.0", "id": asked[0]["id"], "result": ACCEPT})
    assert reply is not None and reply["id"] == 5 and "booked Oslo" in str(reply["result"])


def test_without_the_capability_the_handshake_call_does_not_wait() -> None:
    server, tool = booking_server()
    transport = handshake(server, {})
    params = {"name": "book", "arguments": {}}
    reply = transport.send({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": params})
    assert reply is not None and reply["error"]["code"] == MISSING_REQUIRED_CLIENT_CAPABILITY
    assert server.pending_calls == {} and tool.booked == []


def test_a_client_without_on_request_refuses_and_the_strategy_reports_it() -> None:
    server, tool = booking_server()
    transport = handshake(server, ELICITING)
    params = {"name": "book", "arguments": {}}
    reply = transport.send({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": params})
    assert reply is not None and reply["result"]["isError"] is True
    assert "refused elicitation/create" in reply["result"]["content"][0]["text"]
    assert tool.booked == []


def test_ask_all_batches_several_questions_in_one_round() -> None:
    questions: dict[str, InputRequest] = {
        "city": CITY,
        "roots": list_roots(),
        "hint": sample([{"role": "user", "content": {"type": "text", "text": "hi"}}], 10),
    }

    def tool() -> str:
        got = ask_all(questions)
        return ",".join(sorted(got))

    server = MCPServer("batch", state_key=KEY)
    server.add_tool("many", tool)
    caps = {"elicitation": {}, "roots": {}, "sampling": {}}
    first = server.handle(
        {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "many", "_meta": meta(caps)}}
    )
    assert first is not None and sorted(first["result"]["inputRequests"]) == ["city", "hint", "roots"]


def test_every_message_of_both_round_trips_passes_the_official_models() -> None:
    server, tool = booking_server()
    checker = WireChecker()
    transport = InMemoryTransport(server, tap=checker.tap(get_codec("json").decode))
    first = transport.send(call(1, {}, ELICITING))
    assert first is not None
    retry = call(2, {}, ELICITING, inputResponses={"city": ACCEPT}, **_state(first))
    assert "result" in (transport.send(retry) or {})
    init = {
        "protocolVersion": "2025-11-25",
        "capabilities": ELICITING,
        "clientInfo": {"name": "t", "version": "0"},
    }
    transport.send({"jsonrpc": "2.0", "id": 3, "method": "initialize", "params": init})
    transport.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    transport.on_request = lambda request: {"jsonrpc": "2.0", "id": request["id"], "result": ACCEPT}
    reply = transport.send({"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": "book"}})
    assert reply is not None and "result" in reply
    assert checker.kinds == ["result", "result", "result", "request", "result"]
    assert tool.booked == ["Oslo", "Oslo"]
