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
    """Success and recovery by strategy, steps to recover, sweeps, agent x strategy heat map, forest plot.

    The forest plot shows each strategy's paired difference in success against is_error per
    scenario (Tango intervals) and pooled over scenarios (the t interval over scenarios that
    harness compare shows at --unit scenario), one panel per agent.

    A run that is not finished is drawn all the same, with a warning on stderr and
    "INCOMPLETE" in every figure's title.
    """
    from harness.batch.results import load_run

    df, state = load_run(directory)
    if df.empty:
        raise UserError(f"{directory}: no finished sessions yet ({state.status or 'no status'})")
    run = directory.name or str(directory)
    if state.complete is False:
        click.echo(f"harness: warning: {state.warning(directory)}", err=True)
        of = f" of {state.sessions_in_grid}" if state.sessions_in_grid is not None else ""
        run = f"{run} (INCOMPLETE: {state.sessions}{of} sessions, status {state.status or 'unknown'})"
    from harness.report.plots import draw_all  # matplotlib is slow to import: only once the input is good

    target = out or (directory / "plots")
    try:
        target.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UserError(f"--out {target}: cannot create the directory ({exc.strerror or exc})") from None
    for path in draw_all(df, target, run=run):
        click.echo(str(path))
