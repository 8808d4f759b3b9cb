"""The probe's steps: what one rule sends, and how the answer becomes an :class:`Outcome`.

A step is a small frozen dataclass called as ``step(session, context)``; the
rules table (:mod:`harness.probe.rules`) names one per rule. Steps never raise
for the server's behaviour: a failed exchange is the outcome.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from harness.probe.outcomes import (
    CURSOR_LOOP,
    ECHO,
    NOT_RUN,
    OTHER_VERSION,
    PAGINATED,
    RESULT,
    SINGLE_PAGE,
    Outcome,
    classify_reply,
    shorten,
)
from harness.probe.session import ProbeSession, Reply

MAX_PAGES = 50
"""tools/list pages followed before the probe calls it a cursor loop."""

UNKNOWN_TOOL = "harness_probe_no_such_tool"
UNKNOWN_METHOD = "harness/probe_no_such_method"
BOGUS_CURSOR = "harness-probe-bogus-cursor"

WRONG_VALUES: dict[str, Any] = {
    "string": 12345,
    "integer": "not-a-number",
    "number": "not-a-number",
    "boolean": "not-a-boolean",
    "array": "not-an-array",
    "object": "not-an-object",
}
"""A value of the wrong type for each JSON Schema type (none coercible by pydantic's lax mode)."""

SAMPLE_VALUES: dict[str, Any] = {
    "string": "probe",
    "integer": 1,
    "number": 1.5,
    "boolean": True,
    "array": [],
    "object": {},
}
"""A well-typed value for the arguments a wrong-type call does not target."""


@dataclass(frozen=True)
class ToolCase:
    """A tool the user names, with arguments meant to make it fail, and the expected reason."""

    name: str
    arguments: dict[str, Any] = field(default_factory=dict)
    reason: str | None = None


@dataclass(frozen=True)
class ProbeContext:
    """What every step may read: the user's tool cases."""

    tools: tuple[ToolCase, ...] = ()


class Step(Protocol):
    def __call__(self, session: ProbeSession, context: ProbeContext) -> Outcome: ...


def outcome_of(reply: Reply, tool: str = "", reason: str | None = None) -> Outcome:
    """A reply's outcome: its failure, or the classified message."""
    if reply.failure is not None:
        return reply.failure
    assert reply.message is not None
    return classify_reply(reply.message, tool, reason)


@dataclass(frozen=True)
class Request:
    """Send a well-formed request."""

    method: str
    params: dict[str, Any] | None = None

    def __call__(self, session: ProbeSession, context: ProbeContext) -> Outcome:
        return outcome_of(session.request(self.method, self.params))


@dataclass(frozen=True)
class RawLine:
    """Write one line as it is (``$ID`` becomes a fresh id); the reply may echo it or be null."""

    template: bytes

    def __call__(self, session: ProbeSession, context: ProbeContext) -> Outcome:
        req_id = session.new_id()
        line = self.template.replace(b"$ID", str(req_id).encode())
        return outcome_of(session.exchange(line, (req_id, None)))


@dataclass(frozen=True)
class AskVersion:
    """initialize asking for ``version``: does the server echo it or answer another?"""

    version: str

    def __call__(self, session: ProbeSession, context: ProbeContext) -> Outcome:
        reply = session.initialize(self.version)
        if session.answered_version is None:
            return outcome_of(reply)
        label = ECHO if session.answered_version == self.version else OTHER_VERSION
        return Outcome(label, f"answered {session.answered_version}")


def list_tools(
    session: ProbeSession, max_pages: int = MAX_PAGES
) -> tuple[list[dict[str, Any]], int] | Outcome:
    """Every listed tool and the page count, following nextCursor; an Outcome on failure."""
    tools: list[dict[str, Any]] = []
    seen: set[str] = set()
    cursor: str | None = None
    pages = 0
    while True:
        reply = session.request("tools/list", None if cursor is None else {"cursor": cursor})
        result = reply.message.get("result") if reply.message is not None else None
        if not isinstance(result, dict):
            said = outcome_of(reply)
            return Outcome(said.label, shorten(f"page {pages + 1}: {said.detail}"))
        pages += 1
        page = result.get("tools")
        tools.extend(t for t in (page if isinstance(page, list) else []) if isinstance(t, dict))
        cursor = result.get("nextCursor")
        if cursor is None:
            return tools, pages
        if not isinstance(cursor, str) or cursor in seen or pages >= max_pages:
            return Outcome(CURSOR_LOOP, f"still handing out cursors after {pages} pages")
        seen.add(cursor)


@dataclass(frozen=True)
class ListPages:
    """tools/list, following nextCursor to the end: one page, pages, or a loop."""

    def __call__(self, session: ProbeSession, context: ProbeContext) -> Outcome:
        listed = list_tools(session)
        if isinstance(listed, Outcome):
            return listed
        tools, pages = listed
        if pages == 1:
            return Outcome(SINGLE_PAGE, f"{len(tools)} tools")
        return Outcome(PAGINATED, f"{len(tools)} tools in {pages} pages")


@dataclass(frozen=True)
class BogusCursor:
    """tools/list with a cursor the server never issued."""

    def __call__(self, session: ProbeSession, context: ProbeContext) -> Outcome:
        said = outcome_of(session.request("tools/list", {"cursor": BOGUS_CURSOR}))
        if said.label == RESULT:
            return Outcome(RESULT, f"ignored the cursor: {said.detail}")
        return said


@dataclass(frozen=True)
class CallTool:
    """tools/call of ``name`` with ``arguments``; the reason rule may use ``reason``."""

    name: str
    arguments: dict[str, Any] = field(default_factory=dict)
    reason: str | None = None

    def __call__(self, session: ProbeSession, context: ProbeContext) -> Outcome:
        reply = session.request("tools/call", {"name": self.name, "arguments": self.arguments})
        return outcome_of(reply, self.name, self.reason)


def _required_typed(tool: dict[str, Any]) -> list[tuple[str, str]]:
    schema = tool.get("inputSchema")
    if not isinstance(schema, dict):
        return []
    props = schema.get("properties")
    required = schema.get("required")
    if not isinstance(props, dict) or not isinstance(required, list):
        return []
    out = []
    for name in required:
        prop = props.get(name)
        kind = prop.get("type") if isinstance(prop, dict) else None
        if isinstance(name, str) and isinstance(kind, str) and kind in WRONG_VALUES:
            out.append((name, kind))
    return out


def pick_tool(tools: Sequence[dict[str, Any]], preferred: Sequence[str]) -> dict[str, Any] | None:
    """The tool to send bad arguments to: a user-named one if it has typed required arguments."""
    usable = [t for t in tools if isinstance(t.get("name"), str) and _required_typed(t)]
    for name in preferred:
        for tool in usable:
            if tool["name"] == name:
                return tool
    return usable[0] if usable else None


BAD_ARGUMENTS: dict[str, str] = {
    "missing": "every required argument left out",
    "wrong_type": "the first required argument of the wrong type",
}
"""The two kinds of invalid arguments the probe sends."""


@dataclass(frozen=True)
class BadArguments:
    """tools/call with invalid arguments (``missing`` or ``wrong_type``) for a listed tool."""

    kind: str

    def __call__(self, session: ProbeSession, context: ProbeContext) -> Outcome:
        listed = list_tools(session)
        if isinstance(listed, Outcome):
            return Outcome(NOT_RUN, shorten(f"tools/list: {listed.label}: {listed.detail}"))
        tool = pick_tool(listed[0], [case.name for case in context.tools])
        if tool is None:
            return Outcome(NOT_RUN, "no listed tool has a required argument of a simple type")
        typed = _required_typed(tool)
        if self.kind == "missing":
            arguments: dict[str, Any] = {}
        else:
            arguments = {name: SAMPLE_VALUES[kind] for name, kind in typed}
            first, kind = typed[0]
            arguments[first] = WRONG_VALUES[kind]
        said = CallTool(tool["name"], arguments)(session, context)
        sent = f"{tool['name']} {json.dumps(arguments, separators=(',', ':'))}"
        return Outcome(said.label, shorten(f"{sent} -> {said.detail}"))
