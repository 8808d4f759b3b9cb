"""Serial against a process pool on small batches: where a pool starts paying for itself.

``python -m harness.bench.pool_start 500 1000 2000`` runs ``travel_day`` x ``reader`` x every
strategy (:func:`harness.bench.workloads.batch_grid`) of each size with ``serial``, a 2-worker
``process`` pool and a 1-worker pool, twice each in turn, and prints each run's wall seconds and
CPU seconds, in this process and in the pool's workers. :data:`harness.batch.runner.POOL_FROM`
(the size below which ``harness run`` stays serial unless told) was set from these figures
(docs/batches.md). ``PYTHONPATH=<worktree> python harness/bench/pool_start.py N`` times another
commit's runner (its workers inherit the path).
"""

from __future__ import annotations

import argparse
import resource
import tempfile
import time
from pathlib import Path

RUNS = (("serial", 1), ("process", 2), ("process", 1))


def _cpu() -> tuple[float, float]:
    """CPU seconds so far: this process's, and its ended children's (the pool's workers)."""
    mine, kids = (resource.getrusage(who) for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN))
    return mine.ru_utime + mine.ru_stime, kids.ru_utime + kids.ru_stime


def main(argv: list[str] | None = None) -> int:
    from harness.batch.runner import run_batch
    from harness.bench.workloads import batch_grid

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("sizes", nargs="+", type=int, help="sessions per batch")
    parser.add_argument("--repeat", type=int, default=2, help="runs of each executor (default 2)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as root:
        for n in args.sizes:
            grid = batch_grid(n)
            seen: dict[str, list[str]] = {}
            for turn in range(args.repeat):
                for executor, workers in RUNS:
                    before = _cpu()
                    start = time.perf_counter()
                    out = Path(root) / f"{n}-{executor}-{workers}-{turn}"
                    run_batch(grid, out, executor=executor, workers=workers)
                    wall = time.perf_counter() - start
                    here, workers_cpu = (a - b for a, b in zip(_cpu(), before, strict=True))
                    seen.setdefault(f"{executor}/{workers}", []).append(
                        f"{wall:.2f}s (cpu {here:.2f}s here, {workers_cpu:.2f}s in workers)"
                    )
            shown = "; ".join(f"{k}: {', '.join(v)}" for k, v in seen.items())
            print(f"{len(grid)} sessions: {shown}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
