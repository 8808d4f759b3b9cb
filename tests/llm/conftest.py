"""Every llm test ends with the process's chat clients closed (their connections to a fake endpoint)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from harness.llm.client import close_clients


@pytest.fixture(autouse=True)
def _close_clients() -> Iterator[None]:
    yield
    close_clients()
