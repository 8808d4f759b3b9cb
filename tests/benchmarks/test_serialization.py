"""Serialization against payload size (100 B to 1 MB of text) and nesting depth, per codec.

Each size and depth runs twice: the floor (the codec alone on the same request and
reply) and the in-memory transport, so the table shows where dispatch stops
mattering.
"""

from __future__ import annotations

import pytest
from pytest_benchmark.fixture import BenchmarkFixture

from harness.bench import workloads as w
from harness.bench.table import tag
from harness.protocol.codecs import available_codecs
from harness.protocol.memory import InMemoryTransport

CODECS = available_codecs()


@pytest.mark.parametrize("codec", CODECS)
@pytest.mark.parametrize("size", w.PAYLOAD_BYTES)
@pytest.mark.parametrize("layer", ["floor", "transport"])
def test_payload_size(benchmark: BenchmarkFixture, layer: str, size: int, codec: str) -> None:
    server = w.payload_server()
    request = w.blob_request(size)
    key = f"{layer}/payload/{size}/{codec}"
    floor_key = f"floor/payload/{size}/{codec}"
    if layer == "floor":
        tag(
            benchmark,
            key=key,
            group="serialization",
            op="payload",
            layer=layer,
            codec=codec,
            payload_bytes=size,
        )
        op = w.floor(codec, w.exchange(server, request))
    else:
        tag(
            benchmark,
            key=key,
            group="serialization",
            op="payload",
            layer=layer,
            codec=codec,
            payload_bytes=size,
            floor=floor_key,
        )
        send = InMemoryTransport(server, codec).send

        def op() -> object:
            return send(request)

    reply = benchmark(op)
    assert isinstance(reply, dict) and len(reply["result"]["content"][0]["text"]) == size


@pytest.mark.parametrize("codec", CODECS)
@pytest.mark.parametrize("depth", w.DEPTHS)
@pytest.mark.parametrize("layer", ["floor", "transport"])
def test_nesting_depth(benchmark: BenchmarkFixture, layer: str, depth: int, codec: str) -> None:
    server = w.payload_server()
    request = w.echo_request(depth)
    key = f"{layer}/nesting/{depth}/{codec}"
    if layer == "floor":
        tag(benchmark, key=key, group="serialization", op="nesting", layer=layer, codec=codec, depth=depth)
        op = w.floor(codec, w.exchange(server, request))
    else:
        tag(
            benchmark,
            key=key,
            group="serialization",
            op="nesting",
            layer=layer,
            codec=codec,
            depth=depth,
            floor=f"floor/nesting/{depth}/{codec}",
        )
        send = InMemoryTransport(server, codec).send

        def op() -> object:
            return send(request)

    reply = benchmark(op)
    assert isinstance(reply, dict)
    assert reply["result"]["structuredContent"]["echo"] == w.nested(depth)
