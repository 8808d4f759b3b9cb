"""Model sessions by requests in flight, against a local endpoint of fixed latency (no network).

The endpoint is ``tests/llm/fake_endpoint.py`` in a process of its own, answering every request
``LATENCY_S`` after it arrived (a scripted model for ``flaky_weather``: the weather of each city,
a failed call made again, then the answer). Each case runs ``flaky_weather`` x ``llm`` x
(is_error, collapse) x ``4 x concurrency`` seeds through :func:`harness.batch.runner.run_batch`
with a cassette, at ``--llm-concurrency`` 1, 8 and 32, and reports:

* the efficiency, (requests x latency / concurrency) / wall: 1.0 would be an endpoint kept busy
  with ``concurrency`` requests from the first moment to the last, the harness costing nothing
  (``measured_ratio``, the table's ``ratio_to_baseline``); target >= 0.7 at 32 on 2 cores;
* requests sent per session against the unique requests the grid needs (the distinct request
  bodies: the cassette's entries), ``requests_per_session`` and ``unique_per_session``; target:
  equal, and the case fails if they are not.

The rate (``ops_per_s``) is requests sent per second of wall time.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pytest_benchmark.fixture import BenchmarkFixture

from harness.bench.table import tag

QUICK = os.environ.get("HARNESS_BENCH_QUICK") == "1"
LATENCY_S = 0.3
"""The endpoint's latency: the issue's measurement (and a small hosted model's)."""
CONCURRENCY = (1, 8, 32)
SEEDS_PER_THREAD = 1 if QUICK else 4
"""Seeds per request in flight: each seed is three jobs (its baseline, two sessions), so every
thread runs about twelve of them and the first and last moments weigh little."""
ENDPOINT = Path(__file__).resolve().parent.parent / "llm" / "fake_endpoint.py"


@pytest.fixture(scope="module")
def endpoint() -> Iterator[str]:
    proc = subprocess.Popen(
        [sys.executable, str(ENDPOINT), "--latency", str(LATENCY_S), "--port", "0", "--policy", "weather"],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        found = re.search(r"(http://\S+/v1)", proc.stdout.readline())
        if found is None:
            pytest.skip("the local endpoint did not start")
        yield found.group(1)
    finally:
        proc.terminate()
        proc.wait(timeout=10)
        if proc.stdout is not None:
            proc.stdout.close()


@pytest.mark.timeout(600)
@pytest.mark.parametrize("concurrency", CONCURRENCY)
def test_model_sessions_by_requests_in_flight(
    benchmark: BenchmarkFixture, tmp_path: Path, endpoint: str, concurrency: int
) -> None:
    from harness.batch.grid import Grid
    from harness.batch.runner import SessionOptions, run_batch

    grid = Grid(
        ("flaky_weather",),
        ("llm",),
        ("is_error", "collapse"),
        ("typical",),
        range(SEEDS_PER_THREAD * concurrency),
    )
    cassette = tmp_path / "model.jsonl"
    knobs = (("model", "fake"), ("base_url", endpoint), ("api_key_env", "HARNESS_BENCH_NO_KEY"))
    options = SessionOptions(
        agent_settings=(("llm", (*knobs, ("cassette", str(cassette)))),), llm_concurrency=concurrency
    )
    done: list[tuple[Any, float]] = []

    def run() -> None:
        started = time.perf_counter()
        summary = run_batch(grid, tmp_path / "run", executor="process", workers=2, options=options)
        done.append((summary, time.perf_counter() - started))

    benchmark.pedantic(run, rounds=1, iterations=1, warmup_rounds=0)
    summary, wall = done[0]
    assert summary.ran == len(grid) and summary.harness_errors == 0, summary.first_error
    requests = summary.usage.total("requests")
    unique = len(cassette.read_text().splitlines())
    tag(
        benchmark,
        key=f"llm/sessions/{concurrency}",
        group="llm",
        op="sessions",
        layer="threads",
        sessions=len(grid),
        concurrency=concurrency,
        requests_per_session=requests / len(grid),
        unique_per_session=unique / len(grid),
        batch=requests,
        measured_ratio=requests * LATENCY_S / concurrency / wall,
        latency_s=LATENCY_S,
        requests=requests,
    )
    assert requests == unique  # nothing asked twice: each baseline once, each request once
