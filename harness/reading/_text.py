"""Getting at the words: terminal codes out, the wrappers that servers and SDKs put around a
message peeled off, JSON inside the text decoded, and the caller's values masked.

The rule this module keeps for the others: **a value is never the text's own word.** What the
caller sent (its arguments' values, wherever they are echoed), what a text quotes, paths, file
names, URLs and query strings are masked by :func:`neutral` before any rule decides a category,
so that a file named ``forbidden.txt`` or a URL carrying ``?timeout=10s`` cannot steer the
reading. The masking is by the shape of a value, never by the words inside it.

Nothing here decides anything; the other modules read what this one hands them.
"""

from __future__ import annotations

import ast
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


MASK = "«»"
"""What a masked value becomes: no rule's word, and no name."""

_STATUS_PHRASE = re.compile(r"^[1-5]\d\d(?: [A-Z][A-Za-z-]*(?: [A-Za-z-]+){0,3})?$")
"""A quoted HTTP status and its reason phrase (httpx: ``Client error '404 Not Found' for url``):
the library's words, not a value, so it stays."""
URL = re.compile(r"\b[a-z][\w+.-]{0,20}://[^\s'\"`<>]{1,2000}", re.I)
_PATH = re.compile(
    r"(?<![\w/.:\\-])(?:~|\.{1,2})?/(?=[\w.~-])[^\s'\"`<>|,;()\[\]{}]{0,400}"
    r"|(?<![\w])[A-Za-z]:\\[^\s'\"`<>|,;]{0,400}"
)
"""An absolute or relative path (``/srv/x``, ``./a/b``, ``~/x``, ``C:\\x``): a slash after a
word character (``HTTP/1.1``, ``and/or``) starts none."""
_FILE_NAME = re.compile(r"(?<![\w.\\/-])[\w-]{1,100}\.[a-z][a-z0-9]{0,4}(?![\w.])")
"""A file name with a lower-case extension (``notes.txt``, ``forbidden.log``); an exception's
dotted name (``httpx.ReadTimeout``, ``Client.Timeout``), an IP address and "e.g." are none."""
_QUERY = re.compile(r"\?[\w.%-]{1,100}=[^\s'\"`<>]{0,2000}")
"""A query string on its own (``?timeout=10s&retry=1``)."""
_MIN_VALUE = 3
"""A caller's value shorter than this is not masked: too many words are that short."""
_MAX_VALUES = 200


def caller_values(arguments: object) -> list[str]:
    """The string values (and numbers, as text) of a call's arguments, nested ones included,
    longest first: what the caller sent, which a text may echo anywhere."""
    found: set[str] = set()
    stack: list[tuple[object, int]] = [(arguments, 0)]
    while stack and len(found) < _MAX_VALUES:
        value, depth = stack.pop()
        if isinstance(value, str):
            if len(value.strip()) >= _MIN_VALUE:
                found.add(value.strip()[:MAX_LINE])
        elif isinstance(value, int | float) and not isinstance(value, bool):
            if len(str(value)) >= _MIN_VALUE:
                found.add(str(value))
        elif depth < 6 and isinstance(value, dict):
            stack.extend((v, depth + 1) for v in list(value.values())[:_MAX_VALUES])
        elif depth < 6 and isinstance(value, list | tuple):
            stack.extend((v, depth + 1) for v in list(value)[:_MAX_VALUES])
    return sorted(found, key=lambda v: (-len(v), v))


def _mask_value(text: str, value: str) -> str:
    if value not in text:
        return text
    head = r"(?<!\w)" if value[0].isalnum() or value[0] == "_" else ""
    tail = r"(?!\w)" if value[-1].isalnum() or value[-1] == "_" else ""
    return re.sub(head + re.escape(value) + tail, MASK, text)


_MESSAGE_POSITION = re.compile(r"(?:message|reason|msg|detail|description|error)\s*[=:]\s*$", re.I)


def _mask_quoted(m: re.Match[str]) -> str:
    """A quoted single token (a name, an id, a number, a word) is a value; a quoted phrase of
    several words is a message a library quotes (Python's reprs, ``message='Too Many
    Requests'``), and so is anything quoted after ``message=``, ``reason=``: those stay. A
    caller's value is masked before this, however many words it has."""
    inner = m.group()[1:-1]
    if _STATUS_PHRASE.match(inner) or re.search(r"\s", inner.strip()):
        return m.group()
    if _MESSAGE_POSITION.search(m.string[max(0, m.start() - 20) : m.start()]):
        return m.group()
    return MASK


def mask_values(text: str, arguments: object) -> str:
    """The text with the caller's values masked wherever they appear (as sent, whole)."""
    for value in caller_values(arguments):
        text = _mask_value(text, value)
    return text


def neutral(text: str, arguments: object = None) -> str:
    """The text with every value masked: the caller's values wherever they appear, then URLs,
    quoted single tokens, paths, file names and query strings. What is left are the words of
    whoever wrote the error; the category rules read only those."""
    text = URL.sub(MASK, mask_values(text, arguments))
    text = _QUOTED.sub(_mask_quoted, text)
    text = _PATH.sub(MASK, text)
    text = _FILE_NAME.sub(MASK, text)
    return _QUERY.sub(MASK, text)


@dataclass(frozen=True)
class Embedded:
    """What JSON in the text holds: lists of validation issues, the message strings of error
    objects (``{"error": "...", "message": "..."}``), flattened, and ``read_as``: the text with
    each error object replaced by its message strings, so that a wrapped error is read by its
    error field and not by the values beside it (``{"success": false, "query": "...", "error":
    "..."}``)."""

    issue_lists: tuple[list[Any], ...]
    strings: tuple[str, ...]
    read_as: str = ""


_MESSAGE_KEYS = ("error", "message", "detail", "details", "reason", "description", "title", "msg")


def embedded(text: str, *, tries: int = 8) -> Embedded:
    """Decode the JSON arrays and objects found in ``text`` (at most ``tries`` attempts)."""
    lists: list[list[Any]] = []
    strings: list[str] = []
    pieces: list[str] = []
    kept = 0
    position = 0
    for _ in range(tries):
        match = _JSON_START.search(text, position)
        if match is None:
            break
        try:
            value, end = _DECODER.raw_decode(text, match.start())
        except (ValueError, RecursionError):
            literal = _python_literal(text, match.start())
            if literal is None:
                position = match.start() + 1
                continue
            value, end = literal
        position = end
        before = len(strings)
        _collect(value, lists, strings, depth=0)
        if isinstance(value, dict) and len(strings) > before and _is_error_object(value):
            pieces.append(text[kept : match.start()])
            pieces.append("\n" + "\n".join(strings[before:]) + "\n")
            kept = end
    read_as = "".join(pieces) + text[kept:] if pieces else text
    return Embedded(tuple(lists), tuple(strings[:40]), read_as)


_CLOSERS = {"{": "}", "[": "]"}
_MAX_LITERAL = 5_000


def _python_literal(text: str, start: int) -> tuple[Any, int] | None:
    """A Python dict or list written by ``repr`` (``{'ok': False, 'error': 'ratelimited'}``,
    as Python clients print a server's answer) at ``start``, and where it ends; None if none."""
    opener = text[start]
    depth = 0
    quote: str | None = None
    for i in range(start, min(len(text), start + _MAX_LITERAL)):
        ch = text[i]
        if quote is not None:
            if ch == quote and text[i - 1] != "\\":
                quote = None
        elif ch in "'\"":
            quote = ch
        elif ch in "{[":
            depth += 1
        elif ch in "}]":
            depth -= 1
            if depth == 0:
                if ch != _CLOSERS[opener]:
                    return None
                try:
                    return ast.literal_eval(text[start : i + 1]), i + 1
                except (ValueError, SyntaxError, MemoryError, RecursionError, TypeError):
                    return None
    return None


_CODE = re.compile(r"^[A-Za-z]+(?:_[A-Za-z]+)+$")
"""An error code in snake or screaming case (``channel_not_found``, ``PERMISSION_DENIED``)."""


def _as_words(value: str) -> str:
    """An error code read as words ("channel not found"); any other message as it is."""
    return value.replace("_", " ").lower() if _CODE.match(value) else value


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
                    strings.append(_as_words(item[: MAX_LINE * 2]))
                elif str(key).lower() in ("code", "status", "error_code", "errorcode") and _CODE.match(item):
                    strings.append(_as_words(item))
            elif isinstance(item, int | float) and not isinstance(item, bool):
                plain = str(key).lower().replace("_", "").replace("-", "")
                if plain in ("status", "statuscode", "code"):
                    strings.append(f"{key}: {item}")
                elif plain in ("retryafter", "retryafterseconds", "retryaftersecs"):
                    strings.append(f"retry after: {item}")
            elif isinstance(item, dict | list):
                _collect(item, lists, strings, depth + 1)


def _is_error_object(value: dict[Any, Any]) -> bool:
    """Is this object an error's envelope (a message field, or ``ok``/``success`` beside one),
    whose other fields are values, not words? A dict of headers or of data is not."""
    keys = {str(k).lower() for k in list(value)[:40]}
    return bool(keys & set(_MESSAGE_KEYS)) or any(k.endswith(("error", "message")) for k in keys)


def _issue_like(item: dict[str, Any]) -> bool:
    message = item.get("message", item.get("msg"))
    return isinstance(message, str) and ("path" in item or "code" in item or "loc" in item)
