"""What one session is, whatever serves its tools: its frozen spec and the face of a session kind.

A session is named by a :class:`SessionSpec` (scenario, agent, strategy, seed, codec, host, era,
the agent's knobs), counts into a :class:`Tally` (its fields are the row's columns), and is run
by a :class:`SessionKind`: the simulated catalogue (:data:`harness.sim.session.SIMULATED`), a real
server behind the proxy (:data:`harness.proxy.session.SERVED`) or a third-party world
(:data:`harness.worlds.session.WORLD_KIND`).
Which kind runs a scenario is decided in one place, :func:`harness.batch.kinds.kind_for`, by the
scenario's own type (its ``session_kind``), so that a batch may mix them.
"""

from harness.session.spec import Loader, SessionKind, SessionSpec
from harness.session.tally import Tally

__all__ = ["Loader", "SessionKind", "SessionSpec", "Tally"]
