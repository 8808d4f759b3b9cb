"""The demo lab over stdio, answering ``initialize`` no sooner than a delay after it started
(seconds, argv[1], default 4.5; measured from the process's start, whatever its imports cost).

Why: a server may answer its handshake after the probe stopped waiting for it; the probe must take
the late answer and go on with the session rather than report every later rule as "not run".
"""

from __future__ import annotations

import time

STARTED = time.monotonic()

import json  # noqa: E402 -- after the clock starts
import sys  # noqa: E402

from harness.fixtures.demo import build_demo_server  # noqa: E402

if __name__ == "__main__":
    delay = float(sys.argv[1]) if len(sys.argv) > 1 else 4.5
    server = build_demo_server()
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            message = json.loads(line)
        except ValueError:
            message = None
        if isinstance(message, dict) and message.get("method") == "initialize":
            time.sleep(max(0.0, STARTED + delay - time.monotonic()))
        reply = server.handle_text(line.strip())
        if reply is not None:
            sys.stdout.write(reply + "\n")
            sys.stdout.flush()
