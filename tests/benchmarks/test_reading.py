"""The independent reader (:mod:`harness.reading`) on real servers' error texts: one read."""

from __future__ import annotations

from pytest_benchmark.fixture import BenchmarkFixture

from harness.bench.table import tag
from harness.reading import read

TEXTS = (
    "MCP error -32602: Input validation error: Invalid arguments for tool f: "
    "Expected string, received number at path",
    "Error executing tool fetch: 1 validation error for A\nurl\n  Field required [type=missing]",
    "connect ECONNREFUSED 127.0.0.1:5999",
    "ENOENT: no such file or directory, open '/tmp/x'",
)


def test_read_one_error_text(benchmark: BenchmarkFixture) -> None:
    """Four texts of four stacks read in turn; the rate is per text."""
    tag(benchmark, key="reading/read", group="reading", op="read", layer="reader", batch=len(TEXTS))

    def run() -> int:
        return sum(read(text, arguments={"path": 1}).category is not None for text in TEXTS)

    assert benchmark(run) == len(TEXTS)
