"""The stdio round trip: our StdioTransport driving ``harness serve --demo`` in a subprocess."""

from __future__ import annotations

from pytest_benchmark.fixture import BenchmarkFixture

from harness.bench import workloads as w
from harness.bench.table import tag


def test_stdio_tools_call(benchmark: BenchmarkFixture) -> None:
    with w.stdio_client() as client:
        tag(
            benchmark,
            key="stdio/tools/call",
            group="stdio",
            op="tools/call",
            layer="stdio",
            codec="json",
            floor="floor/tools/call/json",
            peer="official/tools/call",
        )
        result = benchmark(client.call_tool, "add", {"x": 2, "y": 3})
    assert result["content"][0]["text"] == "5"
