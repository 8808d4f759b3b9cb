"""World scenarios: their names, the task a world task becomes, and the faults we put on it."""

from __future__ import annotations

import pytest

from harness.errors import UserError
from harness.faults.sources import UPSTREAM_KINDS
from harness.worlds import agentdojo
from harness.worlds.scenario import (
    FAULT_DRAWS,
    STEPS_BASE,
    STEPS_PER_CALL,
    WorldScenario,
    draw_faults,
    list_world_scenarios,
    load_source,
    load_world,
    study_names,
    with_draw,
    world_names,
    world_source,
)


def test_a_suite_s_name_stands_for_every_one_of_its_tasks_and_the_world_s_for_all() -> None:
    banking = world_names("agentdojo/banking")
    assert len(banking) == 16 and banking[0] == "agentdojo/banking/user_task_0"
    assert banking[10] == "agentdojo/banking/user_task_10"  # by number, not by spelling
    assert world_names("agentdojo") == list_world_scenarios()
    assert len(list_world_scenarios()) >= 80


@pytest.mark.parametrize(
    ("spec", "said"),
    [
        ("agentdojo/bankin", "did you mean 'banking'"),
        ("agentdojo/banking/user_task_99", "did you mean"),
        ("agentdojo/banking/user_task_0/x", "unknown agentdojo condition 'x'"),
        ("agentdojo/banking/user_task_0/x/y", "agentdojo/<suite>/<user_task_id>"),
        ("agentdojo/banking/user_task_1/file_renamed_similar", "not applicable: the plan names nothing"),
        ("agentdojo/banking/user_task_0/upstream", "is agentdojo/banking/user_task_0 \\(fault draw 0\\)"),
        ("agentdojo/banking/user_task_0/upstream/0", "a fault draw is a whole number from 1"),
        ("agentdojo/banking/user_task_0/upstream/two", "a fault draw is a whole number from 1"),
        ("agentdojo/banking/user_task_0/file_removed/1", "agentdojo/<suite>/<user_task_id>/upstream/<d>"),
    ],
)
def test_a_world_name_that_names_nothing_is_one_line_with_the_nearest_names(spec: str, said: str) -> None:
    with pytest.raises(UserError, match=said) as caught:
        world_names(spec)
    assert "\n" not in str(caught.value)


def test_a_task_becomes_a_scenario_whose_subgoals_are_its_plan_s_calls_in_order() -> None:
    sc = load_world("agentdojo/travel/user_task_3")
    plan = agentdojo.plan("travel", "user_task_3")
    assert isinstance(sc, WorldScenario)
    assert [(g.options[0].tool, dict(g.options[0].arguments)) for g in sc.task.subgoals] == list(plan.calls)
    assert all(len(g.options) == 1 for g in sc.task.subgoals)  # a plan has no alternatives
    assert sc.task.order == "strict"
    assert sc.task.prompt == agentdojo.prompt("travel", "user_task_3")
    assert sc.task.plan_output == plan.output
    assert sc.max_steps == STEPS_BASE + STEPS_PER_CALL * len(plan.calls)
    assert set(sc.tools) == {t.name for t in agentdojo.tools("travel")}


def test_every_world_scenario_s_faults_are_upstream_kinds_on_the_tools_its_plan_calls() -> None:
    for name in list_world_scenarios():
        sc = load_world(name)
        called = {g.options[0].tool for g in sc.task.subgoals}
        assert 1 <= len(sc.faults) <= 2, name
        for rule in sc.faults:
            assert rule.kind in UPSTREAM_KINDS and rule.tool in called, (name, rule)
            assert rule.rate is not None and 0.1 <= rule.rate <= 0.5
            if rule.kind == "post_commit":
                assert rule.tool in sc.writes, (name, rule)


def test_a_name_draws_the_same_faults_every_time_and_overrides_apply_to_them() -> None:
    name = "agentdojo/slack/user_task_2"
    first = load_world(name).faults
    load_world.cache_clear()
    assert load_world(name).faults == first
    silent = load_source(world_source(name), (("faults.rate", 0.0),))
    assert all(r.rate == 0.0 for r in silent.faults)


def test_a_run_recorded_with_another_agentdojo_is_refused_in_one_line() -> None:
    source = world_source("agentdojo/banking/user_task_0").replace(agentdojo.PINNED, "0.0.1")
    with pytest.raises(UserError, match=r"the run used agentdojo 0\.0\.1"):
        load_source(source)


def test_a_source_that_is_no_world_s_goes_to_the_simulation_s_loader() -> None:
    assert load_source("flaky_weather").name == "flaky_weather"


def test_each_fault_draw_of_a_task_is_drawn_from_its_own_name() -> None:
    """A task's draws are configurations of their own (draw 0 its bare name's, unchanged), and the
    study holds every task in :data:`FAULT_DRAWS` of them."""
    tasks = list_world_scenarios()
    study = set(study_names())
    differ = 0
    for name in tasks:
        plan = agentdojo.plan(*name.split("/")[1:])
        draws = [with_draw(f"{name}/upstream", d) if d else name for d in range(FAULT_DRAWS)]
        assert set(draws) <= study
        faults = [load_world(d).faults for d in draws]
        assert all(f == draw_faults(d, plan) for f, d in zip(faults, draws, strict=True))
        assert all(load_world(d).task == load_world(name).task for d in draws)
        differ += len(set(faults)) > 1
    assert differ > len(tasks) // 2
