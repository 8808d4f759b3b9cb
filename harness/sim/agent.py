"""Deprecated alias: the agent API moved to :mod:`harness.session.agent` (the session split).

Importing this module warns once and hands back the new module itself, so an agent written
against ``harness.sim.agent`` keeps working (its classes are the same objects). Goes in 0.2.
"""

import sys
import warnings

import harness.session.agent as _moved

warnings.warn(
    "harness.sim.agent moved to harness.session.agent; import it from there (this alias goes in 0.2)",
    DeprecationWarning,
    stacklevel=2,
)
sys.modules[__name__] = _moved
