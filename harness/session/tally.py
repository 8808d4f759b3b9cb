"""What a session counts as it runs, under the names of the row's columns.

The loop adds to one :class:`Tally` and the row takes it as it is (:meth:`Tally.columns`): a count
has one name, from the step it is counted at to the table it is read in. ``tests/session``
holds that every field is a column of the row, of the row's type.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any


@dataclass
class Tally:
    """A session's counts; each field is the row column of the same name (see harness.session.row)."""

    steps: int = 0
    tool_calls: int = 0
    faults: dict[str, int] = field(default_factory=dict)
    faults_explicit: int = 0
    faults_implicit: int = 0
    errors_is_error: int = 0
    errors_rpc: dict[int, int] = field(default_factory=dict)
    errors_rpc_other: int = 0
    errors_transport: int = 0
    repeated_failing_calls: int = 0
    give_ups: int = 0
    correct_give_ups: int = 0
    stale_tool_calls: int = 0
    harmful_calls: int = 0
    misled: int = 0
    messages_seen: int = 0
    order_violations: int = 0

    def columns(self) -> dict[str, Any]:
        """The counts as row columns (the mappings copied, so that the row is the session's own)."""
        return {f.name: _copied(getattr(self, f.name)) for f in dataclasses.fields(self)}


def _copied(value: Any) -> Any:
    return dict(value) if isinstance(value, dict) else value
