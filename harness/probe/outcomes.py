"""What a server did, as one short label, and how a label becomes a verdict.

Every probe step ends in an :class:`Outcome`: a ``label`` from a small closed
vocabulary (``error -32600``, ``isError with reason``, ``no reply`` ...) plus the
server's own words in ``detail``. Expectations are :class:`Expect` rows that
accept labels by ``fnmatch`` pattern, so the rules table holds data, not
branches, and a verdict is a lookup (:func:`verdict`).

The reason rule (:func:`reason_present`) decides whether an ``isError`` result
tells the agent *why* the tool failed:

1. with ``--reason TEXT``: the reason is present iff TEXT occurs in the result's
   text (case-insensitive);
2. otherwise: take the words of the text (runs of letters and digits,
   case-folded), drop the words of the tool's name and the generic words of
   :data:`GENERIC_WORDS` ("error", "executing", "tool", ...); the reason is
   present iff at least one word is left. "Error executing tool weather" leaves
   nothing (masked); "ERROR: no station near Atlantis" leaves four words.
"""

from __future__ import annotations

import fnmatch
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from harness.protocol.inputs import CAPABILITY_OF

NO_REPLY = "no reply"
"""Nothing came back within the step's timeout (the process is still running)."""
GARBAGE = "garbage"
"""Only lines that are not JSON objects came back within the timeout."""
DIED = "server died"
"""The server's output closed (it exited) before it answered."""
ECHOED = "echoed"
"""The peer sent one of our own messages back (as ``cat`` does) instead of answering it."""
REFUSED = "refused"
"""An HTTP endpoint answered the request with a 4xx status and a body that is no reply to it
(``Bad Request: Server not initialized``, id null): a refusal, its status and body the detail."""
NOT_RUN = "not run"
"""The step could not be tried: its session's handshake failed, or nothing to probe."""
RESULT = "result"
"""A success result (for tools/call: a result without ``isError: true``)."""
EMPTY_RESULT = "empty result"
"""A success result that is exactly ``{}`` (what ping must answer)."""
IS_ERROR_REASON = "isError with reason"
"""A tools/call result with ``isError: true`` whose text carries the reason."""
IS_ERROR_MASKED = "isError masked"
"""A tools/call result with ``isError: true`` whose text is generic (no reason)."""
ECHO = "echo"
"""initialize answered with the version that was asked for."""
OTHER_VERSION = "other version"
"""initialize answered with a different version."""
SINGLE_PAGE = "single page"
"""tools/list answered everything at once (no ``nextCursor``)."""
PAGINATED = "paginated"
"""tools/list handed out ``nextCursor`` and the pages ended."""
CURSOR_LOOP = "cursor loop"
"""tools/list kept handing out cursors (repeated, or more than the page limit)."""
MALFORMED = "malformed reply"
"""A reply with the right id but neither a result nor an error object."""
DISCOVERED = "discover result"
"""server/discover answered a result listing 2026-07-28, with capabilities and ``resultType``."""
MALFORMED_DISCOVER = "malformed discover result"
"""server/discover answered a result that lists 2026-07-28 but lacks a field the spec requires."""
NO_RESULT_TYPE = "result without resultType"
"""A stateless-era result with no ``resultType`` (every 2026-07-28 result must carry one)."""
INPUT_REQUIRED = "input required"
"""A well-formed InputRequiredResult (MRTR): ``resultType: input_required`` and inputs or state."""
MALFORMED_INPUT = "malformed input request"
"""An InputRequiredResult the spec forbids (no inputRequests nor requestState, an unknown method ...)."""
UNSUPPORTED_VERSION = "error -32022"
"""The stateless era's UnsupportedProtocolVersionError, naming the supported versions in ``data``."""
UNSUPPORTED_NO_LIST = "error -32022 without supported"
"""An UnsupportedProtocolVersionError whose ``data.supported`` does not list the versions."""


def error_label(code: object) -> str:
    """The label of a JSON-RPC error reply: ``error -32600``."""
    return f"error {code}"


@dataclass(frozen=True)
class Outcome:
    """What the server did at one step: a label from the vocabulary, and its words.

    ``late`` is set on a ``no reply`` whose request may still be answered: the
    request's id and how to classify a reply that arrives after the step ended.

    ``evidence`` is set by a step whose verdict needs evidence of what the server
    did with the request (the ``args.*`` rules: did it read the arguments?): what
    shows it, or why nothing does. ``conclusive`` is False when nothing does; the
    verdict is then :data:`INCONCLUSIVE` whatever the label.
    """

    label: str
    detail: str = ""
    late: LateSlot | None = field(default=None, compare=False, repr=False)
    evidence: str | None = None
    conclusive: bool = True


@dataclass(frozen=True)
class LateSlot:
    """A request that got no reply in time: its id, and the step's way of reading a reply."""

    request_id: int
    classify: Callable[[dict[str, Any]], Outcome]
    waited: float = 0.0


@dataclass(frozen=True)
class Expect:
    """An expectation: ``text`` for the table, ``accepts`` label patterns (fnmatch).

    ``required`` is False where the source leaves the server's answer open (it
    obliges only the client, or allows several answers): meeting such an
    expectation is no evidence that a requirement holds.
    """

    text: str
    accepts: tuple[str, ...]
    required: bool = True

    def matches(self, label: str) -> bool:
        """Whether a server that did ``label`` meets this expectation."""
        return any(fnmatch.fnmatchcase(label, pattern) for pattern in self.accepts)


AS_BOTH = "as reference & spec"
AS_REFERENCE = "as reference"
AS_SPEC = "as spec"
DIFFERS = "differs"
INCONCLUSIVE = "inconclusive"
"""The server answered, but nothing in the answer shows what the rule asks about (say, that it read
the arguments): neither a match nor a difference can be claimed."""

FAILURE_VERDICTS: dict[str, str] = {
    NO_REPLY: "no reply",
    GARBAGE: "garbage",
    DIED: "server died",
    ECHOED: "echoed",
    NOT_RUN: "not run",
}
"""Labels that are verdicts of their own when no expectation accepts them."""

VERDICTS: tuple[str, ...] = (
    AS_BOTH,
    AS_REFERENCE,
    AS_SPEC,
    DIFFERS,
    INCONCLUSIVE,
    *FAILURE_VERDICTS.values(),
)
"""Every verdict the probe can give, in the order a summary lists them."""


BASIS_SPEC = "spec"
BASIS_REFERENCE = "reference"
BASES: tuple[str, ...] = (BASIS_SPEC, BASIS_REFERENCE)
"""What a verdict holds the server to: a requirement of the spec, or only the reference's rule."""


def basis(verdict_: str, reference: Expect | None, spec: Expect | None) -> str:
    """Whether ``verdict_`` holds the server to a spec requirement or only to the reference's rule.

    "as spec" is judged by the spec; "as reference" by the reference. Any other
    verdict (both, differs, a failure) rests on the spec where the spec requires
    an answer, and on the reference where the spec is silent or leaves it open:
    a "differs" there breaks our rule, not the spec.
    """
    if verdict_ == AS_SPEC or (reference is None and spec is not None):
        return BASIS_SPEC
    if verdict_ == AS_REFERENCE:
        return BASIS_REFERENCE
    return BASIS_SPEC if spec is not None and spec.required else BASIS_REFERENCE


def verdict(label: str, reference: Expect | None, spec: Expect | None, *, conclusive: bool = True) -> str:
    """Compare what the server did with both expectations (None: that source is silent).

    An answer that is not ``conclusive`` (nothing in it shows what the rule asks about) is
    :data:`INCONCLUSIVE`, matched or not; a failure label stays its own verdict.
    """
    if not conclusive and label not in FAILURE_VERDICTS:
        return INCONCLUSIVE
    by_reference = reference is not None and reference.matches(label)
    by_spec = spec is not None and spec.matches(label)
    matched = {
        (True, True): AS_BOTH,
        (True, False): AS_REFERENCE,
        (False, True): AS_SPEC,
    }.get((by_reference, by_spec))
    if matched is not None:
        return matched
    return FAILURE_VERDICTS.get(label, DIFFERS)


GENERIC_WORDS: frozenset[str] = frozenset(
    {
        "a",
        "an",
        "the",
        "error",
        "errors",
        "exception",
        "executing",
        "execution",
        "calling",
        "call",
        "tool",
        "failed",
        "failure",
        "internal",
        "occurred",
        "while",
        "unexpected",
        "something",
        "went",
        "wrong",
    }
)
"""Words that say *that* a tool failed, not *why*; see the module docstring."""

_WORD = re.compile(r"[^\W_]+")


def reason_present(text: str, tool: str, expected: str | None = None) -> bool:
    """Whether ``text`` (an isError result's text) carries the reason; the rule above."""
    if expected is not None:
        return expected.casefold() in text.casefold()
    ignored = GENERIC_WORDS | set(_WORD.findall(tool.casefold()))
    return any(word not in ignored for word in _WORD.findall(text.casefold()))


DETAIL_CHARS = 100


def shorten(text: str, limit: int = DETAIL_CHARS) -> str:
    """One line of at most ``limit`` characters (the table's detail cells)."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def result_text(result: dict[str, Any]) -> str:
    """The text blocks of a tools/call result, joined (other blocks are skipped)."""
    content = result.get("content")
    if not isinstance(content, list):
        return ""
    texts = [b["text"] for b in content if isinstance(b, dict) and isinstance(b.get("text"), str)]
    return "\n".join(texts)


def classify_reply(message: dict[str, Any], tool: str = "", reason: str | None = None) -> Outcome:
    """The label of a reply: error code, isError with or without reason, result, empty result."""
    if "error" in message:
        err = message["error"]
        if isinstance(err, dict):
            text = err.get("message")
            return Outcome(error_label(err.get("code")), shorten(text if isinstance(text, str) else ""))
        return Outcome(MALFORMED, shorten(json.dumps(err)))
    if "result" not in message:
        return Outcome(MALFORMED, shorten(json.dumps(message)))
    result = message["result"]
    if not isinstance(result, dict):
        return Outcome(MALFORMED, shorten(json.dumps(result)))
    if result.get("isError") is True:
        text = result_text(result)
        label = IS_ERROR_REASON if reason_present(text, tool, reason) else IS_ERROR_MASKED
        return Outcome(label, shorten(text))
    if not result:
        return Outcome(EMPTY_RESULT, "{}")
    tools = result.get("tools")
    if isinstance(tools, list):
        names = [t.get("name") for t in tools if isinstance(t, dict)]
        return Outcome(RESULT, shorten(f"{len(tools)} tools: " + ", ".join(str(n) for n in names)))
    text = result_text(result)
    return Outcome(RESULT, shorten(text or json.dumps(result, sort_keys=True)))


def input_request_problems(result: dict[str, Any]) -> list[str]:
    """What makes an InputRequiredResult break the spec's rules; empty when it is well-formed."""
    problems = []
    requests, state = result.get("inputRequests"), result.get("requestState")
    if requests is None and state is None:
        problems.append("neither inputRequests nor requestState")
    if state is not None and not isinstance(state, str):
        problems.append("requestState is not a string")
    if requests is not None and not isinstance(requests, dict):
        problems.append("inputRequests is not an object")
    elif isinstance(requests, dict):
        for key, request in requests.items():
            method = request.get("method") if isinstance(request, dict) else None
            if method not in CAPABILITY_OF:  # the only requests an InputRequiredResult may carry
                problems.append(f"inputRequests[{key!r}] is no elicitation, sampling or roots request")
    return problems


def classify_stateless(message: dict[str, Any], tool: str = "", reason: str | None = None) -> Outcome:
    """A 2026-07-28 reply's label: as :func:`classify_reply`, but a result must carry ``resultType``.

    An ``input_required`` result is ``input required`` when well-formed, else
    ``malformed input request`` naming what is wrong.
    """
    result = message.get("result")
    if "error" in message or not isinstance(result, dict):
        return classify_reply(message, tool, reason)
    kind = result.get("resultType")
    if kind is None:
        said = classify_reply(message, tool, reason)
        return Outcome(NO_RESULT_TYPE, shorten(f"{said.label}: {said.detail}"))
    if kind == "input_required":
        problems = input_request_problems(result)
        if problems:
            return Outcome(MALFORMED_INPUT, shorten("; ".join(problems)))
        asked = result.get("inputRequests") or {}
        methods = sorted({str(r.get("method")) for r in asked.values() if isinstance(r, dict)})
        state = "with requestState" if "requestState" in result else "no requestState"
        return Outcome(INPUT_REQUIRED, shorten(f"asks {', '.join(methods) or 'nothing'}; {state}"))
    return classify_reply(message, tool, reason)
