"""Eras: which ones a server speaks (``server/discover``), the 2026-07-28 checks, verdicts per era.

The official SDK's server (mcp 2.3.0) is dual-era: it answers ``initialize`` and, on a process
opened with a 2026-07-28 request, serves per-request ``_meta`` without a handshake. Run with
``--input-tools`` it offers ``delete_file``, which asks the client to confirm (MRTR). Our demo
server is tested either way: whatever it says about the stateless era, the report must agree.
"""

from __future__ import annotations

import io
import json

import pytest
from probe_runs import Probes
from rich.console import Console

from harness.probe import Report, RuleResult, render_table
from harness.probe.outcomes import (
    AS_SPEC,
    DISCOVERED,
    INPUT_REQUIRED,
    IS_ERROR_MASKED,
    MALFORMED_INPUT,
    NO_RESULT_TYPE,
    UNSUPPORTED_NO_LIST,
    Outcome,
    classify_stateless,
)
from harness.probe.rules import ERAS, HANDSHAKE_ERA, STATELESS_ERA, stateless_rules
from harness.probe.runner import eras_of
from harness.probe.steps import ToolCase, classify_discover, classify_unsupported, input_responses, tamper

pytestmark = pytest.mark.timeout(240)

STATELESS_CHECKS = (
    "stateless.discover",
    "stateless.meta",
    "stateless.no_meta",
    "stateless.unsupported_version",
)


@pytest.mark.interop
class TestTheSdkDualEraServer:
    def test_both_eras_are_found(self, probes: Probes) -> None:
        report = probes.get("sdk")
        assert report.spoken(HANDSHAKE_ERA) and report.spoken(STATELESS_ERA)
        assert report.eras is not None
        evidence = report.eras[STATELESS_ERA]["evidence"]
        assert evidence == "server/discover: discover result: supportedVersions 2026-07-28"

    def test_the_2026_checks_run_beside_the_handshake_ones(self, probes: Probes) -> None:
        report = probes.get("sdk")
        for rule_id in STATELESS_CHECKS:
            row = report.row(rule_id)
            assert (row.era, row.verdict, row.basis) == (STATELESS_ERA, AS_SPEC, "spec"), row
        assert report.row("stateless.discover").observed == DISCOVERED
        assert report.row("stateless.no_meta").observed == "error -32602"
        unsupported = report.row("stateless.unsupported_version")
        assert (unsupported.observed, unsupported.detail) == ("error -32022", "supported: 2026-07-28")
        assert report.row("handshake.ping_first").era == HANDSHAKE_ERA

    def test_a_raising_tool_s_reason_is_masked_in_both_eras(self, probes: Probes) -> None:
        report = probes.get("sdk")
        for rule_id in ("tool.weather", "stateless.tool.weather"):
            assert report.row(rule_id).observed == IS_ERROR_MASKED
            assert report.row(rule_id).detail.endswith("Error executing tool weather")

    def test_a_tool_that_asks_for_input_gets_the_mrtr_checks(self, probes: Probes) -> None:
        report = probes.get("sdk")
        assert report.row("stateless.tool.delete_file").observed == INPUT_REQUIRED
        shape = report.row("stateless.mrtr.shape")
        assert (shape.observed, shape.verdict) == (INPUT_REQUIRED, AS_SPEC)
        assert shape.detail == "delete_file: asks elicitation/create; with requestState"
        tampered = report.row("stateless.mrtr.tampered")
        assert (tampered.observed, tampered.verdict) == ("error -32602", AS_SPEC)
        retry = report.row("stateless.mrtr.retry")
        assert (retry.observed, retry.detail) == ("result", "deleted notes.txt")

    def test_verdicts_are_counted_per_era_in_the_json(self, probes: Probes) -> None:
        data = probes.get("sdk").to_json()
        by_era = data["summary_by_era"]
        assert set(by_era) == set(ERAS)
        for era in ERAS:
            assert sum(by_era[era].values()) == sum(1 for row in data["rules"] if row["era"] == era)
        assert {k: sum(by_era[e][k] for e in ERAS) for k in data["summary"]} == data["summary"]


def test_our_demo_server_reads_as_it_speaks(probes: Probes) -> None:
    # Holds whether or not `harness serve --demo` speaks 2026-07-28.
    report = probes.get("is_error")
    assert report.spoken(HANDSHAKE_ERA)
    stateless = [row.id for row in report.rules if row.era == STATELESS_ERA]
    if report.spoken(STATELESS_ERA):
        assert report.row("stateless.discover").observed == DISCOVERED
        assert set(STATELESS_CHECKS) <= set(stateless)
    else:
        assert stateless == []
        assert report.eras is not None
        assert report.eras[STATELESS_ERA]["evidence"].startswith("server/discover: ")
    assert not any(row.id.startswith("stateless.mrtr.") for row in report.rules)  # no tool asked


class TestEraDetection:
    def test_an_error_to_discover_means_the_stateless_era_is_not_spoken(self) -> None:
        eras = eras_of(
            {
                "version.2025-06-18": Outcome("echo", "answered 2025-06-18"),
                "stateless.discover": Outcome("error -32601", "Method not found"),
            }
        )
        assert eras[HANDSHAKE_ERA] == {"spoken": True, "evidence": "initialize echoed 2025-06-18"}
        assert eras[STATELESS_ERA] == {
            "spoken": False,
            "evidence": "server/discover: error -32601: Method not found",
        }

    def test_a_modern_only_server_speaks_no_handshake(self) -> None:
        eras = eras_of(
            {
                "version.2025-06-18": Outcome("error -32601", "no initialize"),
                "stateless.discover": Outcome(DISCOVERED, "supportedVersions 2026-07-28"),
            }
        )
        assert [eras[e]["spoken"] for e in ERAS] == [False, True]
        assert eras[HANDSHAKE_ERA]["evidence"] == "initialize: error -32601: no initialize"

    def test_stateless_rules_put_discover_first_and_mrtr_last(self) -> None:
        ids = [r.id for r in stateless_rules((ToolCase("book"),))]
        assert ids[0] == "stateless.discover"
        assert ids.index("stateless.tool.book") < ids.index("stateless.mrtr.shape")
        assert ids[-3:] == ["stateless.mrtr.shape", "stateless.mrtr.tampered", "stateless.mrtr.retry"]
        assert all(r.reference is None and r.era == STATELESS_ERA for r in stateless_rules())


def _report(eras: dict[str, dict[str, object]]) -> Report:
    rows = (
        RuleResult("handshake.ping_first", "ping", "2025-11-25", "r", "s", "empty result", "{}", AS_SPEC),
        RuleResult("stateless.meta", "list", "2026-07-28", "-", "s", "result", "", AS_SPEC, STATELESS_ERA),
    )
    return Report(("srv",), 1.0, 1.0, {"name": "srv", "version": "1"}, rows, None, eras)


def _render(report: Report) -> str:
    out = io.StringIO()
    render_table(report, Console(file=out, width=100, color_system=None))
    return out.getvalue()


class TestTheTable:
    def test_one_table_and_summary_per_era_spoken(self) -> None:
        text = _render(_report({e: {"spoken": True, "evidence": ""} for e in ERAS}))
        assert "handshake era: 1 rules: 1 as spec" in text
        assert "stateless era: 1 rules: 1 as spec" in text
        assert "stateless era (2026-07-28" in text

    def test_an_era_not_spoken_is_one_line_with_its_evidence(self) -> None:
        eras = {
            HANDSHAKE_ERA: {"spoken": True, "evidence": "initialize echoed 2025-11-25"},
            STATELESS_ERA: {"spoken": False, "evidence": "server/discover: error -32601: Method not found"},
        }
        full = _report(eras)
        # As the runner reports it: no stateless rows where the era is not spoken.
        report = Report(full.command, 1.0, 1.0, full.server, full.rules[:1], None, eras)
        text = _render(report)
        assert "stateless era: not spoken (server/discover: error -32601: Method not found)" in text
        assert "handshake era: not spoken" not in text
        assert set(json.loads(json.dumps(report.to_json()))["summary_by_era"]) == {HANDSHAKE_ERA}


class TestStatelessReplies:
    def test_a_result_without_result_type_is_named(self) -> None:
        said = classify_stateless({"jsonrpc": "2.0", "id": 1, "result": {"tools": []}})
        assert said.label == NO_RESULT_TYPE

    @pytest.mark.parametrize(
        ("result", "problem"),
        [
            ({"resultType": "input_required"}, "neither inputRequests nor requestState"),
            ({"resultType": "input_required", "inputRequests": {"a": {"method": "x"}}}, "inputRequests"),
            ({"resultType": "input_required", "requestState": 5}, "requestState is not a string"),
        ],
    )
    def test_an_input_request_the_spec_forbids_is_malformed(
        self, result: dict[str, object], problem: str
    ) -> None:
        said = classify_stateless({"jsonrpc": "2.0", "id": 1, "result": result})
        assert said.label == MALFORMED_INPUT and problem in said.detail

    def test_discover_must_list_2026_07_28_with_capabilities(self) -> None:
        ok = {"result": {"resultType": "complete", "supportedVersions": ["2026-07-28"], "capabilities": {}}}
        assert classify_discover(ok).label == DISCOVERED
        lacking = {"result": {"supportedVersions": ["2026-07-28"]}}
        assert classify_discover(lacking).label.startswith("malformed")
        assert classify_discover({"result": {"supportedVersions": ["2027-01-01"]}}).label == "result"
        assert classify_discover({"error": {"code": -32601, "message": "no"}}).label == "error -32601"

    def test_an_unsupported_version_refusal_must_list_the_versions(self) -> None:
        bare = {"error": {"code": -32022, "message": "Unsupported protocol version"}}
        assert classify_unsupported(bare).label == UNSUPPORTED_NO_LIST

    def test_tampering_changes_the_state_and_answers_fit_the_requests(self) -> None:
        for state in ("AAAA", "v1.abcdef", "x"):
            assert tamper(state) != state and len(tamper(state)) == len(state)
        requests = {
            "confirm": {
                "method": "elicitation/create",
                "params": {"requestedSchema": {"properties": {"ok": {"type": "boolean"}}}},
            },
            "llm": {"method": "sampling/createMessage", "params": {}},
            "where": {"method": "roots/list"},
        }
        answers = input_responses({"inputRequests": requests})
        assert answers["confirm"] == {"action": "accept", "content": {"ok": True}}
        assert answers["llm"]["role"] == "assistant"
        assert answers["where"] == {"roots": []}
