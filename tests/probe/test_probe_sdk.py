"""Probing a server built with the official SDK (mcp 2.3.0): its known differences show up."""

from __future__ import annotations

import pytest
from probe_runs import Probes

from harness.probe.outcomes import AS_BOTH, AS_SPEC, IS_ERROR_MASKED, IS_ERROR_REASON, NO_REPLY, RESULT

pytestmark = pytest.mark.interop


def test_a_raising_tool_s_reason_is_masked(probes: Probes) -> None:
    row = probes.get("sdk").row("tool.weather")
    assert (row.observed, row.detail, row.verdict) == (
        IS_ERROR_MASKED,
        "Error executing tool weather",
        "differs",
    )


def test_an_unknown_tool_is_answered_with_is_error_not_a_protocol_error(probes: Probes) -> None:
    row = probes.get("sdk").row("tools.unknown")
    assert (row.observed, row.verdict) == (IS_ERROR_REASON, "differs")
    assert "Unknown tool" in row.detail


def test_before_initialize_it_refuses_with_invalid_params_and_between_it_answers(probes: Probes) -> None:
    report = probes.get("sdk")
    before = report.row("handshake.before_initialize")
    assert (before.observed, before.verdict) == ("error -32602", AS_SPEC)
    between = report.row("handshake.before_initialized")
    assert (between.observed, between.verdict) == (RESULT, AS_SPEC)


@pytest.mark.parametrize("rule_id", ["envelope.id_null", "envelope.jsonrpc_1_0", "envelope.unparseable"])
def test_malformed_envelopes_get_no_reply_at_all(probes: Probes, rule_id: str) -> None:
    row = probes.get("sdk").row(rule_id)
    assert (row.observed, row.verdict) == (NO_REPLY, "no reply")


def test_invalid_arguments_are_is_error_under_every_version(probes: Probes) -> None:
    report = probes.get("sdk")
    for version, verdict in (("2025-06-18", "differs"), ("2025-11-25", AS_SPEC)):
        for kind in ("missing", "wrong_type"):
            row = report.row(f"args.{kind}@{version}")
            assert (row.observed, row.verdict) == (IS_ERROR_REASON, verdict), row


def test_it_ignores_a_bogus_cursor_and_agrees_on_the_rest(probes: Probes) -> None:
    report = probes.get("sdk")
    assert report.row("list.bogus_cursor").observed == RESULT
    assert report.row("method.unknown").verdict == AS_BOTH
    assert report.row("version.2000-01-01").detail == "answered 2025-11-25"
    assert report.server == {"name": "sdk-weather", "version": "0.1.0"}
