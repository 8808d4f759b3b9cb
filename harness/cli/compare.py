"""``harness compare``: strategy comparison of a results directory."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import click
import pandas as pd

from harness.batch.grid import split_names
from harness.errors import UserError

if TYPE_CHECKING:
    from rich.console import Console

    from harness.batch.results import RunState

FORMATS = ("table", "markdown", "csv", "json")
UNITS = ("scenario", "session")
"""Units of inference (:data:`harness.report.inference.UNITS`, spelled here so that the CLI loads fast)."""
ADJUSTMENTS = ("holm", "bh", "none")
"""p-value adjustments (:data:`harness.report.inference.ADJUSTMENTS`)."""


def print_comparison(
    df: pd.DataFrame,
    *,
    by: Sequence[str],
    baseline: str,
    k: int,
    fmt: str,
    source: str = "",
    state: RunState | None = None,
    unit: str = "scenario",
    adjust: str = "holm",
) -> None:
    """Compute and print the comparison of ``df`` in ``fmt``.

    ``unit`` is the unit of inference and ``adjust`` the p-value adjustment across the table
    (:func:`harness.report.stats.compare`); the table's title names both (markdown: a line
    above it; csv and json: the ``unit`` and ``adjust`` columns, and json's top level).
    ``state`` says whether the rows are a finished run's; partial rows are printed under a
    warning (above the table and in its title; on stderr for csv; ``complete: false`` and
    the manifest's ``status`` in json), never as if they were a finished comparison. What is
    printed is built by :func:`harness.report.documents.comparison`, as the viewer's page is.
    """
    from harness.report.documents import comparison, dumps

    shown = comparison(
        df, by=by, baseline=baseline, k=k, unit=unit, adjust=adjust, source=source, state=state
    )
    warning = shown.warning
    if fmt == "csv":
        if warning:
            click.echo(f"harness: warning: {warning}", err=True)
        click.echo(shown.table.to_csv(index=False), nl=False)
    elif fmt == "json":
        click.echo(dumps(shown.document()))
    elif fmt == "markdown":
        click.echo(shown.markdown())
    else:
        if warning:
            click.echo(click.style(f"WARNING: {warning}", fg="yellow", bold=True))
        print_table(shown.shown, title=shown.title())


def print_table(shown: pd.DataFrame, *, title: str) -> None:
    """``shown`` as rich tables on stdout that fit the terminal; in a pipe no cell is ever split.

    On a terminal too narrow for the whole table, its metric columns are dealt into
    several tables, each repeating the key columns (those before ``n``), so every cell
    stays on one line; only a terminal too narrow for the key columns alone folds cells.
    In a pipe or a file there is no width to fit: one table as wide as its widest row.
    """
    from rich.console import Console

    console = Console()
    if not console.is_terminal:
        _print_parts(Console(width=100_000, file=console.file), shown, [list(shown.columns)], title, fit=True)
        return
    _print_parts(console, shown, _deal_columns(shown, console.width), title, fit=False)


def _deal_columns(shown: pd.DataFrame, width: int) -> list[list[str]]:
    """The columns of each table: the key columns, then as many metric columns as fit ``width``."""
    from rich.cells import cell_len

    def need(col: str) -> int:  # the cell's text, its padding either side, and one border
        return max(cell_len(str(v)) for v in [col, *shown[col]]) + 3

    columns = [str(c) for c in shown.columns]
    n_keys = columns.index("n") if "n" in columns else 1
    keys, metrics = columns[:n_keys], columns[n_keys:]
    base = 1 + sum(need(c) for c in keys)
    parts: list[list[str]] = []
    part: list[str] = []
    used = base
    for col in metrics:
        if part and used + need(col) > width:
            parts.append(keys + part)
            part, used = [], base
        part.append(col)
        used += need(col)
    parts.append(keys + part)
    return parts


def _print_parts(
    console: Console, shown: pd.DataFrame, parts: list[list[str]], title: str, *, fit: bool
) -> None:
    from rich.measure import Measurement
    from rich.table import Table

    for i, cols in enumerate(parts):
        rt = Table(title=title if i == 0 else None, title_justify="left")
        for col in cols:
            interval = any(_INTERVAL.search(str(v)) for v in shown[col])
            rt.add_column(col, overflow="fold", no_wrap=interval or len(parts) > 1)
        for values in shown[cols].itertuples(index=False, name=None):
            rt.add_row(*(str(v) for v in values))
        if fit:  # as wide as the widest row: nothing wraps
            width = Measurement.get(console, console.options, rt).maximum
            type(console)(width=max(width, 40), file=console.file).print(rt)
        else:
            console.print(rt)


_INTERVAL = re.compile(r"\[[^\]]*, [^\]]*\]")
"""An interval cell, as :func:`harness.report.stats.display_frame` writes it: ``0.80 [0.78, 0.82]``."""


@click.command("compare")
@click.argument("directory", type=click.Path(path_type=Path))
@click.option(
    "--baseline", default="is_error", show_default=True, help="Strategy the others are paired against."
)
@click.option("--by", default="agent", show_default=True, help="Group by these columns (comma-separated).")
@click.option("--k", "k", type=click.IntRange(min=1), default=3, show_default=True, help="k of pass^k.")
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="table", show_default=True)
@click.option(
    "--unit",
    type=click.Choice(UNITS),
    default="scenario",
    show_default=True,
    help="Unit of inference of pooled rows: scenario (t interval over scenarios, paired within "
    "scenario, and its own t test; Wilcoxon's in p_wilcoxon) or session (bootstrap over sessions; "
    "McNemar).",
)
@click.option(
    "--adjust",
    type=click.Choice(ADJUSTMENTS),
    default="holm",
    show_default=True,
    help="Adjust the table's p-values together: Holm, Benjamini-Hochberg, or none.",
)
def command(directory: Path, baseline: str, by: str, k: int, fmt: str, unit: str, adjust: str) -> None:
    """Per group and strategy: success, pass^k, recovery, steps to recover, wedged share, paired tests.

    Intervals of rows pooled over scenarios treat the scenario as the unit (--unit scenario);
    a row of one scenario (--by agent,scenario) gets exact intervals. p-values are adjusted
    across the table (--adjust). A run that is not finished (interrupted, still running, or
    killed) is compared all the same, under a warning; ``--format json`` says
    ``"complete": false`` and the run's status.
    """
    from harness.batch.results import load_run

    df, state = load_run(directory)
    if df.empty:
        raise UserError(f"{directory}: no finished sessions yet ({state.status or 'no status'})")
    print_comparison(
        df, by=split_names([by]), baseline=baseline, k=k, fmt=fmt, source=str(directory), state=state,
        unit=unit, adjust=adjust,
    )  # fmt: skip
