"""One session: a scripted agent pursues a scenario's task through a real MCP client.

The stack, bottom to top::

    catalogue tool  <- fault rules (harness.faults.kinds) wrap it; failures raise
    MCPServer       <- tool_errors=strategy decides what a raising tool becomes
    InMemoryTransport (real serialization; its tap writes the JSONL trace)
    MCPClient       <- handshake, ids, pump_notifications
    Host            <- what reaches the model (harness.session.host: typical | transparent)
    Agent           <- reset(task, tools, seed); act(observation) -> action

Each step is one action. Time is virtual (the session :class:`~harness.faults.kinds.Clock`:
``step_cost_s`` per step, a ``Wait``'s seconds, ``call_timeout_s`` for a hung
call), so a session never sleeps and a step costs microseconds. Events from
the scenario act on the server directly between steps; their notifications
reach the agent on the next observation.

Seeds (sha256, :mod:`harness.seeding`): the fault schedule is derived from
(scenario, seed) only -- never from the agent, the strategy or the host -- so every
agent and every strategy meets the same schedule and every comparison is paired; the
agent's generator from (scenario, agent, seed).

The result is one flat record (:mod:`harness.session.row` defines its columns, the same
for every session, zero-filled). The end state, not the wire, decides ``success``
(:mod:`harness.scenarios.outcome`): a read subgoal is done by a call that really ran with
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
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from harness.faults.kinds import FAULT_KINDS, CallOutcome, FaultEngine, FaultRule, ToolFault
from harness.protocol.client import MCPClient
from harness.protocol.inputs import InputRequest, InputRequired, ask, elicit
from harness.protocol.memory import InMemoryTransport
from harness.protocol.server import MCPServer
from harness.protocol.strategies import ASKING_STRATEGIES
from harness.protocol.versions import STATELESS_VERSION
from harness.scenarios.outcome import completes, is_write, judge_record, record_arguments, satisfies
from harness.scenarios.scenario import MAX_STEPS_LIMIT, Event, Scenario, load_scenario
from harness.seeding import derive_seed
from harness.session.agent import RPCErrorObservation, ToolResult
from harness.session.host import Host
from harness.session.loop import (
    AGENT_METRICS,
    BASELINE_STRATEGY,
    ERAS,
    ORACLE,
    AgentContractError,
    Baseline,
    BaselineCache,
    LoopKind,
    OracleView,
    SessionLoop,
    oracle_fails,
)
from harness.session.registry import make_agent
from harness.session.row import ENDS, ROW_COLUMNS, RPC_CODES, STATUSES, SessionResult, summary_row
from harness.session.trace import Trace
from harness.sim.catalogue import CATALOGUE, DAMAGING_TOOLS, JSON, CatalogueTool, World

__all__ = [
    "AGENT_METRICS",
    "BASELINE_STRATEGY",
    "ENDS",
    "ERAS",
    "FAULT_KINDS",
    "ROW_COLUMNS",
    "RPC_CODES",
    "SIMULATED",
    "STATUSES",
    "AgentContractError",
    "Baseline",
    "SessionResult",
    "run_baseline",
    "run_session",
    "summary_row",
]


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
    first = oracle_fails(_Session, sc, tried, era)
    if first is None:
        return Solvability(sc.name, True, faults, seeds=tried)
    assert isinstance(first, _Session)
    why = _why_not(first, () if faults else scenario.faults)
    if first.end == "budget" and first.status == "ok" and not first.corrupted:
        why = _budget_too_small(first, era)
    return Solvability(sc.name, False, faults, first.undone(), why, tried)


ROOMY = 10
"""How many times its budget the oracle is given to find out whether a budget is only too small."""


def _budget_too_small(run: _Session, era: str) -> str:
    """When the oracle ran out of steps: how many it needs, found with ``ROOMY`` times the budget
    (the fault schedule keeps its draws for the earlier calls); else why more do not help."""
    sc = run.sc
    roomy = _Session(replace(sc, max_steps=min(sc.max_steps * ROOMY, MAX_STEPS_LIMIT)), make_agent(ORACLE),
                     ORACLE, BASELINE_STRATEGY, run.seed, "json", "typical", Trace(), era)  # fmt: skip
    roomy.go()
    if roomy.verdict().success:
        return (f"the step budget is too small for the oracle: max_steps = {sc.max_steps}, and it needs "
                f"{roomy.tally.steps} steps in seed {run.seed} (given {roomy.sc.max_steps})")  # fmt: skip
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
    if run.end == "gave_up" and goal is not None and all(run.dead(t) for t in goal.tools):
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


CLAIM_VALUES: tuple[str, ...] = ("done", "gave_up", "budget", "deadline", "none")
"""What the ``claimed`` column can say."""

WRONG_VALUE_KINDS: frozenset[str] = frozenset({"stale", "wrong_units", "partial"})
"""Faults whose read reached the tool with the task's arguments but answered a wrong value: the
read is done (the call was made), and the value the agent reports is what is judged."""


class _Session(SessionLoop):
    """One simulated session: the catalogue's tools behind an ``MCPServer`` over the in-memory
    transport, the fault engine, the events, and the store the end state is judged by (private;
    the record is the interface). The loop and the counts are :class:`~harness.session.loop.SessionLoop`'s."""

    def setup(self) -> None:
        sc, agent, strategy, seed, codec, host, trace, era = (
            self.sc,
            self.agent,
            self.strategy,
            self.seed,
            self.codec,
            self.host_mode,
            self.trace,
            self.era,
        )
        self.asking = strategy in ASKING_STRATEGIES
        self.asked: dict[str, tuple[str, InputRequest, ToolFault]] = {}
        """tool -> (key, question, the fault it stands for) of the question its last call asked."""
        self.input_requests = self.inputs_accepted = 0
        self.ran_with: dict[str, Any] | None = None
        """The arguments (base names) the last call ran with, when an answer changed them."""
        self.world = World()
        self.engine = engine = FaultEngine(
            sc.faults,
            derive_seed("faults", sc.name, seed),
            sc.max_steps + 1,
            self.clock,
            self.world,
            sc.call_timeout_s,
        )
        engine.listener = self.on_fault
        engine.on_drift = self._drift
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
            input_handler=self.answer_input if self.asking and agent.answers_input() else None,
        )
        self.host = Host(self.client, host)
        self.stored_seen: dict[str, list[JSON]] = {}
        """The records of each store judged so far (the objects: a store a damaging tool emptied
        and a write refilled has records at the old positions that were never judged)."""
        self.corrupted = self.duplicated = self.premature = 0
        self.pending: list[Event] = list(sc.events)
        self.predecessors = sc.task.predecessors
        self._answers_wrong: int | None = None
        self.changed: dict[str, str] = {}
        self.revoked: set[str] = set()

    # -- the server side --------------------------------------------------------------------

    def open(self) -> tuple[MCPClient, Host]:
        assert self.client is not None and self.host is not None
        return self.client, self.host

    def _register(self, name: str, variant: str | None, notify: bool) -> None:
        spec = CATALOGUE[name]
        execute = self._asking_call if self.asking else self.engine_of().execute

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
        (:attr:`~harness.faults.kinds.FaultKind.asks`) asks the client for it instead of failing.

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
                    self.note(input={"tool": spec.name, "answer": answer.get("action")})
                    raise fault  # declined: the call fails as it did
                self.inputs_accepted += 1
                self.note(input={"tool": spec.name, "accepted": content[argument]})
                arguments = {**arguments, argument: content[argument]}
                self.ran_with = arguments  # the end state judges what ran, not what the agent sent
        try:
            return self.engine_of().execute(spec, arguments)
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

    def _now(self) -> float:
        return self.clock.now

    def _drift(self, tool: str, variant: str) -> None:
        """A schema_drift fault: the tool's inputSchema becomes ``variant``'s, without notice."""
        self._register(tool, variant, notify=False)
        self.changed[tool] = "change_schema"
        self.note(drift={"tool": tool, "variant": variant})

    def _apply(self, ev: Event) -> None:
        self.note(event=ev.to_json())
        if ev.kind == "add_tool":
            self._register(ev.tool, None, ev.notify)
        elif ev.kind == "change_schema":
            if not (ev.variant is None or isinstance(ev.variant, str)):  # a proxy's renames table
                raise ValueError(f"event {ev.index}: a simulated change_schema names a catalogue variant")
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

    def between_steps(self) -> None:
        """The scenario's events that are due act on the server; their notifications reach the
        agent with its next observation."""
        if not self.pending:
            return
        for ev in list(self.pending):
            if (ev.at_step is not None and self.tally.steps >= ev.at_step) or (
                ev.at_call is not None and self.tally.tool_calls >= ev.at_call
            ):
                self.pending.remove(ev)
                self._apply(ev)

    def callable_now(self, tool: str) -> bool:
        allowed = self.server.allowed_tools
        return tool in self.server.tools and (allowed is None or tool in allowed)

    def oracle_view(self) -> Any:
        return _OracleView(self)

    # -- ground truth: the end state (harness.scenarios.outcome) ----------------------------------

    def _done(self) -> list[bool]:
        return [d is not None for d in self.done_at]

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
            return  # a write: judged by what it stored, as soon as the call returned (send)
        ran = base if base is not None else spec.to_base(arguments, self.variants.get(tool))
        i = completes(self.subgoals, self._done(), tool, ran)
        if i is not None and self._in_order(i):
            self.done_at[i] = self.tally.steps
            # The truth a reported answer is held to: what the tool answered, or, where a fault
            # rewrote the answer, what it would have answered (reads are pure: now is then).
            self.truth[self.subgoals[i].name] = (
                answered if answered is not None else spec.run(self.world, dict(ran))
            )
            self.note(done=self.subgoals[i].name)

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
                self.note(undone=goal.name)

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
                    self.done_at[i] = self.tally.steps
                else:  # stored before what it depends on: it does not count, and it stays stored
                    verdict = "out_of_order"
                    self.premature += 1
            elif verdict == "duplicate":
                self.duplicated += 1
            else:
                self.corrupted += 1
            name = None if i is None else self.subgoals[i].name
            self.note(stored=spec.name, judged=verdict, subgoal=name)
        seen.extend(fresh)

    def conclude(self) -> None:
        """Every write is judged by the store (none is left); a deletion may undo one done earlier."""
        for spec in CATALOGUE.values():
            if spec.store is not None:
                self._judge_store(spec)
        if self.tally.harmful_calls:  # something was deleted: a write done earlier may be gone again
            self._recheck_writes()

    def spoiled(self) -> int:
        """Records that satisfy no subgoal, writes stored twice, writes before what they need."""
        return self.corrupted + self.duplicated + self.premature

    def _in_order(self, i: int) -> bool:
        """Whether subgoal ``i`` may count now: what it depends on (the one before it, under the
        task's strict order, and its ``after``) is done. Else it is an order violation."""
        done_at = self.done_at
        for j in self.predecessors[i]:
            if done_at[j] is None:
                break
        else:
            return True
        self.tally.order_violations += 1
        self.note(out_of_order=self.subgoals[i].name)
        return False

    def count_answers_wrong(self) -> int:
        """Counted once: it is asked after the session has ended."""
        if self._answers_wrong is None:
            self._answers_wrong = super().count_answers_wrong()
        return self._answers_wrong

    def is_stale(self, tool: str, arguments: dict[str, Any]) -> bool:
        change = self.changed.get(tool) if self.changed else None
        if change is None:
            return False
        if change == "remove_tool":
            return tool not in self.server.tools
        if change == "revoke":
            return tool in self.revoked
        if change == "change_schema":
            return self.server.tools[tool].argument_problem(arguments) is not None
        return False

    def dead(self, tool: str) -> bool:
        return self.engine_of().is_dead(tool) or not self.callable_now(tool)

    # -- a call ---------------------------------------------------------------------------------

    def send(self, tool: str, arguments: dict[str, Any]) -> ToolResult | RPCErrorObservation:
        engine = self.engine_of()
        engine.last = self.ran_with = None
        assert self.host is not None
        obs = self.host.call(tool, arguments)
        spec = CATALOGUE.get(tool)
        if spec is not None and spec.store is not None:
            # What a write stored is judged now, at its step, whatever the reply says (a post_commit
            # fault stores and answers a failure): later subgoals' order is judged against it.
            self._judge_store(spec)
        return obs

    def answered(self, tool: str, arguments: dict[str, Any], obs: ToolResult) -> None:
        outcome: CallOutcome | None = self.engine_of().last
        if outcome is not None and (
            outcome.executed or (outcome.fault is not None and outcome.fault.kind in WRONG_VALUE_KINDS)
        ):
            ran, self.ran_with = self.ran_with, None
            self._executed(tool, arguments, ran, obs if outcome.executed else None)

    def unneeded(self, tool: str) -> None:
        """A call of a tool no subgoal needs: harm if it is a damaging one; misled if the last
        error text the agent saw named it (the text, not the task, sent the agent there)."""
        if tool in DAMAGING_TOOLS:
            self.harm(tool)
        self.misled_by(tool)

    # -- the record -------------------------------------------------------------------------------

    def result(self, wall: float) -> SessionResult:
        return self.record(
            wall,
            fault_schedule_hash=self.engine_of().schedule_hash(),
            corrupted=self.corrupted,
            duplicated_writes=self.duplicated,
            input_requests=self.input_requests,
            inputs_accepted=self.inputs_accepted,
        )


BASELINE_CACHE_SIZE = 4096
"""Baselines kept per process (:class:`harness.session.loop.BaselineCache`)."""

_BASELINES = BaselineCache(BASELINE_CACHE_SIZE)

SIMULATED = LoopKind("simulated", _Session, load_scenario, _BASELINES)
"""The simulated kind of session: the catalogue's tools behind an ``MCPServer`` over the in-memory
transport (:class:`_Session`), the loop :class:`harness.session.loop.SessionLoop`'s."""

run_session = SIMULATED.run_session
"""One simulated session with its fault-free baseline: ``run_session(scenario, agent, strategy,
seed, codec="json", trace=None, *, host="typical", agent_params=None, era="handshake",
baseline=None)`` runs one and returns its record (:meth:`harness.session.loop.LoopKind.run_session`)."""
run_baseline = SIMULATED.run_baseline
"""``run_baseline(scenario, agent, seed, ...)`` runs the baseline alone, which a batch runs once
per key and hands to the sessions."""


class _OracleView(OracleView):
    """The oracle's view of a simulated session: the catalogue's tools, the server's schemas."""

    def __init__(self, session: _Session) -> None:
        super().__init__(session)
        self._sim = session

    def callable_now(self, tool: str) -> bool:
        return self._sim.callable_now(tool)

    def schema(self, tool: str) -> dict[str, Any]:
        return dict(self._sim.server.tools[tool].input_schema)

    def fixes(self, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        return self.avoiding_faults(tool, CATALOGUE[tool], arguments)

    def peek(self, tool: str, arguments: dict[str, Any]) -> str | None:
        spec = CATALOGUE[tool]
        return self._sim.engine_of().peek(spec, spec.to_base(arguments, self._sim.variants.get(tool)))

    def will_appear(self, tool: str) -> bool:
        pending = self._sim.pending
        return any(e.tool == tool and e.kind == "add_tool" and e.at_step is not None for e in pending)
