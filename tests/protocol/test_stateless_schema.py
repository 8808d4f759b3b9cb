"""The stateless-era checks of the schema helper must reject what a 2026-07-28 client would."""

from __future__ import annotations

from typing import Any

import pytest
from helpers.mcp_schema import SchemaViolation, WireChecker

from harness.protocol.versions import META_CLIENT_CAPABILITIES, META_PROTOCOL_VERSION, STATELESS_VERSION

META = {META_PROTOCOL_VERSION: STATELESS_VERSION, META_CLIENT_CAPABILITIES: {}}
TOOL = {"name": "add", "inputSchema": {"type": "object", "properties": {}}}
HINTS = {"ttlMs": 0, "cacheScope": "private"}


def ok(result: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": 1, "result": result}


BAD: list[tuple[str, str, dict[str, Any]]] = [
    ("no resultType", "tools/call", ok({"content": []})),
    ("unknown resultType", "tools/call", ok({"content": [], "resultType": "done"})),
    (
        "list without ttlMs",
        "tools/list",
        ok({"tools": [TOOL], "resultType": "complete", "cacheScope": "private"}),
    ),
    (
        "bad cacheScope",
        "tools/list",
        ok({"tools": [TOOL], "resultType": "complete", "ttlMs": 0, "cacheScope": "x"}),
    ),
    ("input_required on tools/list", "tools/list", ok({"resultType": "input_required", "requestState": "s"})),
    ("input_required with nothing", "tools/call", ok({"resultType": "input_required"})),
    (
        "input request of an unknown method",
        "tools/call",
        ok({"resultType": "input_required", "inputRequests": {"a": {"method": "ping"}}, "requestState": "s"}),
    ),
    (
        "discover without versions",
        "server/discover",
        ok({"capabilities": {}, "resultType": "complete", **HINTS}),
    ),
    (
        "-32002 in the stateless era",
        "resources/read",
        {"jsonrpc": "2.0", "id": 1, "error": {"code": -32002, "message": "x"}},
    ),
    (
        "-32022 without data",
        "tools/list",
        {"jsonrpc": "2.0", "id": 1, "error": {"code": -32022, "message": "x"}},
    ),
    ("ping has no result any more", "ping", ok({"resultType": "complete"})),
]


@pytest.mark.parametrize(("method", "reply"), [(m, r) for _, m, r in BAD], ids=[n for n, _, _ in BAD])
def test_the_checker_rejects_a_bad_stateless_reply(method: str, reply: dict[str, Any]) -> None:
    checker = WireChecker()
    checker.client_sent({"jsonrpc": "2.0", "id": 1, "method": method, "params": {"_meta": META}})
    with pytest.raises(SchemaViolation):
        checker.server_sent(reply)


def test_the_checker_rejects_a_server_request_in_the_stateless_era() -> None:
    checker = WireChecker()
    event = {
        "jsonrpc": "2.0",
        "id": "s",
        "method": "elicitation/create",
        "params": {"_meta": {"io.modelcontextprotocol/subscriptionId": 1}},
    }
    with pytest.raises(SchemaViolation):
        checker.server_sent(event)


def test_the_checker_accepts_a_good_input_required_result() -> None:
    checker = WireChecker()
    checker.client_sent(
        {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "a", "_meta": META}}
    )
    request = {"method": "roots/list"}
    assert (
        checker.server_sent(ok({"resultType": "input_required", "inputRequests": {"r": request}})) == "result"
    )


def test_the_checker_rejects_a_malformed_handshake_server_request() -> None:
    checker = WireChecker()
    with pytest.raises(SchemaViolation):
        checker.server_sent({"jsonrpc": "2.0", "id": "s2c-1", "method": "elicitation/create", "params": {}})
