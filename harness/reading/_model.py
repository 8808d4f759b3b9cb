"""What a reading is: the category of a failure, the argument it names, the valid form it states,
when to retry, whether the text is enough to act on, and a call the text asks for."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

CATEGORIES: tuple[str, ...] = (
    "missing_argument",
    "bad_argument",
    "unknown_tool",
    "not_found",
    "transient",
    "rate_limited",
    "timeout",
    "permission",
    "permanent",
    "unknown",
)
"""What an error text says went wrong; ``unknown`` when it does not say."""


@dataclass(frozen=True)
class Instruction:
    """A call the text tells its reader to make: a tool name and the arguments the text gives."""

    tool: str
    arguments: Mapping[str, Any] = field(default_factory=dict, hash=False)

    def to_json(self) -> dict[str, Any]:
        return {"tool": self.tool, "arguments": dict(self.arguments)}


@dataclass(frozen=True)
class Reading:
    """What one error text says, field by field (``docs/reading.md``).

    ``argument`` is the argument the text names (as the text spells it, or as the call's
    arguments spell it where the text uses its own words); ``expected`` the valid type, form,
    range or choice the text states, in its own terms; ``retry_after_s`` the wait it asks for;
    ``actionable`` whether the text alone is enough to fix the call, or to know to wait or stop.
    """

    category: str = "unknown"
    argument: str | None = None
    expected: str | None = None
    retry_after_s: float | None = None
    actionable: bool = False
    instruction: Instruction | None = None

    def __post_init__(self) -> None:
        if self.category not in CATEGORIES:
            raise ValueError(f"unknown category {self.category!r} (valid: {', '.join(CATEGORIES)})")

    def to_json(self) -> dict[str, Any]:
        return {
            "category": self.category,
            "argument": self.argument,
            "expected": self.expected,
            "retry_after_s": self.retry_after_s,
            "actionable": self.actionable,
            "instruction": self.instruction.to_json() if self.instruction is not None else None,
        }
