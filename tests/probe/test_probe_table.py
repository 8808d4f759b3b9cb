"""The probe's table reads at 80 columns: every rule id and every verdict printed whole, on one line."""

from __future__ import annotations

import io

import pytest
from probe_runs import Probes
from rich.console import Console

from harness.probe import VERDICTS, Report, RuleResult, ToolCase, all_rules, render_table
from harness.probe.report import WIDE

WIDTHS = (80, 100, WIDE, 200)


def _render(report: Report, width: int) -> list[str]:
    out = io.StringIO()
    render_table(report, Console(file=out, width=width, color_system=None))
    return out.getvalue().splitlines()


def _every_verdict_report() -> Report:
    """Every rule (with a long user tool name), the verdicts cycled so each one appears."""
    rules = all_rules((ToolCase("a_rather_long_tool_name_for_the_table", {}),))
    rows = tuple(
        RuleResult(
            id=rule.id,
            sent=rule.sent,
            version=rule.version,
            reference=rule.reference.text if rule.reference is not None else "(silent)",
            spec=rule.spec.text if rule.spec is not None else "(silent)",
            observed="error -32602",
            detail="invalid arguments for tool 'add': argument 'x' must be integer, got 'not-a-number'",
            verdict=VERDICTS[i % len(VERDICTS)],
        )
        for i, rule in enumerate(rules)
    )
    return Report(("srv",), 1.0, 1.0, {"name": "srv", "version": "1"}, rows)


def _rows(lines: list[str]) -> list[list[str]]:
    """The bodies of the tables (one per era) split into rows at the separator lines
    (show_lines draws one per row)."""
    rows: list[list[str]] = [[]]
    in_body = False
    for line in lines:
        if line.startswith("┡"):
            in_body = True
        elif line.startswith(("├", "└")):
            in_body = in_body and line.startswith("├")
            rows.append([])
        elif in_body:
            rows[-1].append(line)
    return [r for r in rows if r and r[0].startswith("│")]


def _assert_whole(report: Report, width: int) -> None:
    lines = _render(report, width)
    assert max(len(line) for line in lines) <= width
    rows = _rows(lines)
    assert len(rows) == len(report.rules)
    for row, printed in zip(report.rules, rows, strict=True):
        # the id and the verdict each on one line of the rule's own row, not folded or cut
        assert row.id in printed[0], f"rule id {row.id!r} cut at {width} columns: {printed[0]!r}"
        assert any(f" {row.verdict} " in line for line in printed), f"{row.verdict!r} cut at {width}"


@pytest.mark.parametrize("width", WIDTHS)
def test_every_rule_id_and_verdict_is_printed_whole(width: int) -> None:
    report = _every_verdict_report()
    assert {row.verdict for row in report.rules} == set(VERDICTS)
    _assert_whole(report, width)


@pytest.mark.parametrize("width", WIDTHS)
def test_a_probe_of_the_demo_server_reads_at_every_width(probes: Probes, width: int) -> None:
    report = probes.get("is_error")
    _assert_whole(report, width)
    lines = _render(report, width)
    # no cell is cut short with an ellipsis (the only ones are in the server's shortened words)
    assert sum(line.count("…") for line in lines) == sum(row.detail.count("…") for row in report.rules)
    assert any("server not initialized" in line for line in lines)
