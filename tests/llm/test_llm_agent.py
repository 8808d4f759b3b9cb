"""The llm agent in whole sessions against a fake endpoint: what the model is shown of a tool's
failure under each strategy and host, one action per step, and what a session costs."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import pytest
from fake_endpoint import Answer, FakeEndpoint, careful_booker, completion, final, scripted, tool_call
from hypothesis import given
from hypothesis import strategies as st

from harness.llm.agent import LLMAgent, render
from harness.llm.client import Reply, malformed_tool_calls
from harness.scenarios.scenario import Task, load_scenario
from harness.session.agent import (
    AgentParamError,
    CallTool,
    Finish,
    GiveUp,
    ListTools,
    RPCErrorObservation,
    Start,
    ToolResult,
    ToolsListed,
)
from harness.session.simulated import run_session

REASON = "2025-03-14"
"""What the booking tool's error says the date must look like (strict_dates)."""


def params(fake: FakeEndpoint, **more: Any) -> dict[str, Any]:
    return {"base_url": fake.base_url, "model": "fake", **more}


def tool_messages(fake: FakeEndpoint) -> list[str]:
    """Every tool message the model was shown, over every request the endpoint received."""
    seen = dict.fromkeys(
        m["content"] for request in fake.requests for m in request["messages"] if m["role"] == "tool"
    )
    return list(seen)


@pytest.mark.parametrize(
    ("strategy", "host", "shown"),
    [
        ("is_error", "typical", True),
        ("collapse", "typical", False),
        ("masked", "typical", False),
        ("collapse", "transparent", True),
    ],
)
def test_the_model_reads_the_failure_reason_exactly_where_the_host_shows_it(
    strategy: str, host: str, shown: bool
) -> None:
    with FakeEndpoint(careful_booker) as fake:
        row = run_session("strict_dates", "llm", strategy, 0, host=host, agent_params=params(fake))
    failures = [text for text in tool_messages(fake) if text.startswith("Tool error")]
    assert failures, "the booking's failure reached the model in some form"
    assert any(REASON in text for text in failures) is shown
    assert row.success is shown and row.status == "ok"
    assert row.end == ("finished" if shown else "gave_up")


def test_under_collapse_a_typical_host_shows_the_model_the_code_alone() -> None:
    with FakeEndpoint(careful_booker) as fake:
        run_session("strict_dates", "llm", "collapse", 0, agent_params=params(fake))
    failures = [text for text in tool_messages(fake) if text.startswith("Tool error")]
    assert failures == ["Tool error: the call failed (JSON-RPC error -32603)"]


def test_the_tools_and_the_task_are_what_the_model_is_given() -> None:
    with FakeEndpoint(careful_booker) as fake:
        run_session("strict_dates", "llm", "is_error", 0, agent_params=params(fake, temperature=0.5))
    first = fake.requests[0]
    assert first["model"] == "fake" and first["temperature"] == 0.5 and isinstance(first["seed"], int)
    assert first["messages"][1] == {
        "role": "user",
        "content": "Check the weather in Paris and book a table for 14 March.",
    }
    book = next(t["function"] for t in first["tools"] if t["function"]["name"] == "book")
    assert book["parameters"]["required"] == ["item", "date"] and "YYYY-MM-DD" in book["description"]


def test_a_session_reports_its_tokens_and_latency_and_scripted_agents_report_none() -> None:
    with FakeEndpoint(careful_booker) as fake:
        row = run_session("flaky_weather", "llm", "is_error", 0, agent_params=params(fake, max_retries=0))
    turns = row.tool_calls + 1  # one answer per tool call, and the last one without
    assert row.tokens_in == 100 * turns and row.tokens_out == 10 * turns
    assert row.model_latency_s > 0
    scripted_row = run_session("flaky_weather", "reader", "is_error", 0)
    assert (scripted_row.tokens_in, scripted_row.tokens_out, scripted_row.model_latency_s) == (0, 0, 0.0)


@pytest.mark.parametrize("faults", [True, False])
def test_an_endpoint_that_stays_down_makes_a_harness_error_row_with_the_reason(faults: bool) -> None:
    # With faults, the fault-free baseline runs first and is where the endpoint gives out.
    scenario = load_scenario("strict_dates")
    scenario = scenario if faults else replace(scenario, faults=())
    busy = Answer({"error": "busy"}, status=429, headers={"Retry-After": "0"})
    with FakeEndpoint(scripted(busy)) as fake:
        row = run_session(
            scenario, "llm", "is_error", 0, agent_params=params(fake, max_retries=2, backoff_s=0)
        )
    assert row.status == "harness_error" and row.end == "error"
    assert "EndpointError" in row.error and "429" in row.error and "after 3 attempts" in row.error
    assert row.error.startswith("the fault-free baseline broke") is faults


# -- one observation at a time ---------------------------------------------------------------

TOOLS = [{"name": "weather", "description": "d", "inputSchema": {"type": "object"}}]
TASK = Task("Check the weather.", ())


def agent_for(fake: FakeEndpoint) -> LLMAgent:
    agent = LLMAgent()
    agent.configure(params(fake))
    agent.reset(TASK, TOOLS, 7)
    return agent


def test_several_tool_calls_in_one_answer_are_made_one_per_step_before_the_model_is_asked_again() -> None:
    two = completion(
        {
            "content": None,
            "tool_calls": [
                {
                    "id": "a",
                    "type": "function",
                    "function": {"name": "weather", "arguments": '{"city":"Oslo"}'},
                },
                {
                    "id": "b",
                    "type": "function",
                    "function": {"name": "weather", "arguments": '{"city":"Rome"}'},
                },
            ],
        }
    )
    with FakeEndpoint(scripted(two, final("done"))) as fake:
        agent = agent_for(fake)
        assert agent.act(Start()) == CallTool("weather", {"city": "Oslo"})
        sunny = ({"type": "text", "text": "sunny"},)
        assert agent.act(ToolResult("weather", {"city": "Oslo"}, sunny, False)) == CallTool(
            "weather", {"city": "Rome"}
        )
        assert len(fake.requests) == 1
        assert isinstance(agent.act(ToolResult("weather", {"city": "Rome"}, sunny, False)), Finish)
    answered = [
        (m["tool_call_id"], m["content"]) for m in fake.requests[1]["messages"] if m["role"] == "tool"
    ]
    assert answered == [("a", "sunny"), ("b", "sunny")]


def test_list_changed_makes_the_agent_list_tools_and_the_model_gets_the_new_list() -> None:
    with FakeEndpoint(scripted(tool_call("weather", {"city": "Oslo"}), final("done"))) as fake:
        agent = agent_for(fake)
        agent.act(Start())
        changed = ToolResult(
            "weather",
            {},
            ({"type": "text", "text": "ok"},),
            False,
            notifications=("notifications/tools/list_changed",),
        )
        assert isinstance(agent.act(changed), ListTools)
        new = {"name": "forecast", "description": "", "inputSchema": {"type": "object"}}
        assert isinstance(agent.act(ToolsListed((new,))), Finish)
    assert [t["function"]["name"] for t in fake.requests[-1]["tools"]] == ["forecast"]


def test_an_answer_starting_give_up_gives_up_with_its_text() -> None:
    with FakeEndpoint(scripted(final("GIVE UP: no such city"))) as fake:
        action = agent_for(fake).act(Start())
    assert action == GiveUp("GIVE UP: no such city")


@pytest.mark.parametrize(
    ("observation", "text"),
    [
        (ToolResult("t", {}, ({"type": "text", "text": "42"},), False), "42"),
        (ToolResult("t", {}, ({"type": "text", "text": "no such city"},), True), "Tool error: no such city"),
        (ToolResult("t", {}, (), False), "(no content)"),
        (
            ToolResult("t", {}, ({"type": "image", "data": "AA"},), False),
            json.dumps({"type": "image", "data": "AA"}),
        ),
        (RPCErrorObservation("t", {}, -32603, None), "Tool error: the call failed (JSON-RPC error -32603)"),
        (
            RPCErrorObservation("t", {}, -32603, "bad date"),
            "Tool error: the call failed (JSON-RPC error -32603): bad date",
        ),
    ],
)
def test_render_is_what_the_host_shows_the_model(
    observation: ToolResult | RPCErrorObservation, text: str
) -> None:
    assert render(observation) == text


@pytest.mark.parametrize(
    ("knobs", "message"),
    [
        ({"colour": "red"}, "does not take agent.colour"),
        ({"temperature": 3}, "agent.temperature=3 must be >= 0 and <= 2"),
        ({"max_retries": -1}, "must be an integer >= 0"),
        ({"replay": "maybe"}, "must be true or false"),
    ],
)
def test_a_knob_it_does_not_take_or_a_bad_value_is_refused_on_one_line(
    knobs: dict[str, Any], message: str
) -> None:
    with pytest.raises(AgentParamError, match=message):
        LLMAgent().configure(knobs)


def test_harness_list_describes_each_knob_by_its_default_and_meaning() -> None:
    described = LLMAgent.describe_knobs()
    assert list(described) == list(LLMAgent.knobs)
    assert described["temperature"] == "default 0: sampling temperature, sent in every request"
    assert described["replay"].startswith("default false: ")
    assert described["max_tokens"].startswith("default none: ")


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=8,
)
FUNCTION = st.fixed_dictionaries({"name": st.text(max_size=8)}, optional={"arguments": JSON | st.text()})
CALL = st.fixed_dictionaries({"function": FUNCTION}, optional={"id": JSON, "type": JSON})
CALLS = st.lists(CALL, max_size=3) | JSON
MESSAGE = st.fixed_dictionaries({}, optional={"content": JSON, "tool_calls": CALLS})


@given(message=MESSAGE)
def test_whatever_answer_the_client_accepts_the_agent_turns_into_an_action(message: dict[str, Any]) -> None:
    if malformed_tool_calls(message) is not None:
        return  # the client asks again; the agent never sees it
    agent = LLMAgent()
    agent.configure({"model": "m"})
    agent.reset(TASK, TOOLS, 0)
    agent._ask = lambda request: Reply({"choices": [{"message": message}]}, 0.0, 1, 0, 0)  # type: ignore[method-assign]
    action = agent.act(Start())
    assert isinstance(action, CallTool | Finish | GiveUp)
    json.dumps(agent.messages)  # the conversation stays sendable
