"""One BFCL session: the user's turns one after the other, BFCL's functions over the MCP core, BFCL's judge.

The stack is a world session's (:mod:`harness.worlds.session`): BFCL's environment instances
(:class:`harness.worlds.bfcl.Episode`) beneath our fault rules, an ordinary ``MCPServer`` with a
handler per function, the in-memory transport, the client, the host and the agent. What a BFCL
session adds:

* **turns.** The agent is given the first turn's message and its plan (that turn's ground truth);
  when it ends the turn (a ``Finish``, or a ``GiveUp``: a model that stops calling ends its turn
  either way) the next turn starts, a fresh task for the agent (``reset``) with the tool list it
  last saw, until the last turn has ended;
* **miss_func.** A held-out function is not registered until its turn; at that turn's start it is
  registered with ``notifications/tools/list_changed`` (sent where the client may receive it: in
  the handshake era once initialized, in the stateless era on its ``subscriptions/listen`` stream).
  The agent's tool list changes only when it re-lists;
* **conditions.** ``native``: BFCL's failures are ordinary results; ``raised``: a result that is a
  failure by BFCL's own conventions (:func:`harness.worlds.bfcl.failed`) is raised by the handler
  with the same text, so the strategy shapes it; ``upstream``: our fault rules, failures native;
* **the judge.** ``success`` is BFCL's verdict (:meth:`harness.worlds.bfcl.Episode.verdict`) on
  the calls that reached the environment, turn by turn; ``judge`` says ``bfcl``. The trace ends
  with a ``judge`` note holding the verdict and its error type.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from typing import Any

from harness.scenarios.scenario import Task
from harness.seeding import derive_seed
from harness.session.agent import (
    Finish,
    GiveUp,
    Observation,
    Start,
    ToolsListed,
)
from harness.session.host import Host
from harness.session.loop import BaselineCache, LoopKind
from harness.session.registry import seed_name
from harness.sim.catalogue import World
from harness.worlds import bfcl
from harness.worlds.agentdojo import WorldToolError
from harness.worlds.bfcl_scenario import RAISED, BfclScenario
from harness.worlds.scenario import load_source
from harness.worlds.session import WorldSession

__all__ = ["BFCL_KIND", "BfclSession"]

_EPISODES = itertools.count()
"""Numbers the episodes of a process: BFCL keys its instances by a model name, each episode's own."""


class BfclSession(WorldSession):
    """The state of one BFCL session (see the module's docstring): the world session's counts, the
    BFCL episode, the turn the user is at and what the agent last listed."""

    sc: BfclScenario

    def setup(self) -> None:
        super().setup()
        self.world: bfcl.Episode | None = None
        self.turn = 0
        self.turns_ended = 0
        self.outputs: list[str] = []
        """What the agent told the user at the end of each turn."""
        self.seen_tools: list[dict[str, Any]] = []
        """The tool list the agent last saw (the first list, or its last ListTools)."""
        self.verdict_found: dict[str, Any] = {}
        self.specs = {t.name: t for t in bfcl.tools(self.sc.suite, self.sc.task_id).all()}

    # -- the stack --------------------------------------------------------------------------------

    def _build(self) -> Host:
        self.world = bfcl.Episode(self.sc.suite, self.sc.task_id, f"harness_{next(_EPISODES)}")
        self.server = self._new_server(f"{bfcl.WORLD}-{self.sc.suite}", bfcl.installed_version() or "")
        held = {name for _, names in self.sc.held for name in names}
        for name in self.specs:
            if name not in held:
                self._register(name, notify=False)
        return self._connect(self.server)

    def _register(self, name: str, *, notify: bool) -> None:
        """Serve one BFCL function (``notify``: with list_changed, a held-out one at its turn)."""
        spec = self.specs[name]
        self._serve(spec.name, spec.description, spec.input_schema, self._runner(spec.name), notify=notify)

    def _runner(self, name: str) -> Callable[[World, dict[str, Any]], str]:
        raised = self.sc.condition == RAISED

        def run(world: World, arguments: dict[str, Any]) -> str:
            assert self.world is not None
            text = self.world.run(name, arguments)
            note: dict[str, Any] = {"function": name, "args": arguments, "turn": self.turn}
            failure = bfcl.failed(text)
            if failure:
                note["error"] = text
            self.trace.note(self.tally.steps, world_call=note)
            if failure and raised:
                raise WorldToolError(text)
            return text

        return run

    def listed(self, tools: Sequence[Any]) -> None:
        self.seen_tools = [dict(t) for t in tools]

    def task_for_agent(self) -> Task:
        return self.sc.turn_task(self.turn)

    def execute(self, action: Any) -> Observation:
        obs = super().execute(action)
        if isinstance(obs, ToolsListed):
            self.seen_tools = [dict(t) for t in obs.tools]
        return obs

    # -- turns ------------------------------------------------------------------------------------

    def next_turn(self, action: Finish | GiveUp) -> Observation | None:
        """The turn ends with what the agent said; the next one starts (its held-out functions
        registered first), or the session ends after the last."""
        self.outputs.append(action.text if isinstance(action, Finish) else action.reason)
        self.turns_ended += 1
        if self.turn + 1 >= len(self.sc.turns):
            return None
        self.turn += 1
        assert self.world is not None
        self.world.turn = self.turn
        self.note(turn=self.turn)
        for turn, names in self.sc.held:
            if turn == self.turn:
                for name in names:
                    self._register(name, notify=True)
                self.note(registered=list(names))
        seed = derive_seed("agent", self.sc.name, seed_name(self.agent_name), self.seed, self.turn)
        self.agent.reset(self.task_for_agent(), self.seen_tools, seed)
        bind = getattr(self.agent, "bind", None)
        if self.agent.omniscient and callable(bind):
            bind(self.oracle_view())
        return Start()

    # -- a call -----------------------------------------------------------------------------------

    def world_state(self) -> Any:
        return self.world.state() if self.world is not None else None

    # -- the judge --------------------------------------------------------------------------------

    def _judge(self) -> None:
        """BFCL's verdict on the calls that reached its environment, turn by turn."""
        world = self.world
        if world is None:
            return
        self.output = "\n".join(self.outputs) if self.outputs else self.output
        try:
            found = world.verdict(self.turns_ended)
        except Exception as exc:  # the checker itself broke on this session: not a yes
            found = {
                "valid": False,
                "error_type": "judge_error",
                "error_message": f"{type(exc).__name__}: {exc}",
            }
        self.verdict_found = found
        self.utility = bool(found.get("valid"))
        said: dict[str, Any] = {"judge": bfcl.WORLD, "utility": self.utility, "turns": self.turns_ended}
        if not self.utility:
            said["error_type"] = str(found.get("error_type", ""))
            said["error_message"] = str(found.get("error_message", ""))
        self.trace.note(self.tally.steps, **said)

    def close(self) -> None:
        if self.world is not None:
            self.world.close()

    def why_not(self) -> str:
        if self.status == "harness_error":
            return f"the session broke ({self.error})"
        if self.end == "budget":
            return f"the step budget (max_steps = {self.sc.max_steps}) ran out at turn {self.turn + 1}"
        found = self.verdict_found
        return f"BFCL's checker says {found.get('error_type', '')}: {found.get('error_message', '')}"


BASELINE_CACHE_SIZE = 1024
_BASELINES = BaselineCache(BASELINE_CACHE_SIZE)

BFCL_KIND = LoopKind("bfcl", BfclSession, load_source, _BASELINES)
"""The BFCL kind of session: the world session's arguments and record, BFCL beneath the loop."""
