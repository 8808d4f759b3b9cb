"""The batch runner: chunks, executors, crashes, resume after a real SIGKILL."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

from harness.batch.grid import Grid
from harness.batch.results import ResultsDir
from harness.batch.runner import SessionOptions, run_batch
from harness.errors import UserError
from harness.fixtures.fakes import fake_options, kill_grid

FAKE = SessionOptions(
    session_fn="harness.fixtures.fakes:fake_session", loader="harness.fixtures.fakes:fake_loader", traces=True
)


def grid(agents: tuple[str, ...] = ("a", "b"), seeds: int = 6) -> Grid:
    return Grid(("s1", "s2"), agents, ("is_error", "collapse"), ("typical",), tuple(range(seeds)))


def stable(df: pd.DataFrame) -> pd.DataFrame:
    return df.drop(columns=["wall_time_s"]).reset_index(drop=True)


def test_serial_batch_writes_one_row_per_cell_and_a_complete_manifest(tmp_path: Path) -> None:
    g = grid()
    summary = run_batch(g, tmp_path / "run", executor="serial", options=FAKE)
    df = pd.read_parquet(tmp_path / "run" / "sessions.parquet")
    assert len(df) == len(g) == summary.ran
    assert not df.duplicated(["scenario", "agent", "strategy", "host", "seed"]).any()
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    assert manifest["status"] == "complete"
    assert manifest["sessions"] == len(g)
    assert manifest["grid"]["seeds"] == {"start": 0, "stop": 6}
    assert len(manifest["fault_schedule_hash"]) == 64
    assert len(list((tmp_path / "run" / "traces").glob("*.jsonl"))) == len(g)
    assert not list((tmp_path / "run" / "chunks").glob("*.parquet"))


def test_results_are_identical_across_executors(tmp_path: Path) -> None:
    g = grid(seeds=4)
    frames = {
        ex: stable(run_batch(g, tmp_path / ex, executor=ex, workers=2, options=FAKE).frame)  # type: ignore[arg-type]
        for ex in ("serial", "process", "dask")
    }
    pd.testing.assert_frame_equal(frames["serial"], frames["process"])
    pd.testing.assert_frame_equal(frames["serial"], frames["dask"])


def test_a_session_that_raises_becomes_a_harness_error_row_and_the_batch_goes_on(tmp_path: Path) -> None:
    g = grid(agents=("a", "crasher"))
    summary = run_batch(g, tmp_path / "run", executor="serial", options=FAKE)
    df = summary.frame
    assert df is not None and len(df) == len(g)
    bad = df[df.status == "harness_error"]
    assert len(bad) == 2 * 2 * 2  # seeds 1 and 4, two scenarios, two strategies
    assert set(bad.agent) == {"crasher"}
    log = (tmp_path / "run" / "errors.log").read_text()
    assert log.count("RuntimeError: fake harness bug") == len(bad)


def test_a_worker_that_dies_is_recorded_as_harness_error_and_the_rest_complete(tmp_path: Path) -> None:
    g = Grid(("s1",), ("a", "killer"), ("is_error",), ("typical",), tuple(range(5)))
    summary = run_batch(g, tmp_path / "run", executor="process", workers=2, options=FAKE)
    df = summary.frame
    assert df is not None and len(df) == len(g)
    dead = df[df.status == "harness_error"]
    assert list(zip(dead.agent, dead.seed, strict=True)) == [("killer", 2)]
    assert (df[df.status != "harness_error"].status == "ok").all()
    assert "worker process died" in (tmp_path / "run" / "errors.log").read_text()


def test_a_worker_death_early_in_a_long_stream_loses_no_later_task(tmp_path: Path) -> None:
    # 40 cells in tasks of 2 with 8 in flight: the pool breaks while most tasks are not yet submitted.
    g = Grid(("s1",), ("killer", "a"), ("is_error",), ("typical",), tuple(range(20)))
    summary = run_batch(g, tmp_path / "run", executor="process", workers=2, options=FAKE)
    df = summary.frame
    assert len(df) == len(g)
    assert not df.duplicated(["agent", "seed"]).any()
    dead = df[df.status == "harness_error"]
    assert list(zip(dead.agent, dead.seed, strict=True)) == [("killer", 2)]


def test_an_existing_run_is_never_overwritten(tmp_path: Path) -> None:
    run_batch(grid(seeds=1), tmp_path / "run", executor="serial", options=FAKE)
    with pytest.raises(UserError, match="already holds a run"):
        run_batch(grid(seeds=1), tmp_path / "run", executor="serial", options=FAKE)
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("mine")
    with pytest.raises(UserError, match="not an empty directory"):
        run_batch(grid(seeds=1), foreign, executor="serial", options=FAKE)
    with pytest.raises(UserError, match="not a harness results directory"):
        run_batch(grid(seeds=1), foreign, executor="serial", options=FAKE, resume=True)
    assert (foreign / "notes.txt").read_text() == "mine"


def test_resume_with_another_grid_is_refused(tmp_path: Path) -> None:
    run_batch(grid(seeds=2), tmp_path / "run", executor="serial", options=FAKE)
    with pytest.raises(UserError, match="different grid"):
        run_batch(grid(seeds=3), tmp_path / "run", executor="serial", options=FAKE, resume=True)


def test_a_run_written_as_format_1_is_still_read_and_resumed(tmp_path: Path) -> None:
    # harness-results/1 wrote every seed as a list; /2 writes a span. An old run must still open.
    g = grid(seeds=3)
    run_batch(g, tmp_path / "run", executor="serial", options=FAKE)
    path = tmp_path / "run" / "manifest.json"
    manifest = json.loads(path.read_text())
    manifest["format"], manifest["grid"]["seeds"] = "harness-results/1", [0, 1, 2]
    path.write_text(json.dumps(manifest))
    assert ResultsDir.open(tmp_path / "run").grid == g
    summary = run_batch(g, tmp_path / "run", executor="serial", options=FAKE, resume=True)
    assert (summary.ran, summary.skipped) == (0, len(g))
    assert json.loads(path.read_text())["format"] == "harness-results/1"  # left as it was written


def _chunks(path: Path) -> int:
    return len(list((path / "chunks").glob("part-*.parquet")))


def test_resume_after_sigkill_loses_nothing_and_duplicates_nothing(tmp_path: Path) -> None:
    run = tmp_path / "run"
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parent.parent)}
    runner = [sys.executable, "-m", "harness.fixtures.fakes", str(run)]
    proc = subprocess.Popen(runner, env=env)
    deadline = time.monotonic() + 60
    while _chunks(run) < 3 and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.02)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    kept = ResultsDir.open(run).read_rows()
    assert 0 < len(kept) < len(kill_grid()), "the kill should land mid-batch"
    subprocess.run(runner, env=env, check=True)
    final = pd.read_parquet(run / "sessions.parquet")
    reference = run_batch(
        kill_grid(), tmp_path / "reference", executor="serial", options=fake_options()
    ).frame
    assert reference is not None
    pd.testing.assert_frame_equal(stable(final), stable(reference))
    merged = final.merge(kept, on=["scenario", "agent", "strategy", "host", "seed"], suffixes=("", "_kept"))
    assert len(merged) == len(kept)  # every row finished before the kill is still there, unchanged
    assert (merged.wall_time_s == merged.wall_time_s_kept).all()
