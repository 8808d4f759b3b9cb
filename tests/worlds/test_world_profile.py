"""The world-session profile (harness.bench.world_profile): every second of self time lands in
exactly one room, so the shares docs/benchmarks.md quotes add up."""

from __future__ import annotations

import math

import pytest

from harness.bench.world_profile import ROOMS, _room, profile_suite


@pytest.mark.parametrize(
    ("filename", "room"),
    [("/x/site-packages/deepdiff/diff.py", "deepdiff"), ("/x/site-packages/agentdojo/task.py", "agentdojo"),
     ("/repo/harness/reading/_prose.py", "harness/reading"), ("/usr/lib/python3.11/copy.py", "copy.py"),
     ("/usr/lib/python3.11/threading.py", "")],
)  # fmt: skip
def test_a_file_goes_to_the_first_room_its_path_names(filename: str, room: str) -> None:
    assert _room(filename) == room


def test_the_shares_of_a_suite_add_up_to_one() -> None:
    ms, shares = profile_suite("banking", 3)
    assert ms > 0
    assert set(shares) == {fragment for fragment, _ in ROOMS}
    assert math.isclose(sum(shares.values()), 1.0, rel_tol=1e-9)
