"""MCPClient's eras: which mode settles what, the stateless ``_meta``, discover and its fallback.

The peer is a scripted server (a table of method -> answer), so each rule is pinned on the
exact messages the client sends; the SDK's own dual-era server is the interop check
(``tests/interop/test_sdk_server_stateless.py``).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from harness import __version__
from harness.fixtures.demo import build_demo_server
from harness.protocol import InMemoryTransport, MCPClient, RPCError
from harness.protocol.client import HANDSHAKE, MODES, STATELESS, EraError
from harness.protocol.errors import TransportError

META_KEYS = (
    "io.modelcontextprotocol/protocolVersion",
    "io.modelcontextprotocol/clientCapabilities",
    "io.modelcontextprotocol/clientInfo",
)
INIT_RESULT = {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}}, "serverInfo": {"name": "old"}}
DISCOVERED = {
    "supportedVersions": ["2026-07-28"],
    "capabilities": {"tools": {"listChanged": True}},
    "resultType": "complete",
    "ttlMs": 0,
    "cacheScope": "public",
    "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "new", "version": "1"}},
}

Answer = Callable[[dict[str, Any]], dict[str, Any]]


def error(code: int, message: str = "no", data: Any = None) -> Answer:
    def raise_it(params: dict[str, Any]) -> dict[str, Any]:
        raise RPCError(code, message, data)

    return raise_it


class ScriptedServer:
    """A transport whose peer answers each method from a table (a result, or a function of params)."""

    def __init__(self, answers: dict[str, Any]) -> None:
        self.answers = answers
        self.sent: list[dict[str, Any]] = []

    def send(self, message: dict[str, Any]) -> dict[str, Any] | None:
        self.sent.append(message)
        if "id" not in message:
            return None
        answer = self.answers.get(message["method"])
        try:
            if answer is None:
                raise RPCError(-32601, f"no {message['method']}")
            result = answer(message.get("params") or {}) if callable(answer) else answer
        except RPCError as exc:
            return {"jsonrpc": "2.0", "id": message["id"], "error": exc.to_error()}
        return {"jsonrpc": "2.0", "id": message["id"], "result": result}

    def take_notifications(self) -> list[dict[str, Any]]:
        return []

    def close(self) -> None:
        pass

    @property
    def methods(self) -> list[str]:
        return [m["method"] for m in self.sent]


def stateless(answers: dict[str, Any] | None = None, **kwargs: Any) -> tuple[MCPClient, ScriptedServer]:
    server = ScriptedServer({"server/discover": DISCOVERED, "tools/list": {"tools": []}, **(answers or {})})
    return MCPClient(server, mode="2026-07-28", **kwargs), server


# -- modes ---------------------------------------------------------------------------------


def test_modes_are_legacy_auto_and_each_stateless_version() -> None:
    assert MODES == ("legacy", "auto", "2026-07-28")


@pytest.mark.parametrize("mode", ["2025-11-25", "stateless", "", "AUTO"])
def test_an_unknown_mode_is_refused_at_construction(mode: str) -> None:
    with pytest.raises(ValueError, match="mode must be one of"):
        MCPClient(ScriptedServer({}), mode=mode)


def test_a_handshake_version_as_mode_points_at_protocol_version() -> None:
    with pytest.raises(ValueError, match="protocol_version="):
        MCPClient(ScriptedServer({}), mode="2025-06-18")


@pytest.mark.parametrize(
    ("mode", "answers", "wire", "era", "version"),
    [
        (
            "legacy",
            {"initialize": INIT_RESULT},
            ["initialize", "notifications/initialized"],
            HANDSHAKE,
            "2025-11-25",
        ),
        ("auto", {"server/discover": DISCOVERED}, ["server/discover"], STATELESS, "2026-07-28"),
        ("2026-07-28", {}, [], STATELESS, "2026-07-28"),
    ],
    ids=["legacy: the handshake", "auto: discover answered", "pinned: nothing on the wire"],
)
def test_connect_settles_the_era_the_mode_says(
    mode: str, answers: dict[str, Any], wire: list[str], era: str, version: str
) -> None:
    server = ScriptedServer(answers)
    client = MCPClient(server, mode=mode)
    client.connect()
    assert server.methods == wire
    assert (client.era, client.protocol_version) == (era, version)


def test_legacy_is_the_default_and_sends_no_meta() -> None:
    server = ScriptedServer({"initialize": INIT_RESULT, "tools/list": {"tools": []}})
    client = MCPClient(server)
    assert client.mode == "legacy" and client.era is None
    client.connect()
    client.list_tools()
    assert "params" not in server.sent[-1]  # exactly what the client sent before the stateless era
    assert server.sent[0]["params"] == {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": client.client_info,
    }


def test_the_default_client_sends_what_it_sent_before_the_stateless_era() -> None:
    wire: list[bytes] = []
    client = MCPClient(
        InMemoryTransport(build_demo_server(), tap=lambda d, b: wire.append(b) if d == "c2s" else None)
    )
    client.connect()
    client.list_tools()
    client.call_tool("add", {"x": 1, "y": 2})
    assert [json.loads(b) for b in wire] == [
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "harness", "version": __version__},
            },
        },
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
        {
            "jsonrpc": "2.0",
            "id": 3,
            "method": "tools/call",
            "params": {"name": "add", "arguments": {"x": 1, "y": 2}},
        },
    ]


# -- the stateless _meta ---------------------------------------------------------------------


def test_a_pinned_client_stamps_every_request_with_version_capabilities_and_info() -> None:
    client, server = stateless({"tools/call": {"content": [], "resultType": "complete"}})
    client.list_tools()
    client.call_tool("add", {"x": 1})
    for message in server.sent:
        meta = message["params"]["_meta"]
        assert tuple(meta) == META_KEYS
        assert meta[META_KEYS[0]] == "2026-07-28"
        assert meta[META_KEYS[1]] == {} and meta[META_KEYS[2]] == client.client_info
    assert server.sent[1]["params"]["name"] == "add"


def test_the_callers_own_meta_keys_are_kept_and_ours_win() -> None:
    client, server = stateless()
    client.request("tools/list", {"_meta": {"progressToken": 7, META_KEYS[0]: "1999-01-01"}})
    meta = server.sent[0]["params"]["_meta"]
    assert meta["progressToken"] == 7 and meta[META_KEYS[0]] == "2026-07-28"


def test_no_ping_and_no_handshake_in_the_stateless_era() -> None:
    client, server = stateless()
    client.connect()
    with pytest.raises(EraError) as info:
        client.ping()
    assert info.value.code == -32601
    assert server.sent == []  # refused locally, nothing sent


def test_discover_on_a_pinned_client_stores_the_servers_answer() -> None:
    client, _ = stateless()
    result = client.discover()
    assert client.discover_result == result
    assert client.server_info == {"name": "new", "version": "1"}
    assert client.server_capabilities == {"tools": {"listChanged": True}}


def test_discover_is_refused_in_the_handshake_era() -> None:
    client = MCPClient(ScriptedServer({"initialize": INIT_RESULT}))
    client.connect()
    with pytest.raises(EraError):
        client.discover()


# -- auto: discover, then the fallback -------------------------------------------------------

FALLBACKS = [
    ("-32601 method not found", error(-32601)),
    ("-32600 not initialized", error(-32600, "server not initialized")),
    ("-32602 invalid params", error(-32602)),
    ("-32022 naming only handshake versions", error(-32022, "no", {"supported": ["2025-11-25"]})),
    ("a result offering no stateless version", {**DISCOVERED, "supportedVersions": ["2025-11-25"]}),
    ("a result with no supportedVersions", {"capabilities": {}}),
]


@pytest.mark.parametrize("answer", [a for _, a in FALLBACKS], ids=[i for i, _ in FALLBACKS])
def test_auto_falls_back_to_initialize(answer: Any) -> None:
    server = ScriptedServer({"server/discover": answer, "initialize": INIT_RESULT})
    client = MCPClient(server, mode="auto")
    result = client.connect()
    assert result == INIT_RESULT
    assert server.methods == ["server/discover", "initialize", "notifications/initialized"]
    assert client.era == HANDSHAKE and client.discover_result is None
    assert "_meta" not in server.sent[1]["params"]


def test_auto_sends_discover_with_the_newest_stateless_meta() -> None:
    server = ScriptedServer({"server/discover": DISCOVERED})
    client = MCPClient(server, mode="auto", capabilities={"roots": {}})
    client.connect()
    meta = server.sent[0]["params"]["_meta"]
    assert meta[META_KEYS[0]] == "2026-07-28" and meta[META_KEYS[1]] == {"roots": {}}
    assert client.discover_result == DISCOVERED


def test_auto_retries_discover_once_at_a_version_the_server_names() -> None:
    calls: list[str] = []

    def picky(params: dict[str, Any]) -> dict[str, Any]:
        calls.append(params["_meta"][META_KEYS[0]])
        if len(calls) == 1:
            raise RPCError(-32022, "unsupported", {"supported": ["2026-07-28"], "requested": "x"})
        return DISCOVERED

    client = MCPClient(ScriptedServer({"server/discover": picky}), mode="auto")
    client.connect()
    assert calls == ["2026-07-28", "2026-07-28"] and client.era == STATELESS


def test_auto_gives_up_on_a_server_that_speaks_only_stateless_versions_we_do_not() -> None:
    refusal = error(-32022, "unsupported", {"supported": ["2099-01-01"], "requested": "2026-07-28"})
    server = ScriptedServer({"server/discover": refusal, "initialize": INIT_RESULT})
    with pytest.raises(RPCError) as info:
        MCPClient(server, mode="auto").connect()
    assert info.value.code == -32022 and server.methods == ["server/discover"]


def test_auto_lets_a_dead_link_propagate_rather_than_guess_an_era() -> None:
    class Silent(ScriptedServer):
        def send(self, message: dict[str, Any]) -> dict[str, Any] | None:
            raise TransportError("no reply within 1s")

    with pytest.raises(TransportError):
        MCPClient(Silent({}), mode="auto").connect()


# -- what the client declares ------------------------------------------------------------------


def answer_all(method: str, params: dict[str, Any]) -> dict[str, Any]:
    return {}


@pytest.mark.parametrize(
    ("handler", "methods", "declared"),
    [
        (None, None, {}),
        (None, ["elicitation/create"], {}),
        (answer_all, None, {"elicitation": {}, "roots": {}, "sampling": {}}),
        (answer_all, ["elicitation/create"], {"elicitation": {}}),
        (answer_all, ["roots/list", "sampling/createMessage"], {"roots": {}, "sampling": {}}),
    ],
    ids=[
        "no handler",
        "no handler, methods named",
        "every input method",
        "elicitation only",
        "roots and sampling",
    ],
)
@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
def test_only_the_capabilities_the_handler_serves_are_declared(
    mode: str, handler: Any, methods: list[str] | None, declared: dict[str, Any]
) -> None:
    server = ScriptedServer({"initialize": INIT_RESULT, "tools/list": {"tools": []}})
    client = MCPClient(server, mode=mode, input_handler=handler, input_methods=methods)
    client.connect()
    client.list_tools()
    if mode == "legacy":
        assert server.sent[0]["params"]["capabilities"] == declared
    else:
        assert server.sent[0]["params"]["_meta"][META_KEYS[1]] == declared


def test_an_unknown_input_method_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown input method"):
        MCPClient(ScriptedServer({}), input_handler=answer_all, input_methods=["tools/call"])
