"""SIGKILL the runner at 20 random points, resuming each time: nothing lost, nothing twice.

The points are random in the batch's progress, not in wall time, so that the test means the
same on an idle machine and on a loaded one: each kill waits for the runner to begin (its
manifest written, or rewritten by the resume: imports take seconds under load), then for 0 or
1 more chunks of rows, then up to 50 ms more. The first kill comes as soon as the runner
begins, before it can have written a row; the last as soon as ``sessions.parquet`` appears,
while the runner removes the chunks and finishes the manifest (or just after).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from harness.batch.grid import Grid
from harness.batch.results import CHUNKS, MANIFEST, SESSIONS, ResultsDir, load_run
from harness.batch.runner import run_batch
from harness.fixtures.fakes import fake_options, kill_grid
from harness.session.row import ROW_COLUMNS, ROW_VERSION
from tests.helpers.runs import forget_digest

GRID = kill_grid()
OPTS = fake_options()
RUNNER = [sys.executable, "-m", "harness.fixtures.fakes"]
KEYS = ["scenario", "agent", "strategy", "host", "seed"]
PATIENCE_S = 120.0
"""How long a kill waits for the runner to get where it is going (a loaded machine is slow)."""


def _manifest(run: Path) -> bytes | None:
    try:
        return (run / MANIFEST).read_bytes()
    except FileNotFoundError:
        return None


def _chunks(run: Path) -> int:
    return len(list((run / CHUNKS).glob("part-*.parquet"))) if (run / CHUNKS).is_dir() else 0


def _wait(proc: subprocess.Popen[bytes], until: Callable[[], bool]) -> None:
    t0 = time.monotonic()
    while not until() and proc.poll() is None and time.monotonic() - t0 < PATIENCE_S:
        time.sleep(0.002)


def _wait_until_begun(proc: subprocess.Popen[bytes], run: Path, manifest: bytes | None) -> None:
    """Until the runner has written the manifest (a new run) or rewritten it (a resume)."""
    _wait(proc, lambda: _manifest(run) != manifest)


def _wait_for_chunks(proc: subprocess.Popen[bytes], run: Path, count: int) -> None:
    """Until ``count`` chunks exist, or ``sessions.parquet`` (the chunks are being gathered)."""
    _wait(proc, lambda: _chunks(run) >= count or (run / SESSIONS).exists())


@pytest.mark.slow
def test_twenty_random_kills_then_resume_equal_an_uninterrupted_run(tmp_path: Path) -> None:
    run = tmp_path / "run"
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parent.parent)}
    rng = np.random.default_rng(20)
    more_chunks = [0, *rng.integers(0, 2, size=18), len(GRID)]  # the last waits for sessions.parquet
    delays = [0.0, *rng.uniform(0.0, 0.05, size=18), 0.0]
    seen: pd.DataFrame | None = None
    kills = 0
    for chunks, delay in zip(more_chunks, delays, strict=True):
        manifest, before = _manifest(run), _chunks(run)
        proc = subprocess.Popen([*RUNNER, str(run)], env=env)
        _wait_until_begun(proc, run, manifest)  # imports done (seconds, under load), the run claimed
        _wait_for_chunks(proc, run, before + chunks)
        time.sleep(delay)
        if proc.poll() is None:
            proc.send_signal(signal.SIGKILL)
            kills += 1
        proc.wait()
        now = ResultsDir.open(run).read_rows()
        assert "wall_time_s" in now.columns  # even with no row yet (a kill before the first chunk)
        assert not now.duplicated(KEYS).any()
        if seen is not None:
            # every row that was finished before stays, unchanged
            merged = seen.merge(now, on=["scenario", "agent", "strategy", "seed"], suffixes=("", "_now"))
            assert len(merged) == len(seen)
            assert (merged.wall_time_s == merged.wall_time_s_now).all()
        seen = now
    assert kills >= 10, "most of the kills should land while the batch runs"
    subprocess.run([*RUNNER, str(run)], env=env, check=True)
    final = pd.read_parquet(run / SESSIONS)
    reference = run_batch(GRID, tmp_path / "reference", executor="serial", options=OPTS).frame
    assert reference is not None
    pd.testing.assert_frame_equal(final.drop(columns="wall_time_s"), reference.drop(columns="wall_time_s"))


def test_a_run_killed_before_its_first_chunk_reads_as_an_empty_table_with_every_column(
    tmp_path: Path,
) -> None:
    g = Grid(("s1",), ("a",), ("is_error",), ("typical",), (0, 1), sweeps=(("faults.rate", (0.0, 0.5)),))
    ResultsDir.create(tmp_path / "killed", {"grid": g.to_json(), "row_version": ROW_VERSION})
    columns = [*ROW_COLUMNS, "faults.rate"]  # what a row of this run has: the row, then the sweep
    empty = ResultsDir.open(tmp_path / "killed").read_rows()
    assert empty.empty and list(empty.columns) == columns
    df, state = load_run(tmp_path / "killed")
    assert df.empty and list(df.columns) == columns and state.complete is False
    done = run_batch(g, tmp_path / "done", executor="serial", options=OPTS).frame
    assert done is not None and len(done) == 4
    assert set(done.columns) <= set(columns)  # a fake row has fewer columns than a real one
    # a reader treats the empty table as it treats a full one
    merged = empty.merge(done, on=[*KEYS, "faults.rate"], suffixes=("", "_now"))
    assert merged.empty and {"wall_time_s", "wall_time_s_now"} <= set(merged.columns)


def test_a_corrupt_results_file_is_a_clear_error(tmp_path: Path) -> None:
    from harness.errors import UserError

    g = Grid(("s1",), ("a",), ("is_error",), ("typical",), (0, 1))
    run_batch(g, tmp_path / "done", options=OPTS, executor="serial")
    (tmp_path / "done" / "sessions.parquet").write_bytes(b"not parquet at all")
    with pytest.raises(UserError, match=r"sessions\.parquet: its bytes are not the ones the run wrote"):
        ResultsDir.open(tmp_path / "done").read_rows()
    forget_digest(tmp_path / "done")  # a run from before the digest: the parquet reader's error, in one line
    with pytest.raises(UserError, match=r"sessions\.parquet: corrupt results file"):
        ResultsDir.open(tmp_path / "done").read_rows()
    from harness.session.row import ROW_VERSION

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
    unfinished.release()  # as a kill would: the run is left to be resumed
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
