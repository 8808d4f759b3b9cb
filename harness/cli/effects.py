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


def shown_shares(shares: pd.DataFrame, baseline: str = "is_error") -> pd.DataFrame:
    """The shares table as printed: counts with percentages, the mean Δ with its interval."""
    total = shares["scenarios"]
    return pd.DataFrame(
        {
            "agent": shares["agent"],
            "strategy": shares["against"],
            "n": total,
            f"help ({baseline} better)": _counts(shares["help"], total),
            "no difference": _counts(shares["none"], total),
            "hurt": _counts(shares["hurt"], total),
            f"mean Δ (strategy − {baseline}) [95% CI]": _intervals(
                shares["mean_effect"], shares["lo"], shares["hi"]
            ),
            "test": shares["test"],
            "p adj": [_p(v) for v in shares["p_adj"]],
        }
    )


def shown_features(table: pd.DataFrame, top: int) -> pd.DataFrame:
    """The feature table as printed: the ``top`` rows by p of each agent and other strategy."""
    head = table.groupby(["agent", "against"], sort=True).head(top) if top else table
    return pd.DataFrame(
        {
            "agent": head["agent"],
            "strategy": head["against"],
            "feature": head["feature"],
            "n": [f"{a}/{b}" for a, b in zip(head["n_with"], head["n_without"], strict=True)],
            "help with/without": _pairs(head["help_with"], head["help_without"]),
            "hurt with/without": _pairs(head["hurt_with"], head["hurt_without"]),
            "mean Δ with − without [95% CI]": _intervals(head["difference"], head["lo"], head["hi"]),
            "p": [_p(v) for v in head["p"]],
            "p adj": [_p(v) for v in head["p_adj"]],
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
    top: int,
    min_group: int,
    fmt: str,
    plot: Path | None,
) -> None:
    """Per agent: in how many scenarios readable errors help, make no difference, or hurt; and which
    scenario features (fault kinds, message qualities, alternatives, tool-list changes, budget,
    family, swept parameters) go with the sign.

    The effect in a scenario is Δ = success under the other strategy minus success under
    --baseline, paired on seeds (the sign of compare's Δ); readable errors help where Δ < 0.
    Shares are counted; the mean Δ has a t interval over scenarios and a signed-rank test; each
    feature compares scenarios with it against those without (Welch interval, Mann-Whitney p),
    one feature at a time. p-values adjusted over each table.
    """
    from harness.batch.results import ResultsDir, load_run
    from harness.report.effects import AGAINST, effect_shares, feature_table, run_features, scenario_effects

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
    effects = scenario_effects(df, baseline=baseline, against=others)
    features = run_features(sorted(set(effects["scenario"])), sources)
    shares = effect_shares(effects, adjust=adjust)
    table = feature_table(effects, features, adjust=adjust, min_group=min_group)
    warning = state.warning(str(directory))
    if warning:
        click.echo(f"harness: warning: {warning}", err=True)
    if fmt == "json":
        doc = {"source": str(directory), **state.to_json(), "baseline": baseline, "against": others,
               "adjust": adjust, "unit": "scenario", "shares": _records(shares), "features": _records(table),
               "effects": _records(effects)}  # fmt: skip
        click.echo(json.dumps(doc, default=str))
    else:
        title = (f"effect of readable errors per scenario ({directory}): Δ = success under the "
                 f"strategy − under {baseline}, paired on seeds; help: Δ < 0; unit: scenario; "
                 f"p adjusted: {adjust}")  # fmt: skip
        ftitle = (f"scenario features and the effect's sign (top {top} by p per row group; "
                  f"tested when >= {min_group} scenarios with and without)")  # fmt: skip
        if fmt == "markdown":
            from harness.report.stats import to_markdown

            click.echo(f"{title}\n\n{to_markdown(shown_shares(shares, baseline))}\n\n{ftitle}\n\n")
            click.echo(to_markdown(shown_features(table, top)))
        else:
            print_table(shown_shares(shares, baseline), title=title)
            if table.empty:
                click.echo("no agent's effect differs between scenarios: no feature to test")
            else:
                print_table(shown_features(table, top), title=ftitle)
    if plot is not None:
        import matplotlib.pyplot as plt

        from harness.report.plots import effects_figure

        fig = effects_figure(effects, table, run=directory.name or str(directory))
        try:
            fig.savefig(plot, dpi=110)
        except OSError as exc:
            raise UserError(f"--plot {plot}: cannot write ({exc.strerror or exc})") from None
        finally:
            plt.close(fig)
        click.echo(str(plot), err=fmt == "json")
