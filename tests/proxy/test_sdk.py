"""Interop: the official SDK client (mcp 2.3.0, ``from mcp import Client``) through the proxy.

Upstreams: ``harness serve --demo`` (whose failures carry their reason) and the official SDK's
own server (``tests/peers/sdk_server.py --input-tools``, which masks a raising tool's reason
and asks the client to confirm ``delete_file`` mid-call). Fronts: stdio, and ``--http``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp import Client, StdioServerParameters
from mcp.shared.exceptions import MCPError

from tests.proxy.conftest import DEMO, REPO, SDK_SERVER, LiveProxy, proxy, start_http

pytestmark = pytest.mark.interop


def through(*options: str, upstream: tuple[str, ...] = DEMO) -> StdioServerParameters:
    argv = proxy(*options, upstream=upstream)
    return StdioServerParameters(command=argv[0], args=argv[1:], cwd=str(REPO))


async def confirm(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
    return types.ElicitResult(action="accept", content={"confirm": True})


def weather_failure(server: Any, mode: str = "legacy") -> Any:
    """What the SDK client gets for ``weather("Atlantis")``: a result, or the MCPError."""
    got: dict[str, Any] = {}

    async def session() -> None:
        async with Client(server, mode=mode, read_timeout_seconds=30) as client:
            try:
                got["out"] = await client.call_tool("weather", {"city": "Atlantis"})
            except MCPError as exc:
                got["out"] = exc

    anyio.run(session)
    return got["out"]


@pytest.mark.parametrize(
    ("strategy", "is_error", "text"),
    [
        ("is_error", True, "ERROR: no station near Atlantis"),
        ("masked", True, "Error executing tool weather"),
        ("collapse", None, "ERROR: no station near Atlantis"),
    ],
)
def test_the_sdk_client_reads_each_rewrite_of_a_real_is_error(
    strategy: str, is_error: bool | None, text: str
) -> None:
    out = weather_failure(through("--strategy", strategy))
    if is_error is None:
        assert isinstance(out, MCPError) and out.code == -32603 and out.error.message == text
    else:
        assert out.is_error is is_error and out.content[0].text == text


def test_escape_reaches_the_sdk_client_as_an_error_not_a_hang() -> None:
    out = weather_failure(through("--strategy", "escape"))
    assert isinstance(out, MCPError) and out.code == -32603 and "crashed" in out.error.message


def test_the_sdk_client_in_auto_mode_goes_stateless_through_the_proxy() -> None:
    got: dict[str, Any] = {}

    async def session() -> None:
        async with Client(through("--strategy", "masked"), read_timeout_seconds=30) as client:
            got["version"] = client.protocol_version
            got["tools"] = [t.name for t in (await client.list_tools()).tools]
            got["weather"] = await client.call_tool("weather", {"city": "Atlantis"})

    anyio.run(session)
    assert got["version"] == "2026-07-28"
    assert got["tools"] == ["add", "weather", "delete_db"]
    assert got["weather"].content[0].text == "Error executing tool weather"


def test_the_sdk_server_behind_the_proxy_its_mid_call_question_passes_through() -> None:
    got: dict[str, Any] = {}

    async def session() -> None:
        params = through("--strategy", "collapse", upstream=(*SDK_SERVER, "--input-tools"))
        async with Client(
            params, mode="legacy", elicitation_callback=confirm, read_timeout_seconds=30
        ) as client:
            got["delete"] = await client.call_tool("delete_file", {"path": "/tmp/x"})
            try:
                await client.call_tool("weather", {"city": "Atlantis"})
            except MCPError as exc:
                got["weather"] = exc

    anyio.run(session)
    assert got["delete"].content[0].text == "deleted /tmp/x"
    assert got["weather"].code == -32603 and got["weather"].error.message == "Error executing tool weather"


def test_a_list_change_event_reaches_the_sdk_client(tmp_path: Path) -> None:
    events = tmp_path / "events.toml"
    events.write_text('[[events]]\nkind = "remove_tool"\ntool = "add"\nat_call = 1\n')
    seen: list[Any] = []
    got: dict[str, Any] = {}

    async def handler(message: Any) -> None:
        seen.append(message)

    async def session() -> None:
        async with Client(
            through("--faults", str(events)), mode="legacy", message_handler=handler, read_timeout_seconds=30
        ) as client:
            got["before"] = [t.name for t in (await client.list_tools()).tools]
            await client.call_tool("weather", {"city": "Oslo"})
            with anyio.fail_after(10):
                while not any(isinstance(m, types.ToolListChangedNotification) for m in seen):
                    await anyio.sleep(0.02)
            got["after"] = [t.name for t in (await client.list_tools()).tools]

    anyio.run(session)
    assert got["before"] == ["add", "weather", "delete_db"]
    assert got["after"] == ["weather", "delete_db"]


@pytest.mark.parametrize("mode", ["legacy", "auto"])
def test_the_sdk_client_over_the_http_front(live: list[LiveProxy], mode: str) -> None:
    front = start_http(
        proxy("--http", "--port", "0", "--strategy", "collapse", upstream=(*SDK_SERVER, "--input-tools"))
    )
    live.append(front)
    got: dict[str, Any] = {}

    async def session() -> None:
        async with Client(
            front.url, mode=mode, elicitation_callback=confirm, read_timeout_seconds=30
        ) as client:
            got["version"] = client.protocol_version
            got["add"] = await client.call_tool("add", {"x": 2, "y": 3})
            got["delete"] = await client.call_tool("delete_file", {"path": "/tmp/x"})
            try:
                await client.call_tool("weather", {"city": "Atlantis"})
            except MCPError as exc:
                got["weather"] = exc

    anyio.run(session)
    assert got["version"] == ("2025-11-25" if mode == "legacy" else "2026-07-28")
    assert got["add"].content[0].text == "5"
    assert got["delete"].content[0].text == "deleted /tmp/x"
    assert got["weather"].code == -32603
