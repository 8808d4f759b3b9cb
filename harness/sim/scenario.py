"""Deprecated alias: scenario files moved to :mod:`harness.scenarios.scenario` (the session split).

Importing this module warns once and hands back the new module itself, so an agent written
against ``harness.sim.scenario`` keeps working (its classes are the same objects). Goes in 0.2.
"""

import sys
import warnings

import harness.scenarios.scenario as _moved

warnings.warn(
    "harness.sim.scenario moved to harness.scenarios.scenario; import it from there (this alias goes in 0.2)",
    DeprecationWarning,
    stacklevel=2,
)
sys.modules[__name__] = _moved
