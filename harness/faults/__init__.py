"""Faults: what makes a tool call fail, and what the failure says.

One row of :data:`FAULT_KIND_TABLE` per kind (:mod:`.kinds`, with the engine that plays a
session's rules on its calls); where a failure's text comes from, real stacks' own wording or
our templates (:mod:`.sources`); the misleading and adversarial texts (:mod:`.harmful`, loaded
on first use); and how a stale, wrong-unit or partial answer is made (:mod:`.numbers`). The
in-process sessions and the proxy in front of a real server share all four, so a kind means
the same thing on both paths.

This layer sits on the simulated catalogue (:mod:`harness.sim`) and the protocol core, and
knows nothing of scenarios' files or of sessions.
"""

from harness.faults.kinds import (
    DEFAULT_EXPLICIT,
    FAULT_KIND_TABLE,
    FAULT_KINDS,
    QUALITY_TEXTS,
    RAISING_KINDS,
    CallOutcome,
    Clock,
    FaultEngine,
    FaultKind,
    FaultRule,
    InjectedFault,
    ToolFault,
)
from harness.faults.numbers import IDENTIFIERS, cut, map_numbers, older, other_unit
from harness.faults.sources import SOURCE_NAMES, SOURCES, TEMPLATE, Source

__all__ = [
    "DEFAULT_EXPLICIT",
    "FAULT_KINDS",
    "FAULT_KIND_TABLE",
    "IDENTIFIERS",
    "QUALITY_TEXTS",
    "RAISING_KINDS",
    "SOURCES",
    "SOURCE_NAMES",
    "TEMPLATE",
    "CallOutcome",
    "Clock",
    "FaultEngine",
    "FaultKind",
    "FaultRule",
    "InjectedFault",
    "Source",
    "ToolFault",
    "cut",
    "map_numbers",
    "older",
    "other_unit",
]
