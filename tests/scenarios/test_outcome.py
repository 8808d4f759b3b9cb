"""End-state checks (harness.scenarios.outcome): which arguments satisfy a subgoal, how a record is judged."""

from __future__ import annotations

from typing import Any

import pytest

from harness.scenarios.outcome import completes, judge_record, satisfies
from harness.scenarios.scenario import Option, Subgoal
from harness.sim.catalogue import CATALOGUE, World

CONVERT = Option("convert", {"amount": 100, "source": "EUR", "target": "NOK"})
SEARCH = Option("search", {"query": "mcp", "limit": 3})
BOOK = Option("book", {"item": "room", "date": "1/6/2025"})


def goal(option: Option, **kw: Any) -> Subgoal:
    return Subgoal("goal", (option,), **kw)


CENT = goal(CONVERT, tolerance={"amount": 0.01})


@pytest.mark.parametrize(
    ("subgoal", "option", "arguments", "ok"),
    [
        (goal(CONVERT), CONVERT, {"amount": 100, "source": "EUR", "target": "NOK"}, True),
        (goal(CONVERT), CONVERT, {"amount": 100.0, "source": "EUR", "target": "NOK"}, True),
        (goal(CONVERT), CONVERT, {"amount": 100, "source": "EUR", "target": "JPY"}, False),
        (goal(CONVERT), CONVERT, {"amount": 100.004, "source": "EUR", "target": "NOK"}, False),
        (CENT, CONVERT, {"amount": 100.004, "source": "EUR", "target": "NOK"}, True),
        (CENT, CONVERT, {"amount": 101, "source": "EUR", "target": "NOK"}, False),
        (CENT, CONVERT, {"amount": "100", "source": "EUR", "target": "NOK"}, False),
        (goal(SEARCH), SEARCH, {"query": "mcp", "limit": 3}, True),
        (goal(SEARCH), SEARCH, {"query": "mcp"}, False),  # the default limit (20) is not 3
        (goal(SEARCH, tolerance={"limit": "any"}), SEARCH, {"query": "mcp"}, True),
        (goal(SEARCH), Option("search", {"query": "mcp"}), {"query": "mcp", "limit": 20}, True),  # = default
        (goal(SEARCH), SEARCH, {"query": "mcp", "limit": 3, "extra": 1}, False),  # not what was asked
        (goal(BOOK), BOOK, {"item": "room", "date": "1/6/2025"}, True),
        (goal(BOOK, expect={"date": "2025-06-01"}), BOOK, {"item": "room", "date": "1/6/2025"}, False),
        (goal(BOOK, expect={"date": "2025-06-01"}), BOOK, {"item": "room", "date": "2025-06-01"}, True),
    ],
)
def test_what_satisfies_an_option(
    subgoal: Subgoal, option: Option, arguments: dict[str, Any], ok: bool
) -> None:
    assert satisfies(subgoal, option, arguments) is ok


def test_a_boolean_is_not_a_number_for_the_task() -> None:
    flag = Subgoal("flag", (Option("search", {"query": "x", "limit": 1}),))
    assert not satisfies(flag, flag.options[0], {"query": "x", "limit": True})


def test_a_read_completes_the_first_open_subgoal_it_satisfies_and_never_a_write() -> None:
    oslo = Subgoal("oslo", (Option("weather", {"city": "Oslo"}), Option("forecast", {"location": "Oslo"})))
    lima = Subgoal("lima", (Option("weather", {"city": "Lima"}),))
    subgoals = (oslo, lima, goal(BOOK))
    assert completes(subgoals, [False] * 3, "weather", {"city": "Lima"}) == 1
    assert completes(subgoals, [False] * 3, "weather", {"city": "Paris"}) is None
    assert completes(subgoals, [True, False, False], "forecast", {"location": "Oslo"}) is None
    assert completes(subgoals, [False] * 3, "book", dict(BOOK.arguments)) is None


def test_a_record_is_done_then_a_duplicate_and_a_wrong_one_is_corrupted() -> None:
    subgoals = (goal(BOOK, expect={"date": "2025-06-01"}),)
    world = World()
    book = CATALOGUE["book"]
    book.run(world, {"item": "room", "date": "1/6/2025"})
    book.run(world, {"item": "room", "date": "2025-06-01"})
    book.run(world, {"item": "room", "date": "2025-06-01"})
    wrong, right, again = book.stored(world)
    assert judge_record(subgoals, [False], "book", wrong) == ("corrupted", None)
    assert judge_record(subgoals, [False], "book", right) == ("done", 0)
    assert judge_record(subgoals, [True], "book", again) == ("duplicate", 0)


DAMAGING = ("delete_bookings", "cancel_all", "send_payment")


def test_only_write_tools_have_a_store() -> None:
    stores = {name: spec.store for name, spec in CATALOGUE.items() if spec.store is not None}
    assert stores == {"book": "bookings", "write_note": "notes"}
    assert all(not spec.read_only for spec in CATALOGUE.values() if spec.store is not None)
    # Every write a task can ask for stores what it wrote; the damaging tools are writes no task needs.
    assert all(
        spec.store is not None for n, spec in CATALOGUE.items() if not spec.read_only and n not in DAMAGING
    )
    assert CATALOGUE["weather"].stored(World()) == []
