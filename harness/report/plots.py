"""PNG figures from a session table (matplotlib, Agg: no display needed).

Every figure is computed from the table through :func:`harness.report.stats.compare`
(so bars and intervals are the ones ``harness compare`` prints, at ``--unit scenario``)
or :func:`harness.report.inference.forest_frame`, labelled on both axes, and titled
with what it shows and which run it came from. A bar of one scenario carries the exact
(Clopper--Pearson) interval over its sessions, so a scenario that always succeeds shows
[0.94, 1.00] for 60 sessions, never a zero-width bar; a rate pooled over scenarios carries
the t interval over scenarios.

What a reader could mistake is drawn apart: a group without recovery
opportunities (rate undefined) shows "n/a" where its bar would stand, never a
0 bar; the box plot has a legend for its median and mean; in the sweep plot
the strategies are dodged a little along x and drawn with hollow markers of
decreasing size, so that strategies with identical results stay visible. Its x axis
is numeric when the swept values are numbers, and categorical (one tick per value)
when they are strings, booleans or a mix (:func:`sweep_axis`).
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, TypeGuard

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Rectangle
from matplotlib.ticker import MaxNLocator

from harness.report.display import plural
from harness.report.inference import POOLED, forest_frame, split_harness_errors
from harness.report.stats import compare, param_columns

STRATEGY_ORDER = ("is_error", "input_required", "masked", "collapse", "escape")
COLORS = {
    "is_error": "#2a9d8f",
    "input_required": "#264653",
    "masked": "#e9c46a",
    "collapse": "#e76f51",
    "escape": "#6d597a",
}
# Strategies that give identical outcomes draw identical lines; styles keep each one visible.
STYLES = {
    "is_error": ("-", "o"),
    "input_required": ((0, (5, 1)), "P"),
    "masked": ("--", "s"),
    "collapse": (":", "^"),
    "escape": ("-.", "D"),
}
NA = "n/a"
"""Shown where a rate is undefined (no sessions, or no recovery opportunities), instead of a bar."""
NA_COLOR = "0.45"
DODGE = 0.012
"""Horizontal offset between strategies in the sweep plot, as a share of the x range."""
MARKER_SIZES = (10.0, 8.5, 7.0, 5.5, 4.0)
"""Marker sizes by strategy order: coinciding hollow markers nest instead of hiding each other."""
BASELINE = "is_error"
"""The strategy the forest plot pairs the others against (``harness compare``'s default baseline)."""
FOREST_COLUMNS = 3
"""Panels per row of the forest plot (one panel per agent)."""
FOREST_MAX_SCENARIOS = 40
"""Above this many scenarios the forest plot draws only those with a non-zero difference (the
largest first, up to this many); the pooled rows still pool every scenario."""


def _strategies(df: pd.DataFrame) -> list[str]:
    present = set(df["strategy"])
    return [s for s in STRATEGY_ORDER if s in present] + sorted(present - set(STRATEGY_ORDER))


def _bars(
    ax: Axes, table: pd.DataFrame, groups: list[str], value: str, lo: str, hi: str, label: str, na: str
) -> None:
    """Grouped bars with CIs; an undefined value (NaN) shows ``n/a`` in its slot, explained by ``na``."""
    strategies = _strategies(table)
    width = 0.8 / max(1, len(strategies))
    x = np.arange(len(groups))
    any_na = False
    for i, strategy in enumerate(strategies):
        sub = table[table.strategy == strategy].set_index("scenario").reindex(groups)
        vals = sub[value].to_numpy(dtype=float)
        err = np.vstack([vals - sub[lo].to_numpy(dtype=float), sub[hi].to_numpy(dtype=float) - vals])
        err = np.nan_to_num(np.clip(err, 0, None))
        xs = x + (i - (len(strategies) - 1) / 2) * width
        ax.bar(xs, np.nan_to_num(vals), width, yerr=err, capsize=2, label=strategy,
               color=COLORS.get(strategy))  # fmt: skip
        for xi, v in zip(xs, vals, strict=True):
            if np.isnan(v):
                any_na = True
                ax.text(xi, 0.02, NA, rotation=90, ha="center", va="bottom", fontsize=8, color=NA_COLOR,
                        gid="na")  # fmt: skip
            elif v == 0:
                # a measured zero has no bar to see: say 0, so it never reads like n/a or a gap
                ax.text(xi, 0.02, "0", ha="center", va="bottom", fontsize=8, color="0.1", gid="zero")
    if any_na:
        ax.text(0.005, 0.985, f"{NA}: {na}", transform=ax.transAxes, ha="left", va="top", fontsize=8,
                color=NA_COLOR)  # fmt: skip
    ax.set_xticks(x, groups, rotation=30, ha="right", fontsize=8)
    ax.set_ylim(0, 1.05)
    ax.set_ylabel(label)
    ax.grid(axis="y", alpha=0.3)


def success_and_recovery(df: pd.DataFrame, run: str) -> Figure:
    """Success and recovery rate by strategy per scenario, with exact 95% intervals (Clopper--Pearson)."""
    table = compare(df, by=("scenario",), group_params=False, unit="scenario")
    groups = sorted(set(table.scenario))
    fig, axes = plt.subplots(2, 1, figsize=(max(8, len(groups) * 0.9), 8), sharex=True)
    _bars(axes[0], table, groups, "success_rate", "success_lo", "success_hi", "success rate", "no sessions")
    if "recovery_rate" in table:
        _bars(axes[1], table, groups, "recovery_rate", "recovery_lo", "recovery_hi", "recovery rate",
              "no recovery opportunities (no fault the agent could recover from)")  # fmt: skip
    axes[1].set_xlabel("scenario")
    axes[0].legend(title="strategy", ncols=4, fontsize=8)
    pooled = f", pooled over {', '.join(param_columns(df))}" if param_columns(df) else ""
    fig.suptitle(
        f"Success and recovery by error-handling strategy (all agents{pooled}; "
        "exact 95% CI over each scenario's sessions)\n"
        f"run {run}, {len(df)} sessions"
    )
    fig.tight_layout()
    return fig


def steps_to_recover(df: pd.DataFrame, run: str) -> Figure:
    """Distribution of steps from the first fault to the subgoal's success, per strategy."""
    strategies = _strategies(df)
    data = []
    for s in strategies:
        lists: Any = df.loc[df.strategy == s, "recover_steps"] if "recover_steps" in df else []
        data.append([int(v) for lst in lists if lst is not None for v in lst])
    fig, ax = plt.subplots(figsize=(8, 5))
    positions = [i for i, d in enumerate(data) if d]
    if positions:
        box = ax.boxplot([data[i] for i in positions], positions=positions, widths=0.6, showmeans=True)
        handles = [box["medians"][0], box["means"][0], box["fliers"][0]]
        labels = ["median", "mean", "outlier\n(beyond 1.5 IQR)"]
        # Outside the axes: inside it would cover the top outliers.
        ax.legend(handles, labels, fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    for i, d in enumerate(data):
        if not d:
            ax.text(i, 0.5, f"{NA}: no recoveries", transform=ax.get_xaxis_transform(), ha="center",
                    va="center", fontsize=8, color=NA_COLOR, gid="na")  # fmt: skip
    # The count of recoveries under each strategy's name, clear of the boxes and the title.
    ax.set_xticks(range(len(strategies)), [f"{s}\nn={len(d)}" for s, d in zip(strategies, data, strict=True)])
    ax.set_xlabel("strategy (n: recoveries measured)")
    ax.set_ylabel("steps to recover (per recovery)")
    ax.set_title(f"Steps from first fault to recovery, by strategy\nrun {run}", fontsize=10)
    ax.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    return fig


SweepKey = tuple[int, float | str]
"""A swept value's point on the sweep axis: (0, number), (1, boolean as 0/1), (2, text) or (3, missing)."""


def _is_number(value: object) -> TypeGuard[numbers.Real]:
    return isinstance(value, numbers.Real) and not isinstance(value, bool | np.bool_)


def _sweep_key(value: object) -> SweepKey:
    """Numbers by value (2 and 2.0 are one point); booleans apart from them (True is not 1 here)."""
    if isinstance(value, bool | np.bool_):
        return (1, float(value))
    if value is None or value is pd.NA or (_is_number(value) and math.isnan(value)):
        return (3, NA)  # a table with rows that were not swept on this key
    if _is_number(value):
        return (0, float(value))
    return (2, str(value))


def _sweep_label(value: object) -> str:
    if _sweep_key(value)[0] == 3:
        return NA
    if _is_number(value) and not isinstance(value, numbers.Integral):
        return f"{float(value):g}"
    return str(value)


def sweep_axis(values: Iterable[object]) -> tuple[dict[SweepKey, float], list[str], bool]:
    """Each swept value's x (by :func:`_sweep_key`), the tick labels in x order, and whether x is numeric.

    Numbers alone (ints, floats or both) stand at their value. Anything else (strings,
    booleans, a mix of types) is categorical: one point per distinct value at 0, 1, 2, ...,
    numbers first in increasing order, then False and True, then text in alphabetical order,
    then ``n/a`` for rows without a value.

    >>> sweep_axis([0.2, 0, 0.2])
    ({(0, 0.0): 0.0, (0, 0.2): 0.2}, ['0', '0.2'], True)
    >>> sweep_axis(["fixed", "exponential"])
    ({(2, 'exponential'): 0.0, (2, 'fixed'): 1.0}, ['exponential', 'fixed'], False)
    """
    distinct: dict[SweepKey, object] = {}
    for value in values:
        distinct.setdefault(_sweep_key(value), value)
    keys = sorted(distinct)
    numeric = all(kind == 0 for kind, _ in keys)
    positions = {key: float(key[1]) if numeric else float(i) for i, key in enumerate(keys)}
    return positions, [_sweep_label(distinct[key]) for key in keys], numeric


def success_vs_sweep(df: pd.DataFrame, run: str) -> Figure | None:
    """Success rate against the first swept parameter, one line per strategy (None if no sweep)."""
    params = param_columns(df)
    if not params:
        return None
    param = params[0]
    table = compare(df, by=(param,), unit="scenario")
    fig, ax = plt.subplots(figsize=(8, 5))
    strategies = _strategies(table)
    positions, labels, numeric = sweep_axis(table[param])
    ticks = list(positions.values())
    span = ticks[-1] - ticks[0] if len(ticks) > 1 else 1.0
    for i, strategy in enumerate(strategies):
        sub = table[table.strategy == strategy]
        at = np.array([positions[_sweep_key(v)] for v in sub[param]], dtype=float)
        order = np.argsort(at, kind="stable")
        sub, at = sub.iloc[order], at[order]
        # Dodged along x, so that strategies with identical results do not hide each other.
        x = at + (i - (len(strategies) - 1) / 2) * DODGE * span
        line, marker = STYLES.get(strategy, ("-", "o"))
        color = COLORS.get(strategy)
        ax.plot(x, sub.success_rate, linestyle=line, marker=marker, label=strategy, color=color,
                markerfacecolor="none", markeredgewidth=1.5,
                markersize=MARKER_SIZES[min(i, len(MARKER_SIZES) - 1)])  # fmt: skip
        ax.fill_between(x, sub.success_lo.to_numpy(dtype=float), sub.success_hi.to_numpy(dtype=float),
                        alpha=0.15, color=color)  # fmt: skip
    ax.set_xticks(ticks, labels)
    if not numeric:  # categories: as much room beside the first and last as between them
        ax.set_xlim(ticks[0] - 0.5, ticks[-1] + 0.5)
    ax.set_xlabel(f"{param} (strategies offset slightly along x so that equal values stay visible)")
    ax.set_ylabel("success rate")
    ax.set_ylim(0, 1.05)
    ax.legend(title="strategy")
    ax.grid(alpha=0.3)
    ax.set_title(
        f"Success against swept {param} (all agents; 95% t interval over scenarios)\nrun {run}", fontsize=10
    )
    fig.tight_layout()
    return fig


def agent_strategy_heatmap(df: pd.DataFrame, run: str) -> Figure:
    """Success rate for each agent under each strategy."""
    strategies = _strategies(df)
    agents = sorted(set(df.agent))
    grid = df.assign(success=df.success.astype(float)).pivot_table(
        index="agent", columns="strategy", values="success", aggfunc="mean"
    )
    grid = grid.reindex(index=agents, columns=strategies)
    fig, ax = plt.subplots(figsize=(1.6 * len(strategies) + 2, 0.6 * len(agents) + 2))
    values = grid.to_numpy(dtype=float)
    im = ax.imshow(values, vmin=0, vmax=1, cmap="viridis", aspect="auto")
    for i in range(len(agents)):
        for j in range(len(strategies)):
            v = float(values[i, j])
            if np.isnan(v):
                # no sessions of this pair: a hatched cell reading n/a, not a colour of the scale
                ax.add_patch(Rectangle((j - 0.5, i - 0.5), 1, 1, facecolor="white", hatch="//",
                                       edgecolor="0.75", linewidth=0))  # fmt: skip
                ax.text(j, i, NA, ha="center", va="center", color=NA_COLOR, gid="na")
            else:
                ax.text(j, i, f"{v:.2f}", ha="center", va="center", color="white" if v < 0.6 else "black")
    ax.set_xticks(range(len(strategies)), strategies)
    ax.set_yticks(range(len(agents)), agents)
    ax.set_xlabel("strategy")
    ax.set_ylabel("agent")
    fig.colorbar(im, ax=ax, label="success rate")
    ax.set_title(f"Success rate, agent x strategy\nrun {run}", fontsize=10)
    fig.tight_layout()
    return fig


def forest(df: pd.DataFrame, run: str) -> Figure | None:
    """Paired Δ success (strategy - is_error) per scenario with intervals, and pooled; a panel per agent.

    From :func:`harness.report.inference.forest_frame` (by agent, swept parameters pooled,
    pairs still matched on them, ``unit="scenario"``): in each panel one row per scenario, a
    dot at its mean paired difference over seeds with Tango's 95% interval, and below them the
    pooled row, a diamond at the mean over all pairs with the t interval over scenarios
    (``harness compare``'s interval for that agent at ``--unit scenario``). Strategies are
    offset a little along y so that equal differences stay visible. None without is_error
    sessions or another strategy to pair with them.
    """
    if BASELINE not in set(df["strategy"]):
        return None
    frame = forest_frame(df, baseline=BASELINE, by=("agent",), unit="scenario", group_params=False)
    if frame.empty:
        return None
    agents = sorted(set(frame["agent"]))
    scenarios = sorted(set(frame.loc[~frame["pooled"], "scenario"]))
    all_scenarios = len(scenarios)
    if all_scenarios > FOREST_MAX_SCENARIOS:  # a row per scenario would be metres tall: the movers only
        per = frame[~frame["pooled"]].assign(size=lambda f: f["delta"].abs())
        size = per.groupby("scenario")["size"].max()
        movers = size[size > 0].sort_values(ascending=False, kind="stable").head(FOREST_MAX_SCENARIOS)
        scenarios = sorted(map(str, movers.index))
        frame = frame[frame["pooled"] | frame["scenario"].isin(scenarios)]
    strategies = _strategies(frame)
    rows_y = {scenario: float(i) for i, scenario in enumerate(scenarios)}
    pooled_y = len(scenarios) + 0.5
    step = 0.7 / max(1, len(strategies))
    ncols = min(FOREST_COLUMNS, len(agents))
    nrows = -(-len(agents) // ncols)
    height = 0.32 * (len(scenarios) + 2) + 1.4
    legend_h = 0.75  # inches below the panels for the legend
    fig_h = height * nrows + legend_h
    fig, axes = plt.subplots(nrows, ncols, figsize=(4.6 * ncols, fig_h), squeeze=False)
    for ax, agent in zip(axes.flat, agents, strict=False):
        sub = frame[frame["agent"] == agent]
        n_clusters = 0
        for k, strategy in enumerate(strategies):
            mine = sub[sub["strategy"] == strategy]
            if mine.empty:
                continue
            color = COLORS.get(strategy)
            off = (k - (len(strategies) - 1) / 2) * step
            per = mine[~mine["pooled"]]
            ys = np.array([rows_y[str(s)] for s in per["scenario"]]) + off
            ax.hlines(ys, per["lo"], per["hi"], color=color, linewidth=1.2).set_gid(f"ci:{strategy}")
            ax.plot(per["delta"], ys, linestyle="none", marker="o", markersize=4, color=color,
                    gid=f"delta:{strategy}")  # fmt: skip
            pooled = mine[mine["pooled"]]
            y = np.full(len(pooled), pooled_y + off)
            bar = ax.hlines(y, pooled["lo"], pooled["hi"], color=color, linewidth=2.4)
            bar.set_gid(f"pooled-ci:{strategy}")
            ax.plot(pooled["delta"], y, linestyle="none", marker="D", markersize=8, color=color,
                    markeredgecolor="black", markeredgewidth=0.6, gid=f"pooled:{strategy}")  # fmt: skip
            n_clusters = max(n_clusters, int(pooled["n_clusters"].max()))
        ax.axvline(0.0, color="0.3", linewidth=0.8, zorder=0)
        ax.axhline(len(scenarios) - 0.1, color="0.6", linewidth=0.8, linestyle="--")
        pooled_label = f"{POOLED} ({plural(n_clusters, 'scenario')})"
        ax.set_yticks([*rows_y.values(), pooled_y], [*scenarios, pooled_label],
                      fontsize=8)  # fmt: skip
        ax.set_ylim(pooled_y + 0.8, -0.8)  # the first scenario on top, the pooled row at the bottom
        ax.set_xlim(-1.05, 1.05)
        ax.set_xlabel(f"Δ success vs {BASELINE} (paired on seeds)", fontsize=9)
        ax.set_title(f"agent {agent}", fontsize=10)
        ax.grid(axis="x", alpha=0.3)
    for ax in list(axes.flat)[len(agents) :]:
        ax.set_visible(False)
    handles = [Line2D([], [], color=COLORS.get(s), marker="o", linestyle="-", label=s) for s in strategies]
    handles += [
        Line2D([], [], color="0.3", marker="o", markersize=4, linestyle="-",
               label="scenario: mean over seeds, Tango 95% CI"),
        Line2D([], [], color="0.3", marker="D", markersize=8, linewidth=2.4, markeredgecolor="black",
               label="pooled: mean over pairs, 95% t interval over scenarios"),
    ]  # fmt: skip
    fig.legend(handles=handles, loc="lower center", ncols=min(len(handles), 3), fontsize=8, frameon=False)
    pooled_over = f"; pooled over {', '.join(param_columns(df))}" if param_columns(df) else ""
    shown = (
        f"; {len(scenarios)} of {all_scenarios} scenarios drawn (non-zero differences, largest first)"
        if len(scenarios) < all_scenarios
        else ""
    )
    fig.suptitle(
        f"Paired difference in success against {BASELINE}, per scenario and pooled (unit: scenario"
        f"{pooled_over}{shown})\nrun {run}",
        fontsize=10,
    )
    fig.tight_layout(rect=(0, legend_h / fig_h, 1, 1))
    return fig


OWN_SCENARIOS = "the harness's scenarios"
"""The panel of :func:`success_within_calls` that holds every scenario not of a world."""
AGENT_STYLES = {"blind": (0.55, 1.2), "reader": (1.0, 2.0)}
"""Per agent (alpha, line width) in :func:`success_within_calls`: the blind control drawn fainter."""
FOCUS_AGENT = "reader"
"""The agent whose every strategy :func:`success_within_calls` draws (the first agent without it)."""
CONTROL = "blind"
CONTROL_STRATEGIES = ("is_error", "collapse")
"""The control drawn beside it, under the two strategies the headline compares."""


def success_within_calls(df: pd.DataFrame, run: str) -> Figure | None:
    """S(k), the share of sessions succeeding within k tool calls, for every k up to the budget:
    one panel per world (the harness's own scenarios in a panel of their own), a line per strategy
    of the reader (:data:`FOCUS_AGENT`) and, fainter, the blind control's under is_error and
    collapse (:func:`harness.report.curves.survival`; each task weighs the same). None for a
    table without the sessions' budgets (a run before ``max_steps`` was a column)."""
    from harness.report.curves import survival
    from harness.report.worlds import parts, task_of

    data = split_harness_errors(df)[0]  # a wedged session is a failure: only harness errors are left out
    if data.empty or "max_steps" not in data.columns or not (data["max_steps"] > 0).all():
        return None
    agents = sorted(set(data["agent"]))
    focus = FOCUS_AGENT if FOCUS_AGENT in agents else agents[0]
    drawn = data[
        (data["agent"] == focus) | ((data["agent"] == CONTROL) & data["strategy"].isin(CONTROL_STRATEGIES))
    ]
    curves = survival(drawn, lambda s: (parts(s) or (OWN_SCENARIOS,))[0], task_of)
    groups = list(dict.fromkeys(curves["group"]))
    cols = 2 if len(groups) == 4 else min(len(groups), 3)
    rows = math.ceil(len(groups) / cols)
    fig, axes = plt.subplots(rows, cols, figsize=(max(4.6 * cols, 8.0), 3.4 * rows + 1.2), squeeze=False)
    for ax, group in zip(axes.flat, groups, strict=False):
        sub = curves[curves["group"] == group]
        for (agent, strategy), line in sub.groupby(["agent", "strategy"], sort=True):
            alpha, width = AGENT_STYLES.get(str(agent), (0.8, 1.5))
            style = STYLES.get(str(strategy), ("-", "o"))[0]
            ax.step(line["k"], line["share"], where="post", color=COLORS.get(str(strategy), "0.3"),
                    linestyle=style, alpha=alpha, linewidth=width, label=f"{agent} · {strategy}")  # fmt: skip
        # Past the last success the curves are flat up to the budget: the axis stops a little after it.
        last = int(sub.loc[sub["share"] < sub.groupby(["agent", "strategy"])["share"].transform("max"), "k"]
                   .max(skipna=True) if (sub["share"] > 0).any() else 0) + 1  # fmt: skip
        top = int(sub["k"].max())
        ax.set_xlim(-0.3, min(top, max(last + 2, 5)) + 0.3)
        ax.set_title(f"{group} ({plural(int(sub['tasks'].max()), 'task')}; flat from k = {last} to the "
                     f"budget, {top})", fontsize=9)  # fmt: skip
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_xlabel("k: tool calls")
        ax.set_ylabel("share succeeded within k calls")
        ax.set_ylim(-0.02, 1.02)
        ax.grid(alpha=0.3)
    for ax in list(axes.flat)[len(groups) :]:
        ax.set_visible(False)
    handles, labels = axes.flat[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=min(len(labels), 4), fontsize=8, frameon=False)
    fig.suptitle(f"S(k): the share succeeding within k tool calls, every budget (a failure never counts)\n"
                 f"run {run}", fontsize=10)  # fmt: skip
    legend_rows = math.ceil(len(labels) / 4)
    fig.tight_layout(rect=(0, 0.05 + 0.03 * legend_rows, 1, 1))
    return fig


FIGURES: dict[str, Callable[[pd.DataFrame, str], Figure | None]] = {
    "success_within_calls.png": success_within_calls,
    "success_recovery_by_strategy.png": success_and_recovery,
    "steps_to_recover.png": steps_to_recover,
    "success_vs_sweep.png": success_vs_sweep,
    "agent_strategy_heatmap.png": agent_strategy_heatmap,
    "forest_paired_difference.png": forest,
}


def draw_all(df: pd.DataFrame, out: Path, run: str) -> list[Path]:
    """Write every figure that applies to ``df`` into ``out``; return the paths written."""
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for name, make in FIGURES.items():
        fig = make(df, run)
        if fig is None:
            continue
        path = out / name
        fig.savefig(path, dpi=110)
        plt.close(fig)
        written.append(path)
    return written


SIGN_COLORS = {"help": "#2a9d8f", "none": "0.8", "hurt": "#e76f51"}
"""Readable errors help, make no difference, hurt (:data:`harness.report.effects.SIGNS`)."""
EFFECT_FEATURES = 10
"""Features drawn per agent in the effects figure: the ones with the smallest p."""


def effects_figure(effects: pd.DataFrame, features: pd.DataFrame, run: str) -> Figure:
    """Per-scenario effects of readable errors and the features that go with their sign.

    Top left: per agent and other strategy, the share of scenarios that readable errors help
    (Δ = other − is_error at most minus the minimum effect), leave alone, or hurt, with the
    counts (the ``sign`` column). Top right: every scenario's effect Δ (paired mean over seeds
    and swept values), jittered vertically, so the spread behind a pooled mean shows; left of 0
    is_error does better. Below, one panel per agent whose effects are not all zero (against the
    first other strategy): for the features with the smallest p, the difference in mean effect
    between scenarios with and without the feature, with its permutation 95% interval; a filled
    dot when the adjusted p is below 0.05. Input: :func:`harness.report.effects.per_scenario_effects`
    (or :func:`~harness.report.effects.scenario_effects` for a run without factors) and
    :func:`harness.report.effects.feature_table`.
    """
    pairs = effects[["agent", "against"]].drop_duplicates().sort_values(["agent", "against"])
    groups = [(str(agent), str(other)) for agent, other in pairs.itertuples(index=False)]
    movers = [a for a in sorted(set(features["agent"]))] if not features.empty else []
    first = sorted(set(effects["against"]))[0] if not effects.empty else ""
    ncols = max(2, len(movers))
    top_h = 0.32 * len(groups) + 1.3
    bottom_h = 0.3 * EFFECT_FEATURES + 1.6 if movers else 0.0
    fig = plt.figure(figsize=(6.0 * ncols, top_h + bottom_h + 0.6))
    grid = fig.add_gridspec(2 if movers else 1, ncols, height_ratios=[top_h, bottom_h] if movers else [1])
    shares_ax = fig.add_subplot(grid[0, : ncols // 2])
    strip_ax = fig.add_subplot(grid[0, ncols // 2 :])
    labels = [f"{agent} vs {other}" for agent, other in groups]
    ys = np.arange(len(groups), dtype=float)
    rng = np.random.default_rng(0)  # jitter only: the points' x are the data
    for y, (agent, other) in zip(ys, groups, strict=True):
        sub = effects[(effects["agent"] == agent) & (effects["against"] == other)]
        left = 0.0
        for sign in ("help", "none", "hurt"):
            count = int((sub["sign"] == sign).sum())
            share = count / max(1, len(sub))
            shares_ax.barh(
                y, share, left=left, color=SIGN_COLORS[sign], edgecolor="white", gid=f"share:{sign}"
            )
            if count:
                shares_ax.text(left + share / 2, y, str(count), ha="center", va="center", fontsize=7)
            left += share
        values = sub["effect"].to_numpy(dtype=float)
        signs = sub["sign"].to_numpy()
        colors = [SIGN_COLORS[str(sign)] if sign != "none" else "0.6" for sign in signs]
        strip_ax.scatter(values, y + rng.uniform(-0.3, 0.3, len(values)), s=6, c=colors, alpha=0.7)
    for ax in (shares_ax, strip_ax):
        ax.set_yticks(ys, labels, fontsize=8)
        ax.set_ylim(len(groups) - 0.5, -0.5)
    shares_ax.set_xlim(0, 1)
    shares_ax.set_xlabel("share of scenarios (counts in the bars)", fontsize=9)
    shares_ax.set_title("is_error helps / no difference / hurts", fontsize=10)
    strip_ax.axvline(0.0, color="0.3", linewidth=0.8)
    strip_ax.set_xlim(-1.1, 1.1)
    strip_ax.set_xlabel(
        "Δ = success(other) − success(is_error), mean over seeds; < 0: is_error better", fontsize=8
    )
    strip_ax.set_title("every scenario's effect", fontsize=10)
    for i, agent in enumerate(movers):
        ax = fig.add_subplot(grid[1, i])
        sub = features[(features["agent"] == agent) & (features["against"] == first)].head(EFFECT_FEATURES)
        fy = np.arange(len(sub), dtype=float)
        ax.hlines(fy, sub["lo"], sub["hi"], color="0.3", linewidth=1.2)
        strong = (sub["p_adj"] < 0.05).to_numpy()
        ax.plot(sub["difference"][strong], fy[strong], "o", color="0.1", markersize=5)
        ax.plot(
            sub["difference"][~strong], fy[~strong], "o", color="0.1", markerfacecolor="white", markersize=5
        )
        ax.axvline(0.0, color="0.3", linewidth=0.8)
        ax.set_yticks(
            fy, [f"{f} ({n})" for f, n in zip(sub["feature"], sub["n_with"], strict=True)], fontsize=8
        )
        ax.set_ylim(len(sub) - 0.5, -0.5)
        ax.set_xlabel("mean Δ with − without (permutation 95% CI; filled: adjusted p < 0.05)", fontsize=8)
        ax.set_title(f"{agent} vs {first}, by feature", fontsize=9)
        ax.grid(axis="x", alpha=0.3)
    fig.suptitle(f"Per-scenario effect of readable errors (unit: scenario)\nrun {run}", fontsize=10)
    fig.tight_layout()
    return fig
