"""Effects over every budget: S(k), restricted means, Δ S at fixed budgets, their calibration.

Constructed sessions with answers known by hand, identities that hold by construction (the
restricted mean is the area above S(k); Δ S at the budget is Δ success), a mechanism the
conditional calls hide, and coverage on synthetic studies with a known effect.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.report.curves import (
    BUDGETS,
    ESTIMANDS,
    calibrate,
    curve_table,
    per_task,
    restricted,
    survival,
    synthetic_sessions,
)
from harness.report.plots import success_within_calls
from harness.report.worlds import contrast_table, matched, parts, task_of

TASK = "agentdojo/slack/user_task_5"
OTHER = "agentdojo/banking/user_task_1"


def _row(scenario: str, agent: str, strategy: str, seed: int, success: bool, calls: int,
         budget: int = 20, planned: int = 2, steps: int | None = None) -> dict[str, Any]:  # fmt: skip
    return {"scenario": scenario, "agent": agent, "strategy": strategy, "host": "typical", "era": "handshake",
            "seed": seed, "status": "ok", "success": success, "tool_calls": calls,
            "steps": calls if steps is None else steps, "max_steps": budget,
            "subgoals_total": planned}  # fmt: skip


def _groups(frame: pd.DataFrame) -> dict[str, list[str]]:
    return {s: [(parts(s) or ("",))[0], "all"] for s in set(frame["scenario"])}


def test_a_failure_counts_at_the_budget_and_a_success_at_its_calls() -> None:
    got = restricted([3, 7, 40], [True, False, True], [20, 20, 30])
    assert got.tolist() == [3.0, 20.0, 30.0]


def test_s_of_k_counts_successes_within_k_calls_and_weighs_tasks_equally() -> None:
    rows = [_row(TASK, "reader", "is_error", s, ok, c, budget=6)
            for s, (ok, c) in enumerate([(True, 2), (True, 4), (False, 6), (True, 2)])]  # fmt: skip
    rows += [_row(OTHER, "reader", "is_error", 0, True, 1, budget=6)]  # one session: weighs as the four
    curves = survival(pd.DataFrame(rows), lambda s: "all", task_of)
    share = dict(zip(curves["k"], curves["share"], strict=True))
    # task 5: 0, 0, 2/4, 2/4, 3/4, ...; task 1: 0, 1, 1, ...; the curve their mean
    assert share[0] == 0.0
    assert share[1] == pytest.approx(0.5)
    assert share[2] == pytest.approx((0.5 + 1) / 2)
    assert share[4] == share[6] == pytest.approx((0.75 + 1) / 2)
    assert list(curves["k"]) == list(range(7)) and curves["tasks"].iloc[0] == 2


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.booleans(), st.integers(0, 12)), min_size=1, max_size=12))
def test_the_restricted_mean_is_the_area_above_the_curve_up_to_the_budget(
    sessions: list[tuple[bool, int]],
) -> None:
    budget = 12
    rows = [_row(TASK, "reader", "is_error", i, ok, c, budget=budget) for i, (ok, c) in enumerate(sessions)]
    frame = pd.DataFrame(rows)
    curve = survival(frame, lambda s: "all", task_of)["share"].to_numpy()
    rmean = restricted(frame["tool_calls"], frame["success"], frame["max_steps"]).mean()
    assert rmean == pytest.approx(float(np.sum(1.0 - curve[:budget])))


def _paired(rows: list[dict[str, Any]]) -> pd.DataFrame:
    return matched(pd.DataFrame(rows), column="strategy", base="is_error", others=["collapse"])


def test_delta_s_at_the_budget_is_the_delta_success_of_the_run() -> None:
    rng = np.random.default_rng(3)
    rows = []
    for t in range(6):
        for seed in range(4):
            for strategy in ("is_error", "collapse"):
                rows.append(_row(f"agentdojo/banking/user_task_{t}", "reader", strategy, seed,
                                 bool(rng.random() < 0.7), int(rng.integers(1, 15)), budget=16))  # fmt: skip
    pairs = _paired(rows)
    table = curve_table(pairs, _groups(pairs), task_of, by="world").set_index(["group", "estimand"])
    old = contrast_table(pairs, _groups(pairs), by="world").set_index("group")
    for group in ("agentdojo/banking", "all"):
        assert table.loc[(group, "S(budget)"), "diff"] == pytest.approx(old.loc[group, "success_diff"])
        assert table.loc[(group, "S(budget)"), "lo"] == pytest.approx(old.loc[group, "success_lo"])
    assert set(table.index.get_level_values("estimand")) == set(ESTIMANDS)


def test_the_conditional_calls_can_favour_a_strategy_that_turns_hard_cases_into_failures() -> None:
    """The mechanism the issue names: the other strategy fails the sessions that needed many calls,
    so over the pairs where both succeeded it looks cheaper; counted at the budget it is dearer."""
    rows = []
    for t in range(4):
        task = f"agentdojo/banking/user_task_{t}"
        for seed in range(4):
            hard = seed >= 2
            rows.append(_row(task, "reader", "is_error", seed, True, 12 if hard else 3, budget=20))
            calls = 20 if hard else 3 - (t % 2)
            rows.append(_row(task, "reader", "collapse", seed, not hard, calls, budget=20))
    pairs = _paired(rows)
    old = contrast_table(pairs, _groups(pairs), by="world").set_index("group").loc["all"]
    new = curve_table(pairs, _groups(pairs), task_of, by="world").set_index(["group", "estimand"])
    assert old["calls_diff"] < 0  # conditional: collapse looks cheaper
    assert new.loc[("all", "rmean_calls"), "diff"] > 0  # restricted: collapse costs more
    assert new.loc[("all", "rmean_calls"), "lo"] > 0


def test_delta_s_at_the_planned_calls_counts_only_sessions_done_within_them() -> None:
    rows = [_row(TASK, "reader", "is_error", 0, True, 2, planned=2),
            _row(TASK, "reader", "collapse", 0, True, 3, planned=2),
            _row(OTHER, "reader", "is_error", 0, True, 4, planned=2),
            _row(OTHER, "reader", "collapse", 0, True, 4, planned=2)]  # fmt: skip
    per = per_task(_paired(rows), [task_of(s) for s in _paired(rows)["scenario"]])
    planned = per["S(planned)"]
    assert planned.loc[TASK, "base"] == 1.0 and planned.loc[TASK, "other"] == 0.0
    assert planned.loc[OTHER, "base"] == planned.loc[OTHER, "other"] == 0.0
    assert per["S(planned+2)"].loc[TASK, "other"] == 1.0 and per["S(planned+2)"].loc[OTHER, "other"] == 1.0
    assert list(BUDGETS) == ["planned", "planned+2", "planned+5", "budget"]


def test_holm_adjusts_each_estimand_over_the_tables_rows() -> None:
    pairs = synthetic_sessions(np.random.default_rng(5), tasks=12, shift=2.0)
    pairs["scenario"] = pairs["task"]
    pairs["agent"], pairs["other"] = "reader", "collapse"
    groups = {t: ["a" if int(t[1:]) % 2 else "b", "all"] for t in pairs["task"].unique()}
    table = curve_table(pairs, groups, lambda s: s, by="world")
    for _, rows in table.groupby("estimand"):
        p, adj = rows["p"].to_numpy(dtype=float), rows["p_adj"].to_numpy(dtype=float)
        present = ~np.isnan(p)
        assert (adj[present] >= p[present] - 1e-12).all()
        assert np.nanmin(adj) == pytest.approx(min(1.0, np.nanmin(p) * present.sum()))


def test_the_restricted_mean_interval_is_calibrated_under_the_null_and_with_an_effect() -> None:
    null = calibrate(120, seed=11, tasks=15, seeds=3)
    assert 0.88 <= null["coverage"] <= 0.995 and null["rejects"] <= 0.12
    effect = calibrate(60, seed=12, tasks=30, seeds=3, shift=1.0, fail_shift=0.1)
    assert effect["true"] > 0 and effect["coverage"] >= 0.85 and effect["rejects"] >= 0.5


def test_the_curves_figure_draws_a_panel_per_world_and_skips_tables_without_budgets() -> None:
    rows = [_row(s, a, st_, seed, True, 2 + seed, budget=10) for s in (TASK, OTHER, "flaky_weather")
            for a in ("reader", "blind") for st_ in ("is_error", "collapse")
            for seed in range(2)]  # fmt: skip
    frame = pd.DataFrame(rows)
    fig = success_within_calls(frame, "test")
    assert fig is not None
    titles = [ax.get_title() for ax in fig.axes if ax.get_visible()]
    assert len(titles) == 3 and any(t.startswith("agentdojo/slack") for t in titles)
    assert any("harness's scenarios" in t for t in titles)
    assert len(fig.axes[0].get_lines()) == 4  # two agents x two strategies
    assert success_within_calls(frame.drop(columns=["max_steps"]), "test") is None
    assert not math.isnan(float(frame["max_steps"].iloc[0]))


def test_the_curves_figure_counts_a_wedged_session_as_a_failure_and_leaves_harness_errors_out() -> None:
    rows = [_row(TASK, "reader", "escape", seed, True, 2, budget=10) for seed in range(2)]
    rows += [
        {**_row(TASK, "reader", "escape", seed, False, 1, budget=10), "status": "wedged"} for seed in (2, 3)
    ]
    rows += [{**_row(TASK, "reader", "escape", 4, False, 1, budget=10), "status": "harness_error"}]
    fig = success_within_calls(pd.DataFrame(rows), "test")
    assert fig is not None
    (line,) = [ln for ln in fig.axes[0].get_lines() if ln.get_label() == "reader · escape"]
    assert max(line.get_ydata()) == pytest.approx(0.5)  # 2 of the 4 judged sessions
