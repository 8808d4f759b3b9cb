"""Evidence that a server read a tool's arguments, for the verdicts of the ``args.*`` rules.

A server whose tool fails before it looks at its arguments (its backend is unreachable, a browser
is missing) answers invalid arguments with ``isError`` too, with words that are no generic
"error": the reason rule (:func:`harness.probe.outcomes.reason_present`) finds a reason, but it is
not the arguments'. A verdict on argument validation therefore needs evidence that the server
looked at them. Any one of these is evidence:

1. the answer is a JSON-RPC -32602 (invalid params): the code says so;
2. the answer is a success result: the server took the arguments (a finding of its own, judged
   by the label);
3. the answer's words name an argument of the tool (its name, as a whole word, case ignored) or
   a type a required argument has (:data:`TYPE_WORDS`: ``integer`` or ``int``, ``string`` or
   ``str`` ...);
4. a call with valid arguments (every required argument, of a type its schema accepts) gets
   another answer: another label, or other words once the values sent are blanked out of both.

The first three are read from the answer alone (:func:`read_evidence`); the fourth costs one more
call, made only when the words show nothing (:func:`compare_answers`). Without any of them the
verdict is "inconclusive".
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from harness.probe.outcomes import result_text, shorten

INVALID_PARAMS = -32602

TYPE_WORDS: dict[str, tuple[str, ...]] = {
    "string": ("string", "str"),
    "integer": ("integer", "int"),
    "number": ("number", "float"),
    "boolean": ("boolean", "bool"),
    "array": ("array", "list"),
    "object": ("object", "dict", "dictionary"),
    "null": ("null",),
}
"""The words that name each JSON Schema type in validators' messages (pydantic, zod, jsonschema)."""

BLANK = "\0"
"""What a value sent stands as when two answers' words are compared."""


@dataclass(frozen=True)
class Evidence:
    """What shows that the server read the arguments (``conclusive``), or why nothing does."""

    conclusive: bool
    text: str


def answer_text(message: dict[str, Any]) -> str:
    """The words of a reply: an error's message and data, or a result's text blocks."""
    err = message.get("error")
    if isinstance(err, dict):
        text = err.get("message")
        data = err.get("data")
        words = text if isinstance(text, str) else ""
        return words if data is None else f"{words}\n{json.dumps(data, ensure_ascii=False)}"
    result = message.get("result")
    return result_text(result) if isinstance(result, dict) else ""


def _named(text: str, word: str) -> bool:
    pattern = r"(?<![0-9A-Za-z_])" + re.escape(word.casefold()) + r"(?![0-9A-Za-z_])"
    return re.search(pattern, text.casefold()) is not None


def read_evidence(message: dict[str, Any], names: Sequence[str], types: Sequence[str]) -> Evidence:
    """Evidence from the reply alone (rules 1 to 3 above); not conclusive when the words show nothing.

    ``names`` are the tool's argument names, ``types`` the JSON Schema types of its required
    arguments.
    """
    err, result = message.get("error"), message.get("result")
    if not isinstance(err, dict) and not isinstance(result, dict):
        return Evidence(True, "a malformed reply")
    if isinstance(err, dict) and err.get("code") == INVALID_PARAMS:
        return Evidence(True, "the code -32602 says the arguments are invalid")
    if isinstance(result, dict) and result.get("isError") is not True:
        return Evidence(True, "a success result: the server took the arguments")
    text = answer_text(message)
    for name in names:
        if _named(text, name):
            return Evidence(True, f"names the argument {name!r}")
    for kind in dict.fromkeys(types):
        for word in TYPE_WORDS.get(kind, (kind,)):
            if _named(text, word):
                return Evidence(True, f"names the type {word!r}")
    listed = ", ".join(repr(n) for n in names) or "no argument"
    return Evidence(False, f"names neither an argument ({listed}) nor a type")


def _scalars(value: object) -> Iterable[str]:
    """The texts a value sent may appear as in an answer's words."""
    if isinstance(value, dict):
        yield json.dumps(value)
        yield json.dumps(value, separators=(",", ":"))
        for item in value.values():
            yield from _scalars(item)
    elif isinstance(value, list):
        yield json.dumps(value)
        yield json.dumps(value, separators=(",", ":"))
        for item in value:
            yield from _scalars(item)
    elif isinstance(value, str | int | float) and not isinstance(value, bool):
        yield str(value)


def blanked(text: str, values: Iterable[object]) -> str:
    """``text`` with every value sent replaced by :data:`BLANK`, longest first."""
    found = {s for value in values for s in _scalars(value) if s}
    for scalar in sorted(found, key=len, reverse=True):
        text = text.replace(scalar, BLANK)
    return text


def compare_answers(
    invalid: dict[str, Any],
    invalid_label: str,
    valid: dict[str, Any] | None,
    valid_label: str,
    sent: Sequence[dict[str, Any]],
) -> Evidence:
    """Rule 4: whether the answer to valid arguments differs from the answer to invalid ones.

    ``valid`` is None when the valid call got no answer (nothing to compare). ``sent`` holds
    both calls' arguments, whose values are blanked out of both answers' words.
    """
    if valid is None:
        return Evidence(False, f"the call with valid arguments got {valid_label}: nothing to compare")
    values = [v for arguments in sent for v in arguments.values()]
    same = invalid_label == valid_label and blanked(answer_text(invalid), values) == blanked(
        answer_text(valid), values
    )
    if same:
        return Evidence(False, "a call with valid arguments got the same answer")
    words = answer_text(valid)
    return Evidence(
        True, shorten(f"a call with valid arguments got another answer: {valid_label}: {words}", 120)
    )
