"""Interop over HTTP, stateless: the official SDK client (mcp 2.3.0) drives ``harness serve --demo --http``.

Pinned to 2026-07-28 it sends no handshake; in auto mode it sends
``server/discover`` first and must settle on 2026-07-28. Either way: the tool
list, ``add``, and a failing tool whose reason arrives as an ``isError`` result.
The first test runs the real command; the second serves the same lab in process
behind a recorder, to see what crossed: self-contained POSTs with their routing
headers, no ``initialize``, no session, no GET or DELETE. The last answers a tool
that asks for input, in both eras (``harness serve --conformance --http``).
"""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import anyio
import mcp_types as types
import pytest
from helpers.live_http import live_http
from mcp import Client
from mcp.shared.exceptions import MCPError

from harness.fixtures.demo import build_demo_server
from harness.protocol.versions import META_PROTOCOL_VERSION, STATELESS_VERSION
from harness.transports.http import StreamableHTTP

pytestmark = pytest.mark.interop

MODES = pytest.mark.parametrize("mode", ["2026-07-28", "auto"], ids=["pinned", "auto"])


async def drive(url: str, mode: str) -> dict[str, Any]:
    seen: dict[str, Any] = {}
    async with Client(url, mode=mode, read_timeout_seconds=20) as client:
        seen["tools"] = [t.name for t in (await client.list_tools()).tools]
        seen["add"] = await client.call_tool("add", {"x": 2, "y": 3})
        seen["weather"] = await client.call_tool("weather", {"city": "Atlantis"})
        with pytest.raises(MCPError) as info:
            await client.call_tool("delete_db", {})
        seen["delete_db"] = info.value
        seen["version"] = client.protocol_version
    return seen


def check(seen: dict[str, Any]) -> None:
    assert seen["version"] == STATELESS_VERSION
    assert seen["tools"] == ["add", "weather", "delete_db"]
    assert not seen["add"].is_error and seen["add"].content[0].text == "5"
    assert seen["weather"].is_error is True
    assert seen["weather"].content[0].text == "ERROR: no station near Atlantis"
    assert seen["delete_db"].code == -32600  # not allow-listed: a protocol error in both eras


def serve_http(lab: str) -> Iterator[str]:
    """``harness serve LAB --http --port 0``; its endpoint, read from the line it logs."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "harness.cli.main", "serve", lab, "--http", "--port", "0"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stderr is not None
    try:
        line = proc.stderr.readline()
        found = re.search(r"listening on (http://\S+)", line)
        assert found, line
        yield found.group(1)
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=10)
        proc.stderr.close()


@pytest.fixture(scope="module")
def serve_url() -> Iterator[str]:
    """``harness serve --demo --http --port 0``."""
    yield from serve_http("--demo")


@MODES
def test_sdk_client_lists_calls_and_sees_errors_over_http_statelessly(serve_url: str, mode: str) -> None:
    check(anyio.run(drive, serve_url, mode))


class Recorder:
    """ASGI middleware keeping (method, headers, body) of every HTTP request and the response headers."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.requests: list[tuple[str, dict[str, str], Any]] = []
        self.response_headers: list[dict[str, str]] = []

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        chunks: list[bytes] = []

        async def recording_receive() -> Any:
            event = await receive()
            chunks.append(event.get("body", b""))
            return event

        async def recording_send(event: Any) -> None:
            if event["type"] == "http.response.start":
                self.response_headers.append({k.decode(): v.decode() for k, v in event["headers"]})
            await send(event)

        headers = {k.decode(): v.decode() for k, v in scope["headers"]}
        await self.app(scope, recording_receive, recording_send)
        body = b"".join(chunks)
        self.requests.append((scope["method"], headers, json.loads(body) if body else None))


@pytest.fixture
def recorded() -> Iterator[tuple[str, Recorder]]:
    transport = StreamableHTTP(build_demo_server)
    recorder = Recorder(transport.app)
    with live_http(transport, recorder) as url:
        yield url, recorder


@MODES
def test_every_request_is_one_self_contained_post_with_its_headers(
    recorded: tuple[str, Recorder], mode: str
) -> None:
    url, recorder = recorded
    check(anyio.run(drive, url, mode))
    methods = [body["method"] for verb, _, body in recorder.requests if body is not None]
    assert {verb for verb, _, _ in recorder.requests} == {"POST"}
    assert "initialize" not in methods and "notifications/initialized" not in methods
    if mode == "auto":
        assert methods[0] == "server/discover"
    for _, headers, body in recorder.requests:
        assert headers["mcp-protocol-version"] == STATELESS_VERSION
        assert headers["mcp-method"] == body["method"]
        assert body["params"]["_meta"][META_PROTOCOL_VERSION] == STATELESS_VERSION
        if body["method"] == "tools/call":
            assert headers["mcp-name"] == body["params"]["name"]
    assert not any("mcp-session-id" in h for h in recorder.response_headers)


@pytest.fixture(scope="module")
def conformance_url() -> Iterator[str]:
    """``harness serve --conformance --http --port 0``: its tools ask the client for input."""
    yield from serve_http("--conformance")


@pytest.mark.parametrize(
    ("mode", "version"),
    [("2026-07-28", STATELESS_VERSION), ("auto", STATELESS_VERSION), ("legacy", "2025-11-25")],
    ids=["mrtr-pinned", "mrtr-auto", "sse-legacy"],
)
def test_sdk_client_answers_a_tool_that_asks_for_input(conformance_url: str, mode: str, version: str) -> None:
    """MRTR in the stateless era; in the handshake era a request on the call's SSE stream."""
    asked: list[str] = []

    async def accept(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(params.message)
        return types.ElicitResult(action="accept", content={"username": "ada", "email": "ada@example.org"})

    async def session() -> tuple[Any, str | None]:
        async with Client(
            conformance_url, mode=mode, elicitation_callback=accept, read_timeout_seconds=20
        ) as c:
            return await c.call_tool("test_elicitation", {"message": "Who?"}), c.protocol_version

    result, settled = anyio.run(session)
    assert settled == version
    assert asked == ["Who?"]
    assert result.is_error is False
    assert result.content[0].text == (
        'User response: action=accept, content={"email":"ada@example.org","username":"ada"}'
    )
