"""AgentDojo as harness.worlds.agentdojo takes it: its tools, results, failures, plans and clock."""

from __future__ import annotations

import datetime
import subprocess
import sys
import textwrap

import pytest
from agentdojo.agent_pipeline.tool_execution import tool_result_to_str
from agentdojo.functions_runtime import FunctionsRuntime

from harness.worlds import agentdojo


def test_the_v1_suites_are_banking_slack_travel_and_workspace_with_97_user_tasks() -> None:
    found = agentdojo.suites()
    assert sorted(found) == ["banking", "slack", "travel", "workspace"]
    assert sum(len(agentdojo.task_ids(name)) for name in found) == 97


def test_a_world_tool_is_served_with_agentdojo_s_own_description_and_schema() -> None:
    function = next(f for f in agentdojo.suite("banking").tools if f.name == "send_money")
    spec = next(t for t in agentdojo.tools("banking") if t.name == "send_money")
    assert spec.description == function.description
    assert spec.input_schema == function.parameters.model_json_schema()
    assert spec.input_schema["required"] == ["recipient", "amount", "subject", "date"]


def test_a_call_answers_what_agentdojo_s_runtime_answers_in_the_words_its_pipeline_gives_a_model() -> None:
    episode = agentdojo.Episode("banking", "user_task_1")
    text = episode.run("get_most_recent_transactions", {"n": 3})
    fresh = agentdojo.suite("banking").load_and_inject_default_environment({})
    result, error = FunctionsRuntime(agentdojo.suite("banking").tools).run_function(
        fresh, "get_most_recent_transactions", {"n": 3}
    )
    assert error is None
    assert text == tool_result_to_str(result)
    assert text.startswith("- amount:")  # YAML, as AgentDojo shows a model a list of records


@pytest.mark.parametrize(
    ("function", "args", "said"),
    [
        ("update_scheduled_transaction", {"id": 999}, "ValueError: Transaction with ID 999 not found."),
        (
            "send_money",
            {"recipient": "x", "amount": "lots", "subject": "s", "date": "d"},
            "ValidationError: ",
        ),
    ],
    ids=["its exception", "its validation"],
)
def test_a_world_tool_s_own_failure_is_raised_in_its_own_words(
    function: str, args: dict[str, object], said: str
) -> None:
    episode = agentdojo.Episode("banking", "user_task_0")
    with pytest.raises(agentdojo.WorldToolError) as caught:
        episode.run(function, args)
    assert str(caught.value).startswith(said)
    assert episode.calls[-1].error == str(caught.value)


def test_the_plan_is_the_task_s_ground_truth_and_its_writes_are_the_calls_that_change_the_world() -> None:
    plan = agentdojo.plan("banking", "user_task_0")
    task = agentdojo.user_task("banking", "user_task_0")
    episode = agentdojo.Episode("banking", "user_task_0")
    truth = [(c.function, dict(c.args)) for c in task.ground_truth(episode.pre)]
    assert list(plan.calls) == truth
    assert plan.writes == {"send_money"}  # read_file reads; send_money adds a transaction


def test_a_tool_that_stamps_the_time_stamps_the_session_s_virtual_time() -> None:
    episode = agentdojo.Episode("workspace", "user_task_0")
    episode.run("send_email", {"recipients": ["a@b.c"], "subject": "s", "body": "b"}, now_s=90.0)
    sent = episode.env.inbox.emails[max(episode.env.inbox.emails, key=int)]
    assert sent.timestamp == agentdojo.EPOCH + datetime.timedelta(seconds=90)


def test_the_episode_keeps_the_world_before_and_as_the_calls_left_it() -> None:
    episode = agentdojo.Episode("banking", "user_task_0")
    before = len(episode.env.bank_account.transactions)
    episode.run("send_money", {"recipient": "X", "amount": 1.0, "subject": "s", "date": "2022-01-01"})
    assert len(episode.env.bank_account.transactions) == before + 1
    assert len(episode.pre.bank_account.transactions) == before


@pytest.mark.slow
def test_a_world_session_s_trace_does_not_depend_on_the_process_s_string_hashing() -> None:
    # AgentDojo lists a calendar event's participants from a set: the harness pins their order.
    script = textwrap.dedent(
        """
        from harness.worlds.scenario import load_world
        from harness.worlds.session import run_world_session
        world = load_world("agentdojo/workspace/user_task_9")
        print(run_world_session(world, "oracle", "is_error", 0).trace_hash)
        """
    )
    hashes = {
        subprocess.run(
            [sys.executable, "-c", script],
            env={"PYTHONHASHSEED": seed, "PATH": ""},
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        for seed in ("1", "2")
    }
    assert len(hashes) == 1, hashes
