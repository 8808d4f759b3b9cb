"""The server's POST streams: priming events, a stream cut before its answer, resumption by Last-Event-ID."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from helpers.live_http import live_http
from helpers.pair import ClientServerPair, result_of
from starlette.testclient import TestClient

from harness.fixtures.conformance import build_conformance_server
from harness.protocol import LATEST_VERSION
from harness.transports.http import (
    LAST_EVENT_HEADER,
    MAX_STREAMS,
    SESSION_HEADER,
    StreamableHTTP,
    close_sse_stream,
)
from harness.transports.http_client import parse_sse

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
RECONNECT = {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "test_reconnection"}}


def events(text: str) -> list[dict[str, str]]:
    """The SSE events of a whole body, as field -> value."""
    out = []
    for block in text.split("\n\n"):
        if block:
            out.append(
                dict(
                    line.split(": ", 1) if ": " in line else (line.rstrip(":"), "")
                    for line in block.split("\n")
                )
            )
    return out


@pytest.fixture
def session() -> Iterator[tuple[TestClient, StreamableHTTP, str]]:
    transport = StreamableHTTP(build_conformance_server)
    with TestClient(transport.app, base_url="http://127.0.0.1:8000") as client:
        sid = client.post("/mcp", json=INIT, headers=ACCEPT_BOTH).headers[SESSION_HEADER]
        note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        client.post("/mcp", json=note, headers={**ACCEPT_BOTH, SESSION_HEADER: sid})
        yield client, transport, sid


def post(client: TestClient, sid: str, body: dict[str, Any]) -> Any:
    return client.post("/mcp", json=body, headers={**ACCEPT_BOTH, SESSION_HEADER: sid})


def resume(client: TestClient, sid: str, last: str) -> Any:
    return client.get(
        "/mcp", headers={"Accept": "text/event-stream", SESSION_HEADER: sid, LAST_EVENT_HEADER: last}
    )


class TestCutStreams:
    def test_a_tool_that_closes_its_stream_gets_a_primed_stream_without_the_answer(
        self, session: tuple[TestClient, StreamableHTTP, str]
    ) -> None:
        client, _, sid = session
        reply = post(client, sid, RECONNECT)
        assert reply.headers["content-type"].startswith("text/event-stream")
        assert events(reply.text) == [{"id": "0-0", "retry": "500", "data": ""}]

    def test_get_with_last_event_id_replays_what_followed_it_and_ends_with_the_answer(
        self, session: tuple[TestClient, StreamableHTTP, str]
    ) -> None:
        client, _, sid = session
        post(client, sid, RECONNECT)
        resumed = resume(client, sid, "0-0")
        assert resumed.status_code == 200
        (answer,) = events(resumed.text)
        assert answer["id"] == "0-1"
        message = json.loads(answer["data"])
        assert message["id"] == 7
        assert message["result"]["content"][0]["text"] == "Reconnection test completed successfully"

    def test_resuming_twice_from_the_same_id_gives_the_same_events(
        self, session: tuple[TestClient, StreamableHTTP, str]
    ) -> None:
        client, _, sid = session
        post(client, sid, RECONNECT)
        assert resume(client, sid, "0-0").text == resume(client, sid, "0-0").text

    @pytest.mark.parametrize("last", ["9-0", "0-5", "0-x", "nonsense"])
    def test_an_event_id_this_session_never_sent_gets_404(
        self, session: tuple[TestClient, StreamableHTTP, str], last: str
    ) -> None:
        client, _, sid = session
        post(client, sid, RECONNECT)
        assert resume(client, sid, last).status_code == 404

    def test_a_session_keeps_a_bounded_number_of_finished_streams(
        self, session: tuple[TestClient, StreamableHTTP, str]
    ) -> None:
        client, transport, sid = session
        for i in range(MAX_STREAMS + 5):
            post(client, sid, {**RECONNECT, "id": 100 + i})
        assert len(transport.sessions[sid].streams) == MAX_STREAMS
        assert resume(client, sid, "0-0").status_code == 404  # the oldest went first
        assert resume(client, sid, f"{MAX_STREAMS + 4}-0").status_code == 200


class TestPrimedStreams:
    def test_every_post_stream_opens_with_a_priming_event_and_numbers_its_events(
        self, session: tuple[TestClient, StreamableHTTP, str]
    ) -> None:
        client, _, sid = session
        params = {"name": "test_tool_with_progress", "_meta": {"progressToken": "p"}}
        reply = post(client, sid, {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": params})
        got = events(reply.text)
        assert got[0] == {"id": "0-0", "retry": "1000", "data": ""}
        assert [e["id"] for e in got[1:]] == ["0-1", "0-2", "0-3", "0-4"]
        assert json.loads(got[-1]["data"])["id"] == 3


class TestOutsideHTTP:
    def test_close_sse_stream_is_a_no_op_when_no_http_request_runs(self) -> None:
        assert close_sse_stream() is False

    def test_the_reconnection_tool_answers_plainly_in_memory(self) -> None:
        pair = ClientServerPair(build_conformance_server())
        reply = pair.request(2, "tools/call", {"name": "test_reconnection", "arguments": {}})
        assert result_of(reply)["content"][0]["text"] == "Reconnection test completed successfully"


# -- a call waiting for the client's input, live ---------------------------------------------------


@pytest.fixture(scope="module")
def live_url() -> Iterator[str]:
    transport = StreamableHTTP(build_conformance_server)
    with live_http(transport) as url:
        yield url


def live_session(http: httpx.Client, url: str, capabilities: dict[str, Any]) -> str:
    init = {**INIT, "params": {**INIT["params"], "capabilities": capabilities}}
    sid = http.post(url, json=init, headers=ACCEPT_BOTH).headers[SESSION_HEADER]
    note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    http.post(url, json=note, headers={**ACCEPT_BOTH, SESSION_HEADER: sid})
    return sid


ELICIT = {
    "jsonrpc": "2.0",
    "id": 9,
    "method": "tools/call",
    "params": {"name": "test_elicitation", "arguments": {"message": "Who?"}},
}


class TestWaitingCalls:
    def test_the_request_to_the_client_goes_down_the_call_s_stream_and_the_answer_ends_it(
        self, live_url: str
    ) -> None:
        with httpx.Client(timeout=10) as http, httpx.Client(timeout=10) as other:
            sid = live_session(http, live_url, {"elicitation": {}})
            sent = {**ACCEPT_BOTH, SESSION_HEADER: sid}
            with http.stream("POST", live_url, json=ELICIT, headers=sent) as stream:
                assert stream.headers["content-type"].startswith("text/event-stream")
                found = parse_sse(stream.iter_lines())
                assert next(found).id == "0-0"  # priming
                asked = next(found)
                request = json.loads(asked.data)
                assert (asked.id, request["method"]) == ("0-1", "elicitation/create")
                answer = {"jsonrpc": "2.0", "id": request["id"], "result": {"action": "decline"}}
                assert other.post(live_url, json=answer, headers=sent).status_code == 202
                final = next(found)
                assert final.id == "0-2"
                assert json.loads(final.data)["id"] == 9
                assert list(found) == []  # the reply ends the stream

    def test_a_cancelled_call_s_stream_ends_without_a_reply(self, live_url: str) -> None:
        with httpx.Client(timeout=10) as http, httpx.Client(timeout=10) as other:
            sid = live_session(http, live_url, {"elicitation": {}})
            sent = {**ACCEPT_BOTH, SESSION_HEADER: sid}
            with http.stream("POST", live_url, json=ELICIT, headers=sent) as stream:
                found = parse_sse(stream.iter_lines())
                next(found), next(found)  # priming, then the request to the client
                cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 9}}
                assert other.post(live_url, json=cancel, headers=sent).status_code == 202
                assert list(found) == []
