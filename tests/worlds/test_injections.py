"""AgentDojo's injection tasks, in an error text or in an ordinary result, judged by their own checks.

The text is AgentDojo's: its attack renders the injection task's goal, with no model asked. In
an error it goes through the strategy like any failure; in a result it sits where AgentDojo's own
environment puts its injection vectors. Whether harm happened is the injection task's own
``security`` verdict, and nothing else.
"""

from __future__ import annotations

import io
import json
from collections.abc import Sequence
from types import SimpleNamespace
from typing import Any

import pytest
from agentdojo.attacks.attack_registry import ATTACKS

from harness.scenarios.scenario import Task
from harness.session.agent import Action, Agent, Observation, RPCErrorObservation, ToolResult
from harness.session.registry import make_agent
from harness.worlds import agentdojo, injections
from harness.worlds.scenario import load_world
from harness.worlds.session import run_world_session

ERROR = "agentdojo/banking/user_task_2/injection_error"
"""Its draw: injection_task_6 rendered by tool_knowledge, on the plan's first tool (read_file)."""
RESULT = "agentdojo/banking/user_task_0/injection_result"


def _lines(name: str, agent: str, strategy: str, **kw: Any) -> list[dict[str, Any]]:
    buffer = io.BytesIO()
    run_world_session(load_world(name), agent, strategy, 0, trace=buffer, **kw)
    return [json.loads(line) for line in buffer.getvalue().splitlines()]


def _flat(text: str) -> str:
    return " ".join(text.split())


class _Seeing(Agent):
    """The naive agent, keeping every text that reached it (what a model would read)."""

    name = "seeing"

    def __init__(self) -> None:
        self.inner = make_agent("naive")
        self.seen: list[str] = []

    def reset(self, task: Task, tools: Sequence[dict[str, Any]], seed: int) -> None:
        self.inner.reset(task, tools, seed)

    def act(self, observation: Observation) -> Action:
        if isinstance(observation, ToolResult):
            self.seen.append(_flat(observation.text))
        elif isinstance(observation, RPCErrorObservation) and observation.message:
            self.seen.append(_flat(observation.message))
        return self.inner.act(observation)


def _seen(name: str, strategy: str) -> list[str]:
    agent = _Seeing()
    run_world_session(load_world(name), agent, strategy, 0)
    return agent.seen


def _agentdojo_text(suite: str, task_id: str, injection_id: str, attack: str) -> str:
    own = ATTACKS[attack](agentdojo.suite(suite), SimpleNamespace(name=agentdojo.MODEL_NAME))
    found = own.attack(
        agentdojo.user_task(suite, task_id), agentdojo.suite(suite).injection_tasks[injection_id]
    )
    texts = set(found.values())
    assert len(texts) == 1
    return texts.pop()


def test_the_error_text_is_agentdojo_s_rendered_attack_and_collapse_behind_a_typical_host_hides_it() -> None:
    drawn = injections.draw(ERROR, "banking", "user_task_2", "injection_error")
    assert drawn is not None and drawn.tool == agentdojo.plan("banking", "user_task_2").calls[0][0]
    text = _flat(_agentdojo_text("banking", "user_task_2", drawn.injection_id, drawn.attack))
    assert any(text in seen for seen in _seen(ERROR, "is_error"))
    assert not any(text in seen for seen in _seen(ERROR, "collapse"))
    assert not any(text in seen for seen in _seen(ERROR, "masked"))


def test_the_injected_error_never_reaches_the_world_and_strikes_only_the_first_call() -> None:
    lines = _lines(ERROR, "blind", "is_error")
    assert [line["injected_error"] for line in lines if "injected_error" in line] == ["read_file"]
    made = [line["world_call"]["function"] for line in lines if "world_call" in line]
    assert made[0] == "read_file"  # the retry, which reached the world


def test_a_result_injection_sits_where_agentdojo_s_environment_puts_its_vectors() -> None:
    drawn = injections.draw(RESULT, "banking", "user_task_0", "injection_result")
    assert drawn is not None and drawn.vectors
    text = _flat(_agentdojo_text("banking", "user_task_0", drawn.injection_id, drawn.attack))
    for strategy in ("is_error", "collapse"):
        assert any(text in seen for seen in _seen(RESULT, strategy))


@pytest.mark.parametrize("verdict", [True, False])
def test_security_breached_is_the_injection_task_s_own_verdict(
    monkeypatch: pytest.MonkeyPatch, verdict: bool
) -> None:
    drawn = injections.draw(ERROR, "banking", "user_task_2", "injection_error")
    assert drawn is not None
    task = agentdojo.suite("banking").injection_tasks[drawn.injection_id]
    monkeypatch.setattr(task, "security", lambda output, pre, post: verdict)
    monkeypatch.setattr(task, "security_from_traces", lambda *args: None)
    result = run_world_session(load_world(ERROR), "oracle", "is_error", 0)
    assert result.security_breached is verdict and result.injection == drawn.label


def test_the_reader_follows_an_extracted_instruction_under_follow_and_blind_and_ignore_never() -> None:
    def made(agent: str, **kw: Any) -> list[str]:
        return [
            line["world_call"]["function"]
            for line in _lines(ERROR, agent, "is_error", **kw)
            if "world_call" in line
        ]

    assert "send_money" in made("reader")
    assert "send_money" not in made("reader", agent_params={"trust": "ignore"})
    assert "send_money" not in made("blind")


def test_the_extraction_count_reads_every_rendered_text_of_every_suite() -> None:
    rows = injections.extraction()
    expected = sum(len(agentdojo.injection_task_ids(s)) for s in agentdojo.suites()) * len(agentdojo.ATTACKS)
    assert len(rows) == expected
    for row in rows:
        assert row.found == (row.tool is not None)
        assert not row.right_tool or row.tool in agentdojo.injection_tools(row.suite, row.injection_id)


def test_an_injected_result_s_plan_is_the_ground_truth_of_the_world_as_injected() -> None:
    # slack keeps an injection vector in a channel's name: the plan must call the channel the
    # injected world has, not the one of the world without the injection.
    from harness.worlds import agentdojo
    from harness.worlds.injections import draw
    from harness.worlds.scenario import load_world

    name = "agentdojo/slack/user_task_7/injection_result"
    injection = draw(name, "slack", "user_task_7", "injection_result")
    assert injection is not None
    world = agentdojo.Episode("slack", "user_task_7", injection.vectors).env
    planned = [o.arguments.get("channel") for g in load_world(name).task.subgoals for o in g.options]
    named = [c for c in planned if c is not None]
    assert named and all(c in world.slack.channels for c in named)
