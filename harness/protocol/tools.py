"""Tools as the server holds them: registration, argument checks, results, pagination.

* Arguments are checked in two steps: the reference's rule first (a missing
  required argument names that argument), then the rest of the tool's
  ``inputSchema`` by a compiled JSON Schema validator (fastjsonschema), so a
  wrong type names the argument too. Either way the outcome is a one-line
  reason; the server decides which channel carries it (-32602, or ``isError``
  from 2025-11-25 on, SEP-1303).
* A tool function gets the arguments as keywords and returns text, one content
  block, a list of content blocks, or a whole result dict (with ``content``).
  Anything else is a tool failure, reported through the active strategy.
* ``tools/list`` pages are cut from the registration order with opaque cursors.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import fastjsonschema

from harness.protocol.errors import InvalidParams
from harness.protocol.payload import PayloadTooLarge, check_payload, text_size_problem

ToolFn = Callable[..., Any]

_EMPTY_SCHEMA: dict[str, Any] = {"type": "object", "properties": {}}

_EXACT_TYPES: dict[str, frozenset[type]] = {
    "string": frozenset({str}),
    "integer": frozenset({int}),
    "number": frozenset({int, float}),
    "boolean": frozenset({bool}),
    "object": frozenset({dict}),
    "array": frozenset({list}),
    "null": frozenset({type(None)}),
}
"""Python types whose values JSON Schema's ``type`` admits with no further question."""
_PLAIN_SCHEMA_KEYS = frozenset({"type", "properties", "required", "description", "title", "$schema"})
_PLAIN_PROPERTY_KEYS = frozenset({"type", "description", "title"})

TypeCheck = dict[str, frozenset[type] | None]
"""Argument name -> the exact Python types that need no validator (None: any value)."""
PlainCheck = tuple[TypeCheck, frozenset[type] | None]

_COMPILED: dict[str, tuple[Callable[[Any], Any], PlainCheck | None]] = {}
_COMPILED_MAX = 1024


def compile_schema(schema: dict[str, Any]) -> Callable[[Any], Any]:
    """The fastjsonschema validator for ``schema``, compiled once per distinct schema."""
    return _compiled(schema)[0]


def _compiled(schema: dict[str, Any]) -> tuple[Callable[[Any], Any], PlainCheck | None]:
    # Compiling costs about a millisecond and every session builds its server anew, so
    # schemas with the same repr (same keys, order and values) share the validator and
    # the pre-check; both are pure functions of their input. Up to _COMPILED_MAX are kept.
    key = repr(schema)
    hit = _COMPILED.get(key)
    if hit is None:
        hit = (fastjsonschema.compile(schema), plain_type_check(schema))
        if len(_COMPILED) < _COMPILED_MAX:
            _COMPILED[key] = hit
    return hit


def plain_type_check(schema: dict[str, Any]) -> PlainCheck | None:
    """A pre-check for schemas that only name types, or None when the schema says more.

    Returns the per-argument types and the types admitted for arguments the schema
    does not name (None: any; empty: none, for ``additionalProperties: false``).
    A value passing the pre-check is valid; any other value still goes to the full
    validator, which names the problem. Defaults are excluded because the validator
    fills them in.
    """
    if not _PLAIN_SCHEMA_KEYS.issuperset(schema.keys() - {"additionalProperties"}):
        return None
    extra = schema.get("additionalProperties", True)
    if not isinstance(extra, bool):
        return None
    props = schema.get("properties")
    if not isinstance(props, dict):
        return None
    check: TypeCheck = {}
    for name, prop in props.items():
        if not isinstance(prop, dict) or not _PLAIN_PROPERTY_KEYS.issuperset(prop):
            return None
        kind = prop.get("type")
        if kind is None:
            check[name] = None
            continue
        kinds = kind if isinstance(kind, list) else [kind]
        if not kinds or not all(isinstance(k, str) and k in _EXACT_TYPES for k in kinds):
            return None
        check[name] = frozenset().union(*(_EXACT_TYPES[k] for k in kinds))
    return check, (None if extra else frozenset())


@dataclass(eq=False)
class Tool:
    """One registered tool; ``descriptor`` is what tools/list shows for it."""

    name: str
    fn: ToolFn
    input_schema: dict[str, Any]
    description: str = ""
    title: str | None = None
    annotations: dict[str, Any] | None = None
    checked: bool = True
    """The server checks the arguments against ``input_schema`` before the call. False: the tool
    function validates them itself, as a typed function whose own library validates does (a
    world's tools, docs/worlds.md), and what it raises is the tool's failure, which the strategy
    reports; the schema is still what ``tools/list`` shows."""
    descriptor: dict[str, Any] = field(init=False)
    required: tuple[str, ...] = field(init=False)
    _validate: Callable[[Any], Any] | None = field(init=False)
    _required: frozenset[str] = field(init=False)
    _plain: PlainCheck | None = field(init=False)

    def __post_init__(self) -> None:
        schema = self.input_schema or dict(_EMPTY_SCHEMA)
        if schema.get("type") != "object":
            raise ValueError(f"tool {self.name!r}: inputSchema must have type 'object'")
        self.input_schema = schema
        self.required = tuple(schema.get("required", ()))
        self._required = frozenset(self.required)
        try:
            self._validate, self._plain = _compiled(schema) if schema.get("properties") else (None, None)
        except fastjsonschema.JsonSchemaDefinitionException as exc:
            raise ValueError(f"tool {self.name!r}: invalid inputSchema: {exc}") from exc
        desc: dict[str, Any] = {"name": self.name}
        if self.title:
            desc["title"] = self.title
        if self.description:
            desc["description"] = self.description
        desc["inputSchema"] = schema
        if self.annotations:
            desc["annotations"] = self.annotations
        self.descriptor = desc

    def argument_problem(self, arguments: dict[str, Any]) -> str | None:
        """Why ``arguments`` do not fit the schema, naming the argument; None if they do."""
        if not self.checked:
            return None  # the tool's own validation answers
        if not arguments.keys() >= self._required:
            for name in self.required:
                if name not in arguments:
                    return f"missing required argument {name!r}"
        plain = self._plain
        if plain is not None:  # the common case: every value has an exact admitted type
            check, extra = plain
            for key, value in arguments.items():
                admitted = check.get(key, extra)
                if admitted is not None and type(value) not in admitted:
                    break
            else:
                return None
        if self._validate is not None:
            try:
                self._validate(arguments)
            except fastjsonschema.JsonSchemaValueException as exc:
                return _describe(exc)
        return None


def _describe(exc: fastjsonschema.JsonSchemaValueException) -> str:
    path = [str(p) for p in (exc.path or [])[1:]]
    where = f"argument {'.'.join(path)!r}" if path else "arguments"
    text = str(exc.message)
    # fastjsonschema says "data.x must be integer"; keep the predicate, name the argument.
    predicate = text.split(" must ", 1)[1] if " must " in text else text
    return f"{where} must {predicate}" if " must " in text else f"{where}: {text}"


def to_result(value: Any, max_bytes: int | None = None) -> dict[str, Any]:
    """Turn a tool function's return value into a ``tools/call`` result.

    Raises TypeError for a value no content block or no JSON can carry (see
    :mod:`harness.protocol.payload`), PayloadTooLarge above ``max_bytes``; the
    server reports either as a tool failure through the active strategy.
    """
    if isinstance(value, str):
        problem = text_size_problem(value, max_bytes)
        if problem is not None:
            raise PayloadTooLarge(problem)
        return {"content": [{"type": "text", "text": value}]}
    if isinstance(value, dict):
        if "content" in value:
            content = value["content"]
            if not isinstance(content, list):
                raise TypeError("tool result content must be a list of content blocks")
            _check_blocks(content)
            check_payload(value, max_bytes)
            return value
        _check_blocks([value])
        check_payload(value, max_bytes)
        return {"content": [value]}
    if isinstance(value, list):
        _check_blocks(value)
        check_payload(value, max_bytes)
        return {"content": value}
    if isinstance(value, bool | int | float) or value is None:
        return {"content": [{"type": "text", "text": "" if value is None else str(value)}]}
    raise TypeError(f"tool returned {type(value).__name__}, which no content block can carry")


def _check_blocks(blocks: Sequence[Any]) -> None:
    for block in blocks:
        if not isinstance(block, dict) or not isinstance(block.get("type"), str):
            raise TypeError("every content block must be an object with a string 'type'")
        if block["type"] == "text" and not isinstance(block.get("text"), str):
            raise TypeError("a text content block needs a string 'text'")


def encode_cursor(offset: int) -> str:
    """An opaque cursor for the page that starts at ``offset``."""
    return base64.urlsafe_b64encode(f"tools:{offset}".encode()).decode()


def decode_cursor(cursor: object) -> int:
    """The offset a cursor stands for; -32602 for anything this server did not issue."""
    if not isinstance(cursor, str):
        raise InvalidParams("cursor must be a string")
    try:
        kind, _, number = base64.urlsafe_b64decode(cursor.encode()).decode().partition(":")
        offset = int(number)
    except (binascii.Error, UnicodeError, ValueError):
        raise InvalidParams("invalid cursor") from None
    if kind != "tools" or offset < 0:
        raise InvalidParams("invalid cursor")
    return offset
