"""A dual-era server with no handshake gate: a request without ``_meta`` is a handshake-era request.

Why: ``tools/list`` with no ``_meta`` is the same message whether the probe sends it first on a
connection (``handshake.before_initialize``) or after ``server/discover`` (``stateless.no_meta``).
A server that speaks both eras takes it for a handshake-era request before ``initialize``, which the
spec lets it answer or refuse; the two rules must not judge the same answer differently.

A request whose ``params._meta`` names a protocol version is served statelessly (2026-07-28:
``server/discover``, ``resultType`` and the server's info on every result, -32022 for another
version). Anything else is the handshake era. Options:

* ``--bare answer`` (the default): a handshake-era request is answered at any time, as the
  TypeScript reference servers do; ``--bare CODE`` (say ``-32002``): one sent before ``initialize``
  on this connection is refused with that code.
* ``--no-handshake``: the server speaks only 2026-07-28: ``initialize`` gets -32601.

A raw JSON-RPC peer over stdio (newline-delimited), so the behaviour is ours, not a library's.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

STATELESS = "2026-07-28"
META_VERSION = "io.modelcontextprotocol/protocolVersion"
SERVER_INFO = {"name": "dual-open", "version": "1"}
TOOLS = [
    {
        "name": "echo",
        "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
    }
]


def error(msg_id: Any, code: int, text: str, data: Any = None) -> dict[str, Any]:
    err: dict[str, Any] = {"code": code, "message": text}
    if data is not None:
        err["data"] = data
    return {"jsonrpc": "2.0", "id": msg_id, "error": err}


def serve(method: str, params: dict[str, Any]) -> dict[str, Any] | None:
    """The result of a method both eras share, or None for a method this server lacks."""
    if method == "tools/list":
        return {"tools": TOOLS}
    if method == "tools/call":
        arguments = params.get("arguments") or {}
        text = arguments.get("text") if isinstance(arguments, dict) else None
        if not isinstance(text, str):
            return {
                "content": [{"type": "text", "text": "argument 'text' must be a string"}],
                "isError": True,
            }
        return {"content": [{"type": "text", "text": text}]}
    return None


class Connection:
    def __init__(self, options: argparse.Namespace) -> None:
        self.options = options
        self.initialized = False

    def answer(self, msg: dict[str, Any]) -> dict[str, Any] | None:
        if "id" not in msg:
            return None
        msg_id, method = msg["id"], msg.get("method")
        params = msg.get("params") if isinstance(msg.get("params"), dict) else {}
        meta = params.get("_meta")
        if isinstance(meta, dict) and META_VERSION in meta:
            return self.stateless(msg_id, str(method), params, meta[META_VERSION])
        return self.handshake(msg_id, str(method), params)

    def stateless(self, msg_id: Any, method: str, params: dict[str, Any], version: object) -> dict[str, Any]:
        if version != STATELESS:
            return error(msg_id, -32022, "unsupported protocol version", {"supported": [STATELESS]})
        if method == "server/discover":
            result: dict[str, Any] | None = {"supportedVersions": [STATELESS], "capabilities": {"tools": {}}}
        else:
            result = serve(method, params)
        if result is None:
            return error(msg_id, -32601, f"no {method}")
        stamped = {
            **result,
            "resultType": "complete",
            "_meta": {"io.modelcontextprotocol/serverInfo": SERVER_INFO},
        }
        return {"jsonrpc": "2.0", "id": msg_id, "result": stamped}

    def handshake(self, msg_id: Any, method: str, params: dict[str, Any]) -> dict[str, Any]:
        if method == "initialize":
            if self.options.no_handshake:
                return error(msg_id, -32601, f"this server speaks only {STATELESS}")
            self.initialized = True
            result: dict[str, Any] | None = {
                "protocolVersion": "2025-11-25",
                "capabilities": {"tools": {}},
                "serverInfo": SERVER_INFO,
            }
            return {"jsonrpc": "2.0", "id": msg_id, "result": result}
        if self.options.bare != "answer" and not self.initialized:
            return error(msg_id, int(self.options.bare), "not initialized")
        result = {} if method == "ping" else serve(method, params)
        if result is None:
            return error(msg_id, -32601, f"no {method}")
        return {"jsonrpc": "2.0", "id": msg_id, "result": result}


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument(
        "--bare", default="answer", help="'answer', or the code refusing a request before initialize"
    )
    parser.add_argument("--no-handshake", action="store_true")
    connection = Connection(parser.parse_args())
    for line in sys.stdin:
        try:
            message = json.loads(line)
        except ValueError:
            continue
        reply = connection.answer(message) if isinstance(message, dict) else None
        if reply is not None:
            sys.stdout.write(json.dumps(reply) + "\n")
            sys.stdout.flush()
