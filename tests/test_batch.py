"""The batch runner: chunks, executors, crashes, resume after a real SIGKILL."""

from __future__ import annotations

import itertools
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from harness.batch.grid import Cell, Grid
from harness.batch.results import ResultsDir
from harness.batch.runner import SessionOptions, run_batch
from harness.batch.worker import error_row
from harness.errors import UserError
from harness.fixtures.fakes import fake_options, kill_grid
from harness.session.row import ROW_VERSION

FAKE = fake_options(traces=True)


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
    assert not (tmp_path / "run" / "chunks").exists()  # not even an empty chunks/ is left behind


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
    assert bad.error.str.startswith("RuntimeError: fake harness bug in").all()  # the row says why
    assert summary.first_error.endswith(bad.error.iloc[0])


def test_an_error_row_first_in_a_chunk_costs_the_other_rows_none_of_their_columns(tmp_path: Path) -> None:
    # pyarrow's from_pylist takes its columns from the first row alone: a short error row
    # first in a chunk used to drop every other row's results.
    g = Grid(("s1",), ("a",), ("is_error",), ("typical",), range(2))
    results = ResultsDir.create(tmp_path / "run", {"grid": g.to_json(), "status": "running"})
    failed, ok = g.cells()
    full = {**error_row(ok), "status": "ok", "steps": 7, "recover_steps": [1, 2], "error": ""}
    chunk = results.write_chunk([error_row(failed, reason="RuntimeError: boom"), full])
    back = pd.read_parquet(chunk)
    assert back.steps.tolist()[1] == 7 and list(back.recover_steps.iloc[1]) == [1, 2]
    assert back.error.tolist() == ["RuntimeError: boom", ""]


def test_a_worker_that_dies_is_recorded_as_harness_error_and_the_rest_complete(tmp_path: Path) -> None:
    g = Grid(("s1",), ("a", "killer"), ("is_error",), ("typical",), tuple(range(5)))
    summary = run_batch(g, tmp_path / "run", executor="process", workers=2, options=FAKE)
    df = summary.frame
    assert df is not None and len(df) == len(g)
    dead = df[df.status == "harness_error"]
    assert list(zip(dead.agent, dead.seed, strict=True)) == [("killer", 2)]
    assert (df[df.status != "harness_error"].status == "ok").all()
    assert "worker process died" in (tmp_path / "run" / "errors.log").read_text()
    assert dead.error.str.startswith("worker process died").all()


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


def test_a_run_whose_rows_mean_something_else_is_not_resumed(tmp_path: Path) -> None:
    # A run from before end-state outcomes (no row_version: version 1) must not be finished by
    # code whose columns mean something else, or one table would mix both.
    g = grid(seeds=3)
    run_batch(g, tmp_path / "run", executor="serial", options=FAKE)
    path = tmp_path / "run" / "manifest.json"
    manifest = json.loads(path.read_text())
    assert manifest["row_version"] == ROW_VERSION
    del manifest["row_version"]
    path.write_text(json.dumps(manifest))
    with pytest.raises(
        UserError, match=f"rows are of version 1 and this harness writes version {ROW_VERSION}"
    ):
        run_batch(g, tmp_path / "run", executor="serial", options=FAKE, resume=True)


def test_a_run_of_the_previous_row_version_is_not_resumed(tmp_path: Path) -> None:
    # Rows written before the last version change were judged or drawn otherwise (version 7: no
    # write after a deletion judged, a file agent seeded with its folder): not finished into one table.
    g = grid(seeds=2)
    run_batch(g, tmp_path / "run", executor="serial", options=FAKE)
    path = tmp_path / "run" / "manifest.json"
    manifest = json.loads(path.read_text())
    manifest["row_version"] = ROW_VERSION - 1
    path.write_text(json.dumps(manifest))
    with pytest.raises(UserError, match=f"rows are of version {ROW_VERSION - 1} and this harness writes"):
        run_batch(g, tmp_path / "run", executor="serial", options=FAKE, resume=True)


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


class _PathLike:
    def __init__(self, path: Path) -> None:
        self.path = path

    def __fspath__(self) -> str:
        return str(self.path)


def test_run_batch_takes_a_str_or_any_path_like(tmp_path: Path) -> None:
    g = grid(seeds=2)
    by_str = run_batch(g, str(tmp_path / "s"), executor="serial", options=FAKE)
    assert by_str.out == tmp_path / "s" and len(by_str.frame) == len(g)
    by_fspath = run_batch(g, _PathLike(tmp_path / "p"), executor="serial", options=FAKE)
    assert len(by_fspath.frame) == len(g)
    again = run_batch(g, str(tmp_path / "s"), executor="serial", options=FAKE, resume=True)
    assert (again.ran, again.skipped) == (0, len(g))
    assert len(ResultsDir.open(str(tmp_path / "s")).read_rows()) == len(g)


def _interrupt_after_first_task(total: int, done: int) -> Callable[[int], None]:
    def advance(n: int) -> None:
        raise KeyboardInterrupt

    return advance


def test_a_resumed_run_removes_its_chunks_directory_when_it_finishes(tmp_path: Path) -> None:
    g = grid(seeds=8)
    run = tmp_path / "run"
    first = run_batch(
        g, run, executor="serial", workers=1, options=FAKE, progress=_interrupt_after_first_task
    )
    assert first.interrupted and _chunks(run) >= 1
    run_batch(g, run, executor="serial", options=FAKE, resume=True)
    assert not (run / "chunks").exists()
    assert json.loads((run / "manifest.json").read_text())["status"] == "complete"


def test_a_task_holds_every_strategy_of_its_seeds_and_each_chunk_one_contiguous_run(tmp_path: Path) -> None:
    from harness.batch.runner import _tasks

    g = grid(seeds=8)
    tasks = list(_tasks(g, set(), size=6))
    for task in tasks:  # 6 sessions a task, 2 strategies: 3 seeds under both
        assert {c.strategy for c in task} == set(g.strategies) and len({c.seed for c in task}) <= 3
    run = tmp_path / "run"
    stop = _interrupt_after_first_task
    first = run_batch(g, run, executor="serial", workers=1, options=FAKE, progress=stop)
    assert first.interrupted
    for chunk in sorted((run / "chunks").glob("part-*.parquet")):
        rows = pd.read_parquet(chunk)
        cells = [Cell(r.scenario, r.agent, r.strategy, r.host, int(r.seed)) for r in rows.itertuples()]
        positions = [g.index(c) for c in cells]
        assert positions == list(range(positions[0], positions[0] + len(positions)))
        assert chunk.name.startswith(f"part-{positions[0]:012d}-")


def test_an_executor_that_fails_leaves_the_run_interrupted_and_resumable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import harness.batch.runner as runner

    def broken(
        tasks: Iterator[list[Cell]], options: SessionOptions, workers: int, scheduler: str | None
    ) -> Any:
        yield from runner._serial(itertools.islice(tasks, 1), options, workers, scheduler)
        raise UserError("the cluster went away")

    monkeypatch.setitem(runner._EXECUTORS, "serial", broken)
    g = grid(seeds=8)
    with pytest.raises(UserError, match="the cluster went away"):
        run_batch(g, tmp_path / "run", executor="serial", workers=1, options=FAKE)
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    assert manifest["status"] == "interrupted"  # not "running"
    assert manifest["error"] == "the cluster went away"
    monkeypatch.undo()
    summary = run_batch(g, tmp_path / "run", executor="serial", options=FAKE, resume=True)
    assert summary.skipped > 0 and summary.ran + summary.skipped == len(g)
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    assert manifest["status"] == "complete" and "error" not in manifest


def test_an_unreachable_scheduler_is_one_user_error_and_the_run_stays_resumable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("distributed")
    import harness.batch.runner as runner

    monkeypatch.setattr(runner, "SCHEDULER_TIMEOUT_S", 0.5)
    with pytest.raises(runner.SchedulerUnreachable, match=r"tcp://127\.0\.0\.1:1: cannot connect") as exc:
        run_batch(
            grid(seeds=2), tmp_path / "run", executor="dask", scheduler="tcp://127.0.0.1:1", options=FAKE
        )
    assert "\n" not in str(exc.value)
    assert json.loads((tmp_path / "run" / "manifest.json").read_text())["status"] == "interrupted"


def test_blocks_of_few_seeds_are_put_together_into_tasks_and_a_contiguous_task_is_one_chunk() -> None:
    # A study's block is one scenario and agent with its 5 seeds under every strategy: alone, each
    # would be a task and a chunk of 25 rows, whose parquet write and read cost as much as its sessions.
    from harness.batch.runner import _runs, _tasks

    g = Grid(tuple(f"s{i}" for i in range(6)), ("a", "b"), ("is_error", "collapse"), ("typical",), range(2))
    tasks = list(_tasks(g, set(), size=8))  # blocks of 2 seeds x 2 strategies: two to a task
    assert [len(t) for t in tasks] == [8] * 6
    assert [c for t in tasks for c in t] == [c for b in g.iter_blocks(2) for c in b]
    for task in tasks:
        runs = list(_runs(g, task))
        assert len(runs) == 1 and runs[0][0] == g.index(task[0])
    shuffled = tasks[0][::-1]  # runs come out in grid order whatever the task's order
    ((first, members),) = _runs(g, shuffled)
    assert first == g.index(tasks[0][0])
    assert [shuffled[i] for i in members] == tasks[0]
