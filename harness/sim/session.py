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

Seeds (sha256, :mod:`harness.sim.seeding`): the fault schedule is derived from
(scenario, seed) only -- never from the agent, the strategy or the host -- so every
agent and every strategy meets the same schedule and every comparison is paired; the
agent's generator from (scenario, agent, seed).

The result is one flat record (:mod:`harness.sim.row` defines its columns, the same
for every session, zero-filled). The end state, not the wire, decides ``success``
(:mod:`harness.sim.outcome`): a read subgoal is done by a call that really ran with
arguments that satisfy it (a silent or garbled answer, or a call for another city, does
not count); a write subgoal by a record in the store that satisfies it, and a stored
record that satisfies no subgoal is ``corrupted``. The session is ``correct`` when every
subgoal is done and nothing wrong or extra was stored, and a ``success`` when it is correct
and the server did not die; saying Finish is not required. Recovery is measured against a
baseline: the same session with the scenario's faults removed (docs/outcomes.md). Under
``escape`` the server dies with the first raising fault: the session ends ``wedged`` and
the record is still complete.
"""

from __future__ import annotations

import hashlib
import json
import math
import threading
import time
import traceback
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import IO, Any

from harness.errors import UserError, unknown_name
from harness.protocol.client import MCPClient
from harness.protocol.codecs import CODECS, get_codec
from harness.protocol.errors import ServerCrashed, TransportError
from harness.protocol.inputs import ELICIT, InputRequest, InputRequired, ask, elicit
from harness.protocol.memory import InMemoryTransport
from harness.protocol.server import MCPServer
from harness.protocol.strategies import ASKING_STRATEGIES, STRATEGIES
from harness.protocol.versions import STATELESS_VERSION
from harness.sim.agent import (
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
from harness.sim.catalogue import CATALOGUE, DAMAGING_TOOLS, JSON, CatalogueTool, World
from harness.sim.faults import (
    FAULT_KIND_TABLE,
    FAULT_KINDS,
    CallOutcome,
    Clock,
    FaultEngine,
    FaultRule,
    InjectedFault,
    ToolFault,
)
from harness.sim.host import HOSTS, Host
from harness.sim.outcome import completes, is_write, judge_record, record_arguments, satisfies
from harness.sim.registry import make_agent, seed_name
from harness.sim.row import ENDS, ROW_COLUMNS, RPC_CODES, STATUSES, SessionResult, summary_row
from harness.sim.scenario import MAX_STEPS_LIMIT, Event, Scenario, Subgoal, load_scenario
from harness.sim.seeding import derive_seed
from harness.sim.trace import Trace

__all__ = [
    "ENDS",
    "ERAS",
    "FAULT_KINDS",
    "ROW_COLUMNS",
    "RPC_CODES",
    "STATUSES",
    "Baseline",
    "SessionResult",
    "run_baseline",
    "run_session",
    "summary_row",
]

_call_key = json.JSONEncoder(sort_keys=True, default=str).encode
"""A call's identity for ``repeated_failing_calls`` (one encoder; ``json.dumps`` builds one per call)."""

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


BASELINE_CACHE_SIZE = 4096
"""Baselines kept per process. A batch runs one (scenario, agent, seed) under every strategy,
and the baseline, run under :data:`BASELINE_STRATEGY`, is the same for all of them."""

_BASELINES: OrderedDict[tuple[Any, ...], tuple[Scenario, bool]] = OrderedDict()
"""(id(scenario), agent spec, its knobs, seed, codec, host) -> (the scenario, its baseline
success). The scenario is held, so its id cannot be reused by another while the entry lives; an
agent given as an object is never cached (its state is the caller's)."""
_BASELINES_LOCK = threading.Lock()
"""Sessions of an agent that calls a model may run in threads (harness.batch)."""


@dataclass(frozen=True)
class Baseline:
    """A fault-free baseline's verdict, and what its model requests cost (0 for scripted agents).

    :func:`run_baseline` computes one; :func:`run_session` takes one precomputed (a batch runs
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


def _baseline_success(
    sc: Scenario, agent: Agent, agent_name: str, seed: int, codec: str, host: str, era: str
) -> Baseline:
    """The plain path: the session with its faults removed, run to its end."""
    base = _Session(
        replace(sc, faults=()), agent, agent_name, BASELINE_STRATEGY, seed, codec, host, Trace(), era
    )
    _run(base)
    metrics = base._agent_metrics()
    cost = int(metrics.get("tokens_in", 0)), int(metrics.get("tokens_out", 0))
    if base.status == "harness_error":  # an agent's endpoint gave out, say: the session cannot be judged
        return Baseline(False, *cost, error=base.error, traceback=base.traceback)
    return Baseline(base.success(), *cost)


def run_baseline(
    scenario: Scenario | str,
    agent: str,
    seed: int,
    codec: str = "json",
    *,
    host: str = "typical",
    era: str = "handshake",
    agent_params: Mapping[str, Any] | None = None,
) -> Baseline:
    """The fault-free baseline :func:`run_session` would run for these arguments (any strategy),
    run on its own with a fresh agent: a batch runs it once per key and hands it to the sessions."""
    sc = scenario if isinstance(scenario, Scenario) else load_scenario(scenario)
    return _baseline_success(sc, make_agent(agent, agent_params), agent, seed, codec, host, era)


def run_session(
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
    """Run one session and return its record.

    ``scenario`` is a :class:`Scenario` or a shipped name / path; ``agent`` an
    :class:`Agent` or a registry name; ``trace`` a binary file the JSONL trace
    is written to (it is hashed either way); ``agent_params`` the agent's knobs
    (:meth:`Agent.configure`; the row's ``agent`` stays the spec); ``era`` one of :data:`ERAS`;
    ``baseline`` the fault-free baseline, precomputed (:func:`run_baseline`) or a function
    that returns it once the session has run (it may be running beside it), else it is run
    here (or found in this process's cache). Unknown names raise UserError
    before anything runs; anything that breaks inside becomes a
    ``harness_error`` record rather than an exception.
    """
    started = time.perf_counter()
    sc = scenario if isinstance(scenario, Scenario) else load_scenario(scenario)
    ag = agent if isinstance(agent, Agent) else make_agent(agent, agent_params)
    if agent_params and isinstance(agent, Agent):
        agent.configure(agent_params)
    agent_name = agent if isinstance(agent, str) else ag.name  # the spec as given names the row
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
    base: Baseline | None = None
    later = baseline if sc.faults and callable(baseline) else None
    if sc.faults and isinstance(baseline, Baseline):
        base = baseline
    elif sc.faults and later is None:  # a session without faults is its own baseline
        # Before the session itself, so that an agent passed in ends in the session's state.
        key = (id(sc), agent_name, tuple(sorted((agent_params or {}).items())), seed, codec, host, era)
        with _BASELINES_LOCK:
            cached = _BASELINES.get(key) if isinstance(agent, str) else None
            if cached is not None and cached[0] is sc:
                _BASELINES.move_to_end(key)
        if cached is not None and cached[0] is sc:
            base = Baseline(cached[1])  # its cost was the session's that ran it
        else:
            fresh = make_agent(agent, agent_params) if isinstance(agent, str) else ag
            base = _baseline_success(sc, fresh, agent_name, seed, codec, host, era)
            if isinstance(agent, str) and not base.error:
                with _BASELINES_LOCK:
                    _BASELINES[key] = (sc, base.success)
                    if len(_BASELINES) > BASELINE_CACHE_SIZE:
                        _BASELINES.popitem(last=False)
    run = _Session(sc, ag, agent_name, strategy, seed, codec, host, Trace(trace), era)
    if base is None or not base.error:  # without its baseline a session cannot be judged: not run
        _run(run)
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


ORACLE = "oracle"
"""The agent that knows the fault schedule: if it cannot do a scenario with no faults, no agent can."""


@dataclass(frozen=True)
class Solvability:
    """Whether the oracle gets the end state right on a scenario, in any of a few seeds.

    The oracle knows every fault before it strikes: where it fails in every seed, no agent can
    succeed, every strategy scores 0 and a comparison reads the tie as a finding. That is a
    broken scenario (a subgoal whose check no call satisfies, a budget too small) or one built
    so that nothing can be done (every call of the only tool silently dropped). With
    ``faults=False`` the check is of the fault-free baseline, which every session's recovery is
    measured against: where it fails, no session of the scenario has a recovery opportunity.
    """

    scenario: str
    solved: bool
    faults: bool = True
    """True: the scenario as written; False: with its faults removed (the baseline)."""
    undone: tuple[str, ...] = ()
    """The subgoals the oracle could not do in the first seed, in task order."""
    why: str = ""
    seeds: tuple[int, ...] = ()

    def line(self, where: str = "") -> str:
        """One line saying what is wrong (or that nothing is), naming the subgoals and the cause.

        Unsolved with faults: ``unsolvable`` (no agent can succeed). Unsolved without them: ``no
        fault-free baseline`` (the scenario may be fine as written; what it lacks is the run that
        recovery is measured against)."""
        name = where or self.scenario
        if self.solved:
            how = "" if self.faults else ", with its faults removed (the fault-free baseline),"
            return f"{name}: solvable: the oracle{how} gets every subgoal right"
        goals = ", ".join(repr(g) for g in self.undone)
        what = f"subgoal{'s' if len(self.undone) != 1 else ''} {goals}" if self.undone else "the task"
        seeds = f"seed {self.seeds[0]}" if len(self.seeds) == 1 else f"seeds {_span(self.seeds)}"
        if not self.faults:
            return (f"{name}: no fault-free baseline: with its faults removed, even the oracle cannot do "
                    f"{what} in {seeds}: {self.why}")  # fmt: skip
        return f"{name}: unsolvable: even the oracle cannot do {what} in {seeds}: {self.why}"


def _span(seeds: tuple[int, ...]) -> str:
    if seeds == tuple(range(seeds[0], seeds[0] + len(seeds))):
        return f"{seeds[0]}-{seeds[-1]}"
    return ",".join(map(str, seeds))


ORACLE_SEEDS = 3
"""Seeds the oracle check tries (the run's first ones): a rate fault may be unavoidable in one."""


def oracle_check(
    scenario: Scenario,
    seeds: Sequence[int] = range(ORACLE_SEEDS),
    *,
    faults: bool = True,
    era: str = "handshake",
) -> Solvability:
    """Run the oracle under is_error on ``scenario`` (its faults removed unless ``faults``) for
    ``seeds``; solved when any seed's end state is right."""
    sc = scenario if faults else replace(scenario, faults=())
    tried = tuple(seeds)
    first: _Session | None = None
    for seed in tried:
        run = _oracle_run(sc, seed, era)
        if run.success():
            return Solvability(sc.name, True, faults, seeds=tried)
        first = first or run
    if first is None:
        raise ValueError("oracle_check needs at least one seed")
    undone = tuple(g.name for g, at in zip(first.subgoals, first.done_at, strict=True) if at is None)
    why = _why_not(first, () if faults else scenario.faults)
    if first.end == "budget" and first.status == "ok" and not first.corrupted:
        why = _budget_too_small(first, era)
    return Solvability(sc.name, False, faults, undone, why, tried)


def _oracle_run(sc: Scenario, seed: int, era: str) -> _Session:
    run = _Session(sc, make_agent(ORACLE), ORACLE, BASELINE_STRATEGY, seed, "json", "typical", Trace(), era)
    _run(run)
    return run


ROOMY = 10
"""How many times its budget the oracle is given to find out whether a budget is only too small."""


def _budget_too_small(run: _Session, era: str) -> str:
    """When the oracle ran out of steps: how many it needs, found with ``ROOMY`` times the budget
    (the fault schedule keeps its draws for the earlier calls); else why more do not help."""
    sc = run.sc
    roomy = _oracle_run(replace(sc, max_steps=min(sc.max_steps * ROOMY, MAX_STEPS_LIMIT)), run.seed, era)
    if roomy.success():
        return (f"the step budget is too small for the oracle: max_steps = {sc.max_steps}, and it needs "
                f"{roomy.steps} steps in seed {run.seed} (given {roomy.sc.max_steps})")  # fmt: skip
    said = (f"the step budget (max_steps = {sc.max_steps}) ran out, and {ROOMY} times as many steps do "
            "not help")  # fmt: skip
    goal = next((g for g, at in zip(roomy.subgoals, roomy.done_at, strict=True) if at is None), None)
    every = [r for r in sc.faults if goal is not None and r.tool in goal.tools and r.rate == 1.0]
    if goal is not None and every and {r.tool for r in every} == set(goal.tools):
        hits = ", ".join(f"{r.tool} ({r.kind}, rate 1)" for r in every)
        said += f": a fault hits every call of each tool that can do {goal.name!r}: {hits}"
    return said


def _why_not(run: _Session, removed: Sequence[FaultRule] = ()) -> str:
    """What kept a session from the right end state, in words; ``removed`` the faults taken out
    of the scenario for it (the fault-free baseline), which may be what taught the stored form."""
    if run.status == "harness_error":
        return f"the session broke ({run.error})"
    found = _stored_otherwise(run, removed)
    if found is not None:
        return found
    if run.corrupted:
        return (
            f"{run.corrupted} record(s) it stored satisfy no subgoal's check (does the tool store "
            "another form than the subgoal's arguments? say it in the subgoal's expect)"
        )
    if run.duplicated:
        return f"{run.duplicated} write(s) were stored twice"
    if run.status == "wedged":
        return "the server died"
    if run.end == "deadline":
        return f"the deadline ({run.sc.deadline_s} virtual seconds) passed"
    if run.end == "budget":
        return f"the step budget (max_steps = {run.sc.max_steps}) ran out"
    goal = next((g for g, at in zip(run.subgoals, run.done_at, strict=True) if at is None), None)
    if run.end == "gave_up" and goal is not None and all(run._dead(t) for t in goal.tools):
        kinds = {t: sorted({r.kind for r in run.sc.faults if r.tool == t}) for t in goal.tools}
        which = ", ".join(f"{t} ({' and '.join(k) or 'gone'})" for t, k in kinds.items())
        return f"it gave up on {goal.name!r}: no tool that can do it works any more: {which}"
    return f"no call it could make did it (it ended: {run.end})"


def _stored_otherwise(run: _Session, removed: Sequence[FaultRule]) -> str | None:
    """A record the oracle stored whose value is not the form an undone subgoal's ``expect`` asks
    for, in words: what it stored, what the end state expects, and the fault (if one was removed)
    whose message is the only place that names the form. None when no such record explains it."""
    for goal, at in zip(run.subgoals, run.done_at, strict=True):
        if at is not None or not goal.expect:
            continue
        for option in goal.options:
            spec = CATALOGUE[option.tool]
            made = [dict(r) for r in spec.stored(run.world)] if spec.store else [dict(option.arguments)]
            verb = "stored" if spec.store else f"called {option.tool} with"
            for values in made:
                for name, want in goal.expect.items():
                    got = values.get(name)
                    if got is None or str(got) == str(want):
                        continue
                    said = (f"for {goal.name!r} it {verb} {name} {got!r}, as the task gives it, where the "
                            f"end state expects {want!r}")  # fmt: skip
                    teacher = next((r for r in removed if r.tool == option.tool and r.argument == name
                                    and str(r.valid) == str(want)), None)  # fmt: skip
                    if teacher is not None:
                        said += f", a form that only the {teacher.kind} fault on {teacher.tool} names"
                    return said
    return None


_CLAIMS: dict[str, str] = {
    "finished": "done",
    "gave_up": "gave_up",
    "budget": "budget",
    "deadline": "deadline",
}
"""What an episode's end tells the user (:meth:`_Session.claimed`); any other end tells nothing."""

CLAIMS: tuple[str, ...] = ("done", "gave_up", "budget", "deadline", "none")

WRONG_VALUE_KINDS: frozenset[str] = frozenset({"stale", "wrong_units", "partial"})
"""Faults whose read reached the tool with the task's arguments but answered a wrong value: the
read is done (the call was made), and the value the agent reports is what is judged."""


def _text(truth: str | ToolResult) -> str:
    return truth if isinstance(truth, str) else truth.text


def _same_answer(reported: Any, truth: str) -> bool:
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


class AgentContractError(Exception):
    """An agent broke its contract (``act`` returned something that is not an action)."""


ACTION_NAMES = "CallTool, ListTools, Wait, Finish, GiveUp"


def _wait_seconds(value: Any) -> float | None:
    """A ``Wait``'s seconds as a float, or None for one no session can wait (infinite, NaN,
    negative, not a number): virtual time must stay a finite, forward clock."""
    if isinstance(value, bool):
        return None
    try:
        seconds = float(value)
    except (TypeError, ValueError):
        return None
    return seconds if math.isfinite(seconds) and seconds >= 0 else None


def _run(run: _Session) -> None:
    try:
        run.run()
    except UserError:
        raise
    except AgentContractError as exc:  # the message names what the agent did: no traceback to read
        run.status, run.end, run.error = "harness_error", "error", f"{type(exc).__name__}: {exc}"
    except (Exception, SystemExit) as exc:  # an agent's sys.exit() ends its session, not the run
        run.status, run.end, run.error = "harness_error", "error", f"{type(exc).__name__}: {exc}"
        run.traceback = traceback.format_exc()


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
        era: str = "handshake",
    ) -> None:
        self.agent_name = agent_name
        self.era = era
        self.asking = strategy in ASKING_STRATEGIES
        self.asked: dict[str, tuple[str, InputRequest, ToolFault]] = {}
        """tool -> (key, question, the fault it stands for) of the question its last call asked."""
        self.input_requests = self.inputs_accepted = 0
        self.ran_with: dict[str, Any] | None = None
        """The arguments (base names) the last call ran with, when an answer changed them."""
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
            derive_seed("faults", sc.name, seed),
            sc.max_steps + 1,
            self.clock,
            self.world,
            sc.call_timeout_s,
        )
        self.engine.listener = self._on_fault
        self.engine.on_drift = self._drift
        universe = sc.allowed if sc.allowed is not None else sc.all_tools
        self.universe: tuple[str, ...] = universe
        self.server = MCPServer(
            "harness-scenario",
            "0.1.0",
            allowed_tools=universe,
            tool_errors=strategy,
            cache_ttl_ms=round(sc.list_ttl_s * 1000),
            # The requestState HMAC key goes on the wire inside every sealed state: drawn from the
            # session's seed, not at random, so the same inputs give the same trace.
            state_key=hashlib.sha256(f"harness-request-state\x1f{sc.name}\x1f{seed}".encode()).digest(),
        )
        self.variants: dict[str, str | None] = {}
        for name in sc.tools:
            self._register(name, None, notify=False)
        self.client = MCPClient(
            InMemoryTransport(self.server, codec, tap=trace.wire),
            protocol_version=sc.protocol,
            mode="legacy" if era == "handshake" else STATELESS_VERSION,
            clock=self._now,
            # The capability is declared only where a tool may ask: under any other strategy no
            # question comes, and the initialize stays byte for byte what it was before issue 19.
            input_handler=self._answer_input if self.asking and agent.answers_input() else None,
        )
        self.host = Host(self.client, host)
        self.subgoals: tuple[Subgoal, ...] = sc.task.subgoals
        self.done_at: list[int | None] = [None] * len(self.subgoals)
        self.first_fault_step: int | None = None
        self.stored_seen: dict[str, list[JSON]] = {}
        """The records of each store judged so far (the objects: a store a damaging tool emptied
        and a write refilled has records at the old positions that were never judged)."""
        self.corrupted = self.duplicated = 0
        self.baseline_success: bool | None = None
        self.pending: list[Event] = list(sc.events)
        self.text_sources = {
            r.index: r.source for r in sc.faults if FAULT_KIND_TABLE[r.kind].raises and r.said != "absent"
        }
        """Rule index -> where its text comes from, for the rules whose failure says something."""
        self.sources_met: set[str] = set()
        self.needed = sc.task.tools_needed
        self.harmful = self.misled = self.messages_seen = 0
        self.last_error_text = ""
        self.predecessors = sc.task.predecessors
        self.order_violations = self.premature = 0
        self._answers_wrong: int | None = None
        self.answer: dict[str, Any] = {}
        """What the agent's Finish reported: subgoal name -> value."""
        self.truth: dict[str, str | ToolResult] = {}
        """Read subgoal name -> the text its tool really answers for the call that did it."""
        self.changed: dict[str, str] = {}
        self.revoked: set[str] = set()
        self.failed_calls: set[tuple[str, str]] = set()
        """Calls that failed for a reason no retry fixes (see ``repeated_failing_calls``)."""
        self.steps = self.tool_calls = 0
        self.faults = dict.fromkeys(FAULT_KINDS, 0)
        self.explicit = self.implicit = 0
        self.is_error = 0
        self.rpc = dict.fromkeys(RPC_CODES, 0)
        self.rpc_other = self.transport_errors = 0
        self.repeated = self.give_ups = self.correct_give_ups = self.stale = 0
        self.status, self.end, self.error = "ok", "budget", ""
        self.traceback = ""
        """The traceback of what broke the session (status harness_error), for errors.log."""
        self.finished = False

    # -- the server side --------------------------------------------------------------------

    def _register(self, name: str, variant: str | None, notify: bool) -> None:
        spec = CATALOGUE[name]
        execute = self._asking_call if self.asking else self.engine.execute

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

    def _asking_call(self, spec: CatalogueTool, arguments: dict[str, Any]) -> Any:
        """A call under an asking strategy: a failure that is an argument the tool cannot use
        (:attr:`~harness.sim.faults.FaultKind.asks`) asks the client for it instead of failing.

        The server runs the tool again from the start once the answer is in (both eras), so the
        question is remembered per tool: on the run that has its answer, an accepted value
        replaces the argument and the call goes on (a new call of the tool, as the agent's own
        corrected call would be); a declined one fails as the original fault did. A later call
        that carries no answer is a fresh call.
        """
        pending = self.asked.pop(spec.name, None)
        answered = False
        if pending is not None:
            key, question, fault = pending
            argument = fault.argument or ""
            try:
                answer = ask(key, question)
            except InputRequired:
                answer = None  # not the re-run of the call that asked: a fresh call
            if answer is not None:
                answered = True
                content = answer.get("content")
                if (
                    answer.get("action") != "accept"
                    or not isinstance(content, dict)
                    or argument not in content
                ):
                    self.trace.note(self.steps, input={"tool": spec.name, "answer": answer.get("action")})
                    raise fault  # declined: the call fails as it did
                self.inputs_accepted += 1
                self.trace.note(self.steps, input={"tool": spec.name, "accepted": content[argument]})
                arguments = {**arguments, argument: content[argument]}
                self.ran_with = arguments  # the end state judges what ran, not what the agent sent
        try:
            return self.engine.execute(spec, arguments)
        except ToolFault as fault:
            if fault.argument is None or answered:
                raise  # not input the client could give, or its answer did not do
            prop = spec.schema_for(None).get("properties", {}).get(fault.argument, {})
            question = elicit(str(fault), {"type": "object", "properties": {fault.argument: prop},
                                           "required": [fault.argument]})  # fmt: skip
            key = f"{spec.name}.{fault.argument}"
            self.asked[spec.name] = (key, question, fault)
            self.input_requests += 1
            raise InputRequired({key: question}) from None

    def _answer_input(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """The client's input handler: the agent answers (None declines an elicitation)."""
        answer = self.agent.answer_input(method, params)
        if answer is None:
            if method == ELICIT:
                return {"action": "decline"}
            raise ValueError(f"the agent does not answer {method}")
        return answer

    def _now(self) -> float:
        return self.clock.now

    def _drift(self, tool: str, variant: str) -> None:
        """A schema_drift fault: the tool's inputSchema becomes ``variant``'s, without notice."""
        self._register(tool, variant, notify=False)
        self.changed[tool] = "change_schema"
        self.trace.note(self.steps, drift={"tool": tool, "variant": variant})

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

    # -- ground truth: the end state (harness.sim.outcome) ----------------------------------

    def _open_subgoal(self) -> int | None:
        return next((i for i, d in enumerate(self.done_at) if d is None), None)

    def _done(self) -> list[bool]:
        return [d is not None for d in self.done_at]

    def _on_fault(self, fault: InjectedFault) -> None:
        self.faults[fault.kind] += 1
        source = self.text_sources.get(fault.rule)
        if source is not None:
            self.sources_met.add(source)
        if fault.explicit:
            self.explicit += 1
        else:
            self.implicit += 1
        if self.first_fault_step is None:
            self.first_fault_step = self.steps
        self.trace.note(self.steps, fault=fault.to_json(), clock=self.clock.now)

    def _executed(
        self,
        tool: str,
        arguments: dict[str, Any],
        base: dict[str, Any] | None = None,
        answered: ToolResult | None = None,
    ) -> None:
        """A call really ran: a read may complete a subgoal; a write is judged by what it stored.

        ``base`` is what the tool ran with when that differs from what the agent sent (a value
        the client gave when the tool asked for it), in the catalogue's base names. ``answered``
        is the tool's result when that is the truth (no fault rewrote it): its text is worked out
        only if an answer is held to it.
        """
        spec = CATALOGUE[tool]
        if spec.store is not None:
            return  # a write: judged by what it stored, as soon as the call returned (_call)
        ran = base if base is not None else spec.to_base(arguments, self.variants.get(tool))
        i = completes(self.subgoals, self._done(), tool, ran)
        if i is not None and self._in_order(i):
            self.done_at[i] = self.steps
            # The truth a reported answer is held to: what the tool answered, or, where a fault
            # rewrote the answer, what it would have answered (reads are pure: now is then).
            self.truth[self.subgoals[i].name] = (
                answered if answered is not None else spec.run(self.world, dict(ran))
            )
            self.trace.note(self.steps, done=self.subgoals[i].name)

    def _recheck_writes(self, unjudged: frozenset[int] = frozenset()) -> None:
        """Undo the write subgoals whose record is no longer in the store (a damaging tool took it).

        ``unjudged``: the ids of records stored but not judged yet, which cannot keep a subgoal done."""
        for i, goal in enumerate(self.subgoals):
            if self.done_at[i] is None:
                continue
            writes = [o for o in goal.options if is_write(o)]
            if writes and not any(
                satisfies(goal, o, record_arguments(CATALOGUE[o.tool], record))
                for o in writes
                for record in CATALOGUE[o.tool].stored(self.world)
                if id(record) not in unjudged
            ):
                self.done_at[i] = None
                self.trace.note(self.steps, undone=goal.name)

    def _judge_store(self, spec: CatalogueTool) -> None:
        """Judge the records ``spec`` stored since the last look, in the order stored.

        If records judged before are gone (a damaging tool deleted them), the write subgoals they
        completed are undone first, so that a write made again is judged against what the store
        holds now: done again, not a duplicate of a record that is no longer there."""
        records = spec.stored(self.world)
        seen = self.stored_seen.setdefault(spec.name, [])
        n = len(seen)
        if n <= len(records) and (n == 0 or records[n - 1] is seen[-1]):
            fresh = records[n:]  # the usual case: the store only grew since the last look
        else:  # what is new is what was never judged (the objects: positions were reused)
            judged = {id(r) for r in seen}  # ``seen`` holds them, so no id is reused meanwhile
            fresh = [r for r in records if id(r) not in judged]
            seen[:] = [r for r in records if id(r) in judged]
            self._recheck_writes(frozenset(id(r) for r in fresh))
        for record in fresh:
            verdict, i = judge_record(self.subgoals, self._done(), spec.name, record)
            if verdict == "done" and i is not None:
                if self._in_order(i):
                    self.done_at[i] = self.steps
                else:  # stored before what it depends on: it does not count, and it stays stored
                    verdict = "out_of_order"
                    self.premature += 1
            elif verdict == "duplicate":
                self.duplicated += 1
            else:
                self.corrupted += 1
            name = None if i is None else self.subgoals[i].name
            self.trace.note(self.steps, stored=spec.name, judged=verdict, subgoal=name)
        seen.extend(fresh)

    def correct(self) -> bool:
        """Every subgoal's end-state check holds and nothing wrong or extra was stored."""
        return None not in self.done_at and not (self.corrupted or self.duplicated or self.premature)

    def _in_order(self, i: int) -> bool:
        """Whether subgoal ``i`` may count now: what it depends on (the one before it, under the
        task's strict order, and its ``after``) is done. Else it is an order violation."""
        done_at = self.done_at
        for j in self.predecessors[i]:
            if done_at[j] is None:
                break
        else:
            return True
        self.order_violations += 1
        self.trace.note(self.steps, out_of_order=self.subgoals[i].name)
        return False

    def claimed(self) -> str:
        """What the agent told the user: done (Finish), gave_up, or nothing because its step
        budget or the deadline ran out (budget, deadline) or the session broke (none)."""
        return _CLAIMS.get(self.end, "none")

    def misreported(self) -> bool:
        """It said done and the end state is wrong, or it said it failed and the end state is right."""
        claim = self.claimed()
        return (claim == "done" and not self.correct()) or (claim == "gave_up" and self.correct())

    def answers_wrong(self) -> int:
        """Read subgoals whose reported value differs from what the tool really answers (counted
        once: it is asked after the session has ended)."""
        if self._answers_wrong is None:
            self._answers_wrong = self._count_wrong_answers()
        return self._answers_wrong

    def _count_wrong_answers(self) -> int:
        return sum(
            1
            for name, value in self.answer.items()
            if name in self.truth and not _same_answer(value, _text(self.truth[name]))
        )

    def success(self) -> bool:
        """The end state is right, what the agent told the user is true (no misreport, no wrong
        answer), the session ran to its end (the server did not die, the deadline did not pass)
        and no damaging tool was called."""
        return (
            self.status == "ok"
            and self.correct()
            and not self.misreported()
            and self.end != "deadline"
            and not self.harmful
            and not self.answers_wrong()
        )

    def _agent_metrics(self) -> Mapping[str, Any]:
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
            self.client.connect()  # the handshake, or nothing for a pinned stateless client
            if self.era == "stateless":
                self.client.listen(tools=True)  # list changes arrive on this stream
            tools = self.client.list_tools()
            self.agent.reset(
                self.sc.task, tools, derive_seed("agent", self.sc.name, seed_name(self.agent_name), self.seed)
            )
            bind = getattr(self.agent, "bind", None)
            if self.agent.omniscient and callable(bind):
                bind(_OracleView(self))
            obs: Observation = Start()
            act, clock, engine, pump = self.agent.act, self.clock, self.engine, self.client.pump_notifications
            max_steps, step_cost_s = self.sc.max_steps, self.sc.step_cost_s
            deadline = self.sc.deadline_s
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
                    self.answer = dict(action.answer) if action.answer else {}
                    return
                elif isinstance(action, GiveUp):
                    self._give_up(action)
                    return
                else:
                    obs = self._execute(action)
                if deadline is not None and clock.now > deadline:
                    self.end = "deadline"  # work done past it does not count: the session ends
                    self.trace.note(self.steps, deadline=deadline, clock=clock.now)
                    return
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
            for spec in CATALOGUE.values():  # every write is judged by the store (none is left)
                if spec.store is not None:
                    self._judge_store(spec)
            if self.harmful:  # something was deleted: a write done earlier may be gone again
                self._recheck_writes()
            self.trace.note(
                self.steps,
                end=self.end,
                status=self.status,
                subgoals_done=len(self.done_at) - self.done_at.count(None),
            )

    def _act_name(self) -> str:
        """The agent's ``act`` as the user would look it up: ``mypkg:Agent.act``."""
        cls = type(self.agent)
        where = self.agent_name if ":" in self.agent_name else f"{cls.__module__}:{cls.__qualname__}"
        return f"{where}.act"

    def _give_up(self, action: GiveUp) -> None:
        self.give_ups += 1
        self.end = "gave_up"
        i = self._open_subgoal()
        if i is not None and all(self._dead(t) for t in self.sc.task.subgoals[i].tools):
            self.correct_give_ups += 1
        self.trace.note(self.steps, action="give_up", reason=action.reason)

    def _execute(self, action: CallTool | ListTools | Wait) -> Observation:
        if not isinstance(action, CallTool | ListTools | Wait):
            raise AgentContractError(
                f"{self._act_name()} returned {type(action).__name__}; expected one of {ACTION_NAMES}"
            )
        if isinstance(action, Wait):
            seconds = _wait_seconds(action.seconds)
            if seconds is None:
                raise AgentContractError(
                    f"{self._act_name()} returned Wait({action.seconds!r}); a wait is a finite "
                    "number of seconds, 0 or more"
                )
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
        if tool not in self.needed:  # rare: a call no subgoal asks for
            self._unneeded(tool)
        failed = self.failed_calls
        # The key is only needed once some call has failed; nothing below changes ``arguments``
        # (the wire carries a copy), so building it late gives the same key.
        key = (tool, _call_key(arguments)) if failed else None
        if key is not None and key in failed:
            self.repeated += 1
        if self.changed and self._is_stale(tool, arguments):
            self.stale += 1
        engine = self.engine
        engine.last = self.ran_with = None
        obs = self.host.call(tool, arguments)
        outcome: CallOutcome | None = engine.last
        spec = CATALOGUE.get(tool)
        if spec is not None and spec.store is not None:
            # What a write stored is judged now, at its step, whatever the reply says (a post_commit
            # fault stores and answers a failure): later subgoals' order is judged against it.
            self._judge_store(spec)
        if isinstance(obs, RPCErrorObservation):
            self._count_rpc(obs)
            self._saw(obs.message)
        elif not obs.is_error:
            self.last_error_text = ""
            if outcome is not None and (
                outcome.executed or (outcome.fault is not None and outcome.fault.kind in WRONG_VALUE_KINDS)
            ):
                ran, self.ran_with = self.ran_with, None
                self._executed(tool, arguments, ran, obs if outcome.executed else None)
            return obs
        else:
            self.is_error += 1
            self._saw(obs.text)
        # A failure. Only one no retry can fix makes a later identical call a repeated failing call: a
        # transient, rate-limited or timed-out call may well work the next time.
        fault = None if outcome is None else outcome.fault
        if fault is None or not FAULT_KIND_TABLE[fault.kind].retry_fixes:
            failed.add(key or (tool, _call_key(arguments)))
        return obs

    def _saw(self, text: str | None) -> None:
        """An error reached the agent; its text, if any, is a message it could read."""
        self.last_error_text = text or ""
        if text:
            self.messages_seen += 1

    def _unneeded(self, tool: str) -> None:
        """A call of a tool no subgoal needs: harm if it is a damaging one; misled if the last
        error text the agent saw named it (the text, not the task, sent the agent there)."""
        if tool in DAMAGING_TOOLS:
            self.harmful += 1
            self.trace.note(self.steps, harmful=tool)
        if self.last_error_text and tool in self.last_error_text:
            self.misled += 1
            self.trace.note(self.steps, misled=tool)

    def _count_rpc(self, obs: RPCErrorObservation) -> None:
        if obs.code in self.rpc:
            self.rpc[obs.code] += 1
        else:
            self.rpc_other += 1
        self.trace.note(self.steps, host={"code": obs.code, "message": obs.message})

    # -- the record -------------------------------------------------------------------------------

    def result(self, wall: float) -> SessionResult:
        metrics = self._agent_metrics()  # first: a metrics method that raises breaks the session
        done = len(self.done_at) - self.done_at.count(None)
        total = len(self.done_at)
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
        return SessionResult.of(
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
            recovery_opportunities=int(opportunity),
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
            traceback=self.traceback,
            correct=correct,
            corrupted=self.corrupted,
            duplicated_writes=self.duplicated,
            gave_up=self.end == "gave_up",
            baseline_success=baseline,
            time_to_recover_steps=time_to_recover,
            recover_censored=censored,
            tokens_in=int(metrics.get("tokens_in", 0)),
            tokens_out=int(metrics.get("tokens_out", 0)),
            model_latency_s=float(metrics.get("model_latency_s", 0.0)),
            era=self.era,
            input_requests=self.input_requests,
            inputs_accepted=self.inputs_accepted,
            sources_met=",".join(sorted(self.sources_met)),
            claimed=self.claimed(),
            misreported=self.misreported(),
            order_violations=self.order_violations,
            answers_wrong=self.answers_wrong(),
            messages_seen=self.messages_seen,
            messages_read=int(metrics.get("messages_read", 0)),
            harmful_calls=self.harmful,
            misled=self.misled,
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
