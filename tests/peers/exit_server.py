"""A peer that exits at once with code 3: the probe must report a dead server."""

from __future__ import annotations

import sys

if __name__ == "__main__":
    sys.stderr.write("exit_server: refusing to serve\n")
    sys.exit(3)
