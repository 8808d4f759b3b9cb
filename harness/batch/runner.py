"""The batch runner: a grid of sessions, run by an executor, written as it finishes.

The runner splits the cells still to run into tasks of a few dozen sessions,
hands them to an executor (``serial``, ``process`` or ``dask``) and writes each
finished task's rows as one chunk at once (:mod:`harness.batch.results`). So:

* a kill or Ctrl-C at any point keeps every finished task's rows, and
  ``--resume`` runs exactly the cells that are missing (no duplicates, no gaps);
* a session that raises inside the harness becomes a ``harness_error`` row
  with its traceback in ``errors.log``, and the batch goes on;
* a worker process that dies mid-task (``os._exit`` in a tool, a segfault) is
  found by re-running that task's cells in halves in a fresh pool until the
  culprit stands alone; it is recorded as ``harness_error`` and the rest run.

Executors differ only in where ``run_cells`` runs; sessions are deterministic,
so every executor gives the same table (but for ``wall_time_s``).

Cells whose agent calls a model run after the others, by requests in flight rather than by
processes, with each fault-free baseline run once for the whole batch
(:mod:`harness.batch.model`).
"""

from __future__ import annotations

import concurrent.futures as cf
import itertools
import multiprocessing
import os
import platform
import subprocess
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import Any

import pandas as pd

from harness import __version__
from harness.batch import collector
from harness.batch.grid import Cell, Grid
from harness.batch.model import Budget, BudgetSpent, ModelCells, Usage, model_agents, run_model_cells
from harness.batch.results import ResultsDir
from harness.batch.worker import (
    Outcome,
    SessionOptions,
    Warmth,
    error_row,
    loader_warmth,
    no_process_exit,
    run_cells,
    start_worker,
)
from harness.errors import UserError
from harness.session.row import ROW_VERSION

__all__ = [
    "EXECUTORS",
    "BatchSummary",
    "Budget",
    "Outcome",
    "SessionOptions",
    "check_scheduler",
    "default_executor",
    "default_out",
    "error_row",
    "git_sha",
    "package_versions",
    "run_batch",
    "run_cells",
    "task_size",
]

EXECUTORS: tuple[str, ...] = ("serial", "process", "dask")

SCHEDULER_TIMEOUT_S = 10.0
"""How long ``--executor dask --scheduler ADDRESS`` tries to reach the scheduler before giving up."""


class SchedulerUnreachable(UserError):
    """The dask scheduler named by ``--scheduler`` could not be reached; the run is kept, resumable."""


def check_scheduler(address: str) -> None:
    """Refuse a ``--scheduler`` address that no scheduler could have (before a run is started).

    Whether one listens there is only known by connecting, which the dask executor does.
    """
    try:
        from distributed.comm.addressing import parse_address, parse_host_port
        from distributed.comm.registry import get_backend
    except ImportError:
        raise UserError("--executor dask needs dask.distributed: pip install 'dask[distributed]'") from None
    try:
        scheme, location = parse_address(address)
        get_backend(scheme)
        if scheme in ("tcp", "tls", "ws", "wss"):
            parse_host_port(location)
    except (ValueError, TypeError) as exc:
        raise UserError(
            f"--scheduler {address}: not a scheduler address ({exc}); e.g. tcp://host:8786"
        ) from None


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
    first_error: str = ""
    """The first harness error's reason in this run (the row's ``error``), for the CLI to show."""
    usage: Usage | None = None
    """What the model requests of this invocation cost (None when no agent calls a model)."""
    stopped: str = ""
    """Why the run stopped before its end when a budget did (``--max-requests 200 reached``)."""

    @property
    def frame(self) -> pd.DataFrame:
        """The finished rows, read from disk on demand (the run itself never holds them all)."""
        return ResultsDir.open(self.out).read_rows()


# -- executors -----------------------------------------------------------------------

Finished = tuple[Sequence[Cell], list[Outcome]]
"""A finished task: its cells and their outcomes, in the same order."""


Tasks = Iterator[list[Cell]]


def _serial(tasks: Tasks, options: SessionOptions, workers: int, scheduler: str | None) -> Iterator[Finished]:
    with collector.serial():  # the collector set for sessions while they run here, then as it was
        for task in tasks:
            with no_process_exit():  # the sessions share this process: none may end it
                outcomes = run_cells(task, options)
            yield task, outcomes


def _died(cell: Cell, why: str) -> Outcome:
    reason = f"worker process died while running this session: {why}"
    return Outcome(error_row(cell, reason=reason), reason)


def _halves(broken: list[list[Cell]]) -> list[list[Cell]]:
    return [half for t in broken if len(t) > 1 for half in (t[: len(t) // 2], t[len(t) // 2 :])]


def _window(workers: int) -> int:
    """Tasks kept in flight: enough to keep workers busy, few enough that memory stays flat."""
    return workers * 4


def _drain(
    futures: dict[cf.Future[list[Outcome]], list[Cell]], limit: int, broken: list[list[Cell]]
) -> Iterator[Finished]:
    """Yield finished tasks until at most ``limit`` are in flight; broken ones go to ``broken``."""
    while len(futures) > limit:
        done, _ = cf.wait(futures, return_when=cf.FIRST_COMPLETED)
        for fut in done:
            cells = futures.pop(fut)
            try:
                yield cells, fut.result()
            except cf.process.BrokenProcessPool:
                broken.append(cells)


def _pool(workers: int, ctx: Any, warmth: Warmth = None) -> cf.ProcessPoolExecutor:
    """A pool whose workers end when this process does, and start with what it has loaded
    (:func:`~harness.batch.worker.start_worker`)."""
    return cf.ProcessPoolExecutor(
        max_workers=workers, mp_context=ctx, initializer=start_worker, initargs=(os.getpid(), warmth)
    )


def _stop_workers(pool: cf.ProcessPoolExecutor) -> None:
    """End a pool's workers now, whatever they run (the run is stopping: Ctrl-C, SIGTERM, an
    error), so that leaving the pool does not wait for their tasks to finish."""
    pool.shutdown(wait=False, cancel_futures=True)
    _stop_children()


def _stop_children() -> None:
    """End this process's worker processes (a pool's, a local Dask cluster's: it starts no
    others while they run), SIGTERM and then SIGKILL."""
    workers = multiprocessing.active_children()
    for worker in workers:
        worker.terminate()
    for worker in workers:
        worker.join(timeout=5)
        if worker.is_alive():
            worker.kill()
            worker.join(timeout=5)


def _process(
    tasks: Tasks, options: SessionOptions, workers: int, scheduler: str | None
) -> Iterator[Finished]:
    ctx = multiprocessing.get_context("spawn")
    warmth = loader_warmth(options)
    source: Tasks = tasks
    isolate: list[list[Cell]] = []
    while True:
        broken: list[list[Cell]] = []
        unstarted: list[list[Cell]] = []
        with _pool(workers, ctx, warmth) as pool:
            futures: dict[cf.Future[list[Outcome]], list[Cell]] = {}

            try:
                for task in source:
                    try:
                        futures[pool.submit(run_cells, task, options)] = task
                    except cf.process.BrokenProcessPool:
                        unstarted.append(task)  # the pool broke before this task got in
                        break
                    yield from _drain(futures, _window(workers), broken)
                yield from _drain(futures, 0, broken)
            except BaseException:
                for f in futures:
                    f.cancel()
                _stop_workers(pool)  # a worker in a hung session would hold up the pool's exit
                raise
        # A dying worker breaks every task in flight: halve them until each stands alone;
        # tasks that never started go on, untouched, in the next pool.
        isolate.extend(t for t in broken if len(t) == 1)
        halves = _halves(broken)
        if halves or unstarted:
            source = itertools.chain(halves, unstarted, source)
            continue
        if not isolate:
            return
        # One at a time in one worker: the first task that breaks the pool is the culprit.
        while isolate:
            with _pool(1, ctx, warmth) as pool:
                in_order = [pool.submit(run_cells, t, options) for t in isolate]
                rest: list[list[Cell]] = []
                for i, (fut, task) in enumerate(zip(in_order, isolate, strict=True)):
                    try:
                        yield task, fut.result()
                    except cf.process.BrokenProcessPool:
                        yield (
                            task,
                            [_died(task[0], "the worker process ended (os._exit, a signal or a crash)")],
                        )
                        rest = isolate[i + 1 :]
                        break
            isolate = rest
        return


def _dask(
    tasks: Iterator[list[Any]],
    options: SessionOptions,
    workers: int,
    scheduler: str | None,
    *,
    fn: Callable[..., list[Any]] = run_cells,
    extra: Callable[[list[Any]], tuple[Any, ...]] | None = None,
) -> Iterator[tuple[list[Any], list[Any]]]:
    """Tasks on a Dask cluster: ``fn(task, options, *extra(task))`` for each (``run_cells`` by
    default; the model cells' baselines and sessions use it too)."""
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
                client = Client(scheduler, timeout=SCHEDULER_TIMEOUT_S)
            except Exception as exc:  # OSError, TimeoutError, ValueError for a malformed address...
                why = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
                raise SchedulerUnreachable(f"--scheduler {scheduler}: cannot connect ({why})") from None
        else:
            cluster = LocalCluster(
                n_workers=workers,
                threads_per_worker=1,
                processes=True,
                dashboard_address=None,
                # No dashboard; the scheduler's HTTP server still starts, on 8787 unless told:
                # a port of its own, so another cluster on this machine is no clash (or warning).
                scheduler_kwargs={"dashboard": False, "dashboard_address": "127.0.0.1:0"},
                silence_logs=40,
            )
            client = Client(cluster)
        with client:
            try:

                def submit(task: list[Any]) -> Any:
                    more = extra(task) if extra is not None else ()
                    return client.submit(fn, task, options, *more, pure=False)

                source = tasks
                while True:
                    owner: dict[Any, list[Any]] = {}
                    pending = as_completed()
                    broken: list[list[Any]] = []
                    for task in itertools.islice(source, _window(workers)):
                        fut = submit(task)
                        owner[fut.key] = task
                        pending.add(fut)
                    for fut in pending:
                        task = owner.pop(fut.key)
                        try:
                            yield task, fut.result()
                        except KilledWorker:
                            if len(task) == 1:
                                yield task, [_died(task[0], "dask reported the worker killed")]
                            else:
                                broken.append(task)
                        nxt = next(source, None)
                        if nxt is not None:
                            new = submit(nxt)
                            owner[new.key] = nxt
                            pending.add(new)
                    if not broken:
                        return
                    source = iter(_halves(broken))
            except BaseException:
                if cluster is not None:  # stopping (Ctrl-C, SIGTERM): a worker in a hung session
                    _stop_children()  # would hold up the client's and the cluster's close
                raise
    finally:
        if cluster is not None:
            cluster.close(timeout=10)


_EXECUTORS: dict[str, Callable[[Tasks, SessionOptions, int, str | None], Iterator[Finished]]] = {
    "serial": _serial,
    "process": _process,
    "dask": _dask,
}


# -- the batch ---------------------------------------------------------------------------


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def git_sha() -> str:
    """The commit the harness runs from (``+dirty`` if changed), or "unknown"."""
    root = Path(__file__).resolve().parents[2]
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
    for name in ("numpy", "pandas", "pyarrow", "scipy", "orjson", "msgspec", "dask", "distributed", "mcp",
                 "agentdojo", "bfcl-eval", "mpmath"):  # fmt: skip
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return out


def _stamp() -> str:
    return datetime.now(UTC).strftime("%Y%m%d-%H%M%S")


def default_out(root: str | os.PathLike[str] = Path("results")) -> Path:
    """A new, empty ``root/<UTC timestamp>`` directory, created here and now.

    Two runs started in the same second get ``<stamp>`` and ``<stamp>-2`` (then ``-3``...):
    each name is taken by an ``mkdir`` that fails if the directory exists, so two
    processes can never both take the same one.
    """
    root = Path(root)
    stamp = _stamp()
    try:
        root.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UserError(f"{root}: cannot create the results directory ({exc.strerror or exc})") from None
    for n in itertools.count(1):
        path = root / (stamp if n == 1 else f"{stamp}-{n}")
        try:
            path.mkdir(exist_ok=False)
        except FileExistsError:
            continue
        except OSError as exc:
            raise UserError(f"{path}: cannot create the results directory ({exc.strerror or exc})") from None
        return path
    raise AssertionError("unreachable")  # pragma: no cover


def _tasks(
    grid: Grid,
    done: set[tuple[Any, ...]],
    size: int | Callable[[int], int],
    skip: frozenset[str] = frozenset(),
    total: int = 0,
) -> Iterator[list[Cell]]:
    """Cells still to run, cut into tasks of about ``size`` (:meth:`Grid.iter_blocks`).

    A task holds whole blocks of seeds under every strategy, so the sessions that share a
    fault-free baseline run in one process, which runs it once; consecutive blocks are put
    together up to ``size`` sessions (a study's block is one scenario and agent, 25 sessions: a
    task of one block would be a chunk, and a chunk's write and read cost the parent about as
    much as its sessions). ``size`` may be a function of the sessions not yet handed out (of
    ``total``), so that tasks shrink as the run nears its end (:func:`task_sizes`); blocks are
    then cut to the smallest task it gives (``size(0)``). Each run of consecutive grid
    positions in a task is written as its own chunk (:func:`_runs`), so every chunk covers one
    contiguous range and sorting chunks by their first position gives grid order. Cells already
    ``done``, and those of the agents in ``skip`` (they call a model, and run apart), are left
    out.
    """
    sized = size if callable(size) else lambda _left: size
    per_block = max(1, sized(0) // max(1, len(grid.strategies)))
    left = total
    limit = sized(left)
    task: list[Cell] = []
    for block in grid.iter_blocks(per_block):
        if skip and block[0].agent in skip:
            continue
        cells = [cell for cell in block if cell.key() not in done] if done else block
        if not cells:
            continue
        if task and len(task) + len(cells) > limit:
            yield task
            left -= len(task)
            limit = sized(left)
            task = []
        task.extend(cells)
    if task:
        yield task


def _runs(grid: Grid, cells: Sequence[Cell]) -> Iterator[tuple[int, list[int]]]:
    """The runs of consecutive grid positions in ``cells`` (in any order), in grid order:
    ``(first, members)``, the first position and the indices into ``cells`` of each run's
    cells, in grid order."""
    positions = [grid.index(cell) for cell in cells]
    members: list[int] = []
    last = -2
    for i in sorted(range(len(cells)), key=positions.__getitem__):
        if positions[i] != last + 1 and members:
            yield positions[members[0]], members
            members = []
        members.append(i)
        last = positions[i]
    if members:
        yield positions[members[0]], members


POOL_FROM = 1_000
"""Scripted sessions from which ``harness run``'s default executor starts a worker pool. Below
it the run stays in this process: spawned workers take about half a second to start and import
the harness, and on 500 sessions of ``travel_day`` two workers were slower than one process,
on 2,000 faster (docs/batches.md has the command and the figures)."""


def default_executor(scripted: int, workers: int) -> tuple[str, str]:
    """The executor of a run whose user named none, and why when it is not ``process``.

    ``scripted`` is the number of sessions of agents that do not call a model (those run in
    threads, whatever the executor); ``workers`` the pool it would start.
    """
    if workers <= 1:
        return "serial", "one worker runs fastest in this process"
    if scripted < POOL_FROM:
        why = f"below {POOL_FROM:,} sessions a pool of worker processes starts slower than it saves"
        return "serial", why
    return "process", ""


MAX_TASK = 500
"""Sessions per task at most: a task is one chunk file, so this bounds what a kill can lose
(the tasks in flight) while keeping the parent's per-chunk cost (a parquet write and,
later, a read) small beside the sessions it carries."""

MIN_TASK = 50
"""Sessions per task at least as tasks shrink toward the end of a run (:func:`task_sizes`),
unless the run's first tasks are smaller."""


def task_size(remaining: int, workers: int) -> int:
    """About eight tasks per worker (so the tail balances), at most :data:`MAX_TASK`."""
    return max(1, min(MAX_TASK, remaining // max(1, workers * 8)))


def task_sizes(remaining: int, workers: int) -> int | Callable[[int], int]:
    """The size of each next task, given the sessions not yet handed out.

    With one worker, :func:`task_size` of the whole run. With more, tasks shrink as the run
    nears its end, down to :data:`MIN_TASK` (or the first task's size, if smaller): the run
    ends when its last task does, and a worker that finds nothing left waits for the others'
    last tasks, about half a task on average; a 500-session task is most of a second.
    """
    first = task_size(remaining, workers)
    if workers <= 1:
        return first
    least = min(MIN_TASK, first)
    return lambda left: max(least, min(first, left // (2 * workers)))


ProgressFn = Callable[..., None]
"""Advanced by finished sessions: ``advance(n)``, and ``advance(n, usage)`` (what the model
requests cost so far, a :class:`~harness.batch.model.Usage`) when an agent of the grid calls a
model."""


def run_batch(
    grid: Grid,
    out: str | os.PathLike[str],
    *,
    executor: str = "process",
    workers: int | None = None,
    scheduler: str | None = None,
    resume: bool = False,
    options: SessionOptions | None = None,
    progress: Callable[[int, int], ProgressFn] | None = None,
    budget: Budget | None = None,
) -> BatchSummary:
    """Run (or finish) the batch ``grid`` into ``out``.

    ``out`` is a path (``str`` or ``os.PathLike``). ``progress(total, already_done)``
    returns a callback advanced by finished sessions. If the executor fails (say, its
    dask scheduler cannot be reached) the run is marked ``interrupted``, not left
    ``running``, and the error goes on to the caller: ``resume=True`` finishes it.
    ``budget`` bounds what this invocation may spend on model requests: once spent, the run
    stops as ``interrupted`` with every finished session kept (``BatchSummary.stopped``).
    """
    out = Path(out)
    if executor not in _EXECUTORS:
        raise UserError(f"unknown executor {executor!r} (valid: {', '.join(EXECUTORS)})")
    workers = workers or os.cpu_count() or 1
    options = options or SessionOptions()
    started = time.perf_counter()
    if resume:
        results = ResultsDir.open(out)
        results.claim()  # one writer at a time: refused here if another process is writing it
        try:
            done = _reopen(results, grid, out)
        except BaseException:
            results.release()
            raise
    else:
        results = ResultsDir.create(
            out,
            {
                "harness_version": __version__,
                "git_sha": git_sha(),
                "protocol_version": _protocol_version(),
                "codec": options.codec,
                "row_version": ROW_VERSION,
                "traces": options.traces,
                "grid": grid.to_json(),
                "sessions_in_grid": len(grid),
                "scenario_sources": dict(options.scenario_sources),
                "agent_settings": {agent: dict(knobs) for agent, knobs in options.agent_settings},
                "executor": executor,
                "workers": workers,
                "scheduler": scheduler,
                **_concurrency(grid, options, executor),
                "python": platform.python_version(),
                "platform": platform.platform(),
                "packages": package_versions(),
                "started": _now(),
                "status": "running",
            },
        )
        done = set()
    if resume:
        results.manifest.update(_concurrency(grid, options, executor))
        if options.traces:
            _rewrite_lost_traces(results, grid, done, options)
    results.write_ahead()  # sessions.parquet as the chunks come, not read back from them at the end
    try:
        return _write(
            results, grid, done, executor, options, workers, scheduler, progress, started, budget or Budget()
        )
    finally:
        results.stop_ahead()
        results.release()


def _rewrite_lost_traces(
    results: ResultsDir, grid: Grid, done: set[tuple[Any, ...]], options: SessionOptions
) -> int:
    """Write again the trace of every finished session that has none (a disk that filled up
    between a chunk and its traces, say: 26 of 4,000 were lost so, issue 49), by running the
    session again: sessions are deterministic, so the trace is the one that was lost. Its row
    stays the one written. The manifest counts them (``traces_rewritten``); returns how many."""
    have = results.trace_labels()
    lost = [c for c in grid.iter_cells() if c.key() in done and c.label() not in have]
    if not lost:
        return 0
    with no_process_exit():
        outcomes = run_cells(lost, options)
    for cell, outcome in zip(lost, outcomes, strict=True):
        if outcome.trace is not None:
            results.write_trace(cell.label(), outcome.trace)
    results.manifest["traces_rewritten"] = int(results.manifest.get("traces_rewritten") or 0) + len(lost)
    return len(lost)


def _concurrency(grid: Grid, options: SessionOptions, executor: str) -> dict[str, Any]:
    """What ``--llm-concurrency`` means for this run, for the manifest (nothing without a model)."""
    if not model_agents(grid):
        return {}
    per = "dask worker" if executor == "dask" else "machine"
    return {"llm_concurrency": options.llm_concurrency, "llm_concurrency_per": per}


def _reopen(results: ResultsDir, grid: Grid, out: Path) -> set[tuple[Any, ...]]:
    """Check that ``results`` (locked) can be resumed with ``grid``, mark it running, and return
    the keys it has already."""
    if results.grid != grid:
        raise UserError(f"{out}: --resume with a different grid than the run's manifest")
    written = results.manifest.get("row_version", 1)
    if written != ROW_VERSION:
        raise UserError(
            f"{out}: its rows are of version {written} and this harness writes version "
            f"{ROW_VERSION} (see harness.session.row.ROW_VERSION); a resume would mix two meanings "
            "of the same columns in one table: start a new run"
        )
    results.clean_temporaries()
    done = results.done_keys()
    results.manifest.setdefault("resumed", []).append(_now())
    results.manifest["status"] = "running"
    results.write_manifest()
    return done


def _write(
    results: ResultsDir,
    grid: Grid,
    done: set[tuple[Any, ...]],
    executor: str,
    options: SessionOptions,
    workers: int,
    scheduler: str | None,
    progress: Callable[[int, int], ProgressFn] | None,
    started: float,
    budget: Budget,
) -> BatchSummary:
    """Run the cells of ``grid`` not in ``done`` into ``results`` (whose lock the caller holds):
    the scripted ones by the executor, then those whose agent calls a model."""
    out = results.path
    remaining = len(grid) - len(done)
    advance = progress(len(grid), len(done)) if progress else None
    ran = errors = 0
    first_error = ""
    first_at: int | None = None
    interrupted = False
    stopped = ""
    model = model_agents(grid)
    cells = ModelCells(grid, done, options) if model else None
    usage = Usage() if model else None
    scripted = remaining - (cells.count if cells is not None else 0)
    tasks = _tasks(grid, done, task_sizes(scripted, workers), model, scripted)

    def shown(n: int, now: Usage) -> None:
        if advance:
            advance(n, now)

    def finished() -> Iterator[Finished]:
        if scripted:
            yield from _EXECUTORS[executor](tasks, options, workers, scheduler)
        if cells is not None and usage is not None and cells.count:
            dask = None
            if executor == "dask":

                def dask(source: Iterator[list[Any]], opts: SessionOptions, **kw: Any) -> Any:
                    return _dask(source, opts, workers, scheduler, **kw)

            yield from run_model_cells(
                cells, results, options, budget=budget, usage=usage, progress=shown, dask=dask
            )

    try:
        for task, outcomes in finished():
            for first, members in _runs(grid, task):
                results.write_chunk([outcomes[i].row for i in members], first=first)
            failed = [
                (cell.label(), o.error) for cell, o in zip(task, outcomes, strict=True) if o.error is not None
            ]
            if failed:
                results.log_errors(failed)
            for cell, o in zip(task, outcomes, strict=True):
                if o.trace is not None:
                    results.write_trace(cell.label(), o.trace)
            ran += len(outcomes)
            # A session that broke inside (an agent's endpoint gave out) has its row, no traceback.
            broken = [o.error is not None or o.row.get("status") == "harness_error" for o in outcomes]
            errors += sum(broken)
            if any(broken):
                # The first in grid order, whichever finished first (model sessions run side by side).
                cell, o = next((c, o) for c, o, bad in zip(task, outcomes, broken, strict=True) if bad)
                if first_at is None or grid.index(cell) < first_at:
                    first_at = grid.index(cell)
                    first_error = f"{cell.label()}: {o.row.get('error') or 'see errors.log'}"
            if advance:
                advance(len(outcomes), usage) if usage is not None else advance(len(outcomes))
    except KeyboardInterrupt:
        interrupted = True
    except BudgetSpent as exc:
        interrupted, stopped = True, str(exc)
    except BaseException as exc:
        results.manifest["status"] = "interrupted"
        results.manifest["error"] = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        results.write_manifest()
        raise
    results.manifest.pop("error", None)
    results.manifest.pop("stopped", None)
    if usage is not None:
        results.manifest["model_usage"] = _summed(results.manifest.get("model_usage"), usage.to_json())
    if not interrupted:
        stats = results.consolidate()
        baselines = results.consolidate_baselines()
        results.manifest.update({"status": "complete", "finished": _now(), **stats})
        if baselines:
            results.manifest["baselines"] = baselines
    else:
        results.manifest["status"] = "interrupted"
        if stopped:
            results.manifest["stopped"] = stopped
    results.write_manifest()
    return BatchSummary(
        out=out,
        total=len(grid),
        ran=ran,
        skipped=len(grid) - remaining,
        harness_errors=errors,
        seconds=time.perf_counter() - started,
        interrupted=interrupted,
        first_error=first_error,
        usage=usage,
        stopped=stopped,
    )


def _summed(before: Any, now: dict[str, Any]) -> dict[str, Any]:
    """The manifest's model usage over every invocation of a run (numbers added, key by key)."""
    if not isinstance(before, dict):
        return now
    out = dict(before)
    for key, value in now.items():
        if isinstance(value, dict):
            out[key] = _summed(before.get(key), value)
        elif isinstance(value, int | float) and isinstance(before.get(key), int | float):
            out[key] = before[key] + value
        else:
            out[key] = value
    return out


def _protocol_version() -> str:
    from harness.protocol import LATEST_VERSION

    return LATEST_VERSION
