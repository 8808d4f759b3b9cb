"""A server that is slow to start: it sleeps, then serves the demo lab over stdio.

Why: real servers started through ``uvx`` or ``npx`` may take 20 s before their first line; the probe
must wait for them rather than report silence. ``python tests/peers/slow_server.py SECONDS``
(default 2); the requests sent meanwhile wait in the pipe, as they would for a slow real server.
"""

from __future__ import annotations

import sys
import time

if __name__ == "__main__":
    time.sleep(float(sys.argv[1]) if len(sys.argv) > 1 else 2.0)
    from harness.fixtures.demo import build_demo_server
    from harness.transports.stdio import serve_stdio

    serve_stdio(build_demo_server(), sys.stdin.buffer, sys.stdout.buffer)
