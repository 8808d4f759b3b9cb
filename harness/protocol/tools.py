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

ToolFn = Callable[..., Any]

_EMPTY_SCHEMA: dict[str, Any] = {"type": "object", "properties": {}}


@dataclass(eq=False)
class Tool:
    """One registered tool; ``descriptor`` is what tools/list shows for it."""

    name: str
    fn: ToolFn
    input_schema: dict[str, Any]
    description: str = ""
    title: str | None = None
    annotations: dict[str, Any] | None = None
    descriptor: dict[str, Any] = field(init=False)
    required: tuple[str, ...] = field(init=False)
    _validate: Callable[[Any], Any] | None = field(init=False)

    def __post_init__(self) -> None:
        schema = self.input_schema or dict(_EMPTY_SCHEMA)
        if schema.get("type") != "object":
            raise ValueError(f"tool {self.name!r}: inputSchema must have type 'object'")
        self.input_schema = schema
        self.required = tuple(schema.get("required", ()))
        try:
            self._validate = fastjsonschema.compile(schema) if schema.get("properties") else None
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
        for name in self.required:
            if name not in arguments:
                return f"missing required argument {name!r}"
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


def to_result(value: Any) -> dict[str, Any]:
    """Turn a tool function's return value into a ``tools/call`` result.

    Raises TypeError for a value no content block can carry; the server reports
    that as a tool failure through the active strategy.
    """
    if isinstance(value, str):
        return {"content": [{"type": "text", "text": value}]}
    if isinstance(value, dict):
        if "content" in value:
            content = value["content"]
            if not isinstance(content, list):
                raise TypeError("tool result content must be a list of content blocks")
            _check_blocks(content)
            return value
        _check_blocks([value])
        return {"content": [value]}
    if isinstance(value, list):
        _check_blocks(value)
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
