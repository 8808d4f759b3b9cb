"""Effects no budget of ours chooses: the share of sessions succeeding within k calls, for every k,
and the restricted mean calls to success, a failure counted at the budget.

The rules, each one line (docs/results.md, "Effects over every budget"):

* **S(k)**, a cell's share succeeding within k tool calls: the share of its sessions that
  succeeded having made at most k calls, read from the calls each session made in one generous
  run (no re-runs: the scripted agents do not look at the budget, so a session cut at k calls
  would have done the same first k). k runs from 0 to the run's largest budget. A cell's curve
  weighs its tasks equally (each task's share over its sessions, then the mean over tasks).
* **restricted mean calls to success**: per session ``tool_calls`` when it succeeded, else its
  budget ``max_steps`` (the most calls it could make), as survival analysis restricts a mean to
  a horizon; it equals the area above the session's S(k) up to its budget, so the paired
  difference of restricted means is the area between two cells' curves. The same in steps
  (``steps``, a failure at ``max_steps``): waits cost steps that calls do not show.
* **Δ S at budgets fixed before any run** (:data:`BUDGETS`): the task's planned calls (its
  subgoals, one call each), planned + 2, planned + 5, and the run's budget (where Δ S is the
  Δ success the run's tables give).

Each estimand is a paired difference (the other cell − the base cell, on identical scenario,
seed, host and era), averaged per task and then over tasks; the unit of inference is the task:
a t interval and t test over the tasks' mean differences for the restricted means, and for the
shares the interval and test of :func:`harness.report.inference.scenario_difference` (Tango's
where the tasks show no spread). p-values are Holm-adjusted over a table's rows, each estimand
its own family, as the success and the calls of :mod:`harness.report.worlds` are.
``python -m harness.report.curves`` calibrates the intervals on synthetic studies with a known
effect (:func:`synthetic_sessions`).
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from harness.report.inference import (
    CONFIDENCE,
    adjust_pvalues,
    cluster_t_interval,
    cluster_t_test,
    scenario_difference,
)

__all__ = [
    "BUDGETS",
    "CURVE_COLUMNS",
    "ESTIMANDS",
    "MEASURES",
    "curve_table",
    "estimand_row",
    "per_task",
    "restricted",
    "survival",
    "synthetic_sessions",
    "true_effect",
]

BUDGETS: Mapping[str, Callable[[Any, Any], Any]] = {
    "planned": lambda planned, budget: planned,
    "planned+2": lambda planned, budget: planned + 2,
    "planned+5": lambda planned, budget: planned + 5,
    "budget": lambda planned, budget: budget,
}
"""The budgets (in calls) at which Δ S is reported, fixed before any run: each from a session's
planned calls (``subgoals_total``) and its budget (``max_steps``)."""

MEASURES: Mapping[str, str] = {"calls": "tool_calls", "steps": "steps"}
"""What the curves and restricted means count, and the row's column that counts it."""

ESTIMANDS: tuple[str, ...] = ("rmean_calls", "rmean_steps", *(f"S({b})" for b in BUDGETS))
"""The estimands of :func:`curve_table`, the headline first."""

CURVE_COLUMNS: tuple[str, ...] = (
    "by", "group", "estimand", "tasks", "pairs", "value_base", "value_other", "diff", "lo", "hi", "test", "p",
    "p_adj",
)  # fmt: skip
""":func:`curve_table`'s columns after its keys: ``value_base`` and ``value_other`` are the cells' means
(restricted mean calls or steps, or the share within the budget), ``diff`` = other − base."""


def restricted(value: Any, success: Any, budget: Any) -> np.ndarray[Any, np.dtype[np.float64]]:
    """Each session's count to success restricted to its budget: ``value`` (calls or steps) when it
    succeeded (never above the budget), the budget when it failed."""
    v = np.asarray(value, dtype=float)
    b = np.asarray(budget, dtype=float)
    return np.where(np.asarray(success, dtype=bool), np.minimum(v, b), b)


def survival(
    df: pd.DataFrame,
    group_of: Callable[[str], str],
    task_of: Callable[[str], str],
    *,
    measure: str = "calls",
    cells: Sequence[str] = ("agent", "strategy"),
) -> pd.DataFrame:
    """S(k) per group (``group_of(scenario)``, e.g. its world) and cell, for k = 0 .. the group's
    largest budget: columns ``group``, the ``cells`` columns, ``k``, ``tasks``, ``sessions``,
    ``share`` (the mean over tasks of each task's share succeeding within k ``measure``)."""
    column = MEASURES[measure]
    data = df.assign(
        _group=df["scenario"].astype(str).map(group_of),
        _task=df["scenario"].astype(str).map(task_of),
        _done=np.where(df["success"].astype(bool), df[column].to_numpy(dtype=float), np.inf),
    )
    rows: list[pd.DataFrame] = []
    for group, in_group in data.groupby("_group", sort=True):
        top = int(in_group["max_steps"].max()) if "max_steps" in in_group else 0
        top = max(top, int(np.nanmax(np.where(np.isinf(in_group["_done"]), 0, in_group["_done"]))))
        ks = np.arange(top + 1)
        for head, cell in in_group.groupby(list(cells), sort=True):
            values = head if isinstance(head, tuple) else (head,)
            shares = []
            for _, task in cell.groupby("_task", sort=True):
                done = np.sort(task["_done"].to_numpy(dtype=float))
                shares.append(np.searchsorted(done, ks, side="right") / len(done))
            frame = pd.DataFrame({"k": ks, "share": np.mean(shares, axis=0)})
            frame.insert(0, "group", str(group))
            for name, value in zip(cells, values, strict=True):
                frame.insert(1, name, str(value))
            frame["tasks"] = len(shares)
            frame["sessions"] = len(cell)
            rows.append(frame)
    columns = ["group", *cells, "k", "share", "tasks", "sessions"]
    return pd.concat(rows, ignore_index=True)[columns] if rows else pd.DataFrame(columns=columns)


def per_task(pairs: pd.DataFrame, task: Sequence[str] | np.ndarray[Any, Any]) -> dict[str, pd.DataFrame]:
    """Per estimand, one row per task from the matched ``pairs`` (``ok_base``, ``ok_other``,
    ``calls_*``, ``steps_*``, ``budget``, ``planned``): for the restricted means the task's mean
    of each cell and of the paired difference; for the shares the counts
    :func:`~harness.report.inference.scenario_difference` takes (``pairs``, ``base_only``,
    ``other_only``, ``net``, ``delta``) and each cell's share."""
    ok_b = pairs["ok_base"].astype(bool).to_numpy()
    ok_o = pairs["ok_other"].astype(bool).to_numpy()
    budget = pairs["budget"].to_numpy(dtype=float)
    planned = pairs["planned"].to_numpy(dtype=float)
    keys = np.asarray(task)
    out: dict[str, pd.DataFrame] = {}
    for measure in MEASURES:
        base = restricted(pairs[f"{measure}_base"], ok_b, budget)
        other = restricted(pairs[f"{measure}_other"], ok_o, budget)
        frame = pd.DataFrame({"task": keys, "base": base, "other": other, "diff": other - base})
        out[f"rmean_{measure}"] = frame.groupby("task", sort=True).agg(
            pairs=("diff", "size"), base=("base", "mean"), other=("other", "mean"), diff=("diff", "mean")
        )
    calls_b = pairs["calls_base"].to_numpy(dtype=float)
    calls_o = pairs["calls_other"].to_numpy(dtype=float)
    for name, at in BUDGETS.items():
        k = at(planned, budget)
        within_b = ok_b & (calls_b <= k)
        within_o = ok_o & (calls_o <= k)
        frame = pd.DataFrame({
            "task": keys, "base": within_b.astype(float), "other": within_o.astype(float),
            "base_only": (within_b & ~within_o).astype(int), "other_only": (~within_b & within_o).astype(int),
        })  # fmt: skip
        per = frame.groupby("task", sort=True).agg(
            pairs=("base", "size"), base=("base", "mean"), other=("other", "mean"),
            base_only=("base_only", "sum"), other_only=("other_only", "sum"),
        )  # fmt: skip
        per["net"] = per["other_only"] - per["base_only"]
        per["delta"] = per["net"] / per["pairs"]
        out[f"S({name})"] = per
    return out


def estimand_row(estimand: str, per: pd.DataFrame, confidence: float = CONFIDENCE) -> dict[str, Any]:
    """One estimand's row over the tasks of ``per`` (:func:`per_task`): the cells' means, the mean
    paired difference over tasks, its interval and its test (module docstring). A restricted
    mean whose tasks all show the same difference has no spread to build an interval from: NaN."""
    row: dict[str, Any] = {"estimand": estimand, "tasks": len(per), "pairs": int(per["pairs"].sum()),
                           "value_base": float(per["base"].mean()),
                           "value_other": float(per["other"].mean())}  # fmt: skip
    if estimand.startswith("S("):
        found = scenario_difference(per, confidence=confidence, equal_weights=True, wilcoxon=False)
        return {**row, "diff": float(per["delta"].mean()), "lo": found["diff_lo"], "hi": found["diff_hi"],
                "test": found["test"], "p": found["p"]}  # fmt: skip
    diffs = per["diff"].to_numpy(dtype=float)
    row["diff"] = float(diffs.mean()) if len(diffs) else math.nan
    if len(diffs) >= 2 and np.ptp(diffs) > 0:
        ones = np.ones_like(diffs)
        lo, hi = cluster_t_interval(diffs, ones, confidence=confidence)
        return {**row, "lo": lo, "hi": hi, "test": "t", "p": cluster_t_test(diffs, ones)}
    return {**row, "lo": math.nan, "hi": math.nan, "test": "", "p": math.nan}


def curve_table(
    pairs: pd.DataFrame,
    groups: Mapping[str, Sequence[str]],
    task_of: Callable[[str], str],
    *,
    by: str,
    keys: Sequence[str] = ("agent", "other"),
    adjust: str = "holm",
    confidence: float = CONFIDENCE,
) -> pd.DataFrame:
    """One row per value of ``keys``, group and estimand (:data:`ESTIMANDS`): ``groups`` maps each
    scenario to its groups, and a group's rows rest on the tasks (``task_of``) of its scenarios.
    Columns ``keys`` then :data:`CURVE_COLUMNS`; p adjusted over the table, per estimand."""
    member: dict[str, list[str]] = {}
    for scenario, names in groups.items():
        for name in names:
            member.setdefault(name, []).append(scenario)
    rows: list[dict[str, Any]] = []
    if not pairs.empty:
        for head, sub in pairs.groupby(list(keys), sort=True):
            values = dict(zip(keys, head if isinstance(head, tuple) else (head,), strict=True))
            for group in sorted(member):
                chosen = sub[sub["scenario"].isin(member[group])]
                if chosen.empty:
                    continue
                tasks = chosen["scenario"].astype(str).map(task_of).to_numpy()
                for estimand, per in per_task(chosen, tasks).items():
                    found = estimand_row(estimand, per, confidence)
                    rows.append({**values, "by": by, "group": group, **found})
    columns = [*keys, *CURVE_COLUMNS]
    out = pd.DataFrame(rows, columns=[c for c in columns if c != "p_adj"])
    out["p_adj"] = np.nan
    for _, index in out.groupby("estimand", sort=False).groups.items():
        out.loc[index, "p_adj"] = adjust_pvalues(out.loc[index, "p"].to_numpy(dtype=float), adjust)
    return out[columns]


# --- calibration on synthetic studies with a known effect ---------------------------------------


def synthetic_sessions(
    rng: np.random.Generator, *, tasks: int = 30, seeds: int = 5, shift: float = 0.0, fail_shift: float = 0.0
) -> pd.DataFrame:
    """One synthetic paired study with a known effect, as :func:`per_task` takes it (with ``task``).

    Each task draws a planned count n (1-6 calls), the budget 10 + 6n, a failure probability q
    from Beta(1, 6) and a mean number of extra calls from Gamma(2, 1); within a task a seed's
    session makes n plus a Poisson number of extra calls and fails with probability q (or when
    its calls pass the budget). The other cell makes ``shift`` more extra calls on average and
    fails with probability q + ``fail_shift``. Tasks differ far more than seeds do, as the
    worlds' tasks do; :func:`true_effect` gives the effect these draws have in expectation.
    """
    n = rng.integers(1, 7, size=tasks)
    q = rng.beta(1.0, 6.0, size=tasks)
    extra = rng.gamma(2.0, 1.0, size=tasks)
    t = np.repeat(np.arange(tasks), seeds)
    budget = 10 + 6 * n[t]

    def cell(lam: Any, fail: Any) -> tuple[Any, Any]:
        calls = n[t] + rng.poisson(np.maximum(lam, 0.0))
        ok = (rng.random(t.size) >= np.clip(fail, 0.0, 1.0)) & (calls <= budget)
        return calls, ok

    calls_b, ok_b = cell(extra[t], q[t])
    calls_o, ok_o = cell(extra[t] + shift, q[t] + fail_shift)
    return pd.DataFrame({
        "task": [f"t{j:03d}" for j in t], "ok_base": ok_b, "ok_other": ok_o, "calls_base": calls_b,
        "calls_other": calls_o, "steps_base": calls_b, "steps_other": calls_o, "budget": budget,
        "planned": n[t],
    })  # fmt: skip


def true_effect(*, shift: float = 0.0, fail_shift: float = 0.0, tasks: int = 400_000) -> float:
    """The Δ restricted mean calls of :func:`synthetic_sessions`' model over its distribution of
    tasks: the mean over a large sample of tasks, one pair each, from a seed of its own."""
    rng = np.random.default_rng(0)
    pairs = synthetic_sessions(rng, tasks=tasks, seeds=1, shift=shift, fail_shift=fail_shift)
    budget = pairs["budget"].to_numpy(dtype=float)
    base = restricted(pairs["calls_base"], pairs["ok_base"], budget)
    other = restricted(pairs["calls_other"], pairs["ok_other"], budget)
    return float(np.mean(other - base))


def calibrate(repetitions: int, seed: int, *, shift: float = 0.0, fail_shift: float = 0.0,
              **kwargs: Any) -> dict[str, float]:  # fmt: skip
    """Over ``repetitions`` synthetic studies: the share whose 95 % interval of Δ restricted mean
    calls covers the true effect (``coverage``), whose test rejects 0 at 0.05 (``rejects``), and
    the true effect (``true``)."""
    true = 0.0 if shift == fail_shift == 0.0 else true_effect(shift=shift, fail_shift=fail_shift)
    rng = np.random.default_rng(seed)
    covered = rejected = 0
    for _ in range(repetitions):
        pairs = synthetic_sessions(rng, shift=shift, fail_shift=fail_shift, **kwargs)
        row = estimand_row("rmean_calls", per_task(pairs, pairs["task"].to_numpy())["rmean_calls"])
        covered += row["lo"] <= true <= row["hi"]
        rejected += row["p"] < 0.05
    return {"coverage": covered / repetitions, "rejects": rejected / repetitions, "true": true}


def main(argv: Sequence[str] | None = None) -> int:
    """Print the coverage and the rejection rate of Δ restricted mean calls on synthetic studies."""
    parser = argparse.ArgumentParser(prog="python -m harness.report.curves", description=__doc__)
    parser.add_argument("--tasks", type=int, nargs="+", default=[15, 30, 97])
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--repetitions", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=23)
    args = parser.parse_args(argv)
    print(f"Δ restricted mean calls on synthetic studies, {args.repetitions} per line (95% interval)")
    for shift, fail in ((0.0, 0.0), (1.0, 0.0), (0.0, 0.1), (1.0, 0.1)):
        for m in args.tasks:
            got = calibrate(
                args.repetitions, args.seed, tasks=m, seeds=args.seeds, shift=shift, fail_shift=fail
            )
            print(f"extra calls {shift:+g}, failures {fail:+g} (true Δ {got['true']:+.3f}), {m} tasks x "
                  f"{args.seeds} seeds: the interval covers it {got['coverage']:.3f}, the test rejects 0 "
                  f"{got['rejects']:.3f}")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
