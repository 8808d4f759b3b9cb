"""``naive``: takes every answer at face value and gives up on the first error."""

from __future__ import annotations

from harness.sim.agent import Action, GiveUp, RPCErrorObservation, ToolResult
from scripted_agents.base import ScriptedAgent


class NaiveAgent(ScriptedAgent):
    """The floor: no retries, no reading, no checking (a garbled or fake success counts as done)."""

    name = "naive"
    summary = "Gives up on the first error; believes every success."

    def on_error(self, text: str, obs: ToolResult) -> Action:
        return GiveUp(f"{self.subgoal.name}: {obs.tool} failed")

    def on_rpc_error(self, obs: RPCErrorObservation) -> Action:
        return GiveUp(f"{self.subgoal.name}: {obs.tool} failed ({obs.code})")
