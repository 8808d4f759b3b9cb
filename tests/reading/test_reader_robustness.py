"""The reader never raises, always answers a valid reading, gives the same one twice, and is fast.

Any string (and any arguments and tool names beside it) reads to a :class:`Reading` whose
fields have their types and whose ``to_json`` is JSON; texts stitched from the words the rules
look for push on the rules themselves; long and pathological texts read in bounded time.
"""

from __future__ import annotations

import json
import time
from typing import Any, cast

from hypothesis import given, settings
from hypothesis import strategies as st

from harness.reading import CATEGORIES, Instruction, Reading, read

FRAGMENTS = [
    "Error:", "MCP error -32602:", "### Error\n", "Input validation error:", "Required at", "Expected",
    "received", "undefined", " at ", "path", "edits[0].oldText", "1 validation error for X\n", "\n  ",
    "Field required [type=missing", "Input should be", "greater than or equal to", "'a', 'b' or 'c'",
    "is not of type", "'string'", "is a required property", "not found", "Unknown tool:", "tool",
    "ENOENT", "EACCES", "ECONNREFUSED", "fetch failed", "timed out", "Retry-After:", "in 2 minutes",
    "rate limit", "429", "404", "call", "run", "use", "delete_all", "camelCase", "(", ")", "{", "}",
    '{"code": "invalid_type", "path": ["x"], "message": "Required"}', "[", "]", "\"", "'", "`", ",",
    ";", ":", "\x1b[2m", "must be", "one of", "|", "Did you mean", "outside allowed", "not in /x",
    "Invalid", "format", "YYYY-MM-DD", "is required", "task ID", "✖", "→", "€", "\u0000", "\r\n",
]  # fmt: skip

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=8,
)


def assert_valid(reading: Reading) -> None:
    assert isinstance(reading, Reading)
    assert reading.category in CATEGORIES
    assert reading.argument is None or (isinstance(reading.argument, str) and reading.argument)
    assert reading.expected is None or (isinstance(reading.expected, str) and reading.expected)
    assert reading.retry_after_s is None or (
        isinstance(reading.retry_after_s, float) and reading.retry_after_s >= 0
    )
    assert isinstance(reading.actionable, bool)
    assert reading.instruction is None or isinstance(reading.instruction, Instruction)
    doc = reading.to_json()
    assert json.loads(json.dumps(doc)) == doc


@settings(max_examples=300)
@given(
    text=st.text(max_size=400),
    arguments=st.none() | st.dictionaries(st.text(max_size=12), JSON, max_size=5),
    tools=st.none() | st.lists(st.text(max_size=12), max_size=5),
)
def test_any_text_reads_to_a_valid_reading_and_the_same_one_twice(
    text: str, arguments: dict[str, Any] | None, tools: list[str] | None
) -> None:
    first = read(text, arguments=arguments, tools=tools)
    assert_valid(first)
    assert read(text, arguments=arguments, tools=tools) == first


@settings(max_examples=300)
@given(
    pieces=st.lists(st.sampled_from(FRAGMENTS) | st.text(max_size=6), max_size=30),
    arguments=st.none()
    | st.dictionaries(st.sampled_from(["path", "x", "task_id", "id", "a"]), JSON, max_size=3),
)
def test_texts_made_of_the_words_the_rules_look_for_read_to_valid_readings(
    pieces: list[str], arguments: dict[str, Any] | None
) -> None:
    text = " ".join(pieces)
    assert_valid(read(text, arguments=arguments))
    assert_valid(read(text, arguments=arguments, tools=["delete_all", "camelCase"]))


def test_a_value_that_is_not_text_reads_unknown() -> None:
    for value in (b"ENOENT", 404, ["fetch failed"], {"text": "x"}):
        assert read(cast(Any, value)) == Reading()
    assert read("fetch failed", arguments=cast(Any, ["x"]), tools=cast(Any, "call_x")).category == "transient"


PATHOLOGICAL = [
    "[" * 50_000,
    "{" * 20_000 + "}" * 20_000,
    "a " * 50_000,
    "'" * 50_000,
    "x at " * 10_000,
    "1 validation error for X\n" + "loc\n  msg\n" * 5_000,
    "retry " * 10_000 + "5s",
    "call " * 10_000 + "do_it",
    "Invalid " * 10_000,
    "\n" * 100_000,
    "must be " * 10_000,
    "outside allowed " * 5_000,
    " is not of type " * 5_000,
    "x" * 5_000 + " at " + "y" * 5_000,
    "Too big: expected number to be <=" + "9" * 20_000,
    '[{"message": "Required", "path": ["a"]}' + ", {}" * 10_000 + "]",
]


def test_long_and_pathological_texts_read_in_bounded_time() -> None:
    arguments = {f"arg_{i}_name": i for i in range(500)}
    for text in PATHOLOGICAL:
        started = time.perf_counter()
        assert_valid(read(text, arguments=arguments, tools=[f"tool_{i}" for i in range(500)]))
        # Not a speed claim (that is ``harness bench -k reading``): catastrophic backtracking on
        # these would take minutes, so a bound this loose can only catch that.
        assert time.perf_counter() - started < 2.0, text[:40]
