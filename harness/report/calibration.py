"""Calibration of the pooled interval for a paired difference, on synthetic studies with no effect.

Each study draws sessions for two strategies that succeed with the same probability in every
scenario (:func:`synthetic_pairs`), so the true paired difference is 0 and a 95 % interval
should cover 0 in about 95 % of studies. :func:`coverage` counts how often it does, for the
interval over scenarios (``unit="scenario"``, what ``harness compare`` shows by default), the
interval over sessions (``unit="session"``), and, for comparison, the percentile bootstrap over
scenarios that the t interval replaced. ``tests/report/test_inference.py`` runs a small study
as a test; the figures in ``docs/results.md`` come from::

    python -m harness.report.calibration --scenarios 15 30 --repetitions 4000

which prints one line per number of scenarios (about a minute on one core).

A second null (:func:`skewed_null_pairs`) has a true mean difference of 0 but a skewed spread of
per-scenario effects, as the study's is: a large effect in a few scenarios, a small one the other
way in many. There Wilcoxon's signed-rank test, whose null is symmetry about 0, rejects more often
the more scenarios there are, while the t test of :func:`~harness.report.inference.scenario_difference`
(the interval's own) keeps its level. :func:`skewed_coverage` counts both, and the coverage of the
interval; ``--skewed`` prints them::

    python -m harness.report.calibration --skewed --scenarios 15 30 200 --repetitions 2000
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Sequence

import numpy as np
import pandas as pd

from harness.report.inference import (
    cluster_bootstrap,
    difference_interval,
    paired_summary,
    per_scenario_pairs,
)

UNITS_SHOWN = ("scenario", "session", "scenario-percentile")


def synthetic_pairs(rng: np.random.Generator, scenarios: int = 30, seeds: int = 20) -> pd.DataFrame:
    """One study with no true difference: both strategies have each scenario's probability.

    A scenario's base probability p comes from Beta(2, 1). For each strategy the scenario has one
    outcome of its own (a draw with probability p) that 80 % of its seeds repeat, as a scenario
    with one fault schedule repeats its outcome; the other seeds take the seed's own draw (also
    probability p), which both strategies share, as they share the seed's fault schedule. Every
    session succeeds with probability p under either strategy, and within a scenario sessions
    agree far more than across scenarios. Returns the pairs as
    :func:`~harness.report.inference.paired_summary` takes them: columns ``scenario``,
    ``other``, ``base``.
    """
    p = rng.beta(2.0, 1.0, size=scenarios)
    scen = np.repeat(np.arange(scenarios), seeds)
    shared = rng.random(scen.size) < p[scen]
    out = {}
    for strategy in ("is_error", "collapse"):
        own = rng.random(scenarios) < p
        repeat = rng.random(scen.size) < 0.8
        out[strategy] = np.where(repeat, own[scen], shared)
    return pd.DataFrame(
        {"scenario": [f"s{j:02d}" for j in scen], "other": out["collapse"], "base": out["is_error"]}
    )


def coverage(
    repetitions: int,
    seed: int,
    n_resamples: int,
    *,
    scenarios: int = 30,
    seeds: int = 20,
    percentile: bool = False,
) -> dict[str, float]:
    """Share of synthetic studies whose pooled 95 % interval for the paired difference covers 0.

    Keys ``scenario`` and ``session`` (the interval of ``harness compare``'s paired difference at
    that unit, :func:`~harness.report.inference.difference_interval`),
    and with ``percentile`` also ``scenario-percentile``: the percentile bootstrap over the
    scenarios' totals (:func:`~harness.report.inference.cluster_bootstrap`). Study ``rep`` draws
    its bootstrap from ``default_rng(rep)``; the studies themselves from ``default_rng(seed)``.
    """
    rng = np.random.default_rng(seed)
    units = ["scenario", "session"]
    covered = dict.fromkeys([*units, *(["scenario-percentile"] if percentile else [])], 0)
    for rep in range(repetitions):
        pairs = synthetic_pairs(rng, scenarios=scenarios, seeds=seeds)
        for unit in units:
            lo, hi, _ = difference_interval(
                pairs, unit=unit, rng=np.random.default_rng(rep), n_resamples=n_resamples
            )
            covered[unit] += lo <= 0.0 <= hi
        if percentile:
            per = per_scenario_pairs(pairs)
            net, n = per["net"].to_numpy(dtype=float), per["pairs"].to_numpy(dtype=float)
            lo, hi = cluster_bootstrap(net, n, rng=np.random.default_rng(rep), n_resamples=n_resamples)
            covered["scenario-percentile"] += lo <= 0.0 <= hi
    return {unit: hits / repetitions for unit, hits in covered.items()}


HELP_SHARE = 0.3
HELP_EFFECT = -0.4
"""The skewed null's default: 30 % of scenarios have effect -0.4, the rest +0.4 * 0.3 / 0.7."""


def skewed_null_pairs(
    rng: np.random.Generator,
    scenarios: int = 30,
    seeds: int = 5,
    *,
    help_share: float = HELP_SHARE,
    help_effect: float = HELP_EFFECT,
) -> pd.DataFrame:
    """One study whose per-scenario effects have mean 0 and a skewed distribution.

    Each scenario is, with probability ``help_share``, one where readable errors help: its true
    paired difference (collapse − is_error) is ``help_effect``; otherwise it is one where they
    hurt a little, by −help_effect · help_share / (1 − help_share), so that the mean over
    scenarios is exactly 0 (defaults: −0.4 in 30 % of scenarios, +0.17 in 70 %: skewness about
    −0.9). is_error succeeds with a probability p drawn uniformly where both p and p + effect
    lie in [0, 1]; a seed draws one uniform u and each strategy succeeds when u is below its
    probability, so the two disagree only as the effect requires and always the same way (a
    scenario's seeds share its fault schedule). Returns ``scenario``, ``other``, ``base``, as
    :func:`synthetic_pairs`.
    """
    small = -help_effect * help_share / (1 - help_share)
    helps = rng.random(scenarios) < help_share
    effect = np.where(helps, help_effect, small)
    low = np.maximum(0.0, -effect)
    high = np.minimum(1.0, 1.0 - effect)
    p = low + (high - low) * rng.random(scenarios)
    u = rng.random((scenarios, seeds))
    base = u < p[:, None]
    other = u < (p + effect)[:, None]
    scen = np.repeat(np.arange(scenarios), seeds)
    return pd.DataFrame(
        {"scenario": [f"s{j:03d}" for j in scen], "other": other.ravel(), "base": base.ravel()}
    )


def skewed_coverage(
    repetitions: int,
    seed: int,
    *,
    scenarios: int = 30,
    seeds: int = 5,
    help_share: float = HELP_SHARE,
    help_effect: float = HELP_EFFECT,
) -> dict[str, float]:
    """On :func:`skewed_null_pairs` studies: the share whose 95 % interval over scenarios covers 0
    (``coverage``), whose primary test rejects at 0.05 (``t``:
    :func:`~harness.report.inference.paired_summary`'s ``p``, the t test, or the score test where
    the interval is Tango's) and whose Wilcoxon
    (or sign) test does (``wilcoxon``: its ``p_wilcoxon``)."""
    rng = np.random.default_rng(seed)
    covered = rejected = rank_rejected = 0
    for rep in range(repetitions):
        pairs = skewed_null_pairs(rng, scenarios, seeds, help_share=help_share, help_effect=help_effect)
        row = paired_summary(pairs, unit="scenario", rng=np.random.default_rng(rep))
        covered += row["diff_lo"] <= 0.0 <= row["diff_hi"]
        rejected += row["p"] < 0.05
        rank_rejected += row["p_wilcoxon"] < 0.05
    return {
        "coverage": covered / repetitions,
        "t": rejected / repetitions,
        "wilcoxon": rank_rejected / repetitions,
    }


def main(argv: Sequence[str] | None = None) -> int:
    """Print the coverage of each interval for each number of scenarios asked for."""
    parser = argparse.ArgumentParser(prog="python -m harness.report.calibration", description=__doc__)
    parser.add_argument("--scenarios", type=int, nargs="+", default=[15, 30])
    parser.add_argument("--seeds", type=int, default=20, help="sessions per scenario and strategy")
    parser.add_argument("--repetitions", type=int, default=4000, help="synthetic studies per line")
    parser.add_argument("--resamples", type=int, default=1000, help="bootstrap resamples per interval")
    parser.add_argument("--seed", type=int, default=17)
    parser.add_argument(
        "--skewed", action="store_true",
        help="the skewed null instead: coverage of the interval and rejection by the t and Wilcoxon tests",
    )  # fmt: skip
    parser.add_argument(
        "--help-share", type=float, default=HELP_SHARE, help="--skewed: share of helped scenarios"
    )
    parser.add_argument("--help-effect", type=float, default=HELP_EFFECT, help="--skewed: their effect")
    args = parser.parse_args(argv)
    if args.skewed:
        small = -args.help_effect * args.help_share / (1 - args.help_share)
        print(f"skewed null: effect {args.help_effect:+g} in {args.help_share:.0%} of scenarios, "
              f"{small:+.3f} in the rest (mean 0); {args.repetitions} studies per line")  # fmt: skip
        for m in args.scenarios:
            start = time.perf_counter()
            got = skewed_coverage(args.repetitions, args.seed, scenarios=m, seeds=args.seeds,
                                  help_share=args.help_share, help_effect=args.help_effect)  # fmt: skip
            print(f"{m} scenarios x {args.seeds} seeds: interval covers 0 in {got['coverage']:.3f}, t test "
                  f"rejects {got['t']:.3f}, Wilcoxon rejects {got['wilcoxon']:.3f} "
                  f"({time.perf_counter() - start:.0f} s)")  # fmt: skip
        return 0
    print(f"coverage of 0 by the 95% interval of a null paired difference, {args.repetitions} studies")
    for m in args.scenarios:
        start = time.perf_counter()
        got = coverage(args.repetitions, args.seed, args.resamples, scenarios=m, seeds=args.seeds,
                       percentile=True)  # fmt: skip
        shown = ", ".join(f"{unit} {got[unit]:.3f}" for unit in UNITS_SHOWN)
        print(f"{m} scenarios x {args.seeds} seeds: {shown} ({time.perf_counter() - start:.0f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
