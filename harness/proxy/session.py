"""One session against a real MCP server: the harness's agents, through the proxy, judged by reads.

The stack of one served session, bottom to top::

    the real server   started fresh, in a new working directory (``{workdir}`` in its command)
    StdioUpstream     its stdin and stdout (its stderr is dropped)
    ProxyCore         the session's strategy and the scenario's [[faults]] and [[events]],
                      the schedule seeded by (scenario, seed) as a simulated session's is
    ProxyTransport    the core in this thread (harness.proxy.inproc), on the session's clock
    MCPClient, Host, Agent   as in a simulated session (harness.session)

The agents, observations and host are the simulation's; so are the step budget, the virtual
clock (a step's cost, a Wait, a hung call), the deadline, the seeds and the row
(:class:`~harness.session.row.SessionResult`, every column, with ``server`` naming the server). What
differs is how the end state is known. The server is not the harness's to look into, so:

* a subgoal with a ``verify`` (:class:`~harness.scenarios.served.Check`) is done when the harness's
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
import hashlib
import json
import os
import shutil
import subprocess
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import IO, Any

from harness import __version__
from harness.errors import UserError
from harness.faults.kinds import FAULT_KIND_TABLE
from harness.protocol.client import MCPClient
from harness.protocol.codecs import compact_text
from harness.protocol.errors import RPCError, TransportError
from harness.protocol.inputs import ELICIT
from harness.protocol.strategies import ASKING_STRATEGIES
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
from harness.scenarios.scenario import ANY, Option, Scenario, Subgoal
from harness.scenarios.served import WORKDIR, Check, ServedScenario, holds, without_faults
from harness.seeding import derive_seed
from harness.session.agent import RPCErrorObservation, ToolResult
from harness.session.host import Host
from harness.session.loop import BaselineCache, LoopKind, SessionLoop
from harness.session.row import SessionResult
from harness.session.trace import Trace

__all__ = [
    "SERVED",
    "problems",
    "run_served_baseline",
    "run_served_session",
]

WAIT_S = float(os.environ.get("HARNESS_SERVED_WAIT_S", DEFAULT_WAIT_S))
"""Real seconds a session waits for the server's answer before its call counts as hung."""

_dumps = compact_text
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


class _Trace(Trace):
    """The session trace, taking the proxy core's lines as they are written (``c2s``/``s2c`` the
    client's side of the proxy, ``p2u``/``u2p`` the server's, ``harness`` notes)."""

    def line(self, data: bytes) -> None:
        self._emit(data)


class _Served(SessionLoop):
    """One served session: the proxy core and the server process beneath the client, the
    harness's own reads of the server for the end state (private; the record is the
    interface). The loop and the counts are :class:`~harness.session.loop.SessionLoop`'s."""

    USER_ERRORS_END_THE_SESSION = True
    sc: ServedScenario

    def setup(self) -> None:
        sc = self.sc
        self.workdir = ""
        """The session's own directory, made when the server starts (and removed at the end)."""
        self._workdir = b""
        self.checks: tuple[Check | None, ...] = tuple(sc.checks) + (None,) * (
            len(self.subgoals) - len(sc.checks)
        )
        self.needed = frozenset(t for g in self.subgoals for t in g.tools) | {
            c.tool for c in self.checks if c
        }
        self.premature = 0
        self.call_faults: list[str] = []
        self.call_rewrites: list[str] = []
        self.sent: list[UpstreamCall] = []
        """What the call just made sent to the server (its calls that reached it)."""
        self.core: Any = None
        self.link: ProxyTransport | None = None

    @staticmethod
    def without_faults(sc: Scenario) -> Scenario:
        assert isinstance(sc, ServedScenario)
        return without_faults(sc)

    @staticmethod
    def make_trace(sink: IO[bytes] | None) -> Trace:
        return _Trace(sink)

    # -- the stack --------------------------------------------------------------------------------

    def open(self) -> tuple[MCPClient, Host]:
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
        self._devnull = open(os.devnull, "wb")  # noqa: SIM115 -- closed in close
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
            input_handler=self.answer_input if asks else None,
            input_methods=(ELICIT,) if asks else None,
        )
        self.host = host = Host(client, self.host_mode)
        try:
            link.start()
        except TransportError as exc:
            raise UserError(f"the server did not start: {exc}") from None
        return client, host

    def listed(self, tools: Sequence[Any]) -> None:
        lines = problems(self.sc, self.core.tools)
        if lines:
            raise UserError(lines[0])

    def _record(self, line: bytes) -> None:
        """A line of the core's trace: its notes take the session's step (and are counted)."""
        if line.startswith(_HARNESS_LINE):
            note = json.loads(line)
            note["step"] = self.tally.steps
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
        trace = self.trace
        assert isinstance(trace, _Trace)
        trace.line(line.replace(self._workdir, WORKDIR.encode()) if self._workdir else line)

    def note(self, **fields: Any) -> None:
        self._emit(_dumps({"dir": "harness", "step": self.tally.steps, **fields}).encode() + b"\n")

    def _on_fault(self, fault: Mapping[str, Any]) -> None:
        kind = str(fault.get("kind"))
        self.call_faults.append(kind)
        rule = fault.get("rule")
        self.count_fault(kind, bool(fault.get("explicit")), rule if isinstance(rule, int) else None)

    # -- a call -----------------------------------------------------------------------------------

    def after_action(self) -> bool:
        """The server died (``escape``, or on its own): the session is wedged."""
        link = self.link
        assert link is not None
        if link.crashed or link.gone is not None:
            self.tally.errors_transport += 1
            self.status = self.end = "wedged"
            self.note(crash=link.gone or "the server was ended (strategy escape)")
            return True
        return False

    def send(self, tool: str, arguments: dict[str, Any]) -> ToolResult | RPCErrorObservation:
        assert self.link is not None and self.host is not None
        self.call_faults, self.call_rewrites = [], []
        before = len(self.link.calls)
        obs = self.host.call(tool, arguments)
        self.sent = self.link.calls[before:]
        for call in self.sent:
            if call.succeeded:
                self._reached(call.name)
        return obs

    def answered(self, tool: str, arguments: dict[str, Any], obs: ToolResult) -> None:
        ran = [c for c in self.sent if c.name == tool and c.succeeded]
        if ran and not _GARBLING.intersection(self.call_rewrites):
            self._executed(ran[-1])

    def retry_may_fix(self) -> bool:
        fault = self.call_faults[-1] if self.call_faults else None
        return fault is not None and FAULT_KIND_TABLE[fault].retry_fixes

    def _reached(self, tool: str) -> None:
        """A call of ``tool`` succeeded at the server: the first open subgoal with a verify check
        that calls it is done for now (its check, after the session, decides), if its turn has come."""
        for i, goal in enumerate(self.subgoals):
            if self.done_at[i] is not None or self.checks[i] is None or tool not in goal.tools:
                continue
            if all(self.done_at[j] is not None for j in self.sc.task.predecessors[i]):
                self.done_at[i] = self.tally.steps
                self.note(reached=goal.name)
            else:
                self.tally.order_violations += 1
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
                    self.tally.order_violations += 1
                    self.note(out_of_order=goal.name)
                    return
                self.done_at[i] = self.tally.steps
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

    def is_stale(self, tool: str, arguments: dict[str, Any]) -> bool:
        core = self.core
        if tool in core.removed or tool in core.revoked:
            return True
        renames = core.changed.get(tool)
        return renames is not None and any(old in arguments for old in renames)

    def dead(self, tool: str) -> bool:
        core = self.core
        return tool in core.removed or tool in core.revoked or core.engine.is_dead(tool)

    def unneeded(self, tool: str) -> None:
        """Harm: a call of a tool the server does not annotate as read-only or non-destructive."""
        descriptor = self.core.tools.get(tool)
        notes = descriptor.get("annotations") if isinstance(descriptor, dict) else None
        notes = notes if isinstance(notes, dict) else {}
        if (
            descriptor is not None
            and notes.get("readOnlyHint") is not True
            and notes.get("destructiveHint") is not False
        ):
            self.harm(tool)
        self.misled_by(tool)

    # -- the end state -----------------------------------------------------------------------------

    def conclude(self) -> None:
        """The end state: the harness's own reads, unless the session broke."""
        if self.status != "harness_error":
            self._verify()

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
                    self.done_at[i] = self.tally.steps  # right, though no call of this session made it so
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

    def close(self) -> None:
        if self.link is not None:
            with contextlib.suppress(Exception):
                self.link.close()
        devnull = getattr(self, "_devnull", None)
        if devnull is not None:
            devnull.close()
        if self.workdir:
            shutil.rmtree(self.workdir, ignore_errors=True)

    # -- the record --------------------------------------------------------------------------------

    def spoiled(self) -> int:
        """Writes the server took before what they depend on."""
        return self.premature

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
        asks = self.core.stats["asks"] if self.core is not None else {}
        return self.record(
            wall,
            fault_schedule_hash=self.schedule_hash(),
            corrupted=0,
            duplicated_writes=0,
            input_requests=int(asks.get("fault", 0) + asks.get("real", 0)),
            inputs_accepted=int(asks.get("answered", 0)),
            server=self.sc.server.name,
        )


def _load(source: str) -> Scenario:
    """A served scenario's source as a batch recorded it (or any other scenario's)."""
    from harness.scenarios.family import load_source

    return load_source(source, ())


BASELINE_CACHE_SIZE = 1024
_BASELINES = BaselineCache(BASELINE_CACHE_SIZE)

SERVED = LoopKind("served", _Served, _load, _BASELINES)
"""The served kind of session: the same arguments and the same record as the simulation's, the
proxy and a server process beneath the client."""

run_served_session = SERVED.run_session
"""One served session with its fault-free baseline (:meth:`harness.session.loop.LoopKind.run_session`)."""
run_served_baseline = SERVED.run_baseline


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
