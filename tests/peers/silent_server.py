"""A peer that reads every line and never answers: the probe must time out, not hang."""

from __future__ import annotations

import sys

if __name__ == "__main__":
    for _line in sys.stdin:
        pass
