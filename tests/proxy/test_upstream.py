"""The HTTP upstream keeps the order of what the proxy sends: a notification reaches the server
before anything sent after it (an initialized before the first call, else "server not
initialized")."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest

import harness.transports.http_client as http_client
from harness.protocol.messages import Message
from harness.proxy.upstream import Handlers, HTTPUpstream, exit_reason


class SlowNotices:
    """A Streamable HTTP client whose notification POSTs are slow to be accepted."""

    def __init__(self, url: str, **kw: Any) -> None:
        self.arrived: list[str] = []
        self.on_request: Any = None

    def send(self, message: Message) -> Message | None:
        if "id" not in message:
            time.sleep(0.2)
            self.arrived.append(str(message["method"]))
            return None
        self.arrived.append(str(message["method"]))
        return {"jsonrpc": "2.0", "id": message["id"], "result": {}}

    def take_notifications(self) -> list[Message]:
        return []

    def close(self) -> None:
        pass


def test_a_notification_reaches_the_server_before_the_call_sent_after_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(http_client, "HTTPClientTransport", SlowNotices)
    replies: list[Message] = []
    answered = threading.Event()

    def message(m: Message) -> None:
        replies.append(m)
        answered.set()

    upstream = HTTPUpstream("http://127.0.0.1:9/mcp")
    upstream.start(Handlers(message=message, garbage=print, gone=print, failed=print))
    upstream.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    upstream.send({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "add"}})
    assert answered.wait(5)
    upstream.close()
    assert upstream.transport.arrived == ["notifications/initialized", "tools/call"]
    assert replies == [{"jsonrpc": "2.0", "id": 2, "result": {}}]


@pytest.mark.parametrize(
    ("code", "stderr", "said"),
    [
        (-9, "Starting default (STDIO) server...", "was killed by SIGKILL (exit status -9)"),
        (-15, "", "was killed by SIGTERM (exit status -15)"),
        (
            1,
            "ValueError: no station near Atlantis",
            "exited with code 1: ValueError: no station near Atlantis",
        ),
        (3, "exit_server: refusing to serve", "exited with code 3: exit_server: refusing to serve"),
        (0, "INFO     Processing request of type ListToolsRequest", "exited with code 0"),
        (None, "", "closed its output"),
    ],
)
def test_an_exit_is_said_by_its_status_and_a_last_stderr_line_only_when_it_reads_as_an_error(
    code: int | None, stderr: str, said: str
) -> None:
    assert exit_reason(code, stderr) == said


def test_an_http_servers_reply_past_max_message_fails_its_request_and_is_not_held() -> None:
    """Issue 49: the HTTP upstream bounds what it reads as the stdio one does."""
    from helpers.live_http import live_http
    from starlette.requests import Request
    from starlette.responses import JSONResponse

    from harness.fixtures.conformance import build_conformance_server
    from harness.transports.http import StreamableHTTP

    async def app(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        body = await Request(scope, receive).json()
        reply = {"jsonrpc": "2.0", "id": body.get("id"), "result": {"pad": "x" * 100_000}}
        await JSONResponse(reply, headers={"Mcp-Session-Id": "s"})(scope, receive, send)

    failed: list[tuple[Any, str]] = []
    done = threading.Event()

    def fail(rid: Any, why: str) -> None:
        failed.append((rid, why))
        done.set()

    transport = StreamableHTTP(lambda: build_conformance_server())
    with live_http(transport, app) as url:
        upstream = HTTPUpstream(url, timeout=5, max_message=4096)
        upstream.start(Handlers(message=print, garbage=print, gone=print, failed=fail))
        upstream.send({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
        assert done.wait(10)
        upstream.close()
    assert failed == [(1, "the server sent a message larger than 4096 bytes (max_message)")]
