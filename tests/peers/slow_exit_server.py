"""An MCP server over stdio that is slow to exit, as real ones can be, for the proxy's stop.

Why: the official clients close a server by ending its input and then, two seconds later,
sending SIGTERM; a server that lingers after its input ends, ignores SIGTERM for a while (or
for ever), or leaves a child behind is what the proxy must still stop without an orphan.

It answers ``initialize``, ``ping``, ``tools/list`` and ``tools/call`` of ``add`` (x + y) at
once, and never answers a call of ``hang``. Options:

* ``--linger S``: after its input ends, wait S seconds before exiting (default 0; ``inf``: never);
* ``--term S``: on SIGTERM, wait S seconds before exiting (default 0; ``inf``: ignore it);
* ``--child``: start a child (same process group) that sleeps 120 s;
* ``--pids FILE``: append its pid (and its child's) to FILE, one a line, so a test can look for
  orphans;
* ``--banner TEXT``: write TEXT to stderr first, as servers that announce themselves do.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import signal
import subprocess
import sys
import threading
import time
from typing import Any

TOOLS = [
    {"name": "add", "inputSchema": {"type": "object", "properties": {"x": {}, "y": {}}}},
    {"name": "hang", "inputSchema": {"type": "object", "properties": {}}},
]


def _sleep(seconds: float) -> None:
    if math.isinf(seconds):
        while True:
            time.sleep(3600)
    time.sleep(seconds)


def _answer(message: dict[str, Any]) -> dict[str, Any] | None:
    method, rid = message.get("method"), message.get("id")
    if rid is None or method is None:
        return None
    if method == "initialize":
        version = (message.get("params") or {}).get("protocolVersion", "2025-06-18")
        result: dict[str, Any] = {
            "protocolVersion": version,
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "slow-exit", "version": "1"},
        }
    elif method == "tools/list":
        result = {"tools": TOOLS}
    elif method == "tools/call":
        params = message.get("params") or {}
        if params.get("name") == "hang":
            return None
        args = params.get("arguments") or {}
        result = {"content": [{"type": "text", "text": str(args.get("x", 0) + args.get("y", 0))}]}
    else:
        result = {}
    return {"jsonrpc": "2.0", "id": rid, "result": result}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--linger", type=float, default=0.0)
    parser.add_argument("--term", type=float, default=0.0)
    parser.add_argument("--child", action="store_true")
    parser.add_argument("--pids")
    parser.add_argument("--banner")
    opts = parser.parse_args()
    pids = [os.getpid()]
    if opts.child:
        pids.append(subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"]).pid)
    if opts.pids:
        with open(opts.pids, "a") as out:
            out.write("".join(f"{pid}\n" for pid in pids))
    if opts.banner:
        sys.stderr.write(opts.banner + "\n")
        sys.stderr.flush()

    def on_term(signum: int, frame: Any) -> None:
        threading.Thread(target=lambda: (_sleep(opts.term), os._exit(0)), daemon=True).start()

    signal.signal(signal.SIGTERM, on_term)
    for line in sys.stdin:
        if not line.strip():
            continue
        reply = _answer(json.loads(line))
        if reply is not None:
            sys.stdout.write(json.dumps(reply) + "\n")
            sys.stdout.flush()
    _sleep(opts.linger)


if __name__ == "__main__":
    main()
