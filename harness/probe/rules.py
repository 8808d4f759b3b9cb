"""The probe's rules, as one table: what is sent, in which session, and what is expected.

Each :class:`Rule` row names its step (:mod:`harness.probe.steps`), the
protocol version and handshake state its session must be in, a ``lane`` (rules
sharing a version and a lane share one server process; each lane runs in its
own process, in parallel), and two expectations: the reference's (the rules
this project's core follows, stated in ``docs/protocol.md``: the 2025-06-18
contract) and the current MCP specification's. ``None`` means that source is
silent. Verdicts come from :func:`harness.probe.outcomes.verdict`.

Rules about malformed input each get a lane of their own, so a server that
never answers them costs one timeout in parallel, not one after another.

Each rule belongs to an era. The handshake rules (:data:`RULES`) run against
every server. The stateless rules (:func:`stateless_rules`, version
2026-07-28, no reference: the reference is the handshake-era contract) run in
a lane of their own that starts with ``server/discover``; their rows are
reported only where the server says it speaks 2026-07-28.

A rule whose spec expectation changed between versions (invalid arguments,
SEP-1303) lists them in ``spec_by_version``; its verdict uses the version the
server *negotiated* in that session, not the one the probe asked for. A rule whose
expectation depends on the eras the server speaks says so in ``spec_dual_era`` and
``spec_stateless_only`` (:meth:`Rule.spec_given`): ``handshake.before_initialize``
and ``stateless.no_meta`` send the same message and accept the same answers
(:data:`ANSWERED_OR_REFUSED`).
"""

from __future__ import annotations

import json
from collections.abc import Collection
from dataclasses import dataclass

from harness.probe.outcomes import (
    DISCOVERED,
    ECHO,
    EMPTY_RESULT,
    INPUT_REQUIRED,
    IS_ERROR_MASKED,
    IS_ERROR_REASON,
    OTHER_VERSION,
    PAGINATED,
    REFUSED,
    RESULT,
    SINGLE_PAGE,
    UNSUPPORTED_VERSION,
    Expect,
)
from harness.probe.steps import (
    UNKNOWN_METHOD,
    UNKNOWN_TOOL,
    AskStatelessVersion,
    AskVersion,
    BadArguments,
    Bare,
    BogusCursor,
    CallTool,
    Discover,
    ListPages,
    Mrtr,
    RawLine,
    Request,
    Step,
    ToolCase,
)
from harness.protocol.lifecycle import State
from harness.protocol.versions import (
    ALL_VERSIONS,
    LATEST_VERSION,
    SEP_1303_VERSION,
    STATELESS_VERSION,
    SUPPORTED_VERSIONS,
    at_least,
)

HANDSHAKE_ERA = "handshake"
STATELESS_ERA = "stateless"
ERAS: tuple[str, ...] = (HANDSHAKE_ERA, STATELESS_ERA)
"""The protocol eras a probe reports on: ``initialize`` first (<= 2025-11-25), or per-request ``_meta``."""

MAIN = "main"
UNKNOWN_VERSION = "2000-01-01"
"""A protocolVersion no MCP revision has (older than the first), for the negotiation rule."""
PRE_SEP_1303 = "2025-06-18"
"""The last revision in which invalid tool arguments are protocol errors (-32602)."""


@dataclass(frozen=True)
class Rule:
    """One row: ``step`` runs in a ``version`` session driven to ``state``, in ``lane``."""

    id: str
    sent: str
    version: str
    state: State
    step: Step
    reference: Expect | None
    spec: Expect | None
    lane: str = MAIN
    era: str = HANDSHAKE_ERA
    spec_by_version: tuple[tuple[str, Expect], ...] = ()
    """(first version, expectation) pairs, oldest first: the spec's rule as it changed."""
    spec_dual_era: Expect | None = None
    """The spec's expectation of a server that speaks both eras, where it differs from ``spec``."""
    spec_stateless_only: Expect | None = None
    """The spec's expectation of a server that speaks only 2026-07-28, where it differs from ``spec``."""

    def spec_for(self, negotiated: str | None) -> Expect | None:
        """The spec's expectation under the version the server negotiated (``spec`` if unknown)."""
        if not self.spec_by_version or negotiated not in ALL_VERSIONS:
            return self.spec
        chosen = self.spec
        for first, expect in self.spec_by_version:
            if at_least(negotiated, first):
                chosen = expect
        return chosen

    def spec_given(self, negotiated: str | None, spoken: Collection[str]) -> Expect | None:
        """The spec's expectation of a server that speaks the eras in ``spoken``, under ``negotiated``."""
        if self.spec_dual_era is not None and set(spoken) >= set(ERAS):
            return self.spec_dual_era
        if self.spec_stateless_only is not None and set(spoken) == {STATELESS_ERA}:
            return self.spec_stateless_only
        return self.spec_for(negotiated)


def _err(code: int, why: str = "") -> Expect:
    return Expect(f"error {code}" + (f" ({why})" if why else ""), (f"error {code}",))


ANY_ERROR = Expect("a JSON-RPC error (any code)", ("error *",))
TOOL_REASON = Expect("isError with the reason", (IS_ERROR_REASON,))

ANSWERED_OR_REFUSED: tuple[str, ...] = (RESULT, EMPTY_RESULT, "error *", REFUSED)
"""What the spec lets a server answer to a request without ``_meta`` before ``initialize``.

``handshake.before_initialize`` and ``stateless.no_meta`` send the same message (``tools/list``,
no ``_meta``, no ``initialize`` before it on the connection), so they share what they accept: to a
server that speaks the handshake era this is a handshake-era request before ``initialize``, which
the spec lets it answer or refuse; to one that speaks only 2026-07-28 it is a request missing its
``_meta`` (-32602, :data:`MISSING_META`), in both rows.
"""
MISSING_META = _err(-32602, "a required _meta field is missing")

HANDSHAKE_RULES: tuple[Rule, ...] = (
    Rule(
        "handshake.ping_first",
        "ping as the very first message",
        LATEST_VERSION,
        State.NEW,
        Request("ping"),
        _err(-32600, "only initialize is ungated"),
        Expect("empty result (ping works at any time)", (EMPTY_RESULT,)),
    ),
    Rule(
        "handshake.before_initialize",
        "tools/list before initialize",
        LATEST_VERSION,
        State.NEW,
        Request("tools/list"),
        _err(-32600, "server not initialized"),
        Expect("answered or refused (the spec obliges only the client)", ANSWERED_OR_REFUSED, required=False),
        spec_stateless_only=MISSING_META,
    ),
    Rule(
        "handshake.before_initialized",
        "tools/list after initialize, before notifications/initialized",
        LATEST_VERSION,
        State.INITIALIZING,
        Request("tools/list"),
        _err(-32600, "server not initialized"),
        Expect("answered or refused (left open)", (RESULT, "error *"), required=False),
    ),
)

ENVELOPE_RULES: tuple[Rule, ...] = (
    Rule(
        "envelope.id_null",
        '{"id": null, "method": "ping"}',
        LATEST_VERSION,
        State.READY,
        RawLine(b'{"jsonrpc":"2.0","id":null,"method":"ping"}'),
        _err(-32600, "null is not a request id"),
        _err(-32600, "ids are never null"),
        lane="id-null",
    ),
    Rule(
        "envelope.jsonrpc_1_0",
        '{"jsonrpc": "1.0", "method": "ping"}',
        LATEST_VERSION,
        State.READY,
        RawLine(b'{"jsonrpc":"1.0","id":$ID,"method":"ping"}'),
        _err(-32600),
        _err(-32600, 'jsonrpc must be "2.0"'),
        lane="jsonrpc-1.0",
    ),
    Rule(
        "envelope.unparseable",
        "truncated JSON",
        LATEST_VERSION,
        State.READY,
        RawLine(b'{"jsonrpc":"2.0","id":$ID,"method":"ping"'),
        _err(-32700, "id null"),
        _err(-32700),
        lane="unparseable",
    ),
)

METHOD_RULES: tuple[Rule, ...] = (
    Rule(
        "method.unknown",
        f"{UNKNOWN_METHOD}",
        LATEST_VERSION,
        State.READY,
        Request(UNKNOWN_METHOD),
        _err(-32601),
        _err(-32601),
    ),
    Rule(
        "method.ping",
        "ping in a live session",
        LATEST_VERSION,
        State.READY,
        Request("ping"),
        None,
        Expect("empty result", (EMPTY_RESULT,)),
    ),
    Rule(
        "tools.unknown",
        f"tools/call {UNKNOWN_TOOL}",
        LATEST_VERSION,
        State.READY,
        CallTool(UNKNOWN_TOOL),
        _err(-32601, "a tool is not a method"),
        Expect("a JSON-RPC error (spec example: -32602)", ("error *",)),
    ),
)

BEFORE_SEP_1303 = _err(-32602, "before SEP-1303")
SINCE_SEP_1303 = Expect("isError with the reason (SEP-1303)", (IS_ERROR_REASON,))
ARGUMENTS_BY_VERSION: tuple[tuple[str, Expect], ...] = (
    (SUPPORTED_VERSIONS[0], BEFORE_SEP_1303),
    (SEP_1303_VERSION, SINCE_SEP_1303),
)
"""Invalid tool arguments: a protocol error until SEP-1303, a tool execution error from it on."""

ARGUMENT_RULES: tuple[Rule, ...] = tuple(
    Rule(
        f"args.{kind}@{version}",
        f"tools/call, {what}, under {version}",
        version,
        State.READY,
        BadArguments(kind),
        _err(-32602),
        BEFORE_SEP_1303 if version == PRE_SEP_1303 else SINCE_SEP_1303,
        spec_by_version=ARGUMENTS_BY_VERSION,
    )
    for version in (PRE_SEP_1303, LATEST_VERSION)
    for kind, what in (("missing", "required arguments missing"), ("wrong_type", "an argument mistyped"))
)

LIST_RULES: tuple[Rule, ...] = (
    Rule(
        "list.pagination",
        "tools/list, following nextCursor",
        LATEST_VERSION,
        State.READY,
        ListPages(),
        Expect("one page", (SINGLE_PAGE,)),
        Expect("one page, or pages that end", (SINGLE_PAGE, PAGINATED)),
    ),
    Rule(
        "list.bogus_cursor",
        "tools/list with a cursor never issued",
        LATEST_VERSION,
        State.READY,
        BogusCursor(),
        None,
        _err(-32602, "invalid cursor"),
    ),
)

VERSION_RULES: tuple[Rule, ...] = tuple(
    Rule(
        f"version.{version}",
        f"initialize asking for {version}",
        version,
        State.NEW,
        AskVersion(version),
        Expect("echo", (ECHO,)) if version == PRE_SEP_1303 else None,
        Expect("echo if supported, else another it supports", (ECHO, OTHER_VERSION))
        if version in SUPPORTED_VERSIONS
        else Expect("another version it supports", (OTHER_VERSION,)),
    )
    for version in (*SUPPORTED_VERSIONS, UNKNOWN_VERSION)
)

RULES: tuple[Rule, ...] = (
    HANDSHAKE_RULES + ENVELOPE_RULES + METHOD_RULES + ARGUMENT_RULES + LIST_RULES + VERSION_RULES
)
"""Every fixed rule, in report order."""


def tool_rules(cases: tuple[ToolCase, ...]) -> tuple[Rule, ...]:
    """One rule per user-named tool case: does its failure reach the agent with the reason?"""
    rules = []
    seen: dict[str, int] = {}
    for case in cases:
        seen[case.name] = seen.get(case.name, 0) + 1
        suffix = "" if seen[case.name] == 1 else f"#{seen[case.name]}"
        rules.append(
            Rule(
                f"tool.{case.name}{suffix}",
                f"tools/call {case.name} {_compact(case.arguments)}",
                LATEST_VERSION,
                State.READY,
                CallTool(case.name, case.arguments, case.reason),
                TOOL_REASON,
                TOOL_REASON,
            )
        )
    return tuple(rules)


def _stateless(
    rule_id: str, sent: str, state: State, step: Step, spec: Expect, dual_era: Expect | None = None
) -> Rule:
    return Rule(
        rule_id, sent, STATELESS_VERSION, state, step, None, spec, era=STATELESS_ERA, spec_dual_era=dual_era
    )


STATELESS_FIXED: tuple[Rule, ...] = (
    _stateless(
        "stateless.discover",
        "server/discover with the 2026-07-28 _meta",
        State.NEW,
        Discover(),
        Expect("a DiscoverResult listing 2026-07-28, with capabilities", (DISCOVERED,)),
    ),
    _stateless(
        "stateless.meta",
        "tools/list carrying the per-request _meta",
        State.READY,
        Request("tools/list"),
        Expect("a result with resultType, served without a handshake", (RESULT,)),
    ),
    _stateless(
        "stateless.no_meta",
        "tools/list with no _meta",
        State.READY,
        Bare("tools/list"),
        MISSING_META,
        dual_era=Expect(
            "answered or refused (a dual-era server may read it as a handshake-era request sent before "
            "initialize)",
            ANSWERED_OR_REFUSED,
            required=False,
        ),
    ),
    _stateless(
        "stateless.unsupported_version",
        f"tools/list whose _meta asks for {UNKNOWN_VERSION}",
        State.READY,
        AskStatelessVersion(UNKNOWN_VERSION),
        Expect("error -32022 naming the supported versions", (UNSUPPORTED_VERSION,)),
    ),
)
"""The 2026-07-28 checks every server that speaks the era gets."""

MRTR_RULES: tuple[Rule, ...] = (
    _stateless(
        "stateless.mrtr.shape",
        "the InputRequiredResult of the first tool that asked for input",
        State.READY,
        Mrtr("shape"),
        Expect("inputRequests and/or requestState, only elicitation, sampling, roots", (INPUT_REQUIRED,)),
    ),
    _stateless(
        "stateless.mrtr.tampered",
        "that call retried with answers and a tampered requestState",
        State.READY,
        Mrtr("tampered"),
        Expect("refused with a JSON-RPC error (the state fails verification)", ("error *",)),
    ),
    _stateless(
        "stateless.mrtr.retry",
        "that call retried with answers and the requestState as given",
        State.READY,
        Mrtr("retry"),
        Expect(
            "a complete result, or input required again",
            (RESULT, EMPTY_RESULT, IS_ERROR_REASON, IS_ERROR_MASKED, INPUT_REQUIRED),
        ),
    ),
)
"""Checks of a tool that asks for input (MRTR); reported only where a tool call asked."""


def stateless_rules(cases: tuple[ToolCase, ...] = ()) -> tuple[Rule, ...]:
    """The 2026-07-28 rules: the fixed checks, the user's tool cases, then the MRTR checks."""
    tools = tuple(
        _stateless(
            f"stateless.{rule.id}",
            rule.sent,
            State.READY,
            rule.step,
            Expect("isError with the reason, or input required (MRTR)", (IS_ERROR_REASON, INPUT_REQUIRED)),
        )
        for rule in tool_rules(cases)
    )
    return STATELESS_FIXED + tools + MRTR_RULES


def all_rules(cases: tuple[ToolCase, ...] = ()) -> tuple[Rule, ...]:
    """The fixed handshake rules, then the user's tool rules (the handshake era's rows)."""
    return RULES + tool_rules(cases)


def _compact(value: object) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)
