"""Hostile lines into a live ``harness serve --demo`` process, and the stdio line limit.

Each mutated line is followed by a sentinel ping, so the replies between two
sentinels are exactly the replies to that one line: one for a request, none for
a notification or a response. Afterwards the process is alive, its stderr holds
no traceback, and ``add`` still answers. A line over the limit is never read
whole by :func:`serve_stdio` (checked with a stream that refuses unbounded reads).
"""

from __future__ import annotations

import io
import json
import sys
import threading
from typing import Any

import pytest
from helpers.mutations import check_reply, expected_reply, seeded_stream

from harness.fixtures.demo import build_demo_server
from harness.protocol import INVALID_REQUEST, LATEST_VERSION, PARSE_ERROR
from harness.protocol.server import DEFAULT_MAX_MESSAGE_BYTES
from harness.transports import StdioTransport
from harness.transports.stdio import serve_stdio

SERVE = [sys.executable, "-m", "harness.cli.main", "serve", "--demo"]
LIVE_LINES = 3_000
INIT = {"protocolVersion": LATEST_VERSION, "capabilities": {}, "clientInfo": {"name": "fuzz", "version": "0"}}
ADD = {
    "jsonrpc": "2.0",
    "id": "add",
    "method": "tools/call",
    "params": {"name": "add", "arguments": {"x": 2, "y": 3}},
}


def start(*extra: str) -> StdioTransport:
    server = StdioTransport([*SERVE, *extra], timeout=20.0)
    assert "result" in (
        server.send({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": INIT}) or {}
    )
    server.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    return server


def assert_healthy(server: StdioTransport) -> None:
    assert server.send(ADD) == {
        "jsonrpc": "2.0",
        "id": "add",
        "result": {"content": [{"type": "text", "text": "5"}]},
    }
    assert server.process.poll() is None
    assert server.garbage == [], f"non-JSON output lines: {server.garbage[:3]}"
    assert not any("Traceback" in line for line in server.stderr_lines), server.stderr_lines


def replies_until(server: StdioTransport, sentinel: str) -> list[dict[str, Any]]:
    """Every reply up to the sentinel ping's (server notifications set aside)."""
    out = []
    while True:
        msg = server.next_message(20.0)
        assert msg is not None, f"no reply before sentinel {sentinel}"
        if "method" in msg:
            continue
        if msg.get("id") == sentinel:
            assert msg == {"jsonrpc": "2.0", "id": sentinel, "result": {}}
            return out
        out.append(msg)


def as_line(data: bytes) -> bytes:
    """A stream input made one line: a newline byte would split it in two."""
    return data.replace(b"\n", b" ")


def test_thousands_of_hostile_lines_into_a_live_server_get_exactly_the_replies_due() -> None:
    lines = [as_line(d) for d in seeded_stream(seed=11, count=LIVE_LINES)]
    server = start()
    try:

        def write_all() -> None:
            for i, line in enumerate(lines):
                server.write_raw(line)
                server.write_raw(b'{"jsonrpc":"2.0","id":"sentinel-%d","method":"ping"}' % i)

        writer = threading.Thread(target=write_all, daemon=True)
        writer.start()
        for i, line in enumerate(lines):
            got = replies_until(server, f"sentinel-{i}")
            stripped = line.strip()  # serve_stdio strips each line; a blank one is skipped
            due, rid = expected_reply(stripped, DEFAULT_MAX_MESSAGE_BYTES) if stripped else (False, None)
            assert len(got) == (1 if due else 0), f"line {i} (seed 11) got {len(got)} replies: {line[:200]!r}"
            if due:
                check_reply(json.dumps(got[0]), True, rid)
        writer.join(10.0)
        assert not writer.is_alive()
        assert_healthy(server)
    finally:
        server.close()


def padded_ping(size: int, id: int = 1) -> bytes:
    head, tail = b'{"jsonrpc":"2.0","id":%d,"method":"ping","params":{"pad":"' % id, b'"}}'
    return head + b"x" * (size - len(head) - len(tail)) + tail


@pytest.mark.parametrize(
    ("extra", "limit"),
    [((), DEFAULT_MAX_MESSAGE_BYTES), (("--max-message-bytes", "2048"), 2048)],
    ids=["default 4 MiB", "--max-message-bytes 2048"],
)
def test_an_oversized_line_gets_invalid_request_and_the_next_line_is_served(
    extra: tuple[str, ...], limit: int
) -> None:
    server = start(*extra)
    try:
        server.write_raw(padded_ping(limit + 1 + limit // 4, id=1))
        assert server.send({"jsonrpc": "2.0", "id": 2, "method": "ping"}) == {
            "jsonrpc": "2.0",
            "id": 2,
            "result": {},
        }
        server.write_raw(padded_ping(limit, id=3))
        assert server.wait_for(3, 20.0) == {"jsonrpc": "2.0", "id": 3, "result": {}}
        assert_healthy(server)
    finally:
        server.close()


def test_an_oversized_line_is_answered_before_the_next_in_order() -> None:
    server = start("--max-message-bytes", "2048")
    try:
        server.write_raw(padded_ping(5000, id=1))
        server.write_raw(b'{"jsonrpc":"2.0","id":2,"method":"ping"}')
        first, second = server.next_message(20.0), server.next_message(20.0)
        assert first is not None and first["id"] is None and first["error"]["code"] == INVALID_REQUEST
        assert second == {"jsonrpc": "2.0", "id": 2, "result": {}}
    finally:
        server.close()


def test_deep_nesting_over_stdio_is_a_parse_error_and_the_process_lives() -> None:
    server = start()
    try:
        server.write_raw(b"[" * 100_000)
        reply = server.next_message(20.0)
        assert reply is not None and reply["id"] is None and reply["error"]["code"] == PARSE_ERROR
        assert_healthy(server)
    finally:
        server.close()


class EndlessLine(io.RawIOBase):
    """``size`` bytes with no newline, then the given tail; refuses unbounded reads."""

    def __init__(self, size: int, tail: bytes) -> None:
        self.left, self.tail, self.largest_read = size, tail, 0

    def readline(self, size: int | None = -1) -> bytes:
        if size is None or size < 0:
            raise AssertionError("an unbounded readline: a hostile line would be held whole")
        self.largest_read = max(self.largest_read, size)
        if self.left > 0:
            n = min(size, self.left)
            self.left -= n
            return b"x" * n
        end = self.tail.find(b"\n") + 1 or len(self.tail)
        out, self.tail = self.tail[: min(size, end)], self.tail[min(size, end) :]
        return out

    def __iter__(self) -> Any:
        raise AssertionError("iterating lines reads each one whole")


def test_serve_stdio_never_holds_more_than_the_limit_of_one_line() -> None:
    limit = 64 * 1024
    server = build_demo_server()
    stdin = EndlessLine(64 * 1024 * 1024, b'\n{"jsonrpc":"2.0","id":1,"method":"ping"}\n')
    stdout = io.BytesIO()
    serve_stdio(server, stdin, stdout, max_line_bytes=limit)
    replies = [json.loads(line) for line in stdout.getvalue().splitlines()]
    assert [r["id"] for r in replies] == [None, 1]
    assert replies[0]["error"]["code"] == INVALID_REQUEST
    assert stdin.largest_read <= limit + 2
