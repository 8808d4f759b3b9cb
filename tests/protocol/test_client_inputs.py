"""MCPClient answering a server's input requests: MRTR retries (stateless) and on_request (handshake).

Stateless era: an InputRequiredResult is answered through ``input_handler`` and the same
method is retried with ``inputResponses`` and the echoed ``requestState``, round after
round, up to ``max_input_rounds``. Handshake era: the transport's ``on_request`` is the
client's :meth:`~harness.protocol.MCPClient.answer_server_request`, tested here directly
(a table, and hypothesis: always one valid response with the request's id) and over stdio
against a small peer that asks mid-call.
"""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.protocol import MCPClient, RPCError
from harness.protocol.client import InputRoundsExceeded
from harness.protocol.errors import TransportError
from harness.protocol.messages import check_response
from harness.transports import StdioTransport

CONFIRM = {
    "method": "elicitation/create",
    "params": {"message": "Sure?", "requestedSchema": {"type": "object"}},
}
ROOTS = {"method": "roots/list"}


class AskingServer:
    """A stateless peer whose ``tools/call`` asks ``rounds`` times before it answers.

    Round k asks ``q<k>`` (plus ``roots`` on the first round when ``with_roots``); its
    ``requestState`` is ``s<k>``. The final answer lists what the client sent back.
    """

    def __init__(self, rounds: int, *, with_roots: bool = False, state_only: bool = False) -> None:
        self.rounds, self.with_roots, self.state_only = rounds, with_roots, state_only
        self.sent: list[dict[str, Any]] = []

    def send(self, message: dict[str, Any]) -> dict[str, Any] | None:
        self.sent.append(message)
        params = message["params"]
        asked = len(self.sent) - 1
        if asked < self.rounds:
            result: dict[str, Any] = {"resultType": "input_required", "requestState": f"s{asked + 1}"}
            if not self.state_only:
                result["inputRequests"] = {f"q{asked + 1}": CONFIRM}
                if self.with_roots and asked == 0:
                    result["inputRequests"]["roots"] = ROOTS
        else:
            text = json.dumps(params.get("inputResponses"), sort_keys=True)
            result = {"content": [{"type": "text", "text": text}], "isError": False, "resultType": "complete"}
        return {"jsonrpc": "2.0", "id": message["id"], "result": result}

    def take_notifications(self) -> list[dict[str, Any]]:
        return []

    def close(self) -> None:
        pass


class Handler:
    """Answers elicitation with accept/confirm and roots with one root; records each question."""

    def __init__(self) -> None:
        self.asked: list[str] = []

    def __call__(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        self.asked.append(method)
        if method == "roots/list":
            return {"roots": [{"uri": "file:///work"}]}
        return {"action": "accept", "content": {"confirm": True}}


def mrtr_client(server: AskingServer, **kwargs: Any) -> tuple[MCPClient, Handler]:
    handler = Handler()
    return MCPClient(server, mode="2026-07-28", input_handler=handler, **kwargs), handler


# -- MRTR --------------------------------------------------------------------------------------


def test_one_round_retries_the_same_call_with_the_answer_and_the_echoed_state() -> None:
    server = AskingServer(1)
    client, handler = mrtr_client(server)
    result = client.call_tool("delete", {"path": "/a"})
    assert result["resultType"] == "complete"
    first, retry = (m["params"] for m in server.sent)
    assert retry["name"] == first["name"] == "delete" and retry["arguments"] == {"path": "/a"}
    assert retry["inputResponses"] == {"q1": {"action": "accept", "content": {"confirm": True}}}
    assert retry["requestState"] == "s1"
    assert retry["_meta"] == first["_meta"]
    assert server.sent[0]["id"] != server.sent[1]["id"]  # a retry is a new request
    assert handler.asked == ["elicitation/create"] and client.input_rounds == 1


def test_several_rounds_each_carry_only_that_rounds_answers_and_state() -> None:
    server = AskingServer(3)
    client, _ = mrtr_client(server)
    client.call_tool("delete", {"path": "/a"})
    retries = [m["params"] for m in server.sent[1:]]
    assert [sorted(r["inputResponses"]) for r in retries] == [["q1"], ["q2"], ["q3"]]
    assert [r["requestState"] for r in retries] == ["s1", "s2", "s3"]
    assert client.input_rounds == 3


def test_several_questions_in_one_round_are_all_answered() -> None:
    server = AskingServer(1, with_roots=True)
    client, handler = mrtr_client(server)
    client.call_tool("delete", {})
    answers = server.sent[1]["params"]["inputResponses"]
    assert answers["roots"] == {"roots": [{"uri": "file:///work"}]}
    assert sorted(handler.asked) == ["elicitation/create", "roots/list"]


def test_a_state_only_result_is_retried_with_the_state_and_no_answers() -> None:
    server = AskingServer(2, state_only=True)
    client, handler = mrtr_client(server)
    client.call_tool("slow", {})
    assert [m["params"].get("requestState") for m in server.sent] == [None, "s1", "s2"]
    assert all("inputResponses" not in m["params"] for m in server.sent)
    assert handler.asked == []


@pytest.mark.parametrize("bound", [1, 3])
def test_past_the_round_bound_the_client_stops_with_a_clear_error(bound: int) -> None:
    server = AskingServer(bound + 1)
    client, _ = mrtr_client(server, max_input_rounds=bound)
    with pytest.raises(InputRoundsExceeded, match=f"after {bound} rounds"):
        client.call_tool("delete", {})
    assert len(server.sent) == bound + 1  # the first call and `bound` retries, no more


def test_the_default_bound_is_ten_rounds() -> None:
    client, _ = mrtr_client(AskingServer(10))
    client.call_tool("delete", {})
    with pytest.raises(InputRoundsExceeded):
        mrtr_client(AskingServer(11))[0].call_tool("delete", {})
    assert client.input_rounds == 10


def test_without_a_handler_the_input_required_result_is_returned() -> None:
    server = AskingServer(1)
    result = MCPClient(server, mode="2026-07-28").call_tool("delete", {})
    assert result["resultType"] == "input_required" and len(server.sent) == 1


def test_a_question_for_an_undeclared_capability_is_refused_locally() -> None:
    server = AskingServer(1, with_roots=True)
    client = MCPClient(
        server, mode="2026-07-28", input_handler=Handler(), input_methods=["elicitation/create"]
    )
    with pytest.raises(RPCError) as info:
        client.call_tool("delete", {})
    assert info.value.code == -32601 and "roots/list" in info.value.message
    assert len(server.sent) == 1


@pytest.mark.parametrize(
    "result",
    [
        {"resultType": "input_required"},
        {"resultType": "input_required", "inputRequests": {}},
        {"resultType": "input_required", "inputRequests": ["not", "a", "map"], "requestState": "s"},
        {"resultType": "input_required", "inputRequests": {"q": "not a request"}},
    ],
    ids=[
        "neither requests nor state",
        "empty requests, no state",
        "requests not a map",
        "a request not an object",
    ],
)
def test_a_malformed_input_required_result_is_a_transport_error(result: dict[str, Any]) -> None:
    class Broken(AskingServer):
        def send(self, message: dict[str, Any]) -> dict[str, Any] | None:
            self.sent.append(message)
            return {"jsonrpc": "2.0", "id": message["id"], "result": result}

    with pytest.raises(TransportError):
        mrtr_client(Broken(0))[0].call_tool("delete", {})


# -- on_request (handshake era) ------------------------------------------------------------------


def refusing(method: str, params: dict[str, Any]) -> dict[str, Any]:
    raise RPCError(-1, "user declined to share")


def crashing(method: str, params: dict[str, Any]) -> dict[str, Any]:
    raise KeyError("oops")


def no_object(method: str, params: dict[str, Any]) -> dict[str, Any]:
    return [1, 2]  # type: ignore[return-value]


ON_REQUEST = [
    ("ping", Handler(), None, "result", {}),
    ("elicitation/create", Handler(), None, "result", {"action": "accept", "content": {"confirm": True}}),
    ("roots/list", Handler(), ["elicitation/create"], "error", -32601),
    ("sampling/createMessage", None, None, "error", -32601),
    ("tools/call", Handler(), None, "error", -32601),
    ("elicitation/create", refusing, None, "error", -1),
    ("elicitation/create", crashing, None, "error", -32603),
    ("elicitation/create", no_object, None, "error", -32603),
]


@pytest.mark.parametrize(
    ("method", "handler", "methods", "kind", "expected"),
    ON_REQUEST,
    ids=[
        "ping answered with {}",
        "a declared method gets the handler's result",
        "an undeclared method is -32601",
        "no handler: -32601",
        "not an input method: -32601",
        "a handler's RPCError keeps its code",
        "a handler that raises is -32603",
        "a handler returning no object is -32603",
    ],
)
def test_answer_server_request(method: str, handler: Any, methods: Any, kind: str, expected: Any) -> None:
    client = MCPClient(AskingServer(0), input_handler=handler, input_methods=methods)
    reply = client.answer_server_request({"jsonrpc": "2.0", "id": "s-1", "method": method, "params": {}})
    check_response(reply)
    assert reply["id"] == "s-1"
    assert (reply["result"] if kind == "result" else reply["error"]["code"]) == expected


def test_a_client_with_a_handler_installs_itself_as_the_transports_on_request() -> None:
    class WithHook(AskingServer):
        on_request: Any = None

    hooked, plain = WithHook(0), WithHook(0)
    client = MCPClient(hooked, input_handler=Handler())
    MCPClient(plain)
    assert hooked.on_request == client.answer_server_request
    assert plain.on_request is None  # without a handler the transport's default stays


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=8,
)


@given(
    rid=st.integers() | st.text(max_size=8),
    method=st.sampled_from(["ping", "elicitation/create", "roots/list", "sampling/createMessage", "x"])
    | st.text(max_size=10),
    params=json_values,
)
def test_every_server_request_gets_exactly_one_valid_response_with_its_id(
    rid: Any, method: str, params: Any
) -> None:
    client = MCPClient(AskingServer(0), input_handler=Handler())
    reply = client.answer_server_request({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
    check_response(reply)
    assert reply["id"] == rid and ("result" in reply) != ("error" in reply)


# -- over stdio: a peer that asks in the middle of a call -------------------------------------

PEER = textwrap.dedent(
    """
    import json, sys
    def write(m):
        sys.stdout.write(json.dumps(m) + "\\n"); sys.stdout.flush()
    for line in sys.stdin:
        m = json.loads(line)
        if m.get("method") == "tools/call":
            write({"jsonrpc": "2.0", "id": "srv-1", "method": "elicitation/create",
                   "params": {"message": "Sure?", "requestedSchema": {"type": "object"}}})
            answer = json.loads(sys.stdin.readline())
            write({"jsonrpc": "2.0", "id": m["id"], "result": {"content": [
                {"type": "text", "text": json.dumps(answer, sort_keys=True)}], "isError": False}})
    """
)


@pytest.fixture
def peer(tmp_path: Path) -> list[str]:
    script = tmp_path / "asking_peer.py"
    script.write_text(PEER)
    return [sys.executable, str(script)]


@pytest.mark.parametrize(
    ("handler", "member", "expected"),
    [
        (Handler(), "result", {"action": "accept", "content": {"confirm": True}}),
        (None, "error", -32601),
    ],
    ids=["the handler answers", "no handler: -32601"],
)
def test_stdio_answers_a_request_that_arrives_while_it_waits(
    peer: list[str], handler: Handler | None, member: str, expected: Any
) -> None:
    with StdioTransport(peer, timeout=20) as transport:
        client = MCPClient(transport, input_handler=handler)
        result = client.call_tool("delete", {})
    answer = json.loads(result["content"][0]["text"])  # the peer echoes the client's response
    assert answer["id"] == "srv-1"
    assert (answer[member] if member == "result" else answer[member]["code"]) == expected


def test_a_handler_returning_no_object_stops_the_mrtr_call_with_32603() -> None:
    client = MCPClient(AskingServer(1), mode="2026-07-28", input_handler=no_object)
    with pytest.raises(RPCError) as info:
        client.call_tool("delete", {})
    assert info.value.code == -32603


def test_a_handlers_rpc_error_stops_the_mrtr_call_with_its_code() -> None:
    server = AskingServer(1)
    with pytest.raises(RPCError) as info:
        MCPClient(server, mode="2026-07-28", input_handler=refusing).call_tool("delete", {})
    assert info.value.code == -1 and len(server.sent) == 1  # no retry without an answer
