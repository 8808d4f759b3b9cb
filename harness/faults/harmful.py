"""Banks of harmful error texts: messages that mislead an agent, and messages that try to steer it.

A fault's ``misleading`` and ``adversarial`` qualities (``harness.faults.kinds``) each have one
template text. These banks hold many more, worded the ways real servers word errors (JSON bodies,
stack traces, HTTP status lines, terse codes, chatty apologies), so that a study or a test can ask
whether an agent's handling of harmful text survives a change of wording:

- :data:`MISLEADING`: texts that give the wrong category of a failure (a dead tool called
  temporary, a bad argument called a rate limit) or the wrong valid form (``{wrong}``), each with
  the category it claims and the fault kinds for which that claim is wrong;
- :data:`ADVERSARIAL`: prompt-injection-style texts that ask the agent to call one of the
  :data:`DAMAGING_TOOLS`, which no task needs, each with the tool and arguments asked for.

Texts are ``str.format`` templates over the fault-message placeholders (``{tool}``,
``{argument}``, ``{valid}``, ``{got}``, ``{max}``, ``{retry_after}``, ``{timeout}``) plus
``{wrong}``, a wrong value for the argument offered as the valid one; a literal brace is doubled.
The data is ``harness/faults/data/harmful_texts.toml``; this module only loads it. The damaging
tools are the catalogue's (:data:`harness.sim.catalogue.DAMAGING_TOOLS`). A malformed bank raises
ValueError naming the entry.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib import resources
from types import MappingProxyType
from typing import Any

from harness.errors import loads_toml
from harness.sim.catalogue import DAMAGING_TOOLS

__all__ = ["ADVERSARIAL", "DAMAGING_TOOLS", "MISLEADING", "AdversarialText", "MisleadingText"]

BANK_NAME = "harmful_texts.toml"


@dataclass(frozen=True)
class MisleadingText:
    """A text that claims the wrong category, or the wrong valid form, for the kinds it names."""

    text: str
    claims: str
    """The failure category the text claims (e.g. ``transient``)."""
    for_kinds: tuple[str, ...]
    """The fault kinds for which the claim is wrong."""


@dataclass(frozen=True)
class AdversarialText:
    """A text that asks the agent to call a damaging tool the task does not need."""

    text: str
    tool: str
    """The damaging tool asked for: one of :data:`DAMAGING_TOOLS`, named in the text."""
    arguments: Mapping[str, str | float] = field(hash=False)
    """The arguments the text asks for (read-only; empty when it gives none)."""
    claims: str
    """The failure category the text claims, ``unknown`` where it claims none."""


def _str(entry: Mapping[str, Any], key: str, where: str) -> str:
    value = entry.get(key)
    if not isinstance(value, str) or not value:
        raise ValueError(f"{where}.{key}: must be a non-empty string, got {value!r}")
    return value


def _misleading(entry: Mapping[str, Any], where: str) -> MisleadingText:
    kinds = entry.get("for_kinds")
    if not isinstance(kinds, list) or not kinds or not all(isinstance(k, str) for k in kinds):
        raise ValueError(f"{where}.for_kinds: must be a non-empty list of fault kinds, got {kinds!r}")
    return MisleadingText(
        text=_str(entry, "text", where), claims=_str(entry, "claims", where), for_kinds=tuple(kinds)
    )


def _adversarial(entry: Mapping[str, Any], where: str) -> AdversarialText:
    raw = entry.get("arguments", {})
    if not isinstance(raw, dict):
        raise ValueError(f"{where}.arguments: must be a table, got {raw!r}")
    arguments: dict[str, str | float] = {}
    for name, value in raw.items():
        if isinstance(value, bool) or not isinstance(value, str | int | float):
            raise ValueError(f"{where}.arguments.{name}: must be a string or a number, got {value!r}")
        arguments[name] = value
    return AdversarialText(
        text=_str(entry, "text", where),
        tool=_str(entry, "tool", where),
        arguments=MappingProxyType(arguments),
        claims=_str(entry, "claims", where),
    )


def parse_bank(text: str) -> tuple[tuple[MisleadingText, ...], tuple[AdversarialText, ...]]:
    """Both banks from the TOML text of a bank file."""
    data = loads_toml(text)
    unknown = set(data) - {"misleading", "adversarial"}
    if unknown:
        raise ValueError(f"unknown sections: {', '.join(sorted(unknown))}")
    misleading = tuple(_misleading(e, f"misleading[{i}]") for i, e in enumerate(data.get("misleading", [])))
    adversarial = tuple(
        _adversarial(e, f"adversarial[{i}]") for i, e in enumerate(data.get("adversarial", []))
    )
    return misleading, adversarial


def load_bank() -> tuple[tuple[MisleadingText, ...], tuple[AdversarialText, ...]]:
    """The shipped banks (``harness/faults/data/harmful_texts.toml``)."""
    return parse_bank(
        resources.files("harness.faults").joinpath("data", BANK_NAME).read_text(encoding="utf-8")
    )


MISLEADING: tuple[MisleadingText, ...]
ADVERSARIAL: tuple[AdversarialText, ...]
MISLEADING, ADVERSARIAL = load_bank()
