"""Wire codecs: json, orjson and msgspec round-trip every message identically."""

from __future__ import annotations

import json
from typing import Any

import pytest
from helpers.pair import ClientServerPair
from hypothesis import given
from hypothesis import strategies as st

from harness.fixtures.demo import add_subtract, build_demo_server
from harness.protocol import CODECS, available_codecs, compact_text, get_codec

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


# -- the json codec's shortcuts give what the stdlib calls they skip give ----------------------

_REFERENCE_ENCODE = json.JSONEncoder(separators=(",", ":"), allow_nan=False).encode
_JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=4),
    max_leaves=20,
)


def _outcome(fn: Any, arg: Any) -> tuple[str, Any]:
    try:
        return "ok", fn(arg)
    except Exception as exc:  # the error's type and text are part of the contract
        return type(exc).__name__, str(exc)


@given(_JSON_VALUES)
def test_json_encode_matches_the_stdlib_encoder(value: Any) -> None:
    """Same bytes, and the same error for NaN and infinities, as JSONEncoder.encode."""
    expected = _outcome(lambda v: _REFERENCE_ENCODE(v).encode(), value)
    assert _outcome(get_codec("json").encode, value) == expected


_REFERENCE_TEXT = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False).encode


@given(_JSON_VALUES | st.dictionaries(st.text(max_size=5), _JSON_VALUES, max_size=4))
def test_compact_text_matches_the_stdlib_encoder_it_skips(value: Any) -> None:
    """The trace's and the tools' text: what JSONEncoder(ensure_ascii=False) gives, NaN included."""
    assert _outcome(compact_text, value) == _outcome(_REFERENCE_TEXT, value)


def test_compact_text_keeps_the_circular_reference_check_and_the_characters() -> None:
    loop: list[Any] = []
    loop.append(loop)
    assert _outcome(compact_text, {"x": loop}) == _outcome(_REFERENCE_TEXT, {"x": loop})
    assert compact_text({"x": "Zürich ✓", "nan": float("nan")}) == '{"x":"Zürich ✓","nan":NaN}'


def test_json_encode_keeps_the_circular_reference_check() -> None:
    loop: list[Any] = []
    loop.append(loop)
    codec = get_codec("json")
    assert _outcome(codec.encode, {"x": loop}) == _outcome(_REFERENCE_ENCODE, {"x": loop})
    assert codec.encode({"x": [1]}) == b'{"x":[1]}'  # a failed encode leaves nothing behind


@given(st.binary(max_size=12))
def test_json_decode_matches_json_loads(tail: bytes) -> None:
    """Bytes that start like an object (the shortcut) and bytes that do not (json.loads)."""
    for data in (b"{" + tail, b'{"a":' + tail, tail, b"\xef\xbb\xbf" + tail):
        # repr: a decoded NaN is not equal to itself
        assert repr(_outcome(get_codec("json").decode, data)) == repr(_outcome(json.loads, data))


@given(
    st.dictionaries(st.text(max_size=5), _JSON_VALUES, max_size=4),
    st.sampled_from([b"", b" ", b"\n", b" \t\r\n", b"x", b"{}", b" 1", b"]", b"\x00"]),
)
def test_json_decode_of_a_whole_object_and_what_may_follow_it_matches_json_loads(
    value: dict[str, Any], tail: bytes
) -> None:
    """The scanner shortcut: a whole object answers; trailing space or extra data as json.loads."""
    data = json.dumps(value, separators=(",", ":")).encode() + tail
    assert repr(_outcome(get_codec("json").decode, data)) == repr(_outcome(json.loads, data))
