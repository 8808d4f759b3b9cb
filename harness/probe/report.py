"""The probe's report: one row per rule, as JSON (machine) or a rich table (people).

The JSON form is the contract other tools read (:mod:`harness.probe.compare`
builds the README's side-by-side table from two of them). It holds no clock
readings, so the same server probed twice gives the same bytes unless the
server's own words change.

Rows carry their era (``handshake`` or ``stateless``) and their verdict's
``basis`` (``spec``: the verdict holds the server to a spec requirement;
``reference``: only to this project's reference rule). ``eras`` says which eras
the server speaks and ``summary_by_era`` counts verdicts per era; the table
prints one section per era with rows (the handshake era's rows are always
there: a broken server shows them; the stateless era's only where spoken).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from harness.probe.harvest import ExtraCall, HarvestRecord
from harness.probe.outcomes import AS_BOTH, AS_REFERENCE, AS_SPEC, DIFFERS, INCONCLUSIVE, VERDICTS, Outcome
from harness.probe.rules import ERAS, HANDSHAKE_ERA, STATELESS_ERA

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
    INCONCLUSIVE: "magenta",
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
    era: str = HANDSHAKE_ERA
    basis: str = ""
    """``spec`` or ``reference``: what the verdict holds the server to (``outcomes.basis``)."""
    negotiated: str | None = None
    """The version the server answered in this rule's session, where it differs from ``version``."""
    evidence: str | None = None
    """For a rule whose verdict needs it (``args.*``): what shows the server read the arguments, or
    why nothing does (then the verdict is ``inconclusive``)."""
    reading: dict[str, Any] | None = None
    """For an error a tool call provoked: what a reader can take from its text
    (:func:`harness.reading.read`: category, argument, expected, retry_after_s, actionable)."""


ERA_TITLES: dict[str, str] = {
    HANDSHAKE_ERA: "handshake era (initialize; 2024-11-05 to 2025-11-25)",
    STATELESS_ERA: "stateless era (2026-07-28; per-request _meta, no initialize)",
}
"""How the table names each era's section."""


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
    eras: dict[str, dict[str, Any]] | None = None
    """Per era: ``spoken`` (bool) and ``evidence`` (what the server answered that says so)."""
    harvested: tuple[HarvestRecord, ...] = ()
    """Every error the server answered, rules first, then the extra calls (not in ``to_json``)."""
    calls: tuple[tuple[ExtraCall, Outcome], ...] = ()
    """Each extra call (``ProbeConfig.calls``) with what it got (not in ``to_json``)."""

    def summary(self, era: str | None = None) -> dict[str, int]:
        """How many rules (of ``era``, or all) got each verdict (every verdict listed, zeros included)."""
        counts = dict.fromkeys(VERDICTS, 0)
        for row in self.rules:
            if era is None or row.era == era:
                counts[row.verdict] = counts.get(row.verdict, 0) + 1
        return counts

    def reported_eras(self) -> list[str]:
        """The eras that have rows in this report (an era not spoken has none, but for the handshake's)."""
        return [era for era in ERAS if any(row.era == era for row in self.rules)]

    def spoken(self, era: str) -> bool:
        """Whether the server speaks ``era`` (the handshake era is assumed when nothing says)."""
        if self.eras is None or era not in self.eras:
            return era == HANDSHAKE_ERA
        return bool(self.eras[era].get("spoken"))

    def speaks_any_era(self) -> bool:
        """Whether the server completed a handshake in some era: answered initialize with a version,
        or listed 2026-07-28 in its server/discover answer."""
        return any(self.spoken(era) for era in ERAS)

    def why_no_era(self) -> str:
        """What each era's handshake got, in one line (for a server that speaks none): ``initialize:
        server died: ...; server/discover: ...``, or both at once where they got the same."""
        said = [str(found.get("evidence") or "") for found in (self.eras or {}).values()]
        said = [s for s in said if s]
        if len(said) == 2:
            (first, _, one), (second, _, other) = (s.partition(": ") for s in said)
            one, other = one.removesuffix("…"), other.removesuffix("…")
            if one and other and (one.startswith(other) or other.startswith(one)):
                return f"{first} and {second}: {max(one, other, key=len)}"
        return "; ".join(said) or "no era answered"

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
            "eras": self.eras,
            "summary_by_era": {era: self.summary(era) for era in self.reported_eras()},
        }

    def row(self, rule_id: str) -> RuleResult:
        """The row of one rule, by id (KeyError if the probe had no such rule)."""
        for row in self.rules:
            if row.id == rule_id:
                return row
        raise KeyError(rule_id)


def render_table(report: Report, console: Console) -> None:
    """Print one table per era with rows, each followed by a one-line summary.

    An era the server does not speak gets one line saying so and why. Every rule
    id and every verdict is printed whole on one line (its basis on the next) at any console
    width from 80 columns up: below :data:`WIDE` each rule is one row of two
    columns (the id with its verdict under it; then what was sent, what the
    reference and the spec expect and what the server did, labelled and
    wrapped), from :data:`WIDE` up one column each.
    """
    info = report.server or {}
    name = f"harness probe: {info.get('name', '?')} {info.get('version', '')}".rstrip()
    for era in ERAS:
        rows = [row for row in report.rules if row.era == era]
        if rows:
            console.print(_table(f"{name}: {ERA_TITLES[era]}", rows, console.width))
            counts = ", ".join(f"{n} {v}" for v, n in report.summary(era).items() if n)
            console.print(f"{era} era: {len(rows)} rules: {counts}")
        if not report.spoken(era):
            evidence = (report.eras or {}).get(era, {}).get("evidence", "")
            console.print(f"{era} era: not spoken" + (f" ({evidence})" if evidence else ""))


def _table(title: str, rows: list[RuleResult], width: int) -> Table:
    id_width = max((len(row.id) for row in rows), default=4)
    verdict_width = max(len(v) for v in VERDICTS)
    table = Table(title=title, show_lines=True, expand=True)
    if width < WIDE:
        table.add_column("rule, verdict", min_width=max(id_width, verdict_width), no_wrap=True)
        table.add_column("sent, expected, server did", ratio=1, overflow="fold")
        for row in rows:
            table.add_row(Text.assemble((row.id, "bold"), "\n", _verdict(row)), _stacked(row))
    else:
        table.add_column("rule", width=id_width, overflow="fold")
        table.add_column("reference expects", ratio=2, min_width=10)
        table.add_column("spec expects", ratio=2, min_width=10)
        table.add_column("server did", ratio=4, min_width=14, overflow="fold")
        table.add_column("verdict", width=verdict_width, no_wrap=True)
        for row in rows:
            rule = Text(row.id)
            rule.append("\n" + row.sent, style="dim")
            table.add_row(rule, row.reference, row.spec, _did(row), _verdict(row))
    return table


def _verdict(row: RuleResult) -> Text:
    text = Text(row.verdict, style=VERDICT_STYLES.get(row.verdict, "red"))
    if row.basis:
        text.append(f"\nbasis: {row.basis}", style="dim")
    return text


def _did(row: RuleResult) -> Text:
    did = Text(row.observed)
    if row.detail:
        did.append("\n" + row.detail, style="dim")
    if row.evidence:
        did.append("\nevidence: " + row.evidence, style="dim")
    if row.reading:
        did.append("\na reader takes: " + describe_reading(row.reading), style="dim")
    return did


def describe_reading(reading: dict[str, Any]) -> str:
    """What a reader takes from an error text, in words: what it names, and what it leaves out."""
    said = [str(reading.get("category"))]
    said.append(f"argument {reading['argument']!r}" if reading.get("argument") else "no argument named")
    said.append(f"valid form {reading['expected']!r}" if reading.get("expected") else "no valid form")
    if reading.get("retry_after_s") is not None:
        said.append(f"retry after {reading['retry_after_s']:g} s")
    said.append("enough to act on" if reading.get("actionable") else "not enough to act on")
    return ", ".join(said)


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
