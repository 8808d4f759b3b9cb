"""``harness proxy`` as a process: our client on its stdin/stdout, a real server process behind it.

The upstreams are ``harness serve --demo`` (whose ``weather("Atlantis")`` is a real isError with
the reason) and the peers in ``tests/peers`` that die, hang, or write garbage.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.protocol import MCPClient
from harness.protocol.errors import RPCError
from harness.transports import StdioTransport
from harness.transports.stdio import bounded_lines, fd_lines
from tests.proxy.conftest import HARNESS, PEERS, REPO, proxy

FAULTS = """
[[faults]]
kind = "transient"
tool = "weather"
rate = 0.5

[[faults]]
kind = "stale"
tool = "weather"
rate = 0.3

[[events]]
kind = "remove_tool"
tool = "add"
at_call = 4
"""


def connect(argv: list[str], timeout: float = 30.0) -> tuple[MCPClient, StdioTransport]:
    transport = StdioTransport(argv, timeout=timeout, cwd=str(REPO))
    client = MCPClient(transport)
    client.initialize()
    return client, transport


def notifications(transport: StdioTransport, wait: float = 5.0) -> list[Any]:
    """What the proxy sent outside replies, waiting a little for the first of it."""
    deadline = time.monotonic() + wait
    got: list[Any] = []
    while not got and time.monotonic() < deadline:
        got = transport.take_notifications()
        time.sleep(0.02)
    return got


def stop(client: MCPClient, transport: StdioTransport) -> list[str]:
    """Close the client (the proxy sees the end of stdin); the proxy's stderr lines."""
    client.close()
    transport.process.wait(timeout=20)
    time.sleep(0.1)
    return [line for line in transport.stderr_lines if line.startswith("harness proxy:")]


def summary(lines: list[str]) -> dict[str, Any]:
    (line,) = [x for x in lines if x.startswith("harness proxy: summary: ")]
    parsed: dict[str, Any] = json.loads(line.removeprefix("harness proxy: summary: "))
    return parsed


def outcome(call: Any) -> Any:
    try:
        return call()
    except RPCError as exc:
        return {"error": exc.code, "message": exc.message}


@pytest.mark.parametrize(
    ("strategy", "expected"),
    [
        (
            "is_error",
            {"content": [{"type": "text", "text": "ERROR: no station near Atlantis"}], "isError": True},
        ),
        ("masked", {"content": [{"type": "text", "text": "Error executing tool weather"}], "isError": True}),
        ("collapse", {"error": -32603, "message": "ERROR: no station near Atlantis"}),
        (
            "input_required",
            {"content": [{"type": "text", "text": "ERROR: no station near Atlantis"}], "isError": True},
        ),
    ],
)
def test_each_strategy_rewrites_a_real_is_error(strategy: str, expected: Any) -> None:
    client, transport = connect(proxy("--strategy", strategy))
    assert outcome(lambda: client.call_tool("weather", {"city": "Atlantis"})) == expected
    assert client.call_tool("add", {"x": 2, "y": 3}) == {"content": [{"type": "text", "text": "5"}]}
    lines = stop(client, transport)
    rewrites = {} if strategy in ("is_error", "input_required") else {strategy: 1}
    assert summary(lines)["rewrites"] == rewrites


def test_escape_ends_the_real_server_and_the_client_still_gets_answers() -> None:
    client, transport = connect(proxy("--strategy", "escape"))
    crashed = outcome(lambda: client.call_tool("weather", {"city": "Atlantis"}))
    assert crashed["error"] == -32603 and "crashed" in crashed["message"]
    after = outcome(lambda: client.call_tool("add", {"x": 1, "y": 1}))
    assert after["error"] == -32603
    lines = stop(client, transport)
    assert summary(lines)["upstream"] == {"crashed": 1}


def _session(tmp: Path, seed: int, name: str) -> tuple[bytes, list[Any], list[str]]:
    faults = tmp / "faults.toml"
    faults.write_text(FAULTS)
    trace = tmp / f"{name}.jsonl"
    client, transport = connect(proxy("--faults", str(faults), "--seed", str(seed), "--trace", str(trace)))
    seen = [[t["name"] for t in client.list_tools()]]
    for _ in range(6):
        seen.append(outcome(lambda: client.call_tool("weather", {"city": "Oslo"})))
    seen.append(outcome(lambda: client.call_tool("add", {"x": 1, "y": 1})))
    seen.append(notifications(transport))
    lines = stop(client, transport)
    return trace.read_bytes(), seen, lines


def test_a_seeded_fault_schedule_replays_byte_for_byte(tmp_path: Path) -> None:
    first, seen, lines = _session(tmp_path, 7, "a")
    again, _, _ = _session(tmp_path, 7, "b")
    other, _, _ = _session(tmp_path, 8, "c")
    assert first == again
    assert first != other
    facts = summary(lines)
    assert facts["faults"] and facts["events"] == {"remove_tool": 1}
    assert seen[-2] == {"error": -32601, "message": "unknown tool 'add'"}
    records = [json.loads(x) for x in first.splitlines()]
    assert {r["dir"] for r in records} == {"c2s", "s2c", "p2u", "u2p", "harness"}
    assert records[-1]["summary"] == facts


def test_a_list_change_event_reaches_the_client(tmp_path: Path) -> None:
    faults = tmp_path / "events.toml"
    faults.write_text('[[events]]\nkind = "add_tool"\ntool = "add"\nat_call = 1\n')
    client, transport = connect(proxy("--faults", str(faults)))
    assert [t["name"] for t in client.list_tools()] == ["weather", "delete_db"]
    client.call_tool("weather", {"city": "Oslo"})
    assert notifications(transport) == [{"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}]
    assert [t["name"] for t in client.list_tools()] == ["add", "weather", "delete_db"]
    stop(client, transport)


def test_faults_naming_a_tool_the_server_lacks_are_a_warning_listing_its_tools(tmp_path: Path) -> None:
    faults = tmp_path / "f.toml"
    faults.write_text('[[faults]]\nkind = "permanent"\ntool = "wether"\nrate = 1.0\n')
    client, transport = connect(proxy("--faults", str(faults)))
    client.list_tools()
    lines = stop(client, transport)
    warnings = [x for x in lines if "warning" in x]
    assert warnings == [
        f"harness proxy: warning: {faults}: tool 'wether' is not a tool of this server "
        "(its tools: add, weather, delete_db); its rules and events wait for a tool of that name"
    ]


@pytest.mark.parametrize(
    ("peer", "says", "stderr"),
    [
        (
            "exit_server.py",
            "exited with code 3: exit_server: refusing to serve",
            "upstream exited with code 3",
        ),
        ("silent_server.py", "did not answer within 1 s", "upstream did not answer initialize within 1 s"),
        ("garbage_server.py", "not JSON-RPC", "upstream wrote something that is not JSON-RPC"),
    ],
    ids=["dies", "hangs", "garbage"],
)
def test_a_broken_upstream_is_answered_with_internal_error_and_one_line(
    peer: str, says: str, stderr: str
) -> None:
    transport = StdioTransport(
        proxy("--timeout", "1", upstream=(sys.executable, str(PEERS / peer))), timeout=20
    )
    client = MCPClient(transport)
    # The proxy's own answer (its -32603 names the cause) shows it did not wait out the
    # client's 20 s transport timeout; no wall-clock bound, which a loaded machine breaks.
    with pytest.raises(RPCError) as info:
        client.initialize()
    assert info.value.code == -32603 and says in info.value.message
    with pytest.raises(RPCError):
        client.request("ping")
    lines = stop(client, transport)
    troubles = [x for x in lines if "warning" in x]
    assert len(troubles) == 1 and stderr in troubles[0]


def test_input_the_client_ends_early_is_still_answered() -> None:
    lines = [
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "t", "version": "0"},
            },
        },
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {"name": "add", "arguments": {"x": 2, "y": 2}},
        },
    ]
    data = "".join(json.dumps(x) + "\n" for x in lines) + "not json\n"
    done = subprocess.run(proxy(), input=data, capture_output=True, text=True, timeout=60, cwd=REPO)
    replies = [json.loads(x) for x in done.stdout.splitlines()]
    assert {r["id"] for r in replies} == {1, 2, None}
    assert next(r for r in replies if r["id"] is None)["error"]["code"] == -32700
    assert done.returncode == 0


def test_a_broken_faults_file_is_one_line_and_exit_2(tmp_path: Path) -> None:
    faults = tmp_path / "bad.toml"
    faults.write_text('[[faults]]\nkind = "transient"\ntool = "weather"\nrate = 2\n')
    done = subprocess.run(
        [*HARNESS, "proxy", "--faults", str(faults), "--", "true"], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 2
    assert done.stderr.splitlines() == [
        f"harness: error: {faults}: faults[0].rate: must be a number between 0 and 1, got 2"
    ]


def test_an_upstream_line_past_max_message_is_dropped_unread_and_the_request_gets_an_error() -> None:
    """A server that answers with 20 MB on one line (issue 49, item 3): the proxy reads past it with
    its memory bounded, and the client's request gets -32603 after the grace, saying why."""
    client, transport = connect(
        proxy(
            "--max-message",
            "65536",
            upstream=(sys.executable, str(PEERS / "huge_line_server.py"), "20000000"),
        )
    )
    with pytest.raises(RPCError) as caught:
        client.request("tools/list", {})
    assert caught.value.code == -32603 and "larger than 65536 bytes" in str(caught.value)
    lines = stop(client, transport)
    assert any("larger than 65536 bytes (--max-message)" in line for line in lines)


def test_a_client_line_past_max_message_gets_32600_and_the_session_goes_on(tmp_path: Path) -> None:
    big = json.dumps({"jsonrpc": "2.0", "id": 7, "method": "ping", "params": {"pad": "x" * 200_000}})
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18",
            "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}}  # fmt: skip
    lines = [json.dumps(init), big, json.dumps({"jsonrpc": "2.0", "id": 8, "method": "ping"})]
    done = subprocess.run(
        proxy("--max-message", "65536"), input="\n".join(lines) + "\n", capture_output=True, text=True,
        timeout=60, cwd=str(REPO),
    )  # fmt: skip
    replies = [json.loads(line) for line in done.stdout.splitlines() if line.strip()]
    oversized = [r for r in replies if r.get("id") is None and "error" in r]
    assert oversized and oversized[0]["error"]["code"] == -32600
    assert "larger than 65536 bytes" in oversized[0]["error"]["message"]
    assert any(r.get("id") == 8 and "result" in r for r in replies)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.sampled_from([b"a", b"bc", b"\n", b"\r\n", b"x" * 40, b"{}"]), max_size=40),
    st.integers(4, 64),
)
def test_the_client_reader_by_descriptor_gives_what_the_plain_bounded_reader_gives(
    pieces: list[bytes], limit: int
) -> None:
    """``fd_lines`` reads a real file by its descriptor (a shortcut past Python's buffer); it
    yields the lines and the None of each oversized one exactly as ``bounded_lines`` does."""
    data = b"".join(pieces)
    read, write = os.pipe()
    with os.fdopen(write, "wb") as w:
        w.write(data)
    with os.fdopen(read, "rb") as r:
        by_fd = list(fd_lines(r, limit))
    plain = [None if line is None else line.rstrip(b"\n") for line in bounded_lines(io.BytesIO(data), limit)]
    assert [None if x is None else x.rstrip(b"\r") for x in by_fd] == [
        None if x is None else x.rstrip(b"\r") for x in plain
    ]
