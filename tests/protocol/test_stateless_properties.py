"""Property tests, stateless era: an enveloped request gets one valid reply (none: a stream stays open).

Requests carry ``params._meta`` with the protocol-version key and random other
envelope fields, methods, params, ``inputResponses`` and ``requestState``; the
server is the demo lab with ``book`` (the tool that asks). Every reply passes
the checker against the 2026-07-28 models (``ClientServerPair.text``), and a
stateless request never changes the handshake state.
"""

from __future__ import annotations

import json
from typing import Any

from helpers.pair import ClientServerPair
from hypothesis import given
from hypothesis import strategies as st

from harness.fixtures.demo import build_demo_server
from harness.protocol import STRATEGIES
from harness.protocol.lifecycle import State
from harness.protocol.versions import (
    META_CLIENT_CAPABILITIES,
    META_CLIENT_INFO,
    META_PROTOCOL_VERSION,
    STATELESS_VERSION,
)

SAFE_STRATEGIES = [s for s in STRATEGIES if s != "escape"]

scalars = st.none() | st.booleans() | st.integers() | st.text(max_size=6)
json_values = st.recursive(
    scalars,
    lambda kids: st.lists(kids, max_size=3) | st.dictionaries(st.text(max_size=6), kids, max_size=3),
    max_leaves=8,
)

METHODS = [
    "server/discover",
    "tools/list",
    "tools/call",
    "resources/list",
    "resources/templates/list",
    "resources/read",
    "prompts/list",
    "prompts/get",
    "completion/complete",
    "subscriptions/listen",
    "ping",
    "logging/setLevel",
    "resources/subscribe",
    "initialize",
    "nope",
]

meta: st.SearchStrategy[dict[str, Any]] = st.fixed_dictionaries(
    {
        META_PROTOCOL_VERSION: st.sampled_from([STATELESS_VERSION] * 4 + ["2025-11-25", "2027-01-01"])
        | scalars
    },
    optional={
        META_CLIENT_CAPABILITIES: st.sampled_from([{}, {"elicitation": {}}]) | json_values,
        META_CLIENT_INFO: st.just({"name": "p", "version": "0"}) | json_values,
        "progressToken": st.integers(0, 3),
    },
)

answer = (
    st.sampled_from([{"action": "accept", "content": {"city": "Oslo"}}, {"action": "decline"}]) | json_values
)

params = st.fixed_dictionaries(
    {"_meta": meta},
    optional={
        "name": st.sampled_from(["add", "weather", "book", "delete_db", "greet", "nope"]) | scalars,
        "arguments": st.fixed_dictionaries(
            {},
            optional={
                "x": scalars,
                "y": scalars,
                "city": st.sampled_from(["Oslo", "Atlantis", ""]) | scalars,
            },
        )
        | json_values,
        "uri": st.sampled_from(["lab://readme", "lab://nope"]) | scalars,
        "inputResponses": st.dictionaries(st.sampled_from(["city", "x"]), answer, max_size=2) | json_values,
        "requestState": st.text(max_size=20) | st.just("s1.e30.AAAA") | scalars,
        "notifications": st.fixed_dictionaries({}, optional={"toolsListChanged": st.booleans()})
        | json_values,
    },
)

requests = st.fixed_dictionaries(
    {
        "jsonrpc": st.just("2.0"),
        "id": st.integers(0, 20) | st.text(max_size=3),
        "method": st.sampled_from(METHODS),
        "params": params,
    }
)


def _check(pair: ClientServerPair, message: dict[str, Any]) -> None:
    reply = pair.text(json.dumps(message))  # validated against the models of the request's era
    if reply is None:
        assert message["method"] == "subscriptions/listen"  # an open stream answers later
        return
    assert reply["id"] == message["id"] and ("result" in reply) != ("error" in reply)


@given(script=st.lists(requests, min_size=1, max_size=6), strategy=st.sampled_from(SAFE_STRATEGIES))
def test_any_enveloped_requests_get_one_valid_reply_and_leave_the_session_alone(
    script: list[dict[str, Any]], strategy: str
) -> None:
    pair = ClientServerPair(build_demo_server(strategy, elicit=True), handshake=False)
    seen_ids: set[tuple[type, Any]] = set()
    for message in script:
        key = (type(message["id"]), message["id"])
        if key in seen_ids:
            continue  # ids are not reused while a request (a listen stream) may be open
        seen_ids.add(key)
        _check(pair, message)
        assert isinstance(pair.notifications, list)  # drained: every event passes the checker too
    assert pair.server.state is State.NEW and pair.server.protocol_version is None


@given(retry=params)
def test_a_retry_with_anything_echoed_never_runs_book_on_forged_state(retry: dict[str, Any]) -> None:
    pair = ClientServerPair(build_demo_server(elicit=True), handshake=False)
    env = {META_PROTOCOL_VERSION: STATELESS_VERSION, META_CLIENT_CAPABILITIES: {"elicitation": {}}}
    first = pair.text(
        json.dumps(
            {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "book", "_meta": env}}
        )
    )
    assert first is not None and first["result"]["resultType"] == "input_required"
    forged = {**retry, "name": "book", "arguments": {}}
    reply = pair.text(json.dumps({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": forged}))
    assert reply is not None
    if "result" in reply and reply["result"].get("resultType") == "complete":
        # only a state this server issued, for this call, can carry the answer in
        assert forged.get("requestState") == first["result"]["requestState"]
