"""One writer per results directory, and no reader counts a session twice.

A second ``harness run`` on a directory that is being written (a ``--resume``, or a new run
with the same ``--out``) is refused in one line naming the writer's pid; the lock dies with its
holder, so a killed run resumes at once; every reader refuses a table that holds a key twice.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from harness.batch.results import LOCK, ResultsDir, WriterBusy, WriterLock, load_run, load_sessions
from harness.batch.runner import run_batch
from harness.errors import UserError
from harness.fixtures.fakes import fake_options, kill_grid
from tests.helpers.cli import cli
from tests.helpers.runs import forget_digest

HARNESS = [sys.executable, "-m", "harness.cli.main"]
# 15 scenarios x 6 agents x 5 strategies x 24 seeds = 10,800 sessions, serially: several seconds,
# long enough for two more writers to start and be refused while it runs.
GRID_ARGS = ["run", "--seeds", "24", "--executor", "serial", "--no-compare"]
GRID_SIZE = 15 * 6 * 5 * 24


def _start(args: list[str]) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [*HARNESS, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=Path.cwd()
    )


def _wait_for_manifest(run: Path, proc: subprocess.Popen[str]) -> None:
    t0 = time.monotonic()
    while not (run / "manifest.json").exists() and proc.poll() is None and time.monotonic() - t0 < 60:
        time.sleep(0.02)
    assert proc.poll() is None, "the first writer ended before the second could try"


@pytest.mark.slow
def test_two_concurrent_writers_one_is_refused_and_rows_equal_the_grid(tmp_path: Path) -> None:
    run = tmp_path / "run"
    first = _start([*GRID_ARGS, "--out", str(run)])
    _wait_for_manifest(run, first)
    seconds = [_start(["run", "--resume", "--out", str(run)]), _start([*GRID_ARGS, "--out", str(run)])]
    refusals = [second.communicate(timeout=120)[1] for second in seconds]
    assert first.poll() is None, "the first writer must still be running when the others try"
    _, err = first.communicate(timeout=300)
    assert first.returncode == 0, err
    for second, refusal in zip(seconds, refusals, strict=True):
        assert second.returncode == 2, refusal
        lines = refusal.strip().splitlines()
        assert len(lines) == 1, refusal
        assert f"process {first.pid} is writing this run" in lines[0]
    df = load_sessions(run)
    assert len(df) == GRID_SIZE
    assert not df.duplicated(["scenario", "agent", "strategy", "host", "era", "seed"]).any()
    assert ResultsDir.open(run).manifest["status"] == "complete"


@pytest.mark.slow
def test_a_killed_writer_leaves_no_lock_behind(tmp_path: Path) -> None:
    run = tmp_path / "run"
    first = _start([*GRID_ARGS, "--out", str(run)])
    _wait_for_manifest(run, first)
    first.send_signal(signal.SIGKILL)
    first.communicate()
    assert (run / LOCK).read_text().strip() == str(first.pid)  # the file stays; its lock does not
    resumed = subprocess.run(
        [*HARNESS, "run", "--resume", "--out", str(run), "--no-compare"], capture_output=True, text=True
    )
    assert resumed.returncode == 0, resumed.stderr
    assert len(load_sessions(run)) == GRID_SIZE


def test_the_lock_is_held_for_the_whole_run_and_released_after(tmp_path: Path) -> None:
    seen: list[str] = []

    def progress(total: int, done: int):  # type: ignore[no-untyped-def]
        def advance(n: int) -> None:
            with pytest.raises(WriterBusy) as refused:
                WriterLock.acquire(tmp_path / "run")
            seen.append(str(refused.value))

        return advance

    run_batch(kill_grid(), tmp_path / "run", executor="serial", options=fake_options(), progress=progress)
    assert seen and all(f"process {os.getpid()} is writing" in s for s in seen)
    WriterLock.acquire(tmp_path / "run").release()  # free once the run is over


def _doubled(tmp_path: Path) -> Path:
    run = tmp_path / "run"
    run_batch(kill_grid(), run, executor="serial", options=fake_options())
    table = pq.read_table(run / "sessions.parquet")
    pq.write_table(pa.concat_tables([table, table.slice(0, 7)]), run / "sessions.parquet")
    forget_digest(run)  # a table written twice by an older writer, which recorded no digest
    return run


def test_every_reader_refuses_a_table_with_a_key_twice(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = _doubled(tmp_path)
    for read in (load_sessions, load_run, lambda p: ResultsDir.open(p).read_rows()):
        with pytest.raises(
            UserError, match=r"7 rows repeat a session key already in the table \(307 rows for 300"
        ):
            read(run)
    with pytest.raises(UserError, match="7 rows repeat a session key"):
        load_sessions(run / "sessions.parquet")
    loose = tmp_path / "loose.parquet"
    (run / "sessions.parquet").rename(loose)
    with pytest.raises(UserError, match="7 rows repeat a session key"):
        load_sessions(loose)
    (run / "sessions.parquet").write_bytes(loose.read_bytes())
    for command in (["compare"], ["effects"], ["plot", "--out", str(tmp_path / "figs")]):
        code, _, err = cli([command[0], str(run), *command[1:]], capsys)
        assert code == 2, (command, err)
        assert "7 rows repeat a session key" in err
        assert "Traceback" not in err


def test_a_swept_parameter_is_part_of_the_key_of_a_loose_table(tmp_path: Path) -> None:
    df = pd.DataFrame(
        {"scenario": ["s"] * 2, "agent": ["a"] * 2, "strategy": ["is_error"] * 2, "host": ["typical"] * 2,
         "era": ["handshake"] * 2, "seed": [0, 0], "faults.rate": [0.1, 0.2], "success": [True, False]}
    )  # fmt: skip
    df.to_parquet(tmp_path / "sweep.parquet")
    assert len(load_sessions(tmp_path / "sweep.parquet")) == 2


def test_a_resume_refuses_a_run_with_a_key_twice(tmp_path: Path) -> None:
    run = _doubled(tmp_path)
    manifest = ResultsDir.open(run)
    manifest.manifest["status"] = "interrupted"
    manifest.write_manifest()
    with pytest.raises(UserError, match="7 rows repeat a session key"):
        run_batch(kill_grid(), run, executor="serial", options=fake_options(), resume=True)
