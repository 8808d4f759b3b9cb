"""Hostile wire input into ``MCPServer.handle_text``: 100,000 inputs, zero crashes.

The seeded stream (tests/helpers/mutations.py) carries most of the inputs, the
hypothesis tests the rest. For every input: no exception leaves handle_text,
exactly one valid reply for a request (id echoed, or null when it cannot be
read; result XOR error), none for a notification or a response; and every
session still answers ``add`` correctly afterwards. Limits: a message over
``max_message_bytes`` gets -32600, nesting past the parser's reach -32700.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

import pytest
from helpers.mutations import BASE_MESSAGES, HUGE_IDS, METHODS, check_reply, expected_reply, seeded_stream
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.fixtures.demo import build_demo_server
from harness.protocol import (
    INVALID_REQUEST,
    LATEST_VERSION,
    PARSE_ERROR,
    MCPServer,
    State,
)
from harness.protocol.server import DEFAULT_MAX_MESSAGE_BYTES

SEEDED_INPUTS = 99_000
HYPOTHESIS_INPUTS = 4 * 250
"""The two shares of the 100,000 inputs: the seeded stream, and four hypothesis tests."""
SESSION_LENGTH = 400
"""Inputs per server session in the seeded stream; then the session must still work."""
FUZZ_STRATEGIES = ("is_error", "masked", "collapse")
"""``escape`` lets a tool's exception out by design (the naive server), so it is not fuzzed."""


def echo(**arguments: Any) -> dict[str, Any]:
    """Hands its arguments back as structured content: junk in arguments reaches a result."""
    return {"content": [{"type": "text", "text": "echo"}], "structuredContent": arguments}


def fuzz_server(strategy: str = "is_error", *, handshake: bool = True) -> MCPServer:
    server = build_demo_server(strategy)
    server.add_tool("echo", echo, {"type": "object"}, "Echo the arguments.")
    server.set_allowed_tools([*(server.allowed_tools or ()), "echo"])
    if handshake:
        init = {
            "protocolVersion": LATEST_VERSION,
            "capabilities": {},
            "clientInfo": {"name": "f", "version": "0"},
        }
        server.handle({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": init})
        server.handle({"jsonrpc": "2.0", "method": "notifications/initialized"})
    return server


def assert_still_usable(server: MCPServer) -> None:
    """Finish the handshake if the fuzz left it half done, then ``add`` must answer 5."""
    if server.state is State.NEW:
        init = {
            "protocolVersion": LATEST_VERSION,
            "capabilities": {},
            "clientInfo": {"name": "f", "version": "0"},
        }
        assert "result" in json.loads(
            server.handle_text(
                json.dumps({"jsonrpc": "2.0", "id": "init", "method": "initialize", "params": init})
            )
            or "{}"
        )
    if server.state is State.INITIALIZING:
        assert server.handle_text('{"jsonrpc": "2.0", "method": "notifications/initialized"}') is None
    call = {
        "jsonrpc": "2.0",
        "id": "after",
        "method": "tools/call",
        "params": {"name": "add", "arguments": {"x": 2, "y": 3}},
    }
    reply = json.loads(server.handle_text(json.dumps(call)) or "null")
    assert reply == {"jsonrpc": "2.0", "id": "after", "result": {"content": [{"type": "text", "text": "5"}]}}
    server.take_notifications()


def feed(server: MCPServer, data: bytes | str, where: str) -> dict[str, Any] | None:
    """One input: no exception may leave handle_text, and the reply must be the one due."""
    due, rid = expected_reply(data, server.max_message_bytes)
    try:
        out = server.handle_text(data)
    except BaseException as exc:  # the property under test: nothing escapes
        raise AssertionError(f"{where}: handle_text raised {exc!r} on {data[:300]!r}") from exc
    try:
        return check_reply(out, due, rid)
    except AssertionError as exc:
        raise AssertionError(f"{where}: {exc} (input {data[:300]!r})") from None


def test_the_share_of_each_fuzzer_adds_up_to_100_000_inputs() -> None:
    assert SEEDED_INPUTS + HYPOTHESIS_INPUTS == 100_000


def test_a_seeded_stream_of_mutated_messages_never_crashes_and_gets_one_valid_reply_per_request() -> None:
    codes: Counter[str] = Counter()
    server = fuzz_server()
    for i, data in enumerate(seeded_stream(seed=7, count=SEEDED_INPUTS)):
        if i % SESSION_LENGTH == 0:
            assert_still_usable(server)
            session = i // SESSION_LENGTH
            server = fuzz_server(FUZZ_STRATEGIES[session % 3], handshake=session % 4 != 3)
        reply = feed(server, data, f"seeded input {i} (seed 7)")
        server.take_notifications()
        if reply is None:
            codes["no reply"] += 1
        elif "error" in reply:
            codes[str(reply["error"]["code"])] += 1
        else:
            codes["isError" if reply["result"].get("isError") else "result"] += 1
    assert_still_usable(server)
    # The stream must reach every tier, or it proves little: parse, envelope, dispatch, tools.
    for outcome in ("no reply", "result", "isError", "-32700", "-32600", "-32601", "-32602"):
        assert codes[outcome] > 0, f"the stream never produced {outcome}: {codes}"


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=6,
)
IDS = st.sampled_from(HUGE_IDS) | st.integers() | st.text(max_size=20) | JSON
MESSAGE_KEYS = st.fixed_dictionaries(
    {},
    optional={
        "jsonrpc": st.sampled_from(["2.0", "2.0", "2.0", "1.0", 2.0]) | JSON,
        "id": IDS,
        "method": st.sampled_from(METHODS) | st.text(max_size=20),
        "params": st.fixed_dictionaries(
            {},
            optional={
                "name": st.sampled_from(["add", "weather", "delete_db", "echo", "nope"]) | JSON,
                "arguments": st.dictionaries(st.sampled_from(["x", "y", "city", "value"]), JSON) | JSON,
                "uri": st.sampled_from(["lab://readme", "x"]) | JSON,
                "cursor": JSON,
                "level": JSON,
                "_meta": JSON,
            },
        )
        | JSON,
        "result": JSON,
        "error": JSON,
    },
)
"""Message-shaped objects: the real vocabulary, any member missing, any value of any type."""

SHARE = max(HYPOTHESIS_INPUTS // 4, settings.default.max_examples)


@settings(max_examples=SHARE)
@given(raw=st.binary(max_size=300))
def test_random_bytes_get_one_valid_reply_or_none(raw: bytes) -> None:
    feed(HYPOTHESIS_SERVER, raw, "hypothesis bytes")


@settings(max_examples=SHARE)
@given(text=st.text(max_size=300))
def test_random_text_gets_one_valid_reply_or_none(text: str) -> None:
    feed(HYPOTHESIS_SERVER, text, "hypothesis text")


@settings(max_examples=SHARE)
@given(message=MESSAGE_KEYS)
def test_message_shaped_objects_get_one_valid_reply_or_none(message: dict[str, Any]) -> None:
    feed(HYPOTHESIS_SERVER, json.dumps(message), "hypothesis message")


@settings(max_examples=SHARE)
@given(
    base=st.sampled_from(BASE_MESSAGES),
    key=st.sampled_from(["id", "method", "params", "jsonrpc"]),
    value=JSON | IDS,
    drop=st.booleans(),
)
def test_real_messages_with_one_member_replaced_or_dropped_get_one_valid_reply(
    base: dict[str, Any], key: str, value: Any, drop: bool
) -> None:
    message = dict(base)
    if drop:
        message.pop(key, None)
    else:
        message[key] = value
    feed(HYPOTHESIS_SERVER, json.dumps(message), "hypothesis member")


HYPOTHESIS_SERVER = fuzz_server()
"""One session for all hypothesis examples (building a server per example would dominate)."""


def test_the_hypothesis_session_is_still_usable() -> None:
    assert_still_usable(HYPOTHESIS_SERVER)


# -- limits -------------------------------------------------------------------------

DEEP: list[tuple[str, str]] = [
    ("100k open brackets", "[" * 100_000),
    ("100k nested arrays", "[" * 100_000 + "]" * 100_000),
    ("100k nested objects", '{"a":' * 100_000 + "1" + "}" * 100_000),
    (
        "deep params of a request",
        '{"jsonrpc":"2.0","id":7,"method":"ping","params":{"a":' + "[" * 50_000 + "]" * 50_000 + "}}",
    ),
    (
        "deep arguments of a tool call",
        '{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"echo",'
        '"arguments":{"v":' + "[" * 5_000 + "]" * 5_000 + "}}}",
    ),
]


@pytest.mark.parametrize("text", [d[1] for d in DEEP], ids=[d[0] for d in DEEP])
def test_nesting_deeper_than_the_parser_goes_is_a_parse_error_not_a_recursion_error(text: str) -> None:
    server = fuzz_server()
    reply = feed(server, text, "deep")
    assert reply is not None and reply["error"]["code"] == PARSE_ERROR
    assert "nesting too deep" in reply["error"]["message"]
    assert_still_usable(server)


def test_arguments_nested_within_the_parser_but_past_the_result_limit_are_a_tool_failure() -> None:
    server = fuzz_server()
    text = (
        '{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"echo","arguments":{"v":'
        + "[" * 400
        + "]" * 400
        + "}}}"
    )
    reply = feed(server, text, "deep result")
    assert reply is not None and reply["result"]["isError"] is True
    assert "nested deeper than" in reply["result"]["content"][0]["text"]
    assert_still_usable(server)


def padded_ping(size: int, id: int = 1) -> bytes:
    """A valid ping of exactly ``size`` bytes (the padding is a params member)."""
    head, tail = b'{"jsonrpc":"2.0","id":%d,"method":"ping","params":{"pad":"' % id, b'"}}'
    return head + b"x" * (size - len(head) - len(tail)) + tail


def test_the_default_message_limit_is_4_mib() -> None:
    assert fuzz_server().max_message_bytes == DEFAULT_MAX_MESSAGE_BYTES == 4 * 1024 * 1024


@pytest.mark.parametrize("limit", [DEFAULT_MAX_MESSAGE_BYTES, 1000])
def test_a_message_over_the_limit_is_invalid_request_and_one_at_the_limit_is_served(limit: int) -> None:
    server = fuzz_server()
    server.max_message_bytes = limit
    over = feed(server, padded_ping(limit + 1), "oversized")
    assert over is not None and over["id"] is None and over["error"]["code"] == INVALID_REQUEST
    assert f"larger than {limit} bytes" in over["error"]["message"]
    assert feed(server, padded_ping(limit), "at the limit") == {"jsonrpc": "2.0", "id": 1, "result": {}}
    assert_still_usable(server)


def test_the_limit_counts_utf8_bytes_of_text_not_characters() -> None:
    server = MCPServer("limits", max_message_bytes=100)
    text = '{"jsonrpc":"2.0","id":1,"method":"ping","params":{"p":"' + "é" * 40 + '"}}'
    assert len(text) <= 100 < len(text.encode())
    reply = json.loads(server.handle_text(text) or "null")
    assert reply["error"]["code"] == INVALID_REQUEST
