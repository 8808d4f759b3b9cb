"""Run the rules table against a server command and build the :class:`Report`.

Rules are grouped into lanes (same protocol version, same ``lane``); each lane
gets its own server process and runs in a worker thread, its rules in order of
the handshake state they need (so one process serves a whole lane). A process
that died, or has gone past the state a rule needs, is replaced by a fresh
one, unless it died before writing a line: then it would die again, and the
lane's later rules are ``not run`` at once. Every exchange is bounded by the
session's timeouts, so a probe ends.

Replies that came after their step stopped waiting are collected before each
process closes and read into that step's row (its detail says it was late).
The stateless lane (2026-07-28) starts with ``server/discover``; its rows are
reported only if the server speaks the era, and the MRTR rows only if a tool
asked for input. ``eras`` in the report says what each era's evidence was.

Every error the server answered is kept in the report's ``harvested`` (lane by
lane, in table order), followed by those of the configured extra ``calls``
(``harness probe --harvest FILE --calls FILE.toml``), made on a session of
their own once the rules are done (:mod:`harness.probe.harvest`).

A peer that never sent one valid JSON-RPC response, and echoed our messages
back or wrote JSON objects that are no JSON-RPC messages, is not an MCP server:
the report says so in ``not_mcp`` (what the peer did), and the CLI prints that
instead of a verdict table. A peer that is silent, writes only non-JSON lines
or exits is still reported rule by rule: that is how a broken server looks too.
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from harness.probe.harvest import ExtraCall, HarvestRecord, result_record
from harness.probe.outcomes import (
    DISCOVERED,
    ECHO,
    MALFORMED_DISCOVER,
    NOT_RUN,
    OTHER_VERSION,
    Outcome,
    basis,
    shorten,
    verdict,
)
from harness.probe.report import SILENT, Report, RuleResult
from harness.probe.rules import HANDSHAKE_ERA, MAIN, STATELESS_ERA, Rule, all_rules, stateless_rules
from harness.probe.session import STATE_RANK, ProbeSession, describe, is_url
from harness.probe.steps import NOT_OFFERED, ProbeContext, ToolCase, outcome_of
from harness.protocol.errors import TransportError
from harness.protocol.lifecycle import State
from harness.protocol.messages import Message
from harness.protocol.versions import LATEST_VERSION

DEFAULT_TIMEOUT = 3.0
DEFAULT_STARTUP_TIMEOUT = 30.0
"""Seconds a fresh process may stay silent: covers servers that take 20 s to start (``uvx``, ``npx``)."""
DEFAULT_JOBS = 4


@dataclass(frozen=True)
class ProbeConfig:
    """What to probe and how patiently: per-step ``timeout``, first-reply ``startup_timeout``.

    ``command`` is a server command line, or one ``http://`` or ``https://`` URL of a Streamable
    HTTP endpoint that is already listening.
    """

    command: tuple[str, ...]
    tools: tuple[ToolCase, ...] = ()
    timeout: float = DEFAULT_TIMEOUT
    startup_timeout: float = DEFAULT_STARTUP_TIMEOUT
    jobs: int = DEFAULT_JOBS
    calls: tuple[ExtraCall, ...] = ()
    """Extra tool calls made after the rules, only to provoke errors to harvest (not in the rows)."""

    def __post_init__(self) -> None:
        if not self.command:
            raise ValueError("ProbeConfig needs a server command")
        if self.timeout <= 0 or self.startup_timeout <= 0:
            raise ValueError("timeouts must be positive")
        if self.jobs < 1:
            raise ValueError("jobs must be at least 1")


@dataclass
class _LaneResult:
    outcomes: dict[str, Outcome]
    server_info: dict[str, Any] | None
    echoed: Message | None = None
    not_jsonrpc: Message | None = None
    responded: bool = False
    negotiated: dict[str, str] = field(default_factory=dict)
    """Rule id -> the version its session's server answered in initialize."""
    harvested: list[HarvestRecord] = field(default_factory=list)
    """The errors the lane's sessions answered, session by session."""

    def saw(self, session: ProbeSession, rule_ids: Sequence[str]) -> None:
        """Keep what ``session`` learnt: late replies for its rules, the first evidence of each kind."""
        if session.alive and any(self.outcomes[r].late is not None for r in rule_ids):
            session.collect_late(session.timeout)
        for rule_id in rule_ids:
            self.outcomes[rule_id] = late_outcome(self.outcomes[rule_id], session.late)
        self.harvested.extend(session.harvested)
        self.echoed = self.echoed or session.echoed
        self.not_jsonrpc = self.not_jsonrpc or session.not_jsonrpc
        self.responded = self.responded or session.responded


def late_outcome(outcome: Outcome, late: dict[int, Message]) -> Outcome:
    """The outcome of a step whose reply came after it stopped waiting; else ``outcome`` itself."""
    slot = outcome.late
    if slot is None or slot.request_id not in late:
        return outcome
    said = slot.classify(late[slot.request_id])
    detail = shorten(f"late, after the {slot.waited:g}s wait: {said.detail}")
    return Outcome(said.label, detail, evidence=said.evidence, conclusive=said.conclusive)


def lanes_of(rules: Sequence[Rule]) -> list[list[Rule]]:
    """Rules grouped by (version, lane) in first-seen order, each sorted by needed state."""
    groups: dict[tuple[str, str], list[Rule]] = {}
    for rule in rules:
        groups.setdefault((rule.version, rule.lane), []).append(rule)
    return [sorted(g, key=lambda r: STATE_RANK[r.state]) for g in groups.values()]


def open_session(config: ProbeConfig, version: str) -> ProbeSession:
    """A session of ``version`` against the target: a fresh process, or (a URL) a fresh HTTP session."""
    if is_url(config.command):
        from harness.probe.http_link import HTTPProbeSession  # httpx only for a URL

        cls: type[ProbeSession] = HTTPProbeSession
    else:
        cls = ProbeSession
    return cls(config.command, version, timeout=config.timeout, startup_timeout=config.startup_timeout)


def _run_lane(rules: list[Rule], config: ProbeConfig, context: ProbeContext) -> _LaneResult:
    lane = _LaneResult({}, None)
    outcomes = lane.outcomes
    session: ProbeSession | None = None
    served: list[str] = []
    dead: Outcome | None = None
    try:
        for rule in rules:
            if dead is not None:
                outcomes[rule.id] = dead
                continue
            if session is None or not session.alive or STATE_RANK[session.state] > STATE_RANK[rule.state]:
                if session is not None:
                    if session.died_at_start and session.death is not None:
                        # A server that dies before its first line would die again: not restarted.
                        dead = Outcome(
                            NOT_RUN, shorten(f"not restarted, it died at start: {session.death.detail}")
                        )
                        outcomes[rule.id] = dead
                        continue
                    lane.saw(session, served)
                    session.close()
                    session, served = None, []
                try:
                    session = open_session(config, rule.version)
                except TransportError as exc:
                    outcomes[rule.id] = Outcome(NOT_RUN, str(exc))
                    continue
            failure = session.advance(rule.state)
            outcomes[rule.id] = failure if failure is not None else rule.step(session, context)
            served.append(rule.id)
            if session.answered_version is not None:
                lane.negotiated[rule.id] = session.answered_version
            if lane.server_info is None:
                lane.server_info = session.server_info
    finally:
        if session is not None:
            lane.saw(session, served)
            session.close()
    return lane


def run_calls(config: ProbeConfig) -> tuple[list[HarvestRecord], list[tuple[ExtraCall, Outcome]]]:
    """Make ``config.calls`` in order on one handshake-era session (a fresh one after a death):
    the errors they got, and each call's outcome."""
    harvested: list[HarvestRecord] = []
    said: list[tuple[ExtraCall, Outcome]] = []
    session: ProbeSession | None = None
    dead: Outcome | None = None
    try:
        for call in config.calls:
            if dead is not None:
                said.append((call, dead))
                continue
            if session is not None and not session.alive:
                if session.died_at_start and session.death is not None:
                    why = f"not restarted, it died at start: {session.death.detail}"
                    dead = Outcome(NOT_RUN, shorten(why))
                    said.append((call, dead))
                    continue
                harvested.extend(session.harvested)
                session.close()
                session = None
            if session is None:
                try:
                    session = open_session(config, LATEST_VERSION)
                except TransportError as exc:
                    said.append((call, Outcome(NOT_RUN, str(exc))))
                    continue
            failure = session.advance(State.READY)
            if failure is not None:
                said.append((call, failure))
                continue
            session.timeout = call.timeout or config.timeout
            try:
                reply = session.request("tools/call", {"name": call.tool, "arguments": call.arguments})
            finally:
                session.timeout = config.timeout
            if reply.message is not None:
                kept = result_record(call, reply.message)
                if kept is not None:
                    session.harvested.append(kept)
            said.append((call, outcome_of(reply, call.tool)))
    finally:
        if session is not None:
            if session.alive:
                session.collect_late(max(c.timeout or config.timeout for c in config.calls))
            harvested.extend(session.harvested)
            session.close()
    return harvested, said


def not_mcp(lanes: Sequence[_LaneResult]) -> str | None:
    """What the peer did that shows it is not an MCP server, or None if it may be one.

    Not an MCP server: no valid JSON-RPC response in any lane, and the peer echoed
    our own messages or wrote JSON objects that are no JSON-RPC messages.
    """
    if any(lane.responded for lane in lanes):
        return None
    echoed = next((lane.echoed for lane in lanes if lane.echoed is not None), None)
    if echoed is not None:
        return shorten(f"it echoed our requests back instead of answering them (first: {describe(echoed)})")
    stray = next((lane.not_jsonrpc for lane in lanes if lane.not_jsonrpc is not None), None)
    if stray is not None:
        return shorten(f"it answered no valid JSON-RPC response to initialize (it wrote {describe(stray)})")
    return None


def eras_of(outcomes: dict[str, Outcome]) -> dict[str, dict[str, Any]]:
    """Which eras the server speaks, from the rows that ask: initialize answers, server/discover."""
    asked = {r.removeprefix("version."): o for r, o in outcomes.items() if r.startswith("version.")}
    echoed = [version for version, o in asked.items() if o.label == ECHO]
    answered = [o for o in asked.values() if o.label in (ECHO, OTHER_VERSION)]
    if echoed:
        evidence = f"initialize echoed {', '.join(echoed)}"
    elif answered:
        evidence = answered[0].detail
    else:
        # What an initialize got; a row that was not run says less than one that was.
        tried = [o for o in asked.values() if o.label != NOT_RUN] or list(asked.values())
        evidence = _said("initialize", next(iter(tried), None))
    handshake = {"spoken": bool(answered), "evidence": evidence}
    found = outcomes.get("stateless.discover")
    stateless = {
        "spoken": found is not None and found.label in (DISCOVERED, MALFORMED_DISCOVER),
        "evidence": _said("server/discover", found),
    }
    return {HANDSHAKE_ERA: handshake, STATELESS_ERA: stateless}


def _said(method: str, outcome: Outcome | None) -> str:
    if outcome is None:
        return f"{method} not sent"
    return shorten(f"{method}: {outcome.label}" + (f": {outcome.detail}" if outcome.detail else ""))


def _reported(rule: Rule, outcome: Outcome, eras: dict[str, dict[str, Any]]) -> bool:
    # Stateless rows only where the era is spoken; MRTR rows only where a tool asked for input.
    if rule.era == STATELESS_ERA and not eras[STATELESS_ERA]["spoken"]:
        return False
    return outcome != NOT_OFFERED


def run_probe(config: ProbeConfig) -> Report:
    """Probe ``config.command`` with every rule; the report lists rules in table order, era by era."""
    rules = all_rules(config.tools) + stateless_rules(config.tools)
    context = ProbeContext(config.tools)
    lanes = lanes_of(rules)
    with ThreadPoolExecutor(max_workers=min(config.jobs, len(lanes))) as pool:
        results = list(pool.map(lambda lane: _run_lane(lane, config, context), lanes))
    outcomes: dict[str, Outcome] = {}
    negotiated: dict[str, str] = {}
    harvested: list[HarvestRecord] = []
    for result in results:
        outcomes.update(result.outcomes)
        negotiated.update(result.negotiated)
        harvested.extend(result.harvested)
    called: list[tuple[ExtraCall, Outcome]] = []
    if config.calls:
        found, called = run_calls(config)
        harvested.extend(found)
    main_lane = next(
        i for i, lane in enumerate(lanes) if lane[0].version == LATEST_VERSION and lane[0].lane == MAIN
    )
    server = results[main_lane].server_info or next((r.server_info for r in results if r.server_info), None)
    eras = eras_of(outcomes)
    spoken = frozenset(era for era, found in eras.items() if found["spoken"])
    rows = tuple(
        _row(rule, outcomes[rule.id], negotiated.get(rule.id), spoken)
        for rule in rules
        if _reported(rule, outcomes[rule.id], eras)
    )
    return Report(
        config.command,
        config.timeout,
        config.startup_timeout,
        server,
        rows,
        not_mcp(results),
        eras,
        harvested=tuple(harvested),
        calls=tuple(called),
    )


def _row(rule: Rule, outcome: Outcome, negotiated: str | None, spoken: frozenset[str]) -> RuleResult:
    """One report row: the spec's expectation is the one of the version the server negotiated
    (and the one for the eras the server speaks, where the rule has one: :meth:`Rule.spec_given`)."""
    spec = rule.spec_given(negotiated, spoken)
    spec_text = spec.text if spec is not None else SILENT
    if negotiated is not None and negotiated != rule.version and rule.spec_by_version:
        spec_text += f"; judged under {negotiated}, the version negotiated"
    found = verdict(outcome.label, rule.reference, spec, conclusive=outcome.conclusive)
    return RuleResult(
        id=rule.id,
        sent=rule.sent,
        version=rule.version,
        reference=rule.reference.text if rule.reference is not None else SILENT,
        spec=spec_text,
        observed=outcome.label,
        detail=outcome.detail,
        verdict=found,
        era=rule.era,
        basis=basis(found, rule.reference, spec),
        negotiated=negotiated if negotiated != rule.version else None,
        evidence=outcome.evidence,
        reading=_reading(rule.id, outcome),
    )


_READ_RULES = ("tools.", "args.")
"""Rules whose error is a tool call's: a reader (and a server author) can ask what its text says."""


def _reading(rule_id: str, outcome: Outcome) -> dict[str, Any] | None:
    """What a reader takes from a tool call's error text (the text after the call in ``detail``)."""
    if not rule_id.startswith(_READ_RULES) or not outcome.label.startswith(("error", "isError")):
        return None
    from harness.reading import read

    # ``detail`` may be the text shortened with an ellipsis: what a reader takes is then of the part shown.
    text = outcome.detail.split(" -> ", 1)[-1].removeprefix("ERROR: ").rstrip("…")
    return read(text).to_json() if text else None
