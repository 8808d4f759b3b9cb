"""``sessions.parquet`` written while the run goes is the file the consolidation writes.

The runner hands each chunk's table, as it writes the chunk, to the results directory, which
writes the rows into ``sessions.parquet`` (a temporary file until the run is complete) as soon as
the rows before them in grid order are in, so that the end of a run does not read every chunk
back. Whatever order the chunks come in, however many must wait, and whether some were written
by an earlier invocation (a resume), the file is byte for byte the one read back from the chunks;
a chunk of other columns or types makes it give up, and the consolidation runs as before.
"""

from __future__ import annotations

import random
import shutil
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from harness.batch import results as results_module
from harness.batch.grid import Grid
from harness.batch.results import CHUNKS, SESSIONS, ResultsDir
from harness.batch.runner import _runs, _tasks, run_batch, task_sizes
from harness.batch.worker import error_row
from harness.fixtures.fakes import fake_options

GRID = Grid(("s1", "s2"), ("a", "b"), ("is_error", "masked", "collapse"), ("typical",), range(40))


def _row(index: int, cell: Any) -> dict[str, Any]:
    if index % 97 == 13:
        return {**error_row(cell, reason="RuntimeError: boom"), "steps": 0, "ratio": 0.0, "calls": []}
    return {
        **{k: getattr(cell, k) for k in ("scenario", "agent", "strategy", "host", "era", "seed")},
        "status": "ok",
        "success": index % 3 == 0,
        "error": "",
        "steps": index % 11,
        "ratio": index / 7,
        "calls": list(range(index % 4)),
    }


def _chunks(grid: Grid, size: int) -> list[tuple[int, list[dict[str, Any]]]]:
    """The chunks a run of ``grid`` writes: (first position, rows), in the order tasks are cut."""
    out = []
    for task in _tasks(grid, set(), size):
        for first, members in _runs(grid, task):
            out.append((first, [_row(grid.index(task[i]), task[i]) for i in members]))
    return out


def _consolidated(tmp: Path, name: str, chunks: list[tuple[int, list[dict[str, Any]]]], ahead: bool) -> bytes:
    results = ResultsDir.create(tmp / name, {"grid": GRID.to_json(), "status": "running"})
    if ahead:
        results.write_ahead()
    for first, rows in chunks:
        results.write_chunk(rows, first=first)
    stats = results.consolidate()
    assert stats["sessions"] == sum(len(rows) for _, rows in chunks)
    results.stop_ahead()
    results.release()
    assert not (tmp / name / CHUNKS).exists()
    assert not list((tmp / name).glob(".*.tmp-*")), "nothing of the file written ahead is left over"
    return (tmp / name / SESSIONS).read_bytes()


@pytest.mark.parametrize("order", ["in order", "shuffled", "reversed"])
@pytest.mark.parametrize("held", [10_000, 40, 0])
def test_the_file_written_ahead_is_the_consolidated_one_byte_for_byte(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, order: str, held: int
) -> None:
    monkeypatch.setattr(results_module, "ROW_GROUP", 50)  # several row groups from 480 rows
    monkeypatch.setattr(results_module, "AHEAD_ROWS", held)  # 0: every chunk out of turn is read back
    chunks = _chunks(GRID, 18)
    if order == "shuffled":
        random.Random(7).shuffle(chunks)
    elif order == "reversed":
        chunks.reverse()
    read_back = _consolidated(tmp_path, "read-back", chunks, ahead=False)
    assert _consolidated(tmp_path, "ahead", chunks, ahead=True) == read_back


def test_a_chunk_of_other_columns_gives_it_up_and_the_consolidation_unifies_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(results_module, "ROW_GROUP", 50)
    chunks = _chunks(GRID, 18)
    first, rows = chunks[5]
    chunks[5] = (first, [error_row(cell) for cell in _cells(rows)])  # only key, status, success, error
    read_back = _consolidated(tmp_path, "read-back", chunks, ahead=False)
    assert _consolidated(tmp_path, "ahead", chunks, ahead=True) == read_back


def _cells(rows: list[dict[str, Any]]) -> list[Any]:
    from harness.batch.grid import Cell

    return [Cell(r["scenario"], r["agent"], r["strategy"], r["host"], r["seed"]) for r in rows]


def test_chunks_of_an_earlier_invocation_are_read_back_in_their_place(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(results_module, "ROW_GROUP", 50)
    chunks = _chunks(GRID, 18)
    read_back = _consolidated(tmp_path, "read-back", chunks, ahead=False)
    earlier = [chunks[i] for i in (0, 3, 4, 11)]  # written before a kill, then resumed
    later = [c for i, c in enumerate(chunks) if i not in (0, 3, 4, 11)]
    results = ResultsDir.create(tmp_path / "resumed", {"grid": GRID.to_json(), "status": "running"})
    for first, rows in earlier:
        results.write_chunk(rows, first=first)
    results.write_ahead()
    for first, rows in later:
        results.write_chunk(rows, first=first)
    results.consolidate()
    results.release()
    assert (tmp_path / "resumed" / SESSIONS).read_bytes() == read_back


def test_a_run_stopped_leaves_no_file_written_ahead_and_resumes_to_the_same_table(tmp_path: Path) -> None:
    grid = Grid(("s1", "s2"), ("a", "b"), ("is_error", "collapse"), ("typical",), range(30))

    def stop_after_three(total: int, done: int) -> Any:
        seen = [0]

        def advance(n: int) -> None:
            seen[0] += 1
            if seen[0] == 3:
                raise KeyboardInterrupt

        return advance

    run = tmp_path / "run"
    first = run_batch(
        grid, run, executor="serial", workers=1, options=fake_options(), progress=stop_after_three
    )
    assert first.interrupted
    assert not (run / SESSIONS).exists() and not list(run.glob(".*.tmp-*"))
    run_batch(grid, run, executor="serial", options=fake_options(), resume=True)
    whole = run_batch(grid, tmp_path / "whole", executor="serial", options=fake_options()).frame
    stable = [c for c in whole.columns if c != "wall_time_s"]
    pd.testing.assert_frame_equal(ResultsDir.open(run).read_rows()[stable], whole[stable])


def test_tasks_shrink_toward_the_end_of_a_run_on_two_workers_and_cover_every_cell_once() -> None:
    grid = Grid(("s1",), ("a",), ("is_error", "masked", "collapse", "escape", "input_required"), ("typical",),
                range(1600))  # fmt: skip
    tasks = list(_tasks(grid, set(), task_sizes(len(grid), 2), total=len(grid)))
    sizes = [len(t) for t in tasks]
    assert sizes[0] == 500 and sizes[-1] == 50 and sizes == sorted(sizes, reverse=True)
    cells = [c for t in tasks for c in t]
    assert len(cells) == len(set(cells)) == len(grid)
    for task in tasks:  # whole seeds under every strategy: each baseline runs in one task
        seeds = {c.seed for c in task}
        assert len(task) == len(seeds) * len(grid.strategies)
    assert task_sizes(len(grid), 1) == 500  # one worker: no tail to balance
    small = Grid(("s1",), ("a", "b"), ("is_error",), ("typical",), range(20))
    assert [len(t) for t in _tasks(small, set(), task_sizes(len(small), 2), total=len(small))] == [2] * 20


def test_a_copy_of_chunks_consolidates_the_same_with_or_without_the_tables(tmp_path: Path) -> None:
    # The chunk files themselves are unchanged by the tables being kept: a run's chunk dir
    # copied before the end consolidates to the same file.
    chunks = _chunks(GRID, 18)
    results = ResultsDir.create(tmp_path / "a", {"grid": GRID.to_json(), "status": "running"})
    results.write_ahead()
    for first, rows in chunks:
        results.write_chunk(rows, first=first)
    shutil.copytree(tmp_path / "a", tmp_path / "b", ignore=shutil.ignore_patterns("writer.lock", ".*"))
    results.consolidate()
    results.release()
    copy = ResultsDir.open(tmp_path / "b")
    copy.consolidate()
    assert (tmp_path / "a" / SESSIONS).read_bytes() == (tmp_path / "b" / SESSIONS).read_bytes()
