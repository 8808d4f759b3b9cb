"""What a tool call costs inside a batch, world against native: the median of each session's
``wall_time_s / tool_calls``, per world suite or category, over the native scenarios' in the same
run (issue 48: "the same inside a batch").

``python -m harness.bench.batch_cost --seeds 3`` runs, in this process and one after another, the
reader under ``is_error`` behind the typical host on the shipped hand-written scenarios (native),
on every AgentDojo task of each suite and on the worlds' study's BFCL tasks of each category
(draw 0 of ``upstream``), each task for ``--seeds`` seeds after one warm-up seed (which builds
each task's environment once, as the first session of a task in a batch does). It prints one
markdown row per group: sessions, the median per-call cost and its ratio to native's. A ratio,
measured in one run, is what says how far a world is from a native session; an absolute time
moves with the machine. Needs the ``[worlds]`` and ``[bfcl]`` extras for the world rows (a
world not installed is left out, and said so).
"""

from __future__ import annotations

import argparse
import statistics
import sys
from collections.abc import Sequence

NATIVE = "native"


def groups() -> dict[str, list[str]]:
    """Each group's scenarios: the native ones, then each installed world's suites or categories."""
    from harness.scenarios.scenario import list_scenarios
    from harness.worlds import BFCL, WORLD
    from harness.worlds.scenario import study_names, world_missing

    out: dict[str, list[str]] = {NATIVE: list_scenarios()}
    for world in (WORLD, BFCL):
        why = world_missing(world)
        if why is not None:
            print(f"batch_cost: {world} left out: {why}", file=sys.stderr)
            continue
        for name in study_names():
            parts = name.split("/")
            bare = len(parts) == 3 if world == WORLD else parts[3:] == ["upstream"]
            if parts[0] == world and bare:
                out.setdefault("/".join(parts[:2]), []).append(name)
    return out


def per_call(names: Sequence[str], seeds: int) -> list[float]:
    """Each measured session's ``wall_time_s / tool_calls`` (sessions with at least one call)."""
    from harness.batch.grid import Cell
    from harness.batch.worker import SessionOptions, run_cells

    options = SessionOptions()
    run_cells([Cell(n, "reader", "is_error", "typical", 0) for n in names], options)  # warm-up seed
    cells = [Cell(n, "reader", "is_error", "typical", seed) for seed in range(1, seeds + 1) for n in names]
    rows = [o.row for o in run_cells(cells, options)]
    return [float(r["wall_time_s"]) / int(r["tool_calls"]) for r in rows if int(r["tool_calls"]) > 0]


def report(seeds: int) -> str:
    """The markdown table: per group, sessions, the median ms per call and its ratio to native's."""
    measured = {group: per_call(names, seeds) for group, names in groups().items()}
    native = statistics.median(measured[NATIVE])
    lines = ["| group | sessions | median ms per call | × native |", "|---|---|---|---|"]
    for group, costs in measured.items():
        median = statistics.median(costs)
        lines.append(f"| {group} | {len(costs)} | {1000 * median:.3f} | {median / native:.2f} |")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m harness.bench.batch_cost", description=__doc__)
    parser.add_argument(
        "--seeds", type=int, default=3, help="measured seeds per scenario (after one warm-up)"
    )
    args = parser.parse_args(argv)
    if args.seeds < 1:
        parser.error("--seeds must be at least 1")
    print(report(args.seeds))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
