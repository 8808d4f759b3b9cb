"""The headers Streamable HTTP mirrors from a message, shared by the client and the server.

The 2026-07-28 transport repeats parts of each POST's body in headers so that
intermediaries can route without parsing JSON: ``MCP-Protocol-Version``,
``Mcp-Method``, ``Mcp-Name`` (the param :data:`NAME_PARAM` names) and one
``Mcp-Param-{Name}`` per tool argument a tool's ``inputSchema`` marks with
``x-mcp-header``. A value that is not plain visible ASCII travels in the Base64
sentinel form ``=?base64?...?=``. The client writes them
(:mod:`harness.transports.http_client`), the server checks them against the body
(:mod:`harness.transports.http`); both read this one module.
"""

from __future__ import annotations

import base64
from typing import Any

SESSION_HEADER = "Mcp-Session-Id"
VERSION_HEADER = "MCP-Protocol-Version"
METHOD_HEADER = "Mcp-Method"
NAME_HEADER = "Mcp-Name"
PARAM_HEADER_PREFIX = "Mcp-Param-"
LAST_EVENT_HEADER = "Last-Event-ID"

NAME_PARAM: dict[str, str] = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}
"""Stateless-era methods whose ``Mcp-Name`` header mirrors a param, and which param."""

SENTINEL_START, SENTINEL_END = "=?base64?", "?="


def encode_header_value(value: str) -> str:
    """A header-safe value: as it is when plain visible ASCII, else the Base64 sentinel form."""
    plain = (
        value == value.strip(" \t")
        and all(0x20 <= ord(c) <= 0x7E or c == "\t" for c in value)
        and not (value.startswith(SENTINEL_START) and value.endswith(SENTINEL_END))
    )
    if plain:
        return value
    return SENTINEL_START + base64.b64encode(value.encode("utf-8")).decode("ascii") + SENTINEL_END


def header_paths(schema: Any, prefix: tuple[str, ...] = ()) -> dict[str, tuple[str, ...]]:
    """``x-mcp-header`` name -> the property path it mirrors, through nested ``properties``."""
    found: dict[str, tuple[str, ...]] = {}
    props = schema.get("properties") if isinstance(schema, dict) else None
    if not isinstance(props, dict):
        return found
    for key, sub in props.items():
        if not isinstance(sub, dict):
            continue
        name = sub.get("x-mcp-header")
        if isinstance(name, str) and name:
            found[name] = (*prefix, key)
        found.update(header_paths(sub, (*prefix, key)))
    return found


def decode_header_value(value: str) -> str | None:
    """A header value as meant: the Base64 sentinel form decoded (None if it does not decode)."""
    if value.startswith(SENTINEL_START) and value.endswith(SENTINEL_END):
        try:
            encoded = value[len(SENTINEL_START) : -len(SENTINEL_END)]
            return base64.b64decode(encoded, validate=True).decode("utf-8")
        except (ValueError, UnicodeDecodeError):
            return None
    return value


def param_text(value: Any) -> str | None:
    """An argument value as a header carries it (string, integer, boolean), else None."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | str):
        return str(value)
    return None


def value_at(arguments: Any, path: tuple[str, ...]) -> Any:
    """The argument at ``path`` (a chain of property names), None where there is none."""
    value = arguments
    for key in path:
        value = value.get(key) if isinstance(value, dict) else None
    return value
