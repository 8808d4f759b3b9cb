"""``oracle``: knows the fault schedule and the tool-list events; the upper bound.

The oracle reads nothing: the session binds it to an :class:`OracleView` of the
ground truth (what the next call of a tool would meet, whether a call really
happened, which tools will appear). It fixes arguments before a fault can
object, skips permanently failing tools, waits out rate limits exactly, and
repeats a call that was silently dropped or garbled. Faults it cannot avoid
(every option is hit next) it takes and repeats. Since it never depends on
the error's text, it does equally well under ``is_error``, ``masked`` and
``collapse``; under ``escape`` the first unavoidable fault still kills it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar, Protocol

from harness.faults.kinds import CallOutcome
from harness.scenarios.scenario import Task
from harness.session.agent import (
    Action,
    CallTool,
    GiveUp,
    ListTools,
    Observation,
    RPCErrorObservation,
    ToolResult,
    ToolsListed,
    Wait,
)
from scripted_agents.base import ScriptedAgent, remap


class OracleView(Protocol):
    """What the session lets the oracle see."""

    step_cost_s: float

    def callable_now(self, tool: str) -> bool:
        """Listed by the server and allowed for this client."""

    def schema(self, tool: str) -> dict[str, Any]:
        """The tool's inputSchema as the server has it now."""

    def fixes(self, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """``arguments`` (base names) with what the fault rules insist on filled in."""

    def peek(self, tool: str, arguments: dict[str, Any]) -> str | None:
        """The fault kind the next call would meet now, or None."""

    def blocked_for(self, tool: str) -> float:
        """Seconds until an active rate limit on ``tool`` lifts."""

    def last_outcome(self) -> CallOutcome | None:
        """What really happened to the last tools/call (None: it never reached a tool)."""

    def will_appear(self, tool: str) -> bool:
        """A pending event will make ``tool`` callable at a later step."""


_NO_CALL_PASSES = frozenset({"permanent", "futile_outage"})
"""Fault kinds no later call of the same tool gets past: the oracle takes another option."""


class OracleAgent(ScriptedAgent):
    """Plans every call against the ground truth; see the module docstring."""

    name = "oracle"
    summary = "Knows the fault schedule and events (the upper bound); reads nothing."
    omniscient = True
    knobs: ClassVar[tuple[str, ...]] = ()
    """None: it plans from the ground truth, so no policy of retries, trust or re-listing applies."""

    def reset(self, task: Task, tools: Sequence[dict[str, Any]], seed: int) -> None:
        super().reset(task, tools, seed)
        self.view: OracleView | None = None

    def bind(self, view: OracleView) -> None:
        self.view = view

    def act(self, observation: Observation) -> Action:
        view = self.view
        if view is None:
            raise RuntimeError("the oracle must be bound to the session (bind) before it acts")
        if isinstance(observation, ToolsListed):
            self.known = {t["name"]: t for t in observation.tools}
        elif isinstance(observation, ToolResult | RPCErrorObservation):
            outcome = view.last_outcome()
            done = isinstance(observation, ToolResult) and not observation.is_error
            if outcome is not None and outcome.fault is not None and outcome.fault.kind == "post_commit":
                self.sg += 1  # the write went through whatever the answer says: doing it again duplicates it
            elif done and outcome is not None and outcome.executed:
                assert isinstance(observation, ToolResult)
                self.noted(observation)
                tool = self.known.get(observation.tool, {})
                if tool.get("annotations", {}).get("readOnlyHint") is True:
                    self.answers[self.subgoal.name] = observation
                self.sg += 1
        if self.sg >= len(self.task.subgoals):
            return self.finish()
        return self._plan(view)

    def _plan(self, view: OracleView) -> Action:
        best: tuple[bool, str, dict[str, Any], str | None] | None = None
        for opt in self.subgoal.options:
            if not view.callable_now(opt.tool):
                continue
            args = remap(view.fixes(opt.tool, dict(opt.arguments)), view.schema(opt.tool))
            kind = view.peek(opt.tool, args)
            if kind in _NO_CALL_PASSES:
                continue
            if best is None or (best[0] and kind is None):
                best = (kind is not None, opt.tool, args, kind)
        if best is None:
            if any(view.will_appear(o.tool) for o in self.subgoal.options):
                return Wait(view.step_cost_s)
            return GiveUp(f"{self.subgoal.name}: no option can work")
        _, tool, args, kind = best
        listed = self.known.get(tool)
        if listed is None or (listed.get("inputSchema") or {}) != view.schema(tool):
            return ListTools()  # a model can only call what it was shown
        if kind == "rate_limited" and view.blocked_for(tool) > 0:
            return Wait(view.blocked_for(tool))
        self.current = CallTool(tool, args)
        return self.current

    def on_error(self, text: str, obs: ToolResult) -> Action:  # pragma: no cover - act() is overridden
        raise NotImplementedError

    def on_rpc_error(self, obs: RPCErrorObservation) -> Action:  # pragma: no cover - act() is overridden
        raise NotImplementedError
