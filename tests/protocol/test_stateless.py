"""The stateless era (2026-07-28) beside the handshake era: envelope, methods, results, listen streams.

Every message here crosses a :class:`~helpers.pair.ClientServerPair` link (no
handshake), so each reply and event is also checked against the SDK's
``mcp_types._v2026_07_28`` models by the tap.
"""

from __future__ import annotations

from typing import Any

import pytest
from helpers.pair import ClientServerPair, error_code, result_of, text_of

from harness.fixtures.demo import add_subtract, build_demo_server
from harness.protocol import MCPServer
from harness.protocol.errors import (
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    UNSUPPORTED_PROTOCOL_VERSION,
)
from harness.protocol.lifecycle import State
from harness.protocol.stateless import LOG_LEVEL, SERVER_INFO, SUBSCRIPTION_ID
from harness.protocol.strategies import STRATEGIES
from harness.protocol.versions import (
    ALL_VERSIONS,
    META_CLIENT_CAPABILITIES,
    META_CLIENT_INFO,
    META_PROTOCOL_VERSION,
    STATELESS_VERSION,
)

META: dict[str, Any] = {
    META_PROTOCOL_VERSION: STATELESS_VERSION,
    META_CLIENT_CAPABILITIES: {},
    META_CLIENT_INFO: {"name": "tests", "version": "0"},
}


def stateless(pair: ClientServerPair, id: int, method: str, **params: Any) -> dict[str, Any] | None:
    meta = params.pop("_meta", META)
    return pair.send({"jsonrpc": "2.0", "id": id, "method": method, "params": {**params, "_meta": meta}})


def fresh(server: Any = None) -> ClientServerPair:
    return ClientServerPair(server, handshake=False)


ENVELOPES: list[tuple[str, dict[str, Any], int]] = [
    ("capabilities missing", {META_PROTOCOL_VERSION: STATELESS_VERSION}, INVALID_PARAMS),
    ("version not a string", {META_PROTOCOL_VERSION: 20260728, META_CLIENT_CAPABILITIES: {}}, INVALID_PARAMS),
    ("version null", {META_PROTOCOL_VERSION: None, META_CLIENT_CAPABILITIES: {}}, INVALID_PARAMS),
    ("unknown version", {META_PROTOCOL_VERSION: "2027-01-01", META_CLIENT_CAPABILITIES: {}}, -32022),
    (
        "handshake version in _meta",
        {META_PROTOCOL_VERSION: "2025-11-25", META_CLIENT_CAPABILITIES: {}},
        -32022,
    ),
    ("capabilities not an object", {**META, META_CLIENT_CAPABILITIES: []}, INVALID_PARAMS),
    ("client info not an object", {**META, META_CLIENT_INFO: "me"}, INVALID_PARAMS),
]


@pytest.mark.parametrize(
    ("meta", "code"), [(m, c) for _, m, c in ENVELOPES], ids=[n for n, _, _ in ENVELOPES]
)
def test_a_bad_envelope_gets_the_spec_error_and_nothing_runs(meta: dict[str, Any], code: int) -> None:
    pair = fresh()
    reply = stateless(pair, 1, "tools/call", name="add", arguments={"x": 1, "y": 2}, _meta=meta)
    assert error_code(reply) == code


def test_the_unsupported_version_error_names_every_version_spoken_newest_first() -> None:
    pair = fresh()
    meta = {META_PROTOCOL_VERSION: "1900-01-01", META_CLIENT_CAPABILITIES: {}}
    reply = stateless(pair, 1, "tools/list", _meta=meta)
    assert error_code(reply) == UNSUPPORTED_PROTOCOL_VERSION
    assert reply is not None
    assert reply["error"]["data"] == {"supported": list(reversed(ALL_VERSIONS)), "requested": "1900-01-01"}


@pytest.mark.parametrize(
    "method", ["ping", "logging/setLevel", "resources/subscribe", "resources/unsubscribe"]
)
def test_methods_the_stateless_era_removed_are_not_found(method: str) -> None:
    pair = fresh()
    reply = stateless(pair, 1, method, level="info", uri="lab://readme")
    assert error_code(reply) == METHOD_NOT_FOUND


def test_server_discover_names_versions_capabilities_and_server() -> None:
    pair = fresh()
    result = result_of(stateless(pair, 1, "server/discover"))
    assert result["supportedVersions"][0] == STATELESS_VERSION
    assert set(result["supportedVersions"]) == set(ALL_VERSIONS)
    assert result["capabilities"]["tools"] == {"listChanged": True}
    assert result["_meta"][SERVER_INFO] == {"name": "harness-demo", "version": "0.1.0"}
    assert result["resultType"] == "complete"
    assert (result["ttlMs"], result["cacheScope"]) == (0, "private")


def test_a_stateless_request_needs_no_handshake_and_leaves_the_session_new() -> None:
    pair = fresh()
    result = result_of(stateless(pair, 1, "tools/call", name="add", arguments={"x": 2, "y": 3}))
    assert text_of(result) == "5" and result["resultType"] == "complete"
    assert pair.server.state is State.NEW and pair.server.protocol_version is None
    # the handshake gate still holds for a request without the envelope
    assert error_code(pair.request(2, "tools/list")) == INVALID_REQUEST


def test_stateless_requests_are_served_after_a_handshake_too_with_their_own_version() -> None:
    pair = ClientServerPair(protocol_version="2025-03-26")
    bad = result_of(stateless(pair, 10, "tools/call", name="add", arguments={"x": "a", "y": 1}))
    assert bad["isError"] is True  # SEP-1303 at the request's 2026-07-28, not the session's 2025-03-26
    assert error_code(pair.request(11, "tools/call", {"name": "add", "arguments": {"x": "a", "y": 1}})) == (
        INVALID_PARAMS
    )


def test_list_results_carry_caching_hints_the_server_was_given() -> None:
    server = build_demo_server()
    server.cache_ttl_ms, server.cache_scope = 30_000, "public"
    pair = fresh(server)
    for i, method in enumerate(["tools/list", "resources/list", "resources/templates/list", "prompts/list"]):
        result = result_of(stateless(pair, i + 1, method))
        assert (result["ttlMs"], result["cacheScope"]) == (30_000, "public"), method
    read = result_of(stateless(pair, 9, "resources/read", uri="lab://readme"))
    assert read["ttlMs"] == 30_000


def test_results_that_are_not_cacheable_carry_no_hints() -> None:
    pair = fresh()
    result = result_of(stateless(pair, 1, "prompts/get", name="greet", arguments={"name": "Ada"}))
    assert "ttlMs" not in result and result["resultType"] == "complete"


def test_an_unknown_resource_is_invalid_params_not_32002() -> None:
    pair = fresh()
    reply = stateless(pair, 1, "resources/read", uri="lab://nope")
    assert error_code(reply) == INVALID_PARAMS
    assert reply is not None and reply["error"]["data"] == {"uri": "lab://nope"}


CALLS: list[tuple[str, dict[str, Any], str]] = [
    ("unknown tool", {"name": "nope"}, "error -32601"),
    ("not allow-listed", {"name": "delete_db"}, "error -32600"),
    ("missing argument", {"name": "add", "arguments": {"x": 1}}, "isError"),
    ("wrong type", {"name": "add", "arguments": {"x": 1, "y": "2"}}, "isError"),
    ("arguments not an object", {"name": "add", "arguments": [1, 2]}, "error -32602"),
    ("name not a string", {"name": 5}, "error -32602"),
]


@pytest.mark.parametrize(("params", "outcome"), [(p, o) for _, p, o in CALLS], ids=[n for n, _, _ in CALLS])
def test_the_call_lattice_holds_in_the_stateless_era(params: dict[str, Any], outcome: str) -> None:
    pair = fresh()
    reply = stateless(pair, 1, "tools/call", **params)
    if outcome.startswith("error"):
        assert error_code(reply) == int(outcome.split()[1])
    else:
        assert result_of(reply)["isError"] is True


@pytest.mark.parametrize("strategy", [s for s in STRATEGIES if s != "escape"])
def test_each_strategy_encodes_a_raising_tool_as_in_the_handshake_era(strategy: str) -> None:
    legacy = ClientServerPair(build_demo_server(strategy)).request(
        2, "tools/call", {"name": "weather", "arguments": {"city": "Atlantis"}}
    )
    reply = stateless(
        fresh(build_demo_server(strategy)), 2, "tools/call", name="weather", arguments={"city": "Atlantis"}
    )
    assert reply is not None
    if "error" in legacy:
        assert reply["error"] == legacy["error"]
    else:
        got = dict(reply["result"])
        assert got.pop("resultType") == "complete" and SERVER_INFO in got.pop("_meta")
        assert got == legacy["result"]


def test_escape_lets_the_exception_out_in_the_stateless_era_too() -> None:
    server = build_demo_server("escape")
    message = {"name": "weather", "arguments": {"city": "Atlantis"}, "_meta": META}
    with pytest.raises(ValueError, match="no station near Atlantis"):
        server.handle({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": message})


def test_a_stateless_notification_is_never_answered() -> None:
    pair = fresh()
    note = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 9, "_meta": META}}
    assert pair.send(note) is None


# -- subscriptions/listen ---------------------------------------------------------------------


def listen(pair: ClientServerPair, id: int = 50, **wanted: Any) -> list[dict[str, Any]]:
    assert stateless(pair, id, "subscriptions/listen", notifications=wanted) is None  # the stream stays open
    return pair.notifications


def test_listen_is_acknowledged_first_with_what_the_server_honours() -> None:
    pair = fresh()
    (ack,) = listen(pair, toolsListChanged=True, promptsListChanged=True)
    assert ack["method"] == "notifications/subscriptions/acknowledged"
    assert ack["params"] == {"notifications": {"toolsListChanged": True}, "_meta": {SUBSCRIPTION_ID: 50}}


@pytest.mark.parametrize(
    "change",
    [
        pytest.param(add_subtract, id="a tool added"),
        pytest.param(lambda s: s.remove_tool("weather"), id="a tool removed"),
        pytest.param(lambda s: s.set_allowed_tools(["add"], notify=True), id="a tool revoked"),
    ],
)
def test_a_tool_list_change_reaches_a_stateless_listener(change: Any) -> None:
    pair = fresh()
    listen(pair, toolsListChanged=True)
    change(pair.server)
    (event,) = pair.notifications
    assert event == {
        "jsonrpc": "2.0",
        "method": "notifications/tools/list_changed",
        "params": {"_meta": {SUBSCRIPTION_ID: 50}},
    }


def test_events_are_a_level_trigger_not_a_queue() -> None:
    pair = fresh()
    listen(pair, toolsListChanged=True)
    pair.server.remove_tool("weather")
    pair.server.remove_tool("add")
    assert len(pair.notifications) == 1  # one undrained "refetch" is enough
    pair.server.add_tool("again", lambda: "x", notify=True)
    assert len(pair.notifications) == 1


def test_a_listener_that_did_not_ask_for_tool_events_gets_none() -> None:
    pair = fresh()
    listen(pair, resourceSubscriptions=["lab://readme"])
    pair.server.remove_tool("weather")
    assert pair.notifications == []
    pair.server.resource_updated("lab://readme")
    (event,) = pair.notifications
    assert event["params"] == {"uri": "lab://readme", "_meta": {SUBSCRIPTION_ID: 50}}


def test_a_cancelled_listen_stream_gets_no_more_events() -> None:
    pair = fresh()
    listen(pair, toolsListChanged=True)
    pair.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 50}})
    pair.server.remove_tool("weather")
    assert pair.notifications == [] and pair.server.listeners == {}


def test_closing_the_streams_sends_each_its_final_result() -> None:
    pair = fresh()
    listen(pair, toolsListChanged=True)
    pair.server.close_subscriptions()
    (end,) = pair.notifications
    assert end["id"] == 50 and end["result"]["_meta"][SUBSCRIPTION_ID] == 50
    assert end["result"]["resultType"] == "complete"


def test_a_second_stream_with_an_open_id_is_refused_and_a_bad_filter_is_invalid_params() -> None:
    pair = fresh()
    listen(pair, toolsListChanged=True)
    assert error_code(stateless(pair, 50, "subscriptions/listen", notifications={})) == INVALID_REQUEST
    assert error_code(stateless(pair, 51, "subscriptions/listen", notifications=[])) == INVALID_PARAMS


def test_handshake_listeners_and_stateless_listeners_each_get_their_own_event() -> None:
    pair = ClientServerPair()
    listen(pair, toolsListChanged=True)
    pair.server.remove_tool("weather")
    methods = [(n["method"], n.get("params")) for n in pair.notifications]
    assert methods == [
        ("notifications/tools/list_changed", None),
        ("notifications/tools/list_changed", {"_meta": {SUBSCRIPTION_ID: 50}}),
    ]


def test_a_new_session_has_no_listeners_but_shares_the_request_state_key() -> None:
    server = build_demo_server()
    pair = fresh(server)
    listen(pair, toolsListChanged=True)
    clone = server.new_session()
    assert clone.listeners == {} and clone.request_states is server.request_states


def test_a_stateless_request_logs_only_at_its_own_log_level() -> None:
    server = MCPServer("logs")

    def noisy() -> str:
        server.log("debug", "detail")
        server.log("warning", "careful")
        return "ok"

    server.add_tool("noisy", noisy)
    pair = ClientServerPair(server)  # a READY session whose setLevel would allow everything
    pair.request(2, "logging/setLevel", {"level": "debug"})
    result_of(stateless(pair, 3, "tools/call", name="noisy"))
    assert pair.notifications == []  # no logLevel in _meta: nothing for this request
    result_of(stateless(pair, 4, "tools/call", name="noisy", _meta={**META, LOG_LEVEL: "warning"}))
    assert [n["params"]["data"] for n in pair.notifications] == ["careful"]
