"""The Streamable HTTP transport: sessions, status codes, SSE, DNS-rebinding checks.

Most tests drive the ASGI app in-process with starlette's TestClient; the GET
stream and the official SDK client need a live uvicorn on 127.0.0.1 (a free
port, picked by binding port 0), started in a thread per test module.
"""

from __future__ import annotations

import json
import logging
import re
import signal
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import anyio
import httpx
import pytest
from helpers.live_http import live_http
from starlette.testclient import TestClient

from harness.fixtures.conformance import build_conformance_server
from harness.fixtures.demo import build_demo_server
from harness.protocol import LATEST_VERSION, MCPServer
from harness.transports.http import SESSION_HEADER, VERSION_HEADER, EvictionLog, StreamableHTTP, bind_socket

ACCEPT_BOTH = {"Accept": "application/json, text/event-stream"}
INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": LATEST_VERSION,
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "0"},
    },
}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}


def call(id_: int, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    msg: dict[str, Any] = {"jsonrpc": "2.0", "id": id_, "method": method}
    if params is not None:
        msg["params"] = params
    return msg


def growing_server() -> MCPServer:
    """The demo lab plus a tool ``grow`` that registers a tool with notify=True (queues list_changed)."""
    server = build_demo_server()

    def grow() -> str:
        server.add_tool("grown", lambda: "grown", description="Added at run time.", notify=True)
        return "grew"

    server.add_tool("grow", grow, description="Register the tool 'grown'.")
    server.set_allowed_tools(None)
    return server


def make_client(factory: Any = build_demo_server, **options: Any) -> TestClient:
    return TestClient(StreamableHTTP(factory, **options).app, base_url="http://127.0.0.1:8000")


def open_session(client: TestClient) -> str:
    """Initialize and send notifications/initialized; the session id."""
    reply = client.post("/mcp", json=INIT, headers=ACCEPT_BOTH)
    assert reply.status_code == 200
    sid = reply.headers[SESSION_HEADER]
    assert (
        client.post("/mcp", json=INITIALIZED, headers={**ACCEPT_BOTH, SESSION_HEADER: sid}).status_code == 202
    )
    return sid


def post(client: TestClient, sid: str | None, body: Any, **headers: str) -> Any:
    """POST one message (a dict, or raw bytes); the response (httpx2's or httpx's, as starlette has)."""
    sent = {**ACCEPT_BOTH, **headers}
    if sid is not None:
        sent[SESSION_HEADER] = sid
    if isinstance(body, bytes | str):
        return client.post("/mcp", content=body, headers={"Content-Type": "application/json", **sent})
    return client.post("/mcp", json=body, headers=sent)


@pytest.fixture
def client() -> Iterator[TestClient]:
    with make_client() as c:
        yield c


class TestSessions:
    def test_initialize_issues_a_fresh_session_id_each_time(self, client: TestClient) -> None:
        first = client.post("/mcp", json=INIT, headers=ACCEPT_BOTH)
        second = client.post("/mcp", json=INIT, headers=ACCEPT_BOTH)
        assert first.status_code == second.status_code == 200
        assert first.headers["content-type"].startswith("application/json")
        assert first.json()["result"]["serverInfo"]["name"] == "harness-demo"
        assert first.headers[SESSION_HEADER] != second.headers[SESSION_HEADER]
        assert first.headers[SESSION_HEADER].isalnum()

    def test_a_request_without_a_session_id_gets_400_with_a_jsonrpc_error(self, client: TestClient) -> None:
        reply = post(client, None, call(7, "tools/list"))
        assert reply.status_code == 400
        assert reply.json()["id"] == 7
        assert reply.json()["error"]["code"] == -32600
        assert SESSION_HEADER in reply.json()["error"]["message"]

    def test_an_unknown_session_id_gets_404(self, client: TestClient) -> None:
        open_session(client)
        reply = post(client, "nope", call(2, "tools/list"))
        assert reply.status_code == 404
        assert reply.json()["error"]["code"] == -32600

    def test_a_refused_initialize_opens_no_session(self, client: TestClient) -> None:
        reply = post(client, None, call(1, "initialize", {"capabilities": {}}))
        assert reply.status_code == 200
        assert reply.json()["error"]["code"] == -32602
        assert SESSION_HEADER not in reply.headers

    def test_sessions_are_separate_servers(self, client: TestClient) -> None:
        ready = open_session(client)
        fresh = client.post("/mcp", json=INIT, headers=ACCEPT_BOTH).headers[SESSION_HEADER]
        assert "result" in post(client, ready, call(2, "tools/list")).json()
        gated = post(client, fresh, call(2, "tools/list")).json()
        assert gated["error"] == {"code": -32600, "message": "server not initialized"}

    def test_a_tools_call_is_answered_with_json_in_its_session(self, client: TestClient) -> None:
        sid = open_session(client)
        reply = post(client, sid, call(3, "tools/call", {"name": "add", "arguments": {"x": 2, "y": 3}}))
        assert reply.status_code == 200
        assert reply.json() == {
            "jsonrpc": "2.0",
            "id": 3,
            "result": {"content": [{"type": "text", "text": "5"}]},
        }

    def test_the_least_recently_used_session_is_evicted_past_max_sessions(self) -> None:
        with make_client(max_sessions=2) as c:
            first, second = open_session(c), open_session(c)
            assert post(c, first, call(2, "ping")).status_code == 200  # first is now the most recent
            open_session(c)
            assert post(c, second, call(3, "ping")).status_code == 404
            assert post(c, first, call(4, "ping")).status_code == 200


class TestStatusCodes:
    def test_a_notification_gets_202_and_no_body(self, client: TestClient) -> None:
        sid = open_session(client)
        reply = post(client, sid, {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {}})
        assert reply.status_code == 202
        assert reply.content == b""

    def test_a_response_from_the_client_gets_202(self, client: TestClient) -> None:
        sid = open_session(client)
        assert post(client, sid, {"jsonrpc": "2.0", "id": 99, "result": {}}).status_code == 202

    def test_bad_json_gets_400_with_parse_error_and_null_id(self, client: TestClient) -> None:
        reply = post(client, None, b'{"jsonrpc": "2.0", "id": 1, "method": ')
        assert reply.status_code == 400
        body = reply.json()
        assert body["id"] is None
        assert body["error"]["code"] == -32700

    def test_nan_is_not_json(self, client: TestClient) -> None:
        assert (
            post(client, None, b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":NaN}}').status_code
            == 400
        )

    def test_a_batch_gets_400_invalid_request(self, client: TestClient) -> None:
        reply = post(client, None, [call(1, "ping")])
        assert reply.status_code == 400
        assert reply.json()["error"]["code"] == -32600

    def test_a_non_object_gets_400(self, client: TestClient) -> None:
        assert post(client, None, b"42").json()["error"]["code"] == -32600

    def test_a_bad_envelope_gets_400_with_its_id(self, client: TestClient) -> None:
        sid = open_session(client)
        reply = post(client, sid, {"jsonrpc": "1.0", "id": 5, "method": "ping"})
        assert reply.status_code == 400
        assert reply.json()["id"] == 5
        assert reply.json()["error"]["code"] == -32600

    def test_a_non_json_content_type_gets_415(self, client: TestClient) -> None:
        reply = client.post(
            "/mcp", content=json.dumps(INIT), headers={**ACCEPT_BOTH, "Content-Type": "text/plain"}
        )
        assert reply.status_code == 415

    def test_an_accept_that_rules_out_json_gets_406(self, client: TestClient) -> None:
        assert client.post("/mcp", json=INIT, headers={"Accept": "text/html"}).status_code == 406

    def test_a_body_over_the_limit_gets_413(self) -> None:
        with make_client(max_body_bytes=64) as c:
            reply = post(c, None, {"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"pad": "x" * 100}})
            assert reply.status_code == 413

    def test_a_body_over_the_server_s_max_message_bytes_gets_413(self) -> None:
        def small() -> MCPServer:
            server = build_demo_server()
            server.max_message_bytes = 300
            return server

        with make_client(small) as c:
            assert post(c, None, {**INIT, "pad": "x" * 300}).status_code == 413
            sid = open_session(c)
            padded = call(2, "ping", {"pad": "x" * 300})
            reply = post(c, sid, padded)
            assert reply.status_code == 413
            assert reply.json()["id"] == 2
            assert post(c, sid, call(3, "ping")).status_code == 200

    def test_other_methods_get_405(self, client: TestClient) -> None:
        assert client.put("/mcp", json=INIT).status_code == 405

    def test_an_escaping_tool_drops_the_session_with_500(self) -> None:
        with make_client(lambda: build_demo_server("escape")) as c:
            sid = open_session(c)
            args = {"name": "weather", "arguments": {"city": "Atlantis"}}
            assert post(c, sid, call(2, "tools/call", args)).status_code == 500
            assert post(c, sid, call(3, "ping")).status_code == 404


class TestProtocolVersionHeader:
    @pytest.mark.parametrize("version", ["2025-03-26", "2025-06-18", LATEST_VERSION])
    def test_a_supported_version_is_accepted(self, client: TestClient, version: str) -> None:
        sid = open_session(client)
        assert post(client, sid, call(2, "ping"), **{VERSION_HEADER: version}).status_code == 200

    @pytest.mark.parametrize("version", ["2099-01-01", "latest"])  # 2026-07-28: test_http_stateless.py
    def test_an_unsupported_version_gets_400(self, client: TestClient, version: str) -> None:
        sid = open_session(client)
        reply = post(client, sid, call(2, "ping"), **{VERSION_HEADER: version})
        assert reply.status_code == 400
        assert reply.json()["error"]["code"] == -32600
        assert version in reply.json()["error"]["message"]

    def test_no_header_is_taken_as_an_older_client(self, client: TestClient) -> None:
        sid = open_session(client)
        assert post(client, sid, call(2, "ping")).status_code == 200


class TestDelete:
    def test_delete_ends_the_session(self, client: TestClient) -> None:
        sid = open_session(client)
        assert client.delete("/mcp", headers={SESSION_HEADER: sid}).status_code == 200
        assert post(client, sid, call(2, "ping")).status_code == 404
        assert client.delete("/mcp", headers={SESSION_HEADER: sid}).status_code == 404

    def test_delete_without_a_session_id_gets_400(self, client: TestClient) -> None:
        assert client.delete("/mcp").status_code == 400


class TestOriginAndHost:
    @pytest.mark.parametrize(
        "origin", ["http://evil.example.com", "https://127.0.0.1.evil.com", "null", "file://"]
    )
    def test_a_foreign_origin_gets_403_on_every_method(self, client: TestClient, origin: str) -> None:
        sid = open_session(client)
        assert post(client, None, INIT, Origin=origin).status_code == 403
        assert client.get("/mcp", headers={SESSION_HEADER: sid, "Origin": origin}).status_code == 403
        assert client.delete("/mcp", headers={SESSION_HEADER: sid, "Origin": origin}).status_code == 403
        assert post(client, sid, call(2, "ping")).status_code == 200  # the session survived

    @pytest.mark.parametrize("origin", ["http://localhost:6274", "http://127.0.0.1:8000", "http://[::1]:9"])
    def test_a_local_origin_on_any_port_is_accepted(self, client: TestClient, origin: str) -> None:
        assert post(client, None, INIT, Origin=origin).status_code == 200

    def test_a_foreign_host_gets_421(self, client: TestClient) -> None:
        assert post(client, None, INIT, Host="evil.example.com").status_code == 421

    def test_allowed_hosts_replaces_the_local_names(self) -> None:
        with make_client(allowed_hosts=["mcp.internal"]) as c:
            assert (
                post(c, None, INIT, Host="mcp.internal:8000", Origin="https://mcp.internal").status_code
                == 200
            )
            assert post(c, None, INIT).status_code == 421  # 127.0.0.1 is no longer allowed


class TestServerToClientMessages:
    def test_notifications_queued_by_a_request_precede_its_response_on_an_sse_answer(self) -> None:
        with make_client(build_conformance_server) as c:
            sid = open_session(c)
            params = {"name": "test_tool_with_progress", "_meta": {"progressToken": "p1"}}
            reply = post(c, sid, call(4, "tools/call", params))
            assert reply.headers["content-type"].startswith("text/event-stream")
            lines = reply.text.splitlines()
            assert lines[:3] == ["id: 0-0", "retry: 1000", "data: "]  # the priming event comes first
            events = [json.loads(line[6:]) for line in lines[3:] if line.startswith("data: ")]
            assert [e["params"]["progress"] for e in events[:-1]] == [0, 50, 100]
            assert all(e["params"]["progressToken"] == "p1" for e in events[:-1])
            assert events[-1]["id"] == 4
            assert "result" in events[-1]

    def test_a_request_that_queues_nothing_is_plain_json(self) -> None:
        with make_client(build_conformance_server) as c:
            sid = open_session(c)
            reply = post(c, sid, call(4, "tools/call", {"name": "test_tool_with_progress"}))
            assert reply.headers["content-type"].startswith("application/json")

    def test_a_json_only_client_gets_json_and_its_notifications_wait_for_a_get_stream(self) -> None:
        transport = StreamableHTTP(growing_server)
        with TestClient(transport.app, base_url="http://127.0.0.1:8000") as c:
            sid = open_session(c)
            reply = post(c, sid, call(2, "tools/call", {"name": "grow"}), Accept="application/json")
            assert reply.headers["content-type"].startswith("application/json")
            assert reply.json()["result"]["content"][0]["text"] == "grew"
            assert list(transport.sessions[sid].pending) == [
                {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}
            ]

    def test_get_needs_an_accept_of_event_stream(self, client: TestClient) -> None:
        sid = open_session(client)
        reply = client.get("/mcp", headers={SESSION_HEADER: sid, "Accept": "application/json"})
        assert reply.status_code == 406

    def test_get_needs_a_known_session(self, client: TestClient) -> None:
        assert client.get("/mcp", headers={"Accept": "text/event-stream"}).status_code == 400
        unknown = {"Accept": "text/event-stream", SESSION_HEADER: "nope"}
        assert client.get("/mcp", headers=unknown).status_code == 404


# -- against a live uvicorn --------------------------------------------------------------------


@pytest.fixture(scope="module")
def live_url() -> Iterator[str]:
    """A live server (the growing demo lab) on a free 127.0.0.1 port; yields its endpoint URL."""
    transport = StreamableHTTP(growing_server)
    with live_http(transport) as url:
        yield url


def live_session(http: httpx.Client, url: str) -> str:
    sid = http.post(url, json=INIT, headers=ACCEPT_BOTH).headers[SESSION_HEADER]
    assert http.post(url, json=INITIALIZED, headers={**ACCEPT_BOTH, SESSION_HEADER: sid}).status_code == 202
    return sid


class TestLiveServer:
    def test_the_get_stream_delivers_waiting_notifications_and_ends_on_delete(self, live_url: str) -> None:
        with httpx.Client(timeout=10) as http, httpx.Client(timeout=10) as other:
            sid = live_session(http, live_url)
            grow = call(2, "tools/call", {"name": "grow"})
            headers = {"Accept": "application/json", SESSION_HEADER: sid}
            assert http.post(live_url, json=grow, headers=headers).status_code == 200
            get_headers = {"Accept": "text/event-stream", SESSION_HEADER: sid}
            with http.stream("GET", live_url, headers=get_headers) as stream:
                assert stream.status_code == 200
                assert stream.headers["content-type"].startswith("text/event-stream")
                assert other.get(live_url, headers=get_headers).status_code == 409  # one stream only
                lines = stream.iter_lines()
                assert next(lines) == "event: message"
                assert json.loads(next(lines)[6:]) == {
                    "jsonrpc": "2.0",
                    "method": "notifications/tools/list_changed",
                }
                assert other.delete(live_url, headers={SESSION_HEADER: sid}).status_code == 200
                assert list(lines) == [""]  # the blank line ending the event, then the stream closes

    def test_the_official_sdk_client_initializes_lists_and_calls(self, live_url: str) -> None:
        from mcp import Client

        async def session() -> tuple[list[str], Any, Any, str | None]:
            # legacy: the handshake era (its default auto mode settles on 2026-07-28 here:
            # tests/interop/test_sdk_http_stateless.py)
            async with Client(live_url, mode="legacy") as sdk:
                tools = await sdk.list_tools()
                added = await sdk.call_tool("add", {"x": 2, "y": 3})
                failed = await sdk.call_tool("weather", {"city": "Atlantis"})
                return [t.name for t in tools.tools], added, failed, sdk.protocol_version

        names, added, failed, version = anyio.run(session)
        assert version == LATEST_VERSION
        assert names[:3] == ["add", "weather", "delete_db"]
        assert added.is_error is False
        assert added.content[0].text == "5"
        assert failed.is_error is True
        assert failed.content[0].text == "ERROR: no station near Atlantis"


class TestServeCommand:
    def test_harness_serve_http_serves_the_demo_on_the_port_it_logs(self) -> None:
        proc = subprocess.Popen(
            [sys.executable, "-m", "harness.cli.main", "serve", "--demo", "--http", "--port", "0"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert proc.stderr is not None
        try:
            line = proc.stderr.readline()
            found = re.search(r"listening on (http://127\.0\.0\.1:\d+/mcp)", line)
            assert found, line
            with httpx.Client(timeout=10) as http:
                reply = http.post(found.group(1), json=INIT, headers=ACCEPT_BOTH)
            assert reply.status_code == 200
            assert reply.json()["result"]["serverInfo"]["name"] == "harness-demo"
            assert SESSION_HEADER in reply.headers
        finally:
            proc.send_signal(signal.SIGINT)
            code = proc.wait(timeout=10)
            proc.stderr.close()
        assert code == 130  # uvicorn stops cleanly, then the CLI reports the interrupt as usual

    def test_a_port_in_use_is_one_line_and_exit_2(self) -> None:
        with bind_socket("127.0.0.1", 0) as taken:
            port = str(taken.getsockname()[1])
            done = subprocess.run(
                [sys.executable, "-m", "harness.cli.main", "serve", "--demo", "--http", "--port", port],
                capture_output=True,
                text=True,
                timeout=30,
            )
        assert done.returncode == 2
        assert (
            done.stderr.strip()
            .splitlines()[-1]
            .startswith(f"harness: error: cannot listen on 127.0.0.1:{port}")
        )


def test_a_burst_of_evictions_is_one_line_with_its_count(caplog: pytest.LogCaptureFixture) -> None:
    """Any local process can open sessions past the cap; the log says so once a burst, not once a
    session (issue 49, item 7), and still counts every one."""
    with caplog.at_level(logging.INFO, logger="harness.http"), make_client(max_sessions=2) as c:
        for _ in range(40):
            open_session(c)
    lines = [r.getMessage() for r in caplog.records if "evicted" in r.getMessage()]
    assert len(lines) == 1 and lines[0].startswith("1 session evicted")
    log = EvictionLog(2)
    with caplog.at_level(logging.INFO, logger="harness.http"):
        caplog.clear()
        for t in range(30):
            log.evicted(float(t))  # one a second: a line at 0, 10 and 20 s with the ones between
    counts = [r.getMessage().split(" ")[0] for r in caplog.records]
    assert counts == ["1", "10", "10"] and log.total == 30 and log.pending == 9
