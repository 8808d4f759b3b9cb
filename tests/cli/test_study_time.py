"""``python -m harness.cli.study_time``: where a study's time goes, phase by phase."""

from __future__ import annotations

from pathlib import Path

from harness.cli.study_time import PHASES, time_study

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


def test_a_pool_s_pre_check_runs_beside_the_batch_and_is_not_taken_out_of_the_rest_twice(
    tmp_path: Path,
) -> None:
    timings = time_study(2, tmp_path / "study", (*SMALL, "--executor", "process"))
    assert timings.beside["pre-check"] == timings.wall["pre-check"] > 0
    assert "beside" in timings.table("--workers 2") and timings.wall["rest"] >= 0
    parts = sum(timings.here.get(p, 0.0) for p in PHASES if p not in ("baselines", "pickling"))
    assert abs(parts - timings.total_here) < 1e-6  # CPU by thread: still adds up
