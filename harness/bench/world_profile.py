"""Where a world session's time goes, in shares: the first step of making worlds as cheap as
native sessions (issue 48).

``python -m harness.bench.world_profile --sessions 40`` runs that many sessions of the first
tasks of each AgentDojo suite (the reader, ``is_error``, the typical host, under the study's
upstream faults; seeds from 1, after one unprofiled session of every task of the suite, as a
study's later sessions of a task find the process) under cProfile, in this process, and sums
each function's *self* time into the rooms of :data:`ROOMS`, the first whose path fragment the
function's file holds (a built-in function's time, a regex search say, goes to the rooms of the
functions that called it). It prints,
per suite, the milliseconds a session took under the profiler and each room's share. Shares,
not absolute times: the profiler slows every call alike, more or less, and a share is what says
where a change would pay. Needs the ``[worlds]`` extra.
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import time
from collections.abc import Sequence

ROOMS: tuple[tuple[str, str], ...] = (
    ("deepdiff", "DeepDiff (AgentDojo's utility judges diff the whole environment)"),
    ("yaml", "AgentDojo's YAML dump and load (PyYAML)"),
    ("copy.py", "the copy module (deep copies; DeepDiff copies each level of its tree)"),
    ("pydantic", "pydantic models (AgentDojo's environments and tools)"),
    ("agentdojo", "AgentDojo itself (tools, tasks, judges)"),
    ("harness/protocol", "the MCP core (sans-IO client and server, codec)"),
    ("harness/worlds", "the world session (serving, judging)"),
    ("harness/session", "the shared session loop, agent API, row"),
    ("harness/faults", "the fault engine"),
    ("harness/scenarios", "scenario types and checks"),
    ("harness/sim", "the simulated catalogue"),
    ("harness/reading", "the reader's parsing of error texts (its patterns)"),
    ("scripted_agents", "the scripted agent"),
    ("json", "JSON encoding and decoding"),
    ("", "everything else (the interpreter's own, other libraries)"),
)
"""(path fragment, what it is): a function's self time goes to the first room its file names."""

SUITES: tuple[str, ...] = ("banking", "slack", "travel", "workspace")


def _room(filename: str) -> str:
    path = filename.replace("\\", "/")
    for fragment, _ in ROOMS:
        if fragment and fragment in path:
            return fragment
    return ""


def profile_suite(suite: str, sessions: int) -> tuple[float, dict[str, float]]:
    """(ms per session under the profiler, self-time share per room) over ``sessions`` sessions."""
    from harness.batch.grid import Cell
    from harness.batch.worker import SessionOptions, run_cells
    from harness.worlds.scenario import study_names

    tasks = [n for n in study_names() if n.startswith(f"agentdojo/{suite}/") and n.count("/") == 2]
    cells = [
        Cell(tasks[i % len(tasks)], "reader", "is_error", "typical", 1 + i // len(tasks))
        for i in range(sessions)
    ]
    options = SessionOptions()
    # imports and each task's first session (its plan, snapshot, verdicts), outside the profile:
    # a study runs 60 sessions of each scenario, so what the first pays is not where its time goes
    run_cells([Cell(t, "reader", "is_error", "typical", 0) for t in tasks], options)
    profiler = cProfile.Profile()
    start = time.perf_counter()
    profiler.enable()
    run_cells(cells, options)
    profiler.disable()
    wall = (time.perf_counter() - start) * 1000 / sessions
    stats = pstats.Stats(profiler)
    rooms = dict.fromkeys((fragment for fragment, _ in ROOMS), 0.0)
    for (filename, _, _), (_, _, self_time, _, callers) in stats.stats.items():  # type: ignore[attr-defined]
        if filename != "~" or not callers:
            rooms[_room(filename)] += self_time
            continue
        for (caller_file, _, _), (_, _, caller_time, _) in callers.items():  # a built-in: its callers'
            rooms[_room(caller_file)] += caller_time
    total = sum(rooms.values()) or 1.0
    return wall, {room: spent / total for room, spent in rooms.items()}


def report(sessions: int, suites: Sequence[str] = SUITES) -> str:
    """The markdown table: one column per suite, one row per room."""
    measured = {suite: profile_suite(suite, sessions) for suite in suites}
    head = "| where | " + " | ".join(suites) + " |"
    lines = [head, "|---|" + "---|" * len(suites)]
    times = " | ".join(f"{measured[s][0]:.1f}" for s in suites)
    lines.append(f"| ms per session (profiled) | {times} |")
    for fragment, meaning in ROOMS:
        shares = " | ".join(f"{measured[s][1][fragment]:.0%}" for s in suites)
        lines.append(f"| {meaning} | {shares} |")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sessions", type=int, default=40, help="sessions per suite (default 40)")
    parser.add_argument("--suites", nargs="+", choices=SUITES, default=list(SUITES))
    args = parser.parse_args(argv)
    print(report(args.sessions, args.suites))


if __name__ == "__main__":
    main()
