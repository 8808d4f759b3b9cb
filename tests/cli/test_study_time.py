"""``python -m harness.cli.study_time``: where a study's time goes, phase by phase."""

from __future__ import annotations

import io
import os
import sys
from pathlib import Path

import pytest

from harness.cli import study_time
from harness.cli.study_time import PHASES, Timings, time_study

SMALL = ("--count", "1", "--seeds", "1")
"""A study of one scenario per family and one seed: 5 families x 6 agents x 5 strategies = 150
sessions, a second or two."""
SMALL_SIZE = 5 * 6 * 5


def test_one_worker_times_every_phase_in_this_process(tmp_path: Path) -> None:
    timings = time_study(1, tmp_path / "study", SMALL)
    assert timings.sessions == SMALL_SIZE and timings.executor == "serial"
    assert set(timings.here) == set(PHASES)
    table = timings.table("--workers 1")
    for phase in PHASES:
        assert f"| {phase} |" in table
    assert 0 < timings.here["baselines"] < timings.here["sessions"]
    parts = sum(timings.here[p] for p in PHASES if p not in ("baselines", "pickling"))
    assert abs(parts - timings.total_here) < 1e-6  # the phases add up to the run


def test_a_pool_s_sessions_are_the_workers_cpu(tmp_path: Path) -> None:
    timings = time_study(2, tmp_path / "study", (*SMALL, "--executor", "process"))
    assert timings.sessions == SMALL_SIZE and timings.total_workers > 0
    assert timings.workers["sessions"] == timings.total_workers
    assert timings.here.get("sessions", 0.0) == 0.0 and "| writing |" in timings.table("--workers 2")
    # The least wall the run's own parts allow: no run can be faster than its CPU spread over its cores.
    assert timings.cores == min(2, os.cpu_count() or 1) and 0 < timings.batch_wall < timings.total_wall
    assert timings.batch_cpu > 0 and 0 < timings.best_wall() <= timings.total_wall + 0.05


def test_the_ratio_line_gives_each_pair_s_bound_beside_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``--workers 1 --workers 2``: the ratio of each pair, and the most its pool run's parts allow."""
    runs = {
        1: Timings(total_wall=20.0, executor="serial", cores=1),
        2: Timings(
            total_wall=12.0, batch_wall=10.0, batch_cpu=2.0, total_workers=18.0, executor="process", cores=2
        ),
    }
    monkeypatch.setattr(study_time, "_one", lambda workers, extra: runs[workers])
    out = io.StringIO()
    monkeypatch.setattr(sys, "stdout", out)
    assert study_time.main(["--workers", "1", "--workers", "2"]) == 0
    # 2 s alone + (18 + 2) CPU s over 2 cores = 12 s at best: 20 / 12
    assert "wall of --workers 1 over --workers 2: 1.67 (median 1.67, min 1.67)" in out.getvalue()
    assert "(alone + batch CPU / cores): 1.67 (median 1.67)" in out.getvalue()


def test_a_pool_s_pre_check_runs_beside_the_batch_and_is_not_taken_out_of_the_rest_twice(
    tmp_path: Path,
) -> None:
    timings = time_study(2, tmp_path / "study", (*SMALL, "--executor", "process"))
    assert timings.beside["pre-check"] == timings.wall["pre-check"] > 0
    assert "beside" in timings.table("--workers 2") and timings.wall["rest"] >= 0
    parts = sum(timings.here.get(p, 0.0) for p in PHASES if p not in ("baselines", "pickling"))
    assert abs(parts - timings.total_here) < 1e-6  # CPU by thread: still adds up
