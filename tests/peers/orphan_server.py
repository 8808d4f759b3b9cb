"""A server that exits at start with code 3, leaving a child that holds its stdout open.

Why: a wrapper (a shell script, ``npx``, ``uvx``) may die while something it started keeps the
pipe open, so no end of file ever comes; the probe must notice the exit itself and say the server
died, at once, rather than wait out its timeouts. The child sleeps 60 s unless killed (the probe
ends the process group it started).
"""

from __future__ import annotations

import subprocess
import sys

if __name__ == "__main__":
    subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"], stdin=subprocess.DEVNULL)
    sys.stderr.write("orphan_server: refusing to serve\n")
    sys.exit(3)
