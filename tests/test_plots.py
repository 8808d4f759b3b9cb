"""Figures are drawn from a table: every applicable PNG is written and is a real image."""

from __future__ import annotations

from pathlib import Path

import matplotlib.image as mpimg
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest
from matplotlib.axes import Axes
from matplotlib.container import ErrorbarContainer
from matplotlib.text import Text

from harness.report.inference import exact_interval, forest_frame
from harness.report.plots import (
    agent_strategy_heatmap,
    draw_all,
    forest,
    steps_to_recover,
    success_and_recovery,
    success_vs_sweep,
)


def frame(sweep: bool) -> pd.DataFrame:
    rng = np.random.default_rng(0)
    rows = []
    for scenario in ("a", "b"):
        for agent in ("naive", "reader"):
            for strategy in ("is_error", "masked", "collapse", "escape"):
                for seed in range(8):
                    ok = bool(rng.random() < (0.8 if strategy == "is_error" else 0.4))
                    row = {
                        "scenario": scenario, "agent": agent, "strategy": strategy, "host": "typical",
                        "seed": seed, "status": "ok", "success": ok, "recoveries": int(ok),
                        "recovery_opportunities": 1, "recover_steps": [int(rng.integers(1, 6))] if ok else [],
                        "repeated_failing_calls": 0,
                    }  # fmt: skip
                    if sweep:
                        row["faults.rate"] = [0.0, 0.2][seed % 2]
                    rows.append(row)
    return pd.DataFrame(rows)


def test_all_five_figures_for_a_swept_run(tmp_path: Path) -> None:
    written = draw_all(frame(sweep=True), tmp_path, run="test-run")
    assert sorted(p.name for p in written) == [
        "agent_strategy_heatmap.png",
        "forest_paired_difference.png",
        "steps_to_recover.png",
        "success_recovery_by_strategy.png",
        "success_vs_sweep.png",
    ]
    for p in written:
        img = mpimg.imread(p)
        assert img.shape[0] > 200 and img.shape[1] > 200
        assert img.std() > 0.01  # not a blank canvas


def test_no_sweep_figure_without_a_sweep(tmp_path: Path) -> None:
    names = {p.name for p in draw_all(frame(sweep=False), tmp_path, run="r")}
    assert "success_vs_sweep.png" not in names and len(names) == 4


def _texts(ax: Axes, gid: str) -> list[Text]:
    return [t for t in ax.texts if t.get_gid() == gid]


def test_a_group_without_recovery_opportunities_shows_na_not_a_zero_bar() -> None:
    df = frame(sweep=False)
    df.loc[df.scenario == "b", ["recovery_opportunities", "recoveries"]] = 0  # rate undefined in b
    df.loc[(df.scenario == "a") & (df.strategy == "escape"), "recoveries"] = 0  # a measured 0 in a
    fig = success_and_recovery(df, "r")
    recovery = fig.axes[1]
    na = _texts(recovery, "na")
    assert [t.get_text() for t in na] == ["n/a"] * 4  # one per strategy in scenario b, none elsewhere
    assert all(round(t.get_position()[0]) == 1 for t in na)  # scenario b is the second group
    zero = _texts(recovery, "zero")
    assert [(t.get_text(), round(t.get_position()[0])) for t in zero] == [("0", 0)]
    assert any("n/a: no recovery opportunities" in t.get_text() for t in recovery.texts)
    assert not _texts(fig.axes[0], "na")  # every success rate is defined
    plt.close(fig)


def test_the_box_plot_has_a_legend_for_median_and_mean() -> None:
    fig = steps_to_recover(frame(sweep=False), "r")
    legend = fig.axes[0].get_legend()
    assert legend is not None
    labels = [t.get_text() for t in legend.get_texts()]
    assert labels[:2] == ["median", "mean"]
    plt.close(fig)


def test_strategies_with_identical_results_stay_visible_in_the_sweep() -> None:
    df = frame(sweep=True)
    masked = df[df.strategy == "masked"]
    df.loc[df.strategy == "collapse", "success"] = masked.success.to_numpy()  # collapse == masked
    fig = success_vs_sweep(df, "r")
    assert fig is not None
    lines = {str(line.get_label()): line for line in fig.axes[0].get_lines()}
    m, c = lines["masked"], lines["collapse"]
    assert list(m.get_ydata()) == list(c.get_ydata())  # the same values ...
    mx, cx = np.asarray(m.get_xdata(), dtype=float), np.asarray(c.get_xdata(), dtype=float)
    assert np.all(mx != cx)  # ... drawn at different x
    assert m.get_marker() != c.get_marker() and m.get_markersize() > c.get_markersize()
    assert m.get_markerfacecolor() == "none"  # hollow: the smaller marker shows through
    # the ticks still sit on the swept values
    assert [float(x) for x in fig.axes[0].get_xticks()] == [0.0, 0.2]
    plt.close(fig)


def test_a_heatmap_cell_without_sessions_reads_na() -> None:
    df = frame(sweep=False)
    df = df[~((df.agent == "naive") & (df.strategy == "escape"))]
    fig = agent_strategy_heatmap(df, "r")
    na = _texts(fig.axes[0], "na")
    assert [(t.get_text(), t.get_position()) for t in na] == [("n/a", (3, 0))]
    plt.close(fig)


def _segments(ax: Axes, gid: str) -> list[tuple[float, float, float]]:
    """(y, x from, x to) of each horizontal interval of the LineCollection ``gid``."""
    (lines,) = [c for c in ax.collections if c.get_gid() == gid]
    return [(float(seg[0][1]), float(seg[0][0]), float(seg[1][0])) for seg in lines.get_segments()]


def _points(ax: Axes, gid: str) -> list[tuple[float, float]]:
    (line,) = [ln for ln in ax.get_lines() if ln.get_gid() == gid]
    xs = np.asarray(line.get_xdata(), dtype=float)
    ys = np.asarray(line.get_ydata(), dtype=float)
    return list(zip(xs.tolist(), ys.tolist(), strict=True))


def test_the_forest_has_a_row_per_scenario_and_the_pooled_row_of_forest_frame() -> None:
    df = frame(sweep=False)
    df = pd.concat([df, df[df.scenario == "a"].assign(scenario="c")], ignore_index=True)
    fig = forest(df, "r")
    assert fig is not None
    expected = forest_frame(df, baseline="is_error", by=("agent",), unit="scenario", group_params=False)
    panels = [ax for ax in fig.axes if ax.get_visible()]
    assert [ax.get_title() for ax in panels] == ["agent naive", "agent reader"]
    for ax, agent in zip(panels, ("naive", "reader"), strict=True):
        labels = [t.get_text() for t in ax.get_yticklabels()]
        assert labels == ["a", "b", "c", "pooled (3 scenarios)"]  # one row a scenario, then the pooled row
        ticks = dict(zip(labels, ax.get_yticks(), strict=True))
        for strategy in ("masked", "collapse", "escape"):
            mine = expected[(expected.agent == agent) & (expected.strategy == strategy)]
            per, pooled = mine[~mine.pooled], mine[mine.pooled].iloc[0]
            segments = _segments(ax, f"ci:{strategy}")
            assert len(segments) == 3
            for (y, lo, hi), row in zip(segments, per.itertuples(), strict=True):
                assert abs(y - ticks[row.scenario]) < 0.5  # on its scenario's row, offset by strategy
                assert (lo, hi) == (row.lo, row.hi)
            assert [x for x, _ in _points(ax, f"delta:{strategy}")] == list(per.delta)
            ((y, lo, hi),) = _segments(ax, f"pooled-ci:{strategy}")
            assert (lo, hi) == (pooled.lo, pooled.hi)  # forest_frame's pooled interval, as compare's
            assert abs(y - ticks["pooled (3 scenarios)"]) < 0.5
            ((x, _),) = _points(ax, f"pooled:{strategy}")
            assert x == pooled.delta
            (marker,) = [ln for ln in ax.get_lines() if ln.get_gid() == f"pooled:{strategy}"]
            assert marker.get_marker() == "D"
    plt.close(fig)


def test_no_forest_without_the_baseline() -> None:
    df = frame(sweep=False)
    assert forest(df[df.strategy != "is_error"], "r") is None
    assert forest(df[df.strategy == "is_error"], "r") is None


def test_a_scenario_that_always_succeeds_has_an_exact_interval_not_a_zero_width_bar() -> None:
    df = frame(sweep=False)
    df.loc[(df.scenario == "a") & (df.strategy == "is_error"), "success"] = True  # 16 of 16
    fig = success_and_recovery(df, "r")
    errorbar = next(c for c in fig.axes[0].containers if isinstance(c, ErrorbarContainer))  # is_error's
    (segments,) = [c.get_segments() for c in errorbar.lines[2]]
    low, high = segments[0][0][1], segments[0][1][1]  # scenario a's interval
    assert (low, high) == (pytest.approx(exact_interval(16, 16)[0]), 1.0)
    assert high - low > 0.1
    plt.close(fig)


def test_a_forest_of_many_scenarios_draws_the_movers_and_pools_them_all(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import harness.report.plots as plots

    monkeypatch.setattr(plots, "FOREST_MAX_SCENARIOS", 2)
    df = frame(sweep=False)
    df = pd.concat([df, *(df[df.scenario == "a"].assign(scenario=n) for n in ("c", "d"))], ignore_index=True)
    fig = forest(df, "r")
    assert fig is not None
    for ax in (a for a in fig.axes if a.get_visible()):
        labels = [t.get_text() for t in ax.get_yticklabels()]
        assert labels[-1] == "pooled (4 scenarios)"  # the pooled row pools every scenario
        assert len(labels) <= 3  # at most 2 scenario rows
    assert "of 4 scenarios drawn (non-zero differences, largest first)" in fig.get_suptitle()
    plt.close(fig)
