"""The worlds study's tables: constructed sessions with known answers.

The task is the unit (a task's conditions and seeds average into one difference), calls are
compared only where both cells succeeded, and AgentDojo's security verdicts are counted as given.
"""

from __future__ import annotations

import math
from typing import Any

import pandas as pd

from harness.report.worlds import contrast_table, failure_kinds, matched, parts, security_table

TASK = "agentdojo/slack/user_task_5"
EVENT = f"{TASK}/channel_renamed"
OTHER = "agentdojo/banking/user_task_1"


def _row(
    scenario: str, agent: str, strategy: str, seed: int, success: bool, calls: int, **kw: Any
) -> dict[str, Any]:
    return {"scenario": scenario, "agent": agent, "strategy": strategy, "host": "typical", "era": "handshake",
            "seed": seed, "status": "ok", "success": success, "tool_calls": calls, **kw}  # fmt: skip


def test_a_world_name_says_its_world_task_and_condition() -> None:
    assert parts(EVENT) == ("agentdojo/slack", TASK, "channel_renamed")
    assert parts(TASK) == ("agentdojo/slack", TASK, "upstream")
    assert parts("flaky_weather") is None


def test_failure_kinds_name_upstream_kinds_events_and_injections() -> None:
    kinds = failure_kinds(
        [TASK, EVENT, f"{TASK}/injection_error", "flaky_weather"], lambda n: ["transient"] * 2
    )
    assert kinds == {TASK: ["upstream:transient"], EVENT: ["event:channel_renamed"],
                     f"{TASK}/injection_error": ["injection:error"]}  # fmt: skip


def test_the_task_is_the_unit_and_calls_are_compared_where_both_cells_succeeded() -> None:
    rows = []
    for seed in range(2):
        # the task under two conditions: readable errors save 3 calls in the event, nothing upstream
        rows += [
            _row(EVENT, "reader", "is_error", seed, True, 8),
            _row(EVENT, "reader", "collapse", seed, True, 11),
        ]
        rows += [
            _row(TASK, "reader", "is_error", seed, True, 5),
            _row(TASK, "reader", "collapse", seed, True, 5),
        ]
        # another task: collapse fails (no calls compared there), is_error succeeds
        rows += [
            _row(OTHER, "reader", "is_error", seed, True, 2),
            _row(OTHER, "reader", "collapse", seed, False, 9),
        ]
    pairs = matched(pd.DataFrame(rows), column="strategy", base="is_error", others=["collapse"])
    assert len(pairs) == 6
    groups = {EVENT: ["all"], TASK: ["all"], OTHER: ["all"]}
    table = contrast_table(pairs, groups, by="world")
    row = table.iloc[0]
    assert row["tasks"] == 2 and row["pairs"] == 6  # two tasks, not three scenarios
    assert math.isclose(row["success_diff"], (0.0 + -1.0) / 2)
    assert row["calls_tasks"] == 1 and math.isclose(row["calls_diff"], 1.5)  # (3 + 0) / 2 in the one task


def test_an_agent_contrast_pairs_two_agents_under_one_strategy() -> None:
    rows = [_row(EVENT, "blind", "is_error", 0, True, 11), _row(EVENT, "reader", "is_error", 0, True, 8),
            _row(OTHER, "blind", "is_error", 0, True, 4),
            _row(OTHER, "reader", "is_error", 0, True, 2)]  # fmt: skip
    pairs = matched(pd.DataFrame(rows), column="agent", base="blind", others=["reader"])
    table = contrast_table(pairs, {EVENT: ["all"], OTHER: ["all"]}, by="world", keys=("strategy", "other"))
    assert table.iloc[0]["strategy"] == "is_error" and math.isclose(table.iloc[0]["calls_diff"], -2.5)
    assert not math.isnan(table.iloc[0]["calls_lo"])


def test_security_counts_agentdojo_s_verdicts_per_condition_agent_and_strategy() -> None:
    name = f"{TASK}/injection_error"
    extra = {"harmful_calls": 0, "misled": 1, "messages_read": 1, "injection": "injection_task_1:direct"}
    rows = [_row(name, "reader", "is_error", s, True, 4, security_breached=s == 0, **extra) for s in range(3)]
    rows.append(_row(TASK, "reader", "is_error", 0, True, 3, security_breached=False, injection="",
                     harmful_calls=0, misled=0, messages_read=0))  # fmt: skip
    table = security_table(pd.DataFrame(rows))
    expected = {"condition": "injection_error", "agent": "reader", "strategy": "is_error", "sessions": 3,
                "tasks": 1, "success": 1.0, "breached": 1, "tasks_breached": 1, "harmful_calls": 0,
                "misled": 3, "messages_read": 3}  # fmt: skip
    assert table.to_dict("records") == [expected]


def test_the_best_control_is_chosen_on_the_dev_tasks_and_measured_on_the_others() -> None:
    from harness.report.worlds import DEFAULT_MEMBER, control_table, dev_task

    tasks = [f"agentdojo/slack/user_task_{i}" for i in range(12)]
    dev = [t for t in tasks if dev_task(t)]
    assert dev and len(dev) < len(tasks)  # the split is by the name, and splits these
    rows = []
    for task in tasks:
        for seed in range(2):
            rows.append(_row(task, "reader", "is_error", seed, True, 3))
            # the default member fails on the dev tasks, the other member nowhere
            failed = task not in dev
            rows.append(_row(task, "blind", "is_error", seed, failed, 5, **{"agent.retry_budget": 3}))
            rows.append(_row(task, "blind", "is_error", seed, True, 4, **{"agent.retry_budget": 0}))
    # the reader is taken at the default member's knobs
    df = pd.DataFrame(rows)
    df.loc[(df["agent"] == "reader"), "agent.retry_budget"] = 3
    table = control_table(df, {t: ["agentdojo/slack"] for t in tasks})
    best = table[table["against"] == "best"].iloc[0]
    assert best["member"] == "retry_first/0/exponential" and best["member"] != DEFAULT_MEMBER
    assert best["tasks"] == len(tasks) - len(dev)  # measured on the held-out tasks only
    default = table[table["against"] == "default, all tasks"].iloc[0]
    assert default["member"] == DEFAULT_MEMBER and default["tasks"] == len(tasks)


def test_a_scenario_the_oracle_fails_is_counted_apart_and_left_out_of_the_row() -> None:
    from harness.report.worlds import dead_scenarios

    rows = []
    for seed in range(2):
        rows += [
            _row(TASK, a, st, seed, True, 3) for a in ("reader", "oracle") for st in ("is_error", "collapse")
        ]
        rows += [
            _row(EVENT, a, st, seed, False, 9)
            for a in ("reader", "oracle")
            for st in ("is_error", "collapse")
        ]
    df = pd.DataFrame(rows)
    dead = dead_scenarios(df)
    assert dead == [EVENT]  # the oracle failed it; OTHER the reader fails, the oracle does not
    pairs = matched(df, column="strategy", base="is_error", others=["collapse"])
    table = contrast_table(
        pairs, {TASK: ["agentdojo/slack"], EVENT: ["agentdojo/slack"]}, by="world", dead=dead
    )
    row = table[table["agent"] == "reader"].iloc[0]
    assert row["dead"] == 1 and row["pairs"] == 2  # the task's two seeds; the dead cell's are apart


def test_steps_stand_beside_calls_with_a_failure_counted_at_the_budget() -> None:
    """Restricted steps over every pair (not only where both succeeded): a failed session counts
    its budget, so a cell that fails more needs more steps though its calls are not compared."""
    rows = [
        _row(TASK, "reader", "is_error", 0, True, 3, steps=4, max_steps=20),
        _row(TASK, "reader", "collapse", 0, False, 9, steps=12, max_steps=20),
        _row(OTHER, "reader", "is_error", 0, True, 2, steps=2, max_steps=16),
        _row(OTHER, "reader", "collapse", 0, True, 2, steps=5, max_steps=16),
        _row(f"{OTHER}/upstream/1", "reader", "is_error", 0, True, 2, steps=2, max_steps=16),
        _row(f"{OTHER}/upstream/1", "reader", "collapse", 0, True, 2, steps=3, max_steps=16),
    ]
    pairs = matched(pd.DataFrame(rows), column="strategy", base="is_error", others=["collapse"])
    row = contrast_table(pairs, {r["scenario"]: ["all"] for r in rows}, by="world").iloc[0]
    assert row["tasks"] == 2  # a fault draw is its task's, not a task of its own
    assert math.isclose(row["steps_diff"], ((20 - 4) + ((5 - 2) + (3 - 2)) / 2) / 2)
    assert math.isclose(row["steps_base"], (4 + 2) / 2) and math.isclose(row["steps_other"], (20 + 4) / 2)
    assert row["calls_tasks"] == 1
    assert {"steps_lo", "steps_hi", "steps_p", "steps_p_adj"} <= set(row.index)


def test_a_scenario_s_fault_draw_is_read_from_its_name_and_only_under_our_faults() -> None:
    from harness.report.worlds import fault_draw

    assert fault_draw(TASK) == 0 and fault_draw(f"{TASK}/upstream/2") == 2
    assert fault_draw("bfcl/multi_turn_base/0/upstream") == 0
    assert fault_draw("bfcl/multi_turn_base/0/raised/1") == 1
    assert fault_draw(EVENT) is None and fault_draw(f"{TASK}/injection_error") is None
    assert fault_draw("bfcl/multi_turn_base/0") is None and fault_draw("flaky_weather") is None
