"""A user's own agent, written outside the harness: the worked example of docs/agents.md.

``Stubborn`` calls each subgoal's first option and, whatever goes wrong, calls it again,
up to ``patience`` times, then gives up. It reads nothing: it is a baseline a new agent
can be compared against. Run it with::

    harness run flaky_weather --agents docs/examples/stubborn.py:Stubborn --seeds 5

The agent column of the results then reads ``docs/examples/stubborn.py:Stubborn``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

from harness.scenarios.scenario import Task
from harness.session.agent import (
    Action,
    Agent,
    CallTool,
    Finish,
    GiveUp,
    Observation,
    RPCErrorObservation,
    ToolResult,
)


class Stubborn(Agent):
    """Calls each subgoal's first option until it works or patience runs out."""

    name: ClassVar[str] = "stubborn"
    summary: ClassVar[str] = "Calls each subgoal's first option again and again; reads nothing."
    patience: ClassVar[int] = 3

    def reset(self, task: Task, tools: Sequence[dict[str, Any]], seed: int) -> None:
        self.task = task
        self.subgoal = 0
        self.attempts = 0

    def _call(self) -> CallTool:
        option = self.task.subgoals[self.subgoal].options[0]
        self.attempts += 1
        return CallTool(option.tool, dict(option.arguments))

    def act(self, observation: Observation) -> Action:
        failed = isinstance(observation, RPCErrorObservation) or (
            isinstance(observation, ToolResult) and observation.is_error
        )
        if isinstance(observation, ToolResult | RPCErrorObservation) and not failed:
            self.subgoal, self.attempts = self.subgoal + 1, 0  # that subgoal's call worked
        if self.subgoal == len(self.task.subgoals):
            return Finish()
        if self.attempts >= self.patience:
            return GiveUp(f"{self.attempts} failed calls")
        return self._call()
