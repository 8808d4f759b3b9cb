"""``harness generate``: sample a scenario family into concrete scenario files."""

from __future__ import annotations

from pathlib import Path

import click

from harness.errors import UserError


@click.command("generate")
@click.argument("family")
@click.option("--count", type=click.IntRange(min=1), default=10, show_default=True, help="Scenarios to draw.")
@click.option("--seed", type=click.IntRange(min=0), default=0, show_default=True, help="The family's seed.")
@click.option(
    "--out", type=click.Path(path_type=Path), required=True, help="Directory for the scenario files."
)
def command(family: str, count: int, seed: int, out: Path) -> None:
    """Draw COUNT scenarios from FAMILY (a shipped name or a path) into OUT/<name>.toml.

    The same family, count and seed write byte-identical files; each file is a scenario that
    ``harness run OUT/*.toml`` runs as ``harness run --family FAMILY`` would.
    """
    from harness.scenarios.family import load_family, sample, to_toml

    fam = load_family(family)
    drawn = sample(fam, count, seed)
    if out.is_file():
        raise UserError(f"--out {out}: a file, not a directory")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UserError(f"--out {out}: cannot create the directory ({exc.strerror or exc})") from None
    for name, data in drawn:
        (out / f"{name}.toml").write_text(to_toml(data), encoding="utf-8")
    click.echo(
        f"harness generate: wrote {len(drawn)} scenarios of {fam.name} (seed {seed}) to {out}", err=True
    )
