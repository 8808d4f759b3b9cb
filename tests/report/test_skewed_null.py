"""The test across scenarios under a skewed null: the mean effect is 0, its distribution is not
symmetric (issue 27, item 6).

The primary p-value is the t test of the interval's own model, so it must keep its level where
the interval keeps its coverage; Wilcoxon's signed-rank test, which tests symmetry about 0, does
not, and the more seeds resolve each scenario's effect the more often it rejects a true null.
"""

from __future__ import annotations

import numpy as np
import pytest

from harness.report.calibration import skewed_coverage, skewed_null_pairs
from harness.report.inference import per_scenario_pairs


def test_the_skewed_null_has_mean_zero_and_is_skewed() -> None:
    pairs = skewed_null_pairs(np.random.default_rng(3), scenarios=4000, seeds=200)
    delta = per_scenario_pairs(pairs)["delta"].to_numpy()
    assert abs(delta.mean()) < 0.01
    assert np.median(delta) > 0.1  # most scenarios lean one way, a few far the other
    centred = delta - delta.mean()
    assert (centred**3).mean() / centred.std() ** 3 < -0.5


@pytest.mark.parametrize("scenarios", [30, 200])
def test_the_t_test_keeps_its_level_and_the_interval_its_coverage(scenarios: int) -> None:
    # 600 studies: a rejection rate of 0.05 is measured to within about +-0.018 (two standard errors).
    got = skewed_coverage(600, seed=27, scenarios=scenarios, seeds=5)
    assert 0.93 <= got["coverage"] <= 0.97, got
    assert 0.03 <= got["t"] <= 0.07, got
    # One model: the interval misses 0 exactly when the test rejects (Tango fallbacks included).
    assert got["coverage"] + got["t"] == pytest.approx(1.0)


def test_wilcoxon_rejects_a_skewed_null_that_the_t_test_does_not() -> None:
    # 20 % of scenarios at -0.5, the rest at +0.125; 20 seeds resolve each scenario's effect.
    got = skewed_coverage(300, seed=5, scenarios=200, seeds=20, help_share=0.2, help_effect=-0.5)
    assert 0.03 <= got["t"] <= 0.07, got
    assert got["wilcoxon"] > 0.5, got
