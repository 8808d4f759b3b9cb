"""The handshake gate: everything that decides whether a method may run lives here.

Rules (reference, "the stateful handshake and its invariant"):

1. ``initialize`` is the first request. Answering it moves NEW -> INITIALIZING.
2. Only the ``notifications/initialized`` notification moves INITIALIZING -> READY.
3. Until READY, every request other than ``initialize`` and ``ping`` is rejected
   with -32600 "server not initialized" -- including a tools/list sent between
   steps 1 and 2. ``ping`` answers ``{}`` in every state (spec: at any time).
4. A second ``initialize`` is rejected with -32600: capabilities are negotiated once.
5. Notifications never get a reply; before READY they change nothing but rule 2.

This module knows nothing of tools or transports. The gate is a table, not
branches, so that tests and docs can be generated from the same data.
"""

from __future__ import annotations

import enum

from harness.protocol.errors import InvalidRequest


class State(enum.Enum):
    """Where a server session is in the lifecycle."""

    NEW = "new"
    INITIALIZING = "initializing"
    READY = "ready"

    # Members are singletons, so identity hashing is exact; Enum's own __hash__ is
    # Python code, and the gate below hashes a state on every request.
    __hash__ = object.__hash__


INITIALIZE = "initialize"
PING = "ping"
INITIALIZED = "notifications/initialized"
OTHER = "*"
"""The gate's key for every method a row does not name."""

NOT_INITIALIZED = "server not initialized"
ALREADY_INITIALIZED = "server already initialized"

REQUEST_GATE: dict[tuple[State, str], str | None] = {
    # (state, method or "*") -> None to allow, else the -32600 message to reject with
    (State.NEW, INITIALIZE): None,
    (State.NEW, PING): None,
    (State.NEW, OTHER): NOT_INITIALIZED,
    (State.INITIALIZING, INITIALIZE): ALREADY_INITIALIZED,
    (State.INITIALIZING, PING): None,
    (State.INITIALIZING, OTHER): NOT_INITIALIZED,
    (State.READY, INITIALIZE): ALREADY_INITIALIZED,
    (State.READY, PING): None,
    (State.READY, OTHER): None,
}
"""Which requests each state admits."""

TRANSITIONS: dict[tuple[State, str], State] = {
    (State.NEW, INITIALIZE): State.INITIALIZING,  # taken once initialize has been answered
    (State.INITIALIZING, INITIALIZED): State.READY,
}
"""The only two state changes there are."""


GATE_ROWS: dict[State, dict[str, str | None]] = {
    state: {method: rule for (s, method), rule in REQUEST_GATE.items() if s is state} for state in State
}
"""REQUEST_GATE regrouped by state, so a check builds no key tuple (it runs on every request)."""


def check_request(state: State, method: str) -> None:
    """Raise -32600 if ``method`` may not be requested in ``state``."""
    row = GATE_ROWS[state]
    rejection = row[method] if method in row else row[OTHER]
    if rejection is not None:
        raise InvalidRequest(rejection)


def after(state: State, method: str) -> State:
    """The state after ``method`` (request answered, or notification received)."""
    return TRANSITIONS.get((state, method), state)
