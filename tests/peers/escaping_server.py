"""A server that first starts a daemon of its own session (``setsid``), which keeps the server's
stdout and stderr open and outlives the server's group; then it serves the demo lab. A proxy in
front of it must still stop on SIGTERM, and name what it could not end."""

from __future__ import annotations

import os
import sys
import time

if __name__ == "__main__":
    if os.fork() == 0:
        os.setsid()  # out of the server's process group: the proxy's group kill cannot reach it
        time.sleep(float(sys.argv[1]) if len(sys.argv) > 1 else 60.0)
        os._exit(0)
    os.execvp(sys.executable, [sys.executable, "-m", "harness.cli.main", "serve", "--demo"])
