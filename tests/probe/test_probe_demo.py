"""Probing our own server (``harness serve --demo``) over stdio, under each strategy."""

from __future__ import annotations

import json

import pytest
from probe_runs import Probes

from harness.probe import Report
from harness.probe.outcomes import AS_BOTH, AS_SPEC, DIED, IS_ERROR_MASKED, IS_ERROR_REASON, PAGINATED

STRATEGY_OUTCOMES = {
    "is_error": (IS_ERROR_REASON, AS_BOTH),
    "masked": (IS_ERROR_MASKED, "differs"),
    "collapse": ("error -32603", "differs"),
    "escape": (DIED, "server died"),
}


@pytest.mark.parametrize("strategy", list(STRATEGY_OUTCOMES))
def test_the_weather_failure_shows_which_strategy_the_server_uses(probes: Probes, strategy: str) -> None:
    row = probes.get(strategy).row("tool.weather")
    assert (row.observed, row.verdict) == STRATEGY_OUTCOMES[strategy]


def test_the_four_strategies_are_told_apart(probes: Probes) -> None:
    seen = {probes.get(s).row("tool.weather").observed for s in STRATEGY_OUTCOMES}
    assert len(seen) == 4


def test_the_report_carries_the_server_s_words(probes: Probes) -> None:
    assert probes.get("is_error").row("tool.weather").detail == "ERROR: no station near Atlantis"
    assert probes.get("masked").row("tool.weather").detail == "Error executing tool weather"
    assert probes.get("collapse").row("tool.weather").detail == "no station near Atlantis"
    assert "ValueError: no station near Atlantis" in probes.get("escape").row("tool.weather").detail


def test_our_server_keeps_the_reference_where_the_reference_speaks(probes: Probes) -> None:
    report = probes.get("is_error")
    for row in report.rules:
        if (
            row.reference != "(silent)"
            and not row.id.startswith("handshake.ping")
            and "@2025-11-25" not in row.id
        ):
            assert row.verdict == AS_BOTH, row
    # Where the current spec moved on (SEP-1303, ping at any time) the server follows the spec.
    for rule_id in ("args.missing@2025-11-25", "args.wrong_type@2025-11-25", "handshake.ping_first"):
        assert report.row(rule_id).verdict == AS_SPEC


def test_a_server_that_dies_mid_lane_is_restarted_for_the_rules_after_it(probes: Probes) -> None:
    # The escape server dies on tool.weather (in each era it speaks); every other rule still got its answer.
    report = probes.get("escape")
    died = [r.id for r in report.rules if r.observed == DIED]
    assert died == ["tool.weather"] + (["stateless.tool.weather"] if report.spoken("stateless") else [])


def test_pagination_is_followed_to_the_end(probes: Probes) -> None:
    row = probes.get("paged").row("list.pagination")
    assert (row.observed, row.detail) == (PAGINATED, "3 tools in 3 pages")
    assert row.verdict == AS_SPEC


def test_the_same_server_gives_the_same_report(probes: Probes) -> None:
    def dump(report: Report) -> str:
        return json.dumps(report.to_json(), sort_keys=True)

    assert dump(probes.get("is_error")) == dump(probes.get("is_error#again"))


def test_the_json_report_names_the_server_and_counts_verdicts(probes: Probes) -> None:
    data = probes.get("is_error").to_json()
    assert data["format"] == "harness-probe/1"
    assert data["server"] == {"name": "harness-demo", "version": "0.1.0"}
    assert sum(data["summary"].values()) == len(data["rules"])
    assert data["not_mcp"] is None
