"""Runs for the viewer's tests: small real ones with traces, an interrupted one, a big fake one."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pyarrow.parquet as pq

from harness.batch.grid import Grid
from harness.batch.results import MANIFEST, SESSIONS, ResultsDir
from harness.batch.runner import run_batch
from harness.batch.worker import SessionOptions

SMALL = Grid(
    ("flaky_weather", "strict_dates"),
    ("reader", "naive"),
    ("is_error", "collapse", "masked"),
    ("typical",),
    range(3),
)
"""36 sessions: strict_dates is where a readable error decides the outcome."""


def small_run(out: Path, *, traces: bool = True) -> Path:
    run_batch(SMALL, out, executor="serial", options=SessionOptions(traces=traces))
    return out


def interrupt(run: Path, keep: int) -> Path:
    """Make ``run`` look as a run killed after ``keep`` rows does: chunks, no sessions.parquet."""
    table = pq.read_table(run / SESSIONS)
    results = ResultsDir.open(run)
    results.write_chunk(table.slice(0, keep).to_pylist(), first=0)
    (run / SESSIONS).unlink()
    manifest = json.loads((run / MANIFEST).read_text())
    manifest["status"] = "interrupted"
    manifest.pop("finished", None)
    (run / MANIFEST).write_text(json.dumps(manifest, indent=2))
    return run


def big_fake_run(out: Path, scenarios: int = 50, seeds: int = 100) -> Path:
    """4 agents x 5 strategies x ``scenarios`` x ``seeds`` sessions of the fake session function
    (:mod:`harness.fixtures.fakes`): 100,000 by default, in a few seconds."""
    from harness.fixtures.fakes import fake_options

    grid = Grid(
        tuple(f"s{i:03d}" for i in range(scenarios)),
        ("a", "b", "c", "d"),
        ("is_error", "masked", "collapse", "escape", "input_required"),
        ("typical",),
        range(seeds),
    )
    run_batch(grid, out, executor="serial", options=fake_options())
    return out


@contextmanager
def served(source: Path, *extra: str) -> Iterator[str]:
    """``harness view SOURCE --port 0 --no-open`` in a subprocess; yields its address."""
    with serving(source, *extra) as (url, _):
        yield url


@contextmanager
def serving(source: Path, *extra: str) -> Iterator[tuple[str, subprocess.Popen[str]]]:
    """As :func:`served`, and the server's process."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "harness.cli.main", "view", str(source), "--port", "0", "--no-open", *extra],
        stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stdin=subprocess.DEVNULL,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    try:
        assert proc.stderr is not None
        deadline = time.monotonic() + 60
        seen = []
        while time.monotonic() < deadline:
            line = proc.stderr.readline()
            if not line:
                raise AssertionError(f"harness view ended before serving: {''.join(seen)}")
            seen.append(line)
            if "serving" in line:
                yield line.split(" at ", 1)[1].split(" ", 1)[0], proc
                break
        else:
            raise AssertionError("harness view did not start within 60 s")
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        if proc.stderr is not None:
            proc.stderr.close()
