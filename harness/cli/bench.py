"""``harness bench``: run the benchmark suite, write its table and plots, print the summary."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import click

from harness.errors import UserError

if TYPE_CHECKING:
    from harness.bench.suite import Progress as suite_progress


@click.command("bench")
@click.option("--quick", is_flag=True, help="A few hundredths of a second per case instead of about one.")
@click.option(
    "--out",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Directory for the results [default: results/bench-<timestamp>].",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["table", "json", "markdown"]),
    default="table",
    show_default=True,
    help="table: headline figures and targets; json: one object; markdown: every row.",
)
@click.option(
    "--million",
    is_flag=True,
    help="Add a 10^6-session peak-memory case (a quarter of an hour or more on two cores).",
)
@click.option("-k", "select", default=None, help="Run only the cases matching this pytest -k expression.")
@click.option(
    "--from-json",
    "from_json",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Rebuild table, summary and plots from a pytest-benchmark JSON instead of running.",
)
def command(
    quick: bool, out: Path | None, fmt: str, million: bool, select: str | None, from_json: Path | None
) -> None:
    """Benchmark dispatch, serialization and sessions against the JSON floor and the official SDK."""
    from harness.bench import suite
    from harness.bench.table import markdown, targets_markdown

    if from_json is not None and (quick or select or million):
        raise UserError("--from-json reads a finished run; --quick, --million and -k apply only to a new run")
    if out is not None and out.exists() and not out.is_dir():
        raise UserError(f"--out {out} exists and is not a directory")
    if from_json is None:
        import importlib.util

        missing = [m for m in ("pytest", "pytest_benchmark") if importlib.util.find_spec(m) is None]
        if missing:
            raise UserError(f"a new bench run needs {' and '.join(missing)}: pip install -e '.[dev]'")
    out = out or suite.default_out()
    try:
        if from_json is not None:
            if not from_json.is_file():
                raise UserError(f"--from-json {from_json}: no such file")
            result = suite.write_results(from_json, out)
        else:
            click.echo(f"harness bench: running {'quick ' if quick else ''}suite into {out}", err=True)
            result = suite.run(out, quick=quick, select=select, million=million, progress=_progress())
    except suite.BenchFailed as exc:
        raise click.ClickException(str(exc)) from None
    if fmt == "json":
        click.echo(json.dumps({**result.summary, "out": str(result.out)}, sort_keys=True))
    elif fmt == "markdown":
        click.echo(markdown(result.table, keys=None), nl=False)
    else:
        click.echo(markdown(result.table))
        click.echo(targets_markdown(result.summary), nl=False)
        click.echo(f"\n{len(result.table)} figures in {result.out / 'bench.csv'}; plots:", err=True)
        for path in result.figures:
            click.echo(f"  {path}", err=True)
    if result.failed:
        shown = "\n  ".join(result.failed)
        raise click.ClickException(
            f"{len(result.failed)} case(s) failed; every other figure is written. "
            f"See {result.out / 'pytest.log'}:\n  {shown}"
        )


def _progress() -> suite_progress:
    """One line on stderr as each case ends: how far the suite is, and the time so far."""
    import time

    started = time.monotonic()

    def say(case: str, outcome: str, percent: int) -> None:
        where, _, test = case.partition("::")
        name = f"{where.rsplit('/', 1)[-1]}::{test}"  # the test id may hold slashes of its own
        click.echo(
            f"harness bench: [{percent:3d}%] {name} {outcome.lower()} ({time.monotonic() - started:.0f} s)",
            err=True,
        )

    return say
