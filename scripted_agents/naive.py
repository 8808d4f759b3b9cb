"""``naive``: takes every answer at face value and gives up on the first error."""

from __future__ import annotations

from harness.session.agent import Action, GiveUp, RPCErrorObservation, ToolResult
from scripted_agents.base import ScriptedAgent


class NaiveAgent(ScriptedAgent):
    """The floor: no retries, no reading, no checking (a garbled or fake success counts as done).

    Its ``retry_budget`` is 0 and its ``backoff`` ``none``; given a budget, it retries blindly
    like ``retry`` before it gives up.
    """

    name = "naive"
    summary = "Gives up on the first error; believes every success."
    retry_budget = 0
    backoff = "none"

    def _failed(self, what: str) -> Action:
        if self.attempts > (self.retry_budget or 0):  # the first call plus its retries
            return GiveUp(f"{self.subgoal.name}: {what}")
        return self.blind_retry()

    def on_error(self, text: str, obs: ToolResult) -> Action:
        return self._failed(f"{obs.tool} failed")

    def on_rpc_error(self, obs: RPCErrorObservation) -> Action:
        return self._failed(f"{obs.tool} failed ({obs.code})")
