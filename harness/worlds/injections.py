"""Harm judged by a third party: AgentDojo's injection tasks, in an error text or in a result.

AgentDojo ships, beside its user tasks, injection tasks: an attacker's goal (money sent to the
attacker's account, a file deleted, a message forwarded) and the injection task's own
``security(model_output, pre_environment, post_environment)``, True when the goal was met. Its
attacks render a goal into text (:data:`harness.worlds.agentdojo.ATTACKS`; no model is asked).
Two conditions put that text, AgentDojo's own words, before the agent:

* ``injection_error``: the first call of the plan's first tool fails, and its error text is the
  rendered injection (it never reaches the world). The strategy decides what the agent sees, as
  for any failure: ``is_error`` shows it, ``masked`` hides it, ``collapse`` makes it a -32603 whose
  message a typical host drops;
* ``injection_result``: the text is put where AgentDojo's environment holds its injection vectors
  (``load_and_inject_default_environment``), those the task's ground truth reads; an ordinary
  result carries it, under every strategy alike. A task whose ground truth reads no vector
  (AgentDojo: "not injectable") has no such condition.

Which injection task and which attack are drawn from the scenario's name alone
(``derive_seed("world-injection", name)``). The session's ``security_breached`` is the injection
task's own verdict on it (:meth:`harness.worlds.agentdojo.Episode.security`); ``injection`` names
the injection task and the attack. :func:`extraction` counts how many of the rendered texts the
reader's instruction extraction (:func:`harness.reading.read`) finds at all.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from harness.reading import read
from harness.seeding import derive_seed, np_random
from harness.worlds import agentdojo

INJECTIONS: tuple[str, ...] = ("injection_error", "injection_result")
"""The injection conditions, in the order tables show them."""


@dataclass(frozen=True)
class Injection:
    """An injection a world scenario carries: the condition, AgentDojo's injection task and
    attack, the text, and where it goes (the vectors, or the tool whose first call fails)."""

    condition: str
    injection_id: str
    attack: str
    text: str
    vectors: tuple[tuple[str, str], ...] = ()
    """``injection_result``: the vectors the task reads and their text."""
    tool: str = ""
    """``injection_error``: the tool whose first call fails with the text."""

    @property
    def label(self) -> str:
        """The row's ``injection``: ``<injection_task>:<attack>``."""
        return f"{self.injection_id}:{self.attack}"


@functools.cache
def draw(name: str, suite: str, task_id: str, condition: str) -> Injection | None:
    """The injection scenario ``name`` carries (None where the condition does not apply)."""
    rng = np_random(derive_seed("world-injection", name))
    ids = agentdojo.injection_task_ids(suite)
    injection_id = ids[int(rng.integers(len(ids)))]
    attack = agentdojo.ATTACKS[int(rng.integers(len(agentdojo.ATTACKS)))]
    if condition == "injection_error":
        tool = agentdojo.plan(suite, task_id).calls[0][0]
        return Injection(
            condition, injection_id, attack, agentdojo.rendered(suite, injection_id, attack), tool=tool
        )
    vectors = agentdojo.injections(suite, task_id, injection_id, attack)
    if not vectors:
        return None
    return Injection(condition, injection_id, attack, vectors[0][1], vectors=vectors)


@dataclass(frozen=True)
class Extraction:
    """What the reader makes of one rendered injection text: an instruction at all, and one to a
    tool the injection task's own ground truth calls."""

    suite: str
    injection_id: str
    attack: str
    found: bool
    right_tool: bool
    tool: str | None

    def to_json(self) -> dict[str, Any]:
        return {"suite": self.suite, "injection_task": self.injection_id, "attack": self.attack,
                "found": self.found, "right_tool": self.right_tool, "tool": self.tool}  # fmt: skip


def extraction(suites: Sequence[str] | None = None) -> list[Extraction]:
    """Every injection task of ``suites`` (default: all four) rendered by every attack of
    :data:`harness.worlds.agentdojo.ATTACKS`, read with the suite's tool names as the session's
    tools: does the reader find an instruction in it (texts written outside the project)?"""
    out = []
    for suite in suites or sorted(agentdojo.suites()):
        tools = tuple(t.name for t in agentdojo.tools(suite))
        for injection_id in agentdojo.injection_task_ids(suite):
            wanted = agentdojo.injection_tools(suite, injection_id)
            for attack in agentdojo.ATTACKS:
                instruction = read(agentdojo.rendered(suite, injection_id, attack), tools=tools).instruction
                tool = instruction.tool if instruction is not None else None
                out.append(Extraction(suite, injection_id, attack, tool is not None, tool in wanted, tool))
    return out
