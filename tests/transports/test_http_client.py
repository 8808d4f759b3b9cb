"""The Streamable HTTP client transport: headers, JSON and SSE answers, resumption, input requests.

Most tests drive :class:`HTTPClientTransport` against a scripted server, an
``httpx.MockTransport`` whose handler records every HTTP request and answers
from a queue; the last class runs it against our own server on a live uvicorn.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest
from click.testing import CliRunner
from helpers.live_http import live_http
from hypothesis import given
from hypothesis import strategies as st

from harness.cli.main import cli
from harness.fixtures.conformance import build_conformance_server
from harness.protocol import LATEST_VERSION, MCPClient, TransportError
from harness.protocol.messages import Message, response
from harness.protocol.versions import META_CLIENT_CAPABILITIES, META_PROTOCOL_VERSION, STATELESS_VERSION
from harness.transports.http import StreamableHTTP
from harness.transports.http_client import HTTPClientTransport, SSEEvent, parse_sse
from harness.transports.mcp_headers import decode_header_value, encode_header_value, header_paths

URL = "http://mcp.test/mcp"
SID = "s-1"


def json_reply(message: Message, status: int = 200, **headers: str) -> httpx.Response:
    return httpx.Response(status, json=message, headers=headers)


def sse_reply(*events: str) -> httpx.Response:
    return httpx.Response(
        200, headers={"content-type": "text/event-stream"}, content="".join(events).encode()
    )


def event(message: Message, event_id: str | None = None) -> str:
    head = f"id: {event_id}\n" if event_id is not None else ""
    return f"{head}event: message\ndata: {json.dumps(message)}\n\n"


class ScriptedServer:
    """An httpx mock server: answers requests from ``script`` in order, keeps every HTTP request.

    Notifications and the client's answers get 202 without using up the script.
    """

    def __init__(self, *script: httpx.Response | Callable[[httpx.Request], httpx.Response]) -> None:
        self.script = list(script)
        self.requests: list[httpx.Request] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        if request.method == "DELETE":
            return httpx.Response(200)
        body = json.loads(request.content) if request.method == "POST" else {"method": "GET", "id": 0}
        if "method" not in body or "id" not in body:
            return httpx.Response(202)  # a notification or an answer: accepted, nothing scripted
        step = self.script.pop(0) if self.script else httpx.Response(202)
        return step(request) if callable(step) else step

    def bodies(self) -> list[Any]:
        return [json.loads(r.content) if r.content else None for r in self.requests]

    def transport(self, **options: Any) -> HTTPClientTransport:
        http = httpx.Client(transport=httpx.MockTransport(self))
        return HTTPClientTransport(URL, client=http, listen=False, **options)


def init_reply(version: str = LATEST_VERSION) -> httpx.Response:
    result = {"protocolVersion": version, "capabilities": {}, "serverInfo": {"name": "s", "version": "0"}}
    return json_reply(response(1, result), **{"Mcp-Session-Id": SID})


def stateless(method: str, id_: int, **params: Any) -> Message:
    meta = {META_PROTOCOL_VERSION: STATELESS_VERSION, META_CLIENT_CAPABILITIES: {}}
    return {"jsonrpc": "2.0", "id": id_, "method": method, "params": {**params, "_meta": meta}}


class TestParseSSE:
    @pytest.mark.parametrize(
        ("text", "expected"),
        [
            ("data: {}\n\n", [SSEEvent(data="{}")]),
            ("event: message\ndata: a\ndata: b\n\n", [SSEEvent(data="a\nb")]),
            (": keepalive\n\ndata: x\n\n", [SSEEvent(data="x")]),
            ("id: 7-0\nretry: 500\ndata: \n\n", [SSEEvent(data="", id="7-0", retry=500)]),
            ("id: 1\ndata:x\n\nid: 2\ndata: y\n\n", [SSEEvent(data="x", id="1"), SSEEvent(data="y", id="2")]),
            ("retry: soon\ndata: z\n\n", [SSEEvent(data="z")]),
            ("data: unterminated", [SSEEvent(data="unterminated")]),
        ],
    )
    def test_events_are_read_as_the_sse_rules_say(self, text: str, expected: list[SSEEvent]) -> None:
        assert list(parse_sse(text.split("\n"))) == expected


class TestHeaderValues:
    @pytest.mark.parametrize(
        ("value", "encoded"),
        [
            ("us-west1", "us-west1"),
            ("Hello, 世界", "=?base64?SGVsbG8sIOS4lueVjA==?="),
            (" padded ", "=?base64?IHBhZGRlZCA=?="),
            ("line1\nline2", "=?base64?bGluZTEKbGluZTI=?="),
            ("=?base64?literal?=", "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?="),
        ],
    )
    def test_values_are_encoded_as_the_spec_s_examples(self, value: str, encoded: str) -> None:
        assert encode_header_value(value) == encoded

    @given(st.text())
    def test_any_text_survives_the_header_codec_and_the_header_is_plain_ascii(self, value: str) -> None:
        encoded = encode_header_value(value)
        assert all(0x20 <= ord(c) <= 0x7E or c == "\t" for c in encoded)
        assert encoded == encoded.strip(" \t")
        assert decode_header_value(encoded) == value

    def test_x_mcp_header_paths_are_found_through_nested_properties(self) -> None:
        schema = {
            "type": "object",
            "properties": {
                "region": {"type": "string", "x-mcp-header": "Region"},
                "query": {"type": "string"},
                "target": {"type": "object", "properties": {"db": {"type": "string", "x-mcp-header": "Db"}}},
            },
        }
        assert header_paths(schema) == {"Region": ("region",), "Db": ("target", "db")}


class TestHandshakeEra:
    def test_the_session_id_and_negotiated_version_go_on_every_later_message(self) -> None:
        server = ScriptedServer(init_reply("2025-06-18"), json_reply(response(2, {"tools": []})))
        client = MCPClient(server.transport())
        client.initialize()
        client.list_tools()
        client.close()
        first, initialized, listed, deleted = server.requests
        assert "mcp-session-id" not in first.headers and "mcp-protocol-version" not in first.headers
        for later in (initialized, listed, deleted):
            assert later.headers["mcp-session-id"] == SID
            assert later.headers["mcp-protocol-version"] == "2025-06-18"
        assert deleted.method == "DELETE"
        assert first.headers["accept"] == "application/json, text/event-stream"

    def test_notifications_on_a_response_stream_reach_take_notifications(self) -> None:
        note = {"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progress": 1}}
        server = ScriptedServer(init_reply(), sse_reply(event(note, "0-1"), event(response(2, {}), "0-2")))
        transport = server.transport()
        client = MCPClient(transport)
        client.initialize()
        assert client.ping() == {}
        assert transport.take_notifications() == [note]
        assert transport.take_notifications() == []

    def test_a_server_request_on_the_stream_is_answered_by_on_request_in_a_separate_post(self) -> None:
        ask = {"jsonrpc": "2.0", "id": "srv-1", "method": "elicitation/create", "params": {"message": "?"}}
        final = response(2, {"content": [{"type": "text", "text": "done"}]})
        server = ScriptedServer(init_reply(), sse_reply(event(ask), event(final)))
        transport = server.transport()
        seen: list[Message] = []

        def on_request(request: Message) -> Message:
            seen.append(request)
            return response(request["id"], {"action": "accept", "content": {"x": 1}})

        transport.on_request = on_request
        client = MCPClient(transport)
        client.initialize()
        assert client.call_tool("t")["content"][0]["text"] == "done"
        assert seen == [ask]
        answered = server.requests[-1]
        assert json.loads(answered.content) == {
            "jsonrpc": "2.0",
            "id": "srv-1",
            "result": {"action": "accept", "content": {"x": 1}},
        }
        assert answered.headers["mcp-session-id"] == SID

    @pytest.mark.parametrize(
        ("method", "answer"),
        [
            ("ping", {"jsonrpc": "2.0", "id": 9, "result": {}}),
            ("sampling/createMessage", {"code": -32601}),
        ],
    )
    def test_without_on_request_ping_is_answered_and_anything_else_gets_32601(
        self, method: str, answer: dict[str, Any]
    ) -> None:
        ask = {"jsonrpc": "2.0", "id": 9, "method": method}
        server = ScriptedServer(init_reply(), sse_reply(event(ask), event(response(2, {}))))
        client = MCPClient(server.transport())
        client.initialize()
        client.ping()
        sent = server.bodies()[-1]
        if "code" in answer:
            assert sent["id"] == 9 and sent["error"]["code"] == answer["code"]
        else:
            assert sent == answer

    def test_a_stream_that_ends_early_is_resumed_after_retry_with_last_event_id(self) -> None:
        waits: list[float] = []
        primed = sse_reply("id: 4-0\nretry: 250\ndata: \n\n")
        resumed = sse_reply(event(response(2, {"content": []}), "4-1"))
        server = ScriptedServer(init_reply(), primed, resumed)
        transport = server.transport(sleep=waits.append)
        client = MCPClient(transport)
        client.initialize()
        assert client.call_tool("slow") == {"content": []}
        get = server.requests[-1]
        assert get.method == "GET"
        assert get.headers["last-event-id"] == "4-0"
        assert get.headers["mcp-session-id"] == SID
        assert waits == [0.25]
        assert transport.reconnects == 1

    def test_resumption_gives_up_after_max_reconnects_streams_with_nothing_new(self) -> None:
        waits: list[float] = []
        empty = sse_reply("id: 4-0\ndata: \n\n")
        server = ScriptedServer(init_reply(), empty, *(sse_reply(": nothing\n\n") for _ in range(3)))
        client = MCPClient(server.transport(sleep=waits.append, max_reconnects=3))
        client.initialize()
        with pytest.raises(TransportError, match="after 3 reconnections"):
            client.call_tool("slow")
        assert waits == [1.0, 1.0, 1.0]  # no retry field: the default

    def test_after_the_handshake_a_get_stream_carries_server_requests_answered_by_on_request(self) -> None:
        ask = {"jsonrpc": "2.0", "id": "g1", "method": "elicitation/create", "params": {"message": "?"}}
        note = {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}
        server = ScriptedServer(init_reply(), sse_reply(event(ask), event(note)))
        http = httpx.Client(transport=httpx.MockTransport(server))
        transport = HTTPClientTransport(URL, client=http)  # listen=True: the default
        transport.on_request = lambda request: response(request["id"], {"action": "decline"})
        client = MCPClient(transport)
        client.initialize()
        for _ in range(500):  # the GET stream is read on its own thread
            if len(server.requests) >= 4:
                break
            time.sleep(0.01)
        client.close()
        get, answered = server.requests[2], server.requests[3]
        assert get.method == "GET" and get.headers["accept"] == "text/event-stream"
        assert get.headers["mcp-session-id"] == SID
        assert json.loads(answered.content) == {"jsonrpc": "2.0", "id": "g1", "result": {"action": "decline"}}
        assert transport.take_notifications() == [note]

    def test_a_json_rpc_error_body_with_the_request_s_id_is_the_reply(self) -> None:
        error = {"jsonrpc": "2.0", "id": 2, "error": {"code": -32600, "message": "no session"}}
        server = ScriptedServer(init_reply(), json_reply(error, 400))
        client = MCPClient(server.transport())
        client.initialize()
        with pytest.raises(Exception, match="no session") as caught:
            client.ping()
        assert getattr(caught.value, "code", None) == -32600

    @pytest.mark.parametrize(
        ("reply", "message"),
        [
            (httpx.Response(500, text="boom"), "HTTP 500 from the server: boom"),
            (httpx.Response(202), "accepted request 2 without answering"),
            (httpx.Response(200, text="hello", headers={"content-type": "text/plain"}), "Content-Type"),
            (
                json_reply({"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "x"}}, 400),
                "HTTP 400",
            ),
        ],
    )
    def test_anything_else_is_a_transport_error(self, reply: httpx.Response, message: str) -> None:
        server = ScriptedServer(init_reply(), reply)
        client = MCPClient(server.transport())
        client.initialize()
        with pytest.raises(TransportError, match=message):
            client.ping()


class TestBoundedReads:
    """Issue 49: a server's message past ``max_message`` is an error, never held whole."""

    LIMIT = 4096

    @pytest.mark.parametrize(
        ("reply", "says"),
        [
            (json_reply(response(2, {"pad": "x" * 10_000})), "a message larger than 4096 bytes"),
            (sse_reply(event(response(2, {"pad": "x" * 10_000}))), "a stream line larger than 4096"),
            (sse_reply("data: {\n" + "data: 1\n" * 3000 + "\n"), "an event larger than 4096"),
            (httpx.Response(500, text="x" * 10_000), "HTTP 500 from the server, and the server sent a"),
        ],
    )
    def test_a_message_past_max_message_is_a_transport_error(self, reply: httpx.Response, says: str) -> None:
        client = MCPClient(ScriptedServer(init_reply(), reply).transport(max_message=self.LIMIT))
        client.initialize()
        with pytest.raises(TransportError, match=says):
            client.ping()

    @pytest.mark.parametrize("end", ["\n", "\r\n", "\r"])
    def test_stream_lines_end_as_the_sse_rules_say_within_the_bound(self, end: str) -> None:
        text = event(response(2, {})).replace("\n", end)
        client = MCPClient(ScriptedServer(init_reply(), sse_reply(text)).transport(max_message=self.LIMIT))
        client.initialize()
        assert client.ping() == {}


class TestStatelessEra:
    def test_a_stateless_request_is_one_self_contained_post_with_its_routing_headers(self) -> None:
        server = ScriptedServer(init_reply(), json_reply(response(2, {"content": []})))
        transport = server.transport()
        transport.send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}})
        transport.send(stateless("tools/call", 2, name="get_weather", arguments={}))
        post = server.requests[-1]
        assert "mcp-session-id" not in post.headers  # even with a handshake session open
        assert post.headers["mcp-protocol-version"] == STATELESS_VERSION
        assert post.headers["mcp-method"] == "tools/call"
        assert post.headers["mcp-name"] == "get_weather"

    @pytest.mark.parametrize(
        ("method", "params", "name"),
        [
            ("resources/read", {"uri": "file:///a b"}, "file:///a b"),
            ("prompts/get", {"name": "größe"}, "=?base64?Z3LDtsOfZQ==?="),
            ("tools/list", {}, None),
        ],
    )
    def test_mcp_name_mirrors_the_named_param(
        self, method: str, params: dict[str, Any], name: str | None
    ) -> None:
        server = ScriptedServer(json_reply(response(1, {})))
        server.transport().send(stateless(method, 1, **params))
        assert server.requests[0].headers.get("mcp-name") == name

    def test_tool_arguments_marked_x_mcp_header_become_mcp_param_headers(self) -> None:
        schema = {
            "type": "object",
            "properties": {
                "region": {"type": "string", "x-mcp-header": "Region"},
                "dry": {"type": "boolean", "x-mcp-header": "Dry"},
                "query": {"type": "string"},
            },
        }
        listed = {"tools": [{"name": "sql", "inputSchema": schema}]}
        server = ScriptedServer(json_reply(response(1, listed)), json_reply(response(2, {"content": []})))
        transport = server.transport()
        transport.send(stateless("tools/list", 1))
        transport.send(stateless("tools/call", 2, name="sql", arguments={"region": "us-west1", "dry": True}))
        headers = server.requests[-1].headers
        assert headers["mcp-param-region"] == "us-west1"
        assert headers["mcp-param-dry"] == "true"

    def test_a_stateless_stream_that_ends_early_is_an_error_not_a_resumption(self) -> None:
        server = ScriptedServer(sse_reply("id: 1\ndata: \n\n"))
        with pytest.raises(TransportError, match="ended without its response"):
            server.transport(sleep=lambda _: None).send(stateless("tools/call", 1, name="t"))
        assert [r.method for r in server.requests] == ["POST"]


# -- against our own server on a live uvicorn ----------------------------------------------------


@pytest.fixture(scope="module")
def live() -> Iterator[tuple[str, StreamableHTTP]]:
    transport = StreamableHTTP(build_conformance_server)
    with live_http(transport) as url:
        yield url, transport


class TestAgainstOurServer:
    def test_a_session_lists_calls_gets_progress_and_ends_with_delete(
        self, live: tuple[str, StreamableHTTP]
    ) -> None:
        url, server = live
        transport = HTTPClientTransport(url, timeout=10)
        client = MCPClient(transport)
        client.initialize()
        assert transport.session_id in server.sessions
        assert "test_simple_text" in {t["name"] for t in client.list_tools()}
        params = {"name": "test_tool_with_progress", "arguments": {}, "_meta": {"progressToken": "p"}}
        assert "content" in client.request("tools/call", params)
        progress = [n["params"]["progress"] for n in transport.take_notifications()]
        assert progress == [0, 50, 100]
        sid = transport.session_id
        client.close()
        assert sid not in server.sessions

    def test_a_call_whose_stream_the_server_cuts_is_resumed_and_answered(
        self, live: tuple[str, StreamableHTTP]
    ) -> None:
        url, _ = live
        waits: list[float] = []
        transport = HTTPClientTransport(url, timeout=10, sleep=waits.append)
        client = MCPClient(transport)
        client.initialize()
        result = client.call_tool("test_reconnection")
        client.close()
        assert result["content"][0]["text"] == "Reconnection test completed successfully"
        assert waits == [0.5]  # the fixture's retry_ms
        assert transport.reconnects == 1


@pytest.mark.parametrize(
    ("mode", "era"), [("legacy", "handshake"), ("auto", "stateless"), ("2026-07-28", "stateless")]
)
def test_harness_client_prints_what_it_found_in_each_mode(
    live: tuple[str, StreamableHTTP], mode: str, era: str
) -> None:
    url, _ = live
    result = CliRunner().invoke(cli, ["client", url, "--mode", mode, "--timeout", "10"])
    assert result.exit_code == 0, result.output
    found = json.loads(result.output)
    assert found["era"] == era
    assert found["protocolVersion"] == ("2025-11-25" if era == "handshake" else STATELESS_VERSION)
    assert "test_reconnection" in found["tools"]
