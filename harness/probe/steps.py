"""The probe's steps: what one rule sends, and how the answer becomes an :class:`Outcome`.

A step is a small frozen dataclass called as ``step(session, context)``; the
rules table (:mod:`harness.probe.rules`) names one per rule. Steps never raise
for the server's behaviour: a failed exchange is the outcome.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from harness.probe.evidence import compare_answers, read_evidence
from harness.probe.outcomes import (
    CURSOR_LOOP,
    DISCOVERED,
    ECHO,
    MALFORMED_DISCOVER,
    NO_REPLY,
    NOT_RUN,
    OTHER_VERSION,
    PAGINATED,
    RESULT,
    SINGLE_PAGE,
    UNSUPPORTED_NO_LIST,
    UNSUPPORTED_VERSION,
    LateSlot,
    Outcome,
    classify_reply,
    classify_stateless,
    shorten,
)
from harness.probe.session import ProbeSession, Reply
from harness.protocol.versions import STATELESS_VERSION

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


Classifier = Callable[[dict[str, Any]], Outcome]


def outcome_of(
    reply: Reply, tool: str = "", reason: str | None = None, *, stateless: bool = False
) -> Outcome:
    """A reply's outcome: its failure, or the classified message (by the era's rules).

    A ``no reply`` keeps a :class:`LateSlot`, so a reply that comes later is read the same way.
    """
    classify = classify_stateless if stateless else classify_reply
    return read_reply(reply, lambda message: classify(message, tool, reason))


def read_reply(reply: Reply, classify: Classifier) -> Outcome:
    """``classify`` the reply's message; a failure as it is (a ``no reply`` with its late slot)."""
    if reply.failure is not None:
        if reply.failure.label == NO_REPLY and reply.request_id is not None:
            slot = LateSlot(reply.request_id, classify, reply.waited)
            return Outcome(reply.failure.label, reply.failure.detail, slot)
        return reply.failure
    assert reply.message is not None
    return classify(reply.message)


@dataclass(frozen=True)
class Request:
    """Send a well-formed request."""

    method: str
    params: dict[str, Any] | None = None

    def __call__(self, session: ProbeSession, context: ProbeContext) -> Outcome:
        return outcome_of(session.request(self.method, self.params), stateless=session.stateless)


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
        return read_reply(session.initialize(self.version), self.classify)

    def classify(self, message: dict[str, Any]) -> Outcome:
        """Echo, another version, or what the refusal said."""
        result = message.get("result")
        answered = result.get("protocolVersion") if isinstance(result, dict) else None
        if not isinstance(answered, str):
            return classify_reply(message)
        return Outcome(ECHO if answered == self.version else OTHER_VERSION, f"answered {answered}")


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
        said = outcome_of(reply, self.name, self.reason, stateless=session.stateless)
        result = reply.message.get("result") if reply.message is not None else None
        if isinstance(result, dict) and result.get("resultType") == "input_required":
            # The tool asks for input (MRTR): the MRTR steps of this process retry it.
            session.scratch.setdefault(ASKED, (self, result))
        return said


WRONG_CANDIDATES: tuple[Any, ...] = (12345, "not-a-number", ["not", "a", "scalar"], {"harness-probe": 1})
"""Values tried in order for an argument that accepts several types: the first none of them accepts."""

_JSON_TYPES: tuple[tuple[type, tuple[str, ...]], ...] = (
    (bool, ("boolean",)),
    (int, ("integer", "number")),
    (float, ("number",)),
    (str, ("string",)),
    (list, ("array",)),
    (dict, ("object",)),
    (type(None), ("null",)),
)
"""The JSON Schema types a Python value satisfies (bool before int: True is an int)."""


def schema_types(prop: object) -> tuple[str, ...] | None:
    """The JSON types a property's schema accepts: its ``type`` (a name or a list), else the
    types of its ``anyOf``/``oneOf`` branches; None when it does not say (any value fits)."""
    if not isinstance(prop, dict):
        return None
    kind = prop.get("type")
    if isinstance(kind, str):
        return (kind,)
    if isinstance(kind, list) and kind and all(isinstance(k, str) for k in kind):
        return tuple(kind)
    found: list[str] = []
    for key in ("anyOf", "oneOf"):
        branches = prop.get(key)
        for branch in branches if isinstance(branches, list) else []:
            types = schema_types(branch)
            if types is None:
                return None
            found.extend(t for t in types if t not in found)
    return tuple(found) or None


def _accepted(value: object, types: Sequence[str]) -> bool:
    names = next(names for kind, names in _JSON_TYPES if isinstance(value, kind))
    return any(name in types for name in names)


def wrong_value(prop: object) -> Any:
    """A value of a type the property does not accept, or None when every type fits.

    A single simple type takes its :data:`WRONG_VALUES` entry; a list of types
    (``["string", "null"]``) or ``anyOf`` branches take the first of
    :data:`WRONG_CANDIDATES` that none of them accepts.
    """
    types = schema_types(prop)
    if types is None:
        return None
    if len(types) == 1 and types[0] in WRONG_VALUES:
        return WRONG_VALUES[types[0]]
    return next((v for v in WRONG_CANDIDATES if not _accepted(v, types)), None)


def sample_value(prop: object) -> Any:
    """A value the property accepts: its const, first enum value or default, else one of its types."""
    if isinstance(prop, dict):
        if "const" in prop:
            return prop["const"]
        enum = prop.get("enum")
        if isinstance(enum, list) and enum:
            return enum[0]
        if "default" in prop:
            return prop["default"]
    types = schema_types(prop) or ("string",)
    return next((SAMPLE_VALUES[t] for t in types if t in SAMPLE_VALUES), None)


def required_arguments(tool: dict[str, Any]) -> list[tuple[str, object]]:
    """Every required argument of a tool with its property schema (``{}`` where none is given)."""
    schema = tool.get("inputSchema")
    if not isinstance(schema, dict):
        return []
    props = schema.get("properties")
    required = schema.get("required")
    if not isinstance(required, list):
        return []
    props = props if isinstance(props, dict) else {}
    return [(name, props.get(name, {})) for name in required if isinstance(name, str)]


def _mistypable(tool: dict[str, Any]) -> str | None:
    """The first required argument a value of the wrong type exists for."""
    return next((n for n, prop in required_arguments(tool) if wrong_value(prop) is not None), None)


def pick_tool(tools: Sequence[dict[str, Any]], preferred: Sequence[str]) -> dict[str, Any] | None:
    """The tool to send bad arguments to: a user-named one if it has a required argument that can be
    mistyped, else the first listed one that has."""
    usable = [t for t in tools if isinstance(t.get("name"), str) and _mistypable(t) is not None]
    for name in preferred:
        for tool in usable:
            if tool["name"] == name:
                return tool
    return usable[0] if usable else None


def bad_arguments(tool: dict[str, Any], kind: str) -> dict[str, Any]:
    """``missing``: no arguments; ``wrong_type``: every required argument well-typed but the first
    that can be mistyped, so that the server's answer can only be about that one."""
    if kind == "missing":
        return {}
    required = required_arguments(tool)
    arguments = {name: sample_value(prop) for name, prop in required}
    target = _mistypable(tool)
    assert target is not None
    arguments[target] = wrong_value(dict(required)[target])
    return arguments


BAD_ARGUMENTS: dict[str, str] = {
    "missing": "every required argument left out",
    "wrong_type": "the first required argument of the wrong type",
}
"""The two kinds of invalid arguments the probe sends."""


def valid_arguments(tool: dict[str, Any]) -> dict[str, Any]:
    """Every required argument with a value its schema accepts (:func:`sample_value`)."""
    return {name: sample_value(prop) for name, prop in required_arguments(tool)}


def argument_names(tool: dict[str, Any]) -> list[str]:
    """Every argument a tool's schema names: its properties, then any required one not among them."""
    schema = tool.get("inputSchema")
    props = schema.get("properties") if isinstance(schema, dict) else None
    names = [n for n in (props if isinstance(props, dict) else {}) if isinstance(n, str)]
    return names + [n for n, _ in required_arguments(tool) if n not in names]


def required_types(tool: dict[str, Any]) -> list[str]:
    """The JSON Schema types the tool's required arguments have (none for an untyped one)."""
    return [t for _, prop in required_arguments(tool) for t in schema_types(prop) or ()]


VALID_CALL = "valid call"
"""The scratch key under which a process keeps, per tool, its answer to a call with valid arguments."""


@dataclass(frozen=True)
class BadArguments:
    """tools/call with invalid arguments (``missing`` or ``wrong_type``) for a listed tool.

    An error answer is judged only with evidence that the server read the arguments
    (:mod:`harness.probe.evidence`): its words name one, or a type, or else a call with valid
    arguments (made once per process and tool, only then) gets another answer. Without it the
    outcome is not conclusive and the verdict "inconclusive".
    """

    kind: str

    def __call__(self, session: ProbeSession, context: ProbeContext) -> Outcome:
        listed = list_tools(session)
        if isinstance(listed, Outcome):
            return Outcome(NOT_RUN, shorten(f"tools/list: {listed.label}: {listed.detail}"))
        tool = pick_tool(listed[0], [case.name for case in context.tools])
        if tool is None:
            return Outcome(NOT_RUN, "no listed tool has a required argument with a type to get wrong")
        name, arguments = tool["name"], bad_arguments(tool, self.kind)
        sent = f"{name} {json.dumps(arguments, separators=(',', ':'))}"
        names, types = argument_names(tool), required_types(tool)

        def judged(message: dict[str, Any]) -> Outcome:
            said = classify_reply(message, name)
            found = read_evidence(message, names, types)
            detail = shorten(f"{sent} -> {said.detail}")
            return Outcome(said.label, detail, evidence=found.text, conclusive=found.conclusive)

        reply = session.request("tools/call", {"name": name, "arguments": arguments})
        said = read_reply(reply, judged)
        if said.conclusive or reply.message is None:
            return said
        valid = valid_arguments(tool)
        answered = self._valid_answer(session, name, valid)
        valid_label = classify_reply(answered, name).label if isinstance(answered, dict) else answered
        found = compare_answers(
            reply.message,
            said.label,
            answered if isinstance(answered, dict) else None,
            valid_label,
            (arguments, valid),
        )
        evidence = f"{said.evidence}; {found.text}"
        return Outcome(said.label, said.detail, evidence=evidence, conclusive=found.conclusive)

    @staticmethod
    def _valid_answer(session: ProbeSession, name: str, valid: dict[str, Any]) -> dict[str, Any] | str:
        """The reply to ``name`` called with ``valid`` (once per process), or the failure's label."""
        kept: dict[str, dict[str, Any] | str] = session.scratch.setdefault(VALID_CALL, {})
        if name not in kept:
            reply = session.request("tools/call", {"name": name, "arguments": valid})
            kept[name] = reply.message if reply.message is not None else outcome_of(reply).label
        return kept[name]


ASKED = "asked"
"""The scratch key under which a tool call that answered ``input_required`` leaves (case, result)."""

NOT_OFFERED = Outcome(NOT_RUN, "no tool asked for input (name one with --tool)")
"""The MRTR steps' outcome when no tool call of the process answered input_required."""


def classify_discover(message: dict[str, Any]) -> Outcome:
    """A server/discover reply: a DiscoverResult listing 2026-07-28, one lacking a field, or else."""
    result = message.get("result")
    if not isinstance(result, dict):
        return classify_reply(message)
    versions = result.get("supportedVersions")
    if not isinstance(versions, list) or STATELESS_VERSION not in versions:
        return Outcome(RESULT, shorten(f"supportedVersions: {json.dumps(versions)}"))
    listed = f"supportedVersions {', '.join(str(v) for v in versions)}"
    required = (("capabilities", dict), ("resultType", str))
    missing = [k for k, kind in required if not isinstance(result.get(k), kind)]
    if missing:
        return Outcome(MALFORMED_DISCOVER, shorten(f"{listed}; no {' nor '.join(missing)}"))
    return Outcome(DISCOVERED, shorten(listed))


@dataclass(frozen=True)
class Discover:
    """server/discover with the 2026-07-28 ``_meta``: which versions and capabilities the server offers."""

    def __call__(self, session: ProbeSession, context: ProbeContext) -> Outcome:
        return read_reply(session.discover(), classify_discover)


@dataclass(frozen=True)
class Bare:
    """A request with no ``params._meta`` at all, in a stateless session.

    Without ``_meta`` it is no 2026-07-28 request, so its answer is read as a handshake-era one
    (a result need not carry ``resultType``): the same message, read the same way, as
    ``handshake.before_initialize`` sends.
    """

    method: str

    def __call__(self, session: ProbeSession, context: ProbeContext) -> Outcome:
        return outcome_of(session.request(self.method, meta=False))


def classify_unsupported(message: dict[str, Any]) -> Outcome:
    """-32022 with ``data.supported`` listing versions is the spec's refusal; the rest as usual."""
    said = classify_stateless(message)
    if said.label != UNSUPPORTED_VERSION:
        return said
    err = message.get("error")
    data = err.get("data") if isinstance(err, dict) else None
    supported = data.get("supported") if isinstance(data, dict) else None
    if not isinstance(supported, list):
        return Outcome(UNSUPPORTED_NO_LIST, said.detail)
    return Outcome(said.label, shorten(f"supported: {', '.join(str(v) for v in supported)}"))


@dataclass(frozen=True)
class AskStatelessVersion:
    """tools/list whose ``_meta`` names ``version``, a version the server cannot speak."""

    version: str

    def __call__(self, session: ProbeSession, context: ProbeContext) -> Outcome:
        reply = session.request("tools/list", {"_meta": session.meta(self.version)})
        return read_reply(reply, classify_unsupported)


SAMPLED: dict[str, Any] = {
    "role": "assistant",
    "content": {"type": "text", "text": "probe"},
    "model": "harness-probe",
    "stopReason": "endTurn",
}
"""The probe's answer to a sampling request inside an InputRequiredResult."""


def input_responses(result: dict[str, Any]) -> dict[str, Any]:
    """Answers to every input request: accept a form with sample values, a fixed sample, no roots."""
    requests = result.get("inputRequests")
    answers: dict[str, Any] = {}
    for key, request in (requests if isinstance(requests, dict) else {}).items():
        method = request.get("method") if isinstance(request, dict) else None
        params = request.get("params") if isinstance(request, dict) else None
        params = params if isinstance(params, dict) else {}
        if method == "sampling/createMessage":
            answers[key] = SAMPLED
        elif method == "roots/list":
            answers[key] = {"roots": []}
        elif params.get("mode") == "url":
            answers[key] = {"action": "accept"}
        else:
            schema = params.get("requestedSchema")
            props = schema.get("properties") if isinstance(schema, dict) else None
            content = {n: sample_value(p) for n, p in (props if isinstance(props, dict) else {}).items()}
            answers[key] = {"action": "accept", "content": content}
    return answers


def tamper(state: str) -> str:
    """``state`` with its middle character changed (an edit no integrity check may let through)."""
    mid = len(state) // 2
    return state[:mid] + ("A" if state[mid] != "A" else "B") + state[mid + 1 :]


@dataclass(frozen=True)
class Mrtr:
    """The MRTR checks on the first tool call of this process that answered ``input_required``.

    ``shape``: the InputRequiredResult itself. ``tampered``: the same call retried
    with answers and a tampered ``requestState``. ``retry``: retried with the
    state as it was given.
    """

    check: str

    def __call__(self, session: ProbeSession, context: ProbeContext) -> Outcome:
        asked = session.scratch.get(ASKED)
        if asked is None:
            return NOT_OFFERED
        case, result = asked
        if self.check == "shape":
            said = classify_stateless({"result": result}, case.name)
            return Outcome(said.label, shorten(f"{case.name}: {said.detail}"))
        state = result.get("requestState")
        if self.check == "tampered" and not isinstance(state, str | None):
            return Outcome(NOT_RUN, "requestState is not a string")
        if self.check == "tampered" and not state:
            return Outcome(NOT_RUN, "the input request carried no requestState to tamper with")
        params: dict[str, Any] = {
            "name": case.name,
            "arguments": case.arguments,
            "inputResponses": input_responses(result),
        }
        if state is not None:
            params["requestState"] = tamper(state) if self.check == "tampered" else state
        reply = session.request("tools/call", params)
        return outcome_of(reply, case.name, case.reason, stateless=True)
