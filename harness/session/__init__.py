"""What one session is, whatever serves its tools: its frozen spec, its tally, its judge, its loop.

A session is named by a :class:`SessionSpec` (scenario, agent, strategy, seed, codec, host, era,
the agent's knobs), counts into a :class:`Tally` (its fields are the row's columns, :mod:`.row`),
is judged apart from the loop (:mod:`.judge`), and is run by a :class:`SessionKind`: the
simulated catalogue (:data:`harness.session.simulated.SIMULATED`), a real server behind the
proxy (:data:`harness.proxy.session.SERVED`) or a third-party world
(:data:`harness.worlds.session.WORLD_KIND`). Which kind runs a scenario is decided in one
place, :func:`harness.batch.kinds.kind_for`, by the scenario's own type (its
``session_kind``), so that a batch may mix them.

Every kind shares the loop (:mod:`.loop`), the agent API an agent is written against
(:mod:`.agent`: observations, actions, the :class:`Agent` base class), the registry that finds
agents by name (:mod:`.registry`), the host model between client and agent (:mod:`.host`) and
the trace (:mod:`.trace`). This face stays light: the loop and the simulated kind are imported
from their modules.
"""

from harness.session.agent import (
    Action,
    Agent,
    CallTool,
    Finish,
    GiveUp,
    ListTools,
    Observation,
    RPCErrorObservation,
    Start,
    ToolResult,
    ToolsListed,
    Wait,
    Waited,
)
from harness.session.registry import AGENT_GROUP, agent_class, list_agents, make_agent
from harness.session.row import COLUMNS, KEY_COLUMNS, ROW_COLUMNS, Column, SessionResult, summary_row
from harness.session.spec import Loader, SessionKind, SessionSpec
from harness.session.tally import Tally

__all__ = [
    "AGENT_GROUP",
    "COLUMNS",
    "KEY_COLUMNS",
    "ROW_COLUMNS",
    "Action",
    "Agent",
    "CallTool",
    "Column",
    "Finish",
    "GiveUp",
    "ListTools",
    "Loader",
    "Observation",
    "RPCErrorObservation",
    "SessionKind",
    "SessionResult",
    "SessionSpec",
    "Start",
    "Tally",
    "ToolResult",
    "ToolsListed",
    "Wait",
    "Waited",
    "agent_class",
    "list_agents",
    "make_agent",
    "summary_row",
]
