"""One session: a scripted agent pursues a scenario's task through a real MCP client.

The stack, bottom to top::

    catalogue tool  <- fault rules (harness.sim.faults) wrap it; failures raise
    MCPServer       <- tool_errors=strategy decides what a raising tool becomes
    InMemoryTransport (real serialization; its tap writes the JSONL trace)
    MCPClient       <- handshake, ids, pump_notifications
    Host            <- what reaches the model (harness.sim.host: typical | transparent)
    Agent           <- reset(task, tools, seed); act(observation) -> action

Each step is one action. Time is virtual (the session :class:`~harness.sim.faults.Clock`:
``step_cost_s`` per step, a ``Wait``'s seconds, ``call_timeout_s`` for a hung
call), so a session never sleeps and a step costs microseconds. Events from
the scenario act on the server directly between steps; their notifications
reach the agent on the next observation.

Seeds: the fault schedule and the agent's generator are derived from
(scenario, agent, seed) with sha256 — never from the strategy or host — so
every strategy meets the same schedule and a paired comparison is fair.

The result is one flat record (:mod:`harness.sim.row` defines its columns, the same
for every session, zero-filled). Ground truth, not the wire, decides ``success``: a
subgoal is done when one of its tools really ran (a silent or garbled answer
does not count), and the session succeeds when every subgoal is done and the
agent said it was finished. Under ``escape`` the server dies with the first
raising fault: the session ends ``wedged`` and the record is still complete.
"""

from __future__ import annotations

import json
import math
import time
from dataclasses import replace
from typing import IO, Any

from harness.errors import UserError, unknown_name
from harness.protocol.client import MCPClient
from harness.protocol.codecs import CODECS, get_codec
from harness.protocol.errors import ServerCrashed, TransportError
from harness.protocol.memory import InMemoryTransport
from harness.protocol.server import MCPServer
from harness.protocol.strategies import STRATEGIES
from harness.sim.agent import (
    Agent,
    CallTool,
    Finish,
    GiveUp,
    ListTools,
    Observation,
    RPCErrorObservation,
    Start,
    Wait,
    Waited,
)
from harness.sim.catalogue import CATALOGUE, World
from harness.sim.faults import FAULT_KIND_TABLE, FAULT_KINDS, CallOutcome, Clock, FaultEngine, InjectedFault
from harness.sim.host import HOSTS, Host
from harness.sim.registry import make_agent
from harness.sim.row import ENDS, ROW_COLUMNS, RPC_CODES, STATUSES, SessionResult, summary_row
from harness.sim.scenario import Event, Scenario, load_scenario
from harness.sim.seeding import derive_seed
from harness.sim.trace import Trace

__all__ = [
    "ENDS",
    "FAULT_KINDS",
    "ROW_COLUMNS",
    "RPC_CODES",
    "STATUSES",
    "SessionResult",
    "run_session",
    "summary_row",
]

_call_key = json.JSONEncoder(sort_keys=True, default=str).encode
"""A call's identity for ``repeated_failing_calls`` (one encoder; ``json.dumps`` builds one per call)."""


def run_session(
    scenario: Scenario | str,
    agent: Agent | str,
    strategy: str,
    seed: int,
    codec: str = "json",
    trace: IO[bytes] | None = None,
    *,
    host: str = "typical",
) -> SessionResult:
    """Run one session and return its record.

    ``scenario`` is a :class:`Scenario` or a shipped name / path; ``agent`` an
    :class:`Agent` or a registry name; ``trace`` a binary file the JSONL trace
    is written to (it is hashed either way). Unknown names raise UserError
    before anything runs; anything that breaks inside becomes a
    ``harness_error`` record rather than an exception.
    """
    started = time.perf_counter()
    sc = scenario if isinstance(scenario, Scenario) else load_scenario(scenario)
    ag = agent if isinstance(agent, Agent) else make_agent(agent)
    agent_name = agent if isinstance(agent, str) else ag.name  # the spec as given names the row
    if strategy not in STRATEGIES:
        raise unknown_name("strategy", strategy, STRATEGIES)
    if host not in HOSTS:
        raise unknown_name("host", host, HOSTS)
    if codec not in CODECS:
        raise unknown_name("codec", codec, CODECS)
    try:
        get_codec(codec)
    except ImportError as exc:
        raise UserError(f"codec {codec!r} is not installed here: {exc}") from None
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise UserError(f"seed must be a non-negative integer, got {seed!r}")
    run = _Session(sc, ag, agent_name, strategy, seed, codec, host, Trace(trace))
    try:
        run.run()
    except UserError:
        raise
    except Exception as exc:
        run.status, run.end, run.error = "harness_error", "error", f"{type(exc).__name__}: {exc}"
    return run.result(time.perf_counter() - started)


class _Session:
    """The mutable state of one running session (private; the record is the interface)."""

    def __init__(
        self,
        sc: Scenario,
        agent: Agent,
        agent_name: str,
        strategy: str,
        seed: int,
        codec: str,
        host: str,
        trace: Trace,
    ) -> None:
        self.agent_name = agent_name
        self.sc, self.agent, self.strategy, self.seed, self.codec, self.host_mode = (
            sc,
            agent,
            strategy,
            seed,
            codec,
            host,
        )
        self.trace = trace
        self.clock = Clock()
        self.world = World()
        self.engine = FaultEngine(
            sc.faults,
            derive_seed("faults", sc.name, agent_name, seed),
            sc.max_steps + 1,
            self.clock,
            self.world,
            sc.call_timeout_s,
        )
        self.engine.listener = self._on_fault
        universe = sc.allowed if sc.allowed is not None else sc.all_tools
        self.universe: tuple[str, ...] = universe
        self.server = MCPServer("harness-scenario", "0.1.0", allowed_tools=universe, tool_errors=strategy)
        self.variants: dict[str, str | None] = {}
        for name in sc.tools:
            self._register(name, None, notify=False)
        self.client = MCPClient(
            InMemoryTransport(self.server, codec, tap=trace.wire), protocol_version=sc.protocol
        )
        self.host = Host(self.client, host)
        n = len(sc.task.subgoals)
        self.subgoal_tools: tuple[tuple[str, ...], ...] = tuple(sg.tools for sg in sc.task.subgoals)
        self.done_at: list[int | None] = [None] * n
        self.first_fault_at: list[int | None] = [None] * n
        self.pending: list[Event] = list(sc.events)
        self.changed: dict[str, str] = {}
        self.revoked: set[str] = set()
        self.failed_calls: set[tuple[str, str]] = set()
        self.steps = self.tool_calls = 0
        self.faults = dict.fromkeys(FAULT_KINDS, 0)
        self.explicit = self.implicit = 0
        self.is_error = 0
        self.rpc = dict.fromkeys(RPC_CODES, 0)
        self.rpc_other = self.transport_errors = 0
        self.repeated = self.give_ups = self.correct_give_ups = self.stale = 0
        self.status, self.end, self.error = "ok", "budget", ""
        self.finished = False

    # -- the server side --------------------------------------------------------------------

    def _register(self, name: str, variant: str | None, notify: bool) -> None:
        spec = CATALOGUE[name]
        execute = self.engine.execute

        if variant is None:  # base names already: to_base would return the arguments as they are

            def call(**arguments: Any) -> Any:
                return execute(spec, arguments)

        else:

            def call(**arguments: Any) -> Any:
                return execute(spec, spec.to_base(arguments, variant))

        self.server.add_tool(
            name,
            call,
            spec.schema_for(variant),
            spec.description_for(variant),
            notify,
            annotations=spec.annotations,
        )
        self.variants[name] = variant

    def _apply(self, ev: Event) -> None:
        self.trace.note(self.steps, event=ev.to_json())
        if ev.kind == "add_tool":
            self._register(ev.tool, None, ev.notify)
        elif ev.kind == "change_schema":
            self._register(ev.tool, ev.variant, ev.notify)
            self.changed[ev.tool] = ev.kind
        elif ev.kind == "remove_tool":
            self.server.remove_tool(ev.tool, notify=ev.notify)
            self.changed[ev.tool] = ev.kind
        else:
            self.revoked.add(ev.tool)
            self.server.set_allowed_tools(
                [t for t in self.universe if t not in self.revoked], notify=ev.notify
            )
            self.changed[ev.tool] = ev.kind

    def _due_events(self) -> None:
        if not self.pending:
            return
        for ev in list(self.pending):
            if (ev.at_step is not None and self.steps >= ev.at_step) or (
                ev.at_call is not None and self.tool_calls >= ev.at_call
            ):
                self.pending.remove(ev)
                self._apply(ev)

    def callable_now(self, tool: str) -> bool:
        allowed = self.server.allowed_tools
        return tool in self.server.tools and (allowed is None or tool in allowed)

    # -- ground truth ------------------------------------------------------------------------

    def _subgoal_for(self, tool: str) -> int | None:
        done_at = self.done_at
        for i, tools in enumerate(self.subgoal_tools):
            if done_at[i] is None and tool in tools:
                return i
        return None

    def _open_subgoal(self) -> int | None:
        return next((i for i, d in enumerate(self.done_at) if d is None), None)

    def _on_fault(self, fault: InjectedFault) -> None:
        self.faults[fault.kind] += 1
        if fault.explicit:
            self.explicit += 1
        else:
            self.implicit += 1
        i = self._subgoal_for(fault.tool)
        i = self._open_subgoal() if i is None else i
        if i is not None and self.first_fault_at[i] is None:
            self.first_fault_at[i] = self.steps
        self.trace.note(self.steps, fault=fault.to_json(), clock=self.clock.now)

    def _is_stale(self, tool: str, arguments: dict[str, Any]) -> bool:
        change = self.changed.get(tool)
        if change == "remove_tool":
            return tool not in self.server.tools
        if change == "revoke":
            return tool in self.revoked
        if change == "change_schema":
            return self.server.tools[tool].argument_problem(arguments) is not None
        return False

    def _dead(self, tool: str) -> bool:
        return self.engine.is_dead(tool) or not self.callable_now(tool)

    # -- the loop -------------------------------------------------------------------------------

    def run(self) -> None:
        try:
            self.client.initialize()
            tools = self.client.list_tools()
            self.agent.reset(
                self.sc.task, tools, derive_seed("agent", self.sc.name, self.agent_name, self.seed)
            )
            bind = getattr(self.agent, "bind", None)
            if self.agent.omniscient and callable(bind):
                bind(_OracleView(self))
            obs: Observation = Start()
            act, clock, engine, pump = self.agent.act, self.clock, self.engine, self.client.pump_notifications
            max_steps, step_cost_s = self.sc.max_steps, self.sc.step_cost_s
            while self.steps < max_steps:
                action = act(obs)
                self.steps += 1
                clock.now += step_cost_s  # Clock.advance, inlined: this runs every step
                engine.step = self.steps
                if type(action) is CallTool:  # the common case first (the action types are disjoint)
                    obs = self._call(action.tool, dict(action.arguments))
                elif isinstance(action, Finish):
                    self.trace.note(self.steps, action="finish")
                    self.finished, self.end = True, "finished"
                    return
                elif isinstance(action, GiveUp):
                    self._give_up(action)
                    return
                else:
                    obs = self._execute(action)
                self._due_events()
                notes = pump()
                if notes:
                    obs = _with_notifications(obs, tuple(str(n.get("method")) for n in notes))
            self.end = "budget"
        except (ServerCrashed, TransportError) as exc:
            self.transport_errors += 1
            self.status, self.end = "wedged", "wedged"
            self.trace.note(self.steps, crash=str(exc))
        finally:
            self.trace.note(
                self.steps,
                end=self.end,
                status=self.status,
                subgoals_done=len(self.done_at) - self.done_at.count(None),
            )

    def _give_up(self, action: GiveUp) -> None:
        self.give_ups += 1
        self.end = "gave_up"
        i = self._open_subgoal()
        if i is not None and all(self._dead(t) for t in self.sc.task.subgoals[i].tools):
            self.correct_give_ups += 1
        self.trace.note(self.steps, action="give_up", reason=action.reason)

    def _execute(self, action: CallTool | ListTools | Wait) -> Observation:
        if isinstance(action, Wait):
            seconds = max(float(action.seconds), 0.0)
            self.clock.advance(seconds)
            self.trace.note(self.steps, action="wait", seconds=seconds, clock=self.clock.now)
            return Waited(seconds, self.clock.now)
        if isinstance(action, ListTools):
            listed = self.host.list_tools()
            if isinstance(listed, RPCErrorObservation):
                self._count_rpc(listed)
            return listed
        return self._call(action.tool, dict(action.arguments))

    def _call(self, tool: str, arguments: dict[str, Any]) -> Observation:
        self.tool_calls += 1
        failed = self.failed_calls
        # The key is only needed once some call has failed; nothing below changes ``arguments``
        # (the wire carries a copy), so building it late gives the same key.
        key = (tool, _call_key(arguments)) if failed else None
        if key is not None and key in failed:
            self.repeated += 1
        if self.changed and self._is_stale(tool, arguments):
            self.stale += 1
        engine = self.engine
        engine.last = None
        obs = self.host.call(tool, arguments)
        outcome: CallOutcome | None = engine.last
        if isinstance(obs, RPCErrorObservation):
            self._count_rpc(obs)
            failed.add(key or (tool, _call_key(arguments)))
        elif obs.is_error:
            self.is_error += 1
            failed.add(key or (tool, _call_key(arguments)))
        elif outcome is not None and outcome.executed:
            i = self._subgoal_for(tool)
            if i is not None:
                self.done_at[i] = self.steps
        return obs

    def _count_rpc(self, obs: RPCErrorObservation) -> None:
        if obs.code in self.rpc:
            self.rpc[obs.code] += 1
        else:
            self.rpc_other += 1
        self.trace.note(self.steps, host={"code": obs.code, "message": obs.message})

    # -- the record -------------------------------------------------------------------------------

    def result(self, wall: float) -> SessionResult:
        recover = tuple(
            int(d - f)
            for d, f in zip(self.done_at, self.first_fault_at, strict=True)
            if d is not None and f is not None
        )
        opportunities = len(self.first_fault_at) - self.first_fault_at.count(None)
        done = len(self.done_at) - self.done_at.count(None)
        total = len(self.done_at)
        return SessionResult(
            scenario=self.sc.name,
            agent=self.agent_name,
            strategy=self.strategy,
            host=self.host_mode,
            codec=self.codec,
            seed=self.seed,
            status=self.status,
            end=self.end,
            success=self.status == "ok" and self.finished and done == total,
            subgoals_done=done,
            subgoals_total=total,
            steps=self.steps,
            tool_calls=self.tool_calls,
            faults=dict(self.faults),
            faults_explicit=self.explicit,
            faults_implicit=self.implicit,
            errors_is_error=self.is_error,
            errors_rpc=dict(self.rpc),
            errors_rpc_other=self.rpc_other,
            errors_transport=self.transport_errors,
            recoveries=len(recover),
            recovery_opportunities=opportunities,
            recover_steps=recover,
            steps_to_recover_mean=sum(recover) / len(recover) if recover else math.nan,
            repeated_failing_calls=self.repeated,
            give_ups=self.give_ups,
            correct_give_ups=self.correct_give_ups,
            stale_tool_calls=self.stale,
            list_changed_seen=self.client.list_changes_seen,
            virtual_time_s=self.clock.now,
            wall_time_s=wall,
            trace_hash=self.trace.hexdigest(),
            fault_schedule_hash=self.engine.schedule_hash(),
            error=self.error,
        )


def _with_notifications(obs: Observation, methods: tuple[str, ...]) -> Observation:
    return replace(obs, notifications=obs.notifications + methods)


class _OracleView:
    """The ground truth the oracle is allowed to see (the oracle agent reads it through ``bind``)."""

    def __init__(self, session: _Session) -> None:
        self._s = session
        self.step_cost_s = session.sc.step_cost_s

    def callable_now(self, tool: str) -> bool:
        return self._s.callable_now(tool)

    def schema(self, tool: str) -> dict[str, Any]:
        return dict(self._s.server.tools[tool].input_schema)

    def fixes(self, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        spec = CATALOGUE[tool]
        out = dict(arguments)
        for rule in self._s.sc.faults:
            avoid = FAULT_KIND_TABLE[rule.kind].avoid
            if rule.tool == tool and avoid is not None:
                avoid(rule, spec, out)
        return out

    def peek(self, tool: str, arguments: dict[str, Any]) -> str | None:
        spec = CATALOGUE[tool]
        return self._s.engine.peek(spec, spec.to_base(arguments, self._s.variants.get(tool)))

    def blocked_for(self, tool: str) -> float:
        return self._s.engine.blocked_for(tool)

    def last_outcome(self) -> CallOutcome | None:
        return self._s.engine.last

    def will_appear(self, tool: str) -> bool:
        return any(e.tool == tool and e.kind == "add_tool" and e.at_step is not None for e in self._s.pending)
