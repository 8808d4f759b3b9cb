"""A trace cut into steps: every step accounted for, and the first divergence where it is."""

from __future__ import annotations

import io
import itertools

import pytest

from harness.scenarios.scenario import list_scenarios  # type: ignore[attr-defined,unused-ignore]
from harness.session.simulated import run_session
from harness.view.timeline import Divergence, first_divergence, parse_lines, timeline

AGENTS = ("naive", "retry", "reader", "refresher", "oracle")
STRATEGIES = ("is_error", "masked", "collapse", "escape", "input_required")


def _run(scenario: str, agent: str, strategy: str, seed: int = 0, **kw: str) -> tuple[dict, object]:
    sink = io.BytesIO()
    result = run_session(scenario, agent, strategy, seed, "json", sink, **kw)
    return result.to_row(), timeline(parse_lines(sink.getvalue()))


@pytest.mark.parametrize("scenario", sorted(list_scenarios()))
def test_every_step_of_every_shipped_scenario_is_found_in_its_trace(scenario: str) -> None:
    for agent, strategy, host, era in itertools.product(
        AGENTS, STRATEGIES, ("typical", "transparent"), ("handshake", "stateless")
    ):
        row, t = _run(scenario, agent, strategy, host=host, era=era)
        where = f"{scenario} {agent} {strategy} {host} {era}"
        assert t.exact, f"{where}: {t.problems}"
        assert [s.step for s in t.steps] == list(range(row["steps"] + 1)), where
        assert all(s.action is not None for s in t.steps), where
        calls = sum(1 for s in t.steps if s.action and s.action["kind"] == "call")
        assert calls == row["tool_calls"], where
        faults = sum(len(s.faults) for s in t.steps)
        assert faults == sum(
            v
            for k, v in row.items()
            if k.startswith("faults_") and k not in ("faults_explicit", "faults_implicit")
        ), where


def test_the_host_view_is_what_the_agent_saw_of_a_collapsed_error() -> None:
    _, t = _run("strict_dates", "reader", "collapse")
    step = t.steps[2]
    assert step.action == {
        "kind": "call",
        "tool": "book",
        "arguments": {"item": "table for two", "date": "14/03/2025"},
    }
    assert [f["kind"] for f in step.faults] == ["bad_argument"]
    assert step.reply is not None and step.reply["error"]["code"] == -32603
    assert "expected form" in step.reply["error"]["message"]  # on the wire ...
    assert step.seen() == {"kind": "rpc_error", "code": -32603, "message": None}  # ... not to the agent


def test_is_error_and_collapse_part_where_the_fault_reaches_the_agent() -> None:
    _, a = _run("strict_dates", "reader", "is_error")
    _, b = _run("strict_dates", "reader", "collapse")
    d = first_divergence(a, b)
    assert d.seen == 2  # the bad_argument fault: readable under is_error, a bare -32603 under collapse
    assert d.action == 3  # the reader fixes the date only where it could read why
    assert a.steps[2].seen()["isError"] is True and "2025-03-14" in str(a.steps[2].seen())


def test_identical_sessions_do_not_diverge() -> None:
    _, a = _run("flaky_weather", "reader", "is_error", seed=1)
    _, b = _run("flaky_weather", "reader", "is_error", seed=1)
    assert first_divergence(a, b).seen is None and first_divergence(a, b).action is None


def test_an_agent_that_never_reads_error_text_sees_another_text_and_acts_the_same() -> None:
    _, a = _run("strict_dates", "naive", "is_error")
    _, b = _run("strict_dates", "naive", "masked")
    assert first_divergence(a, b) == Divergence(seen=2, action=None, steps=4)


def test_the_stateless_eras_subscription_rides_on_the_first_observation() -> None:
    _, a = _run("strict_dates", "reader", "collapse")
    _, b = _run("strict_dates", "reader", "collapse", era="stateless")
    assert b.steps[1].notifications == ["notifications/subscriptions/acknowledged"]
    assert a.steps[0].seen() == b.steps[0].seen()  # the same tools at reset
    assert first_divergence(a, b).seen == 1 and first_divergence(a, b).action is None


def test_a_session_that_ended_is_a_divergence_against_one_that_goes_on() -> None:
    _, a = _run("strict_dates", "reader", "is_error")
    short = type(a)(a.steps[:3], a.end, [])
    assert first_divergence(short, a).seen == 3


def test_a_multi_round_trip_call_is_one_step() -> None:
    row, t = _run("strict_dates", "reader", "input_required", era="stateless")
    booking = next(s for s in t.steps if s.action and s.action.get("tool") == "book")
    assert booking.rounds == 2  # the call, then the same call with the answer to the server's question
    assert booking.seen()["isError"] is False
    assert len(t.steps) - 1 == row["steps"]


def test_an_unreadable_line_is_kept_and_a_cut_trace_is_flagged() -> None:
    lines = parse_lines(b'{"dir":"c2s","msg":{"jsonrpc":"2.0","id":1,"method":"initialize"}}\nnot json\n')
    assert lines[1] == {"unreadable": "not json"}
    cut = timeline(lines)
    assert not cut.exact and "no end note" in cut.problems[0]


def test_a_proxys_line_naming_the_message_it_passed_on_reads_as_that_message() -> None:
    exchanges = [
        (
            '{"jsonrpc":"2.0","id":1,"method":"tools/list"}',
            '{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"add"}]}}',
        ),
        (
            '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"add","arguments":{"x":2,"y":3}}}',
            '{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"5"}]}}',
        ),
    ]
    text = "".join(
        f'{{"dir":"c2s","msg":{ask}}}\n{{"dir":"p2u","same":"c2s"}}\n{{"dir":"u2p","msg":{got}}}\n'
        '{"dir":"s2c","same":"u2p"}\n'
        for ask, got in exchanges
    )
    steps = timeline(parse_lines(text.encode())).steps
    assert steps[0].tools == ["add"]
    (call,) = [s for s in steps if s.action and s.action.get("tool") == "add"]
    assert call.reply == {"jsonrpc": "2.0", "id": 3, "result": {"content": [{"type": "text", "text": "5"}]}}
