"""Servers that never answer, answer garbage, or exit: the probe ends with a clear report."""

from __future__ import annotations

import pytest
from probe_runs import Probes

from harness.probe.outcomes import DIED, GARBAGE, NO_REPLY, NOT_RUN

pytestmark = pytest.mark.timeout(120)

CASES = {"silent": NO_REPLY, "garbage": GARBAGE, "exit": DIED}


@pytest.mark.parametrize("name", list(CASES))
def test_every_rule_ends_in_the_failure_or_not_run(probes: Probes, name: str) -> None:
    report = probes.get(name)
    assert {row.observed for row in report.rules} == {CASES[name], NOT_RUN}


@pytest.mark.parametrize("name", list(CASES))
def test_the_first_message_of_each_process_reports_the_failure_itself(probes: Probes, name: str) -> None:
    report = probes.get(name)
    for rule_id in ("handshake.ping_first", "version.2025-06-18", "version.2000-01-01"):
        assert report.row(rule_id).observed == CASES[name]


@pytest.mark.parametrize("name", list(CASES))
def test_rules_after_a_failed_handshake_say_why_they_did_not_run(probes: Probes, name: str) -> None:
    row = probes.get(name).row("tool.weather")
    assert row.observed == NOT_RUN
    # A server that died before its first line is not restarted for every rule (issue 20).
    why = "not restarted, it died at start" if name == "exit" else f"initialize: {CASES[name]}"
    assert row.detail.startswith(why)


def test_the_details_say_what_happened(probes: Probes) -> None:
    assert probes.get("silent").row("handshake.ping_first").detail == "nothing within 1s"
    assert "'garbage: this is not JSON-RPC'" in probes.get("garbage").row("handshake.ping_first").detail
    died = probes.get("exit").row("handshake.ping_first").detail
    assert died == "exited with code 3: exit_server: refusing to serve"


@pytest.mark.parametrize("name", [*CASES, "is_error"])
def test_silence_garbage_and_death_are_findings_not_a_foreign_peer(probes: Probes, name: str) -> None:
    # Only an echo or JSON that is no JSON-RPC makes a peer "not an MCP server"; these keep their rows.
    assert probes.get(name).not_mcp is None
