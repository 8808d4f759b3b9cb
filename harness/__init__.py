"""harness: a deterministic simulation harness for agent loops that speak MCP.

The protocol core lives in :mod:`harness.protocol` (sans-IO); transports in
:mod:`harness.transports`; everything else (scenarios, faults, sessions, batches,
analysis, plots, the CLI) is built on those two.
"""

__version__ = "0.1.0"
