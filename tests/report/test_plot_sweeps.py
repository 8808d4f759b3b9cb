"""Every figure is drawn whatever the type of the swept values: numbers on a numeric axis,
strings, booleans and mixtures on a categorical one (issue 25, item 5)."""

from __future__ import annotations

from itertools import product
from pathlib import Path

import matplotlib.image as mpimg
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest

from harness.batch.results import load_run
from harness.report.plots import FIGURES, draw_all, success_vs_sweep, sweep_axis
from tests.helpers.cli import cli

KEY = "agent.backoff"


def swept(values: list[object]) -> pd.DataFrame:
    """Two scenarios x two agents x three strategies x 4 seeds, once per swept value."""
    rng = np.random.default_rng(1)
    rows = []
    cells = product(values, ("a", "b"), ("naive", "reader"), ("is_error", "masked", "collapse"), range(4))
    for value, scenario, agent, strategy, seed in cells:
        ok = bool(rng.random() < (0.8 if strategy == "is_error" else 0.4))
        rows.append({
            "scenario": scenario, "agent": agent, "strategy": strategy, "host": "typical", "seed": seed,
            "status": "ok", "success": ok, "recoveries": int(ok), "recovery_opportunities": 1,
            "recover_steps": [int(rng.integers(1, 6))] if ok else [], "repeated_failing_calls": 0, KEY: value,
            "tool_calls": int(rng.integers(1, 9)), "steps": 9, "max_steps": 20,
        })  # fmt: skip
    return pd.DataFrame(rows)


# (values in the order swept, tick labels in axis order, ticks or None for categories 0, 1, ...)
CASES: dict[str, tuple[list[object], list[str], list[float] | None]] = {
    "int": ([40, 10, 20], ["10", "20", "40"], [10.0, 20.0, 40.0]),
    "float": ([0.25, 0.0, 0.1], ["0", "0.1", "0.25"], [0.0, 0.1, 0.25]),
    "int-and-float": ([0, 0.5, 2], ["0", "0.5", "2"], [0.0, 0.5, 2.0]),
    "bool": ([True, False], ["False", "True"], None),
    "str": (["fixed", "exponential", "none"], ["exponential", "fixed", "none"], None),
    "str-of-bools": (["true", "false"], ["false", "true"], None),  # what --set k=true,false records
    "number-and-str": (["none", 0.5, 2], ["0.5", "2", "none"], None),
    "bool-and-str": (["x", True], ["True", "x"], None),
    "bool-and-float": ([True, 0.5], ["0.5", "True"], None),
}
PARQUET = ("int", "float", "int-and-float", "bool", "str", "str-of-bools")
"""The cases a results table can hold (one type per column): these also go through parquet."""


@pytest.mark.parametrize(
    ("case", "via_parquet"),
    [(case, False) for case in CASES] + [(case, True) for case in PARQUET],
    ids=[case for case in CASES] + [f"{case}-parquet" for case in PARQUET],
)
def test_every_figure_is_drawn_for_swept_values_of_any_type(
    case: str, via_parquet: bool, tmp_path: Path
) -> None:
    values, labels, ticks = CASES[case]
    df = swept(values)
    if via_parquet:
        df.to_parquet(tmp_path / "sessions.parquet")
        df = pd.read_parquet(tmp_path / "sessions.parquet")
    written = draw_all(df, tmp_path / "plots", run="r")
    assert sorted(p.name for p in written) == sorted(FIGURES)
    for p in written:
        img = mpimg.imread(p)
        assert img.shape[0] > 200 and img.shape[1] > 200 and img.std() > 0.01

    fig = success_vs_sweep(df, "r")
    assert fig is not None
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.get_xticklabels()] == labels
    expected = ticks if ticks is not None else [float(i) for i in range(len(values))]
    assert list(ax.get_xticks()) == pytest.approx(expected)
    lines = [line for line in ax.get_lines() if not str(line.get_label()).startswith("_")]
    assert [line.get_label() for line in lines] == ["is_error", "masked", "collapse"]
    span = expected[-1] - expected[0]
    for line in lines:  # one point per value, beside its tick (dodged by a little), in axis order
        xs = np.asarray(line.get_xdata(), dtype=float)
        assert np.abs(xs - np.asarray(expected)).max() < 0.05 * span
    plt.close(fig)


def test_the_sweep_axis_is_numeric_only_for_numbers() -> None:
    assert sweep_axis([0.2, 0, 0.2]) == ({(0, 0.0): 0.0, (0, 0.2): 0.2}, ["0", "0.2"], True)
    assert sweep_axis(np.array([3, 1], dtype=np.int64))[1:] == (["1", "3"], True)
    assert sweep_axis(np.array([True, False]))[1:] == (["False", "True"], False)
    assert sweep_axis(["b", "a"])[1:] == (["a", "b"], False)
    assert sweep_axis([1.5, None, float("nan"), pd.NA])[1:] == (["1.5", "n/a"], False)


@pytest.mark.parametrize(
    ("sweep", "labels"),
    [
        (["agent.backoff=fixed,exponential"], ["exponential", "fixed"]),  # docs/agents.md's example
        (["faults.quality=explicit,vague"], ["explicit", "vague"]),
        (["faults.explicit=true,false"], ["false", "true"]),
        (["agent.retry_budget=4,2", "agent.backoff=fixed,exponential"], ["2", "4"]),
    ],
    ids=["backoff", "quality", "explicit", "two-sweeps"],
)
def test_harness_plot_draws_all_five_figures_of_a_sweep(
    sweep: list[str], labels: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "run"
    sets = [arg for item in sweep for arg in ("--set", item)]
    code, _, err = cli(
        ["run", "flaky_weather", "--agents", "reader,retry", "--strategies", "is_error,collapse",
         "--seeds", "2", *sets, "--executor", "serial", "--no-compare", "--out", str(out)],
        capsys,
    )  # fmt: skip
    assert code == 0, err
    code, printed, err = cli(["plot", str(out)], capsys)
    assert code == 0, err
    assert sorted(Path(line).name for line in printed.split()) == sorted(FIGURES)
    df, _ = load_run(out)
    fig = success_vs_sweep(df, "r")
    assert fig is not None
    assert [t.get_text() for t in fig.axes[0].get_xticklabels()] == labels
    plt.close(fig)
