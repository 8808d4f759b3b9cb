"""stdio: serve_stdio (server side, in process) and StdioTransport (client side, a real subprocess)."""

from __future__ import annotations

import contextlib
import io
import json
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers.mcp_schema import WireChecker
from helpers.pair import CheckedTransport, strict_loads, text_of

from harness.fixtures.demo import add_subtract, build_demo_server
from harness.protocol import MCPClient, TransportError
from harness.transports import StdioTransport
from harness.transports.stdio import serve_stdio

SERVE_DEMO = [sys.executable, "-m", "harness.cli.main", "serve", "--demo"]


def serve_lines(lines: list[bytes], strategy: str = "is_error") -> list[dict[str, object]]:
    """Run serve_stdio over in-memory pipes; the parsed output lines, each checked."""
    out = io.BytesIO()
    serve_stdio(build_demo_server(strategy), io.BytesIO(b"".join(lines)), out)
    checker = WireChecker()
    for line in lines:
        with contextlib.suppress(ValueError):
            checker.client_sent(strict_loads(line))
    replies = [strict_loads(x) for x in out.getvalue().splitlines()]
    for reply in replies:
        checker.server_sent(reply)
    return replies


INIT = (
    json.dumps(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t"}},
        }
    ).encode()
    + b"\n"
)
READY = b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n'


def test_serve_stdio_answers_a_garbage_line_with_parse_error_and_serves_the_next() -> None:
    replies = serve_lines([b"this is not json\n", b'{"jsonrpc":"2.0","id":2,"method":"ping"}\n'])
    assert replies[0]["id"] is None and replies[0]["error"]["code"] == -32700  # type: ignore[index]
    assert replies[1] == {"jsonrpc": "2.0", "id": 2, "result": {}}


def test_serve_stdio_writes_nothing_for_notifications_and_skips_blank_lines() -> None:
    replies = serve_lines([INIT, b"\n", b"   \n", READY, b'{"jsonrpc":"2.0","id":"p","method":"ping"}\n'])
    assert [r["id"] for r in replies] == [1, "p"]


def test_serve_stdio_handles_crlf_and_a_last_line_without_newline() -> None:
    replies = serve_lines(
        [b'{"jsonrpc":"2.0","id":1,"method":"ping"}\r\n', b'{"jsonrpc":"2.0","id":2,"method":"ping"}']
    )
    assert [r["id"] for r in replies] == [1, 2]


def test_serve_stdio_lets_an_escaping_tool_exception_out() -> None:
    params = {"name": "weather", "arguments": {"city": "Atlantis"}}
    call = json.dumps({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": params}).encode() + b"\n"
    with pytest.raises(ValueError, match="no station near Atlantis"):
        serve_stdio(build_demo_server("escape"), io.BytesIO(INIT + READY + call), io.BytesIO())


# -- StdioTransport against a live `harness serve --demo` ---------------------------------------


@pytest.fixture
def live() -> Iterator[tuple[MCPClient, CheckedTransport, StdioTransport]]:
    stdio = StdioTransport(SERVE_DEMO, timeout=10)
    checked = CheckedTransport(stdio)
    client = MCPClient(checked)
    try:
        yield client, checked, stdio
    finally:
        stdio.close()


def test_a_full_session_over_stdio(live: tuple[MCPClient, CheckedTransport, StdioTransport]) -> None:
    client, checked, stdio = live
    client.initialize()
    assert client.protocol_version == "2025-11-25"
    assert [t["name"] for t in client.list_tools()] == ["add", "weather", "delete_db"]
    assert text_of(client.call_tool("add", {"x": 2, "y": 3})) == "5"
    failed = client.call_tool("weather", {"city": "Atlantis"})
    assert failed["isError"] is True and text_of(failed) == "ERROR: no station near Atlantis"
    with pytest.raises(Exception) as info:
        client.call_tool("delete_db", {})
    assert getattr(info.value, "code", None) == -32600
    assert client.ping() == {}
    assert len(checked.checker.server_messages) == 6
    assert stdio.garbage == []
    assert any("serving over stdio" in line for line in _stderr(stdio))


def _stderr(stdio: StdioTransport) -> list[str]:
    stdio.close()
    return stdio.stderr_lines


def test_stdio_garbage_gets_parse_error_and_the_next_line_is_served(
    live: tuple[MCPClient, CheckedTransport, StdioTransport],
) -> None:
    client, _, stdio = live
    for garbage in (b"garbage", b"\xff\xfe\xfd", b'{"jsonrpc":"2.0","id":', b"[]"):
        stdio.write_raw(garbage)
        reply = stdio.next_message(10)
        assert reply is not None and reply["id"] is None
        assert reply["error"]["code"] in (-32700, -32600)
    client.initialize()
    assert text_of(client.call_tool("add", {"x": 1, "y": 1})) == "2"


def test_stdio_client_reports_a_dead_server_as_transport_error() -> None:
    stdio = StdioTransport([*SERVE_DEMO, "--strategy", "escape"], timeout=10)
    client = MCPClient(stdio)
    try:
        client.initialize()
        with pytest.raises(TransportError, match="exited with code 1"):
            client.call_tool("weather", {"city": "Atlantis"})
        assert stdio.process.returncode not in (0, None)
        with pytest.raises(TransportError):
            client.ping()
    finally:
        stdio.close()


def test_a_command_that_does_not_exist_is_a_transport_error() -> None:
    with pytest.raises(TransportError, match="cannot start"):
        StdioTransport(["/nonexistent/mcp-server"])


def test_an_empty_command_is_refused() -> None:
    with pytest.raises(ValueError):
        StdioTransport([])


def _script(tmp_path: Path, body: str) -> list[str]:
    path = tmp_path / "peer.py"
    path.write_text(textwrap.dedent(body))
    return [sys.executable, str(path)]


def test_a_server_that_never_answers_times_out(tmp_path: Path) -> None:
    cmd = _script(tmp_path, "import sys\nfor line in sys.stdin:\n    pass\n")
    with StdioTransport(cmd, timeout=0.3) as stdio, pytest.raises(TransportError, match=r"within 0\.3s"):
        MCPClient(stdio).ping()


def test_stray_output_is_kept_as_garbage_and_late_replies_are_ignored(tmp_path: Path) -> None:
    cmd = _script(
        tmp_path,
        """
        import json, sys
        for line in sys.stdin:
            msg = json.loads(line)
            print("log noise on stdout", flush=True)
            print(json.dumps({"jsonrpc": "2.0", "id": 999, "result": {}}), flush=True)  # a late answer
            print(json.dumps({"jsonrpc": "2.0", "method": "notifications/message",
                              "params": {"level": "info", "data": "hi"}}), flush=True)
            print(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": {}}), flush=True)
        """,
    )
    with StdioTransport(cmd, timeout=10) as stdio:
        assert MCPClient(stdio).ping() == {}
        assert stdio.garbage == [b"log noise on stdout"]
        assert [n["method"] for n in stdio.take_notifications()] == ["notifications/message"]


def test_the_client_answers_a_server_ping_and_refuses_other_server_requests(tmp_path: Path) -> None:
    cmd = _script(
        tmp_path,
        """
        import json, sys
        first = json.loads(sys.stdin.readline())
        print(json.dumps({"jsonrpc": "2.0", "id": "s1", "method": "ping"}), flush=True)
        print(json.dumps({"jsonrpc": "2.0", "id": "s2", "method": "sampling/createMessage"}), flush=True)
        answers = [json.loads(sys.stdin.readline()), json.loads(sys.stdin.readline())]
        print(json.dumps({"jsonrpc": "2.0", "id": first["id"], "result": {"answers": answers}}), flush=True)
        """,
    )
    with StdioTransport(cmd, timeout=10) as stdio:
        answers = MCPClient(stdio).ping()["answers"]
    assert answers[0] == {"jsonrpc": "2.0", "id": "s1", "result": {}}
    assert answers[1]["id"] == "s2" and answers[1]["error"]["code"] == -32601


def test_list_changed_crosses_stdio_after_a_request() -> None:
    # serve_stdio drains the outbox after each line; a mid-session registration shows up
    server = build_demo_server()
    lines = [INIT, READY]
    out = io.BytesIO()
    serve_stdio(server, io.BytesIO(b"".join(lines)), out)
    add_subtract(server)
    serve_stdio(server, io.BytesIO(b'{"jsonrpc":"2.0","id":3,"method":"ping"}\n'), out)
    tail = [json.loads(x) for x in out.getvalue().splitlines()][-2:]
    assert tail == [
        {"jsonrpc": "2.0", "id": 3, "result": {}},
        {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"},
    ]
