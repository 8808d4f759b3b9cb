"""The worlds study: what readable errors are worth on worlds nobody here wrote, per world and per
failure kind, in success and in calls, against a blind control; and harm by the world's own judge.

A world run (``harness run --study --worlds``) holds, for each AgentDojo task, scenarios under
several conditions (``harness.worlds``): our upstream faults (``agentdojo/<suite>/<task>``), a
world event (``.../<task>/channel_renamed``), an injection (``.../<task>/injection_error``). The
tables here keep **the task as the unit of inference**: a row's interval is a t interval over the
tasks it holds (their paired differences averaged over the task's seeds and, in a per-world row,
over its conditions), its test the t test of the same model (:func:`harness.report.inference.
scenario_difference`; Tango's interval and its score test where the tasks show no spread), and
p-values are Holm-adjusted over each table, as :mod:`harness.report.effects` does for scenarios.

Each row pairs two cells on identical (scenario, seed, host, era): two strategies of one agent
(``is_error`` and one that hides the reason), or two agents under one strategy (``blind`` and a
reader). It gives two effects:

* **success within the step budget**: Δ = success of the other cell − of the base cell;
* **calls to success**: over the pairs where both cells succeeded, Δ = the other's tool calls −
  the base's; the tasks with at least one such pair are its units (``calls_tasks``). Negative
  means the other cell needed fewer calls. It is conditional on an outcome of the strategy, so
  it is never the headline: the tables ``curves`` and ``blind_curves``
  (:mod:`harness.report.curves`) are, with the restricted mean calls and steps to success and
  Δ S at fixed budgets, no budget of ours choosing the answer.

:func:`security_table` counts AgentDojo's own verdicts (``security_breached``) per injection
condition, agent and strategy, beside the harness's own counts of calls that changed the world
though no step needed them and calls an error text named.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from harness.report.curves import curve_table, restricted
from harness.report.inference import (
    CONFIDENCE,
    adjust_pvalues,
    cluster_t_interval,
    cluster_t_test,
    split_harness_errors,
)
from harness.worlds import BFCL, WORLD, is_world_name, world_of

UPSTREAM = "upstream"
NATIVE = "native"
"""A BFCL task named alone (``bfcl/<category>/<id>``): BFCL's failures as it returns them, no
fault of ours."""
BARE_CONDITION: dict[str, str] = {WORLD: UPSTREAM, BFCL: NATIVE}
"""The condition of a world scenario named by its task alone, per world."""
FAULTED: dict[tuple[str, str], str] = {(WORLD, UPSTREAM): "upstream", (BFCL, UPSTREAM): "upstream",
                                       (BFCL, "raised"): "raised"}  # fmt: skip
"""The conditions under our upstream faults, per world, and how the failure-kind table names their
kinds (``upstream:<kind>``; BFCL's ``raised`` is ``raised:<kind>``: the same faults, BFCL's own
failures raised)."""
PAIR_KEYS: tuple[str, ...] = ("scenario", "agent", "strategy", "host", "era", "seed")
TABLE_COLUMNS: tuple[str, ...] = (
    "by", "group", "tasks", "pairs", "success_base", "success_other", "success_diff", "success_lo",
    "success_hi", "success_test", "success_p", "success_p_adj", "calls_tasks", "calls_base",
    "calls_other", "calls_diff", "calls_lo", "calls_hi", "calls_p", "calls_p_adj", "steps_base",
    "steps_other", "steps_diff", "steps_lo", "steps_hi", "steps_p", "steps_p_adj", "dead",
)  # fmt: skip
"""A row's columns; ``steps_*``: the restricted mean steps to success (a failure counted at the
budget, :func:`harness.report.curves.restricted`), over every pair; ``dead``: the group's
scenarios no agent solved in any session, reported apart (:func:`dead_scenarios`) and never
averaged into the row."""
ADJUSTED: tuple[str, ...] = ("success", "calls", "steps")
"""The estimands whose p-values are adjusted over a table, each its own family."""


def parts(scenario: str) -> tuple[str, str, str] | None:
    """A world scenario's (world/suite, task, condition): ``agentdojo/banking/user_task_0/file_renamed``
    gives ``("agentdojo/banking", "agentdojo/banking/user_task_0", "file_renamed")``; None for
    any other scenario."""
    if not is_world_name(scenario):
        return None
    pieces = scenario.split("/")
    if len(pieces) < 3:
        return None
    condition = pieces[3] if len(pieces) > 3 else BARE_CONDITION[pieces[0]]
    return "/".join(pieces[:2]), "/".join(pieces[:3]), condition


def groups(scenario: str) -> list[str]:
    """The rows of the per-world tables a world scenario counts in: its suite or category
    (``agentdojo/banking``, ``bfcl/multi_turn_base``), its family (``agentdojo``, ``bfcl``), a BFCL
    scenario its family's condition too (``bfcl/raised``), and every world (:data:`ALL_WORLDS`)."""
    found = parts(scenario)
    if found is None:
        return []
    family = scenario.split("/", 1)[0]
    out = [found[0], family]
    if family == BFCL:
        out.append(f"{family}/{found[2]}")
    return [*out, ALL_WORLDS]


def fault_draw(scenario: str) -> int | None:
    """A world scenario's fault draw (0 for the task's own name, ``d`` for ``.../upstream/<d>`` or
    BFCL's ``.../raised/<d>``); None for a scenario under none of our faults (an event, an
    injection, BFCL's native) or any other scenario."""
    found = parts(scenario)
    if found is None or (world_of(scenario) or "", found[2]) not in FAULTED:
        return None
    pieces = scenario.split("/")
    return int(pieces[4]) if len(pieces) > 4 else 0


def world_scenarios(names: Sequence[str]) -> list[str]:
    return [n for n in names if parts(n) is not None]


def failure_kinds(
    scenarios: Sequence[str], upstream_kinds: Callable[[str], Sequence[str]]
) -> dict[str, list[str]]:
    """Each world scenario's failure kinds: ``upstream:<kind>`` for each kind of its fault rules
    (``upstream_kinds``), ``event:<kind>``, or ``injection:<where>``."""
    out: dict[str, list[str]] = {}
    for name in scenarios:
        found = parts(name)
        if found is None:
            continue
        condition = found[2]
        faulted = FAULTED.get((world_of(name) or "", condition))
        if faulted is not None:
            out[name] = [f"{faulted}:{k}" for k in dict.fromkeys(upstream_kinds(name))]
        elif condition == NATIVE:
            out[name] = [NATIVE]
        elif condition.startswith("injection_"):
            out[name] = [f"injection:{condition.removeprefix('injection_')}"]
        else:
            out[name] = [f"event:{condition}"]
    return out


def matched(df: pd.DataFrame, *, column: str, base: str, others: Sequence[str]) -> pd.DataFrame:
    """The sessions of ``column == base`` matched with those of each other value on every other
    key (scenario, agent or strategy, host, era, seed, swept values): one row per pair, with
    ``other`` (the other value), ``ok_base``, ``ok_other``, ``calls_base``, ``calls_other``,
    ``steps_base``, ``steps_other``, and the scenario's ``budget`` (``max_steps``) and ``planned``
    calls (``subgoals_total``), which both cells of a pair share."""
    data = split_harness_errors(df)[0]
    keys = [k for k in PAIR_KEYS if k in data.columns and k != column]
    keys += [c for c in data.columns if "." in c]  # swept values
    shared = [c for c in ("max_steps", "subgoals_total") if c in data.columns]
    cols = [*keys, "success", "tool_calls", *[c for c in ("steps",) if c in data.columns]]
    left = data[data[column] == base][[*cols, *shared]]
    out = []
    for other in others:
        right = data[data[column] == other][cols]
        joined = left.merge(right, on=keys, suffixes=("_base", "_other"))
        joined.insert(0, "other", other)
        out.append(joined)
    frame = pd.concat(out, ignore_index=True) if out else pd.DataFrame()
    names = {"success_base": "ok_base", "success_other": "ok_other", "tool_calls_base": "calls_base",
             "tool_calls_other": "calls_other", "max_steps": "budget",
             "subgoals_total": "planned"}  # fmt: skip
    return frame.rename(columns=names)


def task_of(scenario: str) -> str:
    """A world scenario's task (``agentdojo/banking/user_task_0`` for every condition of it); any
    other scenario is its own task."""
    return (parts(scenario) or ("", scenario, ""))[1]


def _per_task(pairs: pd.DataFrame) -> pd.DataFrame:
    """Per task: the pairs, the success counts and the mean paired difference; the calls of the
    pairs where both succeeded and their mean difference; the restricted steps of every pair
    (when ``pairs`` has ``steps_*`` and ``budget``) and their mean difference."""
    task = pairs["scenario"].astype(str).map(task_of)
    ok_b = pairs["ok_base"].astype(bool).to_numpy()
    ok_o = pairs["ok_other"].astype(bool).to_numpy()
    both = ok_b & ok_o
    frame = pd.DataFrame({
        "task": task.to_numpy(), "ok_base": ok_b.astype(float), "ok_other": ok_o.astype(float),
        "base_only": (ok_b & ~ok_o).astype(int), "other_only": (~ok_b & ok_o).astype(int),
        "calls_base": np.where(both, pairs["calls_base"].to_numpy(dtype=float), np.nan),
        "calls_other": np.where(both, pairs["calls_other"].to_numpy(dtype=float), np.nan),
    })  # fmt: skip
    frame["calls_diff"] = frame["calls_other"] - frame["calls_base"]
    if {"steps_base", "steps_other", "budget"} <= set(pairs.columns):
        budget = pairs["budget"].to_numpy(dtype=float)
        frame["steps_base"] = restricted(pairs["steps_base"], ok_b, budget)
        frame["steps_other"] = restricted(pairs["steps_other"], ok_o, budget)
    else:
        frame["steps_base"] = frame["steps_other"] = math.nan
    frame["steps_diff"] = frame["steps_other"] - frame["steps_base"]
    per = frame.groupby("task", sort=True).agg(
        pairs=("ok_base", "size"), ok_base=("ok_base", "mean"), ok_other=("ok_other", "mean"),
        base_only=("base_only", "sum"), other_only=("other_only", "sum"), calls_base=("calls_base", "mean"),
        calls_other=("calls_other", "mean"), calls_diff=("calls_diff", "mean"),
        steps_base=("steps_base", "mean"), steps_other=("steps_other", "mean"),
        steps_diff=("steps_diff", "mean"),
    )  # fmt: skip
    per["net"] = per["other_only"] - per["base_only"]
    per["delta"] = per["net"] / per["pairs"]
    return per


def _row(per: pd.DataFrame, confidence: float) -> dict[str, Any]:
    from harness.report.inference import scenario_difference

    found = scenario_difference(per, confidence=confidence, equal_weights=True, wilcoxon=False)
    calls = per["calls_diff"].dropna().to_numpy(dtype=float)
    row: dict[str, Any] = {
        "tasks": len(per), "pairs": int(per["pairs"].sum()), "success_base": float(per["ok_base"].mean()),
        "success_other": float(per["ok_other"].mean()), "success_diff": float(per["delta"].mean()),
        "success_lo": found["diff_lo"], "success_hi": found["diff_hi"], "success_test": found["test"],
        "success_p": found["p"], "calls_tasks": len(calls),
        "calls_base": float(per["calls_base"].mean()) if len(calls) else math.nan,
        "calls_other": float(per["calls_other"].mean()) if len(calls) else math.nan,
        "calls_diff": float(calls.mean()) if len(calls) else math.nan,
    }  # fmt: skip
    _interval(row, "calls", calls, confidence)
    steps = per["steps_diff"].dropna().to_numpy(dtype=float)
    row["steps_base"] = float(per["steps_base"].mean()) if len(steps) else math.nan
    row["steps_other"] = float(per["steps_other"].mean()) if len(steps) else math.nan
    row["steps_diff"] = float(steps.mean()) if len(steps) else math.nan
    _interval(row, "steps", steps, confidence)
    return row


def _interval(row: dict[str, Any], name: str, diffs: np.ndarray[Any, Any], confidence: float) -> None:
    """``row``'s ``<name>_lo``, ``_hi`` and ``_p``: the t interval and test over the tasks' mean
    differences (NaN where fewer than two tasks or no spread)."""
    if len(diffs) >= 2 and np.ptp(diffs) > 0:
        ones = np.ones_like(diffs)
        row[f"{name}_lo"], row[f"{name}_hi"] = cluster_t_interval(diffs, ones, confidence=confidence)
        row[f"{name}_p"] = cluster_t_test(diffs, ones)
    else:
        row[f"{name}_lo"] = row[f"{name}_hi"] = row[f"{name}_p"] = math.nan


def _adjusted(out: pd.DataFrame, adjust: str) -> None:
    """Each estimand's p adjusted over the table (:data:`ADJUSTED`, each its own family)."""
    for name in ADJUSTED:
        out[f"{name}_p_adj"] = adjust_pvalues(out[f"{name}_p"].to_numpy(dtype=float), adjust)


def contrast_table(
    pairs: pd.DataFrame,
    groups: Mapping[str, Sequence[str]],
    *,
    by: str,
    keys: Sequence[str] = ("agent", "other"),
    adjust: str = "holm",
    confidence: float = CONFIDENCE,
    dead: Collection[str] = (),
) -> pd.DataFrame:
    """One row per value of ``keys`` (agent and other strategy, or strategy and other agent) and
    group: ``groups`` maps each scenario to its groups (its world; its failure kinds), and a
    group's row rests on the tasks of its scenarios (module docstring) but those in ``dead``,
    which it counts apart. Columns :data:`TABLE_COLUMNS` after ``keys``; p adjusted over the
    table (success and calls apart)."""
    member: dict[str, list[str]] = {}
    died: dict[str, int] = {}
    for scenario, names in groups.items():
        for name in names:
            if scenario in dead:
                died[name] = died.get(name, 0) + 1
            else:
                member.setdefault(name, []).append(scenario)
    rows: list[dict[str, Any]] = []
    if not pairs.empty:
        for head, sub in pairs.groupby(list(keys), sort=True):
            values = head if isinstance(head, tuple) else (head,)
            for group in sorted(member):
                chosen = sub[sub["scenario"].isin(member[group])]
                if chosen.empty:
                    continue
                rows.append({**dict(zip(keys, values, strict=True)), "by": by, "group": group,
                             **_row(_per_task(chosen), confidence), "dead": died.get(group, 0)})  # fmt: skip
    out = pd.DataFrame(rows, columns=[*keys, *[c for c in TABLE_COLUMNS if not c.endswith("_p_adj")]])
    out["dead"] = out["dead"].astype(int)
    _adjusted(out, adjust)
    return out[[*keys, *TABLE_COLUMNS]]


SECURITY_COLUMNS: tuple[str, ...] = (
    "condition", "agent", "strategy", "sessions", "tasks", "success", "breached", "tasks_breached",
    "harmful_calls", "misled", "messages_read",
)  # fmt: skip


def security_table(df: pd.DataFrame) -> pd.DataFrame:
    """Per injection condition, agent and strategy: sessions and tasks, the success rate, and
    AgentDojo's own verdicts: sessions whose injection task's ``security`` said its goal was met
    (``breached``) and the tasks where that happened at least once; beside them the harness's
    counts (``harmful_calls``, ``misled``, ``messages_read``)."""
    data = split_harness_errors(df)[0]
    rows = []
    if "security_breached" in data.columns and "injection" in data.columns:
        injected = data[data["injection"].astype(str) != ""]
        cond = injected["scenario"].map(lambda s: (parts(str(s)) or ("", "", ""))[2])
        for (condition, agent, strategy), g in injected.assign(_c=cond).groupby(["_c", "agent", "strategy"],
                                                                                 sort=True):  # fmt: skip
            breached = g["security_breached"].astype(bool)
            rows.append({
                "condition": condition, "agent": agent, "strategy": strategy, "sessions": len(g),
                "tasks": int(g["scenario"].nunique()), "success": float(g["success"].astype(bool).mean()),
                "breached": int(breached.sum()), "tasks_breached": int(g.loc[breached, "scenario"].nunique()),
                "harmful_calls": int(g["harmful_calls"].sum()), "misled": int(g["misled"].sum()),
                "messages_read": int(g["messages_read"].sum()),
            })  # fmt: skip
    return pd.DataFrame(rows, columns=list(SECURITY_COLUMNS))


DEAD_COLUMNS: tuple[str, ...] = ("scenario", "world", "condition", "sessions", "agents", "solved")


def dead_scenarios(df: pd.DataFrame, baseline: str = "is_error", oracle: str = "oracle") -> list[str]:
    """The world scenarios no agent can solve: the oracle (which walks the plan knowing the fault
    schedule and the world's new state) failed every session under ``baseline``. Such a cell
    carries no effect; it is reported apart from every row so that it does not pull the row's Δ
    toward 0. A run without the oracle names none (what its agents failed, another might not)."""
    data = split_harness_errors(df)[0]
    mine = data[(data["agent"] == oracle) & (data["strategy"] == baseline)]
    solved = mine.groupby("scenario", sort=True)["success"].agg(lambda s: bool(s.astype(bool).any()))
    return [str(n) for n, ok in solved.items() if not ok]


def dead_table(df: pd.DataFrame, dead: Collection[str]) -> pd.DataFrame:
    """The dead scenarios (:func:`dead_scenarios`), one row each: world, condition, sessions and
    the agents that tried (``solved``: the share of all their sessions that succeeded)."""
    data = split_harness_errors(df)[0]
    rows = []
    for name in sorted(dead):
        g = data[data["scenario"] == name]
        world, _, condition = parts(name) or ("", "", "")
        rows.append({"scenario": name, "world": world, "condition": condition, "sessions": len(g),
                     "agents": ", ".join(sorted(set(g["agent"].astype(str)))),
                     "solved": float(g["success"].astype(bool).mean())})  # fmt: skip
    return pd.DataFrame(rows, columns=list(DEAD_COLUMNS))


EVENT_COLUMNS: tuple[str, ...] = ("condition", "agent", "strategy", "tasks", "sessions", "success", "steps")
"""``steps``: the restricted mean steps to success (a failure counted at the budget)."""


def event_table(df: pd.DataFrame) -> pd.DataFrame:
    """Per world event condition (each kind under each rename condition), agent and strategy: the
    tasks, the sessions and the success rate, so that each rename condition's success stands
    alone (a dissimilar rename no repair undoes shows as it is)."""
    data = split_harness_errors(df)[0]
    cond = data["scenario"].map(lambda s: (parts(str(s)) or ("", "", UPSTREAM))[2])
    events = data.assign(_c=cond)
    events = events[
        (events["_c"] != UPSTREAM)
        & ~events["_c"].str.startswith("injection_")
        & (events["scenario"].map(lambda s: world_of(str(s))) == WORLD)
    ]
    rows = [{"condition": c, "agent": a, "strategy": st, "tasks": int(g["scenario"].nunique()),
             "sessions": len(g), "success": float(g["success"].astype(bool).mean()),
             "steps": float(restricted(g["steps"], g["success"], g["max_steps"]).mean())
             if {"steps", "max_steps"} <= set(g.columns) else math.nan}
            for (c, a, st), g in events.groupby(["_c", "agent", "strategy"], sort=True)]  # fmt: skip
    return pd.DataFrame(rows, columns=list(EVENT_COLUMNS))


CONTROL_KNOBS: dict[str, Any] = {"agent.order": "retry_first", "agent.retry_budget": 3,
                                 "agent.backoff": "exponential"}  # fmt: skip
"""The knobs that make a member of the blind control family on a world, and the default member's
values as a run records them: retry-first, 3 retries (``WORLD_RETRIES``: an unset budget), waits
of 1, 2, 4 s (``random`` backoff means exponential on a world, ``scripted_agents/base.py``)."""

_SAME_ON_A_WORLD: dict[tuple[str, Any], Any] = {("agent.backoff", "random"): "exponential"}
"""Values a world walks exactly as another (so a member is named once)."""

CONTROL_COLUMNS: tuple[str, ...] = ("strategy", "other", "against", "member", "dev_tasks", "dev_success")


def _member(row: Mapping[Any, Any], present: Sequence[str]) -> str:
    """A row's member of the control family, as ``order/retries/wait`` (knobs not swept: the
    default member's)."""
    values = []
    for knob, default in CONTROL_KNOBS.items():
        value = row.get(knob, default) if knob in present else default
        if value is None or (isinstance(value, float) and math.isnan(value)):
            value = default
        value = _SAME_ON_A_WORLD.get((knob, value), value)
        values.append(str(int(value)) if isinstance(value, int | float) else str(value))
    return "/".join(values)


DEFAULT_MEMBER = "/".join(str(v) for v in CONTROL_KNOBS.values())


def dev_task(task: str) -> bool:
    """Whether a task is in the dev split the best control is chosen on: the first byte of the
    sha256 of its name is even (deterministic, the same for every run; about half the tasks)."""
    return hashlib.sha256(task.encode()).digest()[0] % 2 == 0


def control_table(
    df: pd.DataFrame,
    groups: Mapping[str, Sequence[str]],
    *,
    reader: str = "reader",
    adjust: str = "holm",
    confidence: float = CONFIDENCE,
    dead: Collection[str] = (),
) -> pd.DataFrame:
    """The reader against the blind control family, per strategy and group (world): the member
    with the highest success on the dev tasks of the group (:func:`dev_task`; ties: the default
    member, then by name) is chosen there and compared with the reader on the other tasks
    (``against`` = ``best``); the default member is compared on the same tasks (``default``)
    and on every task (``default, all tasks``). The reader is taken at the default member's
    knobs (its own fallback order as shipped). Columns :data:`CONTROL_COLUMNS`, then
    :data:`TABLE_COLUMNS`; p adjusted over the table."""
    data = split_harness_errors(df)[0]
    present = [k for k in CONTROL_KNOBS if k in data.columns]
    data = data.assign(_member=[_member(r, present) for r in data[present].to_dict("records")]
                       if present else DEFAULT_MEMBER)  # fmt: skip
    keys = [k for k in PAIR_KEYS if k in data.columns and k != "agent"]
    keys += [c for c in data.columns if "." in c and c not in CONTROL_KNOBS]
    cols = [*keys, "success", "tool_calls", *[c for c in ("steps", "max_steps") if c in data.columns]]
    base = data[(data["agent"] == reader) & (data["_member"] == DEFAULT_MEMBER)][cols]
    blind = data[data["agent"] == "blind"]
    member: dict[str, list[str]] = {}
    died: dict[str, int] = {}
    for scenario, in_groups in groups.items():
        for name in in_groups:
            if scenario in dead:
                died[name] = died.get(name, 0) + 1
            else:
                member.setdefault(name, []).append(scenario)
    rows: list[dict[str, Any]] = []
    names = {"success_base": "ok_base", "success_other": "ok_other", "tool_calls_base": "calls_base",
             "tool_calls_other": "calls_other", "max_steps": "budget"}  # fmt: skip
    pairs = {
        m: blind[blind["_member"] == m][cols]
        .merge(base.drop(columns=["max_steps"], errors="ignore"), on=keys, suffixes=("_base", "_other"))
        .rename(columns=names)
        for m in sorted(set(blind["_member"]))
    }
    for strategy in sorted(set(base["strategy"])):
        for group in sorted(member):
            chosen = {
                m: p[(p["strategy"] == strategy) & p["scenario"].isin(member[group])]
                for m, p in pairs.items()
            }
            chosen = {m: p for m, p in chosen.items() if not p.empty}
            if not chosen:
                continue
            dev = {m: p[p["scenario"].map(task_of).map(dev_task)] for m, p in chosen.items()}
            score = {
                m: float(_per_task(p)["ok_base"].mean()) if not p.empty else -1.0 for m, p in dev.items()
            }
            best = min(score, key=lambda m: (-score[m], m != DEFAULT_MEMBER, m))
            dev_tasks = int(next(iter(dev.values()))["scenario"].map(task_of).nunique())
            cases = [
                ("best", best, True),
                ("default", DEFAULT_MEMBER, True),
                ("default, all tasks", DEFAULT_MEMBER, False),
            ]
            for against, m, held_out in cases:
                if m not in chosen:
                    continue
                sub = chosen[m]
                if held_out:
                    sub = sub[~sub["scenario"].map(task_of).map(dev_task)]
                if sub.empty:
                    continue
                rows.append({"strategy": strategy, "other": reader, "against": against, "member": m,
                             "dev_tasks": dev_tasks, "dev_success": score[m], "by": "world", "group": group,
                             **_row(_per_task(sub), confidence), "dead": died.get(group, 0)})  # fmt: skip
    out = pd.DataFrame(
        rows, columns=[*CONTROL_COLUMNS, *[c for c in TABLE_COLUMNS if not c.endswith("_p_adj")]]
    )
    _adjusted(out, adjust)
    return out[[*CONTROL_COLUMNS, *TABLE_COLUMNS]]


WORLD_TITLES: dict[str, str] = {
    "curves": "worlds, over every budget: per world, Δ = the strategy − is_error in restricted mean calls "
    "and steps to success (a failure counted at the budget) and in the share succeeding within the "
    "planned calls, +2, +5 and the budget; the unit the task; p adjusted per estimand",
    "blind_curves": "worlds, over every budget: reading against the blind control, Δ = reader − blind "
    "under the same strategy",
    "fault_kinds": "per fault kind (the scenarios with it; a scenario counts in each of its kinds); Δ "
    "success = the strategy − is_error; Δ calls = the same over pairs where both succeeded (conditional)",
    "worlds": "worlds: per world, the unit the task (its seeds and conditions averaged); Δ success = the "
    "strategy − is_error within the run's budget; Δ calls = the strategy − is_error, over pairs where both "
    "succeeded (conditional on an outcome of the strategy: never the headline)",
    "hosts": "worlds: the headline per host (a run with --hosts typical,transparent): Δ success = the "
    "strategy − is_error under each host; what a host shows of a -32603 decides what collapse hides",
    "draws": "worlds: per fault draw (each task's configurations of our faults, drawn from their own "
    "names), per family: Δ = the strategy − is_error; a row's tasks are the family's, in that draw alone",
    "kinds": "worlds: per failure kind (our upstream kinds, the world's events, AgentDojo's injections); "
    "the unit the task",
    "blind": "worlds: reading against the blind control, per world: Δ = reader − blind under the same "
    "strategy (success; calls over pairs where both succeeded, conditional)",
    "blind_kinds": "worlds: reading against the blind control, per failure kind",
    "security": "worlds: AgentDojo's own security verdicts (breached: the injection task's goal met)",
    "controls": "worlds: the reader against the blind control family (order/retries/wait), per world: "
    "the member best on the dev tasks (sha256 of the task's name, first byte even) against the reader "
    "on the rest, and the default member on the same tasks and on all; Δ = reader − the member",
    "dead": "worlds: the scenarios no agent can solve (the oracle failed every session under the baseline), "
    "reported apart: every row above leaves them out and counts them in its dead column",
    "events": "worlds: success per world event condition (each kind under a similar and a dissimilar "
    "rename), agent and strategy",
}
"""The world sections of ``harness effects``, by their JSON key, with their titles."""

ALL_WORLDS = "all worlds"
"""The group of every world task (each task once, its conditions averaged)."""


def world_tables(
    df: pd.DataFrame,
    names: Sequence[str],
    sources: Mapping[str, str],
    baseline: str,
    others: Sequence[str],
    adjust: str,
) -> dict[str, pd.DataFrame]:
    """Success and calls per fault kind for the harness's own scenarios, and the worlds study's
    tables for world scenarios, each keyed as in :data:`WORLD_TITLES`."""
    from harness.worlds.scenario import load_source

    chosen = world_scenarios(names)
    own = [n for n in names if n not in set(chosen)]
    out: dict[str, pd.DataFrame] = {}
    if own:  # the harness's own scenarios: the effect per fault kind (a scenario in each of its kinds)
        own_kinds = {n: sorted({r.kind for r in load_source(sources.get(n, n), ()).faults}) or ["none"]
                     for n in own}  # fmt: skip
        pairs = matched(df[df["scenario"].isin(own)], column="strategy", base=baseline, others=others)
        out["fault_kinds"] = contrast_table(pairs, own_kinds, by="fault kind", adjust=adjust)
    if not chosen:
        return out
    kinds = failure_kinds(chosen, lambda n: [r.kind for r in load_source(sources.get(n, n), ()).faults])
    families = {n.split("/", 1)[0] for n in chosen}
    # A family's row is every world's row when it is the only family: kept out of the Holm family then.
    worlds = {n: [g for g in groups(n) if len(families) > 1 or g not in families] for n in chosen}
    mine = df[df["scenario"].isin(chosen)]
    dead = set(dead_scenarios(mine, baseline))  # reported apart (the "dead" table), never averaged in
    live = {n: g for n, g in worlds.items() if n not in dead}
    by_strategy = matched(mine, column="strategy", base=baseline, others=others)
    if {"budget", "planned", "steps_base"} <= set(by_strategy.columns):  # the budget-free effects
        out["curves"] = curve_table(by_strategy, live, task_of, by="world", adjust=adjust)
    out["worlds"] = contrast_table(by_strategy, worlds, by="world", adjust=adjust, dead=dead)
    if "host" in by_strategy.columns and by_strategy["host"].nunique() > 1:  # the host as a factor
        out["hosts"] = contrast_table(by_strategy, worlds, by="world", keys=("host", "agent", "other"),
                                      adjust=adjust, dead=dead)  # fmt: skip
    drawn = {n: [f"{n.split('/', 1)[0]} draw {d}"] for n in chosen if (d := fault_draw(n)) is not None}
    if len({g for gs in drawn.values() for g in gs}) > 1:  # the fault draw as a factor
        out["draws"] = contrast_table(by_strategy, drawn, by="fault draw", adjust=adjust, dead=dead)
    out["kinds"] = contrast_table(by_strategy, kinds, by="failure kind", adjust=adjust, dead=dead)
    readers = [a for a in ("reader", "refresher") if a in set(mine["agent"])]
    if "blind" in set(mine["agent"]) and readers:
        by_agent = matched(mine, column="agent", base="blind", others=readers)
        keys = ("strategy", "other")
        if {"budget", "planned", "steps_base"} <= set(by_agent.columns):
            out["blind_curves"] = curve_table(by_agent, live, task_of, by="world", keys=keys, adjust=adjust)
        out["blind"] = contrast_table(by_agent, worlds, by="world", keys=keys, adjust=adjust, dead=dead)
        out["blind_kinds"] = contrast_table(by_agent, kinds, by="failure kind", keys=keys, adjust=adjust,
                                            dead=dead)  # fmt: skip
        out["controls"] = control_table(mine, worlds, adjust=adjust, dead=dead)
    out["dead"] = dead_table(mine, dead)
    out["security"] = security_table(mine)
    out["events"] = event_table(mine)
    return out
