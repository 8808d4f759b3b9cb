"""Time ``harness view RUN`` in headless chromium, from the command's start to each page on screen.

    python tests/view/timing.py RUN

Prints when the server listens, when the first page of sessions, the comparison, a session, a
filtered list and the effects are on screen, and the server's resident memory.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from view.browser import launch, wait_for
from view.runs import serving


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("run", type=Path)
    args = parser.parse_args()
    driver = launch()
    try:
        started = time.perf_counter()
        with serving(args.run) as (url, server):
            print(f"server listening at {time.perf_counter() - started:.2f} s")
            steps = [
                ("first page of sessions", "#/sessions", "#sessions-table tbody tr"),
                ("comparison", "#/compare", "#compare-table tbody tr"),
                ("the last session", "#/session/{last}", "#session-title"),
                ("reader's failures", '#/sessions?filters=[["agent","=","reader"],["success","=","false"]]',
                 "#active-filters"),
                ("effects", "#/effects", "#effects-shares, #effects-unavailable"),
            ]  # fmt: skip
            last = None
            for name, fragment, css in steps:
                if "{last}" in fragment:
                    if last is None:
                        import pyarrow.parquet as pq

                        files = sorted(args.run.glob("sessions.parquet")) or sorted(
                            args.run.glob("chunks/*.parquet")
                        )
                        last = sum(pq.ParquetFile(f).metadata.num_rows for f in files) - 1
                    fragment = fragment.format(last=last)
                mark = time.perf_counter()
                driver.get(url + fragment)
                wait_for(driver, css, timeout=300)
                now = time.perf_counter()
                print(
                    f"{name}: on screen {now - mark:.2f} s after asking, {now - started:.2f} s from the start"
                )
            import psutil

            print(f"server resident memory: {psutil.Process(server.pid).memory_info().rss / 1e6:.0f} MB")
    finally:
        driver.quit()


if __name__ == "__main__":
    main()
