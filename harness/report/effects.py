"""Per-scenario effects of readable errors, and which scenario features go with their sign.

The strategy comparison (:mod:`harness.report.stats`) pools: "is_error beats collapse by 0.10
over these 200 scenarios". A pooled mean hides how the effect is spread: a small gain everywhere
and a large gain in a few scenarios with losses elsewhere pool alike. This module keeps the
scenario as the unit and looks at each one:

* **The effect in one scenario** is the paired difference in success, Δ = the other strategy
  minus readable errors (``baseline``, is_error), over the seeds both ran (the fault schedule
  depends on scenario and seed only, so a pair differs only in how the failure was encoded): the
  same sign convention as the comparison's Δ (strategy − baseline). Its **sign** is ``help``
  (Δ < 0: readable errors do better), ``hurt`` (Δ > 0) or ``none`` (every pair agreed). With a few
  seeds per scenario a non-zero sign can be noise: :func:`effect_shares` reports the shares as
  counted, and a test across scenarios (Wilcoxon's signed rank on the per-scenario effects,
  :func:`harness.report.inference.scenario_test`) whose p-values are adjusted over the table.
* **Features** come from the scenario itself (:func:`scenario_features`), so they mean the same
  for a hand-written scenario and a sampled one: which fault kinds strike, which message
  qualities they carry, whether a subgoal has an alternative tool, whether the tool list changes,
  the step budget (split at the median over the run's scenarios) and, for a sampled scenario,
  its family. Every swept parameter is a feature too.
* **Which features go with the sign** (:func:`feature_table`): for each feature, the scenarios
  with it against those without: the shares that help and hurt in each group, and the
  difference of their mean effects with a Welch t interval and a Mann--Whitney test; p-values
  adjusted over the whole table. These are associations across scenarios, one feature at a time:
  features that travel together (a family draws several at once) are not told apart, which the
  docs say where the table is shown.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from harness.report.inference import (
    CLUSTER,
    CONFIDENCE,
    adjust_pvalues,
    check_adjust,
    cluster_t_interval,
    paired_difference_interval,
    paired_groups,
    per_scenario_pairs,
    scenario_test,
)
from harness.sim.family import load_source, source_family
from harness.sim.scenario import Scenario

BASELINE = "is_error"
AGAINST: tuple[str, ...] = ("collapse", "masked")
"""The strategies readable errors are measured against by default: both hide the reason."""

SIGNS: tuple[str, ...] = ("help", "none", "hurt")
"""Readable errors help (Δ = other − readable < 0), make no difference (every pair agreed), or
hurt (Δ > 0)."""

MIN_GROUP = 5
"""A feature is tested only when at least this many scenarios have it and this many lack it."""

EFFECT_COLUMNS: tuple[str, ...] = ("agent", "against", "unit", "pairs", "effect", "sign")
SHARE_COLUMNS: tuple[str, ...] = (
    "agent", "against", "scenarios", "help", "none", "hurt",
    "mean_effect", "lo", "hi", "test", "p", "p_adj",
)  # fmt: skip
FEATURE_COLUMNS: tuple[str, ...] = (
    "agent", "against", "feature", "n_with", "help_with", "hurt_with", "mean_with",
    "n_without", "help_without", "hurt_without", "mean_without", "difference", "lo", "hi", "p", "p_adj",
)  # fmt: skip


def scenario_features(scenario: Scenario, source: str | None = None) -> dict[str, Any]:
    """The features of one scenario: booleans named ``kind:*``, ``quality:*`` and others, and ``budget``.

    ``source`` is the run's record of where the scenario came from; a sampled one names its family.
    """
    out: dict[str, Any] = {}
    for rule in scenario.faults:
        out[f"kind:{rule.kind}"] = True
        out[f"quality:{rule.said}"] = True
    out["alternatives"] = any(len(goal.options) > 1 for goal in scenario.task.subgoals)
    out["tool list changes"] = bool(scenario.events)
    out["deadline"] = scenario.deadline_s is not None
    out["budget"] = scenario.max_steps
    family = source_family(source) if source is not None else None
    if family is not None:
        out[f"family:{family}"] = True
    return out


def run_features(
    scenarios: Sequence[str], sources: Mapping[str, str] | None = None, *, budget_split: float | None = None
) -> pd.DataFrame:
    """One row per scenario name, one boolean column per feature (``budget`` made ``budget >= M``).

    ``sources`` maps a name to what the run recorded (a family sample or a path); a name with no
    source is loaded as a shipped scenario or a path. The budget splits at ``budget_split``,
    by default the median over these scenarios.
    """
    sources = sources or {}
    rows = {
        name: scenario_features(load_source(sources.get(name, name), ()), sources.get(name))
        for name in scenarios
    }
    frame = pd.DataFrame.from_dict(rows, orient="index")
    budgets = frame.pop("budget").astype(float)
    split = float(np.median(budgets)) if budget_split is None else budget_split
    bools = frame.astype("boolean").fillna(False).astype(bool)
    if budgets.nunique() > 1:
        bools[f"budget >= {split:g}"] = budgets >= split
    bools = bools[sorted(bools.columns)]
    bools.index.name = CLUSTER
    return bools


def scenario_effects(
    df: pd.DataFrame, *, baseline: str = BASELINE, against: Sequence[str] = AGAINST
) -> pd.DataFrame:
    """The effect of readable errors in each scenario: one row per agent, other strategy and unit.

    Columns :data:`EFFECT_COLUMNS` plus ``scenario`` and every swept parameter (a scenario under
    two parameter values is two units). ``effect`` = Δ, the mean over the paired seeds of success
    under ``against`` minus success under ``baseline`` (strategy − baseline, as the comparison's Δ).
    """
    groups, paired = paired_groups(df, baseline=baseline, by=("agent",), group_params=True)
    params = [g for g in groups if g != "agent"]
    rows: list[dict[str, Any]] = []
    for head, pairs in paired:
        other = head.pop("strategy")
        if other not in against:
            continue
        for scenario, rec in per_scenario_pairs(pairs).iterrows():
            effect = float(rec["delta"])  # other - base: the comparison's convention
            label = str(scenario) + "".join(f" [{p}={head[p]}]" for p in params)
            rows.append({**head, "against": other, "scenario": scenario, "unit": label,
                         "pairs": int(rec["pairs"]), "effect": effect,
                         "sign": "help" if effect < 0 else "hurt" if effect > 0 else "none"})  # fmt: skip
    return pd.DataFrame(
        rows, columns=["agent", *params, "against", "scenario", "unit", "pairs", "effect", "sign"]
    )


def effect_shares(
    effects: pd.DataFrame, *, adjust: str = "holm", confidence: float = CONFIDENCE
) -> pd.DataFrame:
    """Per agent and other strategy: how many scenarios readable errors help, leave alone, hurt.

    ``mean_effect`` is the mean of the per-scenario effects (every scenario weighs the same) with
    its t interval over scenarios (when no scenario differs, Tango's interval with each scenario
    one trial, as :func:`harness.report.stats.compare` gives such a row); ``test``/``p`` the
    signed-rank (or sign) test across scenarios, ``p_adj`` adjusted over the table's rows.
    """
    check_adjust(adjust)
    rows: list[dict[str, Any]] = []
    for (agent, other), g in effects.groupby(["agent", "against"], sort=True):
        values = g["effect"].to_numpy(dtype=float)
        counts = g["sign"].value_counts()
        lo, hi = cluster_t_interval(values, np.ones_like(values), confidence=confidence, bounds=(-1.0, 1.0))
        if not np.any(values):  # no scenario differs: no spread; each scenario one trial, as compare does
            lo, hi = paired_difference_interval(0, 0, len(values), confidence)
        test, p = scenario_test(values)
        rows.append({"agent": agent, "against": other, "scenarios": len(values),
                     **{s: int(counts.get(s, 0)) for s in SIGNS}, "mean_effect": float(values.mean()),
                     "lo": lo, "hi": hi, "test": test, "p": p})  # fmt: skip
    out = pd.DataFrame(rows, columns=list(SHARE_COLUMNS[:-1]))
    out["p_adj"] = adjust_pvalues(out["p"].to_numpy(dtype=float), adjust) if len(out) else []
    return out


def _welch(a: np.ndarray[Any, Any], b: np.ndarray[Any, Any], confidence: float) -> tuple[float, float, float]:
    """Difference of means a - b with Welch's t interval; (diff, lo, hi)."""
    diff = float(a.mean() - b.mean())
    va, vb = a.var(ddof=1) / len(a), b.var(ddof=1) / len(b)
    se = math.sqrt(va + vb)
    if se == 0:
        return diff, diff, diff
    dof = (va + vb) ** 2 / ((va**2 / (len(a) - 1) if va else 0.0) + (vb**2 / (len(b) - 1) if vb else 0.0))
    half = float(stats.t.ppf(0.5 + confidence / 2, dof)) * se
    return diff, diff - half, diff + half


def feature_table(
    effects: pd.DataFrame,
    features: pd.DataFrame,
    *,
    adjust: str = "holm",
    min_group: int = MIN_GROUP,
    confidence: float = CONFIDENCE,
) -> pd.DataFrame:
    """For each agent, other strategy and feature: the effects of scenarios with it against without.

    Only (agent, other) pairs where some scenario's effect is not zero are tested (where readable
    errors never matter no feature can tell when they do), and only features with at least
    ``min_group`` scenarios on each side. ``difference`` = mean effect with - without (Welch t
    interval), ``p`` Mann--Whitney's two-sided test of the two groups' effects, ``p_adj`` adjusted
    over the whole table. Rows sorted by agent, other strategy and p.
    """
    check_adjust(adjust)
    rows: list[dict[str, Any]] = []
    params = [
        c
        for c in effects.columns
        if c not in {"agent", "against", "scenario", "unit", "pairs", "effect", "sign"}
    ]
    for (agent, other), g in effects.groupby(["agent", "against"], sort=True):
        if not g["effect"].to_numpy(dtype=float).any():
            continue
        feats = features.reindex(g["scenario"].to_numpy()).reset_index(drop=True)
        for p in params:
            for value in sorted(g[p].dropna().unique()):
                feats[f"{p} = {value}"] = (g[p] == value).to_numpy()
        effect = g["effect"].to_numpy(dtype=float)
        sign = g["sign"].to_numpy()
        for feature in feats.columns:
            has = feats[feature].fillna(False).to_numpy(dtype=bool)
            n_with, n_without = int(has.sum()), int((~has).sum())
            if n_with < min_group or n_without < min_group:
                continue
            a, b = effect[has], effect[~has]
            diff, lo, hi = _welch(a, b, confidence)
            same = np.all(effect == effect[0])
            pvalue = 1.0 if same else float(stats.mannwhitneyu(a, b, alternative="two-sided").pvalue)
            rows.append({"agent": agent, "against": other, "feature": feature,
                         "n_with": n_with, "help_with": float(np.mean(sign[has] == "help")),
                         "hurt_with": float(np.mean(sign[has] == "hurt")), "mean_with": float(a.mean()),
                         "n_without": n_without, "help_without": float(np.mean(sign[~has] == "help")),
                         "hurt_without": float(np.mean(sign[~has] == "hurt")),
                         "mean_without": float(b.mean()), "difference": diff, "lo": lo, "hi": hi,
                         "p": pvalue})  # fmt: skip
    out = pd.DataFrame(rows, columns=list(FEATURE_COLUMNS[:-1]))
    out["p_adj"] = adjust_pvalues(out["p"].to_numpy(dtype=float), adjust) if len(out) else []
    return out.sort_values(["agent", "against", "p", "feature"], kind="stable").reset_index(drop=True)
