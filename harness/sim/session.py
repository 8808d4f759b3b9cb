"""Deprecated alias: the simulated session moved to :mod:`harness.session.simulated` (the session split).

Importing this module warns once and hands back the new module itself, so an agent written
against ``harness.sim.session`` keeps working (its classes are the same objects). Goes in 0.2.
"""

import sys
import warnings

import harness.session.simulated as _moved

warnings.warn(
    "harness.sim.session moved to harness.session.simulated; import it from there (this alias goes in 0.2)",
    DeprecationWarning,
    stacklevel=2,
)
sys.modules[__name__] = _moved
