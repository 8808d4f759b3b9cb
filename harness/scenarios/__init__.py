"""Scenarios: what a session is asked to do, read from files and checked before anything runs.

A scenario file (:mod:`.scenario`) names a task's subgoals, the fault rules on its tools and
the events that change its tool list; a family (:mod:`.family`) is a seeded recipe that
samples many scenarios; a served scenario (:mod:`.served`) points the same tables at a real
server. :mod:`.outcome` holds the end-state rules that say whether a call did a subgoal. Every
format shares one task-table parser and one :class:`Event`, so a key means the same in each.

A broken file is a :class:`ScenarioError` that names the file, the field and the problem.
The files we ship live in the checkout's top-level ``scenarios/`` (in a wheel,
``harness/scenarios/shipped/``).
"""

from harness.scenarios.scenario import (
    ANY,
    EVENT_KINDS,
    SCENARIO_DIR,
    Event,
    Option,
    Scenario,
    ScenarioError,
    Subgoal,
    Task,
    list_scenarios,
    load_scenario,
    parse_scenario,
)

__all__ = [
    "ANY",
    "EVENT_KINDS",
    "SCENARIO_DIR",
    "Event",
    "Option",
    "Scenario",
    "ScenarioError",
    "Subgoal",
    "Task",
    "list_scenarios",
    "load_scenario",
    "parse_scenario",
]
