"""Serial against a process pool on small batches: where a pool starts paying for itself.

``python -m harness.bench.pool_start 500 1000 2000`` runs ``travel_day`` x ``reader`` x every
strategy (:func:`harness.bench.workloads.batch_grid`) of each size with ``serial``, a 2-worker
``process`` pool and a 1-worker pool, twice each in turn, and prints the wall seconds and this
process's CPU seconds of each run. :data:`harness.batch.runner.POOL_FROM` (the size below which
``harness run`` stays serial unless told) was set from these figures (docs/batches.md).
"""

from __future__ import annotations

import argparse
import resource
import tempfile
import time
from pathlib import Path

RUNS = (("serial", 1), ("process", 2), ("process", 1))


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
                    before = resource.getrusage(resource.RUSAGE_SELF)
                    start = time.perf_counter()
                    out = Path(root) / f"{n}-{executor}-{workers}-{turn}"
                    run_batch(grid, out, executor=executor, workers=workers)
                    wall = time.perf_counter() - start
                    after = resource.getrusage(resource.RUSAGE_SELF)
                    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
                    seen.setdefault(f"{executor}/{workers}", []).append(f"{wall:.2f}s ({cpu:.2f}s cpu here)")
            shown = "; ".join(f"{k}: {', '.join(v)}" for k, v in seen.items())
            print(f"{len(grid)} sessions: {shown}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
