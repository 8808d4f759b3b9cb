"""``reader``: reads the isError text and does what it says; guesses when it says nothing."""

from __future__ import annotations

from harness.sim.agent import Action, RPCErrorObservation, ToolResult
from scripted_agents.base import ScriptedAgent, read_reason


class ReaderAgent(ScriptedAgent):
    """Waits out rate limits, retries transient failures and timeouts, fixes a named argument,
    narrows a too-large request, switches tools on a permanent failure, checks that results
    parse, and verifies writes. It never re-lists tools: its tool list is the one from reset.
    """

    name = "reader"
    summary = "Reads error text: waits, retries, fixes arguments, narrows, switches; verifies writes."
    checks_content = True
    verifies = True

    def on_error(self, text: str, obs: ToolResult) -> Action:
        return self.respond(read_reason(text))

    def on_rpc_error(self, obs: RPCErrorObservation) -> Action:
        return self.respond_rpc(obs)
