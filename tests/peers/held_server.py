"""The demo lab over stdio, holding every reply back until an ``initialize`` request arrives.

Why: it answers the first requests only after the probe has stopped waiting for them (the probe
sends ``initialize`` only after its first steps timed out), so those replies arrive late, during
another step's wait, deterministically. The probe must match them to their ids, not drop them,
and must not let them turn the rest of the session into "not run".
"""

from __future__ import annotations

import json
import sys

from harness.fixtures.demo import build_demo_server

if __name__ == "__main__":
    server = build_demo_server()
    held: list[str] = []
    released = False
    for line in sys.stdin:
        reply = server.handle_text(line.strip()) if line.strip() else None
        try:
            message = json.loads(line)
        except ValueError:
            message = None
        released = released or (isinstance(message, dict) and message.get("method") == "initialize")
        if reply is not None:
            held.append(reply)
        if released and held:
            sys.stdout.write("".join(r + "\n" for r in held))
            sys.stdout.flush()
            held.clear()
