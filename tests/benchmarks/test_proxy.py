"""The proxy's overhead: ``tools/call`` through ``harness proxy`` against the same server direct.

Both clients are ours over stdio (:class:`StdioTransport`), calling the demo lab's ``add``: one
to ``harness serve --demo`` directly, one to ``harness proxy -- harness serve --demo``. Each
round times a batch of direct calls and then a batch through the proxy, back to back, so that a
shared machine's drift falls on both alike; the row's rate is the proxy's, and its
``ratio_to_baseline`` (``measured_ratio``) the median over rounds of proxied rate / direct rate.
The ``faults`` case adds a faults file whose rule never fires on ``add`` (rate 0): every call
is drawn for and decided, and still goes through.
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from pytest_benchmark.fixture import BenchmarkFixture

from harness.bench import workloads as w
from harness.bench.table import tag
from harness.protocol import MCPClient
from harness.transports import StdioTransport

QUICK = os.environ.get("HARNESS_BENCH_QUICK") == "1"
BATCH = 50 if QUICK else 200
"""Calls per timed batch."""
ROUNDS = 3 if QUICK else 10
PROXY = (sys.executable, "-m", "harness.cli.main", "proxy")
NEVER = '[[faults]]\nkind = "transient"\ntool = "add"\nrate = 0.0\n'


@contextmanager
def client(argv: list[str]) -> Iterator[MCPClient]:
    transport = StdioTransport(argv)
    c = MCPClient(transport)
    try:
        c.initialize()
        yield c
    finally:
        c.close()


@pytest.mark.parametrize("case", ["plain", "faults"])
def test_proxy_tools_call(benchmark: BenchmarkFixture, tmp_path: Path, case: str) -> None:
    options: list[str] = []
    if case == "faults":
        (tmp_path / "never.toml").write_text(NEVER)
        options = ["--faults", str(tmp_path / "never.toml")]
    seconds: dict[str, list[float]] = {"direct": [], "proxy": []}
    with client(list(w.SERVE_DEMO)) as direct, client([*PROXY, *options, "--", *w.SERVE_DEMO]) as proxied:

        def batch(c: MCPClient, which: str) -> None:
            start = time.perf_counter()
            for i in range(BATCH):
                c.call_tool("add", {"x": i, "y": 1})
            seconds[which].append(time.perf_counter() - start)

        batch(direct, "direct")  # warm both up, untimed
        batch(proxied, "proxy")
        seconds["direct"].clear()
        seconds["proxy"].clear()
        benchmark.pedantic(
            lambda: batch(proxied, "proxy"),
            setup=lambda: batch(direct, "direct"),
            rounds=ROUNDS,
            iterations=1,
            warmup_rounds=0,
        )
        assert proxied.call_tool("add", {"x": 2, "y": 3})["content"][0]["text"] == "5"
    ratios = [d / p for d, p in zip(seconds["direct"], seconds["proxy"], strict=True)]
    tag(
        benchmark,
        key=f"proxy/stdio/tools/call{'/faults' if case == 'faults' else ''}",
        group="proxy",
        op="tools/call",
        layer="proxy",
        codec="json",
        batch=BATCH,
        baseline="stdio/tools/call",
        measured_ratio=statistics.median(ratios),
        seconds_1=seconds["direct"],
        seconds_2=seconds["proxy"],
    )
