"""World scenarios: each AgentDojo user task a scenario, its plan the task, our faults on its tools.

A world scenario is named ``agentdojo/<suite>/<user_task_id>`` (``agentdojo/banking/user_task_0``);
``agentdojo/<suite>`` names every task of a suite and ``agentdojo`` every task of every suite,
wherever a scenario name is taken (``harness session``, ``run``, ``check``, ``view``). What is
AgentDojo's and what is ours:

* AgentDojo's: the tools served (every tool of the suite, :mod:`harness.worlds.agentdojo`), the
  prompt, the plan (the task's ground-truth calls, each one subgoal in order: the scripted
  agents walk it), the output the plan's author wrote (``Task.plan_output``) and the judge;
* ours: the step budget (:data:`STEPS_BASE` + :data:`STEPS_PER_CALL` per planned call) and the
  faults, drawn from :data:`FAULTS` once per scenario name (``derive_seed("world-faults",
  name)``), so a name always carries the same rules: upstream kinds only, on the plan's tools,
  with texts from the sources of :mod:`harness.faults.sources`. ``--set faults.rate=0`` (and the
  other scenario overrides) work on them as on any scenario.

In a batch a world scenario's source is :func:`world_source` (its name, the package's version
and the suite version), which :func:`load_source` turns back into the scenario in a worker and
refuses if another AgentDojo version is installed there.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from typing import Any

from harness.errors import UserError, unknown_name
from harness.scenarios.scenario import Option, Scenario, Subgoal, Task
from harness.worlds import BFCL, SOURCE_PREFIX, WORLD, agentdojo, is_world_name, world_of
from harness.worlds.task import (
    FAULT_DRAWS,
    FAULTS,
    STEPS_BASE,
    STEPS_PER_CALL,
    UPSTREAM,
    FaultProfile,
    PlanLike,
    WorldScenario,
    draw_faults,
    fault_draw,
    with_draw,
)

__all__ = [
    "FAULTS",
    "FAULT_DRAWS",
    "STEPS_BASE",
    "STEPS_PER_CALL",
    "UPSTREAM",
    "FaultProfile",
    "PlanLike",
    "WorldScenario",
    "applies",
    "conditions",
    "draw_faults",
    "fault_draw",
    "list_world_scenarios",
    "load_source",
    "load_world",
    "source_spec",
    "study_names",
    "summary",
    "with_draw",
    "world_missing",
    "world_names",
    "world_source",
]


def conditions() -> tuple[str, ...]:
    """Every condition a world scenario can name as its fourth part: the events' conditions (each
    kind under each rename condition) and the injection conditions."""
    from harness.worlds.events import EVENT_CONDITIONS
    from harness.worlds.injections import INJECTIONS

    return (*EVENT_CONDITIONS, *INJECTIONS)


def applies(suite: str, task_id: str, condition: str) -> str | None:
    """Why ``condition`` does not apply to the task (one line), or None when it does."""
    from harness.worlds.events import admission
    from harness.worlds.injections import INJECTIONS, draw

    if condition in INJECTIONS:
        name = f"{WORLD}/{suite}/{task_id}/{condition}"
        return (
            None
            if draw(name, suite, task_id, condition) is not None
            else "its ground truth reads no injection vector"
        )
    found = admission(suite, task_id, condition)
    return found.reason if found.status == "not_applicable" else None


def world_names(spec: str) -> list[str]:
    """The scenario names a world spec stands for; UserError (one line) for a name that is not,
    with the nearest ones, or when AgentDojo is not installed. ``agentdojo/<suite>/<task>/<condition>``
    names the task under a world event (one the event applies to, :mod:`harness.worlds.events`).
    A BFCL spec (``bfcl/...``) is :func:`harness.worlds.bfcl_scenario.names`'s."""
    if world_of(spec) == BFCL:
        from harness.worlds import bfcl_scenario

        return bfcl_scenario.names(spec)
    parts = spec.split("/")
    if len(parts) in (4, 5) and all(parts) and parts[3] == UPSTREAM:
        task_name = "/".join(parts[:3])
        world_names(task_name)
        if len(parts) == 4:
            raise UserError(
                f"{spec}: the task under our faults is {task_name} (fault draw 0); another draw is "
                f"{task_name}/{UPSTREAM}/<d>, d from 1"
            )
        fault_draw(parts[4], spec)
        return [spec]
    if len(parts) == 4 and all(parts):
        task_name = "/".join(parts[:3])
        world_names(task_name)  # an unknown suite or task says so first
        if parts[3] not in conditions():
            raise unknown_name(f"{WORLD} condition", parts[3], conditions())
        why = applies(parts[1], parts[2], parts[3])
        if why is not None:
            raise UserError(f"{spec}: not applicable: {why} (harness worlds lists the pairs)")
        return [spec]
    if len(parts) > 3 or any(not p for p in parts):
        raise UserError(
            f"{spec}: a world scenario is {WORLD}/<suite>/<user_task_id>[/<condition>], or "
            f"{WORLD}/<suite>/<user_task_id>/{UPSTREAM}/<d> for fault draw d"
        )
    suites = [parts[1]] if len(parts) > 1 else sorted(agentdojo.suites())
    names: list[str] = []
    for name in suites:
        agentdojo.suite(name)  # an unknown suite says so, with the nearest names
        ids = agentdojo.task_ids(name)
        if len(parts) == 3:
            if parts[2] not in ids:
                raise unknown_name(f"{WORLD}/{name} task", parts[2], ids)
            ids = (parts[2],)
        names += [f"{WORLD}/{name}/{task}" for task in ids]
    return names


def world_missing(world: str) -> str | None:
    """Why ``world``'s scenarios cannot run here (one line: what to install), or None."""
    if world == BFCL:
        from harness.worlds import bfcl

        return bfcl.missing()
    return agentdojo.missing()


def list_world_scenarios(world: str = WORLD) -> list[str]:
    """Every scenario's name of ``world`` (its package installed), suite by suite, task by task."""
    return world_names(world)


def study_names() -> list[str]:
    """The worlds' study (``harness run --study --worlds``): every task under our upstream faults,
    in :data:`FAULT_DRAWS` fault configurations (draw 0, the task's name, first), then every
    (task, event) pair admitted as a fair test (:func:`harness.worlds.events.admission`), then
    every task under each injection condition that applies to it, then BFCL's part
    (:func:`harness.worlds.bfcl_scenario.study_names`)."""
    from harness.worlds.events import admissions
    from harness.worlds.injections import INJECTIONS

    tasks = list_world_scenarios()
    drawn = [with_draw(f"{n}/{UPSTREAM}", d) for d in range(1, FAULT_DRAWS) for n in tasks]
    admitted = [a.scenario for a in admissions() if a.status == "admitted"]
    injected = []
    for condition in INJECTIONS:
        for name in tasks:
            _, suite, task_id = name.split("/")
            if applies(suite, task_id, condition) is None:
                injected.append(f"{name}/{condition}")
    return [*tasks, *drawn, *admitted, *injected, *_bfcl_study()]


def _bfcl_study() -> list[str]:
    """The BFCL part of the worlds' study (:func:`harness.worlds.bfcl_scenario.study_names`)."""
    from harness.worlds import bfcl_scenario

    return bfcl_scenario.study_names()


def summary(name: str) -> str:
    """A world scenario's one line for ``harness list``: its task's prompt, on one line."""
    if world_of(name) == BFCL:
        from harness.worlds import bfcl_scenario

        return bfcl_scenario.summary(name)
    _, suite, task_id, *_ = name.split("/")
    return " ".join(agentdojo.prompt(suite, task_id).split())


@functools.cache
def load_world(name: str) -> WorldScenario:
    """The world scenario ``name`` names (one task), of whichever world; built once per process."""
    if world_of(name) == BFCL:
        from harness.worlds import bfcl_scenario

        return bfcl_scenario.load(name)
    return _load_agentdojo(name)


def _load_agentdojo(name: str) -> WorldScenario:
    names = world_names(name)
    if len(names) != 1 or names[0] != name:
        raise UserError(f"{name}: names {len(names)} world scenarios; one session needs one task")
    _, suite, task_id, *rest = name.split("/")
    condition = rest[0] if rest else UPSTREAM
    plan = agentdojo.plan(suite, task_id, _injected(name, suite, task_id, condition))
    subgoals = tuple(
        Subgoal(f"{i + 1}.{function}", (Option(function, args),))
        for i, (function, args) in enumerate(plan.calls)
    )
    prompt = agentdojo.prompt(suite, task_id)
    return WorldScenario(
        name=name,
        description=(
            f"AgentDojo {agentdojo.installed_version()} ({agentdojo.SUITE_VERSION}), suite {suite}, "
            f"{task_id}{_under(condition, rest[1:])}: {' '.join(prompt.split())}"
        ),
        path=None,
        tools=tuple(t.name for t in agentdojo.tools(suite)),
        task=Task(prompt, subgoals, "strict", plan_output=plan.output, world=WORLD),
        faults=draw_faults(name, plan) if condition == UPSTREAM else (),
        max_steps=STEPS_BASE + STEPS_PER_CALL * len(plan.calls),
        summary=summary(name),
        suite=suite,
        task_id=task_id,
        writes=plan.writes,
        condition=condition,
    )


def _under(condition: str, draw: list[str]) -> str:
    """How a scenario's description names its condition: nothing for draw 0 of our faults."""
    if condition != UPSTREAM:
        return f" under {condition}"
    return f" under our faults, fault draw {draw[0]}" if draw else ""


def _injected(name: str, suite: str, task_id: str, condition: str) -> tuple[tuple[str, str], ...]:
    """The injection vectors a scenario puts in its world (``injection_result``), else none: its
    plan is the task's ground truth on the world as injected, the one the agent meets."""
    from harness.worlds.injections import draw

    if condition != "injection_result":
        return ()
    injection = draw(name, suite, task_id, condition)
    return injection.vectors if injection is not None else ()


def world_source(name: str) -> str:
    """What a batch's ``scenario_sources`` hold for a world scenario: its name, the package and
    its version, and the suite version (a resume or a worker with another version is refused)."""
    if world_of(name) == BFCL:
        from harness.worlds import bfcl_scenario

        return bfcl_scenario.source(name)
    spec = {
        "name": name,
        "package": agentdojo.PACKAGE,
        "version": agentdojo.installed_version(),
        "suites": agentdojo.SUITE_VERSION,
    }
    return SOURCE_PREFIX + json.dumps(spec, sort_keys=True)


def source_spec(source: str) -> Mapping[str, Any] | None:
    """A :func:`world_source` string's fields, or None for any other source."""
    if not source.startswith(SOURCE_PREFIX):
        return None
    spec: Mapping[str, Any] = json.loads(source[len(SOURCE_PREFIX) :])
    return spec


def load_source(source: str, params: tuple[tuple[str, Any], ...] = ()) -> Scenario:
    """The batch loader of a run with world scenarios: a :func:`world_source` (or a world name)
    becomes its scenario, anything else goes to :func:`harness.scenarios.family.load_source`."""
    from harness.scenarios.family import load_source as load_other

    spec = source_spec(source)
    if spec is None and not is_world_name(source):
        return load_other(source, params)
    name = str(spec["name"]) if spec is not None else source
    if world_of(name) == BFCL:
        from harness.worlds import bfcl_scenario

        return bfcl_scenario.load_source(spec, name, params)
    if spec is not None:
        version = agentdojo.installed_version()
        if spec.get("version") != version or spec.get("suites") != agentdojo.SUITE_VERSION:
            raise UserError(
                f"{spec['name']}: the run used {spec.get('package')} {spec.get('version')} "
                f"({spec.get('suites')}); this machine has {version or 'none'} ({agentdojo.SUITE_VERSION})"
            )
    scenario: Scenario = load_world(str(spec["name"]) if spec is not None else source)
    return scenario.with_overrides(dict(params)) if params else scenario
