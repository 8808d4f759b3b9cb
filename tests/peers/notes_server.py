"""A small stateful MCP server over stdio, for the served-session tests (no npm needed).

Notes are files in the working directory it is started in: ``write_note`` stores one and
``read_note`` answers it, each as a JSON object (as the simulated catalogue's tools answer, so
the scripted reader takes them as usable); ``delete_notes`` removes them all (a destructive tool
no task needs); ``stall`` answers only after ``seconds`` (real) seconds, blocking the server
meanwhile. A missing note, or a name that is not a plain file name, is a tool failure.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from harness.protocol.server import MCPServer
from harness.transports.stdio import serve_stdio

NAME = {"type": "string", "description": "The note's name, e.g. todo.txt"}


def _path(name: str) -> Path:
    if "/" in name or name.startswith("."):
        raise ValueError(f"invalid argument 'name': {name!r} is not a plain file name")
    return Path(name)


def write_note(name: str, text: str) -> str:
    _path(name).write_text(text, encoding="utf-8")
    return json.dumps({"saved": name})


def read_note(name: str) -> str:
    path = _path(name)
    if not path.is_file():
        raise FileNotFoundError(f"no note named {name}")
    return json.dumps({"name": name, "text": path.read_text(encoding="utf-8")})


def delete_notes() -> str:
    for path in Path(".").iterdir():
        if path.is_file():
            path.unlink()
    return "deleted"


def stall(seconds: float) -> str:
    time.sleep(seconds)
    return json.dumps({"stalled": seconds})


def build() -> MCPServer:
    server = MCPServer("notes", "1.0.0")
    one = {"type": "object", "properties": {"name": NAME}, "required": ["name"]}
    server.add_tool(
        "write_note",
        write_note,
        {
            "type": "object",
            "properties": {"name": NAME, "text": {"type": "string"}},
            "required": ["name", "text"],
        },
        "Store a note.",
        annotations={"readOnlyHint": False, "destructiveHint": False},
    )
    server.add_tool("read_note", read_note, one, "A note's text.", annotations={"readOnlyHint": True})
    server.add_tool("delete_notes", delete_notes, {"type": "object", "properties": {}}, "Delete every note.")
    server.add_tool(
        "stall",
        stall,
        {"type": "object", "properties": {"seconds": {"type": "number"}}, "required": ["seconds"]},
        "Answer after a while.",
        annotations={"readOnlyHint": True},
    )
    return server


if __name__ == "__main__":
    serve_stdio(build(), sys.stdin.buffer, sys.stdout.buffer)
