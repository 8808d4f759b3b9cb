"""The session loop every session shares, whatever serves its tools.

A session is the same thing against the simulated catalogue (:mod:`harness.session.simulated`), a real
MCP server behind the proxy (:mod:`harness.proxy.session`) and an AgentDojo world
(:mod:`harness.worlds.session`): an agent acts step by step on a virtual clock, its calls go
through :class:`~harness.protocol.client.MCPClient` and the host, its budget and deadline end it,
every failure it meets is counted by channel, and one row records it, judged against a
fault-free baseline run of the same session. That is this module, once:

* :class:`SessionLoop` holds a session's counts and runs its steps (:meth:`SessionLoop.run`);
* :func:`run_judged` runs one with its fault-free baseline (precomputed, run beside it, found in
  a per-process cache, or run here) and returns its row.

What differs between the three is the transport beneath the client and who judges the end
state, and a subclass says only that, through the hooks: :meth:`~SessionLoop.open` builds the
stack (the in-memory transport to an ``MCPServer``; the proxy core in front of a server
process), :meth:`~SessionLoop.send` makes one call through the host and notes what reached the
tools, :meth:`~SessionLoop.answered` lets a successful call do a subgoal, and
:meth:`~SessionLoop.conclude` judges the end state once the loop has ended (the store; the
harness's own reads of the server; the world's utility).
"""

from __future__ import annotations

import json
import math
import threading
import time
import traceback
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import IO, Any, ClassVar

from harness.errors import UserError, unknown_name
from harness.faults.kinds import FAULT_KIND_TABLE, FAULT_KINDS, CallOutcome, Clock, FaultEngine, InjectedFault
from harness.protocol.client import MCPClient
from harness.protocol.codecs import CODECS, get_codec
from harness.protocol.errors import ServerCrashed, TransportError
from harness.protocol.inputs import ELICIT
from harness.protocol.strategies import STRATEGIES
from harness.scenarios.scenario import Scenario, Subgoal, Task
from harness.seeding import derive_seed
from harness.session.agent import (
    Agent,
    CallTool,
    Finish,
    GiveUp,
    ListTools,
    Observation,
    RPCErrorObservation,
    Start,
    ToolResult,
    Wait,
    Waited,
)
from harness.session.host import HOSTS, Host
from harness.session.judge import EndState, Verdict, judge
from harness.session.registry import make_agent, seed_name
from harness.session.row import RPC_CODES, SessionResult
from harness.session.spec import SessionSpec
from harness.session.tally import Tally
from harness.session.trace import Trace

ERAS: tuple[str, ...] = ("handshake", "stateless")
"""How the session's client speaks MCP: ``handshake`` (``initialize`` first, the scenario's
``protocol`` version; what every row before the stateless era is) or ``stateless`` (2026-07-28:
no handshake, ``_meta`` on every request, list changes through a ``subscriptions/listen``
stream, tool lists cached for the server's ``ttlMs``). The server speaks both."""

BASELINE_STRATEGY = "is_error"
"""The strategy of the fault-free baseline run: fixed, so that the baseline (and with it the
recovery denominator) is the same for every strategy of a comparison."""

AGENT_METRICS = "session_metrics"
"""The hook an agent may have to report what its session cost: ``session_metrics()`` returns a
mapping with any of ``tokens_in``, ``tokens_out``, ``model_latency_s`` and ``messages_read`` (row
columns, 0 when not given), read once when the session ends (the LLM agent's, docs/llm.md; the
scripted agents count the error texts they acted on)."""

ACTION_NAMES = "CallTool, ListTools, Wait, Finish, GiveUp"

call_key = json.JSONEncoder(sort_keys=True, default=str).encode
"""A call's identity for ``repeated_failing_calls`` (one encoder; ``json.dumps`` builds one per call)."""


class AgentContractError(Exception):
    """An agent broke its contract (``act`` returned something that is not an action)."""


def check_names(strategy: str, host: str, era: str, codec: str, seed: int) -> None:
    """Unknown names raise UserError before anything runs."""
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


def wait_seconds(value: Any) -> float | None:
    """A ``Wait``'s seconds as a float, or None for one no session can wait (infinite, NaN,
    negative, not a number): virtual time must stay a finite, forward clock."""
    if isinstance(value, bool):
        return None
    try:
        seconds = float(value)
    except (TypeError, ValueError):
        return None
    return seconds if math.isfinite(seconds) and seconds >= 0 else None


def same_answer(reported: Any, truth: str) -> bool:
    """Whether a reported value is the tool's answer ``truth`` (its text): the same text, or the
    same JSON value (the text parsed, or a value given as such)."""
    if reported == truth:
        return True  # the common case: the text the agent read, reported as it read it
    try:
        want = json.loads(truth)
        got = json.loads(reported) if isinstance(reported, str) else reported
    except ValueError:
        return False
    return bool(json.dumps(got, sort_keys=True) == json.dumps(want, sort_keys=True))


def with_notifications(obs: Observation, methods: tuple[str, ...]) -> Observation:
    """``obs`` with the notifications that arrived during its step attached, as a host adds them
    to the model's next turn."""
    return replace(obs, notifications=obs.notifications + methods)


class SessionLoop:
    """One running session: its counts, its loop, and the hooks a kind of session fills in.

    The state a row is made of lives here under the same names in every kind of session;
    :meth:`record` makes the row. A subclass sets :attr:`engine` when faults are injected in this
    process (a simulated or world session; the proxy's core has its own), and :attr:`client` and
    :attr:`host` in :meth:`open`.
    """

    USER_ERRORS_END_THE_SESSION: ClassVar[bool] = False
    """Whether a :class:`~harness.errors.UserError` raised while the session runs is its
    harness_error (a served session: a server that did not start, tools that do not fit) rather
    than the caller's mistake to raise (a simulated session: an unknown name)."""

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
        era: str = "handshake",
    ) -> None:
        self.sc, self.agent, self.agent_name, self.strategy = sc, agent, agent_name, strategy
        self.seed, self.codec, self.host_mode, self.era, self.trace = seed, codec, host, era, trace
        self.clock = Clock()
        self.engine: FaultEngine | None = None
        self.client: MCPClient | None = None
        self.host: Host | None = None
        self.subgoals: tuple[Subgoal, ...] = sc.task.subgoals
        self.done_at: list[int | None] = [None] * len(self.subgoals)
        self.needed = sc.task.tools_needed
        self.tally = Tally(faults=dict.fromkeys(FAULT_KINDS, 0), errors_rpc=dict.fromkeys(RPC_CODES, 0))
        """What the session counts, under its columns' names: the row takes it as it is."""
        self.first_fault_step: int | None = None
        self.text_sources = {
            r.index: r.source for r in sc.faults if FAULT_KIND_TABLE[r.kind].raises and r.said != "absent"
        }
        """Rule index -> where its text comes from, for the rules whose failure says something."""
        self.sources_met: set[str] = set()
        self.failed_calls: set[tuple[str, str]] = set()
        """Calls that failed for a reason no retry fixes (see ``repeated_failing_calls``)."""
        self.last_error_text = ""
        self.answer: dict[str, Any] = {}
        """What the agent's Finish reported: subgoal name -> value."""
        self.truth: dict[str, Any] = {}
        """Read subgoal name -> the text (or result) its tool really answered for the call that did it."""
        self.output = ""
        """What the agent told the user in words: its Finish text, or its GiveUp reason."""
        self.finished = False
        self.status, self.end, self.error = "ok", "budget", ""
        self.traceback = ""
        """The traceback of what broke the session (status harness_error), for errors.log."""
        self.baseline_success: bool | None = None
        self.setup()

    # -- hooks ------------------------------------------------------------------------------------

    def setup(self) -> None:
        """The kind of session's own state, made once the common state is (a server, a store)."""

    @staticmethod
    def without_faults(sc: Scenario) -> Scenario:
        """The scenario of this session's fault-free baseline."""
        return replace(sc, faults=())

    @staticmethod
    def make_trace(sink: IO[bytes] | None) -> Trace:
        """The session's trace, writing to ``sink`` when given."""
        return Trace(sink)

    def open(self) -> tuple[MCPClient, Host]:
        """Build the stack under the agent (set :attr:`client` and :attr:`host`), before the loop."""
        raise NotImplementedError

    def listed(self, tools: Sequence[Any]) -> None:
        """The first tool list, before the agent sees it (a served session checks the scenario
        against the server's tools here)."""

    def oracle_view(self) -> Any:
        """The ground truth an omniscient agent may read (``bind``), or None: none here."""
        return None

    def task_for_agent(self) -> Task:
        """The task the agent is given at ``reset`` (the scenario's)."""
        return self.sc.task

    def before_call(self, tool: str, arguments: dict[str, Any]) -> None:
        """Before a call is counted as repeated: a call no subgoal needs is harm or a text's doing."""
        if tool not in self.needed:
            self.unneeded(tool)

    def unneeded(self, tool: str) -> None:
        """A call of a tool no subgoal needs (the kind of session says what is harm)."""

    def is_stale(self, tool: str, arguments: dict[str, Any]) -> bool:
        """Whether the call uses a tool removed, revoked or changed since the agent listed it."""
        return False

    def send(self, tool: str, arguments: dict[str, Any]) -> ToolResult | RPCErrorObservation:
        """One call through the host; note what reached the tools (for :meth:`answered` and
        :meth:`retry_may_fix`)."""
        raise NotImplementedError

    def answered(self, tool: str, arguments: dict[str, Any], obs: ToolResult) -> None:
        """A call the agent saw succeed: it may do a subgoal."""

    def retry_may_fix(self) -> bool:
        """Whether the failure of the call just sent is one a retry can pass (a transient,
        rate-limited or timed-out call may well work the next time); else a later identical call
        is a repeated failing call."""
        engine = self.engine
        outcome = engine.last if engine is not None else None
        fault = None if outcome is None else outcome.fault
        return fault is not None and FAULT_KIND_TABLE[fault.kind].retry_fixes

    def after_action(self) -> bool:
        """After an action: True when the session is over (a served session's server died)."""
        return False

    def between_steps(self) -> None:
        """After an action, before the notifications are pumped (a simulated session's events)."""

    def dead(self, tool: str) -> bool:
        """Whether ``tool`` can no longer do anything (a give-up is right when every option is)."""
        return self.engine is not None and self.engine.is_dead(tool)

    def next_turn(self, action: Finish | GiveUp) -> Observation | None:
        """The agent ended its turn (``action``): the user's next turn, as the observation the agent
        starts it from, or None when the session is over (always, but in a multi-turn world)."""
        return None

    def conclude(self) -> None:
        """The loop has ended, however: judge what the end state needs judging."""

    def close(self) -> None:
        """Release what the session holds (a server process, a directory), whatever happened."""

    def engine_of(self) -> FaultEngine:
        """The session's fault engine (a simulated or a world session has one; a served one's is
        the proxy core's)."""
        assert self.engine is not None, "this kind of session injects no faults in this process"
        return self.engine

    # -- the loop ---------------------------------------------------------------------------------

    def note(self, **fields: Any) -> None:
        """A harness line in the trace, at the current step."""
        self.trace.note(self.tally.steps, **fields)

    def go(self) -> None:
        """Run the session to its end: anything that breaks inside becomes its ``harness_error``
        (an agent's ``sys.exit()`` too, which ends its session, not the run)."""
        try:
            self.run()
        except UserError as mistake:
            if not self.USER_ERRORS_END_THE_SESSION:
                raise
            self.status, self.end, self.error = "harness_error", "error", str(mistake)
        except AgentContractError as broken:  # the message names what the agent did: no traceback to read
            self.status, self.end, self.error = "harness_error", "error", f"{type(broken).__name__}: {broken}"
        except (Exception, SystemExit) as exc:
            self.status, self.end, self.error = "harness_error", "error", f"{type(exc).__name__}: {exc}"
            self.traceback = traceback.format_exc()
        finally:
            self.close()

    def run(self) -> None:
        """Open the stack, run the steps; a server that died wedges the session; the end state is
        judged and the end noted however the loop ended."""
        client, host = self.open()
        try:
            self.talk(client, host)
        except (ServerCrashed, TransportError) as exc:
            self.tally.errors_transport += 1
            self.status, self.end = "wedged", "wedged"
            self.note(crash=str(exc))
        finally:
            self.conclude()
            done = len(self.done_at) - self.done_at.count(None)
            self.note(end=self.end, status=self.status, subgoals_done=done)

    def talk(self, client: MCPClient, host: Host) -> None:
        """The handshake (or nothing, for a pinned stateless client), the first list, then one
        action a step until the agent ends the session, its budget runs out or its deadline passes."""
        client.connect()
        if self.era == "stateless":
            client.listen(tools=True)  # list changes arrive on this stream
        tools = client.list_tools()
        self.listed(tools)
        agent = self.agent
        seed = derive_seed("agent", self.sc.name, seed_name(self.agent_name), self.seed)
        agent.reset(self.task_for_agent(), tools, seed)
        bind = getattr(agent, "bind", None)
        view = self.oracle_view() if agent.omniscient else None
        if view is not None and callable(bind):
            bind(view)
        obs: Observation = Start()
        act, clock, engine, pump = agent.act, self.clock, self.engine, client.pump_notifications
        max_steps, step_cost_s = self.sc.max_steps, self.sc.step_cost_s
        deadline = self.sc.deadline_s
        while self.tally.steps < max_steps:
            action = act(obs)
            self.tally.steps += 1
            clock.now += step_cost_s  # Clock.advance, inlined: this runs every step
            if engine is not None:
                engine.step = self.tally.steps
            if type(action) is CallTool:  # the common case first (the action types are disjoint)
                obs = self.call(action.tool, dict(action.arguments))
            elif isinstance(action, Finish):
                self.check_finish(action)
                self.note(action="finish")
                turn = self.next_turn(action)
                if turn is None:
                    self.finished, self.end = True, "finished"
                    self.answer = dict(action.answer) if action.answer else {}
                    self.output = action.text
                    return
                obs = turn
            elif isinstance(action, GiveUp):
                self.give_up(action)
                turn = self.next_turn(action)
                if turn is None:
                    return
                obs = turn
            else:
                obs = self.execute(action)
            if self.after_action():
                return
            if deadline is not None and clock.now > deadline:
                self.end = "deadline"  # work done past it does not count: the session ends
                self.note(deadline=deadline, clock=clock.now)
                return
            self.between_steps()
            notes = pump()
            if notes:
                obs = with_notifications(obs, tuple(str(n.get("method")) for n in notes))
        self.end = "budget"

    def act_name(self) -> str:
        """The agent's ``act`` as the user would look it up: ``mypkg:Agent.act``."""
        cls = type(self.agent)
        where = self.agent_name if ":" in self.agent_name else f"{cls.__module__}:{cls.__qualname__}"
        return f"{where}.act"

    def give_up(self, action: GiveUp) -> None:
        self.tally.give_ups += 1
        self.end = "gave_up"
        self.output = action.reason
        i = self.open_subgoal()
        if i is not None and all(self.dead(t) for t in self.subgoals[i].tools):
            self.tally.correct_give_ups += 1
        self.note(action="give_up", reason=action.reason)

    def check_finish(self, action: Finish) -> None:
        """A Finish's answer is a mapping (subgoal name -> value) and its text a string: an agent
        that writes ``Finish("done")`` meant ``Finish(text="done")``, and is told so."""
        if action.answer is not None and not isinstance(action.answer, Mapping):
            raise AgentContractError(
                f"{self.act_name()} returned Finish({action.answer!r:.60}): a Finish's answer is a mapping "
                "of subgoal name to the value read (or None); words for the user go in Finish(text=...)"
            )
        if not isinstance(action.text, str):
            raise AgentContractError(
                f"{self.act_name()} returned Finish(text={action.text!r:.60}): a Finish's text is a string"
            )

    def execute(self, action: Any) -> Observation:
        """Any action but the plain CallTool, Finish and GiveUp: a Wait, a ListTools, a CallTool
        subclass; anything else is a broken contract naming what the agent returned."""
        if not isinstance(action, CallTool | ListTools | Wait):
            raise AgentContractError(
                f"{self.act_name()} returned {type(action).__name__}; expected one of {ACTION_NAMES}"
            )
        if isinstance(action, Wait):
            seconds = wait_seconds(action.seconds)
            if seconds is None:
                raise AgentContractError(
                    f"{self.act_name()} returned Wait({action.seconds!r}); a wait is a finite "
                    "number of seconds, 0 or more"
                )
            self.clock.advance(seconds)
            self.note(action="wait", seconds=seconds, clock=self.clock.now)
            return Waited(seconds, self.clock.now)
        if isinstance(action, ListTools):
            assert self.host is not None
            listed = self.host.list_tools()
            if isinstance(listed, RPCErrorObservation):
                self.count_rpc(listed)
            return listed
        return self.call(action.tool, dict(action.arguments))

    def call(self, tool: str, arguments: dict[str, Any]) -> Observation:
        """One tool call and its counts: repeated (an identical call after one that failed for a
        reason no retry fixes), stale, by channel; a success the kind of session may judge."""
        self.tally.tool_calls += 1
        self.before_call(tool, arguments)
        failed = self.failed_calls
        # The key is only needed once some call has failed; nothing below changes ``arguments``
        # (the wire carries a copy), so building it late gives the same key.
        key = (tool, call_key(arguments)) if failed else None
        if key is not None and key in failed:
            self.tally.repeated_failing_calls += 1
        if self.is_stale(tool, arguments):
            self.tally.stale_tool_calls += 1
        obs = self.send(tool, arguments)
        if isinstance(obs, RPCErrorObservation):
            self.count_rpc(obs)
            self.saw(obs.message)
        elif not obs.is_error:
            self.last_error_text = ""
            self.answered(tool, arguments, obs)
            return obs
        else:
            self.tally.errors_is_error += 1
            self.saw(obs.text)
        if not self.retry_may_fix():
            failed.add(key or (tool, call_key(arguments)))
        return obs

    # -- counting ---------------------------------------------------------------------------------

    def open_subgoal(self) -> int | None:
        return next((i for i, d in enumerate(self.done_at) if d is None), None)

    def count_fault(self, kind: str, explicit: bool, rule: int | None) -> None:
        """An injected fault: by kind, by whether its message says what happened, its text's source."""
        self.tally.faults[kind] = self.tally.faults.get(kind, 0) + 1
        source = self.text_sources.get(rule) if rule is not None else None
        if source is not None:
            self.sources_met.add(source)
        if explicit:
            self.tally.faults_explicit += 1
        else:
            self.tally.faults_implicit += 1
        if self.first_fault_step is None:
            self.first_fault_step = self.tally.steps

    def on_fault(self, fault: InjectedFault) -> None:
        """The fault engine's listener: count the fault and note it in the trace."""
        self.count_fault(fault.kind, fault.explicit, fault.rule)
        self.note(fault=fault.to_json(), clock=self.clock.now)

    def saw(self, text: str | None) -> None:
        """An error reached the agent; its text, if any, is a message it could read."""
        self.last_error_text = text or ""
        if text:
            self.tally.messages_seen += 1

    def harm(self, tool: str) -> None:
        """A call no subgoal needs that did harm (what harm is, the kind of session says)."""
        self.tally.harmful_calls += 1
        self.note(harmful=tool)

    def undone(self) -> tuple[str, ...]:
        """The subgoals not done, in task order."""
        return tuple(g.name for g, at in zip(self.subgoals, self.done_at, strict=True) if at is None)

    def misled_by(self, tool: str) -> None:
        """A call of a tool no subgoal needs that the last error text the agent saw named: the text,
        not the task, sent the agent there."""
        if self.last_error_text and tool in self.last_error_text:
            self.tally.misled += 1
            self.note(misled=tool)

    def count_rpc(self, obs: RPCErrorObservation) -> None:
        if obs.code in self.tally.errors_rpc:
            self.tally.errors_rpc[obs.code] += 1
        else:
            self.tally.errors_rpc_other += 1
        self.note(host={"code": obs.code, "message": obs.message})

    def answer_input(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """The client's input handler: the agent answers (None declines an elicitation)."""
        answer = self.agent.answer_input(method, params)
        if answer is None:
            if method == ELICIT:
                return {"action": "decline"}
            raise ValueError(f"the agent does not answer {method}")
        return answer

    # -- the verdict and the record -----------------------------------------------------------

    def spoiled(self) -> int:
        """Records stored wrong, twice or too early, as the kind of session counts them (none here)."""
        return 0

    def count_answers_wrong(self) -> int:
        """Read subgoals whose reported value differs from what the tool really answered."""
        return sum(
            1
            for name, value in self.answer.items()
            if name in self.truth and not same_answer(value, truth_text(self.truth[name]))
        )

    def end_state(self) -> EndState:
        """What the session left behind, for the judge (a world adds its own judge's verdict)."""
        done = tuple(at is not None for at in self.done_at)
        return EndState(done, self.status, self.end, self.spoiled(), self.count_answers_wrong())

    def verdict(self) -> Verdict:
        """The judge's verdict on the session as it stands (:func:`harness.session.judge.judge`)."""
        return judge(self.end_state(), self.tally)

    def agent_metrics(self) -> Mapping[str, Any]:
        """The agent's own session metrics (tokens, messages read). A session that was never run
        (its baseline broke) never reset its agent, which may then have nothing to report: the
        first error stands. A metrics method that raises in a session that ran is the agent's
        bug: the session is a harness_error with its traceback."""
        report = getattr(self.agent, AGENT_METRICS, None)
        if not callable(report):
            return {}
        try:
            return dict(report())
        except Exception as exc:  # a user's agent: any bug, reported as the session's error
            if self.status == "harness_error":
                return {}  # the first error stands (e.g. the agent was never reset)
            self.status, self.end = "harness_error", "error"
            self.error = f"{self.agent_name}.{AGENT_METRICS} raised {type(exc).__name__}: {exc}"
            self.traceback = traceback.format_exc()
            return {}

    def record(self, wall: float, **own: Any) -> SessionResult:
        """The session's row: every column this loop counted, and ``own``, the columns only the
        kind of session knows (its fault schedule's hash, what its store holds, its judge)."""
        metrics = self.agent_metrics()  # first: a metrics method that raises breaks the session
        done = len(self.done_at) - self.done_at.count(None)
        verdict = self.verdict()
        success = verdict.success
        baseline = success if self.baseline_success is None else self.baseline_success
        first = self.first_fault_step
        recover: tuple[int, ...] = ()
        time_to_recover, censored = math.nan, False
        opportunity = baseline and first is not None
        if opportunity and first is not None:
            if success:
                right_at = max((d for d in self.done_at if d is not None), default=self.tally.steps)
                recover = (max(right_at - first, 0),)
                time_to_recover = float(recover[0])
            else:
                time_to_recover, censored = float(max(self.sc.max_steps - first, 0)), True
        values: dict[str, Any] = {
            **self.tally.columns(),
            "scenario": self.sc.name, "agent": self.agent_name, "strategy": self.strategy,
            "host": self.host_mode, "codec": self.codec, "seed": self.seed, "status": self.status,
            "end": self.end, "success": success, "subgoals_done": done, "subgoals_total": len(self.done_at),
            "recoveries": len(recover),
            "recovery_opportunities": int(opportunity), "recover_steps": recover,
            "steps_to_recover_mean": sum(recover) / len(recover) if recover else math.nan,
            "list_changed_seen": self.client.list_changes_seen if self.client is not None else 0,
            "virtual_time_s": self.clock.now, "wall_time_s": wall, "trace_hash": self.trace.hexdigest(),
            "error": self.error, "traceback": self.traceback, "correct": verdict.correct,
            "gave_up": self.end == "gave_up", "baseline_success": baseline,
            "time_to_recover_steps": time_to_recover, "recover_censored": censored,
            "tokens_in": int(metrics.get("tokens_in", 0)), "tokens_out": int(metrics.get("tokens_out", 0)),
            "model_latency_s": float(metrics.get("model_latency_s", 0.0)), "era": self.era,
            "sources_met": ",".join(sorted(self.sources_met)), "claimed": verdict.claimed,
            "misreported": verdict.misreported, "answers_wrong": verdict.answers_wrong,
            "messages_read": int(metrics.get("messages_read", 0)), "max_steps": self.sc.max_steps,
        }  # fmt: skip
        values.update(own)
        return SessionResult.of(**values)

    def result(self, wall: float) -> SessionResult:
        """The row (:meth:`record` with the kind of session's own columns)."""
        raise NotImplementedError


def truth_text(truth: Any) -> str:
    """The text of a tool's answer, whether kept as text or as the result the agent saw."""
    return truth if isinstance(truth, str) else str(getattr(truth, "text", truth))


class OracleView:
    """The ground truth an omniscient agent (the oracle) may read in a session whose faults this
    process injects: what the engine has scheduled. A kind of session adds where its tools are."""

    def __init__(self, session: SessionLoop) -> None:
        self._s = session
        self.step_cost_s = session.sc.step_cost_s

    def avoiding_faults(self, tool: str, spec: Any, arguments: dict[str, Any]) -> dict[str, Any]:
        """``arguments`` as a caller who knew every rule on ``tool`` would send them."""
        out = dict(arguments)
        for rule in self._s.sc.faults:
            avoid = FAULT_KIND_TABLE[rule.kind].avoid
            if rule.tool == tool and avoid is not None:
                avoid(rule, spec, out)
        return out

    def blocked_for(self, tool: str) -> float:
        return self._s.engine_of().blocked_for(tool)

    def last_outcome(self) -> CallOutcome | None:
        return self._s.engine_of().last

    def will_appear(self, tool: str) -> bool:
        """Whether ``tool`` is to be registered later in the session (none is, unless said)."""
        return False


# -- one session with its baseline --------------------------------------------------------------


class BaselineCache:
    """Fault-free baselines kept per process: a batch runs one (scenario, agent, seed) under every
    strategy, and the baseline, run under :data:`BASELINE_STRATEGY`, is the same for all of them.

    Keyed by (id(scenario), agent spec, its knobs, seed, codec, host, era) -> (the scenario, its
    baseline success). The scenario is held, so its id cannot be reused by another while the
    entry lives; an agent given as an object is never cached (its state is the caller's).
    """

    def __init__(self, size: int) -> None:
        self.size = size
        self.entries: OrderedDict[tuple[Any, ...], tuple[Scenario, bool]] = OrderedDict()
        self.lock = threading.Lock()
        """Sessions of an agent that calls a model may run in threads (harness.batch)."""

    def get(self, key: tuple[Any, ...], sc: Scenario) -> bool | None:
        with self.lock:
            found = self.entries.get(key)
            if found is None or found[0] is not sc:
                return None
            self.entries.move_to_end(key)
            return found[1]

    def put(self, key: tuple[Any, ...], sc: Scenario, success: bool, size: int | None = None) -> None:
        with self.lock:
            self.entries[key] = (sc, success)
            while len(self.entries) > (self.size if size is None else size):
                self.entries.popitem(last=False)

    def clear(self) -> None:
        with self.lock:
            self.entries.clear()

    def __bool__(self) -> bool:
        return bool(self.entries)


@dataclass(frozen=True)
class Baseline:
    """A fault-free baseline's verdict, and what its model requests cost (0 for scripted agents).

    :func:`run_baseline_of` computes one; :func:`run_judged` takes one precomputed (a batch runs
    each baseline once and hands it to every session of its key) and puts its tokens in the row
    (``baseline_tokens_in``, ``baseline_tokens_out``), so a batch hands the tokens to one session
    of the key and zeros to the rest.
    """

    success: bool
    tokens_in: int = 0
    tokens_out: int = 0
    error: str = ""
    """Why the baseline broke (an endpoint that gave out, an agent that raised); then ``success``
    means nothing, and a session handed it is a harness_error row without being run."""
    traceback: str = ""


ORACLE = "oracle"
"""The agent that knows the fault schedule: if it cannot do a scenario with no faults, no agent can."""


def oracle_fails(kind: type[SessionLoop], sc: Scenario, seeds: Sequence[int], era: str) -> SessionLoop | None:
    """The oracle's session of ``kind`` in the first of ``seeds`` (under is_error), if it fails in
    every one of them; None as soon as one succeeds (``harness check``'s question)."""
    first: SessionLoop | None = None
    for seed in seeds:
        run = kind(sc, make_agent(ORACLE), ORACLE, BASELINE_STRATEGY, seed, "json", "typical", Trace(), era)
        run.go()
        if run.verdict().success:
            return None
        first = first or run
    if first is None:
        raise ValueError("the oracle check needs at least one seed")
    return first


def run_baseline_of(
    kind: type[SessionLoop], sc: Scenario, agent: Agent, agent_name: str, seed: int, codec: str, host: str,
    era: str,
) -> Baseline:  # fmt: skip
    """The session of ``kind`` with its faults removed, run under :data:`BASELINE_STRATEGY` to its end."""
    base = kind(kind.without_faults(sc), agent, agent_name, BASELINE_STRATEGY, seed, codec, host,
                kind.make_trace(None), era)  # fmt: skip
    base.go()
    metrics = base.agent_metrics()
    cost = int(metrics.get("tokens_in", 0)), int(metrics.get("tokens_out", 0))
    if base.status == "harness_error":  # an agent's endpoint gave out, say: the session cannot be judged
        return Baseline(False, *cost, error=base.error, traceback=base.traceback)
    return Baseline(base.verdict().success, *cost)


def run_judged(
    kind: type[SessionLoop],
    sc: Scenario,
    agent: Agent | str,
    strategy: str,
    seed: int,
    codec: str,
    trace: IO[bytes] | None,
    *,
    host: str,
    agent_params: Mapping[str, Any] | None,
    era: str,
    baseline: Baseline | Callable[[], Baseline] | None,
    cache: BaselineCache,
) -> SessionResult:
    """Run one session of ``kind`` and return its record, judged against its fault-free baseline.

    ``agent`` is an :class:`Agent` or a registry name; ``trace`` a binary file the JSONL trace is
    written to (it is hashed either way); ``agent_params`` the agent's knobs
    (:meth:`Agent.configure`; the row's ``agent`` stays the spec); ``baseline`` the fault-free
    baseline, precomputed (:func:`run_baseline_of`) or a function that returns it once the
    session has run (it may be running beside it), else it is run here (or found in ``cache``).
    Unknown names raise UserError before anything runs; anything that breaks inside becomes a
    ``harness_error`` record rather than an exception.
    """
    started = time.perf_counter()
    ag = agent if isinstance(agent, Agent) else make_agent(agent, agent_params)
    if agent_params and isinstance(agent, Agent):
        agent.configure(agent_params)
    agent_name = agent if isinstance(agent, str) else ag.name  # the spec as given names the row
    check_names(strategy, host, era, codec, seed)
    base: Baseline | None = None
    later = baseline if sc.faults and callable(baseline) else None
    if sc.faults and isinstance(baseline, Baseline):
        base = baseline
    elif sc.faults and later is None:  # a session without faults is its own baseline
        # Before the session itself, so that an agent passed in ends in the session's state.
        key = (id(sc), agent_name, tuple(sorted((agent_params or {}).items())), seed, codec, host, era)
        cached = cache.get(key, sc) if isinstance(agent, str) else None
        if cached is not None:
            base = Baseline(cached)  # its cost was the session's that ran it
        else:
            fresh = make_agent(agent, agent_params) if isinstance(agent, str) else ag
            base = run_baseline_of(kind, sc, fresh, agent_name, seed, codec, host, era)
            if isinstance(agent, str) and not base.error:
                cache.put(key, sc, base.success)
    run = kind(sc, ag, agent_name, strategy, seed, codec, host, kind.make_trace(trace), era)
    if base is None or not base.error:  # without its baseline a session cannot be judged: not run
        run.go()
    if later is not None:
        base = later()  # run beside the session: it is needed only now, to judge it
    run.baseline_success = None if base is None or base.error else base.success
    if base is not None and base.error:
        run.status, run.end = "harness_error", "error"
        run.error = f"the fault-free baseline broke: {base.error}"
        run.traceback = base.traceback
    result = run.result(time.perf_counter() - started)
    if base is not None and (base.tokens_in or base.tokens_out):
        result = replace(result, baseline_tokens_in=base.tokens_in, baseline_tokens_out=base.tokens_out)
    return result


@dataclass(frozen=True)
class LoopKind:
    """A kind of session that runs on :class:`SessionLoop`: the subclass that serves its tools
    and judges it, the loader of its sources, and its per-process baseline cache.

    It is a :class:`~harness.session.SessionKind` (:meth:`run`, :meth:`baseline` take a
    :class:`~harness.session.SessionSpec`), and offers the same as plain functions of the
    arguments for callers that hold an agent object rather than a spec (:meth:`run_session`,
    :meth:`run_baseline`: ``harness.session.simulated.run_session`` is one).
    """

    name: str
    loop: type[SessionLoop]
    load: Callable[[str], Scenario]
    cache: BaselineCache

    def scenario(self, scenario: Scenario | str) -> Scenario:
        return scenario if isinstance(scenario, Scenario) else self.load(scenario)

    def run(self, spec: SessionSpec, trace: IO[bytes] | None = None, baseline: Any = None) -> SessionResult:
        """Run ``spec`` and return its record, judged against its fault-free baseline
        (precomputed, a function that returns it once the session has run, or None: found in
        the cache or run here)."""
        return run_judged(
            self.loop, self.scenario(spec.scenario), spec.agent, spec.strategy, spec.seed, spec.codec, trace,
            host=spec.host, agent_params=spec.params, era=spec.era, baseline=baseline, cache=self.cache,
        )  # fmt: skip

    def baseline(self, spec: SessionSpec) -> Baseline:
        """The fault-free baseline of ``spec``'s session, run on its own with a fresh agent."""
        sc = self.scenario(spec.scenario)
        agent = make_agent(spec.agent, spec.params)
        return run_baseline_of(self.loop, sc, agent, spec.agent, spec.seed, spec.codec, spec.host, spec.era)

    def run_session(
        self,
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
        """:meth:`run` of the spec these arguments name; ``agent`` may be an :class:`Agent` (the
        row is named by its ``name``), given its knobs if any."""
        sc = self.scenario(scenario)
        return run_judged(
            self.loop, sc, agent, strategy, seed, codec, trace,
            host=host, agent_params=agent_params, era=era, baseline=baseline, cache=self.cache,
        )  # fmt: skip

    def run_baseline(
        self,
        scenario: Scenario | str,
        agent: str,
        seed: int,
        codec: str = "json",
        *,
        host: str = "typical",
        era: str = "handshake",
        agent_params: Mapping[str, Any] | None = None,
    ) -> Baseline:
        """:meth:`baseline` of the spec these arguments name."""
        spec = SessionSpec(
            scenario, agent, BASELINE_STRATEGY, seed, codec, host, era, SessionSpec.knobs(agent_params)
        )
        return self.baseline(spec)
