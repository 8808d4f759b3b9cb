"""The hot-path shortcuts answer exactly as the full checks they skip.

The server recognises a well-formed request without ``check_envelope``, skips the
tools/call lattice for a registered, allow-listed tool, accepts plainly typed
arguments without the compiled validator, shares one validator among equal
schemas and checks a tool result's JSON-ability in C before walking it. Each
test holds a shortcut against the slow path it replaces.
"""

from __future__ import annotations

import copy
import datetime
import enum
import itertools
import uuid
from typing import Any

import fastjsonschema
import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.protocol.errors import INVALID_REQUEST, METHOD_NOT_FOUND, RPCError
from harness.protocol.lifecycle import State
from harness.protocol.messages import error_response
from harness.protocol.payload import MAX_RESULT_DEPTH, _check_by_walking, check_payload
from harness.protocol.server import CALL_LATTICE, MCPServer
from harness.protocol.stateless import read_envelope
from harness.protocol.tools import Tool, _describe, compile_schema
from harness.protocol.versions import (
    META_CLIENT_CAPABILITIES,
    META_CLIENT_INFO,
    META_PROTOCOL_VERSION,
    STATELESS_VERSION,
)

TYPES = ["string", "integer", "number", "boolean", "object", "array", "null"]
_prop = st.one_of(
    st.sampled_from(TYPES).map(lambda t: {"type": t}),
    st.lists(st.sampled_from(TYPES), min_size=1, max_size=3).map(lambda ts: {"type": ts}),
    st.just({}),
    st.just({"description": "free"}),
    st.sampled_from(TYPES).map(lambda t: {"type": t, "default": 1}),
    st.sampled_from(TYPES).map(lambda t: {"type": t, "enum": [1, "a"]}),
)
_names = st.sampled_from(["a", "b", "c"])
_schemas = st.builds(
    lambda props, req, extra: {"type": "object", "properties": props, "required": req, **extra},
    st.dictionaries(_names, _prop, min_size=1),
    st.lists(_names, unique=True, max_size=2),
    st.sampled_from(
        [{}, {"additionalProperties": False}, {"additionalProperties": True}, {"additionalProperties": {}}]
    ),
)
_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=3),
    lambda inner: st.lists(inner, max_size=2) | st.dictionaries(st.text(max_size=2), inner, max_size=2),
    max_leaves=4,
)
_arguments = st.dictionaries(st.sampled_from(["a", "b", "c", "d"]), _values, max_size=4)


def full_check(tool: Tool, arguments: dict[str, Any]) -> str | None:
    """The two-step check with no shortcut: required names first, then the validator."""
    for name in tool.required:
        if name not in arguments:
            return f"missing required argument {name!r}"
    if tool._validate is not None:
        try:
            tool._validate(arguments)
        except fastjsonschema.JsonSchemaValueException as exc:
            return _describe(exc)
    return None


@given(_schemas, _arguments)
def test_the_argument_shortcut_gives_the_full_checks_verdict_and_fills_the_same_defaults(
    schema: dict[str, Any], arguments: dict[str, Any]
) -> None:
    try:
        tool = Tool("t", lambda **kw: "", schema)
    except ValueError:
        return  # a schema fastjsonschema refuses never becomes a tool
    fast, slow = copy.deepcopy(arguments), copy.deepcopy(arguments)
    assert tool.argument_problem(fast) == full_check(tool, slow)
    assert fast == slow


def test_a_bool_for_an_integer_still_reaches_the_validator() -> None:
    tool = Tool("t", lambda **kw: "", {"type": "object", "properties": {"x": {"type": "integer"}}})
    assert tool.argument_problem({"x": True}) == "argument 'x' must be integer"
    assert tool.argument_problem({"x": 2.0}) is None  # JSON Schema: 2.0 is an integer


def test_equal_schemas_share_one_compiled_validator_and_different_ones_do_not() -> None:
    schema = {"type": "object", "properties": {"x": {"type": "integer"}}}
    assert compile_schema(schema) is compile_schema(copy.deepcopy(schema))
    assert compile_schema(schema) is not compile_schema({"type": "object", "properties": {"y": {}}})


def _ready(server: MCPServer) -> MCPServer:
    server.handle(
        {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-06-18"}}
    )
    server.handle({"jsonrpc": "2.0", "method": "notifications/initialized"})
    assert server.state is State.READY
    return server


def _call(server: MCPServer, name: str) -> dict[str, Any]:
    reply = server.handle({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": name}})
    assert reply is not None
    return reply


def test_the_lattice_still_rejects_unknown_and_unlisted_tools_in_its_order() -> None:
    server = _ready(MCPServer("s", allowed_tools=["ok"]))
    server.add_tool("ok", lambda: "fine")
    server.add_tool("hidden", lambda: "never")
    assert [rule.name for rule in CALL_LATTICE] == ["unknown tool", "not allow-listed"]
    assert _call(server, "nope")["error"]["code"] == METHOD_NOT_FOUND
    assert _call(server, "hidden")["error"]["code"] == INVALID_REQUEST
    assert _call(server, "ok")["result"] == {"content": [{"type": "text", "text": "fine"}]}
    server.set_allowed_tools(None)
    assert _call(server, "hidden")["result"]["content"][0]["text"] == "never"


class _SlowDict(dict[str, Any]):
    """A dict subclass: the envelope shortcut (``type(m) is dict``) never takes it."""


_fields = st.one_of(
    st.sampled_from(["2.0", "1.0", "ping", "tools/list", "tools/call", "initialize"]),
    st.none(),
    st.booleans(),
    st.integers(-2, 2),
    st.floats(allow_nan=False),
    st.just({}),
    st.just({"name": "ok"}),
    st.just([]),
)


@given(st.dictionaries(st.sampled_from(["jsonrpc", "id", "method", "params", "result"]), _fields))
def test_the_envelope_shortcut_answers_every_shape_as_the_full_checks_do(message: dict[str, Any]) -> None:
    fast, slow = _ready(MCPServer("s")), _ready(MCPServer("s"))
    for server in (fast, slow):
        server.add_tool("ok", lambda: "fine")
    assert fast.handle(copy.deepcopy(message)) == slow.handle(_SlowDict(copy.deepcopy(message)))
    assert fast.state is slow.state


# -- tool results: check_payload's C check against the walk ---------------------------------


class _Colour(enum.Enum):
    RED = 1


class _Text(str):
    pass


class _Number(int):
    pass


_leaves = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),  # past 64 bits too, which orjson refuses and json prints
    st.floats(),  # NaN and infinities included
    st.text(),
    st.sampled_from(
        [_Colour.RED, uuid.UUID(int=7), datetime.date(2026, 1, 1), b"raw", {1, 2}, _Text("t"), _Number(3)]
    ),
)
_keys = st.one_of(st.text(max_size=3), st.integers(0, 3), st.booleans(), st.none(), st.just(_Text("k")))
_values = st.recursive(
    _leaves,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.lists(inner, max_size=4).map(tuple),
        st.dictionaries(_keys, inner, max_size=4),
    ),
    max_leaves=20,
)


def _verdict(check: Any, value: Any, max_bytes: int | None) -> tuple[str, str] | None:
    try:
        check(value, max_bytes, MAX_RESULT_DEPTH)
    except (TypeError, ValueError) as exc:
        return type(exc).__name__, str(exc)
    return None


@given(_values, st.sampled_from([None, 10, 100, 10_000]))
def test_the_result_check_gives_the_walks_verdict_and_message(value: Any, max_bytes: int | None) -> None:
    assert _verdict(check_payload, value, max_bytes) == _verdict(_check_by_walking, value, max_bytes)


def _nested(levels: int) -> list[Any]:
    value: list[Any] = []
    for _ in range(levels - 1):
        value = [value]
    return value


def test_the_result_check_keeps_the_depth_limit_at_every_level_near_it() -> None:
    # orjson stops at 254 levels, the walk at MAX_RESULT_DEPTH (256): on each side of both
    # limits the answer is the walk's, and a cycle is refused as too deep.
    for levels in range(250, MAX_RESULT_DEPTH + 3):
        value = _nested(levels)
        assert _verdict(check_payload, value, 10**6) == _verdict(_check_by_walking, value, 10**6)
    assert _verdict(check_payload, _nested(MAX_RESULT_DEPTH), 10**6) is None
    assert _verdict(check_payload, _nested(MAX_RESULT_DEPTH + 1), 10**6) is not None
    cycle: list[Any] = []
    cycle.append(cycle)
    verdict = _verdict(check_payload, {"me": cycle}, 10**6)
    assert verdict is not None and "cycle" in verdict[1]


# -- the stateless envelope: the server's shortcut against read_envelope ----------------------

_ABSENT = object()
_VERSIONS = [STATELESS_VERSION, "2025-06-18", 1, None, [STATELESS_VERSION]]
_CAPS = [_ABSENT, {}, {"sampling": {}}, None, [], "x"]
_INFOS = [_ABSENT, {"name": "c", "version": "1"}, None, [], "x", 0]


@pytest.mark.parametrize(
    ("version", "caps", "info"), list(itertools.product(_VERSIONS, _CAPS, _INFOS)), ids=lambda v: repr(v)[:12]
)
def test_the_stateless_envelope_shortcut_reads_every_meta_as_read_envelope_does(
    version: Any, caps: Any, info: Any
) -> None:
    meta = {META_PROTOCOL_VERSION: version}
    for key, value in ((META_CLIENT_CAPABILITIES, caps), (META_CLIENT_INFO, info)):
        if value is not _ABSENT:
            meta[key] = value
    request = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": copy.deepcopy(meta)}}
    reply = MCPServer("s").handle(request)
    assert reply is not None
    try:
        read_envelope(1, copy.deepcopy(meta))
    except RPCError as exc:
        assert reply == error_response(1, exc.code, exc.message, exc.data)
    else:
        assert "result" in reply and reply["result"]["resultType"] == "complete"
