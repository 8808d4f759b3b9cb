"""``harness plot``: PNG figures of a results directory."""

from __future__ import annotations

from pathlib import Path

import click

from harness.errors import UserError


@click.command("plot")
@click.argument("directory", type=click.Path(path_type=Path))
@click.option(
    "--out", type=click.Path(path_type=Path), default=None, help="Where PNGs go; default DIR/plots."
)
def command(directory: Path, out: Path | None) -> None:
    """Success and recovery by strategy, steps to recover, sweeps, agent x strategy heat map."""
    from harness.batch.results import load_sessions

    df = load_sessions(directory)
    if df.empty:
        raise UserError(f"{directory}: no finished sessions yet")
    from harness.report.plots import draw_all  # matplotlib is slow to import: only once the input is good

    target = out or (directory / "plots")
    try:
        target.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UserError(f"--out {target}: cannot create the directory ({exc.strerror or exc})") from None
    for path in draw_all(df, target, run=directory.name):
        click.echo(str(path))
