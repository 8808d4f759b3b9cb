"""Whole sessions: a scripted 20-call session, the batch runner per executor on 1 and 2 workers,
and peak memory as the number of sessions grows.

These need :mod:`harness.session.simulated` (issue 4) and :mod:`harness.batch.runner` (issue 5);
each case skips, saying why, when its module is missing or does not run.
``HARNESS_BENCH_QUICK=1`` (set by ``harness bench --quick``) shrinks the batches.
"""

from __future__ import annotations

import dataclasses
import importlib
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from pytest_benchmark.fixture import BenchmarkFixture

from harness.bench import workloads as w
from harness.bench.table import tag

QUICK = os.environ.get("HARNESS_BENCH_QUICK") == "1"
BATCH_SESSIONS = 200 if QUICK else 2000
"""Sessions per batch case (rate per executor, start-up included)."""
SCALING_SESSIONS = 200 if QUICK else 8000
SCALING_PAIRS = 1 if QUICK else 3
"""The scaling cases' batch (in full runs about ten seconds on one worker, so that the pool's
start-up -- a fresh interpreter per worker -- is small beside the work, as in a real run)
and how many (1 worker, 2 workers) pairs they time."""
MEMORY_SIZES = ((1_000, 10_000) if QUICK else (1_000, 10_000, 100_000)) + (
    (1_000_000,) if os.environ.get("HARNESS_BENCH_MILLION") == "1" else ()
)
"""Sessions per peak-memory case; 10^6 only on request (``harness bench --million``), as it
takes longer than the rest of the suite together."""


def _module(name: str) -> Any:
    try:
        return importlib.import_module(name)
    except ImportError as exc:
        pytest.skip(f"{name} is not available yet: {exc}")


def test_protocol_session_floor(benchmark: BenchmarkFixture) -> None:
    """The json codec alone on the wire messages of one protocol-level 20-call session."""
    messages = w.protocol_messages(20)
    tag(benchmark, key="floor/protocol-20/json", group="floor", op="session-20", layer="floor", codec="json")
    assert benchmark(w.wire_floor("json", messages)) == messages[-1]


def test_protocol_session_of_twenty_calls(benchmark: BenchmarkFixture) -> None:
    tag(
        benchmark,
        key="sessions/protocol-20",
        group="sessions",
        op="session-20",
        layer="protocol",
        codec="json",
        floor="floor/protocol-20/json",
    )
    result = benchmark(w.protocol_session(20))
    assert result == 20


@pytest.mark.parametrize("era", ["handshake", "stateless"])
def test_scripted_session_floor(benchmark: BenchmarkFixture, era: str) -> None:
    """The json codec alone on the wire messages of one scripted 20-call session, per era: the
    stateless floor over the handshake one bounds the stateless session's own ratio."""
    _module("harness.session.simulated")
    messages = w.scripted_messages(w.twenty_call_scenario(), era=era)
    key = "floor/session-20/json" if era == "handshake" else f"floor/session-20/{era}/json"
    tag(benchmark, key=key, group="floor", op="session-20", layer="floor", codec="json")
    assert benchmark(w.wire_floor("json", messages)) == messages[-1]


@pytest.mark.parametrize("era", ["handshake", "stateless"])
def test_scripted_session_of_twenty_calls(benchmark: BenchmarkFixture, era: str) -> None:
    """Twenty ``naive`` calls with no faults, per era. The stateless era (2026-07-28) has no
    handshake and every request carries its own version and capabilities; its row's
    ``ratio_to_baseline`` is its rate over the handshake era's."""
    session = _module("harness.session.simulated")
    scenario = w.twenty_call_scenario()
    first = session.run_session(scenario, "naive", "is_error", 0, era=era)
    if first.status != "ok" or first.tool_calls != 20:
        pytest.skip(f"the 20-call scenario did not run as planned: {first.status} {first.error}")
    tag(
        benchmark,
        key="sessions/scripted-20" if era == "handshake" else f"sessions/scripted-20/{era}",
        group="sessions",
        op="session-20",
        layer="run_session",
        codec="json",
        floor="floor/session-20/json",
        **({} if era == "handshake" else {"baseline": "sessions/scripted-20"}),
    )
    seeds = iter(range(10**9))
    result = benchmark(lambda: session.run_session(scenario, "naive", "is_error", next(seeds), era=era))
    assert result.tool_calls == 20 and result.status == "ok"


WORLD_TASKS = (
    "agentdojo/banking/user_task_1",
    "agentdojo/workspace/user_task_0",
    "bfcl/multi_turn_base/0",
    "bfcl/multi_turn_long_context/0",
)
"""World sessions beside the native one: AgentDojo's smallest suite (two planned calls) and its
largest (one call, and the environment and judge that cost most); a BFCL base task (4 turns) and
its long-context twin (the same calls on a far larger file system)."""
LAYERS = {"world": "run_world_session", "bfcl": "BFCL_KIND.run_session"}


@pytest.mark.parametrize("task", WORLD_TASKS)
def test_world_session_beside_a_native_one(benchmark: BenchmarkFixture, task: str) -> None:
    """One ``naive`` world session with no faults (``harness.worlds``): the world's fresh
    environment, its runtime behind the MCP core, and its judge (AgentDojo's utility, BFCL's
    checker). ``ratio_to_baseline`` is its rate over the native scripted 20-call session's from the
    same run (``sessions/scripted-20``)."""
    from harness.worlds import world_of
    from harness.worlds.scenario import world_missing

    world = world_of(task)
    assert world is not None
    why = world_missing(world)
    if why is not None:
        pytest.skip(why)
    from harness.batch.kinds import kind_for
    from harness.session.loop import LoopKind
    from harness.worlds.scenario import load_world

    scenario = dataclasses.replace(load_world(task), faults=())  # its own baseline, as the native one
    kind = kind_for(scenario)
    assert isinstance(kind, LoopKind)
    first = kind.run_session(scenario, "naive", "is_error", 0)
    if first.status != "ok" or not first.success:
        pytest.skip(f"{task} did not run as planned: {first.status} {first.error}")
    tag(
        benchmark,
        key=f"sessions/world/{task}",
        group="sessions",
        op=f"session-world-{first.tool_calls}",
        layer=LAYERS[kind.name],
        codec="json",
        baseline="sessions/scripted-20",
    )
    seeds = iter(range(10**9))
    result = benchmark(lambda: kind.run_session(scenario, "naive", "is_error", next(seeds)))
    assert result.success and result.judge == world


def test_bfcl_session_on_bfcl_s_own_paths(benchmark: BenchmarkFixture) -> None:
    """The BFCL base session above with both shortcuts off (``harness.worlds.bfcl.plain``: BFCL's
    runner for every call, its checker for every verdict). ``ratio_to_baseline`` is its rate over
    the shortcuts' from the same run (``sessions/world/bfcl/multi_turn_base/0``)."""
    from harness.worlds.scenario import world_missing

    why = world_missing("bfcl")
    if why is not None:
        pytest.skip(why)
    from harness.batch.kinds import kind_for
    from harness.session.loop import LoopKind
    from harness.worlds import bfcl
    from harness.worlds.scenario import load_world

    task = "bfcl/multi_turn_base/0"
    scenario = dataclasses.replace(load_world(task), faults=())
    kind = kind_for(scenario)
    assert isinstance(kind, LoopKind)
    tag(
        benchmark,
        key=f"sessions/world/{task}/plain",
        group="sessions",
        op="session-world-plain",
        layer=LAYERS[kind.name],
        codec="json",
        baseline=f"sessions/world/{task}",
    )
    seeds = iter(range(10**9))

    def plain() -> Any:
        with bfcl.plain():
            return kind.run_session(scenario, "naive", "is_error", next(seeds))

    result = benchmark(plain)
    assert result.success and result.judge == "bfcl"


@pytest.mark.parametrize("source", ["template", "jsonschema", "pydantic", "fastmcp", "harvested"])
def test_scripted_session_by_source(benchmark: BenchmarkFixture, source: str) -> None:
    """What a fault's text costs by where it comes from: ``travel_day`` (five faults of five
    kinds) for ``reader`` under ``is_error``, with every raising fault's ``source`` set.

    ``ratio_to_baseline`` is this source's rate over the template's from the same run: a real
    source runs the stack's validator or builds a real ``httpx`` exception on each fault.
    """
    session = _module("harness.session.simulated")
    from harness.scenarios.scenario import load_scenario

    scenario = load_scenario("travel_day").with_overrides({"faults.source": source})
    first = session.run_session(scenario, "reader", "is_error", 0)
    if first.status != "ok":
        pytest.skip(f"travel_day did not run under source {source}: {first.status} {first.error}")
    tag(
        benchmark,
        key=f"sessions/travel_day/{source}",
        group="sessions",
        op="session-faulted",
        layer="run_session",
        codec="json",
        **({} if source == "template" else {"baseline": "sessions/travel_day/template"}),
    )
    seeds = iter(range(10**9))
    result = benchmark(lambda: session.run_session(scenario, "reader", "is_error", next(seeds)))
    assert result.status == "ok"


@pytest.mark.parametrize(
    ("executor", "workers"), [("serial", 1), ("process", 1), ("process", 2), ("dask", 1), ("dask", 2)]
)
def test_batch_runner(benchmark: BenchmarkFixture, tmp_path: Path, executor: str, workers: int) -> None:
    batch = _module("harness.batch.runner")
    _module("harness.session.simulated")
    if executor == "dask":
        pytest.importorskip("distributed", reason="dask.distributed is not installed")
    grid = w.batch_grid(BATCH_SESSIONS)
    runs = iter(range(10**6))

    def run() -> Any:
        return batch.run_batch(grid, tmp_path / f"run-{next(runs)}", executor=executor, workers=workers)

    tag(
        benchmark,
        key=f"batch/{executor}/{workers}",
        group="sessions",
        op="batch",
        layer=executor,
        workers=workers,
        sessions=len(grid),
        batch=len(grid),
    )
    summary = benchmark.pedantic(run, rounds=1 if QUICK else 3, iterations=1, warmup_rounds=0)
    assert summary.ran == len(grid) and summary.harness_errors == 0


@pytest.mark.parametrize("executor", ["process", "dask"])
def test_batch_scaling(benchmark: BenchmarkFixture, tmp_path: Path, executor: str) -> None:
    """Two workers against one, timed in adjacent pairs (ABBA order) in this one case.

    A shared machine's speed drifts by tens of percent over seconds; timing the
    1-worker and 2-worker runs of a pair back to back puts the same drift on both,
    and the figure is the median of the pairs' ratios.
    """
    batch = _module("harness.batch.runner")
    _module("harness.session.simulated")
    if executor == "dask":
        pytest.importorskip("distributed", reason="dask.distributed is not installed")
    grid = w.batch_grid(SCALING_SESSIONS)
    seconds: dict[int, list[float]] = {1: [], 2: []}
    runs = iter(range(10**6))

    def timed(workers: int) -> None:
        start = time.perf_counter()
        summary = batch.run_batch(grid, tmp_path / f"run-{next(runs)}", executor=executor, workers=workers)
        seconds[workers].append(time.perf_counter() - start)
        assert summary.ran == len(grid) and summary.harness_errors == 0

    pairs = iter(range(10**6))

    def pair() -> None:
        order = (1, 2) if next(pairs) % 2 == 0 else (2, 1)
        for workers in order:
            timed(workers)

    benchmark.pedantic(pair, rounds=SCALING_PAIRS, iterations=1, warmup_rounds=0)
    ratios = [one / two for one, two in zip(seconds[1], seconds[2], strict=True)]
    tag(
        benchmark,
        key=f"scaling/{executor}/2",
        group="sessions",
        op="scaling",
        layer=executor,
        workers=2,
        sessions=len(grid),
        batch=2 * len(grid),
        measured_ratio=statistics.median(ratios),
        seconds_1=seconds[1],
        seconds_2=seconds[2],
    )


_MEMORY_SCRIPT = """
import json, sys, tempfile
from pathlib import Path
from harness.batch.results import ResultsDir
from harness.batch.runner import run_batch
from harness.bench.workloads import batch_grid, peak_rss_kb
grid = batch_grid(int(sys.argv[1]))
before = []
consolidate = ResultsDir.consolidate
def consolidate_after_reading_the_peak(self):
    before.append(peak_rss_kb())  # every session has run; sessions.parquet is not written yet
    return consolidate(self)
ResultsDir.consolidate = consolidate_after_reading_the_peak
with tempfile.TemporaryDirectory() as tmp:
    summary = run_batch(grid, Path(tmp) / "run", executor="serial", workers=1)
found = {"ran": summary.ran, "errors": summary.harness_errors, "peak_kb": peak_rss_kb()}
print(json.dumps({**found, "run_peak_kb": before[0] if before else None}))
"""


@pytest.mark.timeout(3600)  # 10^6 sessions take about a quarter of an hour on one core
@pytest.mark.parametrize("sessions", MEMORY_SIZES)
def test_peak_memory(benchmark: BenchmarkFixture, sessions: int) -> None:
    _module("harness.batch.runner")
    _module("harness.session.simulated")
    done: list[subprocess.CompletedProcess[str]] = []

    def run() -> None:
        # Never raises: a failed round would leave pytest-benchmark no timing to save, and its
        # report would then crash over the real failure, which is checked below instead.
        done.append(
            subprocess.run(
                [sys.executable, "-c", _MEMORY_SCRIPT, str(sessions)],
                capture_output=True,
                text=True,
                check=False,
            )
        )

    benchmark.pedantic(run, rounds=1, iterations=1, warmup_rounds=0)
    proc = done[0]
    assert proc.returncode == 0, f"the {sessions}-session batch failed:\n{proc.stderr[-3000:]}"
    found: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    assert found["ran"] == sessions and found["errors"] == 0, found
    assert found["run_peak_kb"] is not None, "the batch never wrote sessions.parquet"
    tag(
        benchmark,
        key=f"memory/serial/{sessions}",
        group="sessions",
        op="memory",
        layer="serial",
        workers=1,
        sessions=sessions,
        batch=sessions,
        peak_rss_mb=found["peak_kb"] / 1024,
        peak_rss_run_mb=found["run_peak_kb"] / 1024,
    )
