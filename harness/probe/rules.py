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
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from harness.probe.outcomes import (
    ECHO,
    EMPTY_RESULT,
    IS_ERROR_REASON,
    OTHER_VERSION,
    PAGINATED,
    RESULT,
    SINGLE_PAGE,
    Expect,
)
from harness.probe.steps import (
    UNKNOWN_METHOD,
    UNKNOWN_TOOL,
    AskVersion,
    BadArguments,
    BogusCursor,
    CallTool,
    ListPages,
    RawLine,
    Request,
    Step,
    ToolCase,
)
from harness.protocol.lifecycle import State
from harness.protocol.versions import LATEST_VERSION, SUPPORTED_VERSIONS

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


def _err(code: int, why: str = "") -> Expect:
    return Expect(f"error {code}" + (f" ({why})" if why else ""), (f"error {code}",))


ANY_ERROR = Expect("a JSON-RPC error (any code)", ("error *",))
TOOL_REASON = Expect("isError with the reason", (IS_ERROR_REASON,))

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
        ANY_ERROR,
    ),
    Rule(
        "handshake.before_initialized",
        "tools/list after initialize, before notifications/initialized",
        LATEST_VERSION,
        State.INITIALIZING,
        Request("tools/list"),
        _err(-32600, "server not initialized"),
        Expect("answered or refused (left open)", (RESULT, "error *")),
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

ARGUMENT_RULES: tuple[Rule, ...] = tuple(
    Rule(
        f"args.{kind}@{version}",
        f"tools/call, {what}, under {version}",
        version,
        State.READY,
        BadArguments(kind),
        _err(-32602),
        _err(-32602, "before SEP-1303")
        if version == PRE_SEP_1303
        else Expect("isError with the reason (SEP-1303)", (IS_ERROR_REASON,)),
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


def all_rules(cases: tuple[ToolCase, ...] = ()) -> tuple[Rule, ...]:
    """The fixed rules, then the user's tool rules."""
    return RULES + tool_rules(cases)


def _compact(value: object) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)
