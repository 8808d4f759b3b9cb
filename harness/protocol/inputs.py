"""How a tool asks the client for input (elicitation, sampling, roots), in both eras.

A tool asks by calling :func:`ask` (one question) or :func:`ask_all` (several at
once) with a key of its choosing and an :class:`InputRequest` built by
:func:`elicit`, :func:`sample` or :func:`list_roots`::

    def book(city: str = "") -> str:
        if not city:
            answer = ask("city", elicit("Which city?", {"type": "object",
                     "properties": {"city": {"type": "string"}}, "required": ["city"]}))
            if answer.get("action") != "accept":
                return "nothing booked"
            city = answer["content"]["city"]
        return f"booked {city}"

When the answer is not there yet, ``ask`` raises :class:`InputRequired`; the
server catches it and asks the client: in the stateless era it answers the call
with an InputRequiredResult (MRTR) and the client retries; in the handshake era
it sends the requests to the client mid-call and waits. Either way the tool is
**run again from the start** with the answers, so ``ask`` returns the client's
result (a dict: an ElicitResult, CreateMessageResult or ListRootsResult). A tool
therefore asks before it has side effects. An answer counts only for the very
question asked under that key (same method and params); a reworded question is
asked again. A client's JSON-RPC error to a handshake-era request makes ``ask``
raise :class:`InputRefused`, which the active strategy reports like any tool
failure.

No I/O and no server here: the server puts the answers of the current call in a
context variable (:func:`answering`) around the tool call.
"""

from __future__ import annotations

import contextlib
import contextvars
import hashlib
import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

ELICIT = "elicitation/create"
SAMPLE = "sampling/createMessage"
ROOTS = "roots/list"

CAPABILITY_OF: dict[str, str] = {ELICIT: "elicitation", SAMPLE: "sampling", ROOTS: "roots"}
"""Input method -> the client capability that must be declared for the server to ask it."""


@dataclass(frozen=True)
class InputRequest:
    """One question for the client: a server-to-client method and its params."""

    method: str
    params: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.method not in CAPABILITY_OF:
            raise ValueError(f"unknown input method {self.method!r}; one of {', '.join(CAPABILITY_OF)}")

    def to_wire(self) -> dict[str, Any]:
        """The request object as an ``inputRequests`` value (no id, no jsonrpc)."""
        if self.params or self.method != ROOTS:
            return {"method": self.method, "params": self.params}
        return {"method": self.method}

    @property
    def digest(self) -> str:
        """A short digest of method and params: binds an answer to the question asked."""
        return json_digest([self.method, self.params])


def json_digest(value: Any) -> str:
    """A short sha256 of ``value`` as canonical JSON (sorted keys), independent of key order."""
    text = json.dumps(value, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def elicit(message: str, requested_schema: Mapping[str, Any]) -> InputRequest:
    """A form elicitation: ask the user for values fitting a flat object schema."""
    return InputRequest(ELICIT, {"message": message, "requestedSchema": dict(requested_schema)})


def sample(messages: list[dict[str, Any]], max_tokens: int, **extra: Any) -> InputRequest:
    """A sampling request: ask the client's model to answer ``messages`` (``systemPrompt``... in extra)."""
    return InputRequest(SAMPLE, {"messages": messages, "maxTokens": max_tokens, **extra})


def list_roots() -> InputRequest:
    """Ask the client for its roots."""
    return InputRequest(ROOTS)


class InputRequired(Exception):
    """Raised inside a tool: it cannot finish without the client's answers to ``requests``."""

    def __init__(self, requests: Mapping[str, InputRequest]) -> None:
        super().__init__(f"input required: {', '.join(requests)}")
        self.requests = dict(requests)


class InputRefused(Exception):
    """The client answered an input request with a JSON-RPC error (handshake era)."""

    def __init__(self, key: str, method: str, code: int, message: str) -> None:
        super().__init__(f"the client refused {method} ({key}): {code} {message}")
        self.key, self.method, self.code = key, method, code


@dataclass(frozen=True)
class Answer:
    """What the client answered to one question: its result, or its error."""

    digest: str
    result: dict[str, Any] | None = None
    error: dict[str, Any] | None = None


_ANSWERS: contextvars.ContextVar[Mapping[str, Answer]] = contextvars.ContextVar("harness_input_answers")


@contextlib.contextmanager
def answering(answers: Mapping[str, Answer]) -> Iterator[None]:
    """Make ``answers`` what :func:`ask` sees while the server runs one tool call."""
    token = _ANSWERS.set(answers)
    try:
        yield
    finally:
        _ANSWERS.reset(token)


def _answered(key: str, request: InputRequest, answers: Mapping[str, Answer]) -> dict[str, Any] | None:
    answer = answers.get(key)
    if answer is None or answer.digest != request.digest:
        return None
    if answer.error is not None:
        code = answer.error.get("code")
        message = answer.error.get("message")
        raise InputRefused(key, request.method, code if isinstance(code, int) else 0, str(message))
    return answer.result


def ask(key: str, request: InputRequest) -> dict[str, Any]:
    """The client's answer to ``request`` (asked under ``key``), or raise :class:`InputRequired`."""
    result = _answered(key, request, _ANSWERS.get({}))
    if result is None:
        raise InputRequired({key: request})
    return result


def ask_all(requests: Mapping[str, InputRequest]) -> dict[str, dict[str, Any]]:
    """Answers to several questions asked in one round; raises for every one still unanswered."""
    answers = _ANSWERS.get({})
    out: dict[str, dict[str, Any]] = {}
    missing: dict[str, InputRequest] = {}
    for key, request in requests.items():
        result = _answered(key, request, answers)
        if result is None:
            missing[key] = request
        else:
            out[key] = result
    if missing:
        raise InputRequired(missing)
    return out


def missing_capabilities(
    requests: Mapping[str, InputRequest], capabilities: Mapping[str, Any] | None
) -> dict[str, Any]:
    """The client capabilities ``requests`` need that ``capabilities`` does not declare ({} if none).

    A bare ``elicitation: {}`` counts as form support (the only shape before modes);
    one that declares only ``url`` does not.
    """
    caps = capabilities or {}
    missing: dict[str, Any] = {}
    for request in requests.values():
        name = CAPABILITY_OF[request.method]
        declared = caps.get(name)
        if not isinstance(declared, dict):
            missing[name] = {"form": {}} if name == "elicitation" else {}
        elif name == "elicitation" and "url" in declared and "form" not in declared:
            missing[name] = {"form": {}}
    return missing
