"""What one session is: a scenario's tools and faults, an agent, a host, and the loop between them.

Data flow of one session, bottom to top: the catalogue's tools (:mod:`.catalogue`) wrapped
by fault rules (:mod:`.faults`), served by the protocol core, read through the host model
(:mod:`.host`) by an agent that speaks the vocabulary of :mod:`.agent`; :mod:`.session`
runs the loop and returns one row, whose columns :mod:`.row` defines; :mod:`.outcome` holds
the end-state checks that decide a subgoal and judge what a write stored. Scenario files are
:mod:`.scenario`; agents are found by :mod:`.registry`; seeds come from :mod:`.seeding`;
traces from :mod:`.trace`.

This layer imports the protocol core and nothing above it (no transport, no batch).
"""

from harness.sim.agent import (
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
from harness.sim.catalogue import CATALOGUE
from harness.sim.faults import FAULT_KIND_TABLE, FAULT_KINDS, FaultKind
from harness.sim.host import HOSTS
from harness.sim.registry import AGENT_GROUP, agent_class, list_agents, make_agent
from harness.sim.row import COLUMNS, KEY_COLUMNS, ROW_COLUMNS, Column, SessionResult, summary_row
from harness.sim.scenario import Scenario, ScenarioError, list_scenarios, load_scenario, parse_scenario
from harness.sim.seeding import derive_seed, np_random
from harness.sim.session import run_session

__all__ = [
    "AGENT_GROUP",
    "CATALOGUE",
    "COLUMNS",
    "FAULT_KINDS",
    "FAULT_KIND_TABLE",
    "HOSTS",
    "KEY_COLUMNS",
    "ROW_COLUMNS",
    "Action",
    "Agent",
    "CallTool",
    "Column",
    "FaultKind",
    "Finish",
    "GiveUp",
    "ListTools",
    "Observation",
    "RPCErrorObservation",
    "Scenario",
    "ScenarioError",
    "SessionResult",
    "Start",
    "ToolResult",
    "ToolsListed",
    "Wait",
    "Waited",
    "agent_class",
    "derive_seed",
    "list_agents",
    "list_scenarios",
    "load_scenario",
    "make_agent",
    "np_random",
    "parse_scenario",
    "run_session",
    "summary_row",
]
