"""Which kind of session runs a scenario, decided in one place: by the scenario's own type.

A batch's cells name their scenarios by source (a shipped name, a path, a family's draw, a
served scenario, a world's task). :func:`load_source` reads any of them, and :func:`kind_for`
takes the kind of session from what was read (``session_kind`` on the scenario's class), so a
batch that mixes simulated, served and world scenarios runs each one by its own kind, with no
configuration. The table :data:`KINDS` names every kind; each is imported only when a scenario
of it is run (AgentDojo is imported for a world task, never for a simulated one).

A new kind of session is a new row here, and a scenario class whose ``session_kind`` names it.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

from harness.errors import unknown_name
from harness.session import SessionKind
from harness.session.spec import Knobs

if TYPE_CHECKING:
    from harness.session.simulated import Solvability


def _simulated() -> SessionKind:
    from harness.session.simulated import SIMULATED

    return SIMULATED


def _served() -> SessionKind:
    from harness.proxy.session import SERVED

    return SERVED


def _world() -> SessionKind:
    from harness.worlds.session import WORLD_KIND

    return WORLD_KIND


def _bfcl() -> SessionKind:
    from harness.worlds.bfcl_session import BFCL_KIND

    return BFCL_KIND


KINDS: Mapping[str, Callable[[], SessionKind]] = {
    "simulated": _simulated,
    "served": _served,
    "world": _world,
    "bfcl": _bfcl,
}
"""Every kind of session, by the ``session_kind`` its scenarios carry; each imported when first run."""


def kind_for(scenario: Any) -> SessionKind:
    """The kind of session that runs ``scenario`` (a loaded scenario of any kind)."""
    name = getattr(scenario, "session_kind", None)
    if not isinstance(name, str) or name not in KINDS:
        raise unknown_name("kind of session", str(name), tuple(KINDS))
    return KINDS[name]()


def source_kind(source: str) -> str:
    """The kind of session a cell's scenario source (or a shipped name) runs as, read from the
    source alone, with nothing loaded: what ``harness run`` needs to know before a run (whether
    a real server is involved, whether sessions run in this process)."""
    from harness.scenarios.served import SERVED_PREFIX
    from harness.worlds import BFCL, SOURCE_PREFIX, is_world_name, is_world_source, world_of

    if source.startswith(SERVED_PREFIX):
        return "served"
    if is_world_source(source) or is_world_name(source):
        name = json.loads(source[len(SOURCE_PREFIX) :])["name"] if is_world_source(source) else source
        return "bfcl" if world_of(str(name)) == BFCL else "world"
    return "simulated"


def grid_kinds(scenarios: Iterable[str], sources: Iterable[tuple[str, str]]) -> frozenset[str]:
    """The kinds of session a grid's scenarios run as (:func:`source_kind` of each one's source)."""
    recorded = dict(sources)
    return frozenset(source_kind(recorded.get(name, name)) for name in scenarios)


def load_source(source: str, overrides: Knobs = ()) -> Any:
    """A cell's scenario from its source, its overrides applied; loaded once per process.

    A world's task goes to the world's loader (:mod:`harness.worlds.scenario`, which imports the
    world's package only then); every other source to :func:`harness.scenarios.family.load_source`
    (a family's draw, a served scenario, a shipped name, a path).
    """
    from harness.worlds import is_world_name, is_world_source

    if is_world_source(source) or is_world_name(source):
        from harness.worlds.scenario import load_source as load_world_source

        return load_world_source(source, overrides)
    from harness.scenarios.family import load_source as load_family_source

    return load_family_source(source, overrides)


def world_check(
    scenario: Any, seeds: Iterable[int], *, faults: bool = True, era: str = "handshake"
) -> Solvability:
    """:func:`harness.worlds.session.world_check` run by the session class of the world task's own
    kind (AgentDojo's or BFCL's)."""
    from harness.session.loop import LoopKind
    from harness.worlds.session import world_check as check

    kind = kind_for(scenario)
    assert isinstance(kind, LoopKind)
    return check(scenario, tuple(seeds), faults=faults, era=era, loop=kind.loop)
