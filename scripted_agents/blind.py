"""``blind``: the reader's repair moves, tried in a fixed order, reading no text (the control)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from harness.session.agent import Action, RPCErrorObservation, ToolResult
from scripted_agents.reader import ReaderAgent


class BlindAgent(ReaderAgent):
    """What reading is worth is what the reader does better than this agent. It has the reader's
    moves and checks (retries with backoff, switching to an alternative, verifying writes, and on
    a world re-discovering through the tool list, ``scripted_agents/world.py``) and tries them in
    a fixed order after every failure, whatever the error says: it never reads an error text
    (nor an instruction in one), never answers a server's question, never waits for a stated
    ``retry_after``. On the harness's own scenarios that is the reader with ``trust=ignore``.

    It is a family, not one strawman: ``order`` (retries or re-discovery first), ``retry_budget``
    (the retries; unset: 3 on a world) and ``backoff`` (the wait before each retry) make its
    members (``--set agent.order=retry_first,rediscover_first`` and so on); ``blind`` unconfigured
    is the default member, retry-first with 3 retries at 1, 2, 4 s. The worlds' report measures
    the reader against the member best on a dev split of the tasks (docs/study.md).
    """

    name = "blind"
    summary = "The reader's moves in a fixed order, reading no error text (the control)."
    reads = False
    trust = "ignore"
    knobs: ClassVar[tuple[str, ...]] = ("retry_budget", "backoff", "relist", "step_budget", "order")

    def on_error(self, text: str, obs: ToolResult) -> Action:
        return self.guess()

    def on_rpc_error(self, obs: RPCErrorObservation) -> Action:
        return self.guess()

    def answer_input(self, method: str, params: Mapping[str, Any]) -> dict[str, Any] | None:
        return None
