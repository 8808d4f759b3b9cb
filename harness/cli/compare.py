"""``harness compare``: strategy comparison of a results directory."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from pathlib import Path

import click
import pandas as pd

from harness.batch.grid import split_names
from harness.errors import UserError, unknown_name
from harness.protocol.strategies import STRATEGIES

FORMATS = ("table", "markdown", "csv", "json")


def print_comparison(
    df: pd.DataFrame, *, by: Sequence[str], baseline: str, k: int, fmt: str, source: str = ""
) -> None:
    """Compute and print the comparison of ``df`` in ``fmt``."""
    from harness.report.stats import compare, display_frame, to_markdown

    if baseline not in set(df["strategy"]):
        if baseline not in STRATEGIES:
            raise unknown_name("--baseline strategy", baseline, STRATEGIES)
        raise UserError(
            f"--baseline {baseline}: no sessions with that strategy (have: {sorted(set(df.strategy))})"
        )
    for col in by:
        if col not in df.columns:
            raise unknown_name("--by column", col, map(str, df.columns))
    table = compare(df, by=by, baseline=baseline, k=k)
    if fmt == "csv":
        click.echo(table.to_csv(index=False), nl=False)
    elif fmt == "json":
        records = [{k2: (None if isinstance(v, float) and math.isnan(v) else v) for k2, v in r.items()}
                   for r in table.to_dict(orient="records")]  # fmt: skip
        click.echo(json.dumps({"source": source, "baseline": baseline, "k": k, "rows": records}, default=str))
    elif fmt == "markdown":
        click.echo(to_markdown(display_frame(table, k)))
    else:
        from rich.console import Console
        from rich.table import Table

        shown = display_frame(table, k)
        title = (
            f"strategy comparison ({source}); baseline {baseline}; 95% bootstrap CIs; McNemar on paired seeds"
        )
        rt = Table(title=title, title_justify="left")
        for col in shown.columns:
            rt.add_column(str(col), overflow="fold")
        for values in shown.itertuples(index=False, name=None):
            rt.add_row(*(str(v) for v in values))
        Console(width=max(160, Console().width)).print(rt)


@click.command("compare")
@click.argument("directory", type=click.Path(path_type=Path))
@click.option(
    "--baseline", default="is_error", show_default=True, help="Strategy the others are paired against."
)
@click.option("--by", default="agent", show_default=True, help="Group by these columns (comma-separated).")
@click.option("--k", "k", type=click.IntRange(min=1), default=3, show_default=True, help="k of pass^k.")
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="table", show_default=True)
def command(directory: Path, baseline: str, by: str, k: int, fmt: str) -> None:
    """Per group and strategy: success, pass^k, recovery, steps to recover, wedged share, paired tests."""
    from harness.batch.results import load_sessions

    df = load_sessions(directory)
    if df.empty:
        raise UserError(f"{directory}: no finished sessions yet")
    print_comparison(df, by=split_names([by]), baseline=baseline, k=k, fmt=fmt, source=str(directory))
