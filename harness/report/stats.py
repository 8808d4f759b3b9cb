"""Strategy comparison with honest statistics, from a session table.

Per group (``by`` columns, plus any swept parameter) and strategy:

* ``success_rate`` with a 95% bootstrap interval (scipy.stats.bootstrap, percentile);
* ``pass_k``: for each task (scenario, agent, strategy, host, params) over its
  seeds, C(c, k) / C(n, k) -- the chance that k trials all succeed, as tau-bench
  defines it -- averaged over the group's tasks;
* ``recovery_rate`` = recoveries / recovery opportunities (a ratio of sums, with a
  paired bootstrap interval); ``steps_to_recover`` (mean over recoveries);
  ``repeated_failing_calls`` per session; ``wedged_share``;
* against the baseline strategy, on identical (scenario, agent, host, seed,
  params) pairs only: the success difference with a bootstrap interval, and
  McNemar's exact test (a binomial test on the discordant pairs).

Resampling uses a Generator seeded from ``seed``, over the sessions in key order,
so the same sessions give the same intervals in whatever order their rows come.

That is the table of ``compare(df)`` with no ``unit``, kept as it was for existing callers:
it resamples sessions as if they were independent. Given ``unit="scenario"`` or
``unit="session"`` the unit of inference is explicit (see :mod:`harness.report.inference`):
intervals over scenarios (a cluster-robust t interval) or over sessions (the bootstrap),
exact intervals for single-scenario rows, the paired difference counted by scenario, a test
across scenarios, and p-values adjusted over the table; each row then carries ``unit``,
``n_clusters``, ``p`` and ``p_adjusted``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
from scipy.special import comb

from harness.batch.grid import KEY_COLUMNS
from harness.report import inference
from harness.report.display import number, p_value, rate_interval, signed_interval
from harness.report.display import to_markdown as to_markdown
from harness.report.inference import CONFIDENCE, MIN_EFFECT, N_RESAMPLES, Adjust, Unit

TASK_COLUMNS: tuple[str, ...] = ("scenario", "agent", "strategy", "host")


def param_columns(df: pd.DataFrame) -> list[str]:
    """Swept-parameter columns (``--set key=...`` records the key as a column)."""
    return inference.param_columns(df)


def _mean(x: np.ndarray[Any, Any], axis: int = -1) -> Any:
    return np.mean(x, axis=axis)


def _ratio(num: np.ndarray[Any, Any], den: np.ndarray[Any, Any], axis: int = -1) -> Any:
    total = np.sum(den, axis=axis)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(total > 0, np.sum(num, axis=axis) / np.where(total > 0, total, 1), np.nan)


def pass_hat_k(successes: int, trials: int, k: int) -> float:
    """tau-bench's pass^k estimate: C(c, k) / C(n, k); NaN when n < k."""
    if trials < k or k < 1:
        return math.nan
    return float(comb(successes, k, exact=True) / comb(trials, k, exact=True))


def mcnemar(base: np.ndarray[Any, Any], other: np.ndarray[Any, Any]) -> tuple[int, int, float]:
    """McNemar's exact test on paired booleans: (base-only, other-only, two-sided p)."""
    return inference.mcnemar_exact(base, other)


def compare(
    df: pd.DataFrame,
    *,
    by: Sequence[str] = ("agent",),
    baseline: str = "is_error",
    k: int = 3,
    seed: int = 0,
    group_params: bool = True,
    unit: Unit | None = None,
    adjust: Adjust = "holm",
    n_resamples: int = N_RESAMPLES,
    confidence: float = CONFIDENCE,
    min_effect: float = MIN_EFFECT,
) -> pd.DataFrame:
    """One row per group and strategy; see the module docstring for the columns.

    Swept parameters are groups of their own unless ``group_params`` is False,
    in which case sessions are pooled across them (pairs still match on them).

    ``unit`` is the unit of inference. None (the default) gives the table as it was before
    it could be chosen: every interval a bootstrap over sessions, even of a constant, and
    McNemar's p unadjusted; ``adjust`` is then ignored. ``"scenario"``: intervals of pooled
    rows are t intervals over scenarios with the cluster-robust standard error (paired
    within scenario for the difference; :func:`harness.report.inference.cluster_t_interval`),
    ``p`` is the interval's own test (``t``: the t test of the same ratio with the same
    cluster-robust standard error, so the interval excludes 0 exactly when p < 0.05; ``score``
    where the interval is Tango's), with Wilcoxon's signed-rank test (or the sign test) over
    the per-scenario mean differences beside it (``rank_test``, ``p_wilcoxon``). The cluster is
    the scenario whatever the grouping: with ``group_params`` False a scenario's sessions under
    every swept value are one cluster, not one per value. ``"session"``: intervals of pooled
    rows resample sessions (pairs for the difference), ``p`` is McNemar's exact test over the
    pairs. With either unit a row from a single scenario gets exact intervals (Clopper--Pearson
    for success and recovery, Tango's score interval for the difference) and McNemar's p; every
    row gains ``unit``,
    ``n_clusters`` (scenarios, or sessions at unit "session"), ``success_ci_method``,
    ``diff_ci_method``, ``n_favour_base``, ``n_tie``, ``n_favour_other`` (scenarios whose
    mean difference is below, at, above 0), ``test``, ``p``, ``p_adjusted`` (``adjust``
    over every p of the table: "holm", "bh" or "none") and ``adjust``, and ``n_help``,
    ``n_none``, ``n_hurt`` (scenarios whose difference is at most −``min_effect``, between, at
    least +``min_effect``: the counts ``harness effects`` gives) and ``min_effect``. A pooled
    row's difference at unit "scenario" is the mean of its scenarios' differences, each
    scenario weighing the same (:func:`harness.report.inference.paired_summary`). Each bootstrap then
    draws from :func:`harness.report.inference.rng_for` (``seed`` and the row), so a group's
    intervals do not depend on the other groups. ``n_resamples`` and ``confidence`` apply to
    every interval.
    """
    if df.empty:
        raise ValueError("no sessions to compare")
    judged, broke = inference.split_harness_errors(df)
    if judged.empty:
        out = pd.DataFrame()
    elif unit is not None:
        out = _compare_by_unit(
            judged, by=by, baseline=baseline, k=k, seed=seed, group_params=group_params, unit=unit,
            adjust=adjust, n_resamples=n_resamples, confidence=confidence, min_effect=min_effect,
        )  # fmt: skip
    else:
        out = _compare_sessions(
            judged, by=by, baseline=baseline, k=k, seed=seed, group_params=group_params,
            n_resamples=n_resamples, confidence=confidence,
        )  # fmt: skip
    out = _count_harness_errors(out, df, broke, by=by, group_params=group_params)
    if judged.empty:  # every session broke: the rows say so, with no rate to show
        for col in _EMPTY_METRICS:
            out[col] = math.nan
        if unit is not None:
            out["unit"], out["adjust"], out["test"], out["min_effect"] = unit, adjust, None, min_effect
            out["n_clusters"] = out["n_favour_base"] = out["n_tie"] = out["n_favour_other"] = 0
            out["n_help"] = out["n_none"] = out["n_hurt"] = 0
    return out


_EMPTY_METRICS = (
    "success_rate", "success_lo", "success_hi", "pass_k", "wedged_share", "success_diff", "diff_lo",
    "diff_hi", "mcnemar_p", "p_wilcoxon", "p", "p_adjusted",
)  # fmt: skip
"""The metric columns of a table whose every session broke (NaN: nothing was judged)."""


def _count_harness_errors(
    out: pd.DataFrame, df: pd.DataFrame, broke: pd.DataFrame, *, by: Sequence[str], group_params: bool
) -> pd.DataFrame:
    """Each row's ``harness_errors`` (sessions of the cell that broke and are left out of ``n``),
    and a row of its own (``n`` 0) for a cell whose every session broke."""
    for col in by:
        if col not in df.columns:
            raise KeyError(col)
    params = param_columns(df)
    groups = [*by, *[p for p in params if p not in by and group_params]]
    cell = [*groups, "strategy"]
    counts: dict[tuple[Any, ...], int] = {}
    if len(broke):
        for key, size in broke.groupby(cell, dropna=False, sort=True).size().items():
            counts[key if isinstance(key, tuple) else (key,)] = int(size)
    seen = [tuple(v) for v in out[cell].itertuples(index=False, name=None)] if len(out) else []
    missing = [dict(zip(cell, key, strict=True)) for key in counts if key not in set(seen)]
    if missing:
        empty = pd.DataFrame(missing).assign(n=0, n_pairs=0)
        if "n_clusters" in out.columns:
            empty["n_clusters"] = 0
        out = pd.concat([out, empty], ignore_index=True) if len(out) else empty
        out = _in_order(out, groups)
        seen = [tuple(v) for v in out[cell].itertuples(index=False, name=None)]
    errors = np.array([counts.get(key, 0) for key in seen], dtype=np.int64)
    out["harness_errors"] = errors
    total = out["n"].to_numpy(dtype=float) + errors
    out["harness_error_share"] = np.divide(errors, total, out=np.zeros_like(total), where=total > 0)
    return out


def _compare_sessions(
    df: pd.DataFrame,
    *,
    by: Sequence[str],
    baseline: str,
    k: int,
    seed: int,
    group_params: bool,
    n_resamples: int,
    confidence: float,
) -> pd.DataFrame:
    """The table with every interval a bootstrap over sessions (``unit=None``)."""
    for col in by:
        if col not in df.columns:
            raise KeyError(col)
    params = param_columns(df)
    groups = [*by, *[p for p in params if p not in by and group_params]]
    rng = np.random.default_rng(seed)
    df = df.copy()
    df["success"] = df["success"].fillna(False).astype(bool)
    for col in ("recoveries", "recovery_opportunities", "repeated_failing_calls"):
        if col in df.columns:
            df[col] = pd.to_numeric(df[col], errors="coerce").fillna(0)
    pair_cols = [c for c in [*KEY_COLUMNS, *params] if c != "strategy" and c in df.columns]
    task_cols = [c for c in [*TASK_COLUMNS, *params] if c in df.columns]
    # Rows arrive in whatever order they were written (workers finish when they finish; a
    # resumed run appends the rest). Resampling draws positions, so the sessions are put in
    # key order first: every interval is then a function of the sessions alone.
    key_cols = [c for c in [*KEY_COLUMNS, *params] if c in df.columns]
    df = df.sort_values(key_cols, kind="stable", na_position="last").reset_index(drop=True)

    rows: list[dict[str, Any]] = []
    grouped = df.groupby(groups, dropna=False, sort=True) if groups else [((), df)]
    for gkey, gdf in grouped:
        gvals = gkey if isinstance(gkey, tuple) else (gkey,)
        base_df = gdf[gdf["strategy"] == baseline].set_index(pair_cols)
        for strategy, sdf in gdf.groupby("strategy", sort=False):
            row: dict[str, Any] = dict(zip(groups, gvals, strict=True))
            row["strategy"] = strategy
            row["n"] = len(sdf)
            succ = sdf["success"].to_numpy(dtype=float)
            row["success_rate"] = float(succ.mean())
            row["success_lo"], row["success_hi"] = inference.percentile_interval(
                [succ], _mean, rng, n_resamples, confidence
            )
            per_task = sdf.groupby(task_cols, dropna=False)["success"].agg(["sum", "count"])
            passes = [pass_hat_k(int(s), int(n), k) for s, n in per_task.itertuples(index=False, name=None)]
            row["pass_k"] = float(np.nanmean(passes)) if not all(math.isnan(p) for p in passes) else math.nan
            if "recoveries" in sdf.columns and "recovery_opportunities" in sdf.columns:
                rec = sdf["recoveries"].to_numpy(dtype=float)
                opp = sdf["recovery_opportunities"].to_numpy(dtype=float)
                row["recovery_rate"] = float(_ratio(rec, opp))
                # Sessions without an opportunity add nothing to either sum; leaving them out keeps
                # every resample's denominator positive.
                met = opp > 0
                row["recovery_lo"], row["recovery_hi"] = (
                    inference.percentile_interval([rec[met], opp[met]], _ratio, rng, n_resamples, confidence)
                    if met.any()
                    else (math.nan, math.nan)
                )
            if "recover_steps" in sdf.columns:
                steps = [s for lst in sdf["recover_steps"] if lst is not None for s in lst]
                row["steps_to_recover"] = float(np.mean(steps)) if steps else math.nan
            if "repeated_failing_calls" in sdf.columns:
                row["repeated_failing_calls"] = float(sdf["repeated_failing_calls"].mean())
            row["wedged_share"] = float((sdf["status"] == "wedged").mean())
            row["harness_error_share"] = float((sdf["status"] == "harness_error").mean())
            row.update(
                _paired(sdf.set_index(pair_cols), base_df, strategy == baseline, rng, n_resamples, confidence)
            )
            rows.append(row)
    return _in_order(pd.DataFrame(rows), groups)


_STRATEGY_ORDER = {s: i for i, s in enumerate(["is_error", "masked", "collapse", "escape"])}


def _in_order(out: pd.DataFrame, groups: list[str]) -> pd.DataFrame:
    out["_order"] = out["strategy"].map(lambda s: _STRATEGY_ORDER.get(s, len(_STRATEGY_ORDER)))
    return out.sort_values([*groups, "_order"], kind="stable").drop(columns="_order").reset_index(drop=True)


def _pass_k(sdf: pd.DataFrame, task_cols: list[str], k: int) -> float:
    """pass^k of each task over its seeds, averaged over the tasks (NaN if no task has k seeds)."""
    per_task = sdf.groupby(task_cols, dropna=False)["success"].agg(["sum", "count"])
    passes = [pass_hat_k(int(s), int(n), k) for s, n in per_task.itertuples(index=False, name=None)]
    return float(np.nanmean(passes)) if not all(math.isnan(p) for p in passes) else math.nan


_BY_UNIT_READS: tuple[str, ...] = (
    *TASK_COLUMNS,
    "status",
    "recoveries",
    "recovery_opportunities",
    "recover_steps",
    "repeated_failing_calls",
)
"""The columns :func:`_compare_by_unit` reads beside the groups, keys and ``success``."""


def _compare_by_unit(
    df: pd.DataFrame,
    *,
    by: Sequence[str],
    baseline: str,
    k: int,
    seed: int,
    group_params: bool,
    unit: str,
    adjust: str,
    n_resamples: int,
    confidence: float,
    min_effect: float = MIN_EFFECT,
) -> pd.DataFrame:
    inference.check_unit(unit)
    inference.check_adjust(adjust)
    data, groups, pair_cols = inference.prepare(df, by=by, group_params=group_params, keep=_BY_UNIT_READS)
    task_cols = [c for c in [*TASK_COLUMNS, *param_columns(data)] if c in data.columns]
    opts: dict[str, Any] = {"unit": unit, "n_resamples": n_resamples, "confidence": confidence}
    rows: list[dict[str, Any]] = []
    grouped = data.groupby(groups, dropna=False, sort=True) if groups else [((), data)]
    for gkey, gdf in grouped:
        gvals = gkey if isinstance(gkey, tuple) else (gkey,)
        base_df = gdf[gdf["strategy"] == baseline]
        for strategy, sdf in gdf.groupby("strategy", sort=True):
            row: dict[str, Any] = dict(zip(groups, gvals, strict=True))
            row["strategy"] = strategy
            row["n"] = len(sdf)
            summary = inference.success_summary(
                sdf, rng=inference.rng_for(seed, "success", *gvals, strategy), **opts
            )
            row["n_clusters"] = summary.pop("n_clusters")
            row["unit"] = unit
            row.update(summary)
            row["pass_k"] = _pass_k(sdf, task_cols, k)
            if "recoveries" in sdf.columns and "recovery_opportunities" in sdf.columns:
                row["recovery_rate"] = float(
                    _ratio(
                        sdf["recoveries"].to_numpy(dtype=float),
                        sdf["recovery_opportunities"].to_numpy(dtype=float),
                    )
                )
                row["recovery_lo"], row["recovery_hi"] = inference.recovery_interval(
                    sdf, rng=inference.rng_for(seed, "recovery", *gvals, strategy), **opts
                )
            if "recover_steps" in sdf.columns:
                steps = [s for lst in sdf["recover_steps"] if lst is not None for s in lst]
                row["steps_to_recover"] = float(np.mean(steps)) if steps else math.nan
            if "repeated_failing_calls" in sdf.columns:
                row["repeated_failing_calls"] = float(sdf["repeated_failing_calls"].mean())
            row["wedged_share"] = float((sdf["status"] == "wedged").mean())
            row["harness_error_share"] = float((sdf["status"] == "harness_error").mean())
            if strategy == baseline or base_df.empty:
                row.update(inference.EMPTY_PAIRED)
            else:
                pairs = inference.paired_outcomes(sdf, base_df, pair_cols)
                row.update(
                    inference.paired_summary(
                        pairs, rng=inference.rng_for(seed, "diff", *gvals, strategy), min_effect=min_effect,
                        **opts,
                    )
                )  # fmt: skip
            rows.append(row)
    out = _in_order(pd.DataFrame(rows), groups)
    # The paired columns end with p: p_adjusted comes beside it, then the adjustment's name.
    out["p_adjusted"] = inference.adjust_pvalues(out["p"].to_numpy(dtype=float), adjust)
    out["adjust"] = adjust
    out["min_effect"] = min_effect
    return out


def _paired(
    sdf: pd.DataFrame,
    base: pd.DataFrame,
    is_baseline: bool,
    rng: np.random.Generator,
    n_resamples: int = N_RESAMPLES,
    confidence: float = CONFIDENCE,
) -> dict[str, Any]:
    if is_baseline or base.empty:
        return {"n_pairs": 0, "success_diff": math.nan, "diff_lo": math.nan, "diff_hi": math.nan,
                "mcnemar_b": 0, "mcnemar_c": 0, "mcnemar_p": math.nan}  # fmt: skip
    joined = sdf[["success"]].join(base[["success"]].rename(columns={"success": "success_base"}), how="inner")
    other = joined["success"].to_numpy(dtype=bool)
    ref = joined["success_base"].to_numpy(dtype=bool)
    diff = other.astype(float) - ref.astype(float)
    lo, hi = inference.percentile_interval([diff], _mean, rng, n_resamples, confidence)
    b, c, p = mcnemar(ref, other)
    return {
        "n_pairs": len(joined),
        "success_diff": float(diff.mean()) if len(diff) else math.nan,
        "diff_lo": lo,
        "diff_hi": hi,
        "mcnemar_b": b,
        "mcnemar_c": c,
        "mcnemar_p": p,
    }


def _ci_column(table: pd.DataFrame, value: str, lo: str, hi: str) -> list[str]:
    return [rate_interval(v, a, b) for v, a, b in zip(table[value], table[lo], table[hi], strict=True)]


def _num(value: Any, fmt: str = "{:.2f}") -> str:
    return number(value, fmt)


def scenarios_column(min_effect: float) -> str:
    """The comparison's column of scenario counts at ``min_effect``: ``scenarios -/0/+ (±0.1)``."""
    return f"scenarios -/0/+ (±{min_effect:g})"


def display_frame(table: pd.DataFrame, k: int) -> pd.DataFrame:
    """The comparison formatted for people: intervals in brackets, one column each.

    A table with a unit of inference also shows its clusters, the scenarios on each side
    (``scenarios -/0/+ (±0.1)``: how many scenarios have a paired difference of at most −0.1,
    between, at least +0.1, i.e. the baseline better, no difference that large, the strategy
    better: :func:`harness.report.inference.sign_of`, the counts ``harness effects`` gives), the
    test, and p before and after adjustment (instead of the McNemar column). Differences are
    signed (``-0.17 [-0.37, +0.03]``), p-values have two significant digits
    (:mod:`harness.report.display`).
    """
    groups = [c for c in table.columns if c not in _METRIC_COLUMNS]
    by_unit = "unit" in table.columns
    out = table[groups].copy()
    out["n"] = table["n"]
    if by_unit:
        out["clusters"] = table["n_clusters"]
    out["success"] = _ci_column(table, "success_rate", "success_lo", "success_hi")
    out[f"pass^{k}"] = [_num(v) for v in table.pass_k]
    if "recovery_rate" in table:
        out["recovery"] = _ci_column(table, "recovery_rate", "recovery_lo", "recovery_hi")
    if "steps_to_recover" in table:
        out["steps to recover"] = [_num(v) for v in table.steps_to_recover]
    if "repeated_failing_calls" in table:
        out["repeated fails"] = [_num(v) for v in table.repeated_failing_calls]
    out["wedged"] = [_num(v) for v in table.wedged_share]
    if "harness_errors" in table and table["harness_errors"].any():
        # Left out of n and of every rate: a broken session has no outcome to count.
        out["harness errors"] = table["harness_errors"]
    out["Δ success vs base"] = [
        signed_interval(v, a, b)
        for v, a, b in zip(table.success_diff, table.diff_lo, table.diff_hi, strict=True)
    ]
    if not by_unit:
        out["McNemar p"] = [_num(v, "{:.3g}") for v in table.mcnemar_p]
        return out
    if "n_help" in table.columns:  # counted against the minimum effect, as harness effects counts
        minimum = (
            float(table["min_effect"].iloc[0]) if "min_effect" in table.columns and len(table) else MIN_EFFECT
        )
        counts = zip(table.n_help, table.n_none, table.n_hurt, table.n_pairs, strict=True)
        out[scenarios_column(minimum)] = [f"{a}/{b}/{c}" if n else "–" for a, b, c, n in counts]
    else:
        counts = zip(table.n_favour_base, table.n_tie, table.n_favour_other, table.n_pairs, strict=True)
        out["scenarios Δ -/0/+"] = [f"{a}/{b}/{c}" if n else "–" for a, b, c, n in counts]
    out["test"] = [t or "–" for t in table.test]
    out["p"] = [p_value(v) for v in table.p]
    method = str(table["adjust"].iloc[0]) if "adjust" in table.columns and len(table) else "none"
    out[f"p {method}" if method != "none" else "p unadjusted"] = [p_value(v) for v in table.p_adjusted]
    return out


_METRIC_COLUMNS = {
    "n", "success_rate", "success_lo", "success_hi", "pass_k", "recovery_rate", "recovery_lo",
    "recovery_hi", "steps_to_recover", "repeated_failing_calls", "wedged_share", "harness_error_share",
    "n_pairs", "success_diff", "diff_lo", "diff_hi", "mcnemar_b", "mcnemar_c", "mcnemar_p",
    "unit", "n_clusters", "success_ci_method", "diff_ci_method", "n_favour_base", "n_tie",
    "n_favour_other", "rank_test", "p_wilcoxon", "test", "p", "p_adjusted", "adjust", "harness_errors",
    "n_help", "n_none", "n_hurt", "min_effect",
}  # fmt: skip
