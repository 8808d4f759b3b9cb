"""A tool asks the client for input: MRTR (stateless era), server-to-client requests (handshake era)."""

from __future__ import annotations

from typing import Any

import pytest
from helpers.mcp_schema import WireChecker

from harness.protocol import InMemoryTransport, MCPServer, get_codec
from harness.protocol.errors import INVALID_PARAMS, MISSING_REQUIRED_CLIENT_CAPABILITY
from harness.protocol.errors import MethodNotFound as MethodNotFoundError
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


ELICITING: dict[str, Any] = {"elicitation": {}}
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
    caps: dict[str, Any] = {"elicitation": {}, "roots": {}, "sampling": {}}
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


def two_step_server() -> tuple[MCPServer, list[tuple[str, str]]]:
    """A tool that asks for a city, then (in a second round) for a date."""
    done: list[tuple[str, str]] = []
    date_q = elicit("Which date?", {"type": "object", "properties": {"date": {"type": "string"}}})

    def plan() -> str:
        city = ask("city", CITY)["content"]["city"]
        date = ask("date", date_q)["content"]["date"]
        done.append((city, date))
        return f"{city} on {date}"

    server = MCPServer("plans", state_key=KEY)
    server.add_tool("plan", plan)
    return server, done


ANSWERS = {"city": ACCEPT, "date": {"action": "accept", "content": {"date": "2026-08-01"}}}


def test_a_stateless_second_round_carries_the_first_answer_in_the_state() -> None:
    server, done = two_step_server()
    msg: dict[str, Any] = {"jsonrpc": "2.0", "id": 1, "method": "tools/call"}
    base = {"name": "plan", "_meta": meta(ELICITING)}
    first = server.handle({**msg, "params": base})
    assert first is not None and list(first["result"]["inputRequests"]) == ["city"]
    second = server.handle(
        {**msg, "id": 2, "params": {**base, "inputResponses": {"city": ACCEPT}, **_state(first)}}
    )
    assert second is not None and list(second["result"]["inputRequests"]) == ["date"]
    # only the date is sent again: the city rides in the signed state
    third = server.handle(
        {**msg, "id": 3, "params": {**base, "inputResponses": {"date": ANSWERS["date"]}, **_state(second)}}
    )
    assert third is not None and third["result"]["content"][0]["text"] == "Oslo on 2026-08-01"
    assert done == [("Oslo", "2026-08-01")]


def test_an_answer_to_a_question_never_asked_is_ignored_and_asked_for_again() -> None:
    server, done = two_step_server()
    msg: dict[str, Any] = {"jsonrpc": "2.0", "id": 1, "method": "tools/call"}
    base = {"name": "plan", "_meta": meta(ELICITING)}
    first = server.handle({**msg, "params": base})
    assert first is not None
    # the client answers the date too, unasked: the tool must still ask for it
    second = server.handle({**msg, "id": 2, "params": {**base, "inputResponses": ANSWERS, **_state(first)}})
    assert second is not None and list(second["result"]["inputRequests"]) == ["date"]
    assert done == []


def test_handshake_rounds_follow_each_other_and_the_reply_comes_after_the_last() -> None:
    server, done = two_step_server()
    handshake(server, ELICITING)
    server.take_notifications()
    assert (
        server.handle({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "plan"}}) is None
    )
    (city,) = server.take_notifications()
    assert server.handle({"jsonrpc": "2.0", "id": city["id"], "result": ACCEPT}) is None
    (date,) = server.take_notifications()
    assert date["params"]["message"] == "Which date?" and date["id"] != city["id"]
    reply = server.handle({"jsonrpc": "2.0", "id": date["id"], "result": ANSWERS["date"]})
    assert reply is not None and reply["id"] == 7 and done == [("Oslo", "2026-08-01")]
    assert server.pending_calls == {}


def test_a_cancelled_pending_call_is_forgotten_and_a_late_answer_dropped() -> None:
    server, tool = booking_server()
    handshake(server, ELICITING)
    server.take_notifications()
    assert (
        server.handle({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "book"}}) is None
    )
    (asked,) = server.take_notifications()
    server.handle({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 7}})
    assert server.pending_calls == {}
    assert server.handle({"jsonrpc": "2.0", "id": asked["id"], "result": ACCEPT}) is None
    assert tool.booked == []


def test_other_requests_are_served_while_a_call_waits() -> None:
    server, tool = booking_server()
    handshake(server, ELICITING)
    server.take_notifications()
    assert (
        server.handle({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "book"}}) is None
    )
    (asked,) = server.take_notifications()
    listed = server.handle({"jsonrpc": "2.0", "id": 8, "method": "tools/list"})
    assert listed is not None and listed["result"]["tools"][0]["name"] == "book"
    reply = server.handle({"jsonrpc": "2.0", "id": asked["id"], "result": {"action": "decline"}})
    assert reply is not None and reply["id"] == 7
    assert reply["result"]["content"][0]["text"] == "nothing booked" and tool.booked == []


@pytest.mark.parametrize(
    ("strategy", "outcome"),
    [("is_error", "isError"), ("masked", "isError"), ("collapse", "-32603")],
)
def test_a_refused_question_goes_through_the_strategy(strategy: str, outcome: str) -> None:
    server = MCPServer("s", tool_errors=strategy)
    server.add_tool("book", Booker())
    transport = handshake(server, ELICITING)
    transport.on_request = lambda r: {"jsonrpc": "2.0", "id": r["id"], "error": {"code": -1, "message": "no"}}
    reply = transport.send({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "book"}})
    assert reply is not None
    if outcome == "isError":
        assert reply["result"]["isError"] is True
    else:
        assert reply["error"]["code"] == -32603


def test_the_demo_book_tool_fails_readably_when_the_user_declines() -> None:
    from harness.fixtures.demo import build_demo_server

    server = build_demo_server(elicit=True)
    transport = handshake(server, ELICITING)
    transport.on_request = lambda r: {"jsonrpc": "2.0", "id": r["id"], "result": {"action": "decline"}}
    reply = transport.send({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "book"}})
    assert reply is not None and reply["result"]["isError"] is True
    assert reply["result"]["content"][0]["text"] == "ERROR: no city given (the user chose 'decline')"


def test_sealed_states_are_deterministic_under_a_given_key() -> None:
    one, _ = booking_server()
    other, _ = booking_server()
    a, b = one.handle(call(1, {}, ELICITING)), other.handle(call(1, {}, ELICITING))
    assert a == b  # same key, same calls: byte-identical traces


@pytest.mark.parametrize(
    ("raised", "code"),
    [(MethodNotFoundError("no forms here"), -32601), (RuntimeError("boom"), -32603)],
    ids=["an RPCError keeps its code", "anything else is -32603"],
)
def test_a_raising_on_request_handler_becomes_an_error_answer(raised: Exception, code: int) -> None:
    server, tool = booking_server()
    transport = handshake(server, ELICITING)
    answers: list[dict[str, Any]] = []
    tap_server = server.handle

    def watch(message: dict[str, Any]) -> dict[str, Any] | None:
        if "method" not in message:
            answers.append(message)
        return tap_server(message)

    server.handle = watch  # type: ignore[method-assign]

    def handler(request: dict[str, Any]) -> dict[str, Any]:
        raise raised

    transport.on_request = handler
    reply = transport.send({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "book"}})
    assert answers[0]["error"]["code"] == code
    assert reply is not None and reply["result"]["isError"] is True and tool.booked == []
