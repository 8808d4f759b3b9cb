"""A server whose tool's required arguments have a type list (``["string", "null"]``) or no type.

Why: the probe's wrong-type check must fill every required argument, whatever its schema says, so
that the answer names only the mistyped one (sequential-thinking's schema has such arguments).
Its one tool, ``note``, answers ``isError`` naming every required argument that is missing, or
else the ones of the wrong type; a raw JSON-RPC peer, so the check is ours, not a library's. It
answers every ``initialize`` with 2025-11-25 whatever was asked (so a session that asked for
2025-06-18 runs under SEP-1303's rule) and has no handshake gate (it answers before ``initialize``).
"""

from __future__ import annotations

import json
import sys
from typing import Any

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "title": {"type": ["string", "null"]},
        "body": {"description": "any JSON value"},
        "count": {"type": "integer"},
        "mood": {"anyOf": [{"type": "string"}, {"type": "number"}]},
    },
    "required": ["title", "body", "count", "mood"],
}
TYPES = {"string": str, "null": type(None), "integer": int, "number": (int, float)}
TYPED = (("title", ["string", "null"]), ("count", ["integer"]), ("mood", ["string", "number"]))


def wrong(value: object, types: list[str]) -> bool:
    if isinstance(value, bool):
        return True
    return not any(isinstance(value, TYPES[t]) for t in types)


def call(arguments: dict[str, Any]) -> dict[str, Any]:
    missing = [n for n in SCHEMA["required"] if n not in arguments]
    if missing:
        text = "missing required argument(s): " + ", ".join(missing)
    else:
        bad = [n for n, types in TYPED if wrong(arguments[n], types)]
        if not bad:
            return {"content": [{"type": "text", "text": "noted"}]}
        text = "wrong type for argument(s): " + ", ".join(bad)
    return {"content": [{"type": "text", "text": text}], "isError": True}


def answer(msg: dict[str, Any]) -> dict[str, Any] | None:
    method, params = msg.get("method"), msg.get("params") or {}
    if "id" not in msg:
        return None
    if method == "initialize":
        result: dict[str, Any] = {
            "protocolVersion": "2025-11-25",
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "list-typed", "version": "1"},
        }
    elif method == "ping":
        result = {}
    elif method == "tools/list":
        result = {"tools": [{"name": "note", "inputSchema": SCHEMA}]}
    elif method == "tools/call" and params.get("name") == "note":
        result = call(params.get("arguments") or {})
    else:
        return {"jsonrpc": "2.0", "id": msg["id"], "error": {"code": -32601, "message": f"no {method}"}}
    return {"jsonrpc": "2.0", "id": msg["id"], "result": result}


if __name__ == "__main__":
    for line in sys.stdin:
        try:
            message = json.loads(line)
        except ValueError:
            continue
        reply = answer(message) if isinstance(message, dict) else None
        if reply is not None:
            sys.stdout.write(json.dumps(reply) + "\n")
            sys.stdout.flush()
