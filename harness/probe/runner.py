"""Run the rules table against a server command and build the :class:`Report`.

Rules are grouped into lanes (same protocol version, same ``lane``); each lane
gets its own server process and runs in a worker thread, its rules in order of
the handshake state they need (so one process serves a whole lane). A process
that died, or has gone past the state a rule needs, is replaced by a fresh
one. Every exchange is bounded by the session's timeouts, so a probe ends.

A peer that never sent one valid JSON-RPC response, and echoed our messages
back or wrote JSON objects that are no JSON-RPC messages, is not an MCP server:
the report says so in ``not_mcp`` (what the peer did), and the CLI prints that
instead of a verdict table. A peer that is silent, writes only non-JSON lines
or exits is still reported rule by rule: that is how a broken server looks too.
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from harness.probe.outcomes import NOT_RUN, Outcome, shorten, verdict
from harness.probe.report import SILENT, Report, RuleResult
from harness.probe.rules import MAIN, Rule, all_rules
from harness.probe.session import STATE_RANK, ProbeSession, describe
from harness.probe.steps import ProbeContext, ToolCase
from harness.protocol.errors import TransportError
from harness.protocol.messages import Message
from harness.protocol.versions import LATEST_VERSION

DEFAULT_TIMEOUT = 3.0
DEFAULT_STARTUP_TIMEOUT = 10.0
DEFAULT_JOBS = 4


@dataclass(frozen=True)
class ProbeConfig:
    """What to probe and how patiently: per-step ``timeout``, first-reply ``startup_timeout``."""

    command: tuple[str, ...]
    tools: tuple[ToolCase, ...] = ()
    timeout: float = DEFAULT_TIMEOUT
    startup_timeout: float = DEFAULT_STARTUP_TIMEOUT
    jobs: int = DEFAULT_JOBS

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

    def saw(self, session: ProbeSession) -> None:
        """Keep what ``session`` learnt about the peer (the first evidence of each kind)."""
        self.echoed = self.echoed or session.echoed
        self.not_jsonrpc = self.not_jsonrpc or session.not_jsonrpc
        self.responded = self.responded or session.responded


def lanes_of(rules: Sequence[Rule]) -> list[list[Rule]]:
    """Rules grouped by (version, lane) in first-seen order, each sorted by needed state."""
    groups: dict[tuple[str, str], list[Rule]] = {}
    for rule in rules:
        groups.setdefault((rule.version, rule.lane), []).append(rule)
    return [sorted(g, key=lambda r: STATE_RANK[r.state]) for g in groups.values()]


def _run_lane(rules: list[Rule], config: ProbeConfig, context: ProbeContext) -> _LaneResult:
    lane = _LaneResult({}, None)
    outcomes = lane.outcomes
    session: ProbeSession | None = None
    try:
        for rule in rules:
            if session is None or not session.alive or STATE_RANK[session.state] > STATE_RANK[rule.state]:
                if session is not None:
                    lane.saw(session)
                    session.close()
                    session = None
                try:
                    session = ProbeSession(
                        config.command,
                        rule.version,
                        timeout=config.timeout,
                        startup_timeout=config.startup_timeout,
                    )
                except TransportError as exc:
                    outcomes[rule.id] = Outcome(NOT_RUN, str(exc))
                    continue
            failure = session.advance(rule.state)
            outcomes[rule.id] = failure if failure is not None else rule.step(session, context)
            if lane.server_info is None:
                lane.server_info = session.server_info
    finally:
        if session is not None:
            lane.saw(session)
            session.close()
    return lane


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


def run_probe(config: ProbeConfig) -> Report:
    """Probe ``config.command`` with every rule; the report lists rules in table order."""
    rules = all_rules(config.tools)
    context = ProbeContext(config.tools)
    lanes = lanes_of(rules)
    with ThreadPoolExecutor(max_workers=min(config.jobs, len(lanes))) as pool:
        results = list(pool.map(lambda lane: _run_lane(lane, config, context), lanes))
    outcomes: dict[str, Outcome] = {}
    for result in results:
        outcomes.update(result.outcomes)
    main_lane = next(
        i for i, lane in enumerate(lanes) if lane[0].version == LATEST_VERSION and lane[0].lane == MAIN
    )
    server = results[main_lane].server_info or next((r.server_info for r in results if r.server_info), None)
    rows = tuple(
        RuleResult(
            id=rule.id,
            sent=rule.sent,
            version=rule.version,
            reference=rule.reference.text if rule.reference is not None else SILENT,
            spec=rule.spec.text if rule.spec is not None else SILENT,
            observed=outcomes[rule.id].label,
            detail=outcomes[rule.id].detail,
            verdict=verdict(outcomes[rule.id].label, rule.reference, rule.spec),
        )
        for rule in rules
    )
    return Report(config.command, config.timeout, config.startup_timeout, server, rows, not_mcp(results))
