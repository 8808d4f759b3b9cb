"""``retry``: repeats the identical call up to k times, whatever the error says."""

from __future__ import annotations

from harness.session.agent import Action, GiveUp, RPCErrorObservation, ToolResult
from scripted_agents.base import ScriptedAgent


class RetryAgent(ScriptedAgent):
    """Blind persistence: the SEP-1303 failure mode when nothing tells it why (k = 3 retries,
    at once: ``retry_budget`` 3, ``backoff`` ``none``)."""

    name = "retry"
    summary = "Retries the same call up to 3 times whatever the error; never reads it."
    retry_budget = 3
    backoff = "none"

    def _failed(self, what: str) -> Action:
        k = self.retry_budget or 0
        if self.attempts > k:  # the first call plus k retries
            return GiveUp(f"{self.subgoal.name}: {what} after {k} retries")
        return self.blind_retry()

    def on_error(self, text: str, obs: ToolResult) -> Action:
        return self._failed(f"{obs.tool} failed")

    def on_rpc_error(self, obs: RPCErrorObservation) -> Action:
        return self._failed(f"{obs.tool} failed ({obs.code})")
