"""A server whose one tool fails the same way whatever its arguments: "connection refused".

Why: real servers whose backend is missing (an unreachable service, "Chromium distribution
'chrome' is not found") answer every call with ``isError`` before they look at the arguments. Such
a reply is no evidence that the server validates arguments, so the probe's ``args.*`` rules must
call it inconclusive, not "as spec". ``--message TEXT`` changes the failure's words. With
``--validate`` the tool first checks its arguments and answers "invalid input" (naming neither the
argument nor its type) when they are wrong: then only a call with valid arguments, which still
gets the refused connection, shows that the arguments were read.

A raw JSON-RPC peer over stdio (newline-delimited), handshake era only (``server/discover`` gets
-32601), so the behaviour is ours, not a library's.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"url": {"type": "string"}, "wait_ms": {"type": "integer"}},
    "required": ["url", "wait_ms"],
}


def valid(arguments: dict[str, Any]) -> bool:
    url, wait = arguments.get("url"), arguments.get("wait_ms")
    return isinstance(url, str) and isinstance(wait, int) and not isinstance(wait, bool)


def call(arguments: dict[str, Any], message: str, validate: bool) -> dict[str, Any]:
    text = "invalid input" if validate and not valid(arguments) else message
    return {"content": [{"type": "text", "text": text}], "isError": True}


def answer(msg: dict[str, Any], options: argparse.Namespace) -> dict[str, Any] | None:
    method, params = msg.get("method"), msg.get("params") or {}
    if "id" not in msg:
        return None
    if method == "initialize":
        asked = params.get("protocolVersion")
        known = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
        result: dict[str, Any] = {
            "protocolVersion": asked if asked in known else "2025-11-25",
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "refused", "version": "1"},
        }
    elif method == "ping":
        result = {}
    elif method == "tools/list":
        result = {"tools": [{"name": "browse", "inputSchema": SCHEMA}]}
    elif method == "tools/call" and params.get("name") == "browse":
        result = call(params.get("arguments") or {}, options.message, options.validate)
    else:
        return {"jsonrpc": "2.0", "id": msg["id"], "error": {"code": -32601, "message": f"no {method}"}}
    return {"jsonrpc": "2.0", "id": msg["id"], "result": result}


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--message", default="connect ECONNREFUSED 127.0.0.1:9222: connection refused")
    parser.add_argument("--validate", action="store_true")
    options = parser.parse_args()
    for line in sys.stdin:
        try:
            message = json.loads(line)
        except ValueError:
            continue
        reply = answer(message, options) if isinstance(message, dict) else None
        if reply is not None:
            sys.stdout.write(json.dumps(reply) + "\n")
            sys.stdout.flush()
