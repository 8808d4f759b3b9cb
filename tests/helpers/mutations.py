"""Hostile wire input: real MCP messages, mutated by a seeded ``numpy.random.Generator``.

Why: a fuzzer that only throws random bytes never gets past the JSON parser.
This stream starts from the messages a real client sends (every method the demo
lab serves, notifications, responses) and breaks them the ways peers and
attackers do: byte flips, truncation, deleted fields, swapped types, huge or
invalid ids, junk nested into params, wrong methods and jsonrpc versions. The
same seed gives the same stream, so a failure names the index that reproduces it.

:func:`expected_reply` is the oracle, written from the JSON-RPC rules, not from
the server's code: which inputs must get exactly one reply, with which id.
:func:`check_reply` checks a reply's shape (a JSON object, ``jsonrpc`` "2.0",
the id echoed or null, ``result`` XOR ``error``).
"""

from __future__ import annotations

import json
import math
import re
import sys
from collections.abc import Iterator
from typing import Any

import numpy as np

from harness.protocol import LATEST_VERSION

BASE_MESSAGES: tuple[dict[str, Any], ...] = (
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": LATEST_VERSION,
            "capabilities": {},
            "clientInfo": {"name": "fuzz", "version": "0"},
        },
    },
    {"jsonrpc": "2.0", "method": "notifications/initialized"},
    {"jsonrpc": "2.0", "id": 2, "method": "ping"},
    {"jsonrpc": "2.0", "id": 3, "method": "tools/list"},
    {"jsonrpc": "2.0", "id": 4, "method": "tools/list", "params": {"cursor": "dG9vbHM6MQ=="}},
    {
        "jsonrpc": "2.0",
        "id": 5,
        "method": "tools/call",
        "params": {"name": "add", "arguments": {"x": 2, "y": 3}},
    },
    {
        "jsonrpc": "2.0",
        "id": 6,
        "method": "tools/call",
        "params": {"name": "weather", "arguments": {"city": "Oslo"}},
    },
    {
        "jsonrpc": "2.0",
        "id": 7,
        "method": "tools/call",
        "params": {"name": "weather", "arguments": {"city": "Mars"}},
    },
    {"jsonrpc": "2.0", "id": 8, "method": "tools/call", "params": {"name": "delete_db", "arguments": {}}},
    {
        "jsonrpc": "2.0",
        "id": 9,
        "method": "tools/call",
        "params": {"name": "echo", "arguments": {"value": [1, {"a": "b"}]}},
    },
    {
        "jsonrpc": "2.0",
        "id": "s-10",
        "method": "tools/call",
        "params": {"name": "add", "arguments": {"x": 1, "y": 1}, "_meta": {"progressToken": "p"}},
    },
    {"jsonrpc": "2.0", "id": 11, "method": "resources/list"},
    {"jsonrpc": "2.0", "id": 12, "method": "resources/read", "params": {"uri": "lab://readme"}},
    {"jsonrpc": "2.0", "id": 13, "method": "resources/templates/list"},
    {"jsonrpc": "2.0", "id": 14, "method": "prompts/list"},
    {
        "jsonrpc": "2.0",
        "id": 15,
        "method": "prompts/get",
        "params": {"name": "greet", "arguments": {"name": "Ada"}},
    },
    {"jsonrpc": "2.0", "id": 16, "method": "logging/setLevel", "params": {"level": "info"}},
    {
        "jsonrpc": "2.0",
        "id": 17,
        "method": "completion/complete",
        "params": {
            "ref": {"type": "ref/prompt", "name": "greet"},
            "argument": {"name": "name", "value": "A"},
        },
    },
    {"jsonrpc": "2.0", "id": 18, "method": "resources/subscribe", "params": {"uri": "lab://readme"}},
    {"jsonrpc": "2.0", "id": 19, "method": "resources/unsubscribe", "params": {"uri": "lab://readme"}},
    {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 5, "reason": "user"}},
    {"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": 1, "progress": 0.5}},
    {"jsonrpc": "2.0", "method": "notifications/roots/list_changed"},
    {"jsonrpc": "2.0", "id": 20, "result": {}},
    {"jsonrpc": "2.0", "id": 21, "error": {"code": -32601, "message": "no"}},
)
"""What a real client sends the demo lab (plus ``echo``), before any mutation."""

METHODS: tuple[str, ...] = (
    *sorted({m["method"] for m in BASE_MESSAGES if "method" in m}),
    "tools/nope",
    "",
    "TOOLS/LIST",
    "tools/call ",
    "rpc.discover",
    "sampling/createMessage",
    "\u0000",
    "é" * 3,
)

HUGE_IDS: tuple[Any, ...] = (
    2**53 + 1,
    -(2**63),
    2**64,
    10**100,
    -(10**300),
    0,
    -1,
    "",
    "x" * 5000,
    "\ud800",
    "\u0000",
    1.0,
    1.5,
    -0.0,
    True,
    False,
    None,
    [],
    [1],
    {},
    {"id": 1},
)
"""Ids a peer may send: valid ones at the edges of int and str, and every invalid type."""

SCALARS: tuple[Any, ...] = (None, True, False, 0, -1, 1.5, 1e308, -1e-308, 10**40, "", "x", "é\u2028", [], {})

_ID_TYPES = (int, str)


class Draws:
    """Uniform draws from one ``numpy.random.Generator``, fetched in blocks.

    A scalar ``Generator.integers`` call costs microseconds; the stream makes a
    dozen per input, so it draws 64k uniforms at a time and cuts them up. Every
    choice still flows from the one seeded generator.
    """

    def __init__(self, generator: np.random.Generator, block: int = 1 << 16) -> None:
        self.generator, self.block = generator, block
        self._buffer: list[float] = []

    def random(self) -> float:
        """A float in [0, 1)."""
        if not self._buffer:
            self._buffer = self.generator.random(self.block).tolist()
        return self._buffer.pop()

    def below(self, n: int) -> int:
        """An int in [0, n)."""
        return int(self.random() * n)

    def between(self, low: int, high: int) -> int:
        """An int in [low, high)."""
        return low + int(self.random() * (high - low))


def _junk(rng: Draws) -> Any:
    """A nested value: shallow and varied, or deeper than any parser's recursion."""
    pick = rng.below(6)
    if pick == 0:
        # Deep nesting, kept clear of the interpreter's recursion limit band (~1000),
        # where parsing depends on the caller's stack depth: well below it, or far past it.
        # A placeholder here; :func:`_deepen` writes the brackets into the text, so that
        # no Python structure this deep is ever built, copied or dumped by the generator.
        depth = rng.between(1, 600) if rng.random() < 0.8 else rng.between(1500, 4000)
        return f"__deep{depth}{'[' if rng.random() < 0.5 else '{'}__"
    if pick == 1:
        return {str(i): SCALARS[rng.below(len(SCALARS))] for i in range(rng.below(8))}
    if pick == 2:
        return [_junk(rng) for _ in range(rng.below(3))]
    if pick == 3:
        return "".join(chr(rng.below(0x2FFF)) for _ in range(rng.below(40)))
    if pick == 4:
        return "x" * rng.below(4_000)
    return SCALARS[rng.below(len(SCALARS))]


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    """Every key path inside ``value`` (shallow: messages are small)."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield (*prefix, key)
            if len(prefix) < 6:
                yield from _paths(item, (*prefix, key))
    elif isinstance(value, list):
        for i, item in enumerate(value[:4]):
            yield (*prefix, i)
            if len(prefix) < 6:
                yield from _paths(item, (*prefix, i))


def _copy(value: Any) -> Any:
    """A deep copy of a small JSON value (copy.deepcopy, minus its generality and cost)."""
    if type(value) is dict:
        return {k: _copy(v) for k, v in value.items()}
    if type(value) is list:
        return [_copy(v) for v in value]
    return value


def _parent(message: Any, path: tuple[Any, ...]) -> Any:
    for key in path[:-1]:
        message = message[key]
    return message


def mutate_message(message: dict[str, Any], rng: Draws) -> Any:
    """One structural mutation of a copy of ``message`` (a dict, a list, a scalar...)."""
    msg: dict[str, Any] = _copy(message)
    kind = rng.below(10)
    paths = list(_paths(msg)) if kind < 2 else []
    if kind == 0 and paths:  # delete a field anywhere
        path = paths[rng.below(len(paths))]
        del _parent(msg, path)[path[-1]]
    elif kind == 1 and paths:  # swap a value's type anywhere
        path = paths[rng.below(len(paths))]
        _parent(msg, path)[path[-1]] = SCALARS[rng.below(len(SCALARS))]
    elif kind == 2:  # an id at the edges, or of a wrong type
        msg["id"] = HUGE_IDS[rng.below(len(HUGE_IDS))]
    elif kind == 3:  # nested junk into params, arguments or the envelope
        target = msg.get("params") if isinstance(msg.get("params"), dict) else msg
        args = target.get("arguments") if isinstance(target, dict) else None
        (args if isinstance(args, dict) and rng.random() < 0.5 else target)["junk"] = _junk(rng)
    elif kind == 4:  # another method, real or not
        msg["method"] = METHODS[rng.below(len(METHODS))]
    elif kind == 5:  # a request becomes a notification, or the other way round
        if "id" in msg:
            del msg["id"]
        else:
            msg["id"] = rng.below(1000)
    elif kind == 6:  # the jsonrpc member
        msg["jsonrpc"] = ("1.0", 2.0, None, "2.0 ", "", [])[rng.below(6)]
    elif kind == 7:  # the whole params member replaced
        msg["params"] = _junk(rng)
    elif kind == 8:  # not an object at all
        return [msg] if rng.random() < 0.5 else _junk(rng)
    else:  # both result and error, or a response with a method
        msg["result" if rng.random() < 0.5 else "error"] = _junk(rng)
    return msg


def mutate_bytes(data: bytes, rng: Draws) -> bytes:
    """One byte-level mutation: flips, truncation, insertion, encodings, concatenation."""
    kind = rng.below(7)
    buf = bytearray(data)
    if kind == 0 and buf:  # flip a few bytes to random values
        for _ in range(rng.between(1, 6)):
            buf[rng.below(len(buf))] = rng.below(256)
    elif kind == 1:  # truncate
        del buf[rng.below(len(buf) + 1) :]
    elif kind == 2:  # insert random bytes
        pos = rng.below(len(buf) + 1)
        buf[pos:pos] = bytes(rng.below(256) for _ in range(rng.between(1, 16)))
    elif kind == 3:  # two messages glued together
        buf += bytes(buf)
    elif kind == 4:  # a BOM, a NUL, or invalid UTF-8 at the front
        buf[0:0] = (b"\xef\xbb\xbf", b"\x00", b"\xff\xfe", b"\xc3")[rng.below(4)]
    elif kind == 5:  # UTF-16, which json.loads would detect
        buf = bytearray(bytes(buf).decode("utf-8", "replace").encode("utf-16"))
    else:  # NaN, Infinity or an overflowing number where a value was
        text = bytes(buf).replace(b"2", (b"NaN", b"-Infinity", b"1e999", b"9" * 5000)[rng.below(4)], 1)
        buf = bytearray(text)
    return bytes(buf)


_DEEP = re.compile(r'"__deep(\d+)([\[{])__"')


def _deepen(text: str) -> str:
    """Replace each deep-nesting placeholder by that many nested arrays or objects."""

    def nest(match: re.Match[str]) -> str:
        depth = int(match.group(1))
        if match.group(2) == "[":
            return "[" * depth + "]" * depth
        return '{"k":' * depth + "0" + "}" * depth

    return _DEEP.sub(nest, text)


def seeded_stream(seed: int, count: int) -> Iterator[bytes]:
    """``count`` hostile inputs from ``seed``: mostly structural mutations, some byte-level."""
    rng = Draws(np.random.default_rng(np.random.SeedSequence(seed)))
    for _ in range(count):
        base = BASE_MESSAGES[rng.below(len(BASE_MESSAGES))]
        roll = rng.random()
        if roll < 0.1:
            yield json.dumps(base).encode()  # unmutated: the session keeps moving
            continue
        value: Any = base
        for _ in range(rng.between(1, 4)):
            value = mutate_message(value, rng) if isinstance(value, dict) else value
        data = _deepen(json.dumps(value, allow_nan=False)).encode()
        if roll > 0.75:
            data = mutate_bytes(data, rng)
        yield data


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _finite(text: str) -> float:
    value = float(text)
    if math.isinf(value):
        raise ValueError("overflow")
    return value


def strict_parse(data: bytes | str) -> Any:
    """JSON as RFC 8259 has it: no NaN or Infinity, no number that overflows a double.

    Parsed under the interpreter's default recursion limit, as in a fresh server
    process: how deep json may nest depends on that limit, and some libraries
    loaded in the test process (IPython, for one) raise it.
    """
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(1000)
    try:
        return json.loads(data, parse_constant=_no_constant, parse_float=_finite)
    finally:
        sys.setrecursionlimit(old)


def expected_reply(data: bytes | str, max_bytes: int) -> tuple[bool, Any]:
    """(whether exactly one reply is due, the id it must carry) for one input.

    No reply is due for a notification (a "2.0" object with a string method and no
    id key) or a response (a "2.0" object with result or error and no method);
    everything else, down to bytes that are not JSON, gets exactly one, carrying
    the request's id if it is a string or an integer (not bool), else null.
    """
    if len(data) > max_bytes:
        return True, None
    try:
        msg = strict_parse(data)
    except (ValueError, RecursionError):
        return True, None
    if not isinstance(msg, dict):
        return True, None
    if msg.get("jsonrpc") == "2.0" and "method" not in msg and ("result" in msg or "error" in msg):
        return False, None
    if msg.get("jsonrpc") == "2.0" and isinstance(msg.get("method"), str) and "id" not in msg:
        return False, None
    rid = msg.get("id")
    return True, (rid if isinstance(rid, _ID_TYPES) and not isinstance(rid, bool) else None)


def check_reply(reply: str | bytes | None, due: bool, rid: Any) -> dict[str, Any] | None:
    """Assert ``reply`` is what :func:`expected_reply` said; return it parsed."""
    if not due:
        assert reply is None, f"a notification or response got a reply: {reply!r:.300}"
        return None
    assert reply is not None, "a request got no reply"
    parsed = strict_parse(reply)
    assert isinstance(parsed, dict), f"reply is not an object: {reply!r:.300}"
    assert parsed.get("jsonrpc") == "2.0"
    assert set(parsed) <= {"jsonrpc", "id", "result", "error"}, f"extra members: {sorted(parsed)}"
    assert "id" in parsed and parsed["id"] == rid and type(parsed["id"]) is type(rid), (
        f"id {parsed.get('id')!r:.80} is not the request's {rid!r:.80}"
    )
    assert ("result" in parsed) != ("error" in parsed), f"not result XOR error: {reply!r:.300}"
    if "error" in parsed:
        err = parsed["error"]
        assert isinstance(err, dict) and type(err.get("code")) is int and isinstance(err.get("message"), str)
    else:
        assert isinstance(parsed["result"], dict)
    return parsed
