"""The three message shapes and the one predicate that tells them apart (reference, first section)."""

from __future__ import annotations

from typing import Any

import pytest
from helpers.mcp_schema import validate_server_message

from harness.protocol import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    PARSE_ERROR,
    RPCError,
    error_response,
    is_notification,
    notification,
    request,
    response,
)
from harness.protocol.errors import STANDARD_CODES, InvalidRequest, MethodNotFound

SHAPES: list[tuple[str, Any, dict[str, Any]]] = [
    (
        "request carries id method and params",
        lambda: request(1, "tools/list", {"cursor": "c"}),
        {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"cursor": "c"}},
    ),
    (
        "request omits absent params",
        lambda: request("a", "ping"),
        {"jsonrpc": "2.0", "id": "a", "method": "ping"},
    ),
    (
        "notification omits the id key",
        lambda: notification("notifications/initialized"),
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
    ),
    (
        "notification keeps params",
        lambda: notification("n", {"k": 1}),
        {"jsonrpc": "2.0", "method": "n", "params": {"k": 1}},
    ),
    ("response echoes id and result", lambda: response(7, {}), {"jsonrpc": "2.0", "id": 7, "result": {}}),
    (
        "error response without data",
        lambda: error_response(7, -32601, "m"),
        {"jsonrpc": "2.0", "id": 7, "error": {"code": -32601, "message": "m"}},
    ),
    (
        "error response with data",
        lambda: error_response(None, -32002, "m", {"uri": "u"}),
        {"jsonrpc": "2.0", "id": None, "error": {"code": -32002, "message": "m", "data": {"uri": "u"}}},
    ),
]


@pytest.mark.parametrize(("build", "expected"), [(b, e) for _, b, e in SHAPES], ids=[s[0] for s in SHAPES])
def test_message_helpers_build_exact_shapes(build: Any, expected: dict[str, Any]) -> None:
    assert build() == expected


def test_notification_helper_has_no_id_key_at_all() -> None:
    assert "id" not in notification("notifications/initialized")


PREDICATE = [
    ("no id key is a notification", {"jsonrpc": "2.0", "method": "x"}, True),
    ("id null is not a notification", {"jsonrpc": "2.0", "id": None, "method": "x"}, False),
    ("integer id is a request", {"jsonrpc": "2.0", "id": 0, "method": "x"}, False),
    ("string id is a request", {"jsonrpc": "2.0", "id": "", "method": "x"}, False),
]


@pytest.mark.parametrize(
    ("message", "expected"), [(m, e) for _, m, e in PREDICATE], ids=[p[0] for p in PREDICATE]
)
def test_is_notification_is_the_absence_of_the_id_key(message: dict[str, Any], expected: bool) -> None:
    assert is_notification(message) is expected


CODES = [
    ("parse error", PARSE_ERROR, -32700),
    ("invalid request", INVALID_REQUEST, -32600),
    ("method not found", METHOD_NOT_FOUND, -32601),
    ("invalid params", INVALID_PARAMS, -32602),
    ("internal error", INTERNAL_ERROR, -32603),
]


@pytest.mark.parametrize(("constant", "value"), [(c, v) for _, c, v in CODES], ids=[c[0] for c in CODES])
def test_the_five_codes_are_the_json_rpc_values(constant: int, value: int) -> None:
    assert constant == value


def test_standard_codes_are_exactly_the_five() -> None:
    assert sorted(STANDARD_CODES) == sorted(v for _, _, v in CODES)


def test_rpc_error_carries_code_message_and_data() -> None:
    exc = RPCError(-32602, "bad", {"arg": "x"})
    assert (exc.code, exc.message, exc.data) == (-32602, "bad", {"arg": "x"})
    assert exc.to_error() == {"code": -32602, "message": "bad", "data": {"arg": "x"}}


def test_rpc_error_from_error_rebuilds_the_coded_subclass() -> None:
    exc = RPCError.from_error({"code": -32601, "message": "nope"})
    assert isinstance(exc, MethodNotFound) and exc.code == -32601 and exc.message == "nope"
    assert isinstance(RPCError.from_error({"code": -32600, "message": "x"}), InvalidRequest)
    odd = RPCError.from_error({"code": -1, "message": "custom"})
    assert type(odd) is RPCError and odd.code == -1


@pytest.mark.parametrize(
    "message",
    [
        response(1, {}),
        error_response(None, PARSE_ERROR, "x"),
        notification("notifications/tools/list_changed"),
    ],
    ids=["response", "error with null id", "list_changed"],
)
def test_helper_output_validates_against_the_official_models(message: dict[str, Any]) -> None:
    validate_server_message(message, method="ping" if "result" in message else None)
