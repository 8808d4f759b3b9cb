"""One world session: AgentDojo's tools behind the MCP core, judged by the task's own utility."""

from __future__ import annotations

import io
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

import pytest
from agentdojo.functions_runtime import FunctionsRuntime

from harness.protocol.errors import INTERNAL_ERROR
from harness.protocol.strategies import STRATEGIES
from harness.scenarios.scenario import Task
from harness.session.agent import (
    Action,
    Agent,
    CallTool,
    Finish,
    Observation,
    RPCErrorObservation,
    Start,
    ToolResult,
)
from harness.worlds import agentdojo
from harness.worlds.scenario import list_world_scenarios, load_world
from harness.worlds.session import WorldSession, run_world_session, world_check

DOCS = Path(__file__).resolve().parents[2] / "docs" / "worlds.md"


def _trace(
    name: str, agent: str | Agent, strategy: str, seed: int, **kw: Any
) -> tuple[Any, list[dict[str, Any]]]:
    buffer = io.BytesIO()
    result = run_world_session(load_world(name), agent, strategy, seed, trace=buffer, **kw)
    return result, [json.loads(line) for line in buffer.getvalue().splitlines()]


# -- the judge ------------------------------------------------------------------------------------


@pytest.mark.parametrize("verdict", [True, False])
@pytest.mark.parametrize("agent", ["naive", "oracle"])
def test_a_world_session_succeeds_exactly_when_the_task_s_own_utility_says_so(
    monkeypatch: pytest.MonkeyPatch, verdict: bool, agent: str
) -> None:
    # The task's utility is made to say one thing whatever happened: success must follow it, and
    # nothing the harness checks itself (the plan done, the claim, the faults) may overrule it.
    task = agentdojo.user_task("banking", "user_task_3")
    asked: list[str] = []

    def utility(output: str, pre: Any, post: Any, strict: bool = True) -> bool:
        asked.append(output)
        return verdict

    monkeypatch.setattr(task, "utility", utility)
    monkeypatch.setattr(task, "utility_from_traces", lambda *args: None)
    for seed in range(3):
        for strategy in ("is_error", "escape"):
            result, _ = _trace("agentdojo/banking/user_task_3", agent, strategy, seed)
            assert result.success is verdict and result.correct is verdict
            assert result.judge == "agentdojo"
    assert asked  # it was asked, session after session


def test_the_judge_reads_what_the_agent_told_the_user() -> None:
    # user_task_1 asks for a total; the oracle reports the task's own output once its plan answered.
    result, lines = _trace("agentdojo/banking/user_task_1", "oracle", "is_error", 0)
    judged = next(line for line in lines if "judge" in line)
    assert judged["output"] == agentdojo.plan("banking", "user_task_1").output != ""
    assert judged["utility"] is result.success is True


def test_an_agent_that_tells_the_user_nothing_fails_a_task_whose_utility_reads_the_answer() -> None:
    class Silent(Agent):
        name: ClassVar[str] = "silent"

        def reset(self, task: Task, tools: Sequence[dict[str, Any]], seed: int) -> None:
            self.calls = [CallTool(g.options[0].tool, dict(g.options[0].arguments)) for g in task.subgoals]

        def act(self, observation: Observation) -> Action:
            return self.calls.pop(0) if self.calls else Finish()

    sc = load_world("agentdojo/banking/user_task_1")
    result = run_world_session(sc.with_overrides({"faults.rate": 0.0}), Silent(), "is_error", 0)
    assert result.subgoals_done == result.subgoals_total  # every planned call made, as planned
    assert not result.success and result.misreported  # and yet no answer: the judge says no


def test_replaying_a_session_s_recorded_calls_on_a_fresh_agentdojo_environment_gives_its_verdict() -> None:
    replayed = 0
    for name in list_world_scenarios()[::7]:
        for agent, strategy in (("reader", "collapse"), ("retry", "is_error"), ("naive", "masked")):
            result, lines = _trace(name, agent, strategy, 1)
            _, suite, task_id = name.split("/")
            task = agentdojo.user_task(suite, task_id)
            env = task.init_environment(agentdojo.suite(suite).load_and_inject_default_environment({}))
            pre = env.model_copy(deep=True)
            runtime = FunctionsRuntime(agentdojo.suite(suite).tools)
            calls = [line["world_call"] for line in lines if "world_call" in line]
            for call in calls:
                runtime.run_function(env, call["function"], call["args"])
            output = next(line for line in lines if "judge" in line)["output"]
            from agentdojo.functions_runtime import FunctionCall

            trace = [FunctionCall(function=c["function"], args=c["args"]) for c in calls]
            verdict = task.utility_from_traces(output, pre, env, trace)
            if verdict is None:
                verdict = task.utility(output, pre, env)
            assert verdict == result.success, (name, agent, strategy)
            replayed += 1
    assert replayed >= 40


# -- the tools behind the MCP core ---------------------------------------------------------------


class _Misfit(Agent):
    """Calls a world tool with arguments its own validation refuses, once, then finishes."""

    name: ClassVar[str] = "misfit"

    def reset(self, task: Task, tools: Sequence[dict[str, Any]], seed: int) -> None:
        self.seen: list[Observation] = []

    def act(self, observation: Observation) -> Action:
        if isinstance(observation, Start):
            return CallTool("send_money", {"recipient": "X", "amount": "lots", "subject": "s", "date": "d"})
        self.seen.append(observation)
        return Finish()


@pytest.mark.parametrize("era", ["handshake", "stateless"])
@pytest.mark.parametrize("strategy", ["is_error", "masked", "collapse"])
def test_a_world_tool_s_own_failure_reaches_the_agent_as_the_strategy_says(era: str, strategy: str) -> None:
    agent = _Misfit()
    run_world_session(
        load_world("agentdojo/banking/user_task_0"), agent, strategy, 0, host="transparent", era=era
    )
    (seen,) = agent.seen
    said = "ValidationError: 1 validation error for Input schema for `send_money`"
    if strategy == "collapse":
        assert isinstance(seen, RPCErrorObservation) and seen.code == INTERNAL_ERROR
        assert seen.message is not None and seen.message.startswith(said)
    else:
        assert isinstance(seen, ToolResult) and seen.is_error
        assert seen.text.startswith(f"ERROR: {said}") if strategy == "is_error" else said not in seen.text


def test_an_upstream_fault_on_a_world_tool_never_reaches_the_world_and_post_commit_does() -> None:
    found = {"transient": False, "post_commit": False}
    for name in list_world_scenarios():
        kinds = {r.kind for r in load_world(name).faults}
        if not kinds & found.keys():
            continue
        _, lines = _trace(name, "retry", "is_error", 0)
        for i, line in enumerate(lines):
            fault = line.get("fault")
            if fault is None or fault["kind"] not in found:
                continue
            reached = i + 1 < len(lines) and "world_call" in lines[i + 1]
            assert reached is (fault["kind"] == "post_commit"), (name, fault)
            found[fault["kind"]] = True
        if all(found.values()):
            return
    pytest.fail(f"no world scenario met both kinds at seed 0: {found}")


def test_agents_and_strategies_meet_one_fault_schedule_and_the_same_inputs_give_the_same_trace() -> None:
    name = "agentdojo/slack/user_task_2"
    schedules = set()
    for agent in ("naive", "reader", "oracle"):
        for strategy in STRATEGIES:
            first = run_world_session(load_world(name), agent, strategy, 2)
            again = run_world_session(load_world(name), agent, strategy, 2)
            assert first.trace_hash == again.trace_hash
            schedules.add(first.fault_schedule_hash)
    assert len(schedules) == 1


def test_a_session_keeps_the_world_before_and_after_for_a_judge_an_event_or_a_security_check() -> None:
    sc = load_world("agentdojo/banking/user_task_0").with_overrides({"faults.rate": 0.0})
    from harness.session.registry import make_agent
    from harness.session.trace import Trace

    session = WorldSession(
        sc, make_agent("oracle"), "oracle", "is_error", 0, "json", "typical", Trace(), "handshake"
    )  # type: ignore[arg-type]
    session.go()
    assert session.episode is not None
    before = session.episode.pre.bank_account.transactions
    after = session.episode.env.bank_account.transactions
    assert len(after) == len(before) + 1 and session.verdict().success


# -- the oracle on every task --------------------------------------------------------------------


def test_with_no_faults_the_oracle_gets_a_yes_on_nine_tasks_in_ten_and_docs_name_the_rest() -> None:
    failing = [
        name
        for name in list_world_scenarios()
        if not world_check(load_world(name), range(1), faults=False).solved
    ]
    total = len(list_world_scenarios())
    assert (total - len(failing)) / total >= 0.9
    documented = DOCS.read_text(encoding="utf-8")
    for name in failing:
        assert f"`{name}`" in documented, f"{name} fails the oracle and docs/worlds.md does not say why"
