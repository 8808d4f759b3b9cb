"""``read``: one error text in, one :class:`Reading` out.

Theory of operation. The text is cleaned (terminal codes out, cut to a bounded length) and its
wrappers peeled off ("MCP error -32602:", "Error executing tool x:", ...); JSON inside it is
decoded, and an error object is read by its message fields, not by the values beside them. If a
validation library wrote it (``_validators``), the first issue it lists decides: missing or bad,
its path, its valid form. Otherwise the prose rules (``_prose``) decide the category on the
neutral text (every value masked: ``_text.neutral``), and the argument, the valid form and the
wait are looked for in the words. Every step is a precompiled pattern; nothing is searched
without a bound, and nothing raises.
"""

from __future__ import annotations

import copy
from collections.abc import Collection, Mapping
from dataclasses import replace
from itertools import islice
from typing import Any

from harness.reading import _prose
from harness.reading._model import Reading
from harness.reading._text import URL, body, clean, embedded, mask_quotes, mask_values, neutral
from harness.reading._validators import issues

_UNKNOWN = Reading()


def read(
    text: str | None,
    *,
    arguments: Mapping[str, Any] | None = None,
    tools: Collection[str] | None = None,
) -> Reading:
    """Read one error text.

    ``arguments`` are the arguments of the call that failed: their names help to find the
    argument a text names in its own words. ``tools`` are the tool names the reader knows: an
    instruction must name one of them (without ``tools``, any snake_case or camelCase name after
    call/invoke/run/execute/use counts).

    >>> read("MCP error -32602: Expected array, received string at entities").to_json()["expected"]
    'array'
    >>> read("connect ECONNREFUSED 127.0.0.1:5432").category
    'transient'
    >>> read("").category
    'unknown'
    """
    if not isinstance(text, str) or not text.strip():
        return _UNKNOWN
    args = arguments if isinstance(arguments, Mapping) else None
    known = tools if tools is not None and not isinstance(tools, str) else None
    cleaned = clean(text)
    found = embedded(cleaned)
    words = body(found.read_as)
    loose = [body(clean(s)) for s in found.strings if s not in found.read_as]
    if loose:
        words = words + "\n" + "\n".join(loose)
    masked = mask_quotes(words)
    order = _prose.instruction(body(cleaned) if found.read_as != cleaned else words, known)

    validation = issues(words, found.issue_lists)
    if validation:
        first = validation[0]
        category = "missing_argument" if first.missing else "bad_argument"
        keys = [str(k) for k in islice(args, _prose.MAX_KEYS)] if args else []
        argument = first.path
        if argument is not None and keys and argument not in keys:
            argument = _resolve_path(argument, keys)
        expected = first.expected
        if expected is None and not first.missing:
            expected = _prose.expected(words, category)
        return Reading(
            category=category,
            argument=argument,
            expected=expected,
            retry_after_s=None,
            actionable=_prose.actionable(words, category, True, expected) or first.path is not None,
            instruction=order,
        )

    own = mask_values(words, args)
    category, specific = _prose.category(words, own, neutral(own))
    expected = _prose.expected(words, category)
    return Reading(
        category=category,
        argument=_prose.argument(words, masked, category, args),
        expected=expected,
        retry_after_s=_prose.retry_after(URL.sub(" ", words), category),
        actionable=_prose.actionable(words, category, specific, expected),
        instruction=order,
    )


MEMO_SIZE = 1 << 16
"""Readings :func:`read_memo` keeps before it starts again from none (a bound, not a tuning)."""

_memo: dict[tuple[str, str | None, tuple[str, ...] | None], Reading] = {}


def read_memo(
    text: str | None,
    *,
    arguments: Mapping[str, Any] | None = None,
    tools: Collection[str] | None = None,
) -> Reading:
    """:func:`read`, remembered: a batch meets the same texts, for the same call and tool list,
    thousands of times (a world's error for a task, under every seed and strategy), and reading
    one is most of a world session's time (docs/benchmarks.md). The key is everything ``read``
    looks at: the text, the arguments as ``repr`` shows them (in their order, values by type),
    and the tools in their order. The shortcut beside the plain path: tests hold it equal to
    :func:`read` on every text of the corpus."""
    if not isinstance(text, str) or (arguments is not None and not isinstance(arguments, Mapping)):
        return read(text, arguments=arguments, tools=tools)
    try:
        key = (
            text,
            None if arguments is None else repr(tuple(arguments.items())),
            None if tools is None or isinstance(tools, str) else tuple(tools),
        )
        found = _memo.get(key)
    except TypeError:  # something unhashable in the tools: read it plainly
        return read(text, arguments=arguments, tools=tools)
    if found is None:
        if len(_memo) >= MEMO_SIZE:
            _memo.clear()
        found = _memo[key] = read(text, arguments=arguments, tools=tools)
    if found.instruction is not None:  # its arguments are a dict the agent may change: its own copy
        own = copy.deepcopy(dict(found.instruction.arguments))
        return replace(found, instruction=replace(found.instruction, arguments=own))
    return found


def _resolve_path(path: str, keys: list[str]) -> str:
    """A top-level name the text gives in other words, spelt as the call spells it (a nested
    path, ``edits[0].oldText``, is kept as the text gives it)."""
    if "." in path or "[" in path:
        return path
    for key in keys:
        if key.lower() == path.lower():
            return key
    return path
