"""The probe's report: one row per rule, as JSON (machine) or a rich table (people).

The JSON form is the contract other tools read (:mod:`harness.probe.compare`
builds the README's side-by-side table from two of them). It holds no clock
readings, so the same server probed twice gives the same bytes unless the
server's own words change.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from harness.probe.outcomes import AS_BOTH, AS_REFERENCE, AS_SPEC, DIFFERS, VERDICTS

REPORT_FORMAT = "harness-probe/1"

WIDE = 120
"""Console columns from which the table gives reference, spec and server their own columns."""

SILENT = "(silent)"
"""What the table shows where the reference or the spec says nothing."""

VERDICT_STYLES: dict[str, str] = {
    AS_BOTH: "green",
    AS_REFERENCE: "green",
    AS_SPEC: "cyan",
    DIFFERS: "yellow",
}
"""Colours of the verdict column; the failure verdicts are red."""


@dataclass(frozen=True)
class RuleResult:
    """One rule's row: what was sent, what each source expects, what the server did."""

    id: str
    sent: str
    version: str
    reference: str
    spec: str
    observed: str
    detail: str
    verdict: str


@dataclass(frozen=True)
class Report:
    """Everything one probe found; ``to_json`` is the machine-readable form."""

    command: tuple[str, ...]
    timeout: float
    startup_timeout: float
    server: dict[str, Any] | None
    rules: tuple[RuleResult, ...]
    not_mcp: str | None = None
    """What the peer did that shows it is not an MCP server (None: it may be one)."""

    def summary(self) -> dict[str, int]:
        """How many rules got each verdict (every verdict listed, zeros included)."""
        counts = dict.fromkeys(VERDICTS, 0)
        for row in self.rules:
            counts[row.verdict] = counts.get(row.verdict, 0) + 1
        return counts

    def to_json(self) -> dict[str, Any]:
        return {
            "format": REPORT_FORMAT,
            "command": list(self.command),
            "timeout": self.timeout,
            "startup_timeout": self.startup_timeout,
            "server": self.server,
            "rules": [asdict(row) for row in self.rules],
            "summary": self.summary(),
            "not_mcp": self.not_mcp,
        }

    def row(self, rule_id: str) -> RuleResult:
        """The row of one rule, by id (KeyError if the probe had no such rule)."""
        for row in self.rules:
            if row.id == rule_id:
                return row
        raise KeyError(rule_id)


def render_table(report: Report, console: Console) -> None:
    """Print the report as a rich table, then a one-line summary.

    Every rule id and every verdict is printed whole on one line at any console
    width from 80 columns up: below :data:`WIDE` each rule is one row of two
    columns (the id with its verdict under it; then what was sent, what the
    reference and the spec expect and what the server did, labelled and
    wrapped), from :data:`WIDE` up one column each.
    """
    info = report.server or {}
    title = f"harness probe: {info.get('name', '?')} {info.get('version', '')}".rstrip()
    id_width = max((len(row.id) for row in report.rules), default=4)
    verdict_width = max(len(v) for v in VERDICTS)
    table = Table(title=title, show_lines=True, expand=True)
    if console.width < WIDE:
        table.add_column("rule, verdict", min_width=max(id_width, verdict_width), no_wrap=True)
        table.add_column("sent, expected, server did", ratio=1, overflow="fold")
        for row in report.rules:
            table.add_row(Text.assemble((row.id, "bold"), "\n", _verdict(row.verdict)), _stacked(row))
    else:
        table.add_column("rule", width=id_width, overflow="fold")
        table.add_column("reference expects", ratio=2, min_width=10)
        table.add_column("spec expects", ratio=2, min_width=10)
        table.add_column("server did", ratio=4, min_width=14, overflow="fold")
        table.add_column("verdict", width=verdict_width, no_wrap=True)
        for row in report.rules:
            rule = Text(row.id)
            rule.append("\n" + row.sent, style="dim")
            table.add_row(rule, row.reference, row.spec, _did(row), _verdict(row.verdict))
    console.print(table)
    counts = ", ".join(f"{n} {v}" for v, n in report.summary().items() if n)
    console.print(f"{len(report.rules)} rules: {counts}")


def _verdict(verdict: str) -> Text:
    return Text(verdict, style=VERDICT_STYLES.get(verdict, "red"))


def _did(row: RuleResult) -> Text:
    did = Text(row.observed)
    if row.detail:
        did.append("\n" + row.detail, style="dim")
    return did


def _stacked(row: RuleResult) -> Table:
    # Labels in their own column, so that a wrapped value hangs under its value, not its label.
    grid = Table.grid(padding=(0, 1))
    grid.add_column(style="dim", no_wrap=True)
    grid.add_column(ratio=1, overflow="fold")
    grid.add_row("sent", Text(row.sent, style="dim"))
    grid.add_row("reference", row.reference)
    grid.add_row("spec", row.spec)
    grid.add_row("did", _did(row))
    return grid
