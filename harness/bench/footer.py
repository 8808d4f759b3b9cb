"""What writing ``sessions.parquet`` costs in memory as the run grows: per row group, and at the close.

``python -m harness.bench.footer 50 200 400`` runs one serial batch of
:data:`harness.batch.results.ROW_GROUP` sessions (``travel_day`` x ``reader`` x every strategy),
takes its rows as one row group, and then, in a fresh process for each count G, writes that
group G times through pyarrow's ``ParquetWriter`` the way the runner's consolidation does
(``write_table`` per group, Arrow's freed memory handed back after each). It prints the resident
set after the first group, after all G, and after the writer closes, and the footer's size on
disk. A row group of a run of N sessions is one of N / ROW_GROUP, so this is the part of a batch's
peak that grows with N: the data of one group is held at a time, but the writer keeps every
group's metadata until it writes the footer at the close.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

_WRITE = """
import json, sys
import pyarrow as pa, pyarrow.parquet as pq
from harness.bench.footer import rss_mb
table, groups, out = pq.read_table(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
pool = pa.default_memory_pool()
with pq.ParquetWriter(out, table.schema) as writer:
    writer.write_table(table)
    pool.release_unused()
    first = rss_mb()
    for _ in range(groups - 1):
        writer.write_table(table)
        pool.release_unused()
    last = rss_mb()
closed = rss_mb()
footer = pq.ParquetFile(out).metadata.serialized_size
print(json.dumps({"first": first, "last": last, "closed": closed, "footer": footer}))
"""


def rss_mb() -> float:
    """This process's resident set now, in MiB (Linux)."""
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    raise OSError("no VmRSS in /proc/self/status (Linux only)")


def main(argv: list[str] | None = None) -> int:
    import pyarrow.parquet as pq

    from harness.batch.results import ROW_GROUP, SESSIONS
    from harness.batch.runner import run_batch
    from harness.bench.workloads import batch_grid

    parser = argparse.ArgumentParser(
        prog="python -m harness.bench.footer", description=__doc__.splitlines()[0] if __doc__ else None
    )
    parser.add_argument("groups", nargs="+", type=int, help="row groups to write (each a fresh process)")
    args = parser.parse_args(argv)
    if any(g < 2 for g in args.groups):
        parser.error("each count of row groups must be at least 2")
    with tempfile.TemporaryDirectory() as root:
        run_batch(batch_grid(ROW_GROUP), Path(root) / "run", executor="serial", workers=1)
        group = Path(root) / "run" / SESSIONS  # the runner's own file: one group, its schema
        table = pq.read_table(group)
        print(
            f"one row group: {ROW_GROUP} session rows (the runner's ROW_GROUP) of {table.num_columns} "
            f"columns, {table.nbytes / 2**20:.1f} MB in Arrow"
        )
        print("groups  sessions   RSS after 1st  after all  after close  per group  footer on disk")
        for groups in args.groups:
            proc = subprocess.run(
                [sys.executable, "-c", _WRITE, str(group), str(groups), str(Path(root) / "out.parquet")],
                capture_output=True,
                text=True,
                check=False,
            )
            if proc.returncode != 0:
                print(
                    proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else "failed", file=sys.stderr
                )
                return 1
            f = json.loads(proc.stdout.strip().splitlines()[-1])
            per = 1024 * (f["last"] - f["first"]) / (groups - 1)
            print(
                f"{groups:6d}  {groups * ROW_GROUP:8d}  {f['first']:10.1f} MB  {f['last']:6.1f} MB"
                f"  {f['closed']:8.1f} MB  {per:6.1f} KB  {f['footer'] / 1e6:8.2f} MB"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
