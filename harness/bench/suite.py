"""Run the benchmark suite and write everything it measured into one directory.

The suite is ``tests/benchmarks`` of the source checkout, run by pytest-benchmark
in a child process (so that its timing never shares an interpreter with the
caller) with ``--benchmark-json``. The tidy table is derived from that JSON only:
no figure is typed anywhere. What lands in the output directory:

* ``benchmark.json`` -- pytest-benchmark's own record (``pytest-benchmark compare`` reads it);
* ``bench.csv``, ``bench.parquet`` -- the tidy table (:func:`harness.bench.table.tidy`);
* ``summary.json``, ``summary.md`` -- the headline ratios and the issue's targets;
* ``*.png`` -- the plots (:mod:`harness.bench.plots`);
* ``pytest.log`` -- the benchmark run's own output.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import pandas as pd

import harness
from harness.bench import plots
from harness.bench.table import markdown, summary, targets_markdown, tidy
from harness.errors import UserError

QUICK_MAX_TIME = 0.05
"""Seconds per case in a --quick run; a report whose cases ran this short came from one."""
QUICK_OPTIONS: tuple[str, ...] = (
    f"--benchmark-max-time={QUICK_MAX_TIME}",
    "--benchmark-min-rounds=3",
    "--benchmark-warmup=on",
    "--benchmark-warmup-iterations=200",
)
"""A few hundredths of a second per case: the whole suite in well under a minute."""
FULL_OPTIONS: tuple[str, ...] = (
    "--benchmark-max-time=1.0",
    "--benchmark-min-rounds=5",
    "--benchmark-warmup=on",
)
"""pytest-benchmark's defaults with warm-up on: a few minutes for the suite."""

EXIT_TESTS_FAILED = 1
"""pytest's exit status when some cases failed (the others' figures are still in the JSON)."""
EXIT_NO_TESTS = 5
"""pytest's exit status when nothing was collected (say, a ``-k`` that matches nothing)."""


def benchmarks_dir() -> Path:
    """``tests/benchmarks`` of the checkout this package runs from."""
    path = Path(harness.__file__).resolve().parent.parent / "tests" / "benchmarks"
    if not path.is_dir():
        raise UserError(f"no benchmark suite at {path}: `harness bench` runs from a source checkout")
    return path


def default_out(root: Path = Path("results")) -> Path:
    """``results/bench-<local timestamp>``: a new directory per run."""
    return root / f"bench-{datetime.now():%Y%m%dT%H%M%S}"


CASE_DONE = re.compile(
    r"^(?P<case>\S+::\S+)\s+(?P<outcome>PASSED|FAILED|ERROR|SKIPPED|XFAIL|XPASS)\s+\[\s*(?P<pct>\d+)%\]"
)
"""A case's line in pytest's verbose output, once it has finished: what progress is read from."""

Progress = Callable[[str, str, int], None]
"""Called as each case finishes: (case, outcome, percent of the suite done)."""


def run_pytest(
    out: Path,
    *,
    quick: bool,
    select: str | None = None,
    million: bool = False,
    progress: Progress | None = None,
) -> tuple[Path, tuple[str, ...]]:
    """Run the suite into ``out/benchmark.json``; pytest's output goes to ``out/pytest.log``.

    Returns the JSON and the cases that failed: a failed case costs its own row, not
    the run's (``tests/benchmarks/conftest.py``). ``million`` adds the 10^6-session
    peak-memory case (``HARNESS_BENCH_MILLION=1``). ``progress`` hears of each case as it ends.
    """
    suite = benchmarks_dir()
    out.mkdir(parents=True, exist_ok=True)
    report = out / "benchmark.json"
    report.unlink(missing_ok=True)
    command = [
        sys.executable,
        "-m",
        "pytest",
        str(suite),
        "-v",
        "-p",
        "no:cacheprovider",
        f"--benchmark-json={report}",
        "--benchmark-columns=median,rounds",
        # "no benchmarks have been run" is a warning, and the project turns warnings into errors
        "-W",
        "ignore::pytest_benchmark.logger.PytestBenchmarkWarning",
        *(QUICK_OPTIONS if quick else FULL_OPTIONS),
    ]
    if select:
        command += ["-k", select]
    log = out / "pytest.log"
    # An xdist worker's variables (when a test suite runs this) would turn pytest-benchmark off.
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("PYTEST_XDIST")},
        "HARNESS_BENCH_QUICK": "1" if quick else "0",
        "HARNESS_BENCH_MILLION": "1" if million else "0",
    }
    with log.open("wb") as sink:
        proc = subprocess.Popen(
            command, cwd=suite.parent.parent, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env
        )
        assert proc.stdout is not None
        for raw in proc.stdout:
            sink.write(raw)
            done = CASE_DONE.match(raw.decode(errors="replace"))
            if done and progress is not None:
                progress(done["case"], done["outcome"], int(done["pct"]))
        rc = proc.wait()
    if rc == EXIT_NO_TESTS:
        raise UserError(
            f"no benchmark matches -k {select!r}" if select else f"no benchmarks found in {suite}"
        )
    text = log.read_text(errors="replace")
    if rc not in (0, EXIT_TESTS_FAILED) or not report.is_file():
        tail = text.strip().splitlines()[-15:]
        raise BenchFailed(f"the benchmark run failed (exit {rc}); see {log}:\n" + "\n".join(tail))
    return report, failed_cases(text)


def failed_cases(log: str) -> tuple[str, ...]:
    """The ``FAILED`` lines of pytest's short summary, without the word."""
    return tuple(line[len("FAILED ") :] for line in log.splitlines() if line.startswith("FAILED "))


class BenchFailed(Exception):
    """A benchmark case failed or crashed: a harness bug, not a user's mistake."""


@dataclass(frozen=True)
class BenchResult:
    """What one ``harness bench`` produced."""

    out: Path
    table: pd.DataFrame
    summary: dict[str, Any]
    figures: tuple[Path, ...]
    failed: tuple[str, ...] = ()
    """Cases that failed in this run (their rows are missing; pytest.log says why)."""


def write_results(report_path: Path, out: Path, failed: tuple[str, ...] = ()) -> BenchResult:
    """Derive the table, summary and plots from a pytest-benchmark JSON and write them to ``out``."""
    try:
        report = json.loads(report_path.read_text())
    except (OSError, ValueError) as exc:
        raise UserError(f"cannot read benchmark JSON {report_path}: {exc}") from None
    if not isinstance(report, dict) or not isinstance(report.get("benchmarks"), list):
        raise UserError(f"{report_path} is not a pytest-benchmark JSON file (no 'benchmarks' list)")
    df = tidy(report)
    if df.empty:
        raise UserError(f"{report_path} holds no tagged harness benchmarks")
    out.mkdir(parents=True, exist_ok=True)
    df.to_csv(out / "bench.csv", index=False)
    df.to_parquet(out / "bench.parquet", index=False)
    info = summary(df)
    info["machine"] = _machine(report)
    info["quick"] = is_quick(report)
    info["failed"] = list(failed)
    (out / "summary.json").write_text(json.dumps(info, indent=2) + "\n")
    (out / "summary.md").write_text(markdown(df) + "\n" + targets_markdown(info))
    figures = tuple(plots.draw_all(df, out))
    return BenchResult(out, df, info, figures, failed)


def is_quick(report: dict[str, Any]) -> bool:
    """Whether ``report`` came from ``--quick`` (pytest-benchmark keeps each case's max_time)."""
    times = [(b.get("options") or {}).get("max_time") for b in report["benchmarks"]]
    return any(isinstance(t, int | float) and t <= QUICK_MAX_TIME for t in times)


def _machine(report: dict[str, Any]) -> dict[str, Any]:
    machine = report.get("machine_info") or {}
    cpu = machine.get("cpu") or {}
    return {
        "python": machine.get("python_version"),
        "implementation": machine.get("python_implementation"),
        "cpu": cpu.get("brand_raw"),
        "cores": cpu.get("count"),
        "datetime": report.get("datetime"),
    }


def run(
    out: Path,
    *,
    quick: bool,
    select: str | None = None,
    million: bool = False,
    progress: Progress | None = None,
) -> BenchResult:
    """Run the suite and write every result file into ``out``."""
    report, failed = run_pytest(out, quick=quick, select=select, million=million, progress=progress)
    return write_results(report, out, failed)
