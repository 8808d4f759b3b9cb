"""``harness effects``: how the effect of readable errors spreads over scenarios, and what goes with it."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import click
import pandas as pd

from harness.batch.grid import split_names
from harness.cli.compare import ADJUSTMENTS, print_table
from harness.errors import UserError, unknown_name

FORMATS = ("table", "markdown", "json")


def _pct(value: float) -> str:
    if 0 < value < 0.01:
        return "<1%"  # one scenario in 200 is not "0%"
    return f"{100 * value:.0f}%"


def _ci(value: float, lo: float, hi: float) -> str:
    if math.isnan(value):
        return "–"
    if any(math.isnan(v) for v in (value, lo, hi)):
        return f"{value:+.2f}"
    return f"{value:+.2f} [{lo:+.2f}, {hi:+.2f}]"


def _p(value: float) -> str:
    return "–" if math.isnan(value) else f"{value:.2g}"


def _counts(counts: pd.Series, totals: pd.Series) -> list[str]:
    return [f"{c} ({_pct(c / n)})" for c, n in zip(counts, totals, strict=True)]


def _pairs(left: pd.Series, right: pd.Series) -> list[str]:
    return [f"{_pct(a)}/{_pct(b)}" for a, b in zip(left, right, strict=True)]


def _intervals(value: pd.Series, lo: pd.Series, hi: pd.Series) -> list[str]:
    return [_ci(*r) for r in zip(value, lo, hi, strict=True)]


def _signs(frame: pd.DataFrame, baseline: str, min_effect: float) -> dict[str, list[str]]:
    total = frame["scenarios"]
    return {
        f"help ({baseline} better by ≥ {min_effect:g})": _counts(frame["help"], total),
        f"no difference (−{min_effect:g} < Δ < +{min_effect:g})": _counts(frame["none"], total),
        f"hurt (worse by ≥ {min_effect:g})": _counts(frame["hurt"], total),
    }


def shown_shares(
    shares: pd.DataFrame, baseline: str = "is_error", min_effect: float | None = None
) -> pd.DataFrame:
    """The shares table as printed: the mean Δ with its interval and test first (the headline),
    then the scenarios counted against the minimum effect."""
    fallback = float(shares["min_effect"].iloc[0]) if len(shares) else 0.1
    m = min_effect if min_effect is not None else fallback
    return pd.DataFrame(
        {
            "agent": shares["agent"],
            "strategy": shares["against"],
            "n": shares["scenarios"],
            f"mean Δ (strategy − {baseline}) [95% CI]": _intervals(
                shares["mean_effect"], shares["lo"], shares["hi"]
            ),
            "test": shares["test"],
            "p adj": [_p(v) for v in shares["p_adj"]],
            **_signs(shares, baseline, m),
        }
    )


def shown_groups(table: pd.DataFrame, baseline: str, min_effect: float) -> pd.DataFrame:
    """A per-family or per-value table as printed (:func:`harness.report.effects.group_table`,
    :func:`~harness.report.effects.value_table`)."""
    out = pd.DataFrame(
        {
            "agent": table["agent"],
            "strategy": table["against"],
            str(table["by"].iloc[0]) if len(table) and table["by"].nunique() == 1 else "by": table["group"],
            "n": table["scenarios"],
            f"mean Δ (strategy − {baseline}) [95% CI]": _intervals(
                table["mean_effect"], table["lo"], table["hi"]
            ),
            "p adj": [_p(v) for v in table["p_adj"]],
            **_signs(table, baseline, min_effect),
        }
    )
    if "vs_reference" in table.columns and len(table):
        ref = str(table["reference"].iloc[0])
        out[f"Δ − Δ at {ref}, paired [95% CI]"] = [
            "–" if g == r else _ci(v, lo, hi)
            for g, r, v, lo, hi in zip(
                table["group"],
                table["reference"],
                table["vs_reference"],
                table["vs_lo"],
                table["vs_hi"],
                strict=True,
            )
        ]
        out["p adj (paired)"] = [_p(v) for v in table["p_vs_adj"]]
    return out


def shown_features(table: pd.DataFrame, top: int) -> pd.DataFrame:
    """The feature table as printed: the ``top`` rows by p of each agent and other strategy."""
    head = table.groupby(["agent", "against"], sort=True).head(top) if top else table
    out = pd.DataFrame(
        {
            "agent": head["agent"],
            "strategy": head["against"],
            "feature": head["feature"],
            "n": [f"{a}/{b}" for a, b in zip(head["n_with"], head["n_without"], strict=True)],
            "help with/without": _pairs(head["help_with"], head["help_without"]),
            "hurt with/without": _pairs(head["hurt_with"], head["hurt_without"]),
            "mean Δ with − without [95% CI]": [
                _ci(v, lo, hi) if not math.isnan(lo) else f"{v:+.2f} [no interval]"
                for v, lo, hi in zip(head["difference"], head["lo"], head["hi"], strict=True)
            ],
            "p (permutation)": [_p(v) for v in head["p"]],
            "p adj": [_p(v) for v in head["p_adj"]],
            "p (Mann-Whitney)": [_p(v) for v in head["p_mannwhitney"]],
        }
    )
    if head["note"].astype(bool).any():
        out["note"] = [n or "" for n in head["note"]]
    return out


WORLD_TITLES: dict[str, str] = {
    "fault_kinds": "per fault kind (the scenarios with it; a scenario counts in each of its kinds); Δ "
    "success = the strategy − is_error; Δ calls = the same over pairs where both succeeded",
    "worlds": "worlds: per world, the unit the task (its seeds and conditions averaged); Δ success = the "
    "strategy − is_error; Δ calls = the strategy − is_error, over pairs where both succeeded",
    "kinds": "worlds: per failure kind (our upstream kinds, the world's events, AgentDojo's injections); "
    "the unit the task",
    "blind": "worlds: reading against the blind control, per world: Δ = reader − blind under the same "
    "strategy (success; calls over pairs where both succeeded)",
    "blind_kinds": "worlds: reading against the blind control, per failure kind",
    "security": "worlds: AgentDojo's own security verdicts (breached: the injection task's goal met)",
}
"""The world sections of ``harness effects``, by their JSON key."""


ALL_WORLDS = "all worlds"
"""The group of every world task (each task once, its conditions averaged)."""


def _world_tables(
    df: pd.DataFrame, names: list[str], sources: dict[str, str], baseline: str, others: list[str], adjust: str
) -> dict[str, pd.DataFrame]:
    """Success and calls per fault kind for the harness's own scenarios, and the worlds study's
    tables (:mod:`harness.report.worlds`) for world scenarios."""
    from harness.report.worlds import (
        contrast_table,
        failure_kinds,
        matched,
        parts,
        security_table,
        world_scenarios,
    )
    from harness.worlds.scenario import load_source

    chosen = world_scenarios(names)
    own = [n for n in names if n not in set(chosen)]
    out: dict[str, pd.DataFrame] = {}
    if own:  # the harness's own scenarios: the effect per fault kind (a scenario in each of its kinds)
        own_kinds = {n: sorted({r.kind for r in load_source(sources.get(n, n), ()).faults}) or ["none"]
                     for n in own}  # fmt: skip
        pairs = matched(df[df["scenario"].isin(own)], column="strategy", base=baseline, others=others)
        out["fault_kinds"] = contrast_table(pairs, own_kinds, by="fault kind", adjust=adjust)
    if not chosen:
        return out

    kinds = failure_kinds(chosen, lambda n: [r.kind for r in load_source(sources.get(n, n), ()).faults])
    worlds = {n: [(parts(n) or ("",))[0], ALL_WORLDS] for n in chosen}
    mine = df[df["scenario"].isin(chosen)]
    by_strategy = matched(mine, column="strategy", base=baseline, others=others)
    out["worlds"] = contrast_table(by_strategy, worlds, by="world", adjust=adjust)
    out["kinds"] = contrast_table(by_strategy, kinds, by="failure kind", adjust=adjust)
    readers = [a for a in ("reader", "refresher") if a in set(mine["agent"])]
    if "blind" in set(mine["agent"]) and readers:
        by_agent = matched(mine, column="agent", base="blind", others=readers)
        keys = ("strategy", "other")
        out["blind"] = contrast_table(by_agent, worlds, by="world", keys=keys, adjust=adjust)
        out["blind_kinds"] = contrast_table(by_agent, kinds, by="failure kind", keys=keys, adjust=adjust)
    out["security"] = security_table(mine)
    return out


def shown_world(frame: pd.DataFrame, key: str) -> pd.DataFrame:
    """A world table as printed."""
    if key == "security":
        return frame
    first = "agent" if "agent" in frame.columns else "strategy"
    return pd.DataFrame(
        {
            first: frame[first],
            "vs" if first == "strategy" else "strategy": frame["other"],
            str(frame["by"].iloc[0]) if len(frame) else "group": frame["group"],
            "tasks": frame["tasks"],
            "success": [
                f"{a:.2f} → {b:.2f}"
                for a, b in zip(frame["success_base"], frame["success_other"], strict=True)
            ],
            "Δ success [95% CI]": _intervals(frame["success_diff"], frame["success_lo"], frame["success_hi"]),
            "p adj": [_p(v) for v in frame["success_p_adj"]],
            "calls to success": [
                "–" if math.isnan(a) else f"{a:.1f} → {b:.1f}"
                for a, b in zip(frame["calls_base"], frame["calls_other"], strict=True)
            ],
            "Δ calls [95% CI]": [
                _ci(v, lo, hi)
                + (" (every task alike)" if n > 1 and math.isnan(lo) and not math.isnan(v) else "")
                for v, lo, hi, n in zip(
                    frame["calls_diff"],
                    frame["calls_lo"],
                    frame["calls_hi"],
                    frame["calls_tasks"],
                    strict=True,
                )
            ],
            "p adj (calls)": [_p(v) for v in frame["calls_p_adj"]],
        }
    )


def _records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    return [{str(k): (None if isinstance(v, float) and math.isnan(v) else v) for k, v in r.items()}
            for r in frame.to_dict(orient="records")]  # fmt: skip


@click.command("effects")
@click.argument("directory", type=click.Path(path_type=Path))
@click.option(
    "--against",
    default=None,
    help="Strategies paired against --baseline (comma-separated). Default: collapse,masked, those "
    "the run has; a strategy named here must be in the run.",
)
@click.option("--baseline", default="is_error", show_default=True, help="The readable-error strategy.")
@click.option(
    "--adjust", type=click.Choice(ADJUSTMENTS), default="holm", show_default=True, help="p-value adjustment."
)
@click.option(
    "--min-effect", type=click.FloatRange(min=0.0, max=1.0), default=0.1, show_default=True,
    help="A scenario counts as helped (hurt) when its Δ is at most minus (at least) this; 0 counts "
    "any difference.",
)  # fmt: skip
@click.option(
    "--top", type=click.IntRange(min=0), default=8, show_default=True,
    help="Feature rows shown per agent and strategy, smallest p first (0: all; json has all).",
)  # fmt: skip
@click.option(
    "--min-group", type=click.IntRange(min=2), default=5, show_default=True,
    help="Test a feature only when this many scenarios have it and this many lack it.",
)  # fmt: skip
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="table", show_default=True)
@click.option(
    "--plot", type=click.Path(path_type=Path), default=None, help="Also draw the figure to this PNG."
)
def command(
    directory: Path,
    against: str | None,
    baseline: str,
    adjust: str,
    min_effect: float,
    top: int,
    min_group: int,
    fmt: str,
    plot: Path | None,
) -> None:
    """Per agent: the mean effect of readable errors over scenarios, in how many scenarios they
    help, make no difference, or hurt; the effect per family and per swept value; and which
    scenario features (fault kinds, message qualities, alternatives, tool-list changes, budget,
    family) go with the sign.

    The effect in a scenario is Δ = success under the other strategy minus success under
    --baseline, paired on seeds, averaged over the scenario's seeds and swept values (the sign of
    compare's Δ); the scenario is the unit, a swept value a factor within it. The headline is
    the mean Δ with a t interval over scenarios and its t test; a scenario counts as helped
    when Δ <= -MIN_EFFECT and hurt when Δ >= +MIN_EFFECT. Each feature compares scenarios with
    it against those without (a permutation test and the interval that inverts it; Mann-Whitney
    beside it), one feature at a time. A warning says when the sign differs across families or
    swept values. p-values adjusted over each table.
    """
    from harness.batch.results import ResultsDir, load_run
    from harness.report.effects import (
        AGAINST,
        UNIT_COLUMNS,
        effect_shares,
        feature_table,
        group_table,
        per_scenario_effects,
        run_features,
        scenario_effects,
        scenario_families,
        scenario_reading,
        scenario_text_sources,
        seeds_label,
        sign_warnings,
        value_table,
    )

    df, state = load_run(directory)
    if df.empty:
        raise UserError(f"{directory}: no finished sessions yet ({state.status or 'no status'})")
    if baseline not in set(df["strategy"]):
        raise UserError(
            f"--baseline {baseline}: no sessions with that strategy (have: {sorted(set(df.strategy))})"
        )
    have = sorted(set(df["strategy"]))
    if against is None:
        others = [s for s in AGAINST if s in have and s != baseline]
        if not others:
            raise UserError(
                f"{directory}: no sessions under {' or '.join(AGAINST)} to pair with (have: {have}); "
                "name the strategies with --against"
            )
    else:
        others = list(split_names([against]))
        if not others:
            raise UserError("--against: give at least one strategy (e.g. --against collapse)")
        from harness.protocol import STRATEGIES

        for name in others:
            if name not in STRATEGIES:
                raise unknown_name("strategy", name, STRATEGIES)
            if name == baseline:
                raise UserError(f"--against {name}: that is the --baseline; pair it with another strategy")
            if name not in have:
                raise UserError(
                    f"--against {name}: no sessions with that strategy in {directory} (have: {have})"
                )
    sources: dict[str, str] = {}
    if directory.is_dir():
        sources = dict(ResultsDir.open(directory).manifest.get("scenario_sources", {}))
    effects = scenario_effects(df, baseline=baseline, against=others, min_effect=min_effect)
    per = per_scenario_effects(effects, min_effect=min_effect)
    names = sorted(set(per["scenario"]))
    features = run_features(names, sources)
    shares = effect_shares(per, adjust=adjust, min_effect=min_effect)
    table = feature_table(per, features, adjust=adjust, min_group=min_group, min_effect=min_effect)
    families = scenario_families(names, sources)
    by_family = group_table(per, families, by="family", adjust=adjust, min_effect=min_effect)
    by_source = group_table(per, scenario_text_sources(names, sources), by="source", adjust=adjust,
                            min_effect=min_effect)  # fmt: skip
    by_read = group_table(
        per, scenario_reading(df, baseline), by="read", adjust=adjust, min_effect=min_effect
    )
    by_value = value_table(effects, adjust=adjust, min_effect=min_effect)
    warnings = [*sign_warnings(by_family), *sign_warnings(by_source), *sign_warnings(by_value)]
    seeds_min = int(per["seeds_min"].min()) if len(per) else 0
    seeds_max = int(per["seeds_max"].max()) if len(per) else 0
    seeds = seeds_label(seeds_min, seeds_max)
    factors = [c for c in effects.columns if c not in {"agent", *UNIT_COLUMNS}]
    world = _world_tables(df, names, sources, baseline, others, adjust)
    warning = state.warning(str(directory))
    if warning:
        click.echo(f"harness: warning: {warning}", err=True)
    if fmt == "json":
        doc = {"source": str(directory), **state.to_json(), "baseline": baseline, "against": others,
               "adjust": adjust, "unit": "scenario", "n_clusters": len(names),
               "seeds": seeds_min if seeds_min == seeds_max else seeds, "seeds_min": seeds_min,
               "seeds_max": seeds_max, "min_effect": min_effect, "factors": factors,
               "shares": _records(shares), "families": _records(by_family), "sources": _records(by_source),
               "read": _records(by_read), "values": _records(by_value),
               "warnings": warnings, "features": _records(table), "scenarios": _records(per),
               "effects": _records(effects), **{k: _records(v) for k, v in world.items()}}  # fmt: skip
        click.echo(json.dumps(doc, default=str))
    else:
        over = f"its {seeds} seeds" + (f" and its values of {', '.join(factors)}" if factors else "")
        title = (f"effect of readable errors per scenario ({directory}): {len(names)} scenarios, "
                 f"{seeds} seeds per scenario{' and value' if factors else ''}; Δ = success under the "
                 f"strategy − under "
                 f"{baseline}, paired on seeds, a scenario's Δ the mean over {over}; mean Δ over scenarios "
                 f"with a t interval and t test; help: Δ ≤ −{min_effect:g}, hurt: Δ ≥ +{min_effect:g} "
                 f"(--min-effect); unit: scenario; p adjusted: {adjust}")  # fmt: skip
        ftitle = (f"scenario features and the effect (top {top} by p per row group; tested when >= "
                  f"{min_group} scenarios with and without; permutation test and its interval)")  # fmt: skip
        parts: list[tuple[str, pd.DataFrame]] = [(title, shown_shares(shares, baseline, min_effect))]
        if by_family["group"].nunique() > 1:
            parts.append(("per family (scenarios sampled from each; t interval over them)",
                          shown_groups(by_family, baseline, min_effect)))  # fmt: skip
        if by_source["group"].nunique() > 1:
            parts.append(("per source of the error texts (template, or the real stack whose library "
                          "wrote them; mixed: a scenario with several)",
                          shown_groups(by_source, baseline, min_effect)))  # fmt: skip
        if by_read["group"].nunique() > 1:
            parts.append((f"by whether the agent read anything in the texts under {baseline} "
                          "(decided after the strategy: a description, not a comparison)",
                          shown_groups(by_read, baseline, min_effect)))  # fmt: skip
        for factor in dict.fromkeys(by_value["by"]):
            sub = by_value[by_value["by"] == factor].reset_index(drop=True)
            parts.append((f"per value of {factor} (a factor within each scenario: every row over the same "
                          f"scenarios, compared paired with the first value)",
                          shown_groups(sub, baseline, min_effect)))  # fmt: skip
        parts += [(WORLD_TITLES[k], shown_world(v, k)) for k, v in world.items() if not v.empty]
        if fmt == "markdown":
            from harness.report.stats import to_markdown

            for head, frame in parts:
                click.echo(f"{head}\n\n{to_markdown(frame)}\n")
            for line in warnings:
                click.echo(f"> **Warning:** {line}\n")
            click.echo(f"{ftitle}\n\n")
            click.echo(to_markdown(shown_features(table, top)))
        else:
            for head, frame in parts:
                print_table(frame, title=head)
            for line in warnings:
                click.echo(click.style(f"warning: {line}", fg="yellow", bold=True))
            if table.empty:
                click.echo("no agent's effect differs between scenarios: no feature to test")
            else:
                print_table(shown_features(table, top), title=ftitle)
    if plot is not None:
        import matplotlib.pyplot as plt

        from harness.report.plots import effects_figure

        fig = effects_figure(per, table, run=directory.name or str(directory))
        try:
            fig.savefig(plot, dpi=110)
        except OSError as exc:
            raise UserError(f"--plot {plot}: cannot write ({exc.strerror or exc})") from None
        finally:
            plt.close(fig)
        click.echo(str(plot), err=fmt == "json")
