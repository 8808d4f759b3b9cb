"""The agent knobs (``agent.<knob>``), one observation at a time, without a session.

Each knob is shown to change what an agent does where it must; which setting does better
overall is not this file's business (nor any test's).
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from harness.errors import UserError
from harness.protocol.server import TOOLS_LIST_CHANGED
from harness.scenarios.scenario import Option, Subgoal, Task
from harness.session.agent import (
    Action,
    AgentParamError,
    CallTool,
    Finish,
    GiveUp,
    ListTools,
    Observation,
    Start,
    ToolResult,
    ToolsListed,
    Wait,
    Waited,
)
from scripted_agents import make
from scripted_agents.base import KNOBS, ScriptedAgent
from tests.scripted_agents.test_policies import (
    ALTERNATIVE,
    GONE,
    MASKED,
    PERMANENT,
    PRIMARY,
    RATE,
    READ,
    RPC_HIDDEN,
    TOOLS,
    TRANSIENT,
    WRITE,
    result,
)

DEFAULTS: dict[str, dict[str, Any]] = {
    "naive": {"retry_budget": 0, "backoff": "none", "step_budget": None},
    "retry": {"retry_budget": 3, "backoff": "none", "step_budget": None},
    "reader": {
        "retry_budget": None,
        "backoff": "random",
        "trust": "follow",
        "relist": "never",
        "step_budget": None,
        "rewrites": "on",
        "order": "retry_first",
    },
    "refresher": {
        "retry_budget": None,
        "backoff": "random",
        "trust": "follow",
        "relist": "on_error",
        "step_budget": None,
        "rewrites": "on",
        "order": "retry_first",
    },
    "oracle": {},
    "blind": {
        "retry_budget": None,
        "backoff": "random",
        "relist": "never",
        "step_budget": None,
        "order": "retry_first",
    },
}
"""Each shipped agent's knobs and their defaults, as docs/agents.md tabulates them."""


def configured(name: str, *subgoals: Any, seed: int = 0, **knobs: Any) -> tuple[ScriptedAgent, Action]:
    agent = make(name)
    assert isinstance(agent, ScriptedAgent)
    if knobs:
        agent.configure(knobs)
    agent.reset(Task("test", subgoals or (READ,)), TOOLS, seed)
    return agent, agent.act(Start())


def walk(agent: ScriptedAgent, failure: Observation, steps: int) -> list[Action]:
    """The agent's moves while every call fails with ``failure`` (a wait is simply over)."""
    out: list[Action] = []
    obs = failure
    for _ in range(steps):
        action = agent.act(obs)
        out.append(action)
        if isinstance(action, GiveUp | Finish):
            break
        obs = Waited(action.seconds, 0.0) if isinstance(action, Wait) else failure
    return out


# -- which agent takes which knob, and the refusals -------------------------------------------


@pytest.mark.parametrize("name", sorted(DEFAULTS))
def test_each_agent_lists_its_knobs_with_todays_behaviour_as_the_defaults(name: str) -> None:
    agent = make(name)
    assert isinstance(agent, ScriptedAgent)
    assert agent.knob_defaults() == DEFAULTS[name]
    assert set(agent.knobs) <= set(KNOBS)


@pytest.mark.parametrize("name", ["naive", "retry"])
@pytest.mark.parametrize("knob", ["trust", "relist"])
def test_an_agent_that_reads_nothing_refuses_trust_and_relist_naming_itself_and_the_knob(
    name: str, knob: str
) -> None:
    with pytest.raises(AgentParamError, match=rf"agent '{name}' does not take agent\.{knob}"):
        make(name).configure({knob: KNOBS[knob].choices[0]})


@pytest.mark.parametrize("knob", sorted(KNOBS))
def test_the_oracle_takes_no_knob(knob: str) -> None:
    value = KNOBS[knob].choices[0] if KNOBS[knob].choices else 3
    with pytest.raises(UserError) as info:
        make("oracle").configure({knob: value})
    assert str(info.value) == f"agent 'oracle' does not take agent.{knob} (it takes no knobs)"


@pytest.mark.parametrize(
    ("knob", "value"),
    [("backoff", "slow"), ("trust", "never"), ("relist", "always"), ("retry_budget", -1),
     ("retry_budget", 1.5), ("retry_budget", True), ("step_budget", 0), ("step_budget", "10")],
)  # fmt: skip
def test_a_value_a_knob_does_not_take_is_refused_on_one_line(knob: str, value: Any) -> None:
    with pytest.raises(AgentParamError) as info:
        make("reader").configure({knob: value})
    message = str(info.value)
    assert message.startswith(f"agent 'reader': agent.{knob} must be ") and "\n" not in message


def test_an_unknown_knob_is_refused_with_the_agents_knobs() -> None:
    with pytest.raises(AgentParamError, match=r"does not take agent\.patience \(it takes: retry_budget,"):
        make("refresher").configure({"patience": 3})


def test_configure_leaves_other_instances_and_the_class_alone() -> None:
    first, second = make("reader"), make("reader")
    first.configure({"backoff": "fixed", "trust": "ignore"})
    assert isinstance(second, ScriptedAgent)
    assert second.knob_defaults() == DEFAULTS["reader"]
    assert (second.backoff, second.trust) == ("random", "follow")


# -- retry_budget -------------------------------------------------------------------------------


@pytest.mark.parametrize("budget", [0, 1, 3])
def test_retry_budget_is_the_readers_blind_retries_before_it_switches(budget: int) -> None:
    agent, _ = configured("reader", retry_budget=budget, backoff="none")
    moves = walk(agent, MASKED, 10)
    assert moves[:budget] == [PRIMARY] * budget
    assert moves[budget] == ALTERNATIVE


def test_a_set_retry_budget_keeps_the_drawn_pauses() -> None:
    # The budget the reader would have drawn, set: the same moves, draw for draw.
    for seed in range(10):
        drawn, _ = configured("reader", seed=seed)
        moves = walk(drawn, MASKED, 10)
        budget = drawn.guess_retries
        fixed, _ = configured("reader", seed=seed, retry_budget=budget)
        assert walk(fixed, MASKED, 10) == moves


@pytest.mark.parametrize(("name", "budget"), [("retry", 1), ("retry", 5), ("naive", 2)])
def test_retry_budget_is_the_blind_retries_of_retry_and_naive(name: str, budget: int) -> None:
    agent, _ = configured(name, retry_budget=budget)
    moves = walk(agent, TRANSIENT, 10)
    assert moves[:budget] == [PRIMARY] * budget
    assert isinstance(moves[budget], GiveUp)


# -- backoff ------------------------------------------------------------------------------------


def waits(moves: list[Action]) -> list[float]:
    return [m.seconds for m in moves if isinstance(m, Wait)]


def test_fixed_and_exponential_backoff_wait_before_each_blind_retry() -> None:
    fixed, _ = configured("retry", retry_budget=4, backoff="fixed")
    exponential, _ = configured("retry", retry_budget=4, backoff="exponential")
    at_once, _ = configured("retry", retry_budget=4)
    assert waits(walk(fixed, TRANSIENT, 20)) == [1.0, 1.0, 1.0, 1.0]
    assert waits(walk(exponential, TRANSIENT, 20)) == [1.0, 2.0, 4.0, 8.0]
    assert waits(walk(at_once, TRANSIENT, 20)) == []


def test_the_readers_backoff_applies_to_unexplained_failures_only() -> None:
    agent, _ = configured("reader", retry_budget=3, backoff="exponential")
    moves = walk(agent, MASKED, 7)
    assert waits(moves) == [1.0, 2.0, 4.0] and moves[-1] == ALTERNATIVE
    told, _ = configured("reader", backoff="exponential")
    assert told.act(RATE) == Wait(5.0)  # a named wait is waited as named
    assert told.act(Waited(5.0, 6.0)) == PRIMARY
    assert told.act(TRANSIENT) == PRIMARY  # "try again" is done at once


def test_exponential_backoff_starts_again_on_another_option() -> None:
    agent, _ = configured("reader", retry_budget=2, backoff="exponential")
    moves = walk(agent, MASKED, 5)
    assert waits(moves) == [1.0, 2.0] and moves[-1] == ALTERNATIVE
    assert agent.act(MASKED) == Wait(1.0)


def test_random_backoff_is_the_readers_seeded_pause() -> None:
    pauses = set()
    for seed in range(20):
        agent, _ = configured("reader", seed=seed, retry_budget=1)
        first = agent.act(MASKED)
        pauses.add(first.seconds if isinstance(first, Wait) else 0.0)
    assert pauses == {0.0, 1.0, 2.0}


# -- trust --------------------------------------------------------------------------------------


def test_trust_ignore_treats_every_error_as_unexplained() -> None:
    # What the reader does with a reason it cannot read is what it does with every error.
    for obs in (PERMANENT, RATE, TRANSIENT, GONE, RPC_HIDDEN):
        for seed in range(4):
            ignoring, _ = configured("reader", seed=seed, trust="ignore")
            blind, _ = configured("reader", seed=seed)
            assert walk(ignoring, obs, 8) == walk(blind, MASKED, 8)


def test_trust_verify_checks_use_another_tool_by_re_listing_and_calling_once_more() -> None:
    follower, _ = configured("reader")
    assert follower.act(PERMANENT) == ALTERNATIVE
    checker, _ = configured("reader", trust="verify")
    assert checker.act(PERMANENT) == ListTools()
    assert checker.act(ToolsListed(tuple(TOOLS))) == PRIMARY  # still listed: try it once more
    assert checker.act(PERMANENT) == ALTERNATIVE  # said twice: believed


def test_trust_verify_switches_at_once_when_the_list_shows_the_tool_gone() -> None:
    checker, _ = configured("reader", trust="verify")
    assert checker.act(PERMANENT) == ListTools()
    assert checker.act(ToolsListed(tuple(t for t in TOOLS if t["name"] != "query_db"))) == ALTERNATIVE


def test_trust_verify_reads_back_a_write_it_is_told_to_redo() -> None:
    book = CallTool("book", {"item": "room", "date": "2025-06-01"})
    failed = result("ERROR: book failed: temporary failure; try again", error=True, tool="book")
    follower, first = configured("reader", WRITE)
    assert first == book and follower.act(failed) == book  # redone blind: maybe twice stored
    checker, _ = configured("reader", WRITE, trust="verify")
    assert checker.act(failed) == CallTool("list_bookings", {})
    stored = {"bookings": [{"ref": "B-0001", "item": "room", "date": "2025-06-01"}]}
    assert isinstance(checker.act(result(json.dumps(stored), tool="list_bookings")), Finish)
    again, _ = configured("reader", WRITE, trust="verify")
    again.act(failed)
    assert again.act(result(json.dumps({"bookings": []}), tool="list_bookings")) == book


def test_trust_verify_does_not_read_back_a_read() -> None:
    checker, _ = configured("reader", trust="verify")
    assert checker.act(TRANSIENT) == PRIMARY


# -- relist -------------------------------------------------------------------------------------

SECOND = Subgoal("more", (Option("query_db", {"table": "customers"}),))
NEXT = CallTool("query_db", {"table": "customers"})
NOTIFIED = ToolResult(
    "query_db", {}, ({"type": "text", "text": "{}"},), False, notifications=(TOOLS_LIST_CHANGED,)
)


@pytest.mark.parametrize(
    ("name", "relist", "on_notice", "on_gone"),
    [
        ("reader", "never", NEXT, ALTERNATIVE),
        ("reader", "on_notification", ListTools(), ALTERNATIVE),
        ("reader", "on_error", ListTools(), ListTools()),
        ("refresher", "never", NEXT, ALTERNATIVE),
        ("refresher", "on_notification", ListTools(), ALTERNATIVE),
        ("refresher", "on_error", ListTools(), ListTools()),
    ],
)
def test_relist_decides_when_the_tool_list_is_fetched_again(
    name: str, relist: str, on_notice: Action, on_gone: Action
) -> None:
    noticed, _ = configured(name, READ, SECOND, relist=relist)
    assert noticed.act(NOTIFIED) == on_notice
    gone, _ = configured(name, relist=relist)
    assert gone.act(GONE) == on_gone


# -- step_budget --------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["naive", "retry", "reader", "refresher"])
def test_step_budget_gives_up_once_the_budget_is_spent(name: str) -> None:
    agent, first = configured(name, retry_budget=10, backoff="fixed", step_budget=3)
    moves = [first, *walk(agent, TRANSIENT, 10)]
    assert len(moves) == 4 and isinstance(moves[-1], GiveUp)
    assert "step budget of 3 spent" in moves[-1].reason


def test_step_budget_lets_a_finished_agent_finish() -> None:
    agent, _ = configured("reader", step_budget=1)
    assert isinstance(agent.act(result(json.dumps({"rows": []}))), Finish)
