"""Wire codecs: json, orjson and msgspec round-trip every message identically."""

from __future__ import annotations

import json
from typing import Any

import pytest
from helpers.pair import ClientServerPair

from harness.demo import add_subtract, build_demo_server
from harness.protocol import CODECS, available_codecs, get_codec

MESSAGES: list[dict[str, Any]] = [
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "add", "arguments": {"x": 2, "y": 3}},
    },
    {
        "jsonrpc": "2.0",
        "id": "abc",
        "result": {"content": [{"type": "text", "text": "Oslo: 4°C"}], "isError": True},
    },
    {
        "jsonrpc": "2.0",
        "id": None,
        "error": {"code": -32700, "message": "parse error", "data": [1, 2.5, None]},
    },
    {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"},
    {
        "jsonrpc": "2.0",
        "id": -(2**62),
        "result": {"nested": {"deep": [{"a": [True, False, {}]}]}, "ü": "\u2603"},
    },
]


def test_all_three_codecs_are_installed_here() -> None:
    assert available_codecs() == CODECS == ("json", "orjson", "msgspec")


@pytest.mark.parametrize("codec", CODECS)
@pytest.mark.parametrize(
    "message", MESSAGES, ids=["request", "unicode result", "error", "notification", "nesting"]
)
def test_codec_round_trips_and_matches_stdlib_json(codec: str, message: dict[str, Any]) -> None:
    c = get_codec(codec)
    wire = c.encode(message)
    assert isinstance(wire, bytes)
    assert c.decode(wire) == message
    assert json.loads(wire) == message  # it is plain JSON, readable by anyone
    assert list(c.decode(wire)) == list(message)  # key order kept


@pytest.mark.parametrize("codec", CODECS)
def test_codecs_write_compact_json(codec: str) -> None:
    assert get_codec(codec).encode({"a": [1, {"b": "c"}]}) == b'{"a":[1,{"b":"c"}]}'


def _session(codec: str) -> tuple[list[dict[str, Any]], list[bytes]]:
    wire: list[bytes] = []
    pair = ClientServerPair(build_demo_server(), codec=codec)
    tap = pair.transport.tap
    assert tap is not None

    def record(direction: str, data: bytes) -> None:
        wire.append(data)
        tap(direction, data)

    pair.transport.tap = record
    pair.client.list_tools()
    pair.client.call_tool("add", {"x": 2, "y": 3})
    pair.client.call_tool("weather", {"city": "Oslo"})
    pair.client.call_tool("weather", {"city": "Atlantis"})
    add_subtract(pair.server)
    pair.client.pump_notifications()
    return pair.checker.server_messages, wire


def test_a_session_reads_the_same_under_every_codec() -> None:
    reference, _ = _session("json")
    for codec in CODECS[1:]:
        assert _session(codec)[0] == reference


@pytest.mark.parametrize("codec", CODECS)
def test_a_session_is_byte_identical_when_repeated(codec: str) -> None:
    assert _session(codec)[1] == _session(codec)[1]


def test_an_unknown_codec_is_refused_with_the_valid_names() -> None:
    with pytest.raises(ValueError, match="json, orjson, msgspec"):
        get_codec("pickle")


def test_the_json_codec_refuses_nan() -> None:
    with pytest.raises(ValueError):
        get_codec("json").encode({"x": float("nan")})
