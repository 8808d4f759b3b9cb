"""Fixtures of the viewer's tests: runs built once per session, a browser and a server per module."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from view.browser import launch, missing
from view.runs import interrupt, small_run


@pytest.fixture(scope="session")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """36 real sessions with their traces (flaky_weather, strict_dates; reader, naive; three strategies)."""
    return small_run(tmp_path_factory.mktemp("view") / "run")


@pytest.fixture(scope="session")
def untraced(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The same grid without traces."""
    return small_run(tmp_path_factory.mktemp("view") / "untraced", traces=False)


@pytest.fixture(scope="session")
def interrupted(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The grid killed after 20 of its 36 sessions: chunks, status interrupted, no traces."""
    return interrupt(small_run(tmp_path_factory.mktemp("view") / "interrupted", traces=False), keep=20)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    reason = missing()
    if reason is not None:
        pytest.skip(f"no headless browser here: {reason}")
    driver = launch()
    try:
        yield driver
    finally:
        driver.quit()
