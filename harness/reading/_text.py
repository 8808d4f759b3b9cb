"""Getting at the words: terminal codes out, the wrappers that servers and SDKs put around a
message peeled off, JSON inside the text decoded.

Nothing here decides anything; the other modules read what this one hands them.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

MAX_CHARS = 20_000
"""Only the first this many characters of a text are read (a reason comes first; a stack trace
or a page dump after it adds nothing but time)."""

MAX_LINE = 2_000
"""Lines are cut to this length before a line-anchored pattern looks at them."""

_ANSI = re.compile(
    r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07\x1b]{0,200}(?:\x07|\x1b\\)|[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]"
)

_WRAPPER = re.compile(
    r"""^[ \t]*(?:
        \#{1,6}[ \t]*error[ \t]*(?:\n|$)
      | mcp[ \t]+error[ \t]+-?\d+[ \t]*:
      | (?:json-?rpc[ \t]+)?error[ \t]+-\d+[ \t]*:
      | error[ \t]+(?:executing|calling|running|invoking|in)[ \t]+tool[ \t]+
        ['"`]?[^\s:'"`]{1,200}['"`]?[ \t]*:
      | tool[ \t]+(?:call|execution)[ \t]+failed[ \t]*:
      | (?:input[ \t]+)?validation[ \t]+(?:error|failed)[ \t]*:
      | invalid[ \t]+arguments[ \t]+for[ \t]+tool[ \t]+['"`]?[^\s:'"`]{1,200}['"`]?[ \t]*:
      | internal[ \t]+(?:server[ \t]+)?error[ \t]*:
      | (?:error|exception|fatal|failed|failure)[ \t]*:
    )[ \t]*""",
    re.I | re.X,
)

_JSON_START = re.compile(r"[\[{]")
_QUOTED = re.compile(r"(?<![\w'])'[^'\n]{0,200}'(?![\w'])|\"[^\"\n]{0,200}\"|`[^`\n]{0,200}`")
_DECODER = json.JSONDecoder()


def clean(text: str) -> str:
    """The text with terminal codes and control characters out, newlines as ``\\n``, cut to
    :data:`MAX_CHARS`."""
    text = text[:MAX_CHARS].replace("\r\n", "\n").replace("\r", "\n")
    return _ANSI.sub("", text)


def unwrap(line: str) -> str:
    """One line without the prefixes that say only "an error" ("MCP error -32602:", "Error
    executing tool x:", "Input validation error:", "### Error", ...), however many there are."""
    for _ in range(8):
        stripped = _WRAPPER.sub("", line, count=1)
        if stripped == line:
            break
        line = stripped
    return line


def body(text: str) -> str:
    """The cleaned text, each line unwrapped, blank lines dropped."""
    lines = (unwrap(line[:MAX_LINE]).rstrip() for line in text.split("\n"))
    return "\n".join(line for line in lines if line.strip())


def mask_quotes(text: str) -> str:
    """The text with quoted spans (values the caller sent, names of things) replaced by ``«»``,
    so that a word inside a value does not count as the text's own."""
    return _QUOTED.sub("«»", text)


@dataclass(frozen=True)
class Embedded:
    """What JSON in the text holds: lists of validation issues, and the message strings of error
    objects (``{"error": "...", "message": "..."}``), flattened."""

    issue_lists: tuple[list[Any], ...]
    strings: tuple[str, ...]


_MESSAGE_KEYS = ("error", "message", "detail", "details", "reason", "description", "title", "msg")


def embedded(text: str, *, tries: int = 8) -> Embedded:
    """Decode the JSON arrays and objects found in ``text`` (at most ``tries`` attempts)."""
    lists: list[list[Any]] = []
    strings: list[str] = []
    position = 0
    for _ in range(tries):
        match = _JSON_START.search(text, position)
        if match is None:
            break
        try:
            value, end = _DECODER.raw_decode(text, match.start())
        except (ValueError, RecursionError):
            position = match.start() + 1
            continue
        position = end
        _collect(value, lists, strings, depth=0)
    return Embedded(tuple(lists), tuple(strings[:40]))


def _collect(value: Any, lists: list[list[Any]], strings: list[str], depth: int) -> None:
    if depth > 4 or len(strings) > 40:
        return
    if isinstance(value, list):
        if value and all(isinstance(v, dict) for v in value) and any(_issue_like(v) for v in value):
            lists.append(value)
            return
        for item in value[:20]:
            _collect(item, lists, strings, depth + 1)
    elif isinstance(value, dict):
        for key in ("issues", "errors"):
            inner = value.get(key)
            if isinstance(inner, list) and inner and all(isinstance(v, dict) for v in inner):
                lists.extend([inner] if any(_issue_like(v) for v in inner) else [])
        for key, item in list(value.items())[:40]:
            if isinstance(item, str):
                if str(key).lower() in _MESSAGE_KEYS or str(key).lower().endswith(
                    ("error", "message", "type")
                ):
                    strings.append(item[: MAX_LINE * 2])
            elif isinstance(item, int | float) and not isinstance(item, bool):
                if str(key).lower() in ("status", "status_code", "statuscode", "code", "retry_after"):
                    strings.append(f"{key}: {item}")
            elif isinstance(item, dict | list):
                _collect(item, lists, strings, depth + 1)


def _issue_like(item: dict[str, Any]) -> bool:
    message = item.get("message", item.get("msg"))
    return isinstance(message, str) and ("path" in item or "code" in item or "loc" in item)
