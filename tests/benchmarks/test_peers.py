"""Peers in the same run: the official SDK's in-process ``Client(server)``, and FastMCP if installed.

The official client runs in its default mode (``auto``: it probes
``server/discover`` and, in-process, dispatches without JSON-RPC framing) and in
``legacy`` mode (the initialize handshake our server speaks). Ratios in the table
are to the default mode, the faster of the two here.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest
from pytest_benchmark.fixture import BenchmarkFixture

from harness.bench import workloads as w
from harness.bench.table import tag
from harness.protocol.codecs import available_codecs

pytest.importorskip("mcp", reason="the official mcp SDK is not installed")

MODES = {"official": "auto", "official-legacy": "legacy"}


@pytest.fixture(scope="module")
def official_server() -> object:
    return w.official_server()


@pytest.fixture(scope="module")
def runner() -> Iterator[asyncio.Runner]:
    with asyncio.Runner() as r:
        yield r


@pytest.mark.parametrize("peer", list(MODES))
def test_official_tools_call(benchmark: BenchmarkFixture, official_server: object, peer: str) -> None:
    client = w.official_client(official_server, MODES[peer])
    try:
        tag(
            benchmark,
            key=f"{peer}/tools/call",
            group="peers",
            op="tools/call",
            layer=peer,
            batch=w.OFFICIAL_BATCH,
        )
        result = benchmark(client.calls)
    finally:
        client.close()
    assert getattr(result, "is_error", True) is False


@pytest.mark.parametrize("peer", list(MODES))
def test_official_session(
    benchmark: BenchmarkFixture, official_server: object, runner: asyncio.Runner, peer: str
) -> None:
    tag(benchmark, key=f"{peer}/session", group="peers", op="session", layer=peer)
    result = benchmark(w.official_session(official_server, runner, MODES[peer]))
    assert getattr(result, "is_error", True) is False


@pytest.mark.parametrize("codec", available_codecs())
def test_session_floor(benchmark: BenchmarkFixture, codec: str) -> None:
    """The codec alone on one session's messages (initialize, initialized, tools/call and replies)."""
    messages = w.session_messages()
    tag(benchmark, key=f"floor/session/{codec}", group="floor", op="session", layer="floor", codec=codec)
    assert benchmark(w.wire_floor(codec, messages)) == messages[-1]


@pytest.mark.parametrize("codec", available_codecs())
def test_our_session(benchmark: BenchmarkFixture, codec: str) -> None:
    tag(
        benchmark,
        key=f"session/{codec}",
        group="peers",
        op="session",
        layer="session",
        codec=codec,
        floor=f"floor/session/{codec}",
        peer="official/session",
    )
    result = benchmark(w.our_session(codec))
    assert isinstance(result, dict) and result["content"][0]["text"] == "5"


def test_our_session_building_the_lab(benchmark: BenchmarkFixture) -> None:
    """The same session, but every one builds the lab too (what the batch runner pays)."""
    tag(
        benchmark,
        key="session-build/json",
        group="peers",
        op="session",
        layer="session-build",
        codec="json",
        floor="floor/session/json",
        peer="official/session",
    )
    result = benchmark(w.our_session("json", build=True))
    assert isinstance(result, dict) and result["content"][0]["text"] == "5"


def test_fastmcp_tools_call(benchmark: BenchmarkFixture) -> None:
    pytest.importorskip("fastmcp", reason="FastMCP is not installed")
    client = w.fastmcp_client()
    try:
        tag(
            benchmark,
            key="fastmcp/tools/call",
            group="peers",
            op="tools/call",
            layer="fastmcp",
            batch=w.OFFICIAL_BATCH,
            peer="official/tools/call",  # where FastMCP stands beside the official SDK
        )
        benchmark(client.calls)
    finally:
        client.close()
