"""The schema checker itself: it must reject what a real client would, or it proves nothing."""

from __future__ import annotations

from typing import Any

import pytest

from helpers.mcp_schema import SchemaViolation, WireChecker, validate_server_message

TOOL = {"name": "add", "inputSchema": {"type": "object", "properties": {}}}
INIT = {
    "protocolVersion": "2025-06-18",
    "capabilities": {"tools": {"listChanged": True}},
    "serverInfo": {"name": "s", "version": "1"},
}


def ok(result: dict[str, Any], id: Any = 1) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": id, "result": result}


BAD: list[tuple[str, dict[str, Any], str | None]] = [
    ("bool id", ok({}, id=True), "ping"),
    ("float id", ok({}, id=1.0), "ping"),
    ("null id on a result", ok({}, id=None), "ping"),
    ("result and error", {**ok({}), "error": {"code": -32603, "message": "x"}}, None),
    ("neither result nor error", {"jsonrpc": "2.0", "id": 1}, None),
    ("wrong jsonrpc", {"jsonrpc": "1.0", "id": 1, "result": {}}, None),
    ("stray envelope key", {**ok({}), "extra": 1}, None),
    ("NaN is not JSON", ok({"x": float("nan")}), "ping"),
    ("error code not int", {"jsonrpc": "2.0", "id": 1, "error": {"code": "x", "message": "m"}}, None),
    ("error code bool", {"jsonrpc": "2.0", "id": 1, "error": {"code": True, "message": "m"}}, None),
    ("error without message", {"jsonrpc": "2.0", "id": 1, "error": {"code": -32600}}, None),
    ("tool without inputSchema", ok({"tools": [{"name": "add"}]}), "tools/list"),
    ("call result without content", ok({"isError": True}), "tools/call"),
    (
        "initialize without serverInfo",
        ok({"protocolVersion": "2025-06-18", "capabilities": {}}),
        "initialize",
    ),
    (
        "initialize without capabilities",
        ok({k: v for k, v in INIT.items() if k != "capabilities"}),
        "initialize",
    ),
    ("content block without type", ok({"content": [{"text": "5"}]}), "tools/call"),
    ("read result without contents", ok({}), "resources/read"),
    (
        "prompt message without role",
        ok({"messages": [{"content": {"type": "text", "text": "hi"}}]}),
        "prompts/get",
    ),
    ("result for a method we do not implement", ok({}), "sampling/createMessage"),
    (
        "notification with an id",
        {"jsonrpc": "2.0", "id": 3, "method": "notifications/tools/list_changed"},
        None,
    ),
    ("unknown notification", {"jsonrpc": "2.0", "method": "notifications/nope"}, None),
]


@pytest.mark.parametrize(("message", "method"), [(m, meth) for _, m, meth in BAD], ids=[r[0] for r in BAD])
def test_checker_rejects(message: dict[str, Any], method: str | None) -> None:
    with pytest.raises(SchemaViolation):
        validate_server_message(message, method=method, version="2025-06-18")


GOOD: list[tuple[str, dict[str, Any], str | None]] = [
    ("ping empty result", ok({}), "ping"),
    ("string id", ok({}, id="a"), "ping"),
    ("initialize", ok(INIT), "initialize"),
    ("tools list", ok({"tools": [TOOL]}), "tools/list"),
    (
        "tool error result",
        ok({"content": [{"type": "text", "text": "ERROR: x"}], "isError": True}),
        "tools/call",
    ),
    ("error with null id", {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "m"}}, None),
    ("list_changed", {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}, None),
]


@pytest.mark.parametrize(("message", "method"), [(m, meth) for _, m, meth in GOOD], ids=[r[0] for r in GOOD])
def test_checker_accepts(message: dict[str, Any], method: str | None) -> None:
    validate_server_message(message, method=method, version="2025-06-18")


def test_checker_rejects_a_reply_to_no_request() -> None:
    checker = WireChecker()
    with pytest.raises(SchemaViolation, match="no pending request"):
        checker.server_sent(ok({}, id=7))


def test_checker_rejects_a_second_reply() -> None:
    checker = WireChecker()
    checker.client_sent({"jsonrpc": "2.0", "id": 1, "method": "ping"})
    checker.server_sent(ok({}))
    with pytest.raises(SchemaViolation, match="second reply"):
        checker.server_sent(ok({}))


def test_checker_tells_integer_and_string_ids_apart() -> None:
    checker = WireChecker()
    checker.client_sent({"jsonrpc": "2.0", "id": 1, "method": "ping"})
    with pytest.raises(SchemaViolation, match="no pending request"):
        checker.server_sent(ok({}, id="1"))


def test_checker_learns_the_negotiated_version_and_checks_results_by_method() -> None:
    checker = WireChecker()
    checker.client_sent({"jsonrpc": "2.0", "id": 1, "method": "initialize"})
    checker.server_sent(ok(INIT))
    assert checker.version == "2025-06-18"
    checker.client_sent({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
    with pytest.raises(SchemaViolation, match="ListToolsResult"):
        checker.server_sent(ok({"tools": [{"name": "x"}]}, id=2))
