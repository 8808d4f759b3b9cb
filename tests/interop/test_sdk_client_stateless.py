"""Interop, the stateless era: the official SDK client (mcp 2.3.0) drives ``harness serve --demo`` over stdio.

Pinned to 2026-07-28 it sends no handshake; in auto mode it sends ``server/discover``
first and must settle on 2026-07-28. A stdio tee records every line, and every
line our server wrote is checked against the SDK's 2026-07-28 models (the
handshake-era ones for the last test, where the SDK's legacy mode answers an
``elicitation/create`` our server sends mid-call).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from helpers.sdk_stdio import check_log, serve_params
from mcp import Client
from mcp.shared.exceptions import MCPError

from harness.protocol.versions import META_PROTOCOL_VERSION, STATELESS_VERSION

pytestmark = pytest.mark.interop


def sent(wire: list[tuple[str, Any]]) -> list[str]:
    return [m["method"] for d, m in wire if d == "c2s" and "method" in m]


async def accept_oslo(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
    return types.ElicitResult(action="accept", content={"city": "Oslo"})


@pytest.mark.parametrize("mode", ["2026-07-28", "auto"], ids=["pinned", "auto"])
def test_sdk_client_lists_calls_and_sees_errors_statelessly(tmp_path: Path, mode: str) -> None:
    log = tmp_path / "wire.jsonl"
    seen: dict[str, Any] = {}

    async def session() -> None:
        async with Client(serve_params(log), mode=mode, read_timeout_seconds=20) as client:
            seen["tools"] = [t.name for t in (await client.list_tools()).tools]
            seen["add"] = await client.call_tool("add", {"x": 2, "y": 3})
            seen["weather"] = await client.call_tool("weather", {"city": "Atlantis"})
            with pytest.raises(MCPError) as info:
                await client.call_tool("delete_db", {})
            seen["delete_db"] = info.value

    anyio.run(session)
    assert seen["tools"] == ["add", "weather", "delete_db"]
    assert not seen["add"].is_error and seen["add"].content[0].text == "5"
    assert seen["weather"].is_error is True
    assert seen["weather"].content[0].text == "ERROR: no station near Atlantis"
    assert seen["delete_db"].code == -32600

    wire = check_log(log)
    methods = sent(wire)
    assert "initialize" not in methods and "notifications/initialized" not in methods
    if mode == "auto":
        assert methods[0] == "server/discover"
        assert wire[1][1]["result"]["supportedVersions"][0] == STATELESS_VERSION
    versions = {m["params"]["_meta"][META_PROTOCOL_VERSION] for d, m in wire if d == "c2s" and "id" in m}
    assert versions == {STATELESS_VERSION}


def test_sdk_client_drives_an_mrtr_round_trip(tmp_path: Path) -> None:
    log = tmp_path / "wire.jsonl"
    got: dict[str, Any] = {}

    async def session() -> None:
        params = serve_params(log, "--elicit")
        async with Client(
            params, mode="2026-07-28", elicitation_callback=accept_oslo, read_timeout_seconds=20
        ) as c:
            got["book"] = await c.call_tool("book", {})

    anyio.run(session)
    assert got["book"].is_error is not True and got["book"].content[0].text == "table booked in Oslo"
    wire = check_log(log)
    calls = [m for d, m in wire if d == "c2s" and m.get("method") == "tools/call"]
    replies = [m["result"] for d, m in wire if d == "s2c" and "result" in m]
    assert len(calls) == 2 and replies[0]["resultType"] == "input_required"
    assert calls[1]["params"]["requestState"] == replies[0]["requestState"]
    assert calls[1]["params"]["inputResponses"]["city"]["content"] == {"city": "Oslo"}


def test_sdk_client_sees_a_tampered_request_state_refused(tmp_path: Path) -> None:
    log = tmp_path / "wire.jsonl"
    got: dict[str, Any] = {}

    async def session() -> None:
        params = serve_params(log, "--elicit")
        async with Client(
            params, mode="2026-07-28", elicitation_callback=accept_oslo, read_timeout_seconds=20
        ) as c:
            first = await c.session.call_tool("book", {}, allow_input_required=True)
            assert isinstance(first, types.InputRequiredResult) and first.request_state is not None
            state = first.request_state
            tampered = state[:-4] + ("AAAA" if not state.endswith("AAAA") else "BBBB")
            answer: types.InputResponses = {
                "city": types.ElicitResult(action="accept", content={"city": "Oslo"})
            }
            with pytest.raises(MCPError) as info:
                await c.session.call_tool("book", {}, input_responses=answer, request_state=tampered)
            got["error"] = info.value
            got["honest"] = await c.session.call_tool("book", {}, input_responses=answer, request_state=state)

    anyio.run(session)
    assert got["error"].code == -32602
    assert got["honest"].content[0].text == "table booked in Oslo"  # the untampered state still works once
    check_log(log)


def test_sdk_client_in_legacy_mode_answers_an_elicitation_sent_mid_call(tmp_path: Path) -> None:
    log = tmp_path / "wire.jsonl"
    got: dict[str, Any] = {}

    async def session() -> None:
        params = serve_params(log, "--elicit")
        async with Client(
            params, mode="legacy", elicitation_callback=accept_oslo, read_timeout_seconds=20
        ) as c:
            got["book"] = await c.call_tool("book", {})

    anyio.run(session)
    assert got["book"].content[0].text == "table booked in Oslo"
    wire = check_log(log)
    asked = [m for d, m in wire if d == "s2c" and m.get("method") == "elicitation/create"]
    assert len(asked) == 1 and isinstance(asked[0]["id"], str)
    answers = [m for d, m in wire if d == "c2s" and m.get("id") == asked[0]["id"]]
    assert answers and answers[0]["result"]["action"] == "accept"
