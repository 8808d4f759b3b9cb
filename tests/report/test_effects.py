"""Per-scenario effects and the feature table: constructed tables with known answers, and calibration.

The tables are built by hand, so every sign and share is known; the calibration draws synthetic
per-scenario effects with a feature that has nothing to do with them and checks that the
feature test's intervals and p-values mean what they say.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from harness.cli.main import cli
from harness.report.effects import (
    FEATURE_COLUMNS,
    SHARE_COLUMNS,
    _welch,
    effect_shares,
    feature_table,
    run_features,
    scenario_effects,
    scenario_features,
)
from harness.sim.scenario import load_scenario

T, F = True, False


def sessions(outcomes: dict[tuple[str, str], list[bool]], agent: str = "reader") -> pd.DataFrame:
    rows = [
        {"scenario": scenario, "agent": agent, "strategy": strategy, "host": "typical", "seed": seed,
         "status": "ok", "success": ok}
        for (scenario, strategy), seq in outcomes.items()
        for seed, ok in enumerate(seq)
    ]  # fmt: skip
    return pd.DataFrame(rows)


def test_effect_is_the_paired_mean_difference_and_its_sign() -> None:
    df = sessions(
        {
            ("a", "is_error"): [T, T, T, T], ("a", "collapse"): [F, F, T, T],  # Δ -0.5: help
            ("b", "is_error"): [T, F, T, F], ("b", "collapse"): [T, F, T, F],  # 0: none
            ("c", "is_error"): [F, F, F, T], ("c", "collapse"): [T, F, F, T],  # Δ +0.25: hurt
        }
    )  # fmt: skip
    eff = scenario_effects(df, against=("collapse", "masked")).set_index("scenario")
    # Δ = strategy − baseline, as the comparison's: readable errors help where it is negative
    assert eff.loc["a", "effect"] == -0.5 and eff.loc["a", "sign"] == "help"
    assert eff.loc["b", "effect"] == 0.0 and eff.loc["b", "sign"] == "none"
    assert eff.loc["c", "effect"] == 0.25 and eff.loc["c", "sign"] == "hurt"
    assert set(eff["against"]) == {"collapse"}  # no masked sessions: nothing to pair
    assert (eff["pairs"] == 4).all()


def test_pairs_match_on_seed_not_on_position() -> None:
    df = sessions({("a", "is_error"): [T, F], ("a", "collapse"): [T, F]})
    shuffled = df.iloc[[3, 0, 2, 1]].reset_index(drop=True)
    assert scenario_effects(shuffled)["effect"].tolist() == [0.0]
    # swap the collapse seeds: the same counts, but now every pair disagrees
    swapped = df.copy()
    swapped.loc[swapped["strategy"] == "collapse", "seed"] = [1, 0]
    assert scenario_effects(swapped)["effect"].tolist() == [0.0]
    assert scenario_effects(swapped)["sign"].tolist() == ["none"]


def test_shares_count_scenarios_and_interval_is_over_scenarios() -> None:
    outcomes: dict[tuple[str, str], list[bool]] = {}
    for i in range(6):
        outcomes[(f"s{i}", "is_error")] = [T, T]
        outcomes[(f"s{i}", "collapse")] = [F, F] if i < 3 else [T, T]
    shares = effect_shares(scenario_effects(sessions(outcomes)))
    row = shares.iloc[0]
    assert list(shares.columns) == list(SHARE_COLUMNS)
    assert (row["help"], row["none"], row["hurt"], row["scenarios"]) == (3, 3, 0, 6)
    assert row["mean_effect"] == pytest.approx(-0.5)
    values = np.array([1, 1, 1, 0, 0, 0], dtype=float)
    from scipy import stats

    half = stats.t.ppf(0.975, 5) * values.std(ddof=1) / math.sqrt(6)
    assert row["lo"] == pytest.approx(max(-1.0, -0.5 - half)) and row["hi"] == pytest.approx(-0.5 + half)


def test_no_difference_anywhere_gets_a_non_degenerate_interval() -> None:
    outcomes = {(f"s{i}", s): [T, F] for i in range(10) for s in ("is_error", "collapse")}
    row = effect_shares(scenario_effects(sessions(outcomes))).iloc[0]
    assert row["none"] == 10 and row["p"] == 1.0
    assert row["lo"] < 0 < row["hi"]  # ten scenarios agreeing do not prove an effect of exactly 0


def test_feature_table_finds_a_planted_feature() -> None:
    outcomes: dict[tuple[str, str], list[bool]] = {}
    features = {}
    for i in range(30):
        planted = i % 3 == 0  # readable errors help exactly where the feature is
        outcomes[(f"s{i:02d}", "is_error")] = [T, T, T]
        outcomes[(f"s{i:02d}", "collapse")] = [F, F, F] if planted else [T, T, T]
        features[f"s{i:02d}"] = {"planted": planted, "parity": i % 2 == 0}
    feats = pd.DataFrame.from_dict(features, orient="index")
    table = feature_table(scenario_effects(sessions(outcomes)), feats)
    assert list(table.columns) == list(FEATURE_COLUMNS)
    planted = table.set_index("feature").loc["planted"]
    assert planted["help_with"] == 1.0 and planted["help_without"] == 0.0
    assert planted["difference"] == pytest.approx(-1.0) and planted["p_adj"] < 0.001
    parity = table.set_index("feature").loc["parity"]
    assert parity["p"] > 0.05 and parity["lo"] < 0 < parity["hi"]
    assert table["feature"].iloc[0] == "planted"  # sorted by p


def test_feature_table_skips_agents_without_effects_and_small_groups() -> None:
    outcomes = {(f"s{i}", s): [T] for i in range(12) for s in ("is_error", "collapse")}
    feats = pd.DataFrame({"x": [i < 6 for i in range(12)]}, index=[f"s{i}" for i in range(12)])
    assert feature_table(scenario_effects(sessions(outcomes)), feats).empty
    outcomes[("s0", "collapse")] = [F]
    rare = pd.DataFrame({"rare": [i < 2 for i in range(12)]}, index=[f"s{i}" for i in range(12)])
    assert feature_table(scenario_effects(sessions(outcomes)), rare, min_group=5).empty
    assert len(feature_table(scenario_effects(sessions(outcomes)), rare, min_group=2)) == 1


def test_welch_interval_matches_scipy() -> None:
    from scipy import stats

    rng = np.random.default_rng(1)
    a, b = rng.normal(0.3, 1, 20), rng.normal(0, 2, 35)
    diff, lo, hi = _welch(a, b, 0.95)
    ref = stats.ttest_ind(a, b, equal_var=False).confidence_interval(0.95)
    assert (lo, hi) == (pytest.approx(ref.low), pytest.approx(ref.high))
    assert diff == pytest.approx(a.mean() - b.mean())


def test_feature_test_is_calibrated_under_the_null() -> None:
    """Sign-like effects (mostly 0, some +1/-1) with a feature drawn independently of them: the
    95 % Welch interval covers 0 and the Mann-Whitney test rejects at 0.05 about as often as
    they should. 600 synthetic studies of 60 scenarios."""
    rng = np.random.default_rng(20261203)
    covered, rejected, studies = 0, 0, 600
    from scipy import stats

    for _ in range(studies):
        effect = rng.choice([-1.0, 0.0, 0.0, 0.0, 1.0, 1.0], size=60)
        has = rng.random(60) < 0.4
        if has.sum() < 5 or (~has).sum() < 5:
            has[:5], has[-5:] = True, False
        _, lo, hi = _welch(effect[has], effect[~has], 0.95)
        covered += lo <= 0 <= hi
        rejected += stats.mannwhitneyu(effect[has], effect[~has], alternative="two-sided").pvalue < 0.05
    assert 0.925 <= covered / studies <= 0.975
    assert 0.025 <= rejected / studies <= 0.075


def test_scenario_features_read_the_scenario() -> None:
    feats = scenario_features(load_scenario("retired_fetch"))
    assert feats["budget"] == load_scenario("retired_fetch").max_steps
    assert any(k.startswith("kind:") for k in feats) and any(k.startswith("quality:") for k in feats)
    frame = run_features(["retired_fetch", "flaky_weather"])
    assert frame.dtypes.map(lambda d: d == bool).all()  # noqa: E721
    assert set(frame.index) == {"retired_fetch", "flaky_weather"}


def test_family_source_names_its_family(tmp_path: Path) -> None:
    out = tmp_path / "fr"
    result = CliRunner().invoke(
        cli, ["run", "--family", "message-quality", "--count", "6", "--seeds", "2", "--agents", "reader",
              "--strategies", "is_error,collapse", "--out", str(out), "--executor", "serial"],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    shown = CliRunner().invoke(cli, ["effects", str(out), "--format", "json", "--min-group", "2"])
    assert shown.exit_code == 0, shown.output
    doc = json.loads(shown.output)
    assert doc["unit"] == "scenario" and doc["against"] == ["collapse"]
    assert {r["agent"] for r in doc["shares"]} == {"reader"}
    assert sum(r["help"] + r["none"] + r["hurt"] for r in doc["shares"]) == 6
    assert len(doc["effects"]) == 6
    # every sampled scenario carries its family; a feature no scenario lacks is never tested
    assert all(r["feature"] != "family:message-quality" for r in doc["features"])
    from harness.batch.results import ResultsDir

    sources = ResultsDir.open(out).manifest["scenario_sources"]
    assert run_features(sorted(sources), sources)["family:message-quality"].all()
    plot = tmp_path / "effects.png"
    drawn = CliRunner().invoke(cli, ["effects", str(out), "--plot", str(plot)])
    assert drawn.exit_code == 0, drawn.output
    assert plot.stat().st_size > 10_000


def test_effects_usage_errors(tmp_path: Path) -> None:
    out = tmp_path / "r"
    ran = CliRunner().invoke(
        cli, ["run", "flaky_weather", "--seeds", "2", "--agents", "reader", "--strategies", "is_error",
              "--out", str(out), "--executor", "serial"],
    )  # fmt: skip
    assert ran.exit_code == 0, ran.output
    result = CliRunner().invoke(cli, ["effects", str(out)])
    assert result.exit_code == 2 and "--against" in result.output and "Traceback" not in result.output
    result = CliRunner().invoke(cli, ["effects", str(out), "--baseline", "masked"])
    assert result.exit_code == 2 and "--baseline masked" in result.output


@pytest.mark.parametrize(
    ("against", "says"),
    [
        ("collapse,foo", "unknown strategy 'foo'"),
        ("masked", "--against masked: no sessions with that strategy"),
        ("is_error", "--against is_error: that is the --baseline"),
        ("", "--against: give at least one strategy"),
    ],
)
def test_effects_refuses_an_against_it_cannot_pair(tmp_path: Path, against: str, says: str) -> None:
    out = tmp_path / "r"
    ran = CliRunner().invoke(
        cli, ["run", "flaky_weather", "--seeds", "2", "--agents", "reader", "--strategies",
              "is_error,collapse", "--out", str(out), "--executor", "serial"],
    )  # fmt: skip
    assert ran.exit_code == 0, ran.output
    result = CliRunner().invoke(cli, ["effects", str(out), "--against", against])
    assert result.exit_code == 2 and says in result.output, result.output
    assert len(result.output.strip().splitlines()) == 1
