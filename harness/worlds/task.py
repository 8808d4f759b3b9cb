"""What a task of any world becomes: a :class:`WorldScenario`, its step budget, and our faults on its tools.

Each world's scenarios (:mod:`harness.worlds.scenario` for AgentDojo's, :mod:`harness.worlds.
bfcl_scenario` for BFCL's) are :class:`WorldScenario` s, with the same step budget
(:data:`STEPS_BASE` + :data:`STEPS_PER_CALL` per planned call) and the same fault profile
(:data:`FAULTS`), drawn by :func:`draw_faults` once per scenario name
(``derive_seed("world-faults", name)``), so a name always carries the same rules: upstream kinds
only, on the plan's tools, with texts from the sources of :mod:`harness.faults.sources`. A task has
as many fault configurations as names: :data:`FAULT_DRAWS` of them in the worlds' study
(:func:`with_draw`).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Any, ClassVar, Protocol

from harness.errors import UserError
from harness.faults.kinds import FaultRule
from harness.faults.sources import fits
from harness.scenarios.family import Numbers, Weights
from harness.scenarios.scenario import Scenario
from harness.seeding import derive_seed, np_random
from harness.worlds import WORLD

UPSTREAM = "upstream"
"""The condition of an AgentDojo scenario named by its task alone: our upstream faults on its tools."""

STEPS_BASE = 10
STEPS_PER_CALL = 6
"""A world scenario's step budget: ``STEPS_BASE + STEPS_PER_CALL * calls in its plan``, room for
a few retries and waits per call (a family's 1-4 subgoals get 25-45)."""


@dataclass(frozen=True)
class FaultProfile:
    """How faults strike a world's tasks, as a family's ``[faults]`` table says it for its own."""

    count: Numbers
    kinds: Weights
    rate: Numbers
    explicit: float
    source: Weights
    burst: Numbers
    """A transient rule's failures in a row."""
    retry_after_s: Numbers
    """A rate limit's block, in virtual seconds."""


FAULTS = FaultProfile(
    count=Numbers((), 1, 2, integer=True),
    kinds=Weights(
        ("transient", "rate_limited", "timeout", "permanent", "futile_outage", "post_commit"),
        (3.0, 2.0, 1.0, 1.0, 1.0, 1.0),
    ),
    rate=Numbers((), 0.1, 0.5),
    explicit=0.8,
    source=Weights(("template", "jsonschema", "pydantic", "fastmcp", "harvested"), (1.0,) * 5),
    burst=Numbers((1.0, 2.0), integer=True),
    retry_after_s=Numbers((2.0, 5.0, 10.0)),
)
"""The world's fault profile: 1-2 rules per task, upstream kinds only (a world tool's own
argument faults are its own, issue 41), each on a tool its plan calls (``post_commit`` on one
whose planned call changed the environment), at a rate of 0.1-0.5, explicit 4 times in 5, its
text from a real stack, real servers' own texts or the template with equal weights."""


@dataclass(frozen=True)
class WorldScenario(Scenario):
    """A world task as a scenario (see the module's docstring)."""

    session_kind: ClassVar[str] = "world"
    """Which kind of session runs it (:func:`harness.batch.kinds.kind_for`)."""

    world: str = WORLD
    suite: str = ""
    task_id: str = ""
    writes: frozenset[str] = field(default_factory=frozenset)
    """Tools whose planned call changed the environment."""
    condition: str = UPSTREAM
    """What fails: ``upstream`` (our fault rules on the plan's tools), a world event
    (:data:`harness.worlds.events.EVENT_CONDITIONS`: no fault rules, the world itself changed) or an
    injection condition (:data:`harness.worlds.injections.INJECTIONS`: no fault rules either)."""


FAULT_DRAWS = 3
"""The fault configurations the worlds' study draws for each task (and each condition under our
faults): draw 0 is named as the task is (``agentdojo/banking/user_task_0``,
``bfcl/multi_turn_base/0/upstream``), draw ``d`` adds ``/<d>`` (``agentdojo/banking/user_task_0/
upstream/1``). Each draw is a configuration of its own, from a generator of its own name's, so a
fault mix is not tied to a task; the task stays the unit of inference, its draws and seeds
averaged inside it."""


def fault_draw(text: str, spec: str) -> int:
    """The fault draw a name's last part gives (1, 2, ...); UserError (one line) for anything else."""
    if not text.isdigit() or int(text) < 1 or text != str(int(text)):
        raise UserError(
            f"{spec}: a fault draw is a whole number from 1 ({text!r} is not; draw 0 is the name without it)"
        )
    return int(text)


def with_draw(name: str, draw: int) -> str:
    """``name`` (under our faults) at fault draw ``draw``: itself for draw 0, else ``name/<draw>``."""
    return name if draw == 0 else f"{name}/{draw}"


class PlanLike(Protocol):
    """What the fault draw reads of a world task's plan (AgentDojo's or BFCL's)."""

    @property
    def calls(self) -> tuple[tuple[str, dict[str, Any]], ...]: ...

    @property
    def writes(self) -> frozenset[str]: ...


def draw_faults(name: str, plan: PlanLike, profile: FaultProfile = FAULTS) -> tuple[FaultRule, ...]:
    """The rules a world scenario carries, drawn from ``profile`` with a generator of its name's."""
    rng = np_random(derive_seed("world-faults", name))
    called = list(dict.fromkeys(function for function, _ in plan.calls))
    writes = [t for t in called if t in plan.writes]
    rules: list[FaultRule] = []
    taken: set[tuple[str, str]] = set()
    for _ in range(profile.count.draw_int(rng)):
        kind = profile.kinds.draw(rng, lambda k: k != "post_commit" or bool(writes))
        if kind is None:
            break
        on = writes if kind == "post_commit" else called
        tool = on[int(rng.integers(len(on)))]
        rate = float(profile.rate.draw(rng))
        explicit = bool(rng.random() < profile.explicit)
        source = profile.source.draw(rng, functools.partial(_speaks, kind)) or "template"
        extra: dict[str, Any] = {}
        if kind == "transient":
            extra["burst"] = profile.burst.draw_int(rng)
        elif kind == "rate_limited":
            extra["retry_after_s"] = float(profile.retry_after_s.draw(rng))
        if (kind, tool) in taken:
            continue  # one rule per kind and tool
        taken.add((kind, tool))
        rules.append(FaultRule(len(rules), kind, tool, rate, (), explicit, source=source, **extra))
    return tuple(rules)


def _speaks(kind: str, source: str) -> bool:
    return fits(source, kind)
