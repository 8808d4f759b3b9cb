"""End-state checks: when a call or a stored record does what a subgoal asks.

A subgoal's options say which tool to call with which arguments; its ``expect`` and
``tolerance`` (:class:`~harness.scenarios.scenario.Subgoal`) say what the end state must hold where
that differs, and how exactly. Arguments are compared under the tool's base names (a schema
variant's names are mapped back first), each absent argument counting as its schema default:

* every argument the option names, ``expect`` names, or the call gives must be equal to the
  wanted value (``expect``'s value if it names one, else the option's, else the default);
* unless ``tolerance`` names it: a number allows that much difference, ``"any"`` any value.

So ``weather(city="Paris")`` does not complete a subgoal that asks ``weather(city="Oslo")``,
and ``book(date="14/03/2025")`` does not complete one that expects ``2025-03-14``.

A **read** option is done by a call that really ran (no fault, no error) and satisfies it.
A **write** option is judged by what its tool stored (:attr:`CatalogueTool.store`): each
record, in the order stored, is ``done`` (the first record for a subgoal that satisfies it),
``duplicate`` (it satisfies only subgoals that already have one: a write that happened again)
or ``corrupted`` (it satisfies no subgoal: a wrong value was stored). docs/outcomes.md has
every definition.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from harness.scenarios.scenario import ANY, Option, Subgoal
from harness.sim.catalogue import CATALOGUE, CatalogueTool

JUDGEMENTS: tuple[str, ...] = ("done", "duplicate", "corrupted")
"""What a stored record is: it completes a subgoal, repeats one, or satisfies none."""


def _same(got: Any, want: Any) -> bool:
    if isinstance(got, bool) or isinstance(want, bool):  # True == 1 in Python, not in a task
        return type(got) is type(want) and got == want
    return bool(got == want)


def _close(got: Any, want: Any, tolerance: float) -> bool:
    numbers = (int, float)
    if isinstance(got, bool) or isinstance(want, bool):
        return False
    if not isinstance(got, numbers) or not isinstance(want, numbers):
        return False
    return abs(float(got) - float(want)) <= tolerance


def satisfies(subgoal: Subgoal, option: Option, arguments: Mapping[str, Any]) -> bool:
    """Whether ``arguments`` (base names) for ``option.tool`` do what ``option`` of ``subgoal`` asks."""
    spec = CATALOGUE[option.tool]
    props = spec.schema.get("properties", {})
    wanted = dict(option.arguments)
    for name, value in subgoal.expect.items():
        if name in props:
            wanted[name] = value
    for name in wanted.keys() | arguments.keys():
        tolerance = subgoal.tolerance.get(name)
        if tolerance == ANY:
            continue
        # The schema default only where a side leaves the argument out (it is looked up in the schema).
        want = wanted[name] if name in wanted else spec.default(name)
        got = arguments[name] if name in arguments else spec.default(name)
        if tolerance is None or isinstance(tolerance, str):
            if not _same(got, want):
                return False
        elif not _close(got, want, tolerance):
            return False
    return True


def is_write(option: Option) -> bool:
    """The option's tool stores what it does (its end state is judged in the store)."""
    return CATALOGUE[option.tool].store is not None


def completes(
    subgoals: Sequence[Subgoal], done: Sequence[bool], tool: str, arguments: Mapping[str, Any]
) -> int | None:
    """The first open subgoal a real read call of ``tool`` with ``arguments`` (base names) does."""
    for i, subgoal in enumerate(subgoals):
        if done[i]:
            continue
        for option in subgoal.options:
            if option.tool == tool and not is_write(option) and satisfies(subgoal, option, arguments):
                return i
    return None


def record_arguments(spec: CatalogueTool, record: Mapping[str, Any]) -> dict[str, Any]:
    """A stored record's arguments: its fields that are arguments of the tool that stored it."""
    props = spec.schema.get("properties", {})
    return {k: v for k, v in record.items() if k in props}


def judge_record(
    subgoals: Sequence[Subgoal], done: Sequence[bool], tool: str, record: Mapping[str, Any]
) -> tuple[str, int | None]:
    """What a record ``tool`` stored is, given which subgoals are already done: one of
    :data:`JUDGEMENTS`, with the subgoal it completes or repeats (None when corrupted)."""
    arguments = record_arguments(CATALOGUE[tool], record)
    repeated: int | None = None
    for i, subgoal in enumerate(subgoals):
        for option in subgoal.options:
            if option.tool == tool and is_write(option) and satisfies(subgoal, option, arguments):
                if not done[i]:
                    return "done", i
                if repeated is None:
                    repeated = i
    if repeated is not None:
        return "duplicate", repeated
    return "corrupted", None
