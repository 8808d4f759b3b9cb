"""Dispatch throughput: ``handle(dict)``, the in-memory transport per codec, and their floors.

Run with ``python -m pytest tests/benchmarks`` or ``harness bench``; each case tags
itself (``tag``) so that the tidy table can pair every path with its floor.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from pytest_benchmark.fixture import BenchmarkFixture

from harness.bench import workloads as w
from harness.bench.table import tag
from harness.protocol.codecs import available_codecs
from harness.protocol.lifecycle import State
from harness.protocol.memory import InMemoryTransport
from harness.protocol.messages import Message
from harness.protocol.server import MCPServer

CODECS = available_codecs()
LISTINGS = [(n, paged) for n in w.TOOL_COUNTS for paged in (False, True)]
"""(tool count, paginated) for tools/list."""


def _list_key(count: int, paged: bool) -> str:
    return f"tools/list/{count}/{'paged' if paged else 'whole'}"


def _list_server(count: int, paged: bool) -> MCPServer:
    return w.many_tools_server(count, w.PAGE_SIZE if paged else None)


# -- handle(dict): no bytes at all --------------------------------------------------------


def test_handle_tools_call(benchmark: BenchmarkFixture) -> None:
    server = w.demo_server()
    tag(benchmark, key="handle/tools/call", group="dispatch", op="tools/call", layer="handle")
    reply = benchmark(server.handle, w.CALL_ADD)
    assert reply == {"jsonrpc": "2.0", "id": 7, "result": {"content": [{"type": "text", "text": "5"}]}}


def test_handle_initialize(benchmark: BenchmarkFixture) -> None:
    server = w.demo_server()
    tag(benchmark, key="handle/initialize", group="dispatch", op="initialize", layer="handle")
    reply = benchmark(w.initialize_again(server, server.handle))
    assert isinstance(reply, dict) and "result" in reply


@pytest.mark.parametrize(("count", "paged"), LISTINGS)
def test_handle_tools_list(benchmark: BenchmarkFixture, count: int, paged: bool) -> None:
    server = _list_server(count, paged)
    tag(
        benchmark,
        key=f"handle/{_list_key(count, paged)}",
        group="dispatch",
        op="tools/list",
        layer="handle",
        tools=count,
        paginated=paged,
    )
    assert benchmark(w.list_all, server.handle) == count


# -- the floor: the same messages through the codec and nothing else ---------------------


def _floor_pairs(op: str, count: int = 0, paged: bool = False) -> list[tuple[Message, Message]]:
    if op == "tools/call":
        return w.exchange(w.demo_server(), w.CALL_ADD)
    if op == "initialize":
        server = w.demo_server()
        server.state = State.NEW
        return w.exchange(server, w.INITIALIZE)
    return w.listing_exchange(_list_server(count, paged))


@pytest.mark.parametrize("codec", CODECS)
@pytest.mark.parametrize("op", ["tools/call", "initialize"])
def test_floor(benchmark: BenchmarkFixture, codec: str, op: str) -> None:
    tag(benchmark, key=f"floor/{op}/{codec}", group="floor", op=op, layer="floor", codec=codec)
    benchmark(w.floor(codec, _floor_pairs(op)))


@pytest.mark.parametrize("codec", CODECS)
@pytest.mark.parametrize(("count", "paged"), LISTINGS)
def test_floor_tools_list(benchmark: BenchmarkFixture, codec: str, count: int, paged: bool) -> None:
    tag(
        benchmark,
        key=f"floor/{_list_key(count, paged)}/{codec}",
        group="floor",
        op="tools/list",
        layer="floor",
        codec=codec,
        tools=count,
        paginated=paged,
    )
    benchmark(w.floor(codec, _floor_pairs("tools/list", count, paged)))


# -- the in-memory transport: serialize, parse, handle, serialize, parse -----------------


def _transport(server: MCPServer, codec: str) -> Callable[[Message], Message | None]:
    return InMemoryTransport(server, codec).send


@pytest.mark.parametrize("codec", CODECS)
def test_transport_tools_call(benchmark: BenchmarkFixture, codec: str) -> None:
    send = _transport(w.demo_server(), codec)
    tag(
        benchmark,
        key=f"transport/tools/call/{codec}",
        group="dispatch",
        op="tools/call",
        layer="transport",
        codec=codec,
        floor=f"floor/tools/call/{codec}",
    )
    reply = benchmark(send, w.CALL_ADD)
    assert reply is not None and reply["result"]["content"][0]["text"] == "5"


REFERENCES: dict[str, Callable[[str], Callable[[Message], Message]]] = {
    "lean": w.lean_send,
    "checked": w.checked_send,
}
"""The two reference points beside the transport: a dispatcher that checks nothing, and the
same round trip with every check the transport makes, inlined into one function."""


@pytest.mark.parametrize("codec", CODECS)
@pytest.mark.parametrize("layer", list(REFERENCES))
def test_reference_tools_call(benchmark: BenchmarkFixture, layer: str, codec: str) -> None:
    tag(
        benchmark,
        key=f"{layer}/tools/call/{codec}",
        group="dispatch",
        op="tools/call",
        layer=layer,
        codec=codec,
        floor=f"floor/tools/call/{codec}",
    )
    reply = benchmark(REFERENCES[layer](codec), w.CALL_ADD)
    assert reply == {"jsonrpc": "2.0", "id": 7, "result": {"content": [{"type": "text", "text": "5"}]}}


@pytest.mark.parametrize("codec", CODECS)
def test_transport_initialize(benchmark: BenchmarkFixture, codec: str) -> None:
    server = w.demo_server()
    tag(
        benchmark,
        key=f"transport/initialize/{codec}",
        group="dispatch",
        op="initialize",
        layer="transport",
        codec=codec,
        floor=f"floor/initialize/{codec}",
    )
    reply = benchmark(w.initialize_again(server, _transport(server, codec)))
    assert isinstance(reply, dict) and "result" in reply


@pytest.mark.parametrize("codec", CODECS)
@pytest.mark.parametrize(("count", "paged"), LISTINGS)
def test_transport_tools_list(benchmark: BenchmarkFixture, codec: str, count: int, paged: bool) -> None:
    send = _transport(_list_server(count, paged), codec)
    tag(
        benchmark,
        key=f"transport/{_list_key(count, paged)}/{codec}",
        group="dispatch",
        op="tools/list",
        layer="transport",
        codec=codec,
        tools=count,
        paginated=paged,
        floor=f"floor/{_list_key(count, paged)}/{codec}",
    )
    assert benchmark(w.list_all, send) == count


# -- our client on top: what an agent loop pays per call ----------------------------------


@pytest.mark.parametrize("codec", CODECS)
def test_client_tools_call(benchmark: BenchmarkFixture, codec: str) -> None:
    op, client = w.client_call(codec)
    tag(
        benchmark,
        key=f"client/tools/call/{codec}",
        group="dispatch",
        op="tools/call",
        layer="client",
        codec=codec,
        floor=f"floor/tools/call/{codec}",
        peer="official/tools/call",
    )
    result = benchmark(op)
    client.close()
    assert isinstance(result, dict) and result["content"][0]["text"] == "5"
