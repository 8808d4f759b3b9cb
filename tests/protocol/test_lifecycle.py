"""The handshake gate (reference, "the stateful handshake and its invariant")."""

from __future__ import annotations

from typing import Any

import pytest
from helpers.pair import INIT_PARAMS, ClientServerPair, error_code, result_of

from harness.protocol import INVALID_REQUEST, METHOD_NOT_FOUND, State
from harness.protocol.lifecycle import REQUEST_GATE, TRANSITIONS


def at(state: State) -> ClientServerPair:
    """A demo pair driven by raw messages to ``state``."""
    p = ClientServerPair(handshake=False)
    if state is not State.NEW:
        result_of(p.request(100, "initialize", INIT_PARAMS))
    if state is State.READY:
        assert p.send({"jsonrpc": "2.0", "method": "notifications/initialized"}) is None
    assert p.server.state is state
    return p


CALLS: dict[str, tuple[str, dict[str, Any] | None]] = {
    "tools/list": ("tools/list", None),
    "tools/call": ("tools/call", {"name": "add", "arguments": {"x": 1, "y": 2}}),
    "resources/list": ("resources/list", None),
    "resources/read": ("resources/read", {"uri": "lab://readme"}),
    "prompts/list": ("prompts/list", None),
    "prompts/get": ("prompts/get", {"name": "greet", "arguments": {"name": "Ada"}}),
    "unknown method": ("no/such/method", None),
    "server/discover probe": ("server/discover", {}),
}

GATE: list[tuple[str, State, str, int | None]] = [
    # (rule, state, call, expected error code or None for a result)
    *[(f"{name} before initialize is -32600", State.NEW, name, INVALID_REQUEST) for name in CALLS],
    *[
        (f"{name} between initialize and initialized is -32600", State.INITIALIZING, name, INVALID_REQUEST)
        for name in CALLS
    ],
    *[
        (f"{name} when ready is served", State.READY, name, None)
        for name in CALLS
        if "unknown" not in name and "discover" not in name
    ],
    ("unknown method when ready is -32601", State.READY, "unknown method", METHOD_NOT_FOUND),
    ("server/discover when ready is -32601", State.READY, "server/discover probe", METHOD_NOT_FOUND),
]


@pytest.mark.parametrize(("state", "call", "code"), [g[1:] for g in GATE], ids=[g[0] for g in GATE])
def test_handshake_gate(state: State, call: str, code: int | None) -> None:
    p = at(state)
    method, params = CALLS[call]
    reply = p.request(1, method, params)
    if code is None:
        result_of(reply)
    else:
        assert error_code(reply) == code
        if state is not State.READY:
            assert reply["error"]["message"] == "server not initialized"


@pytest.mark.parametrize("state", list(State), ids=[f"ping answers empty when {s.value}" for s in State])
def test_ping_answers_empty_in_every_state(state: State) -> None:
    assert result_of(at(state).request("p", "ping")) == {}


@pytest.mark.parametrize(
    "state",
    [State.INITIALIZING, State.READY],
    ids=["second initialize before initialized is -32600", "second initialize when ready is -32600"],
)
def test_second_initialize_is_rejected(state: State) -> None:
    p = at(state)
    reply = p.request(2, "initialize", INIT_PARAMS)
    assert error_code(reply) == INVALID_REQUEST
    assert "already initialized" in reply["error"]["message"]
    assert p.server.state is state


def test_only_the_initialized_notification_opens_the_session() -> None:
    p = at(State.INITIALIZING)
    assert p.send({"jsonrpc": "2.0", "method": "notifications/progress", "params": {}}) is None
    assert p.server.state is State.INITIALIZING
    assert error_code(p.request(1, "tools/list")) == INVALID_REQUEST
    assert p.send({"jsonrpc": "2.0", "method": "notifications/initialized"}) is None
    result_of(p.request(2, "tools/list"))


def test_initialized_before_initialize_changes_nothing() -> None:
    p = at(State.NEW)
    assert p.send({"jsonrpc": "2.0", "method": "notifications/initialized"}) is None
    assert p.server.state is State.NEW
    assert error_code(p.request(1, "tools/list")) == INVALID_REQUEST


def test_initialized_sent_as_a_request_does_not_open_the_session() -> None:
    # with an id it is a request, not the notification: the gate refuses it
    p = at(State.INITIALIZING)
    assert error_code(p.request(5, "notifications/initialized")) == INVALID_REQUEST
    assert p.server.state is State.INITIALIZING


def test_a_failed_initialize_leaves_the_session_new() -> None:
    p = at(State.NEW)
    assert error_code(p.request(1, "initialize", {"capabilities": {}})) == -32602
    assert p.server.state is State.NEW
    result_of(p.request(2, "initialize", INIT_PARAMS))


def test_gate_table_covers_every_state() -> None:
    # the table has a default row for every state, so no (state, method) pair is unhandled
    assert {state for state, method in REQUEST_GATE if method == "*"} == set(State)
    assert TRANSITIONS == {
        (State.NEW, "initialize"): State.INITIALIZING,
        (State.INITIALIZING, "notifications/initialized"): State.READY,
    }
