"""``reader``: reads the isError text and does what it says; guesses when it says nothing."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from harness.protocol.inputs import ELICIT
from harness.session.agent import Action, RPCErrorObservation, ToolResult
from scripted_agents.base import REMEDY_OF, ScriptedAgent


class ReaderAgent(ScriptedAgent):
    """Waits out rate limits, retries transient failures and timeouts, fixes a named argument,
    narrows a too-large request, switches tools on a permanent failure, checks that results
    parse, and verifies writes. It never re-lists tools: its tool list is the one from reset.

    ``trust`` decides what the text is worth: ``follow`` acts on it; ``verify`` acts on it but
    reads back a write it is told to redo and re-lists (and calls once more) before it believes
    it must use another tool; ``ignore`` treats every error, RPC codes too, as unexplained.
    """

    name = "reader"
    summary = "Reads error text: waits, retries, fixes arguments, narrows, switches; verifies writes."
    checks_content = True
    verifies = True
    repairs_on_worlds = True
    knobs: ClassVar[tuple[str, ...]] = (
        "retry_budget",
        "backoff",
        "trust",
        "relist",
        "step_budget",
        "rewrites",
        "order",
    )

    def on_error(self, text: str, obs: ToolResult) -> Action:
        if self.trust == "ignore":
            return self.guess()
        return self.respond(self.reading(text))

    def answer_input(self, method: str, params: Mapping[str, Any]) -> dict[str, Any] | None:
        """An elicitation for an argument is read like an error text: a question that names the
        form or limit the argument needs (a fix the reader would have made after an error) is
        answered with it; any other question, and every one under ``trust=ignore``, is declined.
        """
        if method != ELICIT or self.trust == "ignore":
            return None
        message = params.get("message")
        schema = params.get("requestedSchema")
        wanted = schema.get("properties", {}) if isinstance(schema, dict) else {}
        reading = self.reading(message if isinstance(message, str) else None)
        argument = reading.argument if REMEDY_OF.get(reading.category) == "fix_argument" else None
        if argument is None or argument not in wanted:
            return None
        value = self.fixed(argument, reading.expected)
        if value is None:
            return None
        self.args[argument] = value  # the call goes on with it, as the agent's own call would
        self.messages_read += 1
        return {"action": "accept", "content": {argument: value}}

    def on_rpc_error(self, obs: RPCErrorObservation) -> Action:
        if self.trust == "ignore":
            return self.guess()
        return self.respond_rpc(obs)
