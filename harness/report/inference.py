"""Inference for the strategy comparison: the unit of inference, exact intervals, paired differences.

The sessions of one scenario are not independent draws: they share the scenario's tools, task
and (for a deterministic scenario) its one fault schedule, so outcomes within a scenario agree far
more than outcomes across scenarios. An interval that resamples sessions then answers "how
different would these same scenarios look with other seeds?", not "how different would another
set of scenarios look?". The *unit of inference* says which question an interval answers:

``unit="scenario"``
    The interval of a pooled row is a t interval over scenarios: the point estimate is a ratio
    of sums over all the group's sessions (a scenario weighs by its sessions), its standard
    error the cluster-robust one with the scenarios as clusters (the ratio estimator's
    linearisation with the small-sample factor m / (m - 1), as statsmodels' OLS with
    ``cov_type="cluster"`` gives it), and the quantile Student's t with m - 1 degrees of freedom
    for m scenarios; clipped to the metric's range. A paired difference is paired within
    scenario on identical (scenario, agent, host, seed, params) first. It is an interval for
    the mean over a population of scenarios like these; ``n_clusters`` is the number of
    scenarios it rests on, and with 15 scenarios it is wide. (A percentile bootstrap over
    scenarios, the first version, ran narrow with this few clusters: on the calibration design
    of :mod:`harness.report.calibration` its 95 % interval for a null difference covered 0 in
    0.90 of studies at 15 scenarios and 0.93 at 30; the t interval covers 0.95 at both.)
``unit="session"``
    The sessions (or pairs) are resampled as if independent (a percentile bootstrap): the
    interval for these scenarios' mean over seeds. ``n_clusters`` is then the number of
    sessions.

Whatever the unit, a row whose sessions come from a single scenario cannot be resampled over
scenarios and is not resampled over its sessions either (a bootstrap of 60 identical outcomes is
the zero-width interval [1.00, 1.00]): its success rate gets the exact Clopper--Pearson interval
(60 successes in 60 gives [0.94, 1.00]) and its paired difference Tango's score interval (no
discordant pair in 60 gives [-0.06, 0.06]), both taking that scenario's seeds as independent
trials. Likewise a pooled row whose clusters all agree (every scenario succeeds; no scenario has
a discordant pair) gets the exact interval with each cluster one trial, not a zero-width
interval: 15 of 15 scenarios succeeding gives [0.78, 1.00]; and one whose scenarios all have
the same rate strictly between (each succeeds in 2 of its 4 seeds), where the scenarios show no
spread to estimate from, the exact interval over its sessions.

The test of a paired difference across scenarios comes from the same model as its interval
(:func:`scenario_difference`): the t test of the same ratio with the same cluster-robust
standard error and t(m - 1), so the interval excludes 0 exactly when p < 1 - confidence; where
the interval falls back to Tango's (every scenario with the same difference), the score test
that Tango's interval inverts. Wilcoxon's signed-rank test over the per-scenario mean
differences (a sign test when fewer than :data:`MIN_WILCOXON` scenarios differ) stays beside it
as a secondary p (``p_wilcoxon``): it tests symmetry about 0, not a zero mean, and under a
skewed effect with zero mean it rejects more often the more scenarios there are. Within one
scenario, or at ``unit="session"``, the test is McNemar's exact test over the pairs. The
p-values of one table are adjusted together (Holm, Benjamini--Hochberg, or none).

Every resampling draws from a Generator seeded by ``seed`` and the row's key (:func:`rng_for`),
over sessions in key order, so the same rows in any order give the same intervals, and a
group's interval does not depend on which other groups are in the table. The t interval over
scenarios draws nothing: it is a function of the per-scenario totals alone.
"""

from __future__ import annotations

import gc
import hashlib
import math
import struct
from collections.abc import Callable, Sequence
from typing import Any, Literal, get_args

import numpy as np
import pandas as pd
from scipy import optimize, stats
from statsmodels.stats.multitest import multipletests

from harness.batch.grid import KEY_COLUMNS

Unit = Literal["scenario", "session"]
Adjust = Literal["holm", "bh", "none"]
UNITS: tuple[str, ...] = get_args(Unit)
ADJUSTMENTS: tuple[str, ...] = get_args(Adjust)

CONFIDENCE = 0.95
N_RESAMPLES = 2000
MIN_WILCOXON = 6
"""Fewer scenarios with a non-zero difference than this get the sign test instead of Wilcoxon's
(below six, neither test can reach p < 0.05 however the scenarios fall)."""

MIN_EFFECT = 0.1
"""The smallest per-scenario |Δ| that counts a scenario as helped or hurt (``--min-effect``): one
threshold for every view of a run (the comparison's ``scenarios -/0/+`` and ``harness effects``'
help/none/hurt). Counting any disagreeing seed instead would make the counts grow with seeds."""

_EPS = 1e-12


def sign_of(effect: float, min_effect: float = MIN_EFFECT) -> str:
    """``help`` when ``effect`` ≤ −``min_effect``, ``hurt`` when ≥ +``min_effect``, else ``none``.

    ``effect`` is a scenario's Δ = strategy − baseline, so ``help`` means the baseline (readable
    errors) did better. A ``min_effect`` of 0 counts any non-zero effect (and an effect of
    exactly 0 is ``none``).
    """
    if min_effect <= 0:
        return "help" if effect < 0 else "hurt" if effect > 0 else "none"
    if effect <= -min_effect + _EPS:
        return "help"
    if effect >= min_effect - _EPS:
        return "hurt"
    return "none"


CLUSTER = "scenario"
POOLED = "pooled"
"""The ``scenario`` value of a forest frame's pooled row (its ``pooled`` column is True)."""

_MULTITEST = {"holm": "holm", "bh": "fdr_bh"}

FloatArray = np.ndarray[Any, np.dtype[np.float64]]


def param_columns(df: pd.DataFrame) -> list[str]:
    """Swept-parameter columns (``--set key=...`` records the key as a column)."""
    return [c for c in df.columns if "." in c]


def check_unit(unit: str) -> None:
    """Raise ValueError unless ``unit`` is one of :data:`UNITS`."""
    if unit not in UNITS:
        raise ValueError(f"unit must be one of {', '.join(UNITS)}, not {unit!r}")


def check_adjust(adjust: str) -> None:
    """Raise ValueError unless ``adjust`` is one of :data:`ADJUSTMENTS`."""
    if adjust not in ADJUSTMENTS:
        raise ValueError(f"adjust must be one of {', '.join(ADJUSTMENTS)}, not {adjust!r}")


def rng_for(seed: int, *key: object) -> np.random.Generator:
    """The Generator of one interval: seeded by ``seed`` and the row's key, stable across processes.

    ``compare`` and ``forest_frame`` key an interval by (metric, *group values, strategy), metric
    one of ``"success"``, ``"recovery"``, ``"diff"``; so both give a group the same interval.
    """
    text = "\x1f".join(str(k) for k in key)
    words = struct.unpack("<4I", hashlib.blake2b(text.encode(), digest_size=16).digest())
    return np.random.default_rng([seed, *words])


def exact_interval(successes: int, trials: int, confidence: float = CONFIDENCE) -> tuple[float, float]:
    """Clopper--Pearson interval for a binomial proportion (scipy's binomtest, method "exact").

    Guaranteed coverage of at least ``confidence`` for ``trials`` independent trials: 60 of 60
    gives [0.940, 1.000]. NaNs for no trials.
    """
    if trials <= 0:
        return (math.nan, math.nan)
    ci = stats.binomtest(int(successes), int(trials)).proportion_ci(
        confidence_level=confidence, method="exact"
    )
    return (float(ci.low), float(ci.high))


def paired_difference_interval(
    base_only: int, other_only: int, pairs: int, confidence: float = CONFIDENCE
) -> tuple[float, float]:
    """Tango's score interval for a difference of paired proportions, P(other) - P(base).

    ``base_only`` pairs where only the baseline succeeded, ``other_only`` where only the other
    did, out of ``pairs``. The interval is the set of differences d that the score test of
    Tango (1998, Stat Med 17:891) does not reject: |Z(d)| <= z, with the nuisance discordance
    probability at its maximum-likelihood value under d. At d = 0 the statistic is McNemar's
    (b - c) / sqrt(b + c), so the interval excludes 0 exactly when McNemar's uncorrected test
    rejects. Unlike a bootstrap of the pairs it has width when every pair agrees: no discordant
    pair in n gives +-z^2 / (n + z^2), [-0.060, 0.060] for n = 60. Neither scipy nor statsmodels
    has a paired-difference interval; this follows PropCIs::scoreci.mp.
    """
    n, b, c = int(pairs), int(base_only), int(other_only)
    if n <= 0:
        return (math.nan, math.nan)
    z = float(stats.norm.ppf(0.5 + confidence / 2))
    est = (c - b) / n

    def score(d: float) -> float:
        num = c - b - n * d
        if num == 0:
            return 0.0
        bq = -b - c + (2 * n - c + b) * d
        cq = -b * d * (1 - d)
        q21 = (math.sqrt(max(bq * bq - 8 * n * cq, 0.0)) - bq) / (4 * n)
        var = n * (2 * q21 + d * (1 - d))
        if var <= 0:
            return math.copysign(math.inf, num)
        return num / math.sqrt(var)

    eps = 1e-12
    left, right = -1.0 + eps, 1.0 - eps
    if est <= left or score(left) <= z:
        lo = -1.0
    else:
        lo = float(optimize.brentq(lambda d: score(d) - z, left, min(est, right), xtol=1e-12))
    if est >= right or score(right) >= -z:
        hi = 1.0
    else:
        hi = float(optimize.brentq(lambda d: score(d) + z, max(est, left), right, xtol=1e-12))
    return (lo, hi)


def _ratio(num: FloatArray, den: FloatArray, axis: int = -1) -> Any:
    return np.sum(num, axis=axis) / np.sum(den, axis=axis)


def percentile_interval(
    samples: Sequence[np.ndarray[Any, Any]],
    statistic: Callable[..., Any],
    rng: np.random.Generator,
    n_resamples: int = N_RESAMPLES,
    confidence: float = CONFIDENCE,
) -> tuple[float, float]:
    """A percentile bootstrap interval of ``statistic`` over ``samples`` (paired when several);
    a constant or a single value gives its own zero-width interval, an empty one NaNs."""
    n = len(samples[0])
    if n == 0:
        return (math.nan, math.nan)
    if n == 1 or all(np.ptp(s) == 0 for s in samples):
        value = float(statistic(*samples, axis=-1))
        return (value, value)
    res = stats.bootstrap(
        tuple(samples),
        statistic,
        paired=len(samples) > 1,
        vectorized=True,
        n_resamples=n_resamples,
        confidence_level=confidence,
        method="percentile",
        rng=rng,
    )
    return (float(res.confidence_interval.low), float(res.confidence_interval.high))


def cluster_bootstrap(
    num: Sequence[float] | FloatArray,
    den: Sequence[float] | FloatArray,
    *,
    rng: np.random.Generator,
    n_resamples: int = N_RESAMPLES,
    confidence: float = CONFIDENCE,
) -> tuple[float, float]:
    """Percentile interval of sum(num) / sum(den), resampling the clusters with replacement.

    ``num`` and ``den`` hold one total per cluster (per scenario: successes and sessions; the
    summed paired differences and the pairs; recoveries and opportunities). Each resample draws
    as many clusters as there are, with replacement, and takes the ratio of the drawn totals:
    scipy.stats.bootstrap with the two arrays paired, so a cluster's totals travel together.
    With one cluster per session this is the ordinary bootstrap of a mean or ratio of sums.
    Every ``den`` must be positive. One cluster, or clusters that all have the same ratio,
    give the point estimate at both ends; none gives NaNs.
    """
    top = np.asarray(num, dtype=float)
    bottom = np.asarray(den, dtype=float)
    if len(top) != len(bottom):
        raise ValueError("num and den differ in length")
    if len(top) == 0:
        return (math.nan, math.nan)
    if np.any(bottom <= 0):
        raise ValueError("every cluster needs a positive denominator")
    point = float(top.sum() / bottom.sum())
    ratios = top / bottom
    if len(top) == 1 or np.ptp(ratios) == 0:
        return (point, point)
    return percentile_interval([top, bottom], _ratio, rng, n_resamples, confidence)


def cluster_t_interval(
    num: Sequence[float] | FloatArray,
    den: Sequence[float] | FloatArray,
    *,
    confidence: float = CONFIDENCE,
    bounds: tuple[float, float] = (-math.inf, math.inf),
) -> tuple[float, float]:
    """t interval of sum(num) / sum(den) with the clusters as the independent units.

    ``num`` and ``den`` hold one total per cluster (per scenario: successes and sessions; the
    summed paired differences and the pairs; recoveries and opportunities). With R the ratio
    of sums, m clusters and residuals e_j = num_j - R * den_j, the standard error is
    sqrt(m / (m - 1) * sum(e_j^2)) / sum(den): the cluster-robust ("sandwich") standard error
    of a mean over sessions, the linearised one of a ratio estimator, with the usual
    small-sample factor (statsmodels' OLS on a constant with ``cov_type="cluster"`` gives the
    same). The interval is R -+ t(m - 1) * se, clipped to ``bounds``. With equal cluster sizes
    it is the one-sample t interval of the per-cluster ratios. Every ``den`` must be positive;
    fewer than two clusters give NaNs (there is no spread to estimate from).
    """
    point, se, m = _cluster_se(num, den)
    if m < 2:
        return (math.nan, math.nan)
    half = float(stats.t.ppf(0.5 + confidence / 2, m - 1)) * se
    return (max(bounds[0], point - half), min(bounds[1], point + half))


def _cluster_se(
    num: Sequence[float] | FloatArray, den: Sequence[float] | FloatArray
) -> tuple[float, float, int]:
    """(ratio of sums, its cluster-robust standard error, clusters): :func:`cluster_t_interval`'s model."""
    top = np.asarray(num, dtype=float)
    bottom = np.asarray(den, dtype=float)
    if len(top) != len(bottom):
        raise ValueError("num and den differ in length")
    if np.any(bottom <= 0):
        raise ValueError("every cluster needs a positive denominator")
    m = len(top)
    if m < 2:
        return (math.nan, math.nan, m)
    point = float(top.sum() / bottom.sum())
    resid = top - point * bottom
    se = math.sqrt(m / (m - 1) * float(np.sum(resid**2))) / float(bottom.sum())
    return (point, se, m)


def cluster_t_test(num: Sequence[float] | FloatArray, den: Sequence[float] | FloatArray) -> float:
    """Two-sided p of the t test that sum(num) / sum(den) is 0, in :func:`cluster_t_interval`'s model.

    t = R / se with the same ratio R, the same cluster-robust standard error and t(m - 1), so the
    interval at confidence c excludes 0 exactly when p < 1 - c. With equal cluster sizes it is
    the one-sample t test of the per-cluster ratios (scipy's ``ttest_1samp``). Fewer than two
    clusters give NaN; no spread at all (every cluster's ratio the same) gives 1 for a ratio of
    0 and 0 otherwise (callers with such clusters use :func:`score_test` instead).
    """
    point, se, m = _cluster_se(num, den)
    if m < 2:
        return math.nan
    if se == 0:
        return 1.0 if point == 0 else 0.0
    return float(2 * stats.t.sf(abs(point) / se, m - 1))


def score_test(base_only: int, other_only: int) -> float:
    """Two-sided p of the score test of no paired difference: McNemar's uncorrected chi-square.

    The test that Tango's interval (:func:`paired_difference_interval`) inverts at 0: the
    interval excludes 0 exactly when this p is below 1 - confidence. No discordant pair: 1.
    """
    b, c = int(base_only), int(other_only)
    if b + c == 0:
        return 1.0
    return float(stats.chi2.sf((c - b) ** 2 / (b + c), 1))


def scenario_test(differences: Sequence[float] | FloatArray) -> tuple[str, float]:
    """Wilcoxon's (or the sign) test that per-scenario differences are symmetric about 0: (name, p).

    The secondary test across scenarios (``p_wilcoxon``); the primary one is the t test of
    :func:`scenario_difference`, which matches the interval. Wilcoxon's null is symmetry: a
    skewed distribution of effects with mean 0 (a large effect in a few scenarios, a small one
    the other way in many) is rejected more often the more scenarios there are.

    Scenarios with no difference are dropped (Wilcoxon's "wilcox" zero method; a sign test has
    nothing to say about them either). With :data:`MIN_WILCOXON` or more non-zero differences,
    scipy's Wilcoxon signed-rank test (exact below 51 scenarios without ties; with ties, an
    exhaustive permutation below 14 and the normal approximation above); with fewer, the exact
    sign test (binomial, p = 1/2). No non-zero difference: ("sign", 1.0).
    """
    d = np.asarray(differences, dtype=float)
    d = d[~np.isnan(d)]
    nonzero = d[d != 0]
    if len(nonzero) == 0:
        return ("sign", 1.0)
    if len(nonzero) < MIN_WILCOXON:
        up = int(np.sum(nonzero > 0))
        return ("sign", float(stats.binomtest(up, len(nonzero), 0.5).pvalue))
    return ("wilcoxon", float(stats.wilcoxon(nonzero, zero_method="wilcox", method="auto").pvalue))


def mcnemar_exact(base: np.ndarray[Any, Any], other: np.ndarray[Any, Any]) -> tuple[int, int, float]:
    """McNemar's exact test on paired booleans: (base-only, other-only, two-sided p)."""
    b = int(np.sum(base & ~other))
    c = int(np.sum(~base & other))
    p = 1.0 if b + c == 0 else float(stats.binomtest(min(b, c), b + c, 0.5).pvalue)
    return b, c, p


def adjust_pvalues(p: Sequence[float] | FloatArray, method: str = "holm") -> FloatArray:
    """p-values adjusted as one family (statsmodels' multipletests); NaNs stay NaN, out of the family.

    ``"holm"`` controls the family-wise error rate (Holm's step-down Bonferroni), ``"bh"`` the
    false discovery rate (Benjamini--Hochberg), ``"none"`` returns the p-values unchanged.
    """
    check_adjust(method)
    values = np.asarray(p, dtype=float)
    out = values.copy()
    present = ~np.isnan(values)
    if method != "none" and present.any():
        # statsmodels' Holm ends with a gc.collect() of its own, which walks every object of the
        # process (a finished run's rows, tens of milliseconds each call); frozen objects are
        # not walked, and unfreezing puts them back as they were.
        gc.freeze()
        try:
            out[present] = multipletests(values[present], method=_MULTITEST[method])[1]
        finally:
            gc.unfreeze()
    return out


def _proportion_over(
    num: FloatArray,
    den: FloatArray,
    *,
    unit: str,
    rng: np.random.Generator,
    n_resamples: int,
    confidence: float,
) -> tuple[float, float, str]:
    """Interval of a rate sum(num) / sum(den) over clusters: scenarios (t), or sessions (bootstrap).

    ``num`` counts successes (or recoveries) out of ``den`` trials per cluster. When every
    cluster has the same rate, the clusters show no spread to estimate from and a t interval
    or a bootstrap would have no width: clusters that all succeed (or all fail) then count as
    one trial each of an exact Clopper--Pearson interval (15 scenarios that all succeed give
    [0.78, 1.00]); clusters that all have the same rate strictly between 0 and 1 get the
    Clopper--Pearson interval over their trials (sessions as trials).
    """
    ratios = num / den
    if len(ratios) > 1 and np.ptp(ratios) == 0:
        if ratios[0] in (0.0, 1.0):
            lo, hi = exact_interval(int(ratios[0]) * len(ratios), len(ratios), confidence)
            return lo, hi, "clopper-pearson-scenarios" if unit == "scenario" else "clopper-pearson"
        if 0.0 < ratios[0] < 1.0:
            lo, hi = exact_interval(round(float(num.sum())), round(float(den.sum())), confidence)
            return lo, hi, "clopper-pearson"
    if unit == "scenario":
        lo, hi = cluster_t_interval(num, den, confidence=confidence, bounds=(0.0, 1.0))
        return lo, hi, "cluster-t"
    lo, hi = cluster_bootstrap(num, den, rng=rng, n_resamples=n_resamples, confidence=confidence)
    return lo, hi, "session-bootstrap"


def _difference_over(
    per: pd.DataFrame,
    diff: FloatArray,
    *,
    unit: str,
    rng: np.random.Generator,
    n_resamples: int,
    confidence: float,
) -> tuple[float, float, str]:
    """Interval of a paired difference over clusters: scenarios (t), or pairs (bootstrap).

    ``per`` is :func:`per_scenario_pairs` of the pairs, ``diff`` their other - base differences.
    When every scenario has the same difference, -1, 0 or 1 (every pair agrees, or every pair
    differs the same way), each scenario counts as one pair of Tango's score interval instead
    of a zero-width interval (15 scenarios without a discordant pair give [-0.20, 0.20]); the
    same difference strictly between gets Tango's interval over the pairs.
    """
    if unit == "session":
        if np.ptp(diff) == 0:
            n = len(diff)
            lo, hi = paired_difference_interval(n * (diff[0] < 0), n * (diff[0] > 0), n, confidence)
            return lo, hi, "tango"
        lo, hi = cluster_bootstrap(
            diff, np.ones_like(diff), rng=rng, n_resamples=n_resamples, confidence=confidence
        )
        return lo, hi, "session-bootstrap"
    found = scenario_difference(per, confidence=confidence, wilcoxon=False)
    return found["diff_lo"], found["diff_hi"], found["diff_ci_method"]


def scenario_difference(
    per: pd.DataFrame, *, confidence: float = CONFIDENCE, equal_weights: bool = False, wilcoxon: bool = True
) -> dict[str, Any]:
    """The paired difference across scenarios: its interval and its test, from one model.

    ``per`` has one row per scenario with ``pairs``, ``base_only``, ``other_only``, ``net`` and
    ``delta`` (:func:`per_scenario_pairs`). The estimate is the ratio of sums Σnet / Σpairs (a
    scenario weighs by its pairs) or, with ``equal_weights``, the mean of the deltas (every
    scenario weighs the same). Keys:

    * ``diff_lo``, ``diff_hi``, ``diff_ci_method``: :func:`cluster_t_interval` (``cluster-t``);
      when every scenario has the same difference -1, 0 or 1, Tango's interval with each
      scenario one pair (``tango-scenarios``), and the same difference strictly between,
      Tango's interval over the pairs (``tango``): the scenarios show no spread to build a t
      interval from;
    * ``test``, ``p``: the interval's own test: ``t`` (:func:`cluster_t_test`, the same ratio,
      standard error and t(m - 1)) with ``cluster-t``, ``score`` (:func:`score_test`, the test
      Tango's interval inverts, on the same counts) with either Tango interval. So the interval
      excludes 0 exactly when p < 1 - ``confidence``;
    * ``rank_test``, ``p_wilcoxon``: the secondary test of symmetry about 0, Wilcoxon's
      signed rank (or the sign test), :func:`scenario_test` (``""`` and NaN unless ``wilcoxon``).
    """
    deltas = per["delta"].to_numpy(dtype=float)
    m = len(deltas)
    out: dict[str, Any] = {}
    if m and np.ptp(deltas) == 0:
        if deltas[0] in (-1.0, 0.0, 1.0):
            b, c, n = m * int(deltas[0] < 0), m * int(deltas[0] > 0), m
            method = "tango-scenarios"
        else:
            b, c, n = int(per["base_only"].sum()), int(per["other_only"].sum()), int(per["pairs"].sum())
            method = "tango"
        out["diff_lo"], out["diff_hi"] = paired_difference_interval(b, c, n, confidence)
        out["diff_ci_method"], out["test"], out["p"] = method, "score", score_test(b, c)
    else:
        if equal_weights:
            num, den = deltas, np.ones_like(deltas)
        else:
            num, den = per["net"].to_numpy(dtype=float), per["pairs"].to_numpy(dtype=float)
        out["diff_lo"], out["diff_hi"] = cluster_t_interval(
            num, den, confidence=confidence, bounds=(-1.0, 1.0)
        )
        out["diff_ci_method"], out["test"], out["p"] = "cluster-t", "t", cluster_t_test(num, den)
    out["rank_test"], out["p_wilcoxon"] = scenario_test(deltas) if wilcoxon else ("", math.nan)
    return out


def success_summary(
    sdf: pd.DataFrame,
    *,
    unit: str,
    rng: np.random.Generator,
    n_resamples: int = N_RESAMPLES,
    confidence: float = CONFIDENCE,
) -> dict[str, Any]:
    """success_rate with its interval for one group and strategy (rows of ``sdf``, in key order).

    Keys: ``n_clusters``, ``success_rate``, ``success_lo``, ``success_hi``, ``success_ci_method``:
    ``clopper-pearson`` for a single scenario (sessions as trials), else ``cluster-t`` (unit
    "scenario": :func:`cluster_t_interval`) or ``session-bootstrap``; where every cluster
    agrees on 0 or 1, the exact interval over clusters (``clopper-pearson-scenarios``, or
    ``clopper-pearson`` over sessions); where every scenario has the same rate strictly
    between, ``clopper-pearson`` over the sessions.
    """
    check_unit(unit)
    succ = sdf["success"].to_numpy(dtype=float)
    n_scen = int(sdf[CLUSTER].nunique())
    out: dict[str, Any] = {
        "n_clusters": n_scen if unit == "scenario" else len(sdf),
        "success_rate": float(succ.mean()) if len(succ) else math.nan,
    }
    if n_scen <= 1:
        out["success_lo"], out["success_hi"] = exact_interval(int(succ.sum()), len(succ), confidence)
        out["success_ci_method"] = "clopper-pearson"
    else:
        if unit == "scenario":
            per = sdf.groupby(CLUSTER, sort=True)["success"].agg(["sum", "count"])
            num, den = per["sum"].to_numpy(dtype=float), per["count"].to_numpy(dtype=float)
        else:
            num, den = succ, np.ones_like(succ)
        out["success_lo"], out["success_hi"], out["success_ci_method"] = _proportion_over(
            num, den, unit=unit, rng=rng, n_resamples=n_resamples, confidence=confidence
        )
    return out


def recovery_interval(
    sdf: pd.DataFrame,
    *,
    unit: str,
    rng: np.random.Generator,
    n_resamples: int = N_RESAMPLES,
    confidence: float = CONFIDENCE,
) -> tuple[float, float]:
    """Interval of recoveries / recovery opportunities (a ratio of sums) for one group and strategy.

    Sessions and scenarios without an opportunity add nothing to either sum and are left out of
    the resampling. A single scenario gets the Clopper--Pearson interval over its opportunities
    (taking each opportunity as a trial), when recoveries never exceed opportunities; clusters
    that all recover every time (or never) the exact interval over clusters, as for success.
    """
    check_unit(unit)
    rec = sdf["recoveries"].to_numpy(dtype=float)
    opp = sdf["recovery_opportunities"].to_numpy(dtype=float)
    met = opp > 0
    if not met.any():
        return (math.nan, math.nan)
    if sdf[CLUSTER].nunique() <= 1 and rec.sum() <= opp.sum():
        return exact_interval(int(rec.sum()), int(opp.sum()), confidence)
    if unit == "scenario":
        per = (
            pd.DataFrame({CLUSTER: sdf[CLUSTER].to_numpy(), "rec": rec, "opp": opp})
            .groupby(CLUSTER, sort=True)[["rec", "opp"]]
            .sum()
        )
        per = per[per["opp"] > 0]
        num, den = per["rec"].to_numpy(dtype=float), per["opp"].to_numpy(dtype=float)
    else:
        num, den = rec[met], opp[met]
    lo, hi, _ = _proportion_over(num, den, unit=unit, rng=rng, n_resamples=n_resamples, confidence=confidence)
    return (lo, hi)


def paired_outcomes(sdf: pd.DataFrame, base: pd.DataFrame, pair_cols: Sequence[str]) -> pd.DataFrame:
    """The pairs of a strategy's sessions with the baseline's: rows of both that agree on ``pair_cols``.

    Returns one row per identical (scenario, agent, host, seed, params), in ``sdf``'s order, with
    columns ``scenario``, ``other`` and ``base`` (booleans).
    """
    if not _aligned(sdf, base, pair_cols):
        return joined_outcomes(sdf, base, pair_cols)
    return _pairs(sdf[CLUSTER], sdf["success"], base["success"])


def joined_outcomes(sdf: pd.DataFrame, base: pd.DataFrame, pair_cols: Sequence[str]) -> pd.DataFrame:
    """:func:`paired_outcomes` the plain way, by an inner join on ``pair_cols`` (what it does
    whenever the rows are not aligned, and what its shortcut is tested against)."""
    keys = list(pair_cols)
    joined = sdf.set_index(keys)[["success"]].join(
        base.set_index(keys)[["success"]].rename(columns={"success": "base"}), how="inner"
    )
    return _pairs(joined.index.get_level_values(CLUSTER), joined["success"], joined["base"])


def _pairs(cluster: Any, other: pd.Series, base: pd.Series) -> pd.DataFrame:
    return pd.DataFrame(
        {
            CLUSTER: np.asarray(cluster, dtype=object),
            "other": other.to_numpy(dtype=bool),
            "base": base.to_numpy(dtype=bool),
        }
    )


def _aligned(sdf: pd.DataFrame, base: pd.DataFrame, pair_cols: Sequence[str]) -> bool:
    """Whether row i of ``sdf`` pairs with row i of ``base`` and with no other row: the same keys,
    row for row, none twice. Then the join in :func:`paired_outcomes` would return the rows as
    they are, and it is skipped: a grid where every strategy ran the same cells, sorted by
    :func:`prepare`, is the usual case, and the join on a many-column index costs most of a
    study's pairing. Any doubt (another length, a missing value, a repeated key) takes the join.
    """
    if len(sdf) != len(base):
        return False
    repeated = np.ones(max(len(sdf) - 1, 0), dtype=bool)
    for col in pair_cols:
        mine, theirs = sdf[col].to_numpy(), base[col].to_numpy()
        if pd.isna(mine).any() or pd.isna(theirs).any() or not np.array_equal(mine, theirs):
            return False
        repeated &= mine[1:] == mine[:-1]
    return not repeated.any()


def per_scenario_pairs(pairs: pd.DataFrame) -> pd.DataFrame:
    """Per scenario (sorted): ``pairs``, ``base_only``, ``other_only``, ``net``, ``delta`` = net / pairs."""
    names, idx = np.unique(pairs[CLUSTER].to_numpy(dtype=object).astype(str), return_inverse=True)
    other = pairs["other"].to_numpy(dtype=bool)
    ref = pairs["base"].to_numpy(dtype=bool)
    size = len(names)
    per = pd.DataFrame(
        {
            "pairs": np.bincount(idx, minlength=size),
            "base_only": np.bincount(idx, weights=ref & ~other, minlength=size).astype(int),
            "other_only": np.bincount(idx, weights=~ref & other, minlength=size).astype(int),
        },
        index=pd.Index(names, name=CLUSTER),
    )
    per["net"] = per["other_only"] - per["base_only"]
    per["delta"] = per["net"] / per["pairs"]
    return per


EMPTY_PAIRED: dict[str, Any] = {
    "n_pairs": 0, "success_diff": math.nan, "diff_lo": math.nan, "diff_hi": math.nan,
    "diff_ci_method": "", "mcnemar_b": 0, "mcnemar_c": 0, "mcnemar_p": math.nan,
    "n_favour_base": 0, "n_tie": 0, "n_favour_other": 0, "n_help": 0, "n_none": 0, "n_hurt": 0,
    "rank_test": "", "p_wilcoxon": math.nan, "test": "", "p": math.nan,
}  # fmt: skip
"""The paired columns of a row with nothing to pair (the baseline's own row)."""


def difference_interval(
    pairs: pd.DataFrame,
    *,
    unit: str,
    rng: np.random.Generator,
    n_resamples: int = N_RESAMPLES,
    confidence: float = CONFIDENCE,
    per: pd.DataFrame | None = None,
) -> tuple[float, float, str]:
    """The interval of :func:`paired_summary` alone, (lo, hi, method), without its test.

    ``per`` is :func:`per_scenario_pairs` of ``pairs`` if the caller has it already.
    """
    check_unit(unit)
    if pairs.empty:
        return (math.nan, math.nan, "")
    per = per_scenario_pairs(pairs) if per is None else per
    if len(per) == 1:
        b, c = int(per["base_only"].iloc[0]), int(per["other_only"].iloc[0])
        lo, hi = paired_difference_interval(b, c, len(pairs), confidence)
        return lo, hi, "tango"
    diff = pairs["other"].to_numpy(dtype=float) - pairs["base"].to_numpy(dtype=float)
    return _difference_over(per, diff, unit=unit, rng=rng, n_resamples=n_resamples, confidence=confidence)


def paired_summary(
    pairs: pd.DataFrame,
    *,
    unit: str,
    rng: np.random.Generator,
    n_resamples: int = N_RESAMPLES,
    confidence: float = CONFIDENCE,
    min_effect: float = MIN_EFFECT,
) -> dict[str, Any]:
    """The paired difference other - baseline of one group and strategy, from :func:`paired_outcomes`.

    ``success_diff``: at unit "scenario" over several scenarios, the mean of the scenarios' differences
    (each scenario weighs the same, whatever its seeds: the estimand does not depend on how many seeds
    each had, and it is the mean effect ``harness effects`` reports); within one scenario, or at unit
    "session", the mean over pairs. Its interval (``diff_lo``, ``diff_hi``): Tango's score interval when
    the pairs come from one scenario; otherwise the t interval over scenarios (unit "scenario",
    ``cluster-t``: :func:`cluster_t_interval` of the per-scenario differences) or the bootstrap over
    pairs (unit "session"); when every cluster has the same difference -1, 0 or 1, Tango's interval with
    one pair per cluster (``tango-scenarios``), and when every scenario has the same difference strictly
    between, Tango's interval over the pairs (``tango``); ``diff_ci_method`` names it.
    ``n_favour_base``, ``n_tie``, ``n_favour_other`` count scenarios whose mean difference is negative,
    zero, positive; ``n_help``, ``n_none``, ``n_hurt`` count them against ``min_effect``
    (:func:`sign_of`), as ``harness effects`` does. ``test`` and ``p``: across scenarios (unit
    "scenario", two or more scenarios) the interval's own test, ``t`` with ``cluster-t`` and ``score``
    with Tango's (:func:`scenario_difference`), with Wilcoxon's signed-rank (or the sign) test beside it
    in ``rank_test``/``p_wilcoxon``; else McNemar's exact test over the pairs (``mcnemar``; no
    ``p_wilcoxon``). ``mcnemar_b``/``mcnemar_c``/``mcnemar_p`` are kept for every unit (pairs, not
    scenarios).
    """
    check_unit(unit)
    if pairs.empty:
        return dict(EMPTY_PAIRED)
    other = pairs["other"].to_numpy(dtype=bool)
    ref = pairs["base"].to_numpy(dtype=bool)
    diff = other.astype(float) - ref.astype(float)
    b, c, p_mcnemar = mcnemar_exact(ref, other)
    per = per_scenario_pairs(pairs)
    signs = [sign_of(float(d), min_effect) for d in per["delta"]]
    out: dict[str, Any] = {
        "n_pairs": len(pairs),
        "success_diff": float(diff.mean()),
        "mcnemar_b": b,
        "mcnemar_c": c,
        "mcnemar_p": p_mcnemar,
        "n_favour_base": int((per["delta"] < 0).sum()),
        "n_tie": int((per["delta"] == 0).sum()),
        "n_favour_other": int((per["delta"] > 0).sum()),
        "n_help": signs.count("help"),
        "n_none": signs.count("none"),
        "n_hurt": signs.count("hurt"),
    }
    if unit == "scenario" and len(per) > 1:
        out["success_diff"] = float(per["delta"].mean())
        out.update(scenario_difference(per, confidence=confidence, equal_weights=True))
    else:
        out["diff_lo"], out["diff_hi"], out["diff_ci_method"] = difference_interval(
            pairs, unit=unit, rng=rng, n_resamples=n_resamples, confidence=confidence, per=per
        )
        out["test"], out["p"] = "mcnemar", p_mcnemar
        out["rank_test"], out["p_wilcoxon"] = "", math.nan
    return {key: out[key] for key in EMPTY_PAIRED}


HARNESS_ERROR = "harness_error"
"""The status of a session that broke inside the harness (or its agent raised): it has no outcome."""


def split_harness_errors(df: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(the judged sessions, the ``harness_error`` ones).

    A session that broke has no outcome: counted as a failure it would pull a rate towards 0
    with an interval as if it had been judged. Every rate and pair leaves it out; tables count it.
    """
    if "status" not in df.columns:
        return df, df.iloc[:0]
    broke = df["status"].eq(HARNESS_ERROR).to_numpy(dtype=bool)
    if not broke.any():
        return df, df.iloc[:0]
    return df[~broke], df[broke]


def prepare(
    df: pd.DataFrame, *, by: Sequence[str], group_params: bool, keep: Sequence[str] | None = None
) -> tuple[pd.DataFrame, list[str], list[str]]:
    """The judged sessions made ready for grouping: (sorted copy, group columns, pair columns).

    ``harness_error`` sessions are left out (:func:`split_harness_errors`); ``success`` becomes
    boolean (missing counts as failure); rows are put in key order so that every interval is a
    function of the sessions, not of the order their rows arrived in. With ``keep``, the copy
    holds only the group, key and ``success`` columns and those named (the ones present): a
    row has some 80 columns, and every group the caller splits off would copy them all.
    """
    df = split_harness_errors(df)[0]
    if df.empty:
        raise ValueError("no sessions to compare")
    for col in by:
        if col not in df.columns:
            raise KeyError(col)
    params = param_columns(df)
    groups = [*by, *[p for p in params if p not in by and group_params]]
    if keep is not None:
        wanted = dict.fromkeys([*groups, *KEY_COLUMNS, *params, "success", *keep])
        df = df[[c for c in wanted if c in df.columns]]
    out = df.copy()
    out["success"] = out["success"].fillna(False).astype(bool)
    for col in ("recoveries", "recovery_opportunities", "repeated_failing_calls"):
        if col in out.columns:
            out[col] = pd.to_numeric(out[col], errors="coerce").fillna(0)
    pair_cols = [c for c in [*KEY_COLUMNS, *params] if c != "strategy" and c in out.columns]
    key_cols = [c for c in [*KEY_COLUMNS, *params] if c in out.columns]
    out = out.sort_values(key_cols, kind="stable", na_position="last").reset_index(drop=True)
    return out, groups, pair_cols


def paired_groups(
    df: pd.DataFrame, *, baseline: str, by: Sequence[str], group_params: bool
) -> tuple[list[str], list[tuple[dict[str, Any], pd.DataFrame]]]:
    """Each group's sessions of every other strategy paired with ``baseline``'s: (group columns,
    [(head, pairs)]).

    Groups are ``by`` plus the swept parameters unless ``group_params`` is False (pairs are
    matched on them either way), in sorted order, strategies sorted within; ``head`` maps the
    group columns and ``strategy`` to their values; ``pairs`` is :func:`paired_outcomes`'s frame.
    A strategy with no pair (no baseline sessions to match) is left out.
    """
    data, groups, pair_cols = prepare(df, by=by, group_params=group_params, keep=())
    out: list[tuple[dict[str, Any], pd.DataFrame]] = []
    grouped = data.groupby(groups, dropna=False, sort=True) if groups else [((), data)]
    for gkey, gdf in grouped:
        gvals = gkey if isinstance(gkey, tuple) else (gkey,)
        base = gdf[gdf["strategy"] == baseline]
        for strategy, sdf in gdf.groupby("strategy", sort=True):
            if strategy == baseline:
                continue
            pairs = paired_outcomes(sdf, base, pair_cols)
            if not pairs.empty:
                out.append(({**dict(zip(groups, gvals, strict=True)), "strategy": strategy}, pairs))
    return groups, out


def forest_frame(
    df: pd.DataFrame,
    *,
    baseline: str = "is_error",
    by: Sequence[str] = ("agent",),
    unit: Unit = "scenario",
    seed: int = 0,
    group_params: bool = True,
    n_resamples: int = N_RESAMPLES,
    confidence: float = CONFIDENCE,
) -> pd.DataFrame:
    """Per-scenario paired differences with intervals, and the pooled one: the forest plot's data.

    One row per group (``by`` plus swept parameters unless ``group_params`` is False), strategy
    other than ``baseline``, and scenario (sorted), then the group's pooled row (``scenario`` is
    ``"pooled"``, ``pooled`` True). Columns: the group columns, ``strategy``, ``scenario``,
    ``pooled``, ``delta`` (mean of other - baseline success over the pairs), ``lo``, ``hi``, ``n``
    (pairs), ``n_clusters``, ``base_only``, ``other_only``, ``unit``, ``method``.

    A scenario's interval is Tango's score interval over its pairs (its seeds as independent
    trials). The pooled interval is the one :func:`harness.report.stats.compare` gives the group
    at the same ``unit`` and ``seed``: the t interval over scenarios (``"scenario"``: the mean
    over a population of scenarios like these) or the bootstrap over pairs (``"session"``).
    """
    check_unit(unit)
    if CLUSTER in by:
        raise ValueError("forest_frame splits each group by scenario itself: leave scenario out of by")
    groups, paired = paired_groups(df, baseline=baseline, by=by, group_params=group_params)
    rows: list[dict[str, Any]] = []
    for head, pairs in paired:
        strategy = head["strategy"]
        gvals = tuple(head[g] for g in groups)
        for scenario, rec in per_scenario_pairs(pairs).iterrows():
            lo, hi = paired_difference_interval(
                int(rec["base_only"]), int(rec["other_only"]), int(rec["pairs"]), confidence
            )
            rows.append({**head, "scenario": scenario, "pooled": False, "delta": float(rec["delta"]),
                         "lo": lo, "hi": hi, "n": int(rec["pairs"]), "n_clusters": 1,
                         "base_only": int(rec["base_only"]), "other_only": int(rec["other_only"]),
                         "unit": unit, "method": "tango"})  # fmt: skip
        summary = paired_summary(
            pairs, unit=unit, rng=rng_for(seed, "diff", *gvals, strategy),
            n_resamples=n_resamples, confidence=confidence,
        )  # fmt: skip
        n_scen = int(pairs[CLUSTER].nunique())
        rows.append({**head, "scenario": POOLED, "pooled": True, "delta": summary["success_diff"],
                     "lo": summary["diff_lo"], "hi": summary["diff_hi"], "n": summary["n_pairs"],
                     "n_clusters": n_scen if unit == "scenario" else summary["n_pairs"],
                     "base_only": summary["mcnemar_b"], "other_only": summary["mcnemar_c"],
                     "unit": unit, "method": summary["diff_ci_method"]})  # fmt: skip
    columns = [*groups, "strategy", CLUSTER, "pooled", "delta", "lo", "hi", "n", "n_clusters",
               "base_only", "other_only", "unit", "method"]  # fmt: skip
    return pd.DataFrame(rows, columns=columns)


def describe_inference(unit: str, adjust: str, confidence: float = CONFIDENCE) -> str:
    """One line naming the unit of inference, the intervals and the adjustment, for a table's title."""
    check_unit(unit)
    check_adjust(adjust)
    pct = f"{confidence:.0%}"
    if unit == "scenario":
        head = (
            f"unit of inference: scenario ({pct} t intervals over scenarios, paired within scenario; "
            "t test across scenarios, the interval's own; Wilcoxon in p_wilcoxon)"
        )
    else:
        head = f"unit of inference: session ({pct} bootstrap over sessions; McNemar exact over pairs)"
    tail = {"holm": "p adjusted: Holm", "bh": "p adjusted: Benjamini-Hochberg", "none": "p not adjusted"}
    return f"{head}; one-scenario rows: exact intervals (Clopper-Pearson, Tango); {tail[adjust]}"
