"""What the proxy does to a real server's ``tools/call`` result, one pure function per change.

* :func:`reason_of` -- the text of an ``isError`` result: what ``collapse`` carries in -32603.
* :func:`masked` -- the official SDK's mask: ``Error executing tool X``.
* :func:`corrupt` -- a fault kind that answers content, applied to a real result:
  ``stale`` (every measured number 3 off), ``wrong_units`` (``*_c`` numbers in Fahrenheit,
  others x100), ``partial`` (half of every list and long text), ``malformed`` (the text cut
  in half, or non-text content). JSON text is changed as JSON and stays well formed; other
  text is changed as text. ``structuredContent`` gets the same change as JSON.
* :func:`lookalike` -- what ``silent`` answers: the tool's last real success, or a bare "ok".
* :func:`rejected_argument` -- the one argument an error text names, for ``input_required``.
* :func:`renamed_schema` -- an inputSchema with arguments renamed (``change_schema``).
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Callable, Mapping
from typing import Any

from harness.faults.kinds import FaultRule
from harness.faults.numbers import cut, map_numbers, older, other_unit
from harness.protocol.codecs import compact_text
from harness.sim.catalogue import binary_junk

JSON = dict[str, Any]

_dump = compact_text
_NUMBER = re.compile(r"(?<![\w.:/-])(-?\d+(?:\.\d+)?)(?![\w.:/-]|\.\d)")
_CELSIUS = re.compile(r"(-?\d+(?:\.\d+)?)(\s?°C)")


def texts(result: Mapping[str, Any]) -> list[str]:
    """The text items of a result's ``content``."""
    content = result.get("content")
    if not isinstance(content, list):
        return []
    return [
        c["text"]
        for c in content
        if isinstance(c, dict) and c.get("type") == "text" and isinstance(c.get("text"), str)
    ]


def reason_of(result: Mapping[str, Any], tool: str) -> str:
    """What an isError result says, as one text (a bare "tool X failed" when it says nothing)."""
    said = "\n".join(t for t in texts(result) if t.strip())
    return said or f"tool {tool} failed"


def masked(result: Mapping[str, Any], tool: str) -> JSON:
    """The result with its content replaced by the official SDK's mask (``_meta`` and the rest kept)."""
    out = {k: v for k, v in result.items() if k != "structuredContent"}
    out["content"] = [{"type": "text", "text": f"Error executing tool {tool}"}]
    return out


def _plain_number(text: str, f: Callable[[str, float], float]) -> str:
    def one(m: re.Match[str]) -> str:
        raw = m.group(1)
        out = f("", float(raw))
        return str(round(out)) if "." not in raw else f"{out:.2f}".rstrip("0").rstrip(".")

    return _NUMBER.sub(one, text)


def _json_or_text(text: str, as_json: Callable[[Any], Any], as_text: Callable[[str], str]) -> str:
    try:
        value = json.loads(text)
    except ValueError:
        return as_text(text)
    if not isinstance(value, dict | list):
        return as_text(text)
    return _dump(as_json(value))


def _stale_text(text: str) -> str:
    return _json_or_text(text, lambda v: map_numbers(v, older), lambda t: _plain_number(t, older))


def _units_text(text: str) -> str:
    def as_text(t: str) -> str:
        def fahrenheit(m: re.Match[str]) -> str:
            return f"{round(float(m.group(1)) * 9 / 5 + 32)}{m.group(2)}"

        celsius = _CELSIUS.sub(fahrenheit, t)
        return celsius if celsius != t else _plain_number(t, other_unit)

    return _json_or_text(text, lambda v: map_numbers(v, other_unit), as_text)


def _partial_text(text: str) -> str:
    return _json_or_text(text, cut, lambda t: t[: len(t) // 2] if len(t) > 40 else t)


_TEXT_CHANGES: dict[str, Callable[[str], str]] = {
    "stale": _stale_text,
    "wrong_units": _units_text,
    "partial": _partial_text,
}
_JSON_CHANGES: dict[str, Callable[[Any], Any]] = {
    "stale": lambda v: map_numbers(v, older),
    "wrong_units": lambda v: map_numbers(v, other_unit),
    "partial": cut,
}

CORRUPTING_KINDS: frozenset[str] = frozenset({*_TEXT_CHANGES, "malformed"})
"""Kinds the proxy applies to a real result (the call goes through first)."""


def corrupt(result: Mapping[str, Any], rule: FaultRule, tool: str, call: int) -> JSON:
    """``result`` as the rule's kind changes it (see the module docstring)."""
    out = copy.deepcopy(dict(result))
    raw = out.get("content")
    content: list[Any] = raw if isinstance(raw, list) else []
    if rule.kind == "malformed":
        out.pop("structuredContent", None)
        if rule.form == "binary":
            blob = {
                "type": "resource",
                "resource": {
                    "uri": f"mem://{tool}/{call}",
                    "mimeType": "application/octet-stream",
                    "blob": binary_junk(f"{tool}:{call}"),
                },
            }
            note = {"type": "text", "text": "[malformed upstream response: binary data]"}
            out["content"] = [note, blob] if rule.explicit else [blob]
            return out
        for item in content:
            if isinstance(item, dict) and isinstance(item.get("text"), str):
                half = item["text"][: max(1, len(item["text"]) // 2)]
                item["text"] = f"[malformed upstream response] {half}" if rule.explicit else half
        return out
    change = _TEXT_CHANGES[rule.kind]
    for item in content:
        if isinstance(item, dict) and item.get("type") == "text" and isinstance(item.get("text"), str):
            item["text"] = change(item["text"])
    if "structuredContent" in out:
        out["structuredContent"] = _JSON_CHANGES[rule.kind](out["structuredContent"])
    return out


def lookalike(last: Mapping[str, Any] | None) -> JSON:
    """A success that did nothing: the tool's last real success as it was, or a bare ``ok``."""
    if last is not None:
        return copy.deepcopy(dict(last))
    return {"content": [{"type": "text", "text": "ok"}]}


PRIMITIVE_TYPES = frozenset({"string", "number", "integer", "boolean"})
"""What an elicitation's requestedSchema may ask for (flat, primitive properties)."""


def rejected_argument(text: str, props: Mapping[str, Any]) -> str | None:
    """The argument an error text is about: the one argument of the tool it names as a word
    (quoted first: ``'date'``, ``"date"``, `` `date` ``), and only one whose schema an
    elicitation can ask for. None when it names none, or several equally."""
    askable = [
        name for name, spec in props.items()
        if isinstance(spec, dict) and (spec.get("type") in PRIMITIVE_TYPES or "enum" in spec)
    ]  # fmt: skip
    for pattern in (r"['\"`]{}['\"`]", r"(?<![\w-]){}(?![\w-])"):
        named = [n for n in askable if re.search(pattern.format(re.escape(n)), text)]
        if len(named) == 1:
            return named[0]
        if len(named) > 1:
            return None
    return None


def question_schema(argument: str, spec: Mapping[str, Any] | None) -> JSON:
    """The requestedSchema that asks for one argument, with the tool's own schema for it."""
    prop: JSON = {"type": "string"}
    if isinstance(spec, dict):
        kept = {
            k: v
            for k, v in spec.items()
            if k
            in (
                "type",
                "title",
                "description",
                "enum",
                "minimum",
                "maximum",
                "format",
                "default",
                "minLength",
                "maxLength",
                "pattern",
            )
        }
        if kept.get("type") in PRIMITIVE_TYPES or "enum" in kept:
            prop = kept
    return {"type": "object", "properties": {argument: prop}, "required": [argument]}


def renamed_schema(schema: Mapping[str, Any], renames: Mapping[str, str]) -> JSON:
    """``schema`` with each argument ``old`` renamed to ``renames[old]`` (properties and required)."""
    out = dict(schema)
    props = schema.get("properties")
    if isinstance(props, dict):
        out["properties"] = {renames.get(k, k): v for k, v in props.items()}
    required = schema.get("required")
    if isinstance(required, list):
        out["required"] = [renames.get(k, k) if isinstance(k, str) else k for k in required]
    return out
