"""Interop, one direction: the official SDK client (mcp 2.3.0) drives ``harness serve --demo``.

The handshake era: the SDK client is pinned to ``mode="legacy"`` (in its default
auto mode it sends ``server/discover`` first, which our dual-era server answers,
so it settles on 2026-07-28: ``test_sdk_client_stateless.py``). Recorded through
a stdio tee: ``initialize`` offering 2025-11-25, then ``notifications/initialized``.
Every line our server wrote is then checked against the official models as well.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest
from helpers.sdk_stdio import check_log, serve_params
from mcp import Client
from mcp.shared.exceptions import MCPError

pytestmark = pytest.mark.interop


def test_sdk_client_lists_calls_and_sees_errors(tmp_path: Path) -> None:
    log = tmp_path / "wire.jsonl"
    seen: dict[str, Any] = {}

    async def session() -> None:
        async with Client(serve_params(log), mode="legacy", read_timeout_seconds=20) as client:
            seen["init"] = client.session.initialize_result
            seen["tools"] = [t.name for t in (await client.list_tools()).tools]
            seen["add"] = await client.call_tool("add", {"x": 2, "y": 3})
            seen["weather"] = await client.call_tool("weather", {"city": "Atlantis"})
            with pytest.raises(MCPError) as info:
                await client.call_tool("delete_db", {})
            seen["delete_db"] = info.value

    anyio.run(session)

    assert seen["init"].protocol_version == "2025-11-25"
    assert seen["init"].server_info.name == "harness-demo"
    assert seen["init"].capabilities.tools.list_changed is True
    assert seen["tools"] == ["add", "weather", "delete_db"]
    assert not seen["add"].is_error and seen["add"].content[0].text == "5"
    assert seen["weather"].is_error is True
    assert (
        seen["weather"].content[0].text == "ERROR: no station near Atlantis"
    )  # the reason reaches the model
    assert seen["delete_db"].code == -32600 and "not permitted" in seen["delete_db"].error.message

    wire = check_log(log)
    methods = [m.get("method") for d, m in wire if d == "c2s"]
    assert methods[:2] == ["initialize", "notifications/initialized"]
    assert wire[0][1]["params"]["protocolVersion"] == "2025-11-25"


@pytest.mark.parametrize(
    ("strategy", "text"),
    [("masked", "Error executing tool weather"), ("is_error", "ERROR: no station near Atlantis")],
    ids=["sdk client sees masked text", "sdk client sees the reason"],
)
def test_sdk_client_reads_each_is_error_strategy(tmp_path: Path, strategy: str, text: str) -> None:
    log = tmp_path / "wire.jsonl"
    got: dict[str, Any] = {}

    async def session() -> None:
        async with Client(
            serve_params(log, "--strategy", strategy), mode="legacy", read_timeout_seconds=20
        ) as client:
            got["weather"] = await client.call_tool("weather", {"city": "Atlantis"})

    anyio.run(session)
    assert got["weather"].is_error is True and got["weather"].content[0].text == text
    check_log(log)


def test_sdk_client_gets_collapse_as_an_mcp_error(tmp_path: Path) -> None:
    log = tmp_path / "wire.jsonl"

    async def session() -> None:
        async with Client(
            serve_params(log, "--strategy", "collapse"), mode="legacy", read_timeout_seconds=20
        ) as client:
            with pytest.raises(MCPError) as info:
                await client.call_tool("weather", {"city": "Atlantis"})
            assert info.value.code == -32603 and info.value.error.message == "no station near Atlantis"

    anyio.run(session)
    check_log(log)
