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
    min_effect: float | None = None,
    explain: bool = False,
) -> None:
    """Compute and print the comparison of ``df`` in ``fmt``, then (table and markdown) the run's
    findings in words; with ``explain`` (always in markdown), what each column means.

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
        df, by=by, baseline=baseline, k=k, unit=unit, adjust=adjust, source=source, state=state,
        min_effect=min_effect, with_findings=fmt != "csv",
    )  # fmt: skip
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
        from harness.report.display import comparison_parts

        columns = [str(c) for c in shown.shown.columns]
        print_table(shown.shown, title=shown.title(), parts=comparison_parts(columns))
        if explain:
            click.echo("\n" + "\n".join(_wrapped(line) for line in shown.legend()))
        if shown.findings is not None:
            click.echo("\n" + "\n".join(_wrapped(line) for line in shown.findings.text().splitlines()))


def _wrapped(line: str) -> str:
    """A line of words wrapped to the terminal (at most 100 columns), a bullet's text indented."""
    import shutil
    import textwrap

    width = min(shutil.get_terminal_size((100, 24)).columns, 100)
    indent = "  " if line.startswith("- ") else ""
    return textwrap.fill(line, width=width, subsequent_indent=indent, break_on_hyphens=False)


def print_table(shown: pd.DataFrame, *, title: str, parts: Sequence[Sequence[str]] | None = None) -> None:
    """``shown`` as rich tables on stdout that fit the terminal; no cell is ever split.

    ``parts`` groups the metric columns into tables of their own (the comparison: success and
    its difference first, recovery and the tests after), each repeating the key columns (those
    before ``n``, or the first); by default every column is one part. A header wraps at its
    spaces to its column's widest cell, so a long name costs lines, not width. On a terminal a
    part too wide for it is dealt into several tables; only a terminal too narrow for the key
    columns alone folds cells. In a pipe or a file there is no width to fit: each part is one
    table as wide as its widest row.
    """
    from rich.console import Console

    columns = [str(c) for c in shown.columns]
    n_keys = columns.index("n") if "n" in columns else 1
    keys = columns[:n_keys]
    groups = [list(p) for p in parts] if parts is not None else [columns[n_keys:]]
    console = Console()
    terminal = console.is_terminal
    out = console if terminal else Console(width=100_000, file=console.file)
    tables: list[list[str]] = []
    for group in groups:
        metrics = [c for c in group if c in columns and c not in keys]
        if not metrics:
            continue
        tables += _deal_columns(shown, keys, metrics, console.width) if terminal else [keys + metrics]
    _print_parts(out, shown, tables, title, fit=not terminal)


def _width(shown: pd.DataFrame, col: str) -> int:
    """A column's width: its widest cell, or its header's longest word if that is wider."""
    from rich.cells import cell_len

    cells = max((cell_len(str(v)) for v in shown[col]), default=0)
    return max(cells, *(cell_len(word) for word in str(col).split()))


def _deal_columns(shown: pd.DataFrame, keys: list[str], metrics: list[str], width: int) -> list[list[str]]:
    """The columns of each table: the key columns, then as many metric columns as fit ``width``."""

    def need(col: str) -> int:  # the cell's text, its padding either side, and one border
        return _width(shown, col) + 3

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
    from rich.text import Text

    for i, cols in enumerate(parts):
        rt = Table(title=title if i == 0 else None, title_justify="left")
        for col in cols:
            rt.add_column(col, width=_width(shown, col), overflow="fold")
        for values in shown[cols].itertuples(index=False, name=None):
            rt.add_row(*(Text(str(v), no_wrap=True, overflow="fold") for v in values))
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
@click.option(
    "--min-effect", type=click.FloatRange(min=0.0, max=1.0), default=0.1, show_default=True,
    help="A scenario counts as changed (scenarios -/0/+) when its Δ is at least this either way.",
)  # fmt: skip
@click.option("--explain", is_flag=True, help="Under the table, what each column means (markdown: always).")
def command(
    directory: Path, baseline: str, by: str, k: int, fmt: str, unit: str, adjust: str, min_effect: float,
    explain: bool,
) -> None:  # fmt: skip
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
        unit=unit, adjust=adjust, min_effect=min_effect, explain=explain,
    )  # fmt: skip
