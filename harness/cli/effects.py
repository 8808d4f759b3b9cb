"""``harness effects``: how the effect of readable errors spreads over scenarios, and what goes with it."""

from __future__ import annotations

from pathlib import Path

import click

from harness.cli.compare import ADJUSTMENTS, print_table
from harness.errors import UserError

FORMATS = ("table", "markdown", "json")


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
    from harness.report.documents import dumps, effects

    df, state = load_run(directory)
    sources: dict[str, str] = {}
    if directory.is_dir():
        sources = dict(ResultsDir.open(directory).manifest.get("scenario_sources", {}))
    shown = effects(df, state, source=str(directory), sources=sources, against=against, baseline=baseline,
                    adjust=adjust, min_effect=min_effect, top=top, min_group=min_group)  # fmt: skip
    warning = state.warning(str(directory))
    if warning:
        click.echo(f"harness: warning: {warning}", err=True)
    if fmt == "json":
        click.echo(dumps(shown.document))
    elif fmt == "markdown":
        click.echo(shown.markdown(), nl=False)
    else:
        for head, frame in shown.parts:
            print_table(frame, title=head)
        for line in shown.warnings:
            click.echo(click.style(f"warning: {line}", fg="yellow", bold=True))
        if shown.features.empty:
            click.echo("no agent's effect differs between scenarios: no feature to test")
        else:
            print_table(shown.shown_features, title=shown.features_title)
    if plot is not None:
        import matplotlib.pyplot as plt

        from harness.report.plots import effects_figure

        fig = effects_figure(shown.per, shown.features, run=directory.name or str(directory))
        try:
            fig.savefig(plot, dpi=110)
        except OSError as exc:
            raise UserError(f"--plot {plot}: cannot write ({exc.strerror or exc})") from None
        finally:
            plt.close(fig)
        click.echo(str(plot), err=fmt == "json")
