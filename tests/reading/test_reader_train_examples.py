"""The reader on texts of the corpus's train split, as the servers sent them.

The texts below are copied from ``harness/fixtures/data/corpus/messages.jsonl`` (train servers
only), each with what its hand annotation says; the last test reads every train message and
compares it with its annotation, field by field. The dev split is measured, not pinned here
(``harness read --evaluate --split dev``), and the held-out split is never read by a test
(``docs/reading.md``).
"""

from __future__ import annotations

from typing import Any

import pytest

from harness.fixtures.corpus import library_texts, messages
from harness.reading import FIELDS, agrees, read

ZOD3 = "MCP error -32602: Input validation error: Invalid arguments for tool {tool}: {issue}"
PYDANTIC = (
    "Error executing tool {tool}: 1 validation error for {tool}Arguments\n{loc}\n  {msg}\n"
    "    For further information visit https://errors.pydantic.dev/2.14/v/{kind}"
)

# (server-id, text, arguments, category, argument, expected, actionable)
EXAMPLES: list[tuple[str, str, dict[str, Any], str, str | None, str | None, bool]] = [
    (
        "server-filesystem-3",
        ZOD3.format(tool="read_file", issue="Expected string, received number at path"),
        {"path": 12345},
        "bad_argument",
        "path",
        "string",
        True,
    ),
    (
        "server-filesystem-18",
        ZOD3.format(tool="edit_file", issue="Required at edits[0].oldText\nRequired at edits[0].newText"),
        {"path": "/tmp/mcp-corpus/fs/notes.txt", "edits": [{"old": "hello", "new": "bye"}]},
        "missing_argument",
        "edits[0].oldText",
        None,
        True,
    ),
    (
        "server-filesystem-23",
        ZOD3.format(
            tool="list_directory_with_sizes",
            issue="Invalid enum value. Expected 'name' | 'size', received 'date' at sortBy",
        ),
        {"path": "/tmp/mcp-corpus/fs", "sortBy": "date"},
        "bad_argument",
        "sortBy",
        "one of: name, size",
        True,
    ),
    (
        "server-filesystem-5",
        "Access denied - path outside allowed directories: /etc/passwd not in /tmp/mcp-corpus/fs",
        {"path": "/etc/passwd"},
        "permission",
        "path",
        "a path in /tmp/mcp-corpus/fs",
        True,
    ),
    (
        "server-filesystem-7",
        "Cannot specify both head and tail parameters simultaneously",
        {"path": "/tmp/mcp-corpus/fs/notes.txt", "head": 1, "tail": 1},
        "bad_argument",
        "head",
        "head or tail, not both",
        True,
    ),
    (
        "server-filesystem-4",
        "ENOENT: no such file or directory, open '/tmp/mcp-corpus/fs/missing.txt'",
        {"path": "/tmp/mcp-corpus/fs/missing.txt"},
        "not_found",
        None,
        None,
        True,
    ),
    (
        "server-everything-8",
        "MCP error -32602: Input validation error: Invalid arguments for tool get-resource-links: "
        "Too big: expected number to be <=10 at count",
        {"count": 50},
        "bad_argument",
        "count",
        "<= 10",
        True,
    ),
    ("server-everything-11", "fetch failed", {"name": "x.gz"}, "transient", None, None, False),
    (
        "playwright-mcp-6",
        '### Error\nInvalid arguments for tool "browser_resize":\n✖ Invalid input: expected number, '
        "received undefined\n  → at width\n"
        "✖ Invalid input: expected number, received undefined\n  → at height",
        {},
        "missing_argument",
        "width",
        "number",
        True,
    ),
    (
        "playwright-mcp-19",
        "### Error\nTimeoutError: browserBackend.callTool: Timeout 5000ms exceeded.\nCall log:\n"
        "\x1b[2m  - waiting for getByText('never appears').first() to be visible\x1b[22m\n",
        {"text": "never appears", "time": 1},
        "timeout",
        None,
        None,
        True,
    ),
    (
        "mcp-server-fetch-9",
        PYDANTIC.format(
            tool="fetch",
            loc="max_length",
            msg="Input should be greater than or equal to 1 "
            "[type=greater_than_equal, input_value=0, input_type=int]",
            kind="greater_than_equal",
        ),
        {"url": "https://example.com/", "max_length": 0},
        "bad_argument",
        "max_length",
        ">= 1",
        True,
    ),
    (
        "mcp-server-time-7",
        "Error executing tool convert_time: Invalid time format. Expected HH:MM [24-hour format]",
        {"source_timezone": "Europe/London", "time": "25:99", "target_timezone": "Asia/Tokyo"},
        "bad_argument",
        "time",
        "HH:MM [24-hour format]",
        True,
    ),
    (
        "mcp-time-4",
        "invalid_duration: Invalid duration format: three hours",
        {"duration": "three hours"},
        "bad_argument",
        "duration",
        None,
        False,
    ),
    (
        "mcp-time-7",
        "invalid_timezone: Invalid IANA timezone name: Moon/Base",
        {"time": "2025-01-01T12:00:00", "input_timezone": "Europe/London", "output_timezone": "Moon/Base"},
        "bad_argument",
        None,
        "IANA timezone name",
        True,
    ),
    (
        "mcp-cron-7",
        "invalid input: task ID is required",
        {"name": "x", "prompt": "y"},
        "missing_argument",
        "id",
        None,
        True,
    ),
    (
        "mcp-clickhouse-4",
        "Error calling tool 'list_databases': Error HTTPConnectionPool(host='127.0.0.1', port=8999): Max "
        'retries exceeded with url: /?query_id=x (Caused by NewConnectionError("HTTPConnection(host='
        "'127.0.0.1', port=8999): Failed to establish a new connection: [Errno 111] Connection refused\"))",
        {},
        "transient",
        None,
        None,
        True,
    ),
    (
        "server-puppeteer-2",
        "Could not find Chrome (ver. 131.0.6778.204). This can occur if either\n 1. you did not perform an "
        "installation before running the script (e.g. `npx puppeteer browsers install chrome`) or",
        {},
        "permanent",
        None,
        None,
        True,
    ),
    (
        "playwright-mcp-22",
        "### Error\nError: boom\n"
        "    at eval (eval at <anonymous> (eval at evaluate (:368:30)), <anonymous>:1:16)",
        {"function": "() => { throw new Error('boom') }"},
        "unknown",
        None,
        None,
        False,
    ),
]


@pytest.mark.parametrize(
    ("text", "arguments", "category", "argument", "expected", "actionable"),
    [e[1:] for e in EXAMPLES],
    ids=[e[0] for e in EXAMPLES],
)
def test_a_train_text_reads_as_its_annotation_says(
    text: str,
    arguments: dict[str, Any],
    category: str,
    argument: str | None,
    expected: str | None,
    actionable: bool,
) -> None:
    reading = read(text, arguments=arguments)
    assert (reading.category, reading.argument, reading.expected, reading.actionable) == (
        category,
        argument,
        expected,
        actionable,
    )
    assert reading.retry_after_s is None


def test_the_copied_examples_are_train_messages() -> None:
    train = {m.id for m in messages("train")}
    assert {e[0] for e in EXAMPLES} <= train


TRAIN = messages("train")


@pytest.mark.parametrize("message", TRAIN, ids=[m.id for m in TRAIN])
def test_every_train_message_reads_as_annotated(message: Any) -> None:
    # Development was on these; a change that breaks one says which field and how.
    reading = read(message.text, arguments=message.arguments)
    wrong = {f: (getattr(reading, f), getattr(message, f)) for f in FIELDS if not agrees(f, reading, message)}
    assert not wrong, f"read, annotated: {wrong}"


LIBRARY_TRAIN_DISAGREEMENTS = {"github-13": ["category"]}
"""Train texts the reader is known to read otherwise than their annotation: GitHub's bare "Server
Error" is annotated ``transient`` (a 5xx body); the reader reads a server error with no status or
cause as ``unknown``, as it reads "Internal server error" (``test_reader_general.py``)."""


def test_every_library_train_text_reads_as_annotated_but_the_known_disagreements() -> None:
    wrong = {}
    for text in library_texts("train"):
        reading = read(text.text, arguments=text.arguments)
        fields = [f for f in FIELDS if not agrees(f, reading, text)]
        if fields:
            wrong[text.id] = fields
    assert wrong == LIBRARY_TRAIN_DISAGREEMENTS
