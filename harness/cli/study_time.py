"""Where a study's time goes: ``harness run --study``, run here, its phases timed.

``python -m harness.cli.study_time --workers 1 --workers 2`` runs ``harness run --study`` (the
comparison included, printed to nowhere) once per ``--workers`` value, in this process, with a
timer around each phase, and prints one table per run: each phase's wall seconds, the CPU
seconds this process spent in it, and the CPU seconds of the worker processes (read from
``RUSAGE_CHILDREN`` once the pool has ended; a real Dask cluster's workers are not this
process's children, and are not counted). A phase's share is of the run's CPU seconds, this
process's and the workers' together: on a machine shared with other work, CPU seconds hold
still where wall seconds do not. A phase's CPU seconds here are its own thread's
(``time.thread_time``), so that work done in a thread beside the run is not counted twice;
what pyarrow's own threads spend is in ``rest``. A phase's wall seconds spent beside the run
are shown and are not taken out of ``rest``.

The phases, in the order a run meets them:

* ``imports``: the modules the command loads before it runs (the interpreter's own start is
  not counted);
* ``sampling``: the families' scenarios drawn and the grid built (``build_grid``);
* ``pre-check``: the oracle run on every scenario (``unsolvable``): before any session with one
  worker, in a thread beside the run with a pool (``harness.cli.run.Beside``), where its wall
  seconds overlap the batch's and are not taken out of ``rest``;
* ``sessions``: the sessions and their fault-free baselines; with one worker they run in this
  process (and ``baselines`` is their baselines' part of them), with a pool in the workers;
* ``pickling``: with one worker, what a pool would add to send each task's outcomes back (one
  ``pickle`` round trip per task, timed here and not part of the run); with a pool it is inside
  the workers' and this process's figures;
* ``writing``: the finished tasks' rows turned into parquet and written as chunks;
* ``consolidation``: the chunks gathered into ``sessions.parquet`` (and the manifest's counts);
* ``reading``: ``sessions.parquet`` read back for the comparison;
* ``statistics``: the comparison (``print_comparison``) and, with a pool, the loading of its
  libraries beside the run (``load_comparison``);
* ``other``: the rest of this process's time in the batch (the pool's start, results arriving
  and unpickled, waiting for workers: wall seconds with little CPU);
* ``rest``: the rest of the command (imports as they are needed, the summary lines).

With two or more ``--workers`` values, the last lines give each run's wall seconds over the
first value's, per turn (``--repeat``: the order of the runs alternates, turn by turn, so that
a machine's drift falls on both sides), and their median; and beside them the most each ratio
could be given the pool run's own parts (:meth:`Timings.best_wall`: what this process did alone
before and after the batch, plus the batch's CPU seconds, workers' and this process's, spread
over the cores it had), so that a ratio short of a target reads as a slow run or as a bound.

It sits with the CLI because it runs the CLI's own command (``harness.cli.run``); the bench
layer below cannot import it.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import io
import json
import os
import pickle
import resource
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

PHASES = (
    "imports",
    "sampling",
    "pre-check",
    "sessions",
    "baselines",
    "pickling",
    "writing",
    "consolidation",
    "reading",
    "statistics",
    "other",
    "rest",
)
"""Rows of the table, in the order a run meets them (``baselines`` is a part of ``sessions``;
``pickling`` with one worker is an estimate, not part of the run)."""


def _cpu(who: int) -> float:
    usage = resource.getrusage(who)
    return usage.ru_utime + usage.ru_stime


@dataclass
class Timings:
    """Wall and CPU seconds per phase of one run."""

    wall: dict[str, float] = field(default_factory=dict)
    here: dict[str, float] = field(default_factory=dict)
    workers: dict[str, float] = field(default_factory=dict)
    total_wall: float = 0.0
    total_here: float = 0.0
    total_workers: float = 0.0
    sessions: int = 0
    executor: str = ""
    beside: dict[str, float] = field(default_factory=dict)
    """Wall seconds of each phase spent in another thread than the main one, beside the batch."""
    batch_wall: float = 0.0
    batch_cpu: float = 0.0
    """The batch's wall seconds, and the CPU seconds of this whole process (every thread) in them."""
    cores: int = 1
    """The cores the batch could use: ``min(workers, os.cpu_count())``."""

    def best_wall(self) -> float:
        """The least wall time this run's own parts allow: what this process did alone before
        and after the batch, plus the batch's CPU seconds (its workers' and this process's, all
        threads) spread evenly over its cores. A two-worker run's wall over a serial run's can
        reach at most the serial wall over this."""
        alone = self.total_wall - self.batch_wall
        return alone + (self.total_workers + self.batch_cpu) / max(1, self.cores)

    @contextlib.contextmanager
    def phase(self, name: str) -> Iterator[None]:
        wall, here = time.perf_counter(), time.thread_time()
        try:
            yield
        finally:
            wall = time.perf_counter() - wall
            self.wall[name] = self.wall.get(name, 0.0) + wall
            self.here[name] = self.here.get(name, 0.0) + time.thread_time() - here
            if threading.current_thread() is not threading.main_thread():
                self.beside[name] = self.beside.get(name, 0.0) + wall

    def table(self, title: str) -> str:
        total = self.total_here + self.total_workers or 1.0
        lines = [
            f"{title} ({self.executor}): {self.sessions} sessions, {self.total_wall:.1f} s wall, "
            f"{self.total_here:.1f} CPU s here, {self.total_workers:.1f} CPU s in workers",
            "",
            "| phase | wall s | CPU s here | CPU s workers | share of CPU |",
            "|---|---:|---:|---:|---:|",
        ]
        for name in PHASES:
            if name not in self.wall and name not in self.workers:
                continue
            cpu = self.here.get(name, 0.0) + self.workers.get(name, 0.0)
            share = f"{100 * cpu / total:.1f}%"
            if name == "baselines" or (name == "pickling" and self.executor == "serial"):
                share = f"({share})"  # inside sessions, or an estimate beside the run
            wall = f"{self.wall.get(name, 0.0):.2f}"
            if name in self.beside:
                wall = f"{wall} ({self.beside[name]:.2f} beside)"  # overlapping the batch's
            lines.append(
                f"| {name} | {wall} | {self.here.get(name, 0.0):.2f} "
                f"| {self.workers.get(name, 0.0):.2f} | {share} |"
            )
        return "\n".join(lines)


def _wrap(owner: Any, attr: str, timings: Timings, name: str, patches: list[tuple[Any, str, Any]]) -> None:
    original = owner.__dict__[attr] if isinstance(owner, type) else getattr(owner, attr)
    fn: Callable[..., Any] = original
    if isinstance(original, property):
        assert original.fget is not None
        fn = original.fget

    def timed(*args: Any, **kwargs: Any) -> Any:
        with timings.phase(name):
            return fn(*args, **kwargs)

    patches.append((owner, attr, original))
    setattr(owner, attr, property(timed) if isinstance(original, property) else timed)


def time_study(workers: int, out: Path, extra: tuple[str, ...] = ()) -> Timings:
    """Run ``harness run --study --workers N --out OUT [EXTRA]`` here, its phases timed."""
    timings = Timings()
    wall, here, kids = time.perf_counter(), _cpu(resource.RUSAGE_SELF), _cpu(resource.RUSAGE_CHILDREN)
    with timings.phase("imports"):  # what the command imports before it runs (pandas, pyarrow...)
        from harness.batch import results, runner
        from harness.cli import compare
        from harness.cli import run as run_cli_module
        from harness.cli.main import cli, run_cli
        from harness.session import loop
    patches: list[tuple[Any, str, Any]] = []
    _wrap(run_cli_module, "build_grid", timings, "sampling", patches)
    _wrap(run_cli_module, "unsolvable", timings, "pre-check", patches)
    _wrap(results.ResultsDir, "write_chunk", timings, "writing", patches)
    _wrap(results.ResultsDir, "consolidate", timings, "consolidation", patches)
    _wrap(results.ResultsDir, "consolidate_baselines", timings, "consolidation", patches)
    _wrap(runner.BatchSummary, "frame", timings, "reading", patches)
    _wrap(compare, "print_comparison", timings, "statistics", patches)
    _wrap(run_cli_module, "load_comparison", timings, "statistics", patches)  # its imports
    _wrap(loop, "run_baseline_of", timings, "baselines", patches)
    _wrap(runner, "run_batch", timings, "batch", patches)
    timed_batch = runner.run_batch

    def whole_batch(*args: Any, **kwargs: Any) -> Any:  # the CPU of every thread, not only this one's
        cpu = _cpu(resource.RUSAGE_SELF)
        try:
            return timed_batch(*args, **kwargs)
        finally:
            timings.batch_cpu = _cpu(resource.RUSAGE_SELF) - cpu

    patches.append((runner, "run_batch", timed_batch))
    runner.run_batch = whole_batch
    serial_cells = runner.run_cells

    def serial(tasks: Any, options: Any, workers: int, scheduler: str | None) -> Iterator[Any]:
        for task in tasks:  # the serial executor, with its sessions and a pickle round trip timed
            with timings.phase("sessions"):
                outcomes = serial_cells(task, options)
            with timings.phase("pickling"):
                pickle.loads(pickle.dumps(outcomes, pickle.HIGHEST_PROTOCOL))
            yield task, outcomes

    patches.append((runner._EXECUTORS, "serial", runner._EXECUTORS["serial"]))
    runner._EXECUTORS["serial"] = serial
    argv = ["run", "--study", "--out", str(out), "--workers", str(workers), *extra]
    try:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()) as err:
            rc = run_cli(cli, argv)
    finally:
        for owner, attr, original in reversed(patches):
            if isinstance(owner, dict):
                owner[attr] = original
            else:
                setattr(owner, attr, original)
    if rc:
        raise SystemExit(f"harness {' '.join(argv)} exited {rc}:\n{err.getvalue()[-2000:]}")
    timings.total_wall = time.perf_counter() - wall
    timings.total_here = _cpu(resource.RUSAGE_SELF) - here
    timings.total_workers = _cpu(resource.RUSAGE_CHILDREN) - kids
    manifest = results.ResultsDir.open(out).manifest
    timings.sessions = manifest.get("sessions", 0)
    timings.executor = manifest.get("executor", "")
    timings.cores = 1 if timings.executor == "serial" else max(1, min(workers, os.cpu_count() or 1))
    batch_wall, batch_here = timings.wall.pop("batch"), timings.here.pop("batch")
    timings.batch_wall = batch_wall
    inside = ("sessions", "writing", "consolidation")
    timings.wall["other"] = batch_wall - sum(timings.wall.get(p, 0.0) for p in inside)
    timings.here["other"] = batch_here - sum(timings.here.get(p, 0.0) for p in inside)
    if timings.executor != "serial":
        timings.workers["sessions"] = timings.total_workers  # (and git's, a few milliseconds)
    else:  # the estimate is not part of the run: take it out of the batch's figures
        for part in (timings.wall, timings.here):
            part["other"] -= part.get("pickling", 0.0)
        timings.total_here -= timings.here.get("pickling", 0.0)
        timings.total_wall -= timings.wall.get("pickling", 0.0)
        timings.batch_wall -= timings.wall.get("pickling", 0.0)
        timings.batch_cpu -= timings.here.get("pickling", 0.0)
    top = (
        "imports",
        "sampling",
        "pre-check",
        "sessions",
        "writing",
        "consolidation",
        "reading",
        "statistics",
        "other",
    )
    timings.wall["rest"] = timings.total_wall - sum(
        timings.wall.get(p, 0.0) - timings.beside.get(p, 0.0) for p in top
    )
    timings.here["rest"] = timings.total_here - sum(timings.here.get(p, 0.0) for p in top)
    return timings


def _one(workers: int, extra: tuple[str, ...]) -> Timings:
    """One timed run in a fresh interpreter, so that no cache of an earlier run (sampled
    families, loaded scenarios, baselines) speeds it up."""
    command = [sys.executable, "-m", "harness.cli.study_time", "--json", "--workers", str(workers)]
    done = subprocess.run([*command, "--", *extra], capture_output=True, text=True, check=False)
    if done.returncode:
        raise SystemExit(f"{' '.join(command)} exited {done.returncode}:\n{done.stderr[-3000:]}")
    data = json.loads(done.stdout)
    timings = Timings(**{k: v for k, v in data.items() if k not in ("wall", "here", "workers", "beside")})
    for name in ("wall", "here", "workers", "beside"):
        getattr(timings, name).update(data[name])
    return timings


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m harness.cli.study_time", description=__doc__)
    parser.add_argument(
        "--workers", type=int, action="append", help="a run per value (repeatable; default 1 and 2)"
    )
    parser.add_argument("--repeat", type=int, default=1, help="runs of each, in turn (default 1)")
    parser.add_argument("--json", action="store_true", help=argparse.SUPPRESS)  # one run, here
    parser.add_argument("extra", nargs="*", help="more `harness run` options, after --")
    args = parser.parse_args(argv)
    if args.json:
        with tempfile.TemporaryDirectory() as tmp:
            timings = time_study(args.workers[0], Path(tmp) / "study", tuple(args.extra))
        json.dump(dataclasses.asdict(timings), sys.stdout)
        return 0
    values = args.workers or [1, 2]
    walls: dict[int, list[float]] = {w: [] for w in values}
    best: dict[int, list[float]] = {w: [] for w in values}
    for turn in range(args.repeat):
        for workers in values if turn % 2 == 0 else values[::-1]:
            timings = _one(workers, tuple(args.extra))
            walls[workers].append(timings.total_wall)
            best[workers].append(timings.best_wall())
            title = f"--workers {workers}" + (f" (run {turn + 1})" if args.repeat > 1 else "")
            sys.stdout.write(timings.table(title) + "\n\n")
            sys.stdout.flush()
    for workers in values[1:]:
        ratios = [a / b for a, b in zip(walls[values[0]], walls[workers], strict=True)]
        shown = ", ".join(f"{r:.2f}" for r in ratios)
        bounds = [a / b for a, b in zip(walls[values[0]], best[workers], strict=True)]
        sys.stdout.write(
            f"wall of --workers {values[0]} over --workers {workers}: {shown} "
            f"(median {statistics.median(ratios):.2f}, min {min(ratios):.2f})\n"
            f"  at best, from each --workers {workers} run's own parts (alone + batch CPU / cores): "
            f"{', '.join(f'{b:.2f}' for b in bounds)} (median {statistics.median(bounds):.2f})\n"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
