"""The session-wide ``probes`` fixture: every probe of :mod:`probe_runs`, started at once."""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import pytest
from probe_runs import PROBES, Probes


@pytest.fixture(scope="session")
def probes() -> Iterator[Probes]:
    with ThreadPoolExecutor(max_workers=len(PROBES)) as pool:
        yield Probes(pool)
