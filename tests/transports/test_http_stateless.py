"""Both eras on one endpoint: 2026-07-28 POSTs served statelessly, handshake-era input requests on SSE.

The stateless rules are a table (:data:`STATELESS_CASES`): what a POST carries,
and the HTTP status and JSON-RPC code it gets. Then full round trips with our
own client over a live uvicorn: both eras with the conformance fixture's
``test_elicitation``, which asks the client for input mid-call (an SSE request
answered by a second POST in the handshake era, MRTR in the stateless era).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest
from helpers.live_http import live_http
from hypothesis import given
from hypothesis import strategies as st
from starlette.testclient import TestClient

from harness.fixtures.conformance import build_conformance_server
from harness.fixtures.demo import build_demo_server
from harness.protocol import MCPClient, RPCError
from harness.protocol.errors import MISSING_REQUIRED_CLIENT_CAPABILITY
from harness.protocol.versions import (
    META_CLIENT_CAPABILITIES,
    META_CLIENT_INFO,
    META_PROTOCOL_VERSION,
    STATELESS_VERSION,
)
from harness.transports.http import (
    HEADER_MISMATCH,
    SESSION_HEADER,
    STATELESS_ERROR_STATUS,
    StreamableHTTP,
)
from harness.transports.http_client import HTTPClientTransport
from harness.transports.mcp_headers import encode_header_value

ACCEPT_BOTH = {"Accept": "application/json, text/event-stream"}
ENVELOPE = {META_PROTOCOL_VERSION: STATELESS_VERSION, META_CLIENT_CAPABILITIES: {}}


def message(method: str, meta: dict[str, Any] | None = None, **params: Any) -> dict[str, Any]:
    body: dict[str, Any] = {**params, "_meta": ENVELOPE if meta is None else meta}
    return {"jsonrpc": "2.0", "id": 5, "method": method, "params": body}


def headers(method: str, version: str = STATELESS_VERSION, name: str | None = None) -> dict[str, str]:
    out = {**ACCEPT_BOTH, "MCP-Protocol-Version": version, "Mcp-Method": method}
    if name is not None:
        out["Mcp-Name"] = encode_header_value(name)
    return out


ADD = {"name": "add", "arguments": {"x": 2, "y": 3}}

STATELESS_CASES: list[tuple[str, dict[str, Any], dict[str, str], int, int | None]] = [
    ("a plain call", message("tools/call", **ADD), headers("tools/call", name="add"), 200, None),
    ("discover", message("server/discover"), headers("server/discover"), 200, None),
    (
        "the version header differs from _meta",
        message("tools/call", **ADD),
        headers("tools/call", version="2025-11-25", name="add"),
        400,
        HEADER_MISMATCH,
    ),
    (
        "no Mcp-Method",
        message("tools/list"),
        {**ACCEPT_BOTH, "MCP-Protocol-Version": STATELESS_VERSION},
        400,
        HEADER_MISMATCH,
    ),
    ("Mcp-Method differs", message("tools/list"), headers("prompts/list"), 400, HEADER_MISMATCH),
    ("no Mcp-Name", message("tools/call", **ADD), headers("tools/call"), 400, HEADER_MISMATCH),
    (
        "Mcp-Name differs",
        message("tools/call", **ADD),
        headers("tools/call", name="weather"),
        400,
        HEADER_MISMATCH,
    ),
    (
        "an unsupported version",
        message("tools/list", {**ENVELOPE, META_PROTOCOL_VERSION: "2099-01-01"}),
        headers("tools/list", version="2099-01-01"),
        400,
        -32022,
    ),
    (
        "the header says stateless, the body has no _meta",
        {"jsonrpc": "2.0", "id": 5, "method": "tools/list"},
        headers("tools/list"),
        400,
        -32602,
    ),
    ("a method the era removed", message("ping"), headers("ping"), 404, -32601),
    ("an unknown tool", message("tools/call", name="nope"), headers("tools/call", name="nope"), 404, -32601),
]


@pytest.fixture
def client() -> Iterator[TestClient]:
    with TestClient(StreamableHTTP(build_demo_server).app, base_url="http://127.0.0.1:8000") as c:
        yield c


class TestStatelessPosts:
    @pytest.mark.parametrize(
        ("body", "sent", "status", "code"),
        [case[1:] for case in STATELESS_CASES],
        ids=[case[0] for case in STATELESS_CASES],
    )
    def test_a_stateless_post_gets_the_status_and_code_of_its_row(
        self, client: TestClient, body: dict[str, Any], sent: dict[str, str], status: int, code: int | None
    ) -> None:
        reply = client.post("/mcp", json=body, headers=sent)
        assert reply.status_code == status
        answer = reply.json()
        assert answer["id"] == 5
        if code is None:
            assert answer["result"]["resultType"] == "complete"
        else:
            assert answer["error"]["code"] == code

    def test_no_session_is_opened_or_needed(self, client: TestClient) -> None:
        reply = client.post(
            "/mcp", json=message("tools/call", **ADD), headers=headers("tools/call", name="add")
        )
        assert reply.json()["result"]["content"] == [{"type": "text", "text": "5"}]
        assert SESSION_HEADER not in reply.headers

    def test_a_session_id_on_a_stateless_post_is_ignored(self, client: TestClient) -> None:
        sent = {**headers("tools/list"), SESSION_HEADER: "not-a-session"}
        assert client.post("/mcp", json=message("tools/list"), headers=sent).status_code == 200

    def test_a_stateless_notification_is_accepted_and_dropped(self, client: TestClient) -> None:
        note = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}}
        reply = client.post("/mcp", json=note, headers=headers("notifications/cancelled"))
        assert (reply.status_code, reply.content) == (202, b"")

    def test_the_handshake_era_is_unchanged_beside_it(self, client: TestClient) -> None:
        init = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "t", "version": "0"},
            },
        }
        reply = client.post("/mcp", json=init, headers=ACCEPT_BOTH)
        assert reply.json()["result"]["protocolVersion"] == "2025-11-25"
        gated = client.post(
            "/mcp",
            json={"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
            headers={**ACCEPT_BOTH, SESSION_HEADER: reply.headers[SESSION_HEADER]},
        )
        assert gated.json()["error"] == {"code": -32600, "message": "server not initialized"}


class TestParamHeaders:
    def schema_server(self) -> Any:
        server = build_demo_server()
        schema = {
            "type": "object",
            "properties": {"region": {"type": "string", "x-mcp-header": "Region"}, "n": {"type": "integer"}},
        }
        server.add_tool("where", lambda region: region, schema)
        server.set_allowed_tools(None)
        return server

    @pytest.mark.parametrize(
        ("region_header", "status"),
        [("us-west1", 200), (None, 400), ("eu-north1", 400), ("=?base64?dXMtd2VzdDE=?=", 200)],
    )
    def test_an_x_mcp_header_argument_must_be_mirrored(self, region_header: str | None, status: int) -> None:
        with TestClient(StreamableHTTP(self.schema_server).app, base_url="http://127.0.0.1:8000") as c:
            sent = headers("tools/call", name="where")
            if region_header is not None:
                sent["Mcp-Param-Region"] = region_header
            body = message("tools/call", name="where", arguments={"region": "us-west1"})
            reply = c.post("/mcp", json=body, headers=sent)
            assert reply.status_code == status
            if status == 400:
                assert reply.json()["error"]["code"] == HEADER_MISMATCH


# -- both eras with our own client, live ----------------------------------------------------------


@pytest.fixture(scope="module")
def live_url() -> Iterator[str]:
    transport = StreamableHTTP(build_conformance_server)
    with live_http(transport) as url:
        yield url


@pytest.mark.parametrize(
    ("mode", "era"), [("legacy", "handshake"), ("2026-07-28", "stateless"), ("auto", "stateless")]
)
def test_a_tool_that_asks_for_input_gets_the_answer_in_either_era(live_url: str, mode: str, era: str) -> None:
    asked: list[tuple[str, dict[str, Any]]] = []

    def handler(method: str, params: dict[str, Any]) -> dict[str, Any]:
        asked.append((method, params))
        return {"action": "accept", "content": {"username": "ada", "email": "ada@example.org"}}

    client = MCPClient(HTTPClientTransport(live_url, timeout=10), mode=mode, input_handler=handler)
    client.connect()
    try:
        result = client.call_tool("test_elicitation", {"message": "Who are you?"})
    finally:
        client.close()
    assert client.era == era
    assert [m for m, _ in asked] == ["elicitation/create"]
    assert asked[0][1]["message"] == "Who are you?"
    text = result["content"][0]["text"]
    assert text == 'User response: action=accept, content={"email":"ada@example.org","username":"ada"}'


def test_without_the_capability_the_call_gets_the_spec_s_error_in_the_handshake_era(live_url: str) -> None:
    client = MCPClient(HTTPClientTransport(live_url, timeout=10))
    client.connect()
    try:
        with pytest.raises(RPCError) as caught:
            client.call_tool("test_elicitation", {"message": "?"})
    finally:
        client.close()
    assert caught.value.code == MISSING_REQUIRED_CLIENT_CAPABILITY


def retiring_server() -> Any:
    """The demo lab plus ``retire``, which removes ``weather`` (a mid-session registration event)."""
    server = build_demo_server()
    server.add_tool(
        "retire", lambda: server.remove_tool("weather") or "retired", description="Remove weather."
    )
    server.set_allowed_tools(None)
    return server


@pytest.fixture
def retiring() -> Iterator[tuple[str, StreamableHTTP]]:
    transport = StreamableHTTP(retiring_server)
    with live_http(transport) as url:
        yield url, transport


def test_a_tool_removed_mid_session_reaches_a_stateless_client_through_its_listen_stream(
    retiring: tuple[str, StreamableHTTP],
) -> None:
    url, transport = retiring
    client = MCPClient(HTTPClientTransport(url, timeout=10), mode="2026-07-28")
    client.connect()
    try:
        assert "weather" in {t["name"] for t in client.list_tools()}
        sub = client.listen(tools=True)
        wait_until(lambda: sub.honored is not None, client)
        assert sub.honored == {"toolsListChanged": True}
        client.call_tool("retire")
        wait_until(lambda: client.list_changes_seen > 0, client)
        assert "weather" not in client.tools_cache
        assert len(transport.listen_streams) == 1
    finally:
        client.close()
    # Closing the stream cancels the listen request: the server forgets its listener.
    for _ in range(500):
        if not transport.listen_streams and not transport.stateless_server().listeners:
            break
        time.sleep(0.01)
    assert not transport.listen_streams
    assert not transport.stateless_server().listeners


def wait_until(done: Any, client: MCPClient) -> None:
    """Pump the client's notifications until ``done()``; events cross threads, so this polls."""
    for _ in range(500):
        client.pump_notifications()
        if done():
            return
        time.sleep(0.01)
    raise AssertionError("the listen stream delivered nothing")


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=8,
)
METHODS = st.sampled_from(["tools/call", "tools/list", "server/discover", "ping", "nope", "subscriptions/x"])


@given(
    method=METHODS,
    params=st.dictionaries(st.sampled_from(["name", "arguments", "uri", "cursor"]), JSON_VALUES, max_size=3),
    meta=st.dictionaries(
        st.sampled_from([META_PROTOCOL_VERSION, META_CLIENT_CAPABILITIES, META_CLIENT_INFO]),
        JSON_VALUES | st.just(STATELESS_VERSION),
    ),
    header_version=st.sampled_from([STATELESS_VERSION, "2099-01-01", ""]),
)
def test_any_stateless_post_gets_a_json_rpc_answer_with_a_status_of_the_table(
    method: str, params: dict[str, Any], meta: dict[str, Any], header_version: str
) -> None:
    body = {"jsonrpc": "2.0", "id": 3, "method": method, "params": {**params, "_meta": meta}}
    sent = {**ACCEPT_BOTH, "MCP-Protocol-Version": header_version, "Mcp-Method": method}
    name = params.get("name")
    if isinstance(name, str):
        sent["Mcp-Name"] = encode_header_value(name)
    reply = FUZZ_CLIENT.post("/mcp", json=body, headers=sent)
    assert reply.status_code in (200, 400, 404)
    answer = reply.json()
    assert answer["jsonrpc"] == "2.0" and answer["id"] == 3
    assert ("result" in answer) != ("error" in answer)
    if reply.status_code != 200:
        assert STATELESS_ERROR_STATUS.get(answer["error"]["code"]) == reply.status_code


FUZZ_CLIENT = TestClient(StreamableHTTP(build_demo_server).app, base_url="http://127.0.0.1:8000")
