"""Harvesting a server's own error texts: ``harness probe --harvest FILE``.

Every probe step that gets an error back has provoked a real text from the server: a
``tools/call`` result with ``isError: true`` (channel ``isError``), or a JSON-RPC error
response to any request the probe sent (channel ``jsonrpc``). A
:class:`~harness.probe.session.ProbeSession` keeps one :class:`HarvestRecord` per such reply,
late ones included, in the order they came; the runner gathers them lane by lane, so a server
that answers the same way gives the same file.

``--calls FILE.toml`` adds calls of the user's choosing, made after the rules on a session of
their own (handshake era, the latest version)::

    [[calls]]
    tool = "read_file"
    arguments = { path = "/no/such/file" }
    timeout = 10          # optional: seconds to wait for this call (default: --timeout)

    [[calls]]
    tool = "read_file"
    arguments_json = '{"path": null}'   # instead of arguments: what TOML cannot say (null)

    [[calls]]
    tool = "query"
    arguments = { sql = "SELECT * FROM nowhere" }
    expect_error = true   # the call is meant to fail: keep its text even as an ordinary result

:func:`harvest_line` turns a record into one line of the harvest file, whose keys are exactly
:data:`HARVEST_KEYS`. This module only records what came back; reading the texts is left to
whoever reads the file (``docs/corpus.md``).
"""

from __future__ import annotations

import json
import os
import tempfile
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.errors import UserError, loads_toml

IS_ERROR = "isError"
"""The channel of a ``tools/call`` result with ``isError: true``."""
JSONRPC = "jsonrpc"
"""The channel of a JSON-RPC error response."""
RESULT = "result"
"""The channel of an ordinary ``tools/call`` result (no ``isError: true``) to a call made to fail
(``expect_error``): real servers report failures this way too, and an agent that trusts
``isError`` takes them for answers."""

STACKS: tuple[str, ...] = ("typescript-sdk", "python-sdk", "fastmcp", "go", "other")
"""The implementation stacks a harvested server may be filed under (``--stack``)."""

HARVEST_KEYS: tuple[str, ...] = ("server", "version", "stack", "tool", "arguments", "channel", "code", "text")
"""The keys of every line of a harvest file, in this order."""


@dataclass(frozen=True)
class HarvestRecord:
    """One error the server answered: to which tool call (``tool`` None for another request),
    on which channel, with which JSON-RPC ``code`` (None for ``isError``), and its full text."""

    tool: str | None
    arguments: Any
    channel: str
    code: int | None
    text: str


def record_of(request: Mapping[str, Any] | None, reply: Mapping[str, Any]) -> HarvestRecord | None:
    """The error ``reply`` carries, as a record of the ``request`` that got it; None if no error.

    ``request`` is the message the probe sent under the reply's id (None when it is not known:
    a raw line that was no JSON, or a reply with id null). Only a ``tools/call`` names a tool;
    its ``arguments`` are those sent.
    """
    tool, arguments = _call_of(request)
    error = reply.get("error")
    if isinstance(error, dict):
        code = error.get("code")
        message = error.get("message")
        data = error.get("data")
        parts = [p for p in (message, data) if isinstance(p, str) and p]
        return HarvestRecord(
            tool,
            arguments,
            JSONRPC,
            code if isinstance(code, int) and not isinstance(code, bool) else None,
            "\n".join(parts),
        )
    result = reply.get("result")
    if tool is None or not isinstance(result, dict) or result.get("isError") is not True:
        return None
    return HarvestRecord(tool, arguments, IS_ERROR, None, content_text(result.get("content")))


def content_text(content: object) -> str:
    """The text items of a result's ``content``, joined by newlines (other items are left out)."""
    items = content if isinstance(content, list) else []
    texts = [i["text"] for i in items if isinstance(i, dict) and isinstance(i.get("text"), str)]
    return "\n".join(texts)


def _call_of(request: Mapping[str, Any] | None) -> tuple[str | None, Any]:
    if request is None or request.get("method") != "tools/call":
        return None, None
    params = request.get("params")
    params = params if isinstance(params, dict) else {}
    name = params.get("name")
    return (name if isinstance(name, str) else None), params.get("arguments")


def harvest_line(record: HarvestRecord, server: str, version: str, stack: str) -> dict[str, Any]:
    """One line of the harvest file: the record under the server's name, version and stack."""
    return {
        "server": server,
        "version": version,
        "stack": stack,
        "tool": record.tool,
        "arguments": record.arguments,
        "channel": record.channel,
        "code": record.code,
        "text": record.text,
    }


def server_identity(info: Mapping[str, Any] | None, name: str | None) -> tuple[str, str]:
    """The server's name (``name`` if given, else its serverInfo name) and its serverInfo version."""
    info = info or {}
    found, version = info.get("name"), info.get("version")
    chosen = name if name else (found if isinstance(found, str) and found else "unknown")
    return chosen, version if isinstance(version, str) else ""


def write_harvest(path: Path, lines: Iterable[Mapping[str, Any]]) -> int:
    """Write one JSON object per line to ``path`` (atomically: whole or not at all); the count."""
    text = "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return text.count("\n")


@dataclass(frozen=True)
class ExtraCall:
    """One ``[[calls]]`` table: a tool, the arguments to send, how long to wait (None: the
    probe's ``--timeout``), and whether the call is made to fail (``expect_error``: its result
    text is kept whatever ``isError`` says)."""

    tool: str
    arguments: dict[str, Any] = field(default_factory=dict)
    timeout: float | None = None
    expect_error: bool = False


CALL_KEYS = frozenset({"tool", "arguments", "arguments_json", "timeout", "expect_error"})


def result_record(call: ExtraCall, reply: Mapping[str, Any]) -> HarvestRecord | None:
    """The record of an ordinary result to a call made to fail (channel ``result``); None when
    the call does not expect an error or the reply is no ordinary result (an ``isError`` result
    or a JSON-RPC error is recorded as such by :func:`record_of`)."""
    result = reply.get("result")
    if not call.expect_error or "error" in reply or not isinstance(result, dict):
        return None
    if result.get("isError") is True:
        return None
    return HarvestRecord(call.tool, call.arguments, RESULT, None, content_text(result.get("content")))


def load_calls(path: Path) -> tuple[ExtraCall, ...]:
    """The ``[[calls]]`` of a TOML file; UserError naming the file and the call for any mistake."""
    try:
        data = loads_toml(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise UserError(f"--calls {path}: cannot read: {exc.strerror or exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise UserError(f"--calls {path}: not TOML: {exc}") from None
    extra = sorted(set(data) - {"calls"})
    if extra:
        raise UserError(f"--calls {path}: unknown key {extra[0]!r} (only [[calls]] tables)")
    tables = data.get("calls", [])
    if not isinstance(tables, list):
        raise UserError(f"--calls {path}: 'calls' must be an array of tables ([[calls]])")
    return tuple(_call(path, i, table) for i, table in enumerate(tables, start=1))


def _call(path: Path, index: int, table: object) -> ExtraCall:
    where = f"--calls {path}: calls[{index}]"
    if not isinstance(table, dict):
        raise UserError(f"{where}: must be a table")
    unknown = sorted(set(table) - CALL_KEYS)
    if unknown:
        raise UserError(f"{where}: unknown key {unknown[0]!r} (valid: {', '.join(sorted(CALL_KEYS))})")
    tool = table.get("tool")
    if not isinstance(tool, str) or not tool:
        raise UserError(f"{where}: 'tool' must be a tool's name")
    if "arguments" in table and "arguments_json" in table:
        raise UserError(f"{where}: give 'arguments' or 'arguments_json', not both")
    arguments = table.get("arguments", {})
    if "arguments_json" in table:
        text = table["arguments_json"]
        try:
            arguments = json.loads(text) if isinstance(text, str) else None
        except ValueError as exc:
            raise UserError(f"{where}: 'arguments_json' is not JSON: {exc}") from None
        if not isinstance(arguments, dict):
            raise UserError(f"{where}: 'arguments_json' must be a JSON object in a string")
    if not isinstance(arguments, dict):
        raise UserError(f"{where}: 'arguments' must be a table")
    expect_error = table.get("expect_error", False)
    if not isinstance(expect_error, bool):
        raise UserError(f"{where}: 'expect_error' must be true or false")
    timeout = table.get("timeout")
    if timeout is not None and (
        isinstance(timeout, bool) or not isinstance(timeout, int | float) or not timeout > 0
    ):
        raise UserError(f"{where}: 'timeout' must be a positive number of seconds")
    # TOML dates and times are no JSON: the arguments must go on the wire as they are.
    try:
        json.dumps(arguments, allow_nan=False)
    except (TypeError, ValueError):
        raise UserError(f"{where}: 'arguments' holds a value JSON cannot carry (a TOML date?)") from None
    return ExtraCall(tool, arguments, float(timeout) if timeout is not None else None, expect_error)
