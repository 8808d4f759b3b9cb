"""The world tests need AgentDojo (the ``[worlds]`` extra), and those of BFCL (``test_bfcl*.py``)
bfcl-eval too (docs/worlds.md); without them they fail or skip, and say why.

Every test under ``tests/worlds`` is marked ``worlds``. Where the pinned package is not
installed each fails with one line when ``HARNESS_WORLDS_REQUIRED=1`` (``.ci/run`` sets it, so
CI never passes by skipping them), and skips with that line otherwise (a developer who did not
install the extra still runs everything else). The tests that show what happens without the
extra pretend it is missing and need no such guard.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from harness.worlds import bfcl
from harness.worlds.agentdojo import missing

HERE = Path(__file__).parent
REQUIRED = "HARNESS_WORLDS_REQUIRED"
"""Set to 1 where the world tests must run (CI): a missing extra fails them instead of skipping."""


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if HERE in Path(str(item.fspath)).parents:
            item.add_marker(pytest.mark.worlds)


@pytest.fixture(autouse=True)
def _agentdojo(request: pytest.FixtureRequest) -> None:
    if request.node.get_closest_marker("without_agentdojo") is not None:
        return
    why = missing()
    if why is None and Path(str(request.node.fspath)).name.startswith("test_bfcl"):
        why = bfcl.missing()
    if why is None:
        return
    if os.environ.get(REQUIRED) == "1":
        pytest.fail(f"{REQUIRED}=1 and {why}", pytrace=False)
    pytest.skip(why)
