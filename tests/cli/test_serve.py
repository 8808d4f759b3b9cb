"""``harness serve``: the demo lab as a live stdio process; bad input never kills it."""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
from typing import Any

import pytest
from helpers.mcp_schema import WireChecker
from helpers.pair import CheckedTransport, strict_loads, text_of

from harness.protocol import STRATEGIES, MCPClient
from harness.transports import StdioTransport

HARNESS = [sys.executable, "-m", "harness.cli.main"]
INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "0"},
    },
}
READY = {"jsonrpc": "2.0", "method": "notifications/initialized"}


def run_serve(
    lines: list[bytes], *args: str
) -> tuple[list[dict[str, Any]], subprocess.CompletedProcess[bytes]]:
    """Pipe ``lines`` into ``harness serve --demo``; the checked replies and the finished process."""
    proc = subprocess.run(
        [*HARNESS, "serve", "--demo", *args],
        input=b"".join(lines),
        capture_output=True,
        timeout=30,
        check=False,
    )
    checker = WireChecker()
    for line in lines:
        with contextlib.suppress(ValueError):
            checker.client_sent(strict_loads(line))
    replies = [strict_loads(x) for x in proc.stdout.splitlines()]
    for reply in replies:
        checker.server_sent(reply)  # stdout carries only JSON-RPC, each line valid
    return replies, proc


def line(message: dict[str, Any]) -> bytes:
    return json.dumps(message).encode() + b"\n"


GARBAGE: list[tuple[str, bytes, int]] = [
    ("plain text", b"hello there\n", -32700),
    ("truncated JSON", b'{"jsonrpc":"2.0","id":5,"method":"pi\n', -32700),
    ("non-UTF-8 bytes", b"\xc3\x28\xff\n", -32700),
    ("NaN", b'{"jsonrpc":"2.0","id":5,"method":"ping","params":{"x":NaN}}\n', -32700),
    ("a batch array", b'[{"jsonrpc":"2.0","id":5,"method":"ping"}]\n', -32600),
    ("a bare number", b"42\n", -32600),
    ("id null", b'{"jsonrpc":"2.0","id":null,"method":"ping"}\n', -32600),
]


@pytest.mark.parametrize(
    ("garbage", "code"), [g[1:] for g in GARBAGE], ids=[f"{g[0]} then a valid line" for g in GARBAGE]
)
def test_a_garbage_line_gets_an_error_and_the_next_line_is_served(garbage: bytes, code: int) -> None:
    replies, proc = run_serve(
        [line(INIT), line(READY), garbage, line({"jsonrpc": "2.0", "id": 9, "method": "ping"})]
    )
    assert proc.returncode == 0
    assert replies[1]["id"] is None and replies[1]["error"]["code"] == code
    assert replies[2] == {"jsonrpc": "2.0", "id": 9, "result": {}}


def test_logs_go_to_stderr_and_stdout_is_only_json_rpc() -> None:
    replies, proc = run_serve([line(INIT)])
    assert len(replies) == 1 and replies[0]["result"]["serverInfo"]["name"] == "harness-demo"
    assert b"serving over stdio (strategy=is_error)" in proc.stderr


def _call_weather(strategy: str) -> tuple[list[dict[str, Any]], subprocess.CompletedProcess[bytes]]:
    call = {
        "jsonrpc": "2.0",
        "id": 2,
        "method": "tools/call",
        "params": {"name": "weather", "arguments": {"city": "Atlantis"}},
    }
    after = {"jsonrpc": "2.0", "id": 3, "method": "ping"}
    return run_serve([line(INIT), line(READY), line(call), line(after)], "--strategy", strategy)


STRATEGY_WIRE: list[tuple[str, dict[str, Any]]] = [
    (
        "is_error",
        {
            "result": {
                "content": [{"type": "text", "text": "ERROR: no station near Atlantis"}],
                "isError": True,
            }
        },
    ),
    (
        "masked",
        {"result": {"content": [{"type": "text", "text": "Error executing tool weather"}], "isError": True}},
    ),
    ("collapse", {"error": {"code": -32603, "message": "no station near Atlantis"}}),
]


@pytest.mark.parametrize(
    ("strategy", "body"), STRATEGY_WIRE, ids=[f"--strategy {s}" for s, _ in STRATEGY_WIRE]
)
def test_strategy_selects_what_a_raising_tool_becomes(strategy: str, body: dict[str, Any]) -> None:
    replies, proc = _call_weather(strategy)
    assert proc.returncode == 0
    assert replies[1] == {"jsonrpc": "2.0", "id": 2, **body}
    assert replies[2]["result"] == {}  # the session goes on


def test_strategy_escape_kills_the_process_on_a_raising_tool() -> None:
    replies, proc = _call_weather("escape")
    assert proc.returncode != 0
    assert len(replies) == 1  # initialize answered; nothing for the call, nor for the ping after it
    assert b"no station near Atlantis" in proc.stderr


def test_page_size_paginates_tools_list() -> None:
    with StdioTransport([*HARNESS, "serve", "--demo", "--page-size", "1"]) as stdio:
        checked = CheckedTransport(stdio)
        client = MCPClient(checked)
        client.initialize()
        assert [t["name"] for t in client.list_tools()] == ["add", "weather", "delete_db"]
        pages = [m for m in checked.checker.server_messages if "tools" in m.get("result", {})]
        assert len(pages) == 3
        assert text_of(client.call_tool("add", {"x": 40, "y": 2})) == "42"


USER_ERRORS: list[tuple[str, list[str], str]] = [
    ("serve with nothing to serve", ["serve"], "say what to serve"),
    ("an unknown strategy", ["serve", "--demo", "--strategy", "swallow"], "swallow"),
    ("a page size of zero", ["serve", "--demo", "--page-size", "0"], "page-size"),
]


@pytest.mark.parametrize(("args", "said"), [u[1:] for u in USER_ERRORS], ids=[u[0] for u in USER_ERRORS])
def test_user_mistakes_exit_2_with_a_message_and_no_traceback(args: list[str], said: str) -> None:
    proc = subprocess.run(
        [*HARNESS, *args], capture_output=True, timeout=30, check=False, stdin=subprocess.DEVNULL
    )
    assert proc.returncode == 2
    assert said in proc.stderr.decode()
    assert b"Traceback" not in proc.stderr
    assert proc.stdout == b""


def test_the_strategy_choices_are_the_public_four() -> None:
    proc = subprocess.run([*HARNESS, "serve", "--help"], capture_output=True, timeout=30, check=True)
    for name in STRATEGIES:
        assert name in proc.stdout.decode()
