"""Where the checkout is, and how tests start the ``harness`` command as a subprocess."""

from __future__ import annotations

import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent.parent
"""The checkout, for tests that start ``harness`` or a peer as a subprocess."""

HARNESS = [sys.executable, "-m", "harness.cli.main"]
"""The harness CLI of this checkout, whatever is installed on PATH."""
