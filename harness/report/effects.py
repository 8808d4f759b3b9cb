"""Per-scenario effects of readable errors, and which scenario features go with their sign.

The strategy comparison (:mod:`harness.report.stats`) pools: "is_error beats collapse by 0.10
over these 200 scenarios". A pooled mean hides how the effect is spread: a small gain everywhere
and a large gain in a few scenarios with losses elsewhere pool alike. This module keeps the
scenario as the unit and looks at each one:

* **The effect in one scenario** is the paired difference in success, Δ = the other strategy
  minus readable errors (``baseline``, is_error), over the seeds both ran (the fault schedule
  depends on scenario and seed only, so a pair differs only in how the failure was encoded): the
  same sign convention as the comparison's Δ (strategy − baseline). A swept parameter (``--set``)
  and a host or era the run varies are factors *within* a scenario: :func:`scenario_effects`
  gives one row per scenario and value (a *unit*), :func:`per_scenario_effects` averages a
  scenario's units into its one effect (over its seeds and swept values), and every statistic
  across scenarios rests on that one number per scenario: the scenario is the cluster, however
  many values were swept.
* **The headline** is the mean per-scenario effect with its t interval and the t test of the
  same model (:func:`effect_shares`, through
  :func:`harness.report.inference.scenario_difference`); Wilcoxon's signed rank stays beside it
  as ``p_wilcoxon``. **Shares** count scenarios by their estimated effect against a stated
  minimum (``min_effect``, default :data:`MIN_EFFECT`): ``help`` when Δ ≤ −min_effect (readable
  errors do better), ``hurt`` when Δ ≥ +min_effect, ``none`` in between. Counting every scenario
  where any seed disagreed would make the shares grow with the number of seeds (a scenario whose
  effect is 0.02 shows a disagreeing seed sooner or later); against a minimum they estimate a
  property of the scenarios.
* **Features** come from the scenario itself (:func:`scenario_features`), so they mean the same
  for a hand-written scenario and a sampled one: which fault kinds strike, which message
  qualities they carry, whether a subgoal has an alternative tool, whether the tool list changes,
  the step budget (split at the median over the run's scenarios) and, for a sampled scenario,
  its family.
* **Which features go with the sign** (:func:`feature_table`): for each feature, the scenarios
  with it against those without: the shares that help and hurt in each group, and the
  difference of their mean effects with a permutation test (relabel which scenarios have the
  feature) and the interval that inverts the same test (one model, so the interval excludes 0
  exactly when p < 0.05), Mann--Whitney beside it. p-values adjusted over the whole table.
  These are associations across scenarios, one feature at a time: features that travel together
  (a family draws several at once) are not told apart, which the docs say where the table is
  shown.
* **Where the sign turns** (:func:`group_table`, :func:`value_table`, :func:`sign_warnings`): the
  mean effect per family and per value of each within-scenario factor, the values compared
  paired by scenario against the first, and a warning when one group's interval lies below 0
  and another's above ("the sign depends on family: ...").
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from harness.faults.kinds import FAULT_KIND_TABLE
from harness.report.inference import (
    CLUSTER,
    CONFIDENCE,
    MIN_EFFECT,
    adjust_pvalues,
    check_adjust,
    cluster_t_interval,
    cluster_t_test,
    paired_groups,
    param_columns,
    per_scenario_pairs,
    scenario_difference,
    sign_of,
)
from harness.scenarios.family import source_family
from harness.scenarios.scenario import Scenario
from harness.worlds.scenario import load_source

BASELINE = "is_error"
AGAINST: tuple[str, ...] = ("collapse", "masked")
"""The strategies readable errors are measured against by default: both hide the reason."""

SIGNS: tuple[str, ...] = ("help", "none", "hurt")
"""Readable errors help (Δ = other − readable ≤ −min_effect), make no difference that large, or
hurt (Δ ≥ +min_effect)."""


MIN_GROUP = 5
"""A feature is tested only when at least this many scenarios have it and this many lack it."""

FACTOR_KEYS: tuple[str, ...] = ("host", "era")
"""Key columns that, when a run has more than one value, are factors within a scenario like a
swept parameter: every scenario meets each value on the same seeds."""

NO_FAMILY = "(none)"
"""The family of a scenario that was not sampled from one (hand-written, or a file)."""

EFFECT_COLUMNS: tuple[str, ...] = ("agent", "against", "unit", "pairs", "effect", "sign")
UNIT_COLUMNS: tuple[str, ...] = (
    "against", "scenario", "unit", "pairs", "base_only", "other_only", "effect", "sign",
)  # fmt: skip
"""The columns of :func:`scenario_effects` after ``agent`` and the factors."""
SHARE_COLUMNS: tuple[str, ...] = (
    "agent", "against", "scenarios", "help", "none", "hurt",
    "mean_effect", "lo", "hi", "test", "p", "p_adj",
    "n_clusters", "n_units", "seeds_min", "seeds_max", "min_effect", "ci_method", "rank_test", "p_wilcoxon",
)  # fmt: skip
FEATURE_COLUMNS: tuple[str, ...] = (
    "agent", "against", "feature", "n_with", "help_with", "hurt_with", "mean_with",
    "n_without", "help_without", "hurt_without", "mean_without", "difference", "lo", "hi", "p", "p_adj",
    "test", "p_mannwhitney", "note",
)  # fmt: skip
GROUP_COLUMNS: tuple[str, ...] = (
    "agent", "against", "by", "group", "scenarios", "help", "none", "hurt", "mean_effect", "lo", "hi",
    "ci_method", "test", "p", "p_adj",
)  # fmt: skip
VALUE_COLUMNS: tuple[str, ...] = (
    *GROUP_COLUMNS, "reference", "paired", "vs_reference", "vs_lo", "vs_hi", "p_vs", "p_vs_adj",
)  # fmt: skip


def factor_columns(df: pd.DataFrame) -> list[str]:
    """The within-scenario factors of a session table: swept parameters, and host and era when the
    run has more than one of them."""
    keys = [c for c in FACTOR_KEYS if c in df.columns and df[c].nunique(dropna=False) > 1]
    return [*keys, *param_columns(df)]


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
    for text_source in _text_sources(scenario):
        out[f"source:{text_source}"] = True
    return out


def _text_sources(scenario: Scenario) -> list[str]:
    """Where the texts of the scenario's speaking faults come from (harness.faults.sources), sorted."""
    return sorted(
        {r.source for r in scenario.faults if FAULT_KIND_TABLE[r.kind].raises and r.said != "absent"}
    )


def scenario_text_sources(
    scenarios: Sequence[str], sources: Mapping[str, str] | None = None
) -> dict[str, str]:
    """Each scenario's text source: the one its speaking faults share, ``mixed`` when they differ,
    ``none`` when no fault speaks."""
    sources = sources or {}
    out: dict[str, str] = {}
    for name in scenarios:
        found = _text_sources(load_source(sources.get(name, name), ()))
        out[name] = found[0] if len(found) == 1 else "mixed" if found else "none"
    return out


def scenario_reading(df: pd.DataFrame, baseline: str = BASELINE) -> dict[str, str]:
    """Whether the agent read anything in the scenario's readable errors: ``read`` when a session
    under ``baseline`` took something from an error text that it acted on (``messages_read``),
    else ``not read``. Decided by what happened in the sessions (after the strategy was given), so
    a table split by it describes, it does not compare like with like."""
    if "messages_read" not in df.columns:
        return {}
    base = df[df["strategy"] == baseline]
    read = base.groupby("scenario")["messages_read"].max()
    return {str(name): ("read" if value > 0 else "not read") for name, value in read.items()}


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
    df: pd.DataFrame,
    *,
    baseline: str = BASELINE,
    against: Sequence[str] = AGAINST,
    min_effect: float = MIN_EFFECT,
) -> pd.DataFrame:
    """The effect of readable errors in each unit: one row per agent, other strategy, scenario and
    value of each within-scenario factor (:func:`factor_columns`).

    Columns ``agent``, the factors, ``against``, ``scenario``, ``unit`` (the scenario and its
    values, as text), ``pairs``, ``base_only``, ``other_only``, ``effect`` and ``sign``
    (:func:`sign_of` with ``min_effect``). ``effect`` = Δ, the mean over the paired seeds of
    success under ``against`` minus success under ``baseline`` (strategy − baseline, as the
    comparison's Δ). A run with no factor has one unit per scenario.
    """
    factors = factor_columns(df)
    _, paired = paired_groups(df, baseline=baseline, by=("agent", *factors), group_params=False)
    rows: list[dict[str, Any]] = []
    for head, pairs in paired:
        other = head.pop("strategy")
        if other not in against:
            continue
        per = per_scenario_pairs(pairs)
        columns = (per[c].tolist() for c in ("pairs", "base_only", "other_only", "delta"))
        for scenario, n, base_only, other_only, delta in zip(per.index, *columns, strict=True):
            effect = float(delta)  # other - base: the comparison's convention
            label = str(scenario) + "".join(f" [{p}={head[p]}]" for p in factors)
            rows.append({**head, "against": other, "scenario": scenario, "unit": label,
                         "pairs": int(n), "base_only": int(base_only), "other_only": int(other_only),
                         "effect": effect, "sign": sign_of(effect, min_effect)})  # fmt: skip
    return pd.DataFrame(rows, columns=["agent", *factors, *UNIT_COLUMNS])


SCENARIO_COLUMNS: tuple[str, ...] = (
    "agent", "against", "scenario", "units", "seeds_min", "seeds_max", "pairs", "base_only", "other_only",
    "effect", "sign",
)  # fmt: skip


def per_scenario_effects(effects: pd.DataFrame, *, min_effect: float = MIN_EFFECT) -> pd.DataFrame:
    """One row per agent, other strategy and scenario: the scenario's effect over all its units.

    ``effect`` = (Σ other_only − Σ base_only) / Σ pairs over the scenario's units: the mean
    paired difference over its seeds and swept values (with equal seeds per value, the mean of
    its units' effects). ``units`` counts them; ``seeds_min``/``seeds_max`` the pairs per unit
    (the seeds of one scenario and value). ``sign`` is :func:`sign_of` the effect.
    """
    if effects.empty:
        return pd.DataFrame(columns=list(SCENARIO_COLUMNS))
    grouped = effects.groupby(["agent", "against", "scenario"], sort=True)
    out = grouped.agg(
        units=("pairs", "size"), seeds_min=("pairs", "min"), seeds_max=("pairs", "max"),
        pairs=("pairs", "sum"), base_only=("base_only", "sum"), other_only=("other_only", "sum"),
    ).reset_index()  # fmt: skip
    out["effect"] = (out["other_only"] - out["base_only"]) / out["pairs"]
    out["sign"] = [sign_of(float(e), min_effect) for e in out["effect"]]
    return out[list(SCENARIO_COLUMNS)]


def _as_per(frame: pd.DataFrame) -> pd.DataFrame:
    """Per-scenario rows in the form :func:`~harness.report.inference.scenario_difference` takes."""
    return pd.DataFrame(
        {
            "pairs": frame["pairs"].to_numpy(dtype=float),
            "base_only": frame["base_only"].to_numpy(dtype=float),
            "other_only": frame["other_only"].to_numpy(dtype=float),
            "net": (frame["other_only"] - frame["base_only"]).to_numpy(dtype=float),
            "delta": frame["effect"].to_numpy(dtype=float),
        }
    )


def _summary(frame: pd.DataFrame, confidence: float, *, wilcoxon: bool = False) -> dict[str, Any]:
    """The mean effect of per-scenario rows (each scenario weighs the same), its interval and test."""
    found = scenario_difference(_as_per(frame), confidence=confidence, equal_weights=True, wilcoxon=wilcoxon)
    counts = frame["sign"].value_counts()
    return {"scenarios": len(frame), **{s: int(counts.get(s, 0)) for s in SIGNS},
            "mean_effect": float(frame["effect"].mean()), "lo": found["diff_lo"], "hi": found["diff_hi"],
            "ci_method": found["diff_ci_method"], "test": found["test"], "p": found["p"],
            "rank_test": found["rank_test"], "p_wilcoxon": found["p_wilcoxon"]}  # fmt: skip


def _ensure_scenarios(effects: pd.DataFrame, min_effect: float | None) -> pd.DataFrame:
    """Per-scenario rows from unit rows (:func:`scenario_effects`) or per-scenario rows as given."""
    if "units" in effects.columns:
        if min_effect is None:
            return effects
        return effects.assign(sign=[sign_of(float(e), min_effect) for e in effects["effect"]])
    return per_scenario_effects(effects, min_effect=MIN_EFFECT if min_effect is None else min_effect)


def effect_shares(
    effects: pd.DataFrame,
    *,
    adjust: str = "holm",
    confidence: float = CONFIDENCE,
    min_effect: float | None = None,
) -> pd.DataFrame:
    """Per agent and other strategy: the mean effect over scenarios, and the shares it helps and hurts.

    ``effects`` is :func:`scenario_effects` (units, aggregated here into scenarios) or
    :func:`per_scenario_effects`; ``min_effect`` (default: the signs as given, or
    :data:`MIN_EFFECT` for units) sets the signs. ``mean_effect`` is the mean of the
    per-scenario effects (every scenario weighs the same) with its t interval over scenarios
    and the t test of the same model (``test`` ``t``); when every scenario has the same effect,
    Tango's interval and its score test (``score``), as :func:`harness.report.stats.compare`
    gives such a row. ``p_adj`` is adjusted over the table's rows; ``rank_test``/``p_wilcoxon``
    Wilcoxon's signed rank (or the sign) test, secondary. ``n_clusters`` = ``scenarios`` (the
    cluster is the scenario), ``n_units`` the (scenario, value) units behind them,
    ``seeds_min``/``seeds_max`` the seeds per unit.
    """
    check_adjust(adjust)
    per = _ensure_scenarios(effects, min_effect)
    shown_min = MIN_EFFECT if min_effect is None else min_effect
    rows: list[dict[str, Any]] = []
    for (agent, other), g in per.groupby(["agent", "against"], sort=True):
        rows.append({"agent": agent, "against": other, **_summary(g, confidence, wilcoxon=True),
                     "n_clusters": len(g),
                     "n_units": int(g["units"].sum()), "seeds_min": int(g["seeds_min"].min()),
                     "seeds_max": int(g["seeds_max"].max()), "min_effect": shown_min})  # fmt: skip
    out = pd.DataFrame(rows, columns=[c for c in SHARE_COLUMNS if c != "p_adj"])
    out.insert(SHARE_COLUMNS.index("p_adj"), "p_adj", adjust_pvalues(out["p"].to_numpy(dtype=float), adjust))
    return out[list(SHARE_COLUMNS)]


def seeds_label(seeds_min: int, seeds_max: int) -> str:
    """``5`` when every unit has 5 seeds, ``3–7`` when they vary."""
    return str(seeds_min) if seeds_min == seeds_max else f"{seeds_min}–{seeds_max}"


N_PERMUTATIONS = 20000
"""Random relabellings behind each feature row's permutation test and interval."""


def _welch(a: np.ndarray[Any, Any], b: np.ndarray[Any, Any], confidence: float) -> tuple[float, float, float]:
    """Difference of means a - b with Welch's t interval; (diff, lo, hi). Not used by the feature
    table any more (see :func:`permutation_difference`); kept as the reference it was checked
    against."""
    diff = float(a.mean() - b.mean())
    va, vb = a.var(ddof=1) / len(a), b.var(ddof=1) / len(b)
    se = math.sqrt(va + vb)
    if se == 0:
        return diff, diff, diff
    dof = (va + vb) ** 2 / ((va**2 / (len(a) - 1) if va else 0.0) + (vb**2 / (len(b) - 1) if vb else 0.0))
    half = float(stats.t.ppf(0.5 + confidence / 2, dof)) * se
    return diff, diff - half, diff + half


def permutation_orders(n: int, rng: np.random.Generator, n_permutations: int = N_PERMUTATIONS) -> Any:
    """``n_permutations`` random orders of ``n`` scenarios (one per row): a relabelling gives the
    feature to the first k scenarios of a row. One draw serves every feature of a table section,
    whatever its group size k."""
    return np.argsort(rng.random((n_permutations, n)), axis=1)


def permutation_difference(
    effect: np.ndarray[Any, Any],
    has: np.ndarray[Any, Any],
    orders: np.ndarray[Any, Any],
    confidence: float = CONFIDENCE,
) -> tuple[float, float, float, float]:
    """Difference of mean effects with the feature minus without, its permutation test and the
    interval that inverts it: (diff, lo, hi, p).

    The test relabels which scenarios have the feature (as many as have it: the first of each row
    of ``orders``, :func:`permutation_orders`): p = (1 + #{|T*| >= |T|}) / (1 + permutations), T the observed
    difference of means and T* a relabelled one. Its null is that the feature has nothing to do
    with the effect (the scenarios' effects are exchangeable between the groups), which is what a
    row claims; it needs no normal approximation, so a small group that happens to show no
    spread (six scenarios whose effects are all 0) is judged by how often six scenarios drawn at
    random show a mean that far from the rest, not as a mean known exactly.

    The interval is the set of shifts d that the same test, with the same relabellings, does not
    reject when d is taken off the effects with the feature: [lo, hi] holds 0 exactly when
    p >= 1 - ``confidence``. Bounds are found by bisection and kept within [-2, 2] (effects lie
    in [-1, 1]). When both groups' effects are each all equal there is no spread to shift
    against (every shift but the observed one gives the same p): no interval (NaNs).
    """
    x = np.asarray(effect, dtype=float)
    h = np.asarray(has, dtype=bool)
    n_a, n_b = int(h.sum()), int((~h).sum())
    a, b = x[h], x[~h]
    diff = float(a.mean() - b.mean())
    picked = orders[:, :n_a]  # the relabelled "with" group of each permutation
    total = float(x.sum())
    with_sum = x[picked].sum(axis=1)
    t_star = with_sum / n_a - (total - with_sum) / n_b
    k = h[picked].sum(axis=1).astype(float)
    c = k / n_a - (n_a - k) / n_b
    tol = 1e-9

    def pvalue(d: float) -> float:
        observed = abs(diff - d)
        hits = int(np.sum(np.abs(t_star - d * c) >= observed - tol))
        return (1 + hits) / (1 + len(t_star))

    p = pvalue(0.0)
    if np.ptp(a) == 0 and np.ptp(b) == 0:
        return diff, math.nan, math.nan, p
    alpha = 1 - confidence

    def bound(far: float) -> float:
        inside, outside = diff, far
        if (far < diff and diff > 0.0) or (far > diff and diff < 0.0):  # 0 lies on this side
            if pvalue(0.0) < alpha:
                outside = 0.0
            else:
                inside = 0.0
        if pvalue(outside) >= alpha:
            return outside
        for _ in range(60):
            mid = (inside + outside) / 2
            if pvalue(mid) >= alpha:
                inside = mid
            else:
                outside = mid
            if abs(outside - inside) < 1e-6:
                break
        return inside

    return diff, bound(-2.0), bound(2.0), p


def _degenerate_note(a: np.ndarray[Any, Any], b: np.ndarray[Any, Any]) -> str:
    if np.ptp(a) == 0 and np.ptp(b) == 0:
        return (f"every scenario with it has effect {a[0]:+.2f} and every one without {b[0]:+.2f}: "
                "no spread to shift against, no interval")  # fmt: skip
    return ""


def feature_table(
    effects: pd.DataFrame,
    features: pd.DataFrame,
    *,
    adjust: str = "holm",
    min_group: int = MIN_GROUP,
    confidence: float = CONFIDENCE,
    min_effect: float | None = None,
    seed: int = 0,
    n_permutations: int = N_PERMUTATIONS,
) -> pd.DataFrame:
    """For each agent, other strategy and feature: the effects of scenarios with it against without.

    ``effects`` as :func:`effect_shares` takes it: the unit is the scenario (a swept value is not
    a feature here: it varies within a scenario, and :func:`value_table` compares its values
    paired). Only (agent, other) pairs where some scenario's effect is not zero are tested
    (where readable errors never matter no feature can tell when they do), and only features
    with at least ``min_group`` scenarios on each side. ``difference`` = mean effect with -
    without; ``p`` its permutation test and ``lo``/``hi`` the interval that inverts the same
    test (``test`` ``permutation``; :func:`permutation_difference`), so the interval excludes 0
    exactly when p < 0.05; when both sides' effects are each all equal there is no interval and
    ``note`` says so. ``p_mannwhitney`` is Mann--Whitney's two-sided test, secondary. ``p_adj``
    adjusted over the whole table. The relabellings come from
    :func:`harness.report.inference.rng_for` (``seed``, agent, other strategy), so a row does
    not depend on the order of the rows or on the other agents. Rows sorted by agent, other
    strategy and p.
    """
    from harness.report.inference import rng_for

    check_adjust(adjust)
    per = _ensure_scenarios(effects, min_effect)
    rows: list[dict[str, Any]] = []
    for (agent, other), g in per.groupby(["agent", "against"], sort=True):
        effect = g["effect"].to_numpy(dtype=float)
        if not effect.any():
            continue
        feats = features.reindex(g["scenario"].to_numpy()).reset_index(drop=True)
        sign = g["sign"].to_numpy()
        orders = permutation_orders(len(effect), rng_for(seed, "features", agent, other), n_permutations)
        for feature in feats.columns:
            has = feats[feature].astype("boolean").fillna(False).to_numpy(dtype=bool)
            n_with, n_without = int(has.sum()), int((~has).sum())
            if n_with < min_group or n_without < min_group:
                continue
            a, b = effect[has], effect[~has]
            diff, lo, hi, p_perm = permutation_difference(effect, has, orders, confidence)
            same = np.all(effect == effect[0])
            p_mw = 1.0 if same else float(stats.mannwhitneyu(a, b, alternative="two-sided").pvalue)
            rows.append({"agent": agent, "against": other, "feature": feature,
                         "n_with": n_with, "help_with": float(np.mean(sign[has] == "help")),
                         "hurt_with": float(np.mean(sign[has] == "hurt")), "mean_with": float(a.mean()),
                         "n_without": n_without, "help_without": float(np.mean(sign[~has] == "help")),
                         "hurt_without": float(np.mean(sign[~has] == "hurt")),
                         "mean_without": float(b.mean()), "difference": diff, "lo": lo, "hi": hi,
                         "p": p_perm, "test": "permutation", "p_mannwhitney": p_mw,
                         "note": _degenerate_note(a, b)})  # fmt: skip
    out = pd.DataFrame(rows, columns=[c for c in FEATURE_COLUMNS if c != "p_adj"])
    out.insert(
        FEATURE_COLUMNS.index("p_adj"), "p_adj", adjust_pvalues(out["p"].to_numpy(dtype=float), adjust)
    )
    out = out[list(FEATURE_COLUMNS)]
    return out.sort_values(
        ["agent", "against", "p", "feature"], kind="stable", na_position="last"
    ).reset_index(drop=True)


def scenario_families(scenarios: Sequence[str], sources: Mapping[str, str] | None = None) -> dict[str, str]:
    """Each scenario's family (:func:`harness.scenarios.family.source_family` of its recorded source), or
    :data:`NO_FAMILY` for one not sampled from a family."""
    sources = sources or {}
    out: dict[str, str] = {}
    for name in scenarios:
        source = sources.get(name)
        family = source_family(source) if source is not None else None
        out[name] = family if family is not None else NO_FAMILY
    return out


def group_table(
    effects: pd.DataFrame,
    groups: Mapping[str, str],
    *,
    by: str = "family",
    adjust: str = "holm",
    confidence: float = CONFIDENCE,
    min_effect: float | None = None,
) -> pd.DataFrame:
    """The mean effect per group of scenarios (``groups`` maps a scenario to its group, e.g. its
    family), with the shares, the t interval over the group's scenarios and its t test, as
    :func:`effect_shares` gives the whole; ``by`` names the grouping. Columns :data:`GROUP_COLUMNS`;
    ``p_adj`` adjusted over the table. As in :func:`feature_table`, an (agent, other) pair whose
    every effect is 0 has no rows (nothing can differ between its groups)."""
    check_adjust(adjust)
    per = _ensure_scenarios(effects, min_effect)
    moves = per.groupby(["agent", "against"])["effect"].transform(lambda e: bool(np.any(e.to_numpy() != 0)))
    per = per[moves.astype(bool)]
    per = per.assign(_group=[groups.get(str(s), NO_FAMILY) for s in per["scenario"]])
    grouped = per.groupby(["agent", "against", "_group"], sort=True)
    rows = [{"agent": agent, "against": other, "by": by, "group": group, **_summary(g, confidence)}
            for (agent, other, group), g in grouped]  # fmt: skip
    out = pd.DataFrame(rows, columns=[c for c in GROUP_COLUMNS if c != "p_adj"])
    out["p_adj"] = adjust_pvalues(out["p"].to_numpy(dtype=float), adjust)
    return out[list(GROUP_COLUMNS)]


def value_table(
    effects: pd.DataFrame,
    *,
    adjust: str = "holm",
    confidence: float = CONFIDENCE,
    min_effect: float = MIN_EFFECT,
) -> pd.DataFrame:
    """The mean effect per value of each within-scenario factor, and each value against the first,
    paired by scenario.

    ``effects`` is :func:`scenario_effects` (units). For each factor (a swept parameter, or host
    or era when the run varies it), agent, other strategy and value: the scenarios' effects at
    that value (each scenario's units with that value pooled over the other factors), with the
    shares, the t interval over scenarios and its t test (``group`` is the value as text, ``by``
    the factor). Against the factor's first value (``reference``): per scenario the difference
    of its effect at this value and at the first (``paired`` scenarios have both),
    ``vs_reference`` their mean with the t interval over scenarios and ``p_vs`` its t test
    (NaNs when every scenario's difference is the same). Every row rests on the scenarios, not
    on scenario × value units. p-values adjusted over the table, each column on its own. An
    (agent, other) pair whose every effect is 0 has no rows.
    """
    check_adjust(adjust)
    factors = [c for c in effects.columns if c in FACTOR_KEYS or "." in c]
    rows: list[dict[str, Any]] = []
    for factor in factors:
        values = sorted(effects[factor].dropna().unique(), key=_sort_key)
        if len(values) < 2:
            continue
        for (agent, other), g in effects.groupby(["agent", "against"], sort=True):
            if not g["effect"].to_numpy(dtype=float).any():
                continue
            at = {v: per_scenario_effects(g[g[factor] == v], min_effect=min_effect).set_index("scenario")
                  for v in values}  # fmt: skip
            ref = at[values[0]]
            for value in values:
                here = at[value]
                row = {"agent": agent, "against": other, "by": factor, "group": str(value),
                       **_summary(here.reset_index(), confidence), "reference": str(values[0])}  # fmt: skip
                both = here.index.intersection(ref.index)
                d = (here.loc[both, "effect"] - ref.loc[both, "effect"]).to_numpy(dtype=float)
                row["paired"] = len(both)
                row["vs_reference"] = float(d.mean()) if len(d) else math.nan
                if value == values[0] or len(d) < 2 or np.ptp(d) == 0:
                    row["vs_lo"] = row["vs_hi"] = row["p_vs"] = math.nan
                else:
                    ones = np.ones_like(d)
                    row["vs_lo"], row["vs_hi"] = cluster_t_interval(
                        d, ones, confidence=confidence, bounds=(-2, 2)
                    )
                    row["p_vs"] = cluster_t_test(d, ones)
                rows.append(row)
    out = pd.DataFrame(rows, columns=[c for c in VALUE_COLUMNS if c not in ("p_adj", "p_vs_adj")])
    out["p_adj"] = adjust_pvalues(out["p"].to_numpy(dtype=float), adjust)
    out["p_vs_adj"] = adjust_pvalues(out["p_vs"].to_numpy(dtype=float), adjust)
    return out[list(VALUE_COLUMNS)]


def _sort_key(value: Any) -> tuple[int, Any]:
    return (0, value) if isinstance(value, int | float | np.number) else (1, str(value))


def sign_warnings(table: pd.DataFrame) -> list[str]:
    """One line per agent, other strategy and grouping whose groups disagree on the sign of the effect.

    ``table`` is :func:`group_table` or :func:`value_table`. A group's sign is determined when its
    95 % interval excludes 0: below 0 (readable errors help) or above (they hurt). When one group
    of a grouping is determined below 0 and another above, the sign depends on the grouping:
    ``reader vs collapse: the sign depends on family: a -0.12 [-0.18, -0.06], b +0.08 [+0.05, +0.11]``
    (the determined groups, in the table's order). Groups whose interval holds 0 are not
    evidence of a reversal and are left out of the line.
    """
    lines: list[str] = []
    if table.empty:
        return lines
    for (agent, other, by), g in table.groupby(["agent", "against", "by"], sort=False):
        below = g[g["hi"] < 0]
        above = g[g["lo"] > 0]
        if below.empty or above.empty:
            continue
        shown = g[(g["hi"] < 0) | (g["lo"] > 0)]
        parts = [f"{r.group} {r.mean_effect:+.2f} [{r.lo:+.2f}, {r.hi:+.2f}]" for r in shown.itertuples()]
        lines.append(f"{agent} vs {other}: the sign depends on {by}: {', '.join(parts)}")
    return lines
