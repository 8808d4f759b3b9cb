"""World events: the world changes before the first call, and the planned call meets its own answer.

For each event kind, the planned call that relies on what changed is made in a session, and what
the agent gets back is what AgentDojo's own runtime answers for that call on the changed world
(run here apart from the session): a loud failure in its words, an empty answer, or a success
that does the wrong thing. Which pairs are fair tests is decided by the task's own utility.
"""

from __future__ import annotations

import io
import json
from typing import Any

import pytest
from agentdojo.agent_pipeline.tool_execution import tool_result_to_str
from agentdojo.functions_runtime import FunctionsRuntime

from harness.scenarios.scenario import answered
from harness.worlds import agentdojo, events
from harness.worlds.scenario import load_world
from harness.worlds.session import run_world_session

CASES: list[tuple[str, str, str, str, str]] = [
    # condition, suite, task, what the planned call meets, a word of the world's answer
    ("channel_renamed_similar", "slack", "user_task_1", "error", "Channel does not exist!"),
    ("channel_renamed_dissimilar", "slack", "user_task_1", "error", "Channel does not exist!"),
    ("event_moved_similar", "workspace", "user_task_0", "error", "No events found."),
    ("event_moved_dissimilar", "workspace", "user_task_0", "error", "No events found."),
    # AgentDojo's search by file name matches a part of the name: a similar rename is still found
    ("file_renamed_similar", "workspace", "user_task_28", "success", "feedback.xlsx"),
    ("file_renamed_dissimilar", "workspace", "user_task_28", "empty", "[]"),
    ("file_renamed_dissimilar", "banking", "user_task_0", "empty", ""),
    ("file_removed", "banking", "user_task_0", "empty", ""),
    ("file_removed", "workspace", "user_task_35", "error", "File with ID '11' not found."),
    ("contact_email_changed_similar", "workspace", "user_task_9", "success", "emma.johnson@"),
    ("contact_email_changed_dissimilar", "workspace", "user_task_9", "success", "emma.johnson@"),
    ("iban_updated_similar", "banking", "user_task_0", "success", "UK12345678901234567890"),
    ("iban_updated_dissimilar", "banking", "user_task_0", "success", "UK12345678901234567890"),
    ("password_changed_similar", "banking", "user_task_14", "success", "Password updated"),
    ("password_changed_dissimilar", "banking", "user_task_14", "success", "Password updated"),
]  # fmt: skip


def _trace(name: str, agent: str = "naive", strategy: str = "is_error") -> list[dict[str, Any]]:
    buffer = io.BytesIO()
    run_world_session(load_world(name), agent, strategy, 0, trace=buffer)
    return [json.loads(line) for line in buffer.getvalue().splitlines()]


def _first_relying_call(suite: str, task_id: str, change: events.Change) -> tuple[str, dict[str, Any]]:
    """The plan's first call that names the changed thing (or, for a removed file, its id)."""
    for function, args in agentdojo.plan(suite, task_id).calls:
        if events.substitute(args, change.pairs) != args or change.old in json.dumps(args, default=str):
            return function, args
    for function, args in agentdojo.plan(suite, task_id).calls:
        if change.entity.split()[2] in json.dumps(args, default=str):  # a drive file by its id
            return function, args
    raise AssertionError(f"no planned call names {change}")


def test_every_event_condition_has_a_mechanism_case_here() -> None:
    assert {condition for condition, *_ in CASES} == set(events.EVENT_CONDITIONS)
    assert {events.split_condition(c)[0] for c in events.EVENT_CONDITIONS} == set(events.EVENT_KINDS)


@pytest.mark.parametrize(("kind", "suite", "task_id", "meets", "words"), CASES)
def test_the_planned_call_meets_the_world_s_own_answer_on_the_changed_world(
    kind: str, suite: str, task_id: str, meets: str, words: str
) -> None:
    # ``kind`` is the condition: an event kind under a rename condition
    name = events.event_name(suite, task_id, kind)
    lines = _trace(name, agent="naive")
    change = next(line["world_event"] for line in lines if "world_event" in line)
    found = events.admission(suite, task_id, kind)
    assert found.change is not None and change == found.change.to_json()
    function, args = _first_relying_call(suite, task_id, found.change)
    # What AgentDojo's own runtime answers for that call on a world changed the same way.
    world = agentdojo.Episode(suite, task_id)
    events.apply_event(world, name, kind)
    result, error = FunctionsRuntime(world.suite.tools).run_function(world.env, function, dict(args))
    made = [line["world_call"] for line in lines if "world_call" in line]
    if meets == "error":
        assert error is not None and words in error
        assert {"function": function, "args": args, "error": error} in made
        return
    assert error is None
    assert {"function": function, "args": args} in made
    text = str(tool_result_to_str(result))
    calls_answered = [line for line in lines if line.get("dir") == "s2c" and "result" in line.get("msg", {})]
    shown = [block["text"] for line in calls_answered for block in line["msg"]["result"].get("content", [])]
    assert text in shown
    if meets == "empty":
        assert not answered(text) and text.strip() == words
    else:
        assert answered(text) and (words in text or words in json.dumps(args))


def test_an_event_is_drawn_from_the_scenario_s_name_alone() -> None:
    name = events.event_name("slack", "user_task_5", "channel_renamed_similar")
    first = [line["world_event"] for line in _trace(name, "naive") if "world_event" in line]
    again = [line["world_event"] for line in _trace(name, "reader", "collapse") if "world_event" in line]
    assert first == again and len(first) == 1


def test_the_judge_reads_the_changed_world_as_the_world_before_the_session() -> None:
    # The event is applied before the first call and the changed world is pre_environment: the
    # rename is not a change the agent made, so the oracle (which knows the new name) succeeds.
    name = events.event_name("slack", "user_task_5", "channel_renamed_similar")
    result = run_world_session(load_world(name), "oracle", "is_error", 0)
    assert result.success and result.harmful_calls == 0


@pytest.mark.parametrize(
    "found",
    [a for a in events.admissions() if a.status == "admitted" and a.change and a.change.new],
    ids=lambda a: a.scenario,
)
def test_an_admitted_pair_is_passed_by_the_oracle_which_knows_the_new_state(found: events.Admission) -> None:
    # The admission's plan test is the oracle's walk: the plan given the new values. (Where a file
    # was removed the oracle stops at the failure and says so, where the plan test's follower
    # reports what it read: the two may differ, and the plan test alone decides.)
    assert run_world_session(load_world(found.scenario), "oracle", "is_error", 0).success


def test_admission_is_the_plan_test_alone_and_every_refusal_says_why() -> None:
    every = [a for a in events.admissions() if a.status != "not_applicable"]
    reasons = {a.reason for a in every if a.status == "refused"}
    assert reasons and all(reasons)
    assert all(a.change is not None for a in every)
    assert all(a.kind == "file_removed" for a in every if a.change is not None and a.change.new is None)
    # what the stale plan does is said beside the verdict, and is no part of it
    assert {a.stale_passes for a in every if a.status == "admitted" and a.stale_passes is not None} <= {
        True,
        False,
    }


@pytest.mark.parametrize("condition", [c for c in events.EVENT_CONDITIONS if events.split_condition(c)[1]])
def test_a_rename_condition_decides_what_the_new_value_keeps_of_the_old(condition: str) -> None:
    # similar: the old value inside the new one (or its day moved by days); dissimilar: no word of
    # the old value in the new one. A mechanism of the draw: nothing here says what a repair does.
    kind, rename = events.split_condition(condition)
    changes = [a.change for a in events.admissions(conditions=(condition,)) if a.change is not None]
    assert changes
    for change in changes:
        assert change.new is not None and change.new != change.old
        if kind == "event_moved":
            days = (_day(change.new) - _day(change.old)).days
            assert (1 <= days <= 3) if rename == "similar" else (days % 7 == 0 and 7 <= days <= 56)
        elif kind in ("iban_updated",):
            assert change.new[:2] == change.old[:2] and len(change.new) == len(change.old)
        elif rename == "similar":
            assert _stem(change.old) in change.new
        else:
            assert not set(events._parts(_stem(change.old))) & set(events._parts(change.new))


def _stem(value: str) -> str:
    """A name without its extension, an address without its domain."""
    return value.split("@")[0].rsplit(".", 1)[0] if "." in value.split("@")[0] else value.split("@")[0]


def _day(text: str) -> Any:
    import datetime

    return datetime.datetime.strptime(text, "%Y-%m-%d %H:%M")


def test_the_world_s_vocabulary_is_the_default_environment_s_words() -> None:
    words = events.vocabulary("slack")
    assert words == tuple(sorted(words)) and all(4 <= len(w) <= 10 and w.isalpha() for w in words)
    assert "general" in words
