"""Side-by-side Markdown from probe reports: ``python -m harness.probe.compare A.json B.json``.

Why: the README compares our server with the official SDK's, and the table must
come from the probe's own ``--json`` output, not be typed by hand. Rows are the
union of the reports' rules in first-seen order; each server's cell is what it
did, the verdict and its basis (spec or reference; with ``--details``, also the
server's words). A rule a report lacks shows "—" (a stateless-era rule, for a
server that does not speak 2026-07-28). A file that is not a probe report is a
user error.
"""

from __future__ import annotations

import fnmatch
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import click

from harness.errors import UserError
from harness.probe.report import REPORT_FORMAT

DETAIL_CHARS = 60


def load_report(path: Path) -> dict[str, Any]:
    """Read one ``harness probe --json`` report; UserError if it is not one."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise UserError(f"cannot read {path}: {exc.strerror or exc}") from None
    except ValueError as exc:
        raise UserError(f"{path} is not JSON: {exc}") from None
    if not isinstance(data, dict) or data.get("format") != REPORT_FORMAT:
        raise UserError(f"{path} is not a harness probe report (format {REPORT_FORMAT!r})")
    return data


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def markdown_table(
    reports: Sequence[dict[str, Any]],
    names: Sequence[str],
    details: bool = False,
    only: Sequence[str] = (),
) -> str:
    """One Markdown table: rule, reference, spec, then one column per report.

    ``only`` keeps the rules whose id matches one of its fnmatch patterns (all if empty).
    """
    if len(names) != len(reports):
        raise ValueError("one name per report")
    order: list[str] = []
    by_id: list[dict[str, dict[str, Any]]] = []
    expectations: dict[str, tuple[str, str]] = {}
    for report in reports:
        rows = {row["id"]: row for row in report["rules"]}
        by_id.append(rows)
        for row in report["rules"]:
            keep = not only or any(fnmatch.fnmatchcase(row["id"], p) for p in only)
            if keep and row["id"] not in expectations:
                order.append(row["id"])
                expectations[row["id"]] = (row["reference"], row["spec"])
    lines = [
        "| rule | reference expects | spec expects | " + " | ".join(_cell(n) for n in names) + " |",
        "|---|---|---|" + "---|" * len(names),
    ]
    for rule_id in order:
        ref, spec = expectations[rule_id]
        cells = []
        for rows in by_id:
            row = rows.get(rule_id)
            if row is None:
                cells.append("—")
                continue
            cell = f"{row['observed']} · **{row['verdict']}**"
            if row.get("basis"):
                cell += f" ({row['basis']})"
            if details and row["detail"]:
                detail = row["detail"]
                detail = detail if len(detail) <= DETAIL_CHARS else detail[: DETAIL_CHARS - 1] + "…"
                quoted = detail.replace("`", "'")
                cell += f"<br>`{quoted}`"
            cells.append(_cell(cell))
        lines.append(f"| `{rule_id}` | {_cell(ref)} | {_cell(spec)} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


@click.command("compare")
@click.argument("reports", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--name", "names", multiple=True, help="Column title per report (default: the server's name).")
@click.option("--details", is_flag=True, help="Also show each server's words, shortened.")
@click.option("--only", multiple=True, metavar="PATTERN", help="Keep rules whose id matches (fnmatch).")
def command(reports: tuple[Path, ...], names: tuple[str, ...], details: bool, only: tuple[str, ...]) -> None:
    """Print a Markdown table comparing probe reports side by side."""
    loaded = [load_report(p) for p in reports]
    if names and len(names) != len(loaded):
        raise UserError(f"give one --name per report (got {len(names)} for {len(loaded)} reports)")
    titles = list(names) or [
        str((r.get("server") or {}).get("name") or p.stem) for r, p in zip(loaded, reports, strict=True)
    ]
    click.echo(markdown_table(loaded, titles, details, only), nl=False)


def main(argv: list[str] | None = None) -> None:
    """Entry point for ``python -m harness.probe.compare``: user errors exit 2 with one line."""
    try:
        command.main(args=argv, prog_name="python -m harness.probe.compare", standalone_mode=False)
    except UserError as exc:
        click.echo(f"harness: error: {exc}", err=True)
        raise SystemExit(exc.exit_code) from None
    except click.ClickException as exc:
        exc.show()
        raise SystemExit(2) from None


if __name__ == "__main__":
    main()
