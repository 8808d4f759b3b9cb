"""One session against a real MCP server: the harness's agents, through the proxy, judged by reads.

The stack of one served session, bottom to top::

    the real server   started fresh, in a new working directory (``{workdir}`` in its command)
    StdioUpstream     its stdin and stdout (its stderr is dropped)
    ProxyCore         the session's strategy and the scenario's [[faults]] and [[events]],
                      the schedule seeded by (scenario, seed) as a simulated session's is
    ProxyTransport    the core in this thread (harness.proxy.inproc), on the session's clock
    MCPClient, Host, Agent   as in a simulated session (harness.sim)

The agents, observations and host are the simulation's; so are the step budget, the virtual
clock (a step's cost, a Wait, a hung call), the deadline, the seeds and the row
(:class:`~harness.sim.row.SessionResult`, every column, with ``server`` naming the server). What
differs is how the end state is known. The server is not the harness's to look into, so:

* a subgoal with a ``verify`` (:class:`~harness.sim.served.Check`) is done when the harness's
  own read, made after the session against the same server (straight to it, past the proxy:
  no fault, no strategy), shows what the check asks; a server that died is started again in the
  same directory for those reads, which then see what it left on disk;
* a subgoal without one is done by a call of one of its options that reached the server and
  succeeded with arguments that satisfy the option (each argument the option names is equal,
  or within its ``tolerance``; an argument it does not name counts only against a ``default``
  the tool's schema declares), in the task's order, and answered the agent as a success (not
  garbled by a ``malformed`` fault); the value it reported for it is held to the server's answer.

Nothing is stored that the harness can count, so ``corrupted`` and ``duplicated_writes`` are 0.
A ``harmful_calls`` is a call no subgoal needs of a tool the server does not annotate as
read-only or non-destructive. The session is ``wedged`` when the server died (``escape``, or on
its own). Recovery is measured as in the simulation: against the same session with the
scenario's faults removed, run under ``is_error`` (a server of its own, cached per process).

docs/real-servers.md has the scenario format and a worked run.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import math
import os
import shutil
import subprocess
import tempfile
import threading
import time
import traceback
from collections import OrderedDict
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import IO, Any

from harness import __version__
from harness.errors import UserError, unknown_name
from harness.protocol.client import MCPClient
from harness.protocol.codecs import CODECS, compact_text, get_codec
from harness.protocol.errors import RPCError, ServerCrashed, TransportError
from harness.protocol.inputs import ELICIT
from harness.protocol.strategies import ASKING_STRATEGIES, STRATEGIES
from harness.protocol.tools import Tool
from harness.protocol.versions import (
    META_CLIENT_CAPABILITIES,
    META_CLIENT_INFO,
    META_PROTOCOL_VERSION,
    STATELESS_VERSION,
)
from harness.proxy.inproc import DEFAULT_WAIT_S, ProxyTransport, UpstreamCall
from harness.proxy.plan import Plan, ProxyEvent
from harness.proxy.upstream import StdioUpstream
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
from harness.sim.faults import FAULT_KIND_TABLE, FAULT_KINDS, Clock
from harness.sim.host import HOSTS, Host
from harness.sim.registry import make_agent, seed_name
from harness.sim.row import RPC_CODES, SessionResult
from harness.sim.scenario import ANY, Option, Scenario, Subgoal
from harness.sim.seeding import derive_seed
from harness.sim.served import WORKDIR, Check, ServedScenario, holds, without_faults
from harness.sim.session import AGENT_METRICS, BASELINE_STRATEGY, ERAS, Baseline, run_baseline, run_session
from harness.sim.trace import Trace

__all__ = [
    "BASELINE_FN",
    "LOADER",
    "SESSION_FN",
    "problems",
    "run_served_baseline",
    "run_served_session",
]

SESSION_FN = "harness.proxy.session:run_served_session"
"""``SessionOptions.session_fn`` of a run with served scenarios (a simulated one passes through)."""
BASELINE_FN = "harness.proxy.session:run_served_baseline"
LOADER = "harness.sim.family:load_source"
"""The batch loader that reads a :func:`~harness.sim.served.served_source` (and every other source)."""

WAIT_S = float(os.environ.get("HARNESS_SERVED_WAIT_S", DEFAULT_WAIT_S))
"""Real seconds a session waits for the server's answer before its call counts as hung."""

_call_key = json.JSONEncoder(sort_keys=True, default=str).encode
_dumps = compact_text
_CLAIMS = {"finished": "done", "gave_up": "gave_up", "budget": "budget", "deadline": "deadline"}
_GARBLING = frozenset({"malformed"})
"""Faults whose rewritten answer is not the server's: the call does not do its subgoal."""
_HARNESS_LINE = b'{"dir":"harness",'


# -- checking a scenario against the server's tools -------------------------------------------------


def problems(sc: ServedScenario, tools: Mapping[str, dict[str, Any]]) -> list[str]:
    """What in ``sc`` does not fit the server's tools (name -> descriptor), one line each:
    a tool it names that the server lacks, arguments that do not fit a tool's inputSchema, a
    fault or event the proxy could not apply as written."""
    shown = _shown(sc)
    listing = ", ".join(tools) or "none"
    out: list[str] = []

    def tool_line(where: str, name: str) -> bool:
        if name in tools:
            return True
        out.append(f"{shown}: {where}: {name!r} is not a tool of this server (its tools: {listing})")
        return False

    def fits(where: str, option: Option) -> None:
        if not tool_line(f"{where}.tool", option.tool):
            return
        schema = tools[option.tool].get("inputSchema")
        tool = Tool(option.tool, lambda **_: None, schema if isinstance(schema, dict) else {"type": "object"})
        problem = tool.argument_problem(dict(option.arguments))
        if problem is not None:
            out.append(f"{shown}: {where}.arguments: do not fit {option.tool}'s inputSchema: {problem}")

    for i, goal in enumerate(sc.task.subgoals):
        for j, option in enumerate(goal.options):
            fits(f"task.subgoals[{i}]" + (f".alternatives[{j - 1}]" if j else ""), option)
        check = sc.checks[i] if i < len(sc.checks) else None
        if check is not None:
            fits(f"task.subgoals[{i}].verify", check.option)
    for rule in sc.faults:
        tool_line(f"faults[{rule.index}].tool", rule.tool)
    for event in sc.events:
        tool_line(f"events[{event.index}].tool", event.tool)
    for i, tool in enumerate(sc.tools):
        if not any(f"{tool!r} is not a tool" in line for line in out):
            tool_line(f"tools[{i}]", tool)
    checked = plan_of(sc).check(tools)
    out += [line.removesuffix("; this rule is off").removesuffix("; this event is off")
            for line in checked.warnings if line.endswith(" is off")]  # fmt: skip
    return out


def _shown(sc: Scenario) -> str:
    if sc.path is None:
        return sc.name
    try:
        return str(sc.path.resolve().relative_to(Path.cwd()))
    except ValueError:
        return str(sc.path)


def plan_of(sc: ServedScenario) -> Plan:
    """The scenario's faults and events as the proxy takes them."""
    renames = dict(sc.renames)
    events = tuple(
        ProxyEvent(
            e.index, e.kind, e.tool, e.at_step, e.at_call, e.notify, dict(renames.get(e.index, ())) or None
        )
        for e in sc.events
    )
    return Plan(_shown(sc), sc.faults, events, sc.description)


# -- running one session -----------------------------------------------------------------------------


def run_served_session(
    scenario: Scenario | str,
    agent: Agent | str,
    strategy: str,
    seed: int,
    codec: str = "json",
    trace: IO[bytes] | None = None,
    *,
    host: str = "typical",
    agent_params: Mapping[str, Any] | None = None,
    era: str = "handshake",
    baseline: Baseline | Callable[[], Baseline] | None = None,
) -> SessionResult:
    """:func:`harness.sim.session.run_session` for a :class:`ServedScenario`: the same arguments,
    the same record. Any other scenario is run by the simulation, so a batch may mix them."""
    from harness.sim.family import load_source

    sc = scenario if isinstance(scenario, Scenario) else load_source(scenario, ())
    if not isinstance(sc, ServedScenario):
        return run_session(sc, agent, strategy, seed, codec, trace, host=host, agent_params=agent_params,
                           era=era, baseline=baseline)  # fmt: skip
    started = time.perf_counter()
    ag = agent if isinstance(agent, Agent) else make_agent(agent, agent_params)
    if agent_params and isinstance(agent, Agent):
        agent.configure(agent_params)
    agent_name = agent if isinstance(agent, str) else ag.name
    _check_names(strategy, host, era, codec, seed)
    base: Baseline | None = None
    later = baseline if sc.faults and callable(baseline) else None
    if sc.faults and isinstance(baseline, Baseline):
        base = baseline
    elif sc.faults and later is None:
        key = (id(sc), agent_name, tuple(sorted((agent_params or {}).items())), seed, codec, host, era)
        with _LOCK:
            cached = _BASELINES.get(key) if isinstance(agent, str) else None
        if cached is not None and cached[0] is sc:
            base = Baseline(cached[1])
        else:
            fresh = make_agent(agent, agent_params) if isinstance(agent, str) else ag
            base = _baseline(sc, fresh, agent_name, seed, codec, host, era)
            if isinstance(agent, str) and not base.error:
                with _LOCK:
                    _BASELINES[key] = (sc, base.success)
                    if len(_BASELINES) > BASELINE_CACHE_SIZE:
                        _BASELINES.popitem(last=False)
    run = _Served(sc, ag, agent_name, strategy, seed, codec, host, _Trace(trace), era)
    if base is None or not base.error:
        run.go()
    if later is not None:
        base = later()
    run.baseline_success = None if base is None or base.error else base.success
    if base is not None and base.error:
        run.status, run.end = "harness_error", "error"
        run.error = f"the fault-free baseline broke: {base.error}"
        run.traceback = base.traceback
    result = run.result(time.perf_counter() - started)
    if base is not None and (base.tokens_in or base.tokens_out):
        result = dataclasses.replace(
            result, baseline_tokens_in=base.tokens_in, baseline_tokens_out=base.tokens_out
        )
    return result


def run_served_baseline(
    scenario: Scenario | str,
    agent: str,
    seed: int,
    codec: str = "json",
    *,
    host: str = "typical",
    era: str = "handshake",
    agent_params: Mapping[str, Any] | None = None,
) -> Baseline:
    """The fault-free baseline of a served session (a batch's ``baseline_fn``); a simulated
    scenario's is the simulation's."""
    from harness.sim.family import load_source

    sc = scenario if isinstance(scenario, Scenario) else load_source(scenario, ())
    if not isinstance(sc, ServedScenario):
        return run_baseline(sc, agent, seed, codec, host=host, era=era, agent_params=agent_params)
    return _baseline(sc, make_agent(agent, agent_params), agent, seed, codec, host, era)


BASELINE_CACHE_SIZE = 1024
_BASELINES: OrderedDict[tuple[Any, ...], tuple[Scenario, bool]] = OrderedDict()
_LOCK = threading.Lock()


def _baseline(
    sc: ServedScenario, agent: Agent, agent_name: str, seed: int, codec: str, host: str, era: str
) -> Baseline:
    run = _Served(without_faults(sc), agent, agent_name, BASELINE_STRATEGY, seed, codec, host, _Trace(), era)
    run.go()
    metrics = _metrics(agent)
    cost = int(metrics.get("tokens_in", 0)), int(metrics.get("tokens_out", 0))
    if run.status == "harness_error":
        return Baseline(False, *cost, error=run.error, traceback=run.traceback)
    return Baseline(run.success(), *cost)


def _metrics(agent: Agent) -> Mapping[str, Any]:
    """What the agent reports its session cost (:data:`AGENT_METRICS`); nothing from an agent the
    session never reached (a server that did not start: ``reset`` was never called)."""
    report = getattr(agent, AGENT_METRICS, None)
    if not callable(report):
        return {}
    try:
        metrics: Mapping[str, Any] = report()
    except Exception:
        return {}
    return metrics


def _check_names(strategy: str, host: str, era: str, codec: str, seed: int) -> None:
    if strategy not in STRATEGIES:
        raise unknown_name("strategy", strategy, STRATEGIES)
    if host not in HOSTS:
        raise unknown_name("host", host, HOSTS)
    if era not in ERAS:
        raise unknown_name("era", era, ERAS)
    if codec not in CODECS:
        raise unknown_name("codec", codec, CODECS)
    try:
        get_codec(codec)
    except ImportError as exc:
        raise UserError(f"codec {codec!r} is not installed here: {exc}") from None
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise UserError(f"seed must be a non-negative integer, got {seed!r}")


class _Trace(Trace):
    """The session trace, taking the proxy core's lines as they are written (``c2s``/``s2c`` the
    client's side of the proxy, ``p2u``/``u2p`` the server's, ``harness`` notes)."""

    def line(self, data: bytes) -> None:
        self._emit(data)


class _Served:
    """The mutable state of one served session (private; the record is the interface)."""

    def __init__(
        self,
        sc: ServedScenario,
        agent: Agent,
        agent_name: str,
        strategy: str,
        seed: int,
        codec: str,
        host: str,
        trace: _Trace,
        era: str,
    ) -> None:
        self.sc, self.agent, self.agent_name, self.strategy = sc, agent, agent_name, strategy
        self.seed, self.codec, self.host_mode, self.era, self.trace = seed, codec, host, era, trace
        self.workdir = ""
        """The session's own directory, made when the server starts (and removed at the end)."""
        self._workdir = b""
        self.clock = Clock()
        self.steps = self.tool_calls = 0
        self.subgoals: tuple[Subgoal, ...] = sc.task.subgoals
        self.checks: tuple[Check | None, ...] = tuple(sc.checks) + (None,) * (
            len(self.subgoals) - len(sc.checks)
        )
        self.done_at: list[int | None] = [None] * len(self.subgoals)
        self.truth: dict[str, str] = {}
        self.answer: dict[str, Any] = {}
        self.needed = frozenset(t for g in self.subgoals for t in g.tools) | {
            c.tool for c in self.checks if c
        }
        self.faults = dict.fromkeys(FAULT_KINDS, 0)
        self.explicit = self.implicit = self.is_error = self.rpc_other = self.transport_errors = 0
        self.rpc = dict.fromkeys(RPC_CODES, 0)
        self.repeated = self.give_ups = self.correct_give_ups = self.stale = 0
        self.harmful = self.misled = self.messages_seen = self.order_violations = self.premature = 0
        self.first_fault_step: int | None = None
        self.sources_met: set[str] = set()
        self.failed_calls: set[tuple[str, str]] = set()
        self.last_error_text = ""
        self.call_faults: list[str] = []
        self.call_rewrites: list[str] = []
        self.status, self.end, self.error, self.traceback = "ok", "budget", "", ""
        self.baseline_success: bool | None = None
        self.core: Any = None
        self.link: ProxyTransport | None = None
        self.client: MCPClient | None = None

    # -- the stack --------------------------------------------------------------------------------

    def _build(self) -> tuple[ProxyTransport, MCPClient, Host]:
        from harness.proxy.core import ProxyCore

        sc, clock = self.sc, self.clock
        self.workdir = tempfile.mkdtemp(prefix="harness-served-")
        self._workdir = self.workdir.encode()
        self.core = core = ProxyCore(
            strategy=self.strategy,
            plan=plan_of(sc),
            seed=derive_seed("faults", sc.name, self.seed),
            timeout=sc.call_timeout_s,
            clock=lambda: clock.now,
            record=self._record,
        )
        self._devnull = open(os.devnull, "wb")  # noqa: SIM115 -- closed in _close
        upstream = StdioUpstream(
            sc.server.argv(self.workdir),
            env={**os.environ, **sc.server.environment(self.workdir)},
            cwd=self.workdir,
            stderr=self._devnull,
        )
        self.link = link = ProxyTransport(core, upstream, clock, self.codec, WAIT_S)
        asks = self.strategy in ASKING_STRATEGIES and self.agent.answers_input()
        self.client = client = MCPClient(
            link,
            protocol_version=sc.protocol,
            mode="legacy" if self.era == "handshake" else STATELESS_VERSION,
            clock=lambda: clock.now,
            input_handler=self._answer_input if asks else None,
            input_methods=(ELICIT,) if asks else None,
        )
        return link, client, Host(client, self.host_mode)

    def _record(self, line: bytes) -> None:
        """A line of the core's trace: its notes take the session's step (and are counted)."""
        if line.startswith(_HARNESS_LINE):
            note = json.loads(line)
            note["step"] = self.steps
            fault = note.get("fault")
            if isinstance(fault, dict):
                self._on_fault(fault)
            rewrite = note.get("rewrite")
            if isinstance(rewrite, dict):
                self.call_rewrites.append(str(rewrite.get("by")))
            line = _dumps(note).encode() + b"\n"
        self._emit(line)

    def _emit(self, line: bytes) -> None:
        # The session's own directory is a fresh name each time: the trace names it {workdir},
        # so the same session gives the same bytes.
        self.trace.line(line.replace(self._workdir, WORKDIR.encode()) if self._workdir else line)

    def note(self, **fields: Any) -> None:
        self._emit(_dumps({"dir": "harness", "step": self.steps, **fields}).encode() + b"\n")

    def _on_fault(self, fault: Mapping[str, Any]) -> None:
        kind = str(fault.get("kind"))
        self.faults[kind] = self.faults.get(kind, 0) + 1
        self.call_faults.append(kind)
        if fault.get("explicit"):
            self.explicit += 1
        else:
            self.implicit += 1
        if self.first_fault_step is None:
            self.first_fault_step = self.steps
        rule = fault.get("rule")
        spec = next((r for r in self.sc.faults if r.index == rule), None)
        if spec is not None and FAULT_KIND_TABLE[spec.kind].raises and spec.said != "absent":
            self.sources_met.add(spec.source)

    def _answer_input(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        answer = self.agent.answer_input(method, params)
        if answer is None:
            if method == ELICIT:
                return {"action": "decline"}
            raise ValueError(f"the agent does not answer {method}")
        return answer

    # -- the loop ----------------------------------------------------------------------------------

    def go(self) -> None:
        try:
            self._run()
        except UserError as exc:
            self.status, self.end, self.error = "harness_error", "error", str(exc)
        except Exception as exc:
            self.status, self.end, self.error = "harness_error", "error", f"{type(exc).__name__}: {exc}"
            self.traceback = traceback.format_exc()
        finally:
            self._close()

    def _run(self) -> None:
        link, client, host = self._build()
        try:
            link.start()
        except TransportError as exc:
            raise UserError(f"the server did not start: {exc}") from None
        try:
            self._loop(client, host)
        except (ServerCrashed, TransportError) as exc:
            self.transport_errors += 1
            self.status, self.end = "wedged", "wedged"
            self.note(crash=str(exc))
        finally:
            if self.status != "harness_error":
                self._verify()
            self.note(
                end=self.end, status=self.status, subgoals_done=len(self.done_at) - self.done_at.count(None)
            )

    def _loop(self, client: MCPClient, host: Host) -> None:
        assert self.link is not None
        client.connect()
        if self.era == "stateless":
            client.listen(tools=True)
        tools = client.list_tools()
        lines = problems(self.sc, self.core.tools)
        if lines:
            raise UserError(lines[0])
        self.agent.reset(
            self.sc.task, tools, derive_seed("agent", self.sc.name, seed_name(self.agent_name), self.seed)
        )
        obs: Observation = Start()
        max_steps, step_cost, deadline = self.sc.max_steps, self.sc.step_cost_s, self.sc.deadline_s
        while self.steps < max_steps:
            action = self.agent.act(obs)
            self.steps += 1
            self.clock.advance(step_cost)
            if isinstance(action, CallTool):
                obs = self._call(host, action.tool, dict(action.arguments))
            elif isinstance(action, Finish):
                self.note(action="finish")
                self.end = "finished"
                self.answer = dict(action.answer) if action.answer else {}
                return
            elif isinstance(action, GiveUp):
                self.give_ups += 1
                self.end = "gave_up"
                i = next((k for k, d in enumerate(self.done_at) if d is None), None)
                if i is not None and all(self._dead(t) for t in self.subgoals[i].tools):
                    self.correct_give_ups += 1
                self.note(action="give_up", reason=action.reason)
                return
            elif isinstance(action, Wait):
                seconds = max(float(action.seconds), 0.0)
                self.clock.advance(seconds)
                self.note(action="wait", seconds=seconds, clock=self.clock.now)
                obs = Waited(seconds, self.clock.now)
            elif isinstance(action, ListTools):
                obs = host.list_tools()
                if isinstance(obs, RPCErrorObservation):
                    self._count_rpc(obs)
            else:
                raise UserError(f"the agent's act returned {type(action).__name__}; expected an action")
            if self.link.crashed or self.link.gone is not None:
                self.transport_errors += 1
                self.status = self.end = "wedged"
                self.note(crash=self.link.gone or "the server was ended (strategy escape)")
                return
            if deadline is not None and self.clock.now > deadline:
                self.end = "deadline"
                self.note(deadline=deadline, clock=self.clock.now)
                return
            notes = client.pump_notifications()
            if notes:
                methods = tuple(str(n.get("method")) for n in notes)
                obs = dataclasses.replace(obs, notifications=obs.notifications + methods)

    def _call(self, host: Host, tool: str, arguments: dict[str, Any]) -> Observation:
        assert self.link is not None
        self.tool_calls += 1
        if tool not in self.needed:
            self._unneeded(tool)
        key = (tool, _call_key(arguments))
        if key in self.failed_calls:
            self.repeated += 1
        if self._is_stale(tool, arguments):
            self.stale += 1
        self.call_faults, self.call_rewrites = [], []
        before = len(self.link.calls)
        obs = host.call(tool, arguments)
        sent = self.link.calls[before:]
        for call in sent:
            if call.succeeded:
                self._reached(call.name)
        if isinstance(obs, RPCErrorObservation):
            self._count_rpc(obs)
            self._saw(obs.message)
        elif not obs.is_error:
            self.last_error_text = ""
            ran = [c for c in sent if c.name == tool and c.succeeded]
            if ran and not _GARBLING.intersection(self.call_rewrites):
                self._executed(ran[-1])
            return obs
        else:
            self.is_error += 1
            self._saw(obs.text)
        fault = self.call_faults[-1] if self.call_faults else None
        if fault is None or not FAULT_KIND_TABLE[fault].retry_fixes:
            self.failed_calls.add(key)
        return obs

    def _reached(self, tool: str) -> None:
        """A call of ``tool`` succeeded at the server: the first open subgoal with a verify check
        that calls it is done for now (its check, after the session, decides), if its turn has come."""
        for i, goal in enumerate(self.subgoals):
            if self.done_at[i] is not None or self.checks[i] is None or tool not in goal.tools:
                continue
            if all(self.done_at[j] is not None for j in self.sc.task.predecessors[i]):
                self.done_at[i] = self.steps
                self.note(reached=goal.name)
            else:
                self.order_violations += 1
                self.premature += 1
                self.note(out_of_order=goal.name)
            return

    def _executed(self, call: UpstreamCall) -> None:
        """A call that reached the server and succeeded: it may do an open call-judged subgoal."""
        done = [d is not None for d in self.done_at]
        for i, goal in enumerate(self.subgoals):
            if done[i] or self.checks[i] is not None:
                continue
            if any(o.tool == call.name and self._satisfies(goal, o, call.arguments) for o in goal.options):
                if not all(self.done_at[j] is not None for j in self.sc.task.predecessors[i]):
                    self.order_violations += 1
                    self.note(out_of_order=goal.name)
                    return
                self.done_at[i] = self.steps
                self.truth[goal.name] = _text(call.result)
                self.note(done=goal.name)
                return

    def _satisfies(self, goal: Subgoal, option: Option, arguments: Mapping[str, Any]) -> bool:
        descriptor = self.core.tools.get(option.tool, {})
        schema = descriptor.get("inputSchema") if isinstance(descriptor, dict) else None
        props = schema.get("properties") if isinstance(schema, dict) else None
        props = props if isinstance(props, dict) else {}
        for name in option.arguments.keys() | arguments.keys():
            tolerance = goal.tolerance.get(name)
            if tolerance == ANY:
                continue
            if name in option.arguments:
                want = option.arguments[name]
            else:
                prop = props.get(name)
                if not isinstance(prop, dict) or "default" not in prop:
                    continue  # the task does not say, and the tool declares no default
                want = prop["default"]
            got = arguments.get(
                name, (props.get(name) or {}).get("default") if isinstance(props.get(name), dict) else None
            )
            if isinstance(tolerance, float):
                if (
                    isinstance(got, bool)
                    or not isinstance(got, int | float)
                    or not isinstance(want, int | float)
                ):
                    return False
                if abs(float(got) - float(want)) > tolerance:
                    return False
            elif not _same(got, want):
                return False
        return True

    def _is_stale(self, tool: str, arguments: Mapping[str, Any]) -> bool:
        core = self.core
        if tool in core.removed or tool in core.revoked:
            return True
        renames = core.changed.get(tool)
        return renames is not None and any(old in arguments for old in renames)

    def _dead(self, tool: str) -> bool:
        core = self.core
        return tool in core.removed or tool in core.revoked or core.engine.is_dead(tool)

    def _unneeded(self, tool: str) -> None:
        descriptor = self.core.tools.get(tool)
        notes = descriptor.get("annotations") if isinstance(descriptor, dict) else None
        notes = notes if isinstance(notes, dict) else {}
        if (
            descriptor is not None
            and notes.get("readOnlyHint") is not True
            and notes.get("destructiveHint") is not False
        ):
            self.harmful += 1
            self.note(harmful=tool)
        if self.last_error_text and tool in self.last_error_text:
            self.misled += 1
            self.note(misled=tool)

    def _saw(self, text: str | None) -> None:
        self.last_error_text = text or ""
        if text:
            self.messages_seen += 1

    def _count_rpc(self, obs: RPCErrorObservation) -> None:
        if obs.code in self.rpc:
            self.rpc[obs.code] += 1
        else:
            self.rpc_other += 1
        self.note(host={"code": obs.code, "message": obs.message})

    # -- the end state -----------------------------------------------------------------------------

    def _verify(self) -> None:
        """The subgoals' verify reads, made by the harness against the same server."""
        fresh: tuple[Any, MCPClient | None] | None = None
        try:
            for i, check in enumerate(self.checks):
                if check is None:
                    continue
                result: Mapping[str, Any] | None
                if self.link is not None and not self.link.crashed and self.link.gone is None:
                    reply = self.link.side_call(check.tool, dict(check.arguments), self._side_meta())
                    got = reply.get("result") if reply is not None else None
                    result = got if isinstance(got, dict) else None
                else:
                    if fresh is None:
                        fresh = self._restart()
                        self.note(verify_server="started again in the same directory: the first one died")
                    try:
                        result = fresh[1].call_tool(check.tool, dict(check.arguments)) if fresh[1] else None
                    except (RPCError, TransportError):
                        result = None
                ok, seen = holds(check, result)
                goal = self.subgoals[i]
                self.note(verify={"subgoal": goal.name, "tool": check.tool, "expect": check.describe(),
                                  "holds": ok, "seen": seen})  # fmt: skip
                if not ok:
                    self.done_at[i] = None
                elif self.done_at[i] is None and not self.premature:
                    self.done_at[i] = self.steps  # right, though no call of this session made it so
        finally:
            if fresh is not None:
                with contextlib.suppress(Exception):
                    fresh[0].close()

    def _side_meta(self) -> dict[str, Any] | None:
        """The ``_meta`` of the harness's own reads in the stateless era (None in the handshake era)."""
        if self.era != "stateless":
            return None
        info = {"name": "harness-verify", "version": __version__}
        return {
            META_PROTOCOL_VERSION: STATELESS_VERSION,
            META_CLIENT_CAPABILITIES: {},
            META_CLIENT_INFO: info,
        }

    def _restart(self) -> tuple[Any, MCPClient | None]:
        """The server started again in the session's directory, for the verify reads."""
        from harness.transports.stdio import StdioTransport

        transport = StdioTransport(
            self.sc.server.argv(self.workdir),
            timeout=WAIT_S,
            env=self.sc.server.environment(self.workdir),
            cwd=self.workdir,
            stderr=subprocess.DEVNULL,
        )
        mode = "legacy" if self.era == "handshake" else STATELESS_VERSION
        client = MCPClient(transport, protocol_version=self.sc.protocol, mode=mode)
        try:
            client.connect()
        except (RPCError, TransportError):
            return transport, None
        return transport, client

    def _close(self) -> None:
        if self.link is not None:
            with contextlib.suppress(Exception):
                self.link.close()
        devnull = getattr(self, "_devnull", None)
        if devnull is not None:
            devnull.close()
        if self.workdir:
            shutil.rmtree(self.workdir, ignore_errors=True)

    # -- the record --------------------------------------------------------------------------------

    def correct(self) -> bool:
        return None not in self.done_at and not self.premature

    def claimed(self) -> str:
        return _CLAIMS.get(self.end, "none")

    def misreported(self) -> bool:
        claim = self.claimed()
        return (claim == "done" and not self.correct()) or (claim == "gave_up" and self.correct())

    def answers_wrong(self) -> int:
        return sum(
            1
            for name, value in self.answer.items()
            if name in self.truth and not _same_answer(value, self.truth[name])
        )

    def success(self) -> bool:
        return (
            self.status == "ok"
            and self.correct()
            and not self.misreported()
            and self.end != "deadline"
            and not self.harmful
            and not self.answers_wrong()
        )

    def schedule_hash(self) -> str:
        """sha256 of which calls each rule is set to hit within the step budget (as a simulated
        session's: equal across agents and strategies for one scenario and seed)."""
        engine = self.core.engine if self.core is not None else None
        horizon = range(1, self.sc.max_steps + 2)
        plan = [
            {"rule": r.index, "kind": r.kind, "tool": r.tool,
             "calls": [n for n in horizon if engine is not None and engine.scheduled(i, n)]}
            for i, r in enumerate(self.sc.faults)
        ]  # fmt: skip
        return hashlib.sha256(json.dumps(plan, separators=(",", ":"), sort_keys=True).encode()).hexdigest()

    def result(self, wall: float) -> SessionResult:
        done = len(self.done_at) - self.done_at.count(None)
        correct, success = self.correct(), self.success()
        baseline = success if self.baseline_success is None else self.baseline_success
        first = self.first_fault_step
        recover: tuple[int, ...] = ()
        time_to_recover, censored = math.nan, False
        opportunity = baseline and first is not None
        if opportunity and first is not None:
            if success:
                right_at = max(d for d in self.done_at if d is not None) if self.done_at else first
                recover = (max(right_at - first, 0),)
                time_to_recover = float(recover[0])
            else:
                time_to_recover, censored = float(max(self.sc.max_steps - first, 0)), True
        metrics = _metrics(self.agent)
        asks = self.core.stats["asks"] if self.core is not None else {}
        return SessionResult(
            scenario=self.sc.name,
            agent=self.agent_name,
            strategy=self.strategy,
            host=self.host_mode,
            codec=self.codec,
            seed=self.seed,
            status=self.status,
            end=self.end,
            success=success,
            subgoals_done=done,
            subgoals_total=len(self.done_at),
            steps=self.steps,
            tool_calls=self.tool_calls,
            faults=self.faults,
            faults_explicit=self.explicit,
            faults_implicit=self.implicit,
            errors_is_error=self.is_error,
            errors_rpc=dict(self.rpc),
            errors_rpc_other=self.rpc_other,
            errors_transport=self.transport_errors,
            recoveries=len(recover),
            recovery_opportunities=int(opportunity),
            recover_steps=recover,
            steps_to_recover_mean=sum(recover) / len(recover) if recover else math.nan,
            repeated_failing_calls=self.repeated,
            give_ups=self.give_ups,
            correct_give_ups=self.correct_give_ups,
            stale_tool_calls=self.stale,
            list_changed_seen=self.client.list_changes_seen if self.client is not None else 0,
            virtual_time_s=self.clock.now,
            wall_time_s=wall,
            trace_hash=self.trace.hexdigest(),
            fault_schedule_hash=self.schedule_hash(),
            error=self.error,
            traceback=self.traceback,
            correct=correct,
            corrupted=0,
            duplicated_writes=0,
            gave_up=self.end == "gave_up",
            baseline_success=baseline,
            time_to_recover_steps=time_to_recover,
            recover_censored=censored,
            tokens_in=int(metrics.get("tokens_in", 0)),
            tokens_out=int(metrics.get("tokens_out", 0)),
            model_latency_s=float(metrics.get("model_latency_s", 0.0)),
            era=self.era,
            input_requests=int(asks.get("fault", 0) + asks.get("real", 0)),
            inputs_accepted=int(asks.get("answered", 0)),
            sources_met=",".join(sorted(self.sources_met)),
            claimed=self.claimed(),
            misreported=self.misreported(),
            order_violations=self.order_violations,
            answers_wrong=self.answers_wrong(),
            messages_seen=self.messages_seen,
            messages_read=int(metrics.get("messages_read", 0)),
            harmful_calls=self.harmful,
            misled=self.misled,
            server=self.sc.server.name,
        )


def _text(result: Mapping[str, Any]) -> str:
    content = result.get("content")
    blocks = content if isinstance(content, list) else []
    return "\n".join(
        b["text"]
        for b in blocks
        if isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str)
    )


def _same(got: Any, want: Any) -> bool:
    if isinstance(got, bool) or isinstance(want, bool):
        return type(got) is type(want) and got == want
    return bool(got == want)


def _same_answer(reported: Any, truth: str) -> bool:
    if reported == truth:
        return True
    try:
        want = json.loads(truth)
        got = json.loads(reported) if isinstance(reported, str) else reported
    except ValueError:
        return False
    return bool(json.dumps(got, sort_keys=True) == json.dumps(want, sort_keys=True))
