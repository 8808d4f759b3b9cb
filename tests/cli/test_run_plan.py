"""``harness run`` as request -> plan -> execute: the plan resolved from the command line alone,
nothing run and no folder made (:func:`harness.cli.run.plan`)."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.cli import cli

from harness.cli.run import STUDY_SEEDS, WORLD_STUDY_SEEDS, RunRequest, parse_request, plan
from harness.errors import UserError


def test_a_request_knows_which_options_were_given() -> None:
    request = parse_request(["flaky_weather", "--seeds", "3"])
    assert isinstance(request, RunRequest)
    assert request.scenarios == ("flaky_weather",) and request.seeds == 3
    assert request.gave("seeds") and request.gave("scenarios") and not request.gave("codec")


def test_a_plan_is_the_grid_and_where_it_runs_and_makes_no_folder(tmp_path: Path) -> None:
    out = tmp_path / "run"
    found = plan(parse_request(["flaky_weather", "--seeds", "2", "--strategies", "is_error,collapse",
                                "--out", str(out)]))  # fmt: skip
    assert found.grid.scenarios == ("flaky_weather",) and len(found.grid.seeds) == 2
    assert set(found.grid.strategies) == {"is_error", "collapse"}
    assert found.out == out and not out.exists()
    assert found.in_process and found.executor in ("serial", "process")
    assert not found.resume and found.notes == ()


def test_the_study_presets_fill_what_was_not_given() -> None:
    shipped = plan(parse_request(["--study"]))
    assert len(shipped.grid.seeds) == STUDY_SEEDS and shipped.families
    mine = plan(parse_request(["--study", "--seeds", "1"]))
    assert len(mine.grid.seeds) == 1


@pytest.mark.worlds
def test_the_worlds_study_plans_every_world_scenario_at_its_own_seeds() -> None:
    from harness.worlds.scenario import study_names, world_missing

    if world_missing("agentdojo") or world_missing("bfcl"):
        pytest.skip("the worlds' study needs both worlds")
    found = plan(parse_request(["--study", "--worlds"]))
    assert list(found.grid.scenarios) == study_names() and len(found.grid.seeds) == WORLD_STUDY_SEEDS


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["--worlds"], "--worlds goes with --study"),
        (["--study", "flaky_weather"], "--study is a preset of its own"),
        (["flaky_weather", "--scheduler", "tcp://localhost:1"], "--scheduler goes with --executor dask"),
        (["flaky_weather", "--by", "nope"], "unknown --by column 'nope'"),
        (["flaky_weather", "--max-requests", "3"], "--max-requests goes with an agent that calls a model"),
    ],
)
def test_a_wrong_request_is_refused_by_the_plan_before_anything_runs(args: list[str], said: str) -> None:
    with pytest.raises(UserError, match=said):
        plan(parse_request(args))


def test_a_resumed_plan_keeps_the_run_s_grid_and_refuses_another_codec(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "run"
    args = ["run", "flaky_weather", "--seeds", "2", "--agents", "naive", "--strategies", "is_error",
            "--out", str(out), "--no-compare", "--executor", "serial"]  # fmt: skip
    code, _, err = cli(args, capsys)
    assert code == 0, err
    resumed = plan(parse_request(["--resume", "--out", str(out)]))
    assert resumed.resume and resumed.grid.scenarios == ("flaky_weather",) and len(resumed.grid.seeds) == 2
    assert resumed.executor == "serial"  # the run's own, not this request's default
    with pytest.raises(UserError, match=r"--resume finishes .* with the run's --codec"):
        plan(parse_request(["--resume", "--out", str(out), "--codec", "orjson"]))
    with pytest.raises(UserError, match="--dry-run describes a new run"):
        plan(parse_request(["--resume", "--out", str(out), "--dry-run"]))
