"""Compare statistics on constructed tables whose answers are known by hand."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from harness.report.stats import compare, display_frame, mcnemar, pass_hat_k, to_markdown


def table(base: list[bool], other: list[bool], agent: str = "reader") -> pd.DataFrame:
    rows = []
    for strategy, outcomes in (("is_error", base), ("collapse", other)):
        for seed, ok in enumerate(outcomes):
            rows.append(
                {
                    "scenario": "s",
                    "agent": agent,
                    "strategy": strategy,
                    "host": "typical",
                    "seed": seed,
                    "status": "ok" if strategy == "is_error" or ok else "wedged",
                    "success": ok,
                    "recoveries": int(ok),
                    "recovery_opportunities": 1,
                    "recover_steps": [2] if ok else [],
                    "repeated_failing_calls": 0 if ok else 3,
                }
            )
    return pd.DataFrame(rows)


@pytest.mark.parametrize(
    ("c", "n", "k", "expected"),
    [(10, 10, 3, 1.0), (0, 10, 1, 0.0), (5, 10, 2, 10 / 45), (5, 10, 1, 0.5), (2, 2, 3, math.nan)],
    ids=["all-succeed", "none-succeed", "c5-n10-k2", "k1-is-success-rate", "fewer-trials-than-k"],
)
def test_pass_hat_k_is_c_choose_k_over_n_choose_k(c: int, n: int, k: int, expected: float) -> None:
    got = pass_hat_k(c, n, k)
    assert (math.isnan(got) and math.isnan(expected)) or got == pytest.approx(expected)


def test_mcnemar_counts_discordant_pairs_and_gives_the_exact_binomial_p() -> None:
    base = np.array([True] * 10)
    other = np.array([True] * 5 + [False] * 5)
    b, c, p = mcnemar(base, other)
    assert (b, c) == (5, 0)
    assert p == pytest.approx(2 * 0.5**5)  # two-sided exact: 0.0625
    assert mcnemar(base, base)[2] == 1.0


def test_compare_gives_known_rates_differences_and_paired_test() -> None:
    df = table([True] * 10, [True] * 5 + [False] * 5)
    out = compare(df, by=("agent",), baseline="is_error", k=2).set_index("strategy")
    assert out.loc["is_error", "success_rate"] == 1.0
    assert out.loc["collapse", "success_rate"] == 0.5
    assert out.loc["collapse", "pass_k"] == pytest.approx(10 / 45)
    assert out.loc["collapse", "recovery_rate"] == 0.5
    assert out.loc["collapse", "steps_to_recover"] == 2.0
    assert out.loc["collapse", "repeated_failing_calls"] == 1.5
    assert out.loc["collapse", "wedged_share"] == 0.5
    assert out.loc["collapse", "success_diff"] == -0.5
    assert out.loc["collapse", "n_pairs"] == 10
    assert out.loc["collapse", "mcnemar_p"] == pytest.approx(0.0625)
    lo, hi = out.loc["collapse", "success_lo"], out.loc["collapse", "success_hi"]
    assert 0.0 <= lo < 0.5 < hi <= 1.0
    assert out.loc["collapse", "diff_lo"] < -0.5 < out.loc["collapse", "diff_hi"] <= 0.0
    assert (out.loc["is_error", "success_lo"], out.loc["is_error", "success_hi"]) == (1.0, 1.0)


def test_pairs_are_matched_on_seed_not_on_position() -> None:
    df = table([True, False, True, False], [False, True, False, True])
    shuffled = df.sample(frac=1.0, random_state=3)
    out = compare(shuffled, by=("agent",)).set_index("strategy")
    assert out.loc["collapse", "success_diff"] == 0.0
    assert (out.loc["collapse", "mcnemar_b"], out.loc["collapse", "mcnemar_c"]) == (2, 2)


def test_groups_are_separate_and_swept_parameters_become_groups() -> None:
    a = table([True] * 4, [False] * 4, agent="reader")
    b = table([False] * 4, [False] * 4, agent="naive")
    df = pd.concat(
        [a.assign(**{"faults.rate": 0.1}), b.assign(**{"faults.rate": 0.1}), a.assign(**{"faults.rate": 0.4})]
    )
    out = compare(df, by=("agent",))
    assert set(out.columns) >= {"agent", "faults.rate", "strategy"}
    assert len(out) == 6
    naive = out[(out.agent == "naive") & (out.strategy == "is_error")]
    assert naive.success_rate.item() == 0.0


def test_the_same_table_gives_the_same_intervals() -> None:
    df = table([True, False] * 10, [False, True, False, False] * 5)
    pd.testing.assert_frame_equal(compare(df), compare(df))


@pytest.mark.parametrize("order", [3, 7, 11])
def test_the_same_sessions_in_any_row_order_give_the_same_table(order: int) -> None:
    # Rows come in the order workers finished them, and a resumed run appends the rest:
    # every interval must be a function of the sessions, not of where their rows landed.
    df = pd.concat(
        [
            table([True, False, True] * 7, [False, True, False] * 7, agent="reader"),
            table([True, True, False] * 7, [False, False, True] * 7, agent="naive"),
        ],
        ignore_index=True,
    )
    expected = compare(df, by=("agent",))
    shuffled = df.sample(frac=1.0, random_state=order)
    pd.testing.assert_frame_equal(compare(shuffled, by=("agent",)), expected)


def test_display_and_markdown_show_intervals() -> None:
    out = compare(table([True] * 6, [True, False] * 3))
    md = to_markdown(display_frame(out, k=3))
    assert md.splitlines()[0].startswith("| agent | strategy | n | success |")
    assert "0.50 [" in md
