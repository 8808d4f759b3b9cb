"""``retry``: repeats the identical call up to k times, whatever the error says."""

from __future__ import annotations

from typing import ClassVar

from harness.sim.agent import Action, GiveUp, RPCErrorObservation, ToolResult
from scripted_agents.base import ScriptedAgent


class RetryAgent(ScriptedAgent):
    """Blind persistence: the SEP-1303 failure mode when nothing tells it why (k = 3)."""

    name = "retry"
    summary = "Retries the same call up to 3 times whatever the error; never reads it."
    k: ClassVar[int] = 3

    def _failed(self, what: str) -> Action:
        if self.attempts > self.k:  # the first call plus k retries
            return GiveUp(f"{self.subgoal.name}: {what} after {self.k} retries")
        return self.resend()

    def on_error(self, text: str, obs: ToolResult) -> Action:
        return self._failed(f"{obs.tool} failed")

    def on_rpc_error(self, obs: RPCErrorObservation) -> Action:
        return self._failed(f"{obs.tool} failed ({obs.code})")
