"""Sessions in both protocol eras, and the input_required strategy: mechanisms with known behaviour.

Each test holds what the harness does in an era or under the asking strategy (what goes on the
wire, what a session records, what stays paired); none says which era or strategy is better.
"""

from __future__ import annotations

import io
import json
from typing import Any

import pytest

from harness.protocol.strategies import STRATEGIES
from harness.scenarios.scenario import load_scenario
from harness.session.simulated import ERAS, run_session


def wire(
    scenario: Any, agent: str, strategy: str, era: str, seed: int = 0
) -> tuple[Any, list[dict[str, Any]]]:
    """The session's record and the client-to-server messages of its trace."""
    buf = io.BytesIO()
    result = run_session(scenario, agent, strategy, seed, trace=buf, era=era)
    lines = [json.loads(line) for line in buf.getvalue().splitlines()]
    sent = [json.loads(ln["msg"]) if isinstance(ln.get("msg"), str) else ln.get("msg") for ln in lines
            if ln.get("dir") == "c2s"]  # fmt: skip
    return result, [m for m in sent if isinstance(m, dict)]


def test_the_row_records_the_era_and_handshake_is_the_default() -> None:
    assert run_session("flaky_weather", "reader", "is_error", 0).era == "handshake"
    assert run_session("flaky_weather", "reader", "is_error", 0, era="stateless").era == "stateless"


def test_a_stateless_session_sends_no_handshake_and_meta_on_every_request() -> None:
    _, sent = wire("flaky_weather", "reader", "is_error", "stateless")
    assert sent, "the trace records the client's messages"
    methods = [m.get("method") for m in sent]
    assert "initialize" not in methods and "notifications/initialized" not in methods
    assert "subscriptions/listen" in methods  # list changes come on a stream in this era
    for m in sent:
        if "id" in m:
            meta = m["params"]["_meta"]
            assert meta["io.modelcontextprotocol/protocolVersion"] == "2026-07-28"
            assert "io.modelcontextprotocol/clientCapabilities" in meta
    _, legacy = wire("flaky_weather", "reader", "is_error", "handshake")
    assert legacy[0]["method"] == "initialize"


@pytest.mark.parametrize("era", ERAS)
def test_the_same_inputs_give_the_same_trace_in_each_era(era: str) -> None:
    first = run_session("deprecated_search", "refresher", "collapse", 3, era=era)
    again = run_session("deprecated_search", "refresher", "collapse", 3, era=era)
    assert first.trace_hash == again.trace_hash


def test_the_fault_schedule_is_shared_by_eras_and_strategies() -> None:
    hashes = {
        run_session("rate_limited_search", "reader", s, 5, era=e).fault_schedule_hash
        for s in STRATEGIES
        for e in ERAS
    }
    assert len(hashes) == 1


def test_a_removed_tool_reaches_a_stateless_client_through_its_listen_stream() -> None:
    result = run_session("new_tool", "refresher", "is_error", 0, era="stateless")
    assert result.list_changed_seen >= 1 and result.success


def test_a_cached_tool_list_hides_a_removal_until_it_expires() -> None:
    """deprecated_search removes a tool with notice; the refresher re-lists after -32601. With a
    60 s ttlMs the stateless client answers that re-list from its cache, still naming the removed
    tool, so the refresher calls it again: one more stale call than with no caching hint."""
    sc = load_scenario("deprecated_search")
    fresh = run_session(sc, "refresher", "is_error", 0, era="stateless")
    cached = run_session(sc.with_overrides({"list_ttl_s": 60}), "refresher", "is_error", 0, era="stateless")
    handshake = run_session(sc.with_overrides({"list_ttl_s": 60}), "refresher", "is_error", 0)
    assert cached.stale_tool_calls > fresh.stale_tool_calls
    assert handshake.stale_tool_calls == fresh.stale_tool_calls  # no ttlMs in the handshake era


@pytest.mark.parametrize("era", ERAS)
def test_input_required_asks_the_reader_for_the_argument_and_the_call_goes_on(era: str) -> None:
    result, sent = wire("strict_dates", "reader", "input_required", era)
    assert result.success and result.input_requests >= 1 and result.inputs_accepted == result.input_requests
    is_error = run_session("strict_dates", "reader", "is_error", 0, era=era)
    assert result.steps < is_error.steps  # the answer rides inside the call: no corrected call of its own
    if era == "stateless":
        retries = [
            m for m in sent if m.get("method") == "tools/call" and "inputResponses" in m.get("params", {})
        ]
        assert retries and all("requestState" in m["params"] for m in retries)


@pytest.mark.parametrize("era", ERAS)
def test_an_agent_without_the_capability_gets_the_spec_error_and_no_reason(era: str) -> None:
    result = run_session("strict_dates", "naive", "input_required", 0, era=era)
    assert result.input_requests >= 1 and result.inputs_accepted == 0
    assert result.errors_rpc_other >= 1  # -32021: the client declared no elicitation
    assert not result.success


def test_a_question_without_a_usable_reason_is_declined() -> None:
    silent = load_scenario("strict_dates").with_overrides({"faults.quality": "absent"})
    result = run_session(silent, "reader", "input_required", 0)
    assert result.input_requests >= 1 and result.inputs_accepted == 0
    ignoring = run_session("strict_dates", "reader", "input_required", 0, agent_params={"trust": "ignore"})
    assert ignoring.inputs_accepted == 0


def test_other_strategies_never_ask_and_keep_their_handshake_traces() -> None:
    for strategy in ("is_error", "masked", "collapse"):
        result, sent = wire("strict_dates", "reader", strategy, "handshake")
        assert result.input_requests == 0
        caps = sent[0]["params"]["capabilities"]
        assert "elicitation" not in caps  # declared only where a tool may ask


def test_the_cli_spells_the_eras_the_session_takes() -> None:
    from harness.cli.run import ERAS as CLI_ERAS

    assert CLI_ERAS == ERAS


def test_a_read_completes_its_subgoal_with_the_value_the_client_gave() -> None:
    """The end state judges what ran: a read whose argument the reader supplied when the tool
    asked completes its subgoal, though the call the agent sent had the wrong form."""
    from harness.scenarios.scenario import parse_scenario

    sc = parse_scenario(
        {
            "description": "A conversion that wants upper-case currency codes.",
            "tools": ["convert"],
            "task": {
                "subgoals": [
                    {
                        "name": "c",
                        "tool": "convert",
                        "arguments": {"source": "nok", "target": "GBP", "amount": 20},
                        "expect": {"source": "NOK"},
                    }
                ]
            },
            "faults": [
                {"kind": "bad_argument", "tool": "convert", "rate": 1.0, "argument": "source", "valid": "NOK"}
            ],
        }
    )
    for era in ERAS:
        asked = run_session(sc, "reader", "input_required", 0, era=era)
        told = run_session(sc, "reader", "is_error", 0, era=era)
        assert asked.inputs_accepted == 1 and asked.subgoals_done == 1 and asked.success
        assert told.success and asked.tool_calls < told.tool_calls
