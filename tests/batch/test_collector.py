"""The collector set for sessions (harness.batch.collector): the serial executor leaves the
process's collector as it found it, and when cycles are collected changes no row or trace."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from typing import Any

import pytest

from harness.batch import collector
from harness.batch.grid import Cell
from harness.batch.worker import SessionOptions, run_cells
from harness.worlds.scenario import world_missing

CELLS = (
    Cell("travel_day", "reader", "is_error", "typical", 0),
    Cell("travel_day", "blind", "collapse", "typical", 1),
    Cell("agentdojo/banking/user_task_0", "reader", "collapse", "typical", 0),
    Cell("bfcl/multi_turn_base/0/raised", "reader", "is_error", "typical", 0),
)


@pytest.fixture
def as_found() -> Iterator[None]:
    """The collector as the test found it, whatever the test does."""
    threshold, frozen = gc.get_threshold(), gc.get_freeze_count()
    yield
    gc.set_threshold(*threshold)
    if gc.get_freeze_count() and not frozen:
        gc.unfreeze()


def _available() -> list[Cell]:
    return [c for c in CELLS if "/" not in c.scenario or world_missing(c.scenario.split("/")[0]) is None]


def _rows(cells: list[Cell]) -> list[tuple[dict[str, Any], bytes | None]]:
    out = []
    for outcome in run_cells(cells, SessionOptions(traces=True)):
        row = {k: v for k, v in outcome.row.items() if k != "wall_time_s"}
        out.append((row, outcome.trace))
    return out


def test_the_serial_executor_raises_the_young_threshold_freezes_after_a_task_and_undoes_both(
    as_found: None,
) -> None:
    before = gc.get_threshold()
    with collector.serial():
        assert gc.get_threshold()[0] == collector.YOUNG
        assert gc.get_freeze_count() == 0  # nothing frozen before the first task ends
        run_cells([CELLS[0]], SessionOptions())
        assert gc.get_freeze_count() > 0
        frozen = gc.get_freeze_count()
        run_cells([CELLS[1]], SessionOptions())
        assert gc.get_freeze_count() <= frozen  # frozen once (frozen objects freed by refcount leave it)
    assert gc.get_threshold() == before
    assert gc.get_freeze_count() == 0


def test_rows_and_traces_are_the_same_under_the_default_collector_and_the_settled_one(
    as_found: None,
) -> None:
    cells = _available()
    plain = _rows(cells)
    with collector.serial():
        settled = _rows(cells) + _rows(cells)  # the second time over a frozen heap
    assert settled == plain + plain
    assert all(trace for _, trace in plain)


def test_a_pool_worker_runs_its_sessions_under_the_settled_collector() -> None:
    import concurrent.futures as cf
    import multiprocessing
    import os

    from harness.batch.worker import start_worker

    ctx = multiprocessing.get_context("spawn")
    with cf.ProcessPoolExecutor(1, mp_context=ctx, initializer=start_worker, initargs=(os.getpid(),)) as pool:
        assert pool.submit(gc.get_threshold).result()[0] == collector.YOUNG
