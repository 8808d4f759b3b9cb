"""A session's spec, frozen, and what every kind of session offers (:class:`SessionKind`).

One session's parameters travel as one value, not as a list of positional arguments repeated
at every layer: the batch builds a :class:`SessionSpec` from its cell, and a kind runs it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import IO, Any, Protocol

Knobs = tuple[tuple[str, Any], ...]
"""An agent's knobs, or a scenario's overrides, as sorted ``(name, value)`` pairs: hashable."""


@dataclass(frozen=True)
class SessionSpec:
    """Everything that names one session: the same spec gives the same trace, byte for byte.

    ``scenario`` is a loaded scenario (of any kind) or a source a loader reads (a shipped name, a
    path, a source a batch recorded); ``agent`` the registry's spec of the agent, which names the
    row; ``agent_params`` its knobs (:meth:`harness.session.agent.Agent.configure`).
    """

    scenario: Any
    agent: str
    strategy: str
    seed: int
    codec: str = "json"
    host: str = "typical"
    era: str = "handshake"
    agent_params: Knobs = ()

    @staticmethod
    def knobs(params: Mapping[str, Any] | None) -> Knobs:
        """``params`` as the spec holds them (sorted pairs; none for None)."""
        return tuple(sorted((params or {}).items()))

    @property
    def params(self) -> dict[str, Any] | None:
        """The agent's knobs as a mapping, None when there are none (as sessions take them)."""
        return dict(self.agent_params) if self.agent_params else None


class Loader(Protocol):
    """Reads a scenario source (with the cell's overrides) into a scenario."""

    def __call__(self, source: str, overrides: Knobs, /) -> Any: ...


class SessionKind(Protocol):
    """One kind of session: how it runs a spec, and its fault-free baseline.

    ``run`` returns the session's record (its ``to_row()`` is the row); ``baseline`` is the
    precomputed fault-free baseline (a batch runs it once per key for agents that call a
    model), or None to have the kind find or run it. Anything that breaks inside a session is
    a ``harness_error`` record, never an exception; unknown names raise ``UserError`` first.
    """

    @property
    def name(self) -> str: ...

    def run(self, spec: SessionSpec, trace: IO[bytes] | None = None, baseline: Any = None) -> Any: ...

    def baseline(self, spec: SessionSpec) -> Any: ...
