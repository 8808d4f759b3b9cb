"""The batch runner: a grid of sessions, run by an executor, written as it finishes.

The runner splits the cells still to run into tasks of a few dozen sessions,
hands them to an executor (``serial``, ``process`` or ``dask``) and writes each
finished task's rows as one chunk at once (:mod:`harness.results`). So:

* a kill or Ctrl-C at any point keeps every finished task's rows, and
  ``--resume`` runs exactly the cells that are missing (no duplicates, no gaps);
* a session that raises inside the harness becomes a ``harness_error`` row
  with its traceback in ``errors.log``, and the batch goes on;
* a worker process that dies mid-task (``os._exit`` in a tool, a segfault) is
  found by re-running that task's cells in halves in a fresh pool until the
  culprit stands alone; it is recorded as ``harness_error`` and the rest run.

Executors differ only in where ``run_cells`` runs; sessions are deterministic,
so every executor gives the same table (but for ``wall_time_s``).
"""

from __future__ import annotations

import concurrent.futures as cf
import functools
import hashlib
import importlib
import io
import multiprocessing
import os
import platform
import subprocess
import time
import traceback
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import Any

import pandas as pd

from harness import __version__
from harness.errors import UserError
from harness.grid import Cell, Grid
from harness.results import ResultsDir

EXECUTORS: tuple[str, ...] = ("serial", "process", "dask")

DEFAULT_SESSION_FN = "harness.session:run_session"
DEFAULT_LOADER = "harness.batch:load_cell_scenario"


@dataclass(frozen=True)
class SessionOptions:
    """What every session of a batch shares; picklable, so it travels to workers."""

    codec: str = "json"
    traces: bool = False
    scenario_sources: tuple[tuple[str, str], ...] = ()
    session_fn: str = DEFAULT_SESSION_FN
    loader: str = DEFAULT_LOADER
    """``module:function`` paths, so tests and plug-ins can swap what runs in a worker."""


@dataclass(frozen=True)
class Outcome:
    """One finished cell: its row, and the traceback and trace if any."""

    row: dict[str, Any]
    error: str | None = None
    trace: bytes | None = None


@dataclass
class BatchSummary:
    """What a batch did, for the CLI to print."""

    out: Path
    total: int
    ran: int
    skipped: int
    harness_errors: int
    seconds: float
    interrupted: bool = False
    frame: pd.DataFrame | None = field(default=None, repr=False)


# -- the worker side ---------------------------------------------------------------


@functools.lru_cache(maxsize=8)
def _resolve(path: str) -> Callable[..., Any]:
    module, _, attr = path.partition(":")
    fn: Callable[..., Any] = getattr(importlib.import_module(module), attr)
    return fn


@functools.lru_cache(maxsize=256)
def load_cell_scenario(source: str, params: tuple[tuple[str, Any], ...]) -> Any:
    """The scenario a cell runs, loaded once per worker and parameter set."""
    from harness.scenario import load_scenario

    scenario = load_scenario(source)
    return scenario.with_overrides(dict(params)) if params else scenario


def run_cells(cells: Sequence[Cell], options: SessionOptions) -> list[Outcome]:
    """Run cells one after another in this process; never raises for a session's failure."""
    fn = _resolve(options.session_fn)
    loader = _resolve(options.loader)
    sources = dict(options.scenario_sources)
    out: list[Outcome] = []
    for cell in cells:
        trace = io.BytesIO() if options.traces else None
        try:
            scenario = loader(sources.get(cell.scenario, cell.scenario), cell.params)
            result = fn(
                scenario,
                cell.agent,
                cell.strategy,
                cell.seed,
                codec=options.codec,
                trace=trace,
                host=cell.host,
            )
            row = dict(result.to_row())
            error = None
        except Exception:
            row = error_row(cell)
            error = traceback.format_exc()
        row.update({"scenario": cell.scenario, "host": cell.host, **dict(cell.params)})
        out.append(Outcome(row, error, trace.getvalue() if trace is not None else None))
    return out


def error_row(cell: Cell, status: str = "harness_error") -> dict[str, Any]:
    """The row of a session that failed inside the harness: its key, and that it failed."""
    return {
        "scenario": cell.scenario,
        "agent": cell.agent,
        "strategy": cell.strategy,
        "host": cell.host,
        "seed": cell.seed,
        "status": status,
        "success": False,
    }


# -- executors -----------------------------------------------------------------------

Finished = tuple[Sequence[Cell], list[Outcome]]
"""A finished task: its cells and their outcomes, in the same order."""


def _serial(
    tasks: list[list[Cell]], options: SessionOptions, workers: int, scheduler: str | None
) -> Iterator[Finished]:
    for task in tasks:
        yield task, run_cells(task, options)


def _died(cell: Cell, why: str) -> Outcome:
    return Outcome(error_row(cell), f"worker process died while running this session: {why}")


def _process(
    tasks: list[list[Cell]], options: SessionOptions, workers: int, scheduler: str | None
) -> Iterator[Finished]:
    ctx = multiprocessing.get_context("spawn")
    queue: list[list[Cell]] = list(tasks)
    isolate: list[list[Cell]] = []
    while queue or isolate:
        if queue:
            broken: list[list[Cell]] = []
            with cf.ProcessPoolExecutor(max_workers=workers, mp_context=ctx) as pool:
                futures = {pool.submit(run_cells, task, options): task for task in queue}
                try:
                    for fut in cf.as_completed(futures):
                        try:
                            yield futures[fut], fut.result()
                        except cf.process.BrokenProcessPool:
                            broken.append(futures[fut])
                except BaseException:
                    for f in futures:
                        f.cancel()
                    raise
            # A dying worker breaks every task in flight: halve them until each stands alone.
            queue = [
                half
                for task in broken
                if len(task) > 1
                for half in (task[: len(task) // 2], task[len(task) // 2 :])
            ]
            isolate.extend(task for task in broken if len(task) == 1)
            continue
        # One at a time in one worker: the first task that breaks the pool is the culprit.
        with cf.ProcessPoolExecutor(max_workers=1, mp_context=ctx) as pool:
            futures_in_order = [pool.submit(run_cells, task, options) for task in isolate]
            rest: list[list[Cell]] = []
            for i, (fut, task) in enumerate(zip(futures_in_order, isolate, strict=True)):
                try:
                    yield task, fut.result()
                except cf.process.BrokenProcessPool:
                    yield task, [_died(task[0], "the worker process ended (os._exit, a signal or a crash)")]
                    rest = isolate[i + 1 :]
                    break
        isolate = rest


def _dask(
    tasks: list[list[Cell]], options: SessionOptions, workers: int, scheduler: str | None
) -> Iterator[Finished]:
    try:
        from distributed import Client, LocalCluster, as_completed
        from distributed.scheduler import KilledWorker
    except ImportError:
        raise UserError("--executor dask needs dask.distributed: pip install 'dask[distributed]'") from None
    import logging

    logging.getLogger("distributed").setLevel(logging.ERROR)
    cluster = None
    try:
        if scheduler:
            try:
                client = Client(scheduler, timeout=10)
            except (OSError, TimeoutError) as exc:
                raise UserError(f"--scheduler {scheduler}: cannot connect ({exc})") from None
        else:
            cluster = LocalCluster(
                n_workers=workers,
                threads_per_worker=1,
                processes=True,
                dashboard_address=None,
                silence_logs=40,
            )
            client = Client(cluster)
        with client:
            queue = list(tasks)
            while queue:
                futures = [client.submit(run_cells, task, options, pure=False) for task in queue]
                owner = {f.key: task for f, task in zip(futures, queue, strict=True)}
                queue = []
                for fut in as_completed(futures):
                    task = owner[fut.key]
                    try:
                        yield task, fut.result()
                    except KilledWorker:
                        if len(task) == 1:
                            yield task, [_died(task[0], "dask reported the worker killed")]
                        else:
                            mid = len(task) // 2
                            queue.extend([task[:mid], task[mid:]])
    finally:
        if cluster is not None:
            cluster.close()


_EXECUTORS: dict[str, Callable[[list[list[Cell]], SessionOptions, int, str | None], Iterator[Finished]]] = {
    "serial": _serial,
    "process": _process,
    "dask": _dask,
}


# -- the batch ---------------------------------------------------------------------------


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def git_sha() -> str:
    """The commit the harness runs from (``+dirty`` if changed), or "unknown"."""
    root = Path(__file__).resolve().parent.parent
    try:
        sha = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True, timeout=5, check=True
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=root,
            capture_output=True,
            text=True,
            timeout=5,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return f"{sha}+dirty" if dirty else sha


def package_versions() -> dict[str, str]:
    out = {}
    for name in ("numpy", "pandas", "pyarrow", "scipy", "orjson", "msgspec", "dask", "distributed", "mcp"):
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return out


def default_out(root: Path = Path("results")) -> Path:
    stamp = datetime.now(UTC).strftime("%Y%m%d-%H%M%S")
    path = root / stamp
    n = 1
    while path.exists():
        n += 1
        path = root / f"{stamp}-{n}"
    return path


def fault_schedule_digest(df: pd.DataFrame, keys: Sequence[str]) -> str:
    """One hash over every (scenario, agent, seed, params) fault schedule of the run."""
    if "fault_schedule_hash" not in df.columns or df.empty:
        return ""
    cols = [k for k in keys if k != "strategy" and k != "host"]
    sub = df[[*cols, "fault_schedule_hash"]].dropna().astype(str).drop_duplicates().sort_values([*cols])
    h = hashlib.sha256()
    for values in sub.itertuples(index=False, name=None):
        h.update("\x1f".join(values).encode() + b"\n")
    return h.hexdigest()


def _chunk(cells: list[Cell], workers: int) -> list[list[Cell]]:
    size = max(1, min(100, len(cells) // max(1, workers * 8)))
    return [cells[i : i + size] for i in range(0, len(cells), size)]


ProgressFn = Callable[[int], None]


def run_batch(
    grid: Grid,
    out: Path,
    *,
    executor: str = "process",
    workers: int | None = None,
    scheduler: str | None = None,
    resume: bool = False,
    options: SessionOptions | None = None,
    progress: Callable[[int, int], ProgressFn] | None = None,
) -> BatchSummary:
    """Run (or finish) the batch ``grid`` into ``out``.

    ``progress(total, already_done)`` returns a callback advanced by finished sessions.
    """
    if executor not in _EXECUTORS:
        raise UserError(f"unknown executor {executor!r} (valid: {', '.join(EXECUTORS)})")
    workers = workers or os.cpu_count() or 1
    options = options or SessionOptions()
    started = time.perf_counter()
    if resume:
        results = ResultsDir.open(out)
        if results.grid != grid:
            raise UserError(f"{out}: --resume with a different grid than the run's manifest")
        results.clean_temporaries()
        results.manifest.setdefault("resumed", []).append(_now())
        results.manifest["status"] = "running"
        results.write_manifest()
        done = results.done_keys()
    else:
        results = ResultsDir.create(
            out,
            {
                "harness_version": __version__,
                "git_sha": git_sha(),
                "protocol_version": _protocol_version(),
                "codec": options.codec,
                "traces": options.traces,
                "grid": grid.to_json(),
                "sessions_in_grid": len(grid),
                "scenario_sources": dict(options.scenario_sources),
                "executor": executor,
                "workers": workers,
                "scheduler": scheduler,
                "python": platform.python_version(),
                "platform": platform.platform(),
                "packages": package_versions(),
                "started": _now(),
                "status": "running",
            },
        )
        done = set()
    cells = [c for c in grid.cells() if c.key() not in done]
    advance = progress(len(grid), len(grid) - len(cells)) if progress else None
    ran = errors = 0
    interrupted = False
    try:
        for task, outcomes in _EXECUTORS[executor](_chunk(cells, workers), options, workers, scheduler):
            results.write_chunk([o.row for o in outcomes])
            failed = [
                (cell.label(), o.error) for cell, o in zip(task, outcomes, strict=True) if o.error is not None
            ]
            if failed:
                results.log_errors(failed)
            for cell, o in zip(task, outcomes, strict=True):
                if o.trace is not None:
                    results.write_trace(cell.label(), o.trace)
            ran += len(outcomes)
            errors += len(failed)
            if advance:
                advance(len(outcomes))
    except KeyboardInterrupt:
        interrupted = True
    df = results.read_rows()
    if not interrupted:
        df = results.consolidate()
        results.manifest.update(
            {
                "status": "complete",
                "finished": _now(),
                "sessions": len(df),
                "harness_errors": int((df["status"] == "harness_error").sum()) if "status" in df else 0,
                "fault_schedule_hash": fault_schedule_digest(df, results.key_columns()),
            }
        )
    else:
        results.manifest["status"] = "interrupted"
    results.write_manifest()
    return BatchSummary(
        out=out,
        total=len(grid),
        ran=ran,
        skipped=len(grid) - len(cells),
        harness_errors=errors,
        seconds=time.perf_counter() - started,
        interrupted=interrupted,
        frame=df,
    )


def _protocol_version() -> str:
    from harness.protocol import LATEST_VERSION

    return LATEST_VERSION
