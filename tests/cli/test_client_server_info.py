"""Issue 25, item 9: ``harness client --mode 2026-07-28`` shows the server info the results carry.

A client pinned to 2026-07-28 sends no ``server/discover`` (no handshake at all), so it used to
print ``"serverInfo": {}``. Every stateless result names its server in
``_meta["io.modelcontextprotocol/serverInfo"]``; the client now keeps it from any result.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from helpers.live_http import live_http

from harness.cli.main import main
from harness.fixtures.demo import build_demo_server
from harness.protocol import MCPClient
from harness.protocol.messages import Message
from harness.transports.http import StreamableHTTP

pytestmark = pytest.mark.timeout(60)

DEMO_INFO = {"name": "harness-demo", "version": "0.1.0"}
SERVER_INFO = "io.modelcontextprotocol/serverInfo"


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    with live_http(StreamableHTTP(build_demo_server)) as endpoint:
        yield endpoint


@pytest.mark.parametrize("mode", ["2026-07-28", "auto", "legacy"])
def test_every_mode_prints_the_server_s_info(url: str, mode: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["client", url, "--mode", mode]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed["serverInfo"] == DEMO_INFO
    assert printed["era"] == ("handshake" if mode == "legacy" else "stateless")


class _Stamped:
    """A stateless server stand-in whose results carry (or lack) the serverInfo ``_meta``."""

    def __init__(self, info: Any) -> None:
        self.info = info

    def send(self, message: Message) -> Message:
        result: dict[str, Any] = {"tools": [], "resultType": "complete"}
        if self.info is not None:
            result["_meta"] = {SERVER_INFO: self.info}
        return {"jsonrpc": "2.0", "id": message["id"], "result": result}

    def take_notifications(self) -> list[Message]:
        return []

    def close(self) -> None:
        pass


def test_a_pinned_client_learns_the_server_from_a_result() -> None:
    client = MCPClient(_Stamped({"name": "far", "version": "2"}), mode="2026-07-28")
    assert client.connect() == {} and client.server_info == {}  # no traffic yet: nothing known
    client.list_tools()
    assert client.server_info == {"name": "far", "version": "2"}


@pytest.mark.parametrize("info", [None, "far", ["far"]])
def test_a_result_without_usable_info_changes_nothing(info: Any) -> None:
    client = MCPClient(_Stamped(info), mode="2026-07-28")
    client.list_tools()
    assert client.server_info == {}
