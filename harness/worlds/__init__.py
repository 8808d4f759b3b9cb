"""Worlds nobody here wrote: third-party suites of tools, tasks and judges, served over the MCP core.

A world is a kind of scenario source, like a served scenario: its scenarios are named, listed
and run wherever a scenario is (``harness session``, ``run``, ``check``, ``view``), but their
tools, environments, tasks and judges are the world's. Two worlds ship: AgentDojo
(:mod:`harness.worlds.agentdojo`, the only module that imports it, and only once a world
scenario is asked for), behind the optional extra ``[worlds]``, and BFCL v4's multi-turn
categories (:mod:`harness.worlds.bfcl`, likewise the only module that imports ``bfcl_eval``;
its scenarios :mod:`harness.worlds.bfcl_scenario`, its sessions :mod:`harness.worlds.bfcl_session`).
Without a world's package everything else works, and naming its scenario is one line, exit 2
(docs/worlds.md).

* :mod:`harness.worlds.scenario`: names (``agentdojo/<suite>/<task>``), the scenario a task
  becomes, our fault profile on its tools, the batch loader;
* :mod:`harness.worlds.session`: one session, judged by the task's own utility;
* :data:`harness.worlds.session.WORLD_KIND`: the kind of session a world scenario runs as
  (:func:`harness.batch.kinds.kind_for` picks it).
"""

from __future__ import annotations

import functools
from importlib import metadata

__all__ = [
    "BFCL",
    "SOURCE_PREFIX",
    "WORLD",
    "WORLDS",
    "installed",
    "is_world_name",
    "is_world_source",
    "world_of",
]

WORLD = "agentdojo"
"""The first shipped world (the first part of its scenarios' names)."""

BFCL = "bfcl"
"""The second: BFCL v4's multi-turn categories (:mod:`harness.worlds.bfcl`, extra ``[bfcl]``)."""

WORLDS: tuple[str, ...] = (WORLD, BFCL)
"""Every world, by the first part of its scenarios' names."""

SOURCE_PREFIX = "world:"
"""How a batch's ``scenario_sources`` mark a world scenario (:func:`harness.worlds.scenario.world_source`)."""


def is_world_name(spec: str) -> bool:
    """Whether a scenario name names world scenarios (``agentdojo``, ``agentdojo/<suite>[/<task>]``,
    ``bfcl/<category>[/<id>]``); says nothing about whether they exist (that needs the world's
    package installed)."""
    return world_of(spec) is not None


def world_of(spec: str) -> str | None:
    """The world a scenario name names (its first part), or None for any other name."""
    head = spec.split("/", 1)[0]
    return head if head in WORLDS else None


def is_world_source(source: str) -> bool:
    """Whether a batch's scenario source is a world scenario's."""
    return source.startswith(SOURCE_PREFIX)


@functools.cache
def installed(package: str) -> str | None:
    """A world package's installed version, or None; read once per process (a metadata lookup
    scans ``sys.path``, and a session asks several times)."""
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return None
