"""Scripted, deterministic agents behind the harness's agent interface (:mod:`harness.session.agent`).

The harness finds them through the ``harness.agents`` entry point group (``pyproject.toml``
registers all six), never by importing this package. ``AGENTS`` (name -> class) and
:func:`make` stay for code that builds one directly.
From weakest to strongest: ``naive``, ``retry``, ``reader``, ``refresher``,
``oracle`` (the upper bound: it knows the fault schedule); ``blind`` is the control, the
reader's moves without reading.
"""

from __future__ import annotations

from harness.errors import unknown_name
from harness.session.agent import Agent
from scripted_agents.base import ScriptedAgent
from scripted_agents.blind import BlindAgent
from scripted_agents.naive import NaiveAgent
from scripted_agents.oracle import OracleAgent
from scripted_agents.reader import ReaderAgent
from scripted_agents.refresher import RefresherAgent
from scripted_agents.retry import RetryAgent

AGENTS: dict[str, type[Agent]] = {
    cls.name: cls for cls in (NaiveAgent, RetryAgent, ReaderAgent, RefresherAgent, OracleAgent, BlindAgent)
}
"""Agent name -> class. Names are a public contract (results and CLI flags use them)."""


def list_agents() -> list[str]:
    """Registered agent names, sorted."""
    return sorted(AGENTS)


def make(name: str) -> Agent:
    """A fresh agent by registry name; an unknown name is a UserError suggesting near ones."""
    cls = AGENTS.get(name)
    if cls is None:
        raise unknown_name("agent", name, AGENTS)
    return cls()


__all__ = [
    "AGENTS",
    "Agent",
    "BlindAgent",
    "NaiveAgent",
    "OracleAgent",
    "ReaderAgent",
    "RefresherAgent",
    "RetryAgent",
    "ScriptedAgent",
    "list_agents",
    "make",
]
