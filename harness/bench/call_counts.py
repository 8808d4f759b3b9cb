"""Python function calls per session: a cost that does not move with the machine's load.

``harness bench`` times sessions against a floor measured in the same run, which is the right
figure for speed; but on a shared machine two runs of one commit can disagree by half, far more
than a refactor's few per cent. A refactor that only moves code must leave the *work* a session
does unchanged, and that is countable: this module runs each of the bench's session rows
(``sessions/scripted-20`` and its stateless twin, ``sessions/protocol-20`` and the world rows) a
few times under cProfile and prints the function calls one session makes, the same number on
every run of one commit. Two commits compare the way :mod:`harness.bench.fingerprint` does::

    git worktree add /tmp/before <commit>
    PYTHONPATH=/tmp/before python -m harness.bench.call_counts
    python -m harness.bench.call_counts

A count says nothing about how long each call takes; it shows that no call was added.
World rows whose world is not installed are left out, saying so.
"""

from __future__ import annotations

import argparse
import cProfile
import dataclasses
import functools
import importlib
import pstats
import sys
import warnings
from collections.abc import Callable, Sequence
from typing import Any

WORLD_TASKS: tuple[str, ...] = (
    "agentdojo/banking/user_task_1",
    "agentdojo/workspace/user_task_0",
    "bfcl/multi_turn_base/0",
    "bfcl/multi_turn_long_context/0",
)
"""The world rows of ``tests/benchmarks/test_sessions.py``."""


def calls_per_session(run: Callable[[int], Any], sessions: int) -> int:
    """Function calls (cProfile's, primitive and recursive alike) of one session, the mean over
    ``sessions`` seeds after one unprofiled session (imports, the task's first-session caches)."""
    run(0)
    profiler = cProfile.Profile()
    profiler.enable()
    for seed in range(1, sessions + 1):
        run(seed)
    profiler.disable()
    stats = pstats.Stats(profiler)
    total = sum(row[1] for row in stats.stats.values())  # type: ignore[attr-defined]
    return round(total / sessions)


def _simulated() -> Any:
    with warnings.catch_warnings():  # an older commit's module path, for comparing two commits
        warnings.simplefilter("ignore")
        try:
            return importlib.import_module("harness.session.simulated")
        except ImportError:
            return importlib.import_module("harness.sim.session")


def _native(simulated: Any, scenario: Any, era: str, seed: int) -> Any:
    return simulated.run_session(scenario, "naive", "is_error", seed, era=era)


def _world(kind: Any, scenario: Any, seed: int) -> Any:
    return kind.run_session(scenario, "naive", "is_error", seed)


def counts(sessions: int) -> list[tuple[str, int | None, str]]:
    """(bench row, calls per session or None, why it is missing)."""
    from harness.bench import workloads as w

    simulated = _simulated()
    scenario = w.twenty_call_scenario()
    rows: list[tuple[str, int | None, str]] = [
        ("sessions/protocol-20", calls_per_session(lambda _: w.protocol_session(20)(), sessions), ""),
    ]
    for era, key in (("handshake", "sessions/scripted-20"), ("stateless", "sessions/scripted-20/stateless")):
        run = functools.partial(_native, simulated, scenario, era)
        rows.append((key, calls_per_session(run, sessions), ""))
    from harness.batch.kinds import kind_for
    from harness.worlds import world_of
    from harness.worlds.scenario import load_world, world_missing

    for task in WORLD_TASKS:
        key = f"sessions/world/{task}"
        world = world_of(task)
        why = world_missing(world) if world is not None else "not a world"
        if why is not None:
            rows.append((key, None, why))
            continue
        world_scenario = dataclasses.replace(load_world(task), faults=())
        kind = kind_for(world_scenario)
        rows.append((key, calls_per_session(functools.partial(_world, kind, world_scenario), sessions), ""))
    return rows


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sessions", type=int, default=5, help="profiled sessions per row (default 5)")
    args = parser.parse_args(argv)
    for key, found, why in counts(max(1, args.sessions)):
        print(f"{key}\t{found}" if found is not None else f"{key}\t-\t({why})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
