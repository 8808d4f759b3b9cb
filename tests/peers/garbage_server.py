"""A peer that answers every line with text that is not JSON: the probe must call it garbage."""

from __future__ import annotations

import sys

if __name__ == "__main__":
    for _line in sys.stdin:
        sys.stdout.write("garbage: this is not JSON-RPC\n")
        sys.stdout.flush()
