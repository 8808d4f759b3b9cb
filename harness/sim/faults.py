"""Fault injection: rules that wrap catalogue tools and make some calls fail.

A rule names a tool, a kind and *when*: a ``rate`` (each call is hit with that
probability) or an explicit ``calls`` schedule (1-based indices of calls to that
tool). Which calls a rate hits is drawn once per session, up front, from the
session's fault seed, one uniform number per (rule, call index); the seed
depends on (scenario, agent, seed) and never on the strategy, so every
strategy meets the same schedule (:meth:`FaultEngine.schedule_hash` proves it).
Because the draws are uniform numbers compared with the rate, a sweep over
rates with the same seed hits a growing superset of calls (common random numbers).

Failing kinds *raise* :class:`ToolFault` with a readable message: the
server's error-handling strategy decides how that reaches the client (isError
text, a masked text, -32603, or a crash). ``malformed`` and ``silent`` do not
raise: they return content, broken or fake. Each rule is ``explicit`` (the
message says what happened and what to do) or implicit (a bare "request
failed"), after ToolMaze's explicit/implicit split.

=============  =======================================================  ==========================
kind           what the call does                                        what recovers
=============  =======================================================  ==========================
transient      fails ``burst`` times, then the next call works            retry
rate_limited   fails; every call fails until ``retry_after_s`` passes     wait, then retry
permanent      fails now and on every later call to the tool               an alternative tool
bad_argument   fails while ``argument`` is not the ``valid`` form          fix the argument
too_large      fails while ``argument`` (e.g. ``limit``) is above ``max``  narrow the request
timeout        hangs to the per-call limit (virtual time), then fails      retry
malformed      answers truncated JSON or non-text content                  notice, retry
silent         answers a success it did not perform                        verify, redo
=============  =======================================================  ==========================

Time is the session's :class:`Clock` (virtual seconds): nothing here sleeps.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from harness.sim.catalogue import CatalogueTool, World, binary_junk
from harness.sim.seeding import np_random

FAULT_KINDS: tuple[str, ...] = (
    "transient",
    "rate_limited",
    "permanent",
    "bad_argument",
    "too_large",
    "timeout",
    "malformed",
    "silent",
)
"""Every fault kind, in the order of the ``faults_<kind>`` columns."""

RAISING_KINDS: frozenset[str] = frozenset(FAULT_KINDS) - {"malformed", "silent"}
"""Kinds that raise from the tool, so that the strategy decides what the client sees."""

DEFAULT_EXPLICIT: dict[str, bool] = {k: k not in ("malformed", "silent") for k in FAULT_KINDS}
"""A silent fault says nothing by definition; malformed content is implicit unless marked."""

MALFORMED_FORMS: tuple[str, ...] = ("truncated", "binary")

IMPLICIT_MESSAGE = "request failed"
"""What an implicit fault of any failing kind says: nothing about what happened."""


_EMPTY_SCHEDULE_HASH = hashlib.sha256(b"[]").hexdigest()
"""The schedule hash of a session without rules (``schedule()`` is ``[]``)."""


class Clock:
    """Virtual session time in seconds: advanced by steps, waits and hung calls, never by sleeping."""

    def __init__(self) -> None:
        self.now = 0.0

    def advance(self, seconds: float) -> None:
        self.now += seconds


class ToolFault(Exception):
    """An injected tool failure; its message is what an ``is_error`` server shows the model."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


@dataclass(frozen=True)
class FaultRule:
    """One ``[[faults]]`` table of a scenario, validated by :mod:`harness.sim.scenario`."""

    index: int
    kind: str
    tool: str
    rate: float | None = None
    calls: tuple[int, ...] = ()
    explicit: bool = True
    burst: int = 1
    """transient: how many consecutive calls fail before one works."""
    retry_after_s: float = 5.0
    """rate_limited: how long the tool stays blocked once the limit is hit."""
    argument: str | None = None
    """bad_argument / too_large: the argument the fault is about."""
    valid: Any = None
    """bad_argument: the form the tool accepts (the message quotes it when explicit)."""
    max: float | None = None
    """too_large: the largest ``argument`` the tool answers."""
    form: str = "truncated"
    """malformed: ``truncated`` JSON text or ``binary`` non-text content."""


@dataclass(frozen=True)
class InjectedFault:
    """A fault that happened: which rule hit which call, when (step and virtual time)."""

    kind: str
    tool: str
    call: int
    rule: int
    explicit: bool
    step: int
    clock: float

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "tool": self.tool,
            "call": self.call,
            "rule": self.rule,
            "explicit": self.explicit,
        }


@dataclass(frozen=True)
class CallOutcome:
    """What really happened to the last call that reached a tool (ground truth, not the wire)."""

    tool: str
    call: int
    fault: InjectedFault | None
    executed: bool
    """The catalogue function ran and answered (no fault, no exception of its own)."""


@dataclass
class _RuleState:
    sticky: bool = False
    burst_left: int = 0
    exempt: bool = False
    blocked_until: float | None = None


@dataclass
class FaultEngine:
    """The rules of one session, their precomputed schedule and their state.

    The server's tool functions call :meth:`execute`; the session reads
    :attr:`last` and :attr:`log`; the oracle agent asks :meth:`peek`.
    """

    rules: Sequence[FaultRule]
    seed: int
    horizon: int
    clock: Clock
    world: World
    call_timeout_s: float = 30.0
    step: int = 0
    counts: dict[str, int] = field(default_factory=dict)
    log: list[InjectedFault] = field(default_factory=list)
    last: CallOutcome | None = None
    listener: Callable[[InjectedFault], None] | None = None
    """Told of each fault as it is injected (the session writes it to the trace)."""
    _fires: list[tuple[bool, ...]] = field(default_factory=list)
    _states: list[_RuleState] = field(default_factory=list)
    _by_tool: dict[str, list[int]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        # One uniform draw per (rule, call index), rule i on row i, from one generator.
        draws = np_random(self.seed).random((len(self.rules), self.horizon)) if self.rules else None
        for i, rule in enumerate(self.rules):
            if rule.rate is None or draws is None:
                hits = set(rule.calls)
                self._fires.append(tuple([n in hits for n in range(1, self.horizon + 1)]))
            else:
                self._fires.append(tuple((draws[i] < rule.rate).tolist()))
            self._states.append(_RuleState())
            self._by_tool.setdefault(rule.tool, []).append(len(self._states) - 1)

    # -- the schedule ----------------------------------------------------------------

    def scheduled(self, rule: int, call: int) -> bool:
        """Whether ``rule`` is set to hit call number ``call`` (1-based) of its tool."""
        fires = self._fires[rule]
        return 0 < call <= len(fires) and fires[call - 1]

    def schedule(self) -> list[dict[str, Any]]:
        """The whole plan: for each rule, the call indices it is set to hit."""
        return [
            {
                "rule": r.index,
                "kind": r.kind,
                "tool": r.tool,
                "calls": [n + 1 for n, hit in enumerate(self._fires[i]) if hit],
            }
            for i, r in enumerate(self.rules)
        ]

    def schedule_hash(self) -> str:
        """sha256 of :meth:`schedule`: equal across strategies for one (scenario, agent, seed)."""
        if not self.rules:
            return _EMPTY_SCHEDULE_HASH
        text = json.dumps(self.schedule(), separators=(",", ":"), sort_keys=True)
        return hashlib.sha256(text.encode()).hexdigest()

    # -- deciding ----------------------------------------------------------------------

    def _evaluate(
        self, tool: CatalogueTool, args: dict[str, Any], call: int, states: list[_RuleState]
    ) -> int | None:
        now = self.clock.now
        for i in self._by_tool.get(tool.name, ()):
            rule, st = self.rules[i], states[i]
            hit = self.scheduled(i, call)
            kind = rule.kind
            if kind == "permanent":
                if st.sticky or hit:
                    st.sticky = True
                    return i
            elif kind == "rate_limited":
                if st.blocked_until is not None:
                    if now < st.blocked_until:
                        return i
                    st.blocked_until = None  # the first call after the block goes through
                elif hit:
                    st.blocked_until = now + rule.retry_after_s
                    return i
            elif kind == "transient":
                if st.burst_left > 0:
                    st.burst_left -= 1
                    return i
                if st.exempt:
                    st.exempt = False  # "then works on retry"
                elif hit:
                    st.burst_left, st.exempt = rule.burst - 1, True
                    return i
            elif kind == "bad_argument":
                if hit and args.get(rule.argument or "") != rule.valid:
                    return i
            elif kind == "too_large":
                value = args.get(rule.argument or "", tool.default(rule.argument or ""))
                if hit and isinstance(value, int | float) and rule.max is not None and value > rule.max:
                    return i
            elif hit:
                return i
        return None

    def peek(self, tool: CatalogueTool, args: dict[str, Any]) -> str | None:
        """The fault kind the next call of ``tool`` with ``args`` would meet now (oracle only)."""
        # A copy of the states _evaluate may touch (its own tool's); their fields are scalars,
        # so a field-by-field copy is as deep as copy.deepcopy and much cheaper.
        states = list(self._states)
        for i in self._by_tool.get(tool.name, ()):
            states[i] = replace(states[i])
        hit = self._evaluate(tool, args, self.counts.get(tool.name, 0) + 1, states)
        return None if hit is None else self.rules[hit].kind

    def blocked_for(self, tool: str) -> float:
        """Seconds until a rate limit on ``tool`` lifts (0 if none is active)."""
        left = 0.0
        for i in self._by_tool.get(tool, ()):
            until = self._states[i].blocked_until
            if until is not None:
                left = max(left, until - self.clock.now)
        return left

    def is_dead(self, tool: str) -> bool:
        """Whether a permanent fault has hit ``tool`` (it will fail for the rest of the session)."""
        return any(self._states[i].sticky for i in self._by_tool.get(tool, ()))

    # -- executing -----------------------------------------------------------------------

    def execute(self, tool: CatalogueTool, args: dict[str, Any]) -> Any:
        """Run one call of ``tool`` (base argument names) through the rules; record the outcome."""
        name = tool.name
        call = self.counts[name] = self.counts.get(name, 0) + 1
        hit = self._evaluate(tool, args, call, self._states) if name in self._by_tool else None
        if hit is None:
            try:
                result = tool.run(self.world, args)
            except BaseException:
                self.last = CallOutcome(name, call, None, executed=False)
                raise  # a genuine error of the tool itself propagates
            self.last = CallOutcome(name, call, None, executed=True)
            return result
        rule = self.rules[hit]
        fault = InjectedFault(
            rule.kind, tool.name, call, rule.index, rule.explicit, self.step, self.clock.now
        )
        self.log.append(fault)
        if self.listener is not None:
            self.listener(fault)
        self.last = CallOutcome(tool.name, call, fault, executed=False)
        if rule.kind == "silent":
            return tool.fake(self.world, args)
        if rule.kind == "malformed":
            return self._malformed(rule, tool, args, call)
        if rule.kind == "timeout":
            self.clock.advance(self.call_timeout_s)
        raise ToolFault(rule.kind, self._message(rule, tool, args))

    def _malformed(self, rule: FaultRule, tool: CatalogueTool, args: dict[str, Any], call: int) -> Any:
        if rule.form == "binary":
            blob = {
                "type": "resource",
                "resource": {
                    "uri": f"mem://{tool.name}/{call}",
                    "mimeType": "application/octet-stream",
                    "blob": binary_junk(f"{tool.name}:{call}"),
                },
            }
            note = {"type": "text", "text": "[malformed upstream response: binary data]"}
            return [note, blob] if rule.explicit else [blob]
        text = tool.fake(self.world, args)
        cut = text[: max(1, len(text) // 2)]
        return f"[malformed upstream response] {cut}" if rule.explicit else cut

    def _message(self, rule: FaultRule, tool: CatalogueTool, args: dict[str, Any]) -> str:
        if not rule.explicit:
            return "invalid request" if rule.kind == "bad_argument" else IMPLICIT_MESSAGE
        name = tool.name
        if rule.kind == "transient":
            return f"temporary failure in {name}: upstream returned 503; try again"
        if rule.kind == "rate_limited":
            left = math.ceil(max(self.blocked_for(name), 0.0))
            return f"rate limited: too many requests to {name}; retry after {left} s"
        if rule.kind == "permanent":
            return f"{name} is permanently unavailable: its upstream service was retired; use another tool"
        if rule.kind == "bad_argument":
            arg = rule.argument
            got = args.get(arg or "")
            return f"invalid argument '{arg}': {got!r} is not accepted; expected form '{rule.valid}'"
        if rule.kind == "too_large":
            limit = int(rule.max) if rule.max is not None and float(rule.max).is_integer() else rule.max
            return (
                "result too large for one response; "
                f"narrow the request: set '{rule.argument}' to at most {limit}"
            )
        return f"{name} timed out after {self.call_timeout_s:g} s without an answer"
