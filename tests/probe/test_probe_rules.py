"""The rules table is data: unique ids, known labels, lanes that fit the runner."""

from __future__ import annotations

import re

from harness.probe.outcomes import (
    CURSOR_LOOP,
    ECHO,
    EMPTY_RESULT,
    IS_ERROR_MASKED,
    IS_ERROR_REASON,
    OTHER_VERSION,
    PAGINATED,
    REFUSED,
    RESULT,
    SINGLE_PAGE,
)
from harness.probe.rules import MAIN, RULES, all_rules, tool_rules
from harness.probe.runner import lanes_of
from harness.probe.session import STATE_RANK
from harness.probe.steps import ToolCase
from harness.protocol.lifecycle import State
from harness.protocol.versions import LATEST_VERSION, SUPPORTED_VERSIONS

LABELS = {
    RESULT,
    EMPTY_RESULT,
    IS_ERROR_REASON,
    IS_ERROR_MASKED,
    ECHO,
    OTHER_VERSION,
    SINGLE_PAGE,
    PAGINATED,
    REFUSED,
}


def test_rule_ids_are_unique() -> None:
    ids = [r.id for r in all_rules((ToolCase("weather"), ToolCase("weather"), ToolCase("add")))]
    assert len(ids) == len(set(ids))


def test_every_expectation_accepts_only_labels_the_probe_gives() -> None:
    for rule in RULES:
        for expect in (rule.reference, rule.spec):
            if expect is None:
                continue
            for pattern in expect.accepts:
                assert pattern in LABELS or re.fullmatch(r"error (-\d+|\*)", pattern), (rule.id, pattern)
            assert CURSOR_LOOP not in expect.accepts


def test_the_issue_s_rules_are_all_present() -> None:
    ids = {r.id for r in RULES}
    wanted = {
        "handshake.before_initialize",
        "handshake.before_initialized",
        "envelope.id_null",
        "envelope.jsonrpc_1_0",
        "envelope.unparseable",
        "method.unknown",
        "method.ping",
        "tools.unknown",
        "args.missing@2025-06-18",
        "args.wrong_type@2025-06-18",
        "args.missing@2025-11-25",
        "args.wrong_type@2025-11-25",
        "list.pagination",
        "list.bogus_cursor",
    } | {f"version.{v}" for v in SUPPORTED_VERSIONS}
    assert wanted <= ids
    assert any(r.id.startswith("version.") and r.version not in SUPPORTED_VERSIONS for r in RULES)


def test_invalid_arguments_change_channel_at_sep_1303_in_the_spec_only() -> None:
    by_id = {r.id: r for r in RULES}
    old, new = by_id["args.missing@2025-06-18"], by_id["args.missing@2025-11-25"]
    assert old.reference == new.reference
    assert old.spec is not None and old.spec.accepts == ("error -32602",)
    assert new.spec is not None and new.spec.accepts == (IS_ERROR_REASON,)


def test_version_rules_start_a_session_of_their_own_version() -> None:
    for rule in RULES:
        if rule.id.startswith("version."):
            assert rule.state is State.NEW
            assert rule.id == f"version.{rule.version}"


def test_each_lane_needs_one_process_when_the_server_behaves() -> None:
    for lane in lanes_of(all_rules((ToolCase("weather"),))):
        ranks = [STATE_RANK[r.state] for r in lane]
        assert ranks == sorted(ranks)
        assert len({(r.version, r.lane) for r in lane}) == 1
        initializers = [r for r in lane if r.id.startswith("version.")]
        assert len(initializers) <= 1


def test_tool_rules_run_in_the_main_lane_at_the_latest_version() -> None:
    rules = tool_rules((ToolCase("weather", {"city": "Atlantis"}), ToolCase("weather", {"city": "Nowhere"})))
    assert [r.id for r in rules] == ["tool.weather", "tool.weather#2"]
    assert all(r.lane == MAIN and r.version == LATEST_VERSION and r.state is State.READY for r in rules)
    assert rules[0].sent == 'tools/call weather {"city":"Atlantis"}'
