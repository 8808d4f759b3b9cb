"""What a tool result may carry: JSON values only, not nested without end, within a size.

A tool function is user code; it may return a set, bytes, NaN, an object, a dict
with integer keys, a cycle, or forty megabytes. None of that may break a reply or
the server. :func:`check_payload` finds such a value before the reply is built,
so the server reports it as a tool failure through the active strategy (an
``isError`` result under ``is_error``, -32603 under ``collapse``, ...).

Rules:

* Only ``dict`` (string keys), ``list``/``tuple``, ``str``, ``int``, finite
  ``float``, ``bool`` and ``None`` pass; ``json.dumps`` would turn an int key
  into a string silently, so a non-string key is refused rather than rewritten.
* Nesting deeper than ``max_depth`` is refused (this also ends a cycle) by an
  iterative walk, so no check here can raise RecursionError.
* The size is the UTF-8 length of the compact JSON (for a bare text result, of
  the text), compared with the server's ``max_result_bytes``.

The walk is the rule. A value that two C encoders both take (orjson at its
strictest, then json without NaN) passes without it; anything either refuses is
walked, so every refusal and its message come from the walk
(``tests/protocol/test_fast_paths.py`` holds the two against each other).
"""

from __future__ import annotations

import json
import math
from typing import Any

import orjson

_orjson_dumps = orjson.dumps
_STRICT = orjson.OPT_PASSTHROUGH_SUBCLASS | orjson.OPT_PASSTHROUGH_DATACLASS | orjson.OPT_PASSTHROUGH_DATETIME
_compact = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode
"""``json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)``, built once."""

DEFAULT_MAX_RESULT_BYTES = 4 * 1024 * 1024
"""A tool result larger than this is a tool failure (the same as the message limit)."""

MAX_RESULT_DEPTH = 256
"""Containers nested deeper than this in a tool result are refused."""


class PayloadTooLarge(ValueError):
    """A tool result above the size limit."""


def text_size_problem(text: str, max_bytes: int | None) -> str | None:
    """Why ``text`` is too large for one result, or None; cheap for short text."""
    if max_bytes is None or len(text) * 4 <= max_bytes:  # UTF-8 takes at most 4 bytes a character
        return None
    size = len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))
    return None if size <= max_bytes else _too_large(size, max_bytes)


def check_payload(value: Any, max_bytes: int | None, max_depth: int = MAX_RESULT_DEPTH) -> None:
    """Raise TypeError if JSON cannot carry ``value`` as it is, PayloadTooLarge above ``max_bytes``."""
    if max_bytes is not None and max_depth >= MAX_RESULT_DEPTH:
        # The same answer from two C encoders instead of a Python walk. orjson (with every
        # passthrough) refuses non-string keys, subclasses, ints past 64 bits and nesting past
        # its 254 levels, all of them stricter than or equal to the walk; json refuses what
        # orjson lets through (NaN, Enum, UUID) and gives the size. Anything either refuses
        # goes to the walk, which accepts or names the problem exactly as before.
        try:
            _orjson_dumps(value, option=_STRICT)
            text = _compact(value)
        except (TypeError, ValueError, OverflowError, RecursionError):
            pass
        else:
            _check_size(text, max_bytes)
            return
    _check_by_walking(value, max_bytes, max_depth)


def _check_by_walking(value: Any, max_bytes: int | None, max_depth: int) -> None:
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, str | bool | int) or item is None:
            continue
        if isinstance(item, float):
            if not math.isfinite(item):
                raise TypeError(f"tool result holds {item!r}, which is not JSON")
            continue
        if isinstance(item, dict | list | tuple):
            if depth >= max_depth:
                raise TypeError(f"tool result is nested deeper than {max_depth} levels (or is a cycle)")
            if isinstance(item, dict):
                for key in item:
                    if not isinstance(key, str):
                        raise TypeError(
                            f"tool result has a {type(key).__name__} key; JSON object keys are strings"
                        )
                stack.extend((v, depth + 1) for v in item.values())
            else:
                stack.extend((v, depth + 1) for v in item)
            continue
        raise TypeError(f"tool result holds a {type(item).__name__}, which JSON cannot carry")
    if max_bytes is None:
        return
    try:
        text = _compact(value)
    except (ValueError, OverflowError) as exc:  # e.g. an int with more digits than Python prints
        raise TypeError(f"tool result is not JSON: {exc}") from None
    _check_size(text, max_bytes)


def _check_size(text: str, max_bytes: int) -> None:
    size = len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))
    if size > max_bytes:
        raise PayloadTooLarge(_too_large(size, max_bytes))


def _too_large(size: int, max_bytes: int) -> str:
    return f"tool result is {size} bytes, above the {max_bytes}-byte limit"
