"""SIGKILL the runner at 20 random points, resuming each time: nothing lost, nothing twice."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from harness.batch.grid import Grid
from harness.batch.results import ResultsDir
from harness.batch.runner import run_batch
from harness.fixtures.fakes import fake_options, kill_grid

GRID = kill_grid()
OPTS = fake_options()
RUNNER = [sys.executable, "-m", "harness.fixtures.fakes"]


@pytest.mark.slow
def test_twenty_random_kills_then_resume_equal_an_uninterrupted_run(tmp_path: Path) -> None:
    run = tmp_path / "run"
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parent.parent)}
    rng = np.random.default_rng(20)
    seen: pd.DataFrame | None = None
    kills = 0
    for delay in rng.uniform(0.0, 0.8, size=20):
        proc = subprocess.Popen([*RUNNER, str(run)], env=env)
        # wait until the runner has the manifest (imports done), then a random extra delay
        t0 = time.monotonic()
        while not (run / "manifest.json").exists() and proc.poll() is None and time.monotonic() - t0 < 30:
            time.sleep(0.01)
        time.sleep(delay)
        if proc.poll() is None:
            proc.send_signal(signal.SIGKILL)
            kills += 1
        proc.wait()
        now = ResultsDir.open(run).read_rows()
        assert not now.duplicated(["scenario", "agent", "strategy", "host", "seed"]).any()
        if seen is not None:
            # every row that was finished before stays, unchanged
            merged = seen.merge(now, on=["scenario", "agent", "strategy", "seed"], suffixes=("", "_now"))
            assert len(merged) == len(seen)
            assert (merged.wall_time_s == merged.wall_time_s_now).all()
        seen = now
    assert kills >= 10, "most of the kills should land while the batch runs"
    subprocess.run([*RUNNER, str(run)], env=env, check=True)
    final = pd.read_parquet(run / "sessions.parquet")
    reference = run_batch(GRID, tmp_path / "reference", executor="serial", options=OPTS).frame
    assert reference is not None
    pd.testing.assert_frame_equal(final.drop(columns="wall_time_s"), reference.drop(columns="wall_time_s"))


def test_a_corrupt_results_file_is_a_clear_error(tmp_path: Path) -> None:
    from harness.errors import UserError

    g = Grid(("s1",), ("a",), ("is_error",), ("typical",), (0, 1))
    run_batch(g, tmp_path / "done", options=OPTS, executor="serial")
    (tmp_path / "done" / "sessions.parquet").write_bytes(b"not parquet at all")
    with pytest.raises(UserError, match=r"sessions\.parquet: corrupt results file"):
        ResultsDir.open(tmp_path / "done").read_rows()
    from harness.sim.row import ROW_VERSION

    unfinished = ResultsDir.create(tmp_path / "unfinished", {"grid": g.to_json(), "row_version": ROW_VERSION})
    unfinished.write_chunk(
        [
            {
                "scenario": "s1",
                "agent": "a",
                "strategy": "is_error",
                "host": "typical",
                "era": "handshake",
                "seed": 0,
            }
        ]
    )
    (tmp_path / "unfinished" / "chunks" / "part-bad.parquet").write_bytes(b"not parquet at all")
    with pytest.raises(UserError, match=r"part-bad\.parquet: corrupt results file"):
        ResultsDir.open(tmp_path / "unfinished").read_rows()
    with pytest.raises(UserError, match=r"part-bad\.parquet: corrupt results file"):
        run_batch(g, tmp_path / "unfinished", options=OPTS, executor="serial", resume=True)


def test_a_run_from_before_the_era_column_still_loads_as_handshake(tmp_path: Path) -> None:
    from harness.errors import UserError

    g = Grid(("s1",), ("a",), ("is_error",), ("typical",), (0,))
    row = {
        "scenario": "s1",
        "agent": "a",
        "strategy": "is_error",
        "host": "typical",
        "seed": 0,
        "success": True,
    }
    old = ResultsDir.create(tmp_path / "old", {"grid": g.to_json(), "row_version": 4})
    old.write_chunk([row])
    df = ResultsDir.open(tmp_path / "old").read_rows()
    assert df["era"].tolist() == ["handshake"]
    new = ResultsDir.create(tmp_path / "new", {"grid": g.to_json(), "row_version": 5})
    new.write_chunk([row])  # a row of this version without its era is broken, not old
    with pytest.raises(UserError, match=r"lack key columns \['era'\]"):
        ResultsDir.open(tmp_path / "new").read_rows()
