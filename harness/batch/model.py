"""The cells of a batch whose agent asks a model: by requests in flight, each baseline once.

A model request is I/O: a session of the ``llm`` agent spends nearly all its time waiting on the
endpoint. So these cells do not go through the process pool one session per worker; they run
side by side in threads, ``--llm-concurrency`` sessions at a time, each with one request in
flight, whatever ``--workers`` says (on Dask: that many per worker, in each task). Scripted
cells keep their executor and speed.

After the scripted cells, each fault-free baseline once per key:

* Recovery is judged against the same session with its faults removed. Its key is the
  session's without the strategy: (scenario, agent, host, era, seed, swept values). Every key
  the remaining cells need and the run has not recorded runs once, started before any session
  of its key, and is recorded as it finishes (``baselines/`` in the results directory, then
  ``baselines.parquet``), so neither another worker nor a resumed run asks its requests again.
  A baseline that broke (its endpoint gave out) is handed on, not recorded: a resume tries again.
* A session waits for its key's baseline to finish before it starts, so that what both ask
  alike (the opening requests) is answered from the cassette rather than waited for; when no
  other work is ready it starts beside it instead of leaving a thread idle, and asks for the
  baseline once it has run (:func:`harness.session.simulated.run_session` takes it as a function).
* The row of the key's first strategy in grid order carries the baseline's tokens
  (``baseline_tokens_in``, ``baseline_tokens_out``), the others 0, so the columns sum to what
  the baselines cost.

Costs are read from the agent's meter (``model_meter()`` on its class; the llm agent's counts
every request sent, answered from a cassette, and every token). A budget (``--max-requests``,
``--max-tokens``) is set on it: once spent, every further request raises instead of being sent,
the sessions it cuts leave no row, the finished ones are kept, and the run is interrupted,
resumable. On Dask the budget is checked as tasks finish: no task is started after it is
spent, and the tasks in flight run to their end.

Determinism holds as it does for processes: a session's randomness flows from its own seed, and
a cassette answers by the request's content, so a session's row and trace do not depend on what
ran beside it.
"""

from __future__ import annotations

import concurrent.futures as cf
import itertools
import json
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from harness.batch.grid import Cell, Grid
from harness.batch.results import ResultsDir
from harness.batch.worker import (
    BaselineOutcome,
    ModelMeter,
    Outcome,
    SessionOptions,
    TaskSetup,
    calls_a_model,
    halts_the_batch,
    model_meter,
    run_baseline_cell,
    run_baseline_cells,
    run_cell,
    run_cells,
)
from harness.session.simulated import BASELINE_STRATEGY, Baseline

__all__ = [
    "Budget",
    "BudgetSpent",
    "ModelCells",
    "Usage",
    "count_replay",
    "model_agents",
    "run_model_cells",
]


@dataclass(frozen=True)
class Budget:
    """What a run may spend on a model before it stops, cleanly and resumable; None: no limit."""

    max_requests: int | None = None
    """Requests sent to the endpoint (retries included; answers from a cassette are free)."""
    max_tokens: int | None = None
    """Tokens the endpoint reported, prompt and completion together. The request that passes it
    is answered (its tokens are known only then); none is sent after."""

    def __bool__(self) -> bool:
        return self.max_requests is not None or self.max_tokens is not None


SWITCH_INTERVAL_S = 0.001
"""How often the interpreter hands the GIL to another thread while model sessions run (5 ms by
default): an answer that arrived is read within a millisecond, not after another session's
five, which at 32 requests in flight is most of what the harness adds to the endpoint's latency."""


class BudgetSpent(Exception):
    """The run's budget is spent: finished sessions are written, the run is interrupted."""


FIGURES = ("requests", "cached", "tokens_in", "tokens_out")


@dataclass
class Usage:
    """What this invocation's model requests cost, split between sessions and baselines."""

    sessions: dict[str, float] = field(default_factory=lambda: dict.fromkeys(FIGURES, 0))
    baselines: dict[str, float] = field(default_factory=lambda: dict.fromkeys(FIGURES, 0))
    sessions_done: int = 0
    sessions_total: int = 0
    baselines_run: int = 0
    baselines_needed: int = 0
    baselines_reused: int = 0
    """Baselines an earlier invocation of the run recorded, asked nothing now."""
    started: float = field(default_factory=time.perf_counter)
    budget: Budget = field(default_factory=Budget)

    def add(self, spent: Mapping[str, float] | None, *, baseline: bool = False) -> None:
        """One finished session (or baseline) and what it spent."""
        into = self.baselines if baseline else self.sessions
        for name in FIGURES:
            into[name] += (spent or {}).get(name, 0)
        if baseline:
            self.baselines_run += 1
        else:
            self.sessions_done += 1

    def measure(self, figures: Mapping[str, float]) -> None:
        """Set what everything spent so far, as the meters counted it: the sessions' share is
        what the baselines did not spend, so it includes the requests of sessions a budget cut
        short, which have no row."""
        for name in FIGURES:
            self.sessions[name] = figures.get(name, 0) - self.baselines[name]

    def total(self, name: str) -> int:
        return int(self.sessions[name] + self.baselines[name])

    @property
    def tokens(self) -> int:
        return self.total("tokens_in") + self.total("tokens_out")

    def left(self) -> int | None:
        """Model requests still to come (sent or answered from a cassette), estimated from the
        mean per session and per baseline so far; None before anything finished."""
        asked = {k: v["requests"] + v["cached"] for k, v in (("s", self.sessions), ("b", self.baselines))}
        estimate = 0.0
        if self.baselines_needed > self.baselines_run:
            if not self.baselines_run:
                return None
            estimate += asked["b"] / self.baselines_run * (self.baselines_needed - self.baselines_run)
        if self.sessions_total > self.sessions_done:
            if not self.sessions_done:
                return None
            estimate += asked["s"] / self.sessions_done * (self.sessions_total - self.sessions_done)
        return round(estimate)

    def line(self) -> str:
        """What progress shows: requests, tokens, tokens per second, requests left."""
        seconds = max(time.perf_counter() - self.started, 1e-9)
        cached = self.total("cached")
        text = f"{self.total('requests'):,} requests"
        if self.baselines["requests"]:
            text += f" ({int(self.baselines['requests']):,} for baselines)"
        if cached:
            text += f", {cached:,} from the cassette"
        text += f", {self.tokens:,} tokens, {self.tokens / seconds:,.0f} tok/s"
        left = self.left()
        text += ", requests left ?" if left is None else f", ~{left:,} requests left"
        if self.budget.max_requests is not None:
            text += f" (budget: {max(self.budget.max_requests - self.total('requests'), 0):,})"
        if self.budget.max_tokens is not None:
            text += f" (token budget: {max(self.budget.max_tokens - self.tokens, 0):,})"
        return text

    def summary(self) -> str:
        """The run's summary line: what the sessions and the baselines cost."""
        s, b = self.sessions, self.baselines
        reused = f" ({self.baselines_reused} more reused from the run)" if self.baselines_reused else ""
        return (
            f"{int(s['requests'] + b['requests']):,} requests sent, {int(s['cached'] + b['cached']):,} "
            f"answered from the cassette; sessions: {int(s['requests']):,} requests, "
            f"{int(s['tokens_in']):,} tokens in, {int(s['tokens_out']):,} out; fault-free baselines: "
            f"{self.baselines_run} run once each, {int(b['requests']):,} requests, "
            f"{int(b['tokens_in']):,} tokens in, {int(b['tokens_out']):,} out{reused}"
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "sessions": {k: int(v) for k, v in self.sessions.items()},
            "baselines": {k: int(v) for k, v in self.baselines.items()},
            "baselines_run": self.baselines_run,
            "baselines_reused": self.baselines_reused,
        }


def model_agents(grid: Grid) -> frozenset[str]:
    """The agents of ``grid`` that call a model."""
    return frozenset(a for a in grid.agents if calls_a_model(a))


def _meters(agents: Iterable[str]) -> list[ModelMeter]:
    found: dict[int, ModelMeter] = {}
    for agent in agents:
        meter = model_meter(agent)
        if meter is not None:
            found.setdefault(id(meter), meter)
    return list(found.values())


def _since(meters: Sequence[ModelMeter], start: Sequence[Mapping[str, float]]) -> dict[str, float]:
    """What the meters counted since ``start`` (their totals then), summed."""
    out = dict.fromkeys(FIGURES, 0.0)
    for meter, before in zip(meters, start, strict=True):
        now = meter.totals()
        for name in FIGURES:
            out[name] += now.get(name, 0) - before.get(name, 0)
    return out


class ModelCells:
    """The cells of a grid whose agent calls a model and that are not done yet, and their baselines."""

    def __init__(self, grid: Grid, done: set[tuple[Any, ...]], options: SessionOptions) -> None:
        self.grid, self.done, self.options = grid, done, options
        self.agents = model_agents(grid)
        self._setup = TaskSetup.of(options)
        self._faulted: dict[tuple[str, tuple[tuple[str, Any], ...]], bool] = {}
        per_agent = len(grid) // max(len(grid.agents), 1)
        finished = sum(1 for key in done if key[1] in self.agents)
        self.count = per_agent * len(self.agents) - finished
        """How many are left to run."""

    def __iter__(self) -> Iterator[Cell]:
        """The cells left, in grid order."""
        if not self.agents:
            return
        for cell in self.grid.iter_cells():
            if cell.agent in self.agents and cell.key() not in self.done:
                yield cell

    def key(self, cell: Cell) -> str | None:
        """The baseline key of ``cell`` (JSON text), or None when its scenario has no faults
        (such a session is its own baseline)."""
        scenario = (cell.scenario, cell.params)
        faulted = self._faulted.get(scenario)
        if faulted is None:
            loaded, _ = self._setup.cell(cell)
            faulted = self._faulted[scenario] = bool(getattr(loaded, "faults", ()))
        if not faulted:
            return None
        values = [cell.scenario, cell.agent, cell.host, cell.era, cell.seed, [list(p) for p in cell.params]]
        return json.dumps(values, separators=(",", ":"))

    def charged(self, cell: Cell) -> bool:
        """Whether ``cell``'s row carries its baseline's cost: the key's first cell in grid order."""
        return cell.strategy == self.grid.strategies[0]

    def baselines_needed(self) -> dict[str, Cell]:
        """Every baseline key the cells left need, with a cell to run it for (in grid order)."""
        needed: dict[str, Cell] = {}
        for cell in self:
            key = self.key(cell)
            if key is not None and key not in needed:
                needed[key] = replace(cell, strategy=BASELINE_STRATEGY)
        return needed


def _recorded(row: Mapping[str, Any]) -> Baseline:
    return Baseline(bool(row["success"]), int(row["tokens_in"]), int(row["tokens_out"]))


def _record(key: str, cell: Cell, found: BaselineOutcome) -> dict[str, Any]:
    base = found.baseline
    spent = found.usage or {}
    return {
        "key": key,
        "scenario": cell.scenario,
        "agent": cell.agent,
        "host": cell.host,
        "era": cell.era,
        "seed": cell.seed,
        "success": bool(base.success),
        "tokens_in": int(base.tokens_in),
        "tokens_out": int(base.tokens_out),
        "requests": int(spent.get("requests", 0)),
        "cached": int(spent.get("cached", 0)),
    }


def _handed(base: Any, charged: bool) -> Any:
    """The baseline as one session gets it: its cost only on the session charged with it."""
    if charged or not (base.tokens_in or base.tokens_out):
        return base
    return replace(base, tokens_in=0, tokens_out=0)


class _Slot:
    """A key's baseline, or the promise of it: a session of the key may run beside it and asks
    for it when it is done (a baseline starts before its sessions, each job with a thread of its
    own: no session waits on one that has not started)."""

    def __init__(self, value: Baseline | None = None) -> None:
        self._done = threading.Event()
        self._value = value
        self._failed: BaseException | None = None
        if value is not None:
            self._done.set()

    def set(self, value: Baseline) -> None:
        self._value = value
        self._done.set()

    def fail(self, exc: BaseException) -> None:
        self._failed = exc  # a budget or an interrupt cut it short: its sessions end so too
        self._done.set()

    def get(self) -> Baseline:
        self._done.wait()
        if self._failed is not None:
            raise self._failed
        assert self._value is not None
        return self._value


@dataclass(frozen=True)
class _Job:
    """One thing for the threads to run: a key's baseline, or a session."""

    cell: Cell
    options: SessionOptions
    slot: _Slot | None = None
    """The session's baseline (None: its scenario has no faults), or the baseline's own."""
    key: str = ""
    """The baseline key ("" for a session whose scenario has no faults)."""
    baseline: bool | None = None
    """True for a baseline; else None and ``charged`` says whether the session carries its cost."""
    charged: bool = False

    def run(self) -> Any:
        if self.baseline:
            assert self.slot is not None
            try:
                found = run_baseline_cell(self.cell, self.options)
            except BaseException as exc:
                self.slot.fail(exc)
                raise
            self.slot.set(found.baseline)
            return found
        slot, charged = self.slot, self.charged
        given = None if slot is None else (lambda: _handed(slot.get(), charged))
        return run_cell(self.cell, self.options, given)


def _jobs(
    cells: ModelCells, needed: Mapping[str, Cell], known: Mapping[str, Baseline], options: SessionOptions
) -> Iterator[_Job]:
    """Every session left in grid order, each key's missing baseline just before its first session."""
    slots = {key: _Slot(base) for key, base in known.items()}
    for cell in cells:
        key = cells.key(cell)
        if key is not None and key not in slots:
            slots[key] = _Slot()
            yield _Job(needed[key], options, slots[key], key, baseline=True)
        slot = None if key is None else slots[key]
        yield _Job(cell, options, slot, key or "", charged=cells.charged(cell))


def _schedule(
    pool: cf.ThreadPoolExecutor, jobs: Iterator[_Job], width: int, meters: Sequence[ModelMeter]
) -> Iterator[tuple[_Job, Any]]:
    """Run ``jobs`` in ``pool``, ``width`` at a time (one thread each), and yield each as it ends.

    A session whose baseline is still running waits for it, so that what they ask alike (the
    opening requests, with a cassette) is answered, not waited for beside it; when nothing else
    is ready it starts anyway, beside its baseline, rather than leave a thread idle. A job that
    halted (a budget spent) yields nothing, and once a meter is stopped nothing more starts.
    Interrupted (Ctrl-C), the meters are stopped so that the running jobs end at their next
    request, the finished ones are yielded, and the interrupt goes on.
    """
    ready: deque[_Job] = deque()
    waiting: dict[str, deque[_Job]] = {}
    running_baselines: set[str] = set()
    running: dict[cf.Future[Any], _Job] = {}
    interrupted: BaseException | None = None
    exhausted = False

    def pull() -> None:
        nonlocal exhausted
        while not exhausted and len(ready) < width:
            job = next(jobs, None)
            if job is None:
                exhausted = True
            elif job.baseline:
                running_baselines.add(job.key)
                ready.append(job)
            elif job.key in running_baselines:
                waiting.setdefault(job.key, deque()).append(job)
            else:
                ready.append(job)

    try:
        while True:
            while interrupted is None and not any(m.stopped for m in meters) and len(running) < width:
                pull()
                if ready:
                    job = ready.popleft()
                elif waiting:  # nothing else to do: beside its baseline, rather than idle
                    key = next(iter(waiting))
                    job = waiting[key].popleft()
                    if not waiting[key]:
                        del waiting[key]
                else:
                    break
                running[pool.submit(job.run)] = job
            if not running:
                break
            try:
                done, _ = cf.wait(running, return_when=cf.FIRST_COMPLETED)
            except KeyboardInterrupt as exc:
                interrupted = exc
                for meter in meters:
                    meter.stop("interrupted")
                continue
            for fut in done:
                job = running.pop(fut)
                if job.baseline:
                    running_baselines.discard(job.key)
                    ready.extendleft(reversed(waiting.pop(job.key, deque())))
                try:
                    result = fut.result()
                except BaseException as exc:
                    if halts_the_batch(exc):
                        continue  # cut short: nothing of it is written
                    raise
                yield job, result
    finally:
        if running:  # the consumer stopped early: end the running jobs at their next request
            for meter in meters:
                meter.stop("stopped")
    if interrupted is not None:
        raise interrupted


Finished = tuple[Sequence[Cell], list[Outcome]]
Progress = Callable[[int, Usage], None]
DaskRun = Callable[..., Iterator[tuple[Sequence[Cell], list[Any]]]]


def run_model_cells(
    cells: ModelCells,
    results: ResultsDir,
    options: SessionOptions,
    *,
    budget: Budget,
    usage: Usage,
    progress: Progress,
    dask: DaskRun | None = None,
) -> Iterator[Finished]:
    """Run ``cells``: their missing baselines first (recorded in ``results`` as they finish),
    then the sessions; yield each finished session as a one-cell task (on Dask, each task).

    ``dask``, when given, runs a stream of tasks on a Dask cluster (the runner's executor);
    else the cells run in this process's threads. Raises :class:`BudgetSpent` at the end when
    the budget stopped the run.
    """
    needed = cells.baselines_needed()
    recorded = results.read_baselines()
    known: dict[str, Any] = {k: _recorded(recorded[k]) for k in needed if k in recorded}
    missing = [(k, c) for k, c in needed.items() if k not in known]
    usage.baselines_needed, usage.baselines_reused = len(missing), len(known)
    usage.sessions_total, usage.budget = cells.count, budget
    meters = _meters(cells.agents)
    width = max(options.llm_concurrency, 1)

    start = [m.totals() for m in meters]

    def take_baselines(found: Sequence[tuple[tuple[str, Cell], BaselineOutcome]]) -> None:
        rows = []
        for (key, cell), outcome in found:
            known[key] = outcome.baseline
            usage.add(outcome.usage, baseline=True)
            if not outcome.baseline.error:
                rows.append(_record(key, cell, outcome))
        if rows:
            results.write_baselines(rows)
        if dask is None:
            usage.measure(_since(meters, start))
        progress(0, usage)

    def handed(cell: Cell) -> Any:
        key = cells.key(cell)
        return None if key is None else _handed(known[key], cells.charged(cell))

    if dask is None:
        for meter in meters:
            meter.limit(budget.max_requests, budget.max_tokens)
        switch = sys.getswitchinterval()
        sys.setswitchinterval(SWITCH_INTERVAL_S)
        try:
            with cf.ThreadPoolExecutor(width, thread_name_prefix="model") as pool:
                jobs = _jobs(cells, needed, known, options)
                for job, outcome in _schedule(pool, jobs, width, meters):
                    if job.baseline is not None:
                        take_baselines([((job.key, job.cell), outcome)])
                    else:
                        usage.add(outcome.usage)
                        usage.measure(_since(meters, start))
                        yield [job.cell], [outcome]
        finally:  # the pool's threads have ended: what they spent is all counted now
            sys.setswitchinterval(switch)
            usage.measure(_since(meters, start))
            stopped = next((m.stopped for m in meters if m.stopped), None)
            for meter in meters:
                meter.clear()
        if stopped:
            raise BudgetSpent(stopped)
        return

    spent = False

    def until_spent(tasks: Iterable[list[Any]]) -> Iterator[list[Any]]:
        for task in tasks:
            if spent:
                return
            yield task

    def over() -> bool:
        requests, tokens = usage.total("requests"), usage.tokens
        return (budget.max_requests is not None and requests >= budget.max_requests) or (
            budget.max_tokens is not None and tokens >= budget.max_tokens
        )

    size = max(1, min(2 * width, -(-max(len(missing), cells.count) // 8)))
    by_cell = {id(kc[1]): kc for kc in missing}
    baseline_tasks = _chunks((c for _, c in missing), size)
    for task, found in dask(until_spent(baseline_tasks), options, fn=run_baseline_cells):
        batch = []
        for cell, outcome in zip(task, found, strict=True):
            if isinstance(outcome, Outcome):  # its worker died under it
                outcome = BaselineOutcome(Baseline(False, error=str(outcome.row.get("error"))))
            batch.append((by_cell[id(cell)], outcome))
        take_baselines(batch)
        spent = spent or over()
    if spent:
        raise BudgetSpent(_spent_reason(budget))
    tasks = _chunks(iter(cells), size)
    for task, outcomes in dask(
        until_spent(tasks), options, fn=run_cells, extra=lambda t: ([handed(c) for c in t],)
    ):
        for outcome in outcomes:
            usage.add(outcome.usage)
        yield task, outcomes
        spent = spent or over()
    if spent:
        raise BudgetSpent(_spent_reason(budget))


def _spent_reason(budget: Budget) -> str:
    if budget.max_requests is not None:
        return f"--max-requests {budget.max_requests} reached"
    return f"--max-tokens {budget.max_tokens} reached"


def _chunks(items: Iterable[Cell], size: int) -> Iterator[list[Cell]]:
    source = iter(items)
    while chunk := list(itertools.islice(source, size)):
        yield chunk


@dataclass
class ReplayCount:
    """What a replay of a grid asks its cassette: exactly, since it was run against it."""

    sessions: int = 0
    session_requests: int = 0
    baselines: int = 0
    baseline_requests: int = 0
    missed: int = 0
    """Sessions (or baselines) that ask a request the cassette does not hold."""
    first_miss: str = ""


def count_replay(grid: Grid, options: SessionOptions) -> ReplayCount:
    """Run the model cells of ``grid`` against their cassette in this process (``--replay``:
    no endpoint is asked, nothing is written) and count the requests each asks."""
    cells = ModelCells(grid, set(), options)
    count = ReplayCount()
    known: dict[str, Any] = {}
    for key, cell in cells.baselines_needed().items():
        found = run_baseline_cell(cell, options)
        known[key] = found.baseline
        count.baselines += 1
        count.baseline_requests += int((found.usage or {}).get("cached", 0))
        if found.baseline.error:
            count.missed += 1
            count.first_miss = count.first_miss or f"{cell.label()} (its baseline): {found.baseline.error}"
    for cell in cells:
        needs = cells.key(cell)
        base = None if needs is None else known[needs]
        # handed as a run would hand it, after the session ran: a session counts its own requests
        outcome = run_cell(cell, options, None if base is None else (lambda base=base: base))
        count.sessions += 1
        count.session_requests += int((outcome.usage or {}).get("cached", 0))
        error = str(outcome.row.get("error") or "")
        if "CassetteMiss" in error and "baseline" not in error:
            count.missed += 1
            count.first_miss = count.first_miss or f"{cell.label()}: {error}"
    return count
