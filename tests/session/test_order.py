"""Subgoals count in the stated order: a booking made before the weather was read does not count."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from harness.scenarios.scenario import ScenarioError, Task, parse_scenario
from harness.session.agent import Action, Agent, CallTool, Finish, Observation
from harness.session.simulated import run_session

TASK = """
description = "Check the weather in Oslo, then book a table if it is dry."
tools = ["weather", "book"]
[task]
{order}
[[task.subgoals]]
name = "weather"
tool = "weather"
arguments = {{ city = "Oslo" }}
[[task.subgoals]]
name = "booking"
tool = "book"
arguments = {{ item = "table", date = "2025-03-14" }}
{after}
"""


class Calls(Agent):
    """Makes the calls it is given, in order, then says Finish."""

    name = "calls"

    def __init__(self, *calls: CallTool) -> None:
        self.calls = calls

    def reset(self, task: Task, tools: Sequence[dict[str, Any]], seed: int) -> None:
        self.left = list(self.calls)

    def act(self, observation: Observation) -> Action:
        return self.left.pop(0) if self.left else Finish()


WEATHER = CallTool("weather", {"city": "Oslo"})
BOOK = CallTool("book", {"item": "table", "date": "2025-03-14"})


def _run(order: str = "", after: str = "", *calls: CallTool) -> Any:
    doc = TASK.format(order=order, after=after)
    import tomllib

    return run_session(parse_scenario(tomllib.loads(doc), shown="order"), Calls(*calls), "is_error", 0)


def test_a_write_before_the_read_it_follows_does_not_count() -> None:
    early = _run("", "", BOOK, WEATHER)
    assert early.order_violations == 1 and early.subgoals_done == 1 and not early.success
    in_turn = _run("", "", WEATHER, BOOK)
    assert in_turn.order_violations == 0 and in_turn.success


def test_order_any_lets_subgoals_count_in_any_order_unless_after_binds() -> None:
    assert _run('order = "any"', "", BOOK, WEATHER).success
    bound = _run('order = "any"', 'after = "weather"', BOOK, WEATHER)
    assert bound.order_violations == 1 and not bound.success


def test_a_write_out_of_turn_stays_in_the_store_and_spoils_the_end_state() -> None:
    redone = _run("", "", BOOK, WEATHER, BOOK)  # the second booking counts; the first is still there
    assert redone.order_violations == 1 and redone.subgoals_done == 2 and not redone.correct


@pytest.mark.parametrize(
    ("order", "after", "says"),
    [
        ('order = "random"', "", "unknown order 'random'"),
        ("", 'after = "nope"', "'nope' is not an earlier subgoal"),
    ],
)
def test_a_bad_order_or_after_is_named(order: str, after: str, says: str) -> None:
    import tomllib

    with pytest.raises(ScenarioError, match=says):
        parse_scenario(tomllib.loads(TASK.format(order=order, after=after)), shown="order")


POST_COMMIT = """
description = "Book a table, then write a note; the booking's reply says it failed though it went through."
tools = ["book", "write_note"]
[task]
[[task.subgoals]]
name = "booking"
tool = "book"
arguments = { item = "table", date = "2025-03-14" }
[[task.subgoals]]
name = "note"
tool = "write_note"
arguments = { title = "budget", text = "booked" }
[[faults]]
kind = "post_commit"
tool = "book"
calls = [1]
"""


def test_a_write_stored_by_a_failed_call_counts_at_the_step_it_was_stored() -> None:
    # The booking's record is stored at step 1 although its reply is an error: the note written
    # at step 2 comes after it, in order. (Judged only at the session's end, the booking once
    # looked later than the note, and the note an order violation.)
    import tomllib

    scenario = parse_scenario(tomllib.loads(POST_COMMIT), shown="post_commit")
    note = CallTool("write_note", {"title": "budget", "text": "booked"})
    result = run_session(scenario, Calls(BOOK, note), "is_error", 0)
    assert result.faults.get("post_commit") == 1
    assert (result.order_violations, result.subgoals_done, result.success) == (0, 2, True)
