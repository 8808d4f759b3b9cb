"""The simulated catalogue: the tools a simulated session serves, and the world they read and write.

Each :class:`CatalogueTool` is a deterministic function of its arguments and the session's
:class:`World` (a seeded store), with a lookalike (``fake``) for answers a fault makes up.
Nothing here knows about faults, scenarios or sessions: :mod:`harness.faults` wraps these
tools, :mod:`harness.scenarios` names them in files, and :mod:`harness.session.simulated` runs a
session over them.

The modules that lived here before the session layer was split (``harness.sim.agent``,
``harness.sim.scenario``, ``harness.sim.session``) are kept as aliases of their new homes
for agents written against them; they warn, and go in 0.2.
"""

from harness.sim.catalogue import CATALOGUE, DAMAGING_TOOLS, CatalogueTool, Variant, World

__all__ = ["CATALOGUE", "DAMAGING_TOOLS", "CatalogueTool", "Variant", "World"]
