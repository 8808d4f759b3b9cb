"""BFCL scenarios: each multi-turn task a scenario, its turns the user's, its plan each turn's ground truth.

A BFCL scenario is named ``bfcl/<category>/<id>`` (``bfcl/multi_turn_miss_func/0``), the category
one of :data:`harness.worlds.bfcl.CATEGORIES` and the id the number BFCL's own id ends with;
``bfcl/<category>`` names every task of a category and ``bfcl`` every task. A fourth part names
the error condition (:data:`CONDITIONS`), and under our faults a fifth the fault draw
(``bfcl/multi_turn_base/0/raised/2``; none is draw 0, :data:`harness.worlds.task.FAULT_DRAWS`):

* none (**native**): BFCL's own failures arrive as its environment returns them, ordinary results
  whose text says it failed (``{"error": "..."}``), under every strategy alike; no fault of ours;
* ``upstream``: our upstream faults on the plan's tools, drawn as on AgentDojo's tasks
  (:func:`harness.worlds.task.draw_faults`), BFCL's own failures native;
* ``raised``: the same faults, drawn alike, and BFCL's own failures, in the same words, raised by
  the tool's handler, so that the strategy decides what the agent sees of those too
  (``is_error``, ``masked``, ``collapse``...).

Why ``raised`` carries our faults: BFCL's ground truth never fails in its own world (no call of
the 800 tasks' plans returns a failure: ``python -m harness.worlds.bfcl``), so a plan
follower meets BFCL's failures only downstream of something going wrong -- one of our faults, or
its own repair re-running a write. Without faults ``raised`` would be ``native``, session for
session. With the same faults, ``upstream`` and ``raised`` differ only in how BFCL's own failures
reach the agent.

What is BFCL's: the tools (its function docs; a ``miss_func`` task's held-out functions listed
only from their turn on), the turns, the plan (each turn's ground truth, in order) and the judge
(:meth:`harness.worlds.bfcl.Episode.verdict`). What is ours: the condition, the faults and the
step budget (:data:`harness.worlds.task.STEPS_BASE` + ``STEPS_PER_CALL`` per planned call +
one step per turn, the agent's answer that ends it).
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from harness.errors import UserError, unknown_name
from harness.scenarios.scenario import Option, Scenario, Subgoal, Task
from harness.worlds import SOURCE_PREFIX, bfcl
from harness.worlds.task import (
    FAULT_DRAWS,
    STEPS_BASE,
    STEPS_PER_CALL,
    WorldScenario,
    draw_faults,
    fault_draw,
    with_draw,
)

WORLD = bfcl.WORLD
NATIVE = "native"
RAISED = "raised"
UPSTREAM = "upstream"
CONDITIONS: tuple[str, ...] = (NATIVE, RAISED, UPSTREAM)
"""The error conditions, in the order tables show them; ``native`` is the bare name's."""

STUDY_CONDITIONS: tuple[str, ...] = (RAISED, UPSTREAM)
"""The conditions of the worlds' study: where a strategy can change what the agent sees (under
``native`` every strategy shows the same ordinary results)."""

STUDY_STRIDE = 4
"""The worlds' study takes every ``STUDY_STRIDE``-th task of each category (ids 0, 4, 8, ...):
the cost it adds stays bounded (docs/worlds.md gives the time), every category is in it."""


@dataclass(frozen=True)
class BfclScenario(WorldScenario):
    """A BFCL multi-turn task as a scenario (see the module's docstring)."""

    session_kind: ClassVar[str] = "bfcl"

    turns: tuple[str, ...] = ()
    """Each turn's user message."""
    turn_of: tuple[int, ...] = ()
    """The turn of each subgoal of the task (its ground-truth calls, flattened in order)."""
    held: tuple[tuple[int, tuple[str, ...]], ...] = ()
    """``miss_func``: (turn, the functions registered at its start)."""

    def turn_task(self, turn: int) -> Task:
        """What the user asks at ``turn``: its message, and its ground-truth calls as the plan."""
        goals = tuple(g for g, t in zip(self.task.subgoals, self.turn_of, strict=True) if t == turn)
        return Task(self.turns[turn], goals, "strict", world=WORLD)


def names(spec: str) -> list[str]:
    """The scenario names a BFCL spec stands for; UserError (one line) for one that is not, with
    the nearest names, or when bfcl-eval is not installed."""
    parts = spec.split("/")
    if len(parts) > 5 or any(not p for p in parts) or parts[0] != WORLD:
        raise UserError(
            f"{spec}: a BFCL scenario is {WORLD}/<category>/<id>[/<condition>[/<d>]], d a fault draw from 1"
        )
    if len(parts) >= 4:
        names("/".join(parts[:3]))
        if parts[3] not in CONDITIONS[1:]:
            raise unknown_name(f"{WORLD} condition", parts[3], CONDITIONS[1:])
        if len(parts) == 5:
            fault_draw(parts[4], spec)
        return [spec]
    bfcl.require()
    categories = [parts[1]] if len(parts) > 1 else list(bfcl.CATEGORIES)
    out: list[str] = []
    for category in categories:
        ids = bfcl.task_ids(category)
        if len(parts) == 3:
            bfcl.entry(category, parts[2])
            ids = (parts[2],)
        out += [f"{WORLD}/{category}/{i}" for i in ids]
    return out


def study_names() -> list[str]:
    """The BFCL part of the worlds' study: every :data:`STUDY_STRIDE`-th task of each category
    under each of :data:`STUDY_CONDITIONS`, in :data:`~harness.worlds.task.FAULT_DRAWS` fault
    configurations (draw 0 first)."""
    tasks = [n for n in names(WORLD) if int(n.rsplit("/", 1)[1]) % STUDY_STRIDE == 0]
    return [
        with_draw(f"{name}/{condition}", draw)
        for draw in range(FAULT_DRAWS)
        for condition in STUDY_CONDITIONS
        for name in tasks
    ]


def summary(name: str) -> str:
    """A BFCL scenario's one line for ``harness list``: its first turn's message, on one line."""
    _, category, task_id, *_ = name.split("/")
    return " ".join(bfcl.turn_prompts(category, task_id)[0].split())


@functools.cache
def load(name: str) -> BfclScenario:
    """The BFCL scenario ``name`` names (one task); built once per process."""
    found = names(name)
    if found != [name]:
        raise UserError(f"{name}: names {len(found)} BFCL scenarios; one session needs one task")
    _, category, task_id, *rest = name.split("/")
    condition = rest[0] if rest else NATIVE
    draw = int(rest[1]) if len(rest) > 1 else 0
    plan = bfcl.plan(category, task_id)
    subgoals, turn_of = [], []
    for turn, calls in enumerate(plan.turns):
        for i, (function, args) in enumerate(calls):
            subgoals.append(Subgoal(f"{turn + 1}.{i + 1}.{function}", (Option(function, args),)))
            turn_of.append(turn)
    prompts = bfcl.turn_prompts(category, task_id)
    tools = bfcl.tools(category, task_id)
    return BfclScenario(
        name=name,
        description=(
            f"BFCL {bfcl.installed_version()} ({bfcl.DATA_VERSION}), {category} {task_id}, "
            f"{len(prompts)} turns, {condition}{f', fault draw {draw}' if draw else ''}: "
            f"{' '.join(prompts[0].split())}"
        ),
        path=None,
        tools=tuple(t.name for t in tools.all()),
        task=Task(prompts[0], tuple(subgoals), "strict", world=WORLD),
        faults=draw_faults(with_draw(f"{WORLD}/{category}/{task_id}/{UPSTREAM}", draw), plan)
        if condition != NATIVE
        else (),
        max_steps=STEPS_BASE + STEPS_PER_CALL * len(subgoals) + len(prompts),
        summary=summary(name),
        world=WORLD,
        suite=category,
        task_id=task_id,
        writes=plan.writes,
        condition=condition,
        turns=prompts,
        turn_of=tuple(turn_of),
        held=tuple((turn, tuple(t.name for t in specs)) for turn, specs in tools.held),
    )


def source(name: str) -> str:
    """What a batch's ``scenario_sources`` hold for a BFCL scenario: its name, the package and its
    version (a resume or a worker with another version is refused)."""
    spec = {
        "name": name,
        "package": bfcl.PACKAGE,
        "version": bfcl.installed_version(),
        "data": bfcl.DATA_VERSION,
    }
    return SOURCE_PREFIX + json.dumps(spec, sort_keys=True)


def load_source(spec: Mapping[str, Any] | None, name: str, params: tuple[tuple[str, Any], ...]) -> Scenario:
    """A BFCL scenario from its :func:`source` fields (or its name), refused where another
    bfcl-eval version is installed than the run's."""
    if spec is not None:
        bfcl.require()
        version = bfcl.installed_version()
        if spec.get("version") != version or spec.get("data") != bfcl.DATA_VERSION:
            raise UserError(
                f"{name}: the run used {spec.get('package')} {spec.get('version')} ({spec.get('data')}); "
                f"this machine has {version or 'none'} ({bfcl.DATA_VERSION})"
            )
    scenario: Scenario = load(name)
    return scenario.with_overrides(dict(params)) if params else scenario
