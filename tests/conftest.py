"""Suite-wide test setup: hypothesis profiles and the shared protocol fixtures.

Hypothesis runs derandomized with a modest example count by default, so the
suite is deterministic and fast; ``HYPOTHESIS_PROFILE=fuzz`` searches harder.
No example database is written into the work tree.
"""

from __future__ import annotations

import os

import pytest
from helpers.pair import ClientServerPair
from hypothesis import HealthCheck, settings

settings.register_profile(
    "default",
    max_examples=150,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile("fuzz", max_examples=5000, deadline=None, database=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))


def pytest_configure(config: pytest.Config) -> None:
    # Hypothesis's failure report imports mypy_extensions.TypedDict, which warns; under
    # filterwarnings=error that would turn a falsified property into an INTERNALERROR.
    config.addinivalue_line(
        "filterwarnings", "ignore:mypy_extensions.TypedDict is deprecated:DeprecationWarning"
    )


@pytest.fixture
def pair() -> ClientServerPair:
    """The demo lab behind an initialized client; every message checked against mcp_types."""
    return ClientServerPair()


@pytest.fixture
def fresh_pair() -> ClientServerPair:
    """The demo lab before any handshake."""
    return ClientServerPair(handshake=False)
