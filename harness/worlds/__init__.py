"""Worlds nobody here wrote: third-party suites of tools, tasks and judges, served over the MCP core.

A world is a kind of scenario source, like a served scenario: its scenarios are named, listed
and run wherever a scenario is (``harness session``, ``run``, ``check``, ``view``), but their
tools, environments, tasks and judges are the world's. One world ships, AgentDojo
(:mod:`harness.worlds.agentdojo`, the only module that imports it, and only once a world
scenario is asked for), behind the optional extra ``[worlds]``: without it everything else works,
and naming a world scenario is one line, exit 2 (docs/worlds.md).

* :mod:`harness.worlds.scenario`: names (``agentdojo/<suite>/<task>``), the scenario a task
  becomes, our fault profile on its tools, the batch loader;
* :mod:`harness.worlds.session`: one session, judged by the task's own utility;
* :func:`world_options`: a batch's session, baseline and loader when its grid has a world scenario.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Protocol, TypeVar


class _Options(Protocol):
    """What :func:`world_options` reads of a batch's ``SessionOptions`` (a layer above this one)."""

    @property
    def scenario_sources(self) -> tuple[tuple[str, str], ...]: ...


_O = TypeVar("_O", bound=_Options)

__all__ = [
    "BASELINE_FN",
    "LOADER",
    "SESSION_FN",
    "SOURCE_PREFIX",
    "WORLD",
    "is_world_name",
    "is_world_source",
    "world_options",
]

WORLD = "agentdojo"
"""The shipped world (the first part of its scenarios' names)."""

SOURCE_PREFIX = "world:"
"""How a batch's ``scenario_sources`` mark a world scenario (:func:`harness.worlds.scenario.world_source`)."""

SESSION_FN = "harness.worlds.session:run_world_session"
"""``SessionOptions.session_fn`` of a run with world scenarios (any other scenario passes through)."""
BASELINE_FN = "harness.worlds.session:run_world_baseline"
LOADER = "harness.worlds.scenario:load_source"


def is_world_name(spec: str) -> bool:
    """Whether a scenario name names world scenarios (``agentdojo``, ``agentdojo/<suite>[/<task>]``);
    says nothing about whether they exist (that needs AgentDojo installed)."""
    return spec == WORLD or spec.startswith(WORLD + "/")


def is_world_source(source: str) -> bool:
    """Whether a batch's scenario source is a world scenario's."""
    return source.startswith(SOURCE_PREFIX)


def world_options(options: _O) -> _O:
    """A batch's ``SessionOptions`` with the world session, baseline and loader when one of its
    scenario sources is a world's; else as given (no world module is imported then)."""
    if not any(is_world_source(source) for _, source in options.scenario_sources):
        return options
    changes: dict[str, Any] = {"session_fn": SESSION_FN, "baseline_fn": BASELINE_FN, "loader": LOADER}
    replaced: _O = dataclasses.replace(options, **changes)  # type: ignore[type-var]
    return replaced
