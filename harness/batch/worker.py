"""What runs inside a batch worker: one task of cells, one session after another.

Kept apart from :mod:`harness.batch.runner` so that a worker process imports only the
session machinery -- not pandas or pyarrow, which only the parent needs -- and
starts quickly.

Sessions of an agent that calls a model (``calls_a_model`` on its class) wait on the endpoint
most of the time, so they run side by side in threads, ``llm_concurrency`` at a time, each
with one request in flight; each gets its fault-free baseline handed in, computed once per key
(:func:`run_baseline_cell`). Scripted sessions run one after another, as they always have.
"""

from __future__ import annotations

import concurrent.futures as cf
import contextlib
import ctypes
import functools
import io
import os
import signal
import sys
import threading
import time
import traceback
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NoReturn, Protocol, cast

from harness.batch import collector
from harness.batch.grid import Cell
from harness.batch.kinds import kind_for, load_source
from harness.batch.reaper import Ended, ended_with_session
from harness.session import Loader, SessionKind, SessionSpec
from harness.session.registry import split_agent_params
from harness.session.row import KEY_COLUMNS
from harness.session.spec import Knobs

DEFAULT_LLM_CONCURRENCY = 4
"""``harness run --llm-concurrency``'s default: model requests in flight at once."""

DEFAULT_SESSION_TIMEOUT_S = 600.0
"""``harness run --session-timeout``'s default: a scripted session takes milliseconds, a model's
session of 40 steps at 15 s a request fits, and a hung agent costs at most this much."""

PARENT_POLL_S = 0.5
"""How often a pool worker checks that the process that started it is still there."""
_PR_SET_PDEATHSIG = 1
"""Linux prctl(2): the signal this process gets when its parent dies."""


def die_with_parent(parent: int) -> None:
    """Pool initializer: end this worker when ``parent`` (the runner) dies, however it dies.

    A SIGKILL of ``harness run`` gives it no chance to stop its pool, and a worker in the middle
    of a task would otherwise finish it (and the next ones it had) with no one to read the rows.
    On Linux the kernel sends SIGKILL at once (``PR_SET_PDEATHSIG``); everywhere, a daemon thread
    looks every :data:`PARENT_POLL_S` seconds whether the worker has been re-parented.
    """
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):  # the poll below still holds
            ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != parent:  # it died before the signal was asked for
        os._exit(1)
    # Ctrl-C reaches every process of the terminal's group: the runner alone answers it (it
    # stops this worker), so that no worker prints a KeyboardInterrupt of its own.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    threading.Thread(target=_watch_parent, args=(parent,), name="die-with-parent", daemon=True).start()


Warmth = Mapping[Any, Any] | None
"""What a pool's workers start with instead of drawing it again (:func:`loader_warmth`), or None."""


def loader_warmth(options: SessionOptions) -> Warmth:
    """The families this process has drawn, which a worker would draw again.

    The families' loader hands its draws over (:func:`harness.scenarios.family.warm_state`), so that
    the families the parent drew to build the grid are not drawn again in every worker; a batch
    whose sessions are of a kind of its own (``options.kind``) has none.
    """
    if options.kind is not None or "harness.scenarios.family" not in sys.modules:
        return None
    from harness.scenarios.family import warm_state

    return warm_state() or None


def start_worker(parent: int, warmth: Warmth = None) -> None:
    """Pool initializer: :func:`die_with_parent`, the collector set for sessions
    (:func:`harness.batch.collector.settle`), then the parent's :func:`loader_warmth`."""
    die_with_parent(parent)
    collector.settle()
    if warmth:
        from harness.scenarios.family import warm

        warm(dict(warmth))


def _watch_parent(parent: int) -> None:
    while os.getppid() == parent:
        time.sleep(PARENT_POLL_S)
    os._exit(1)


@dataclass(frozen=True)
class SessionOptions:
    """What every session of a batch shares; picklable, so it travels to workers."""

    codec: str = "json"
    traces: bool = False
    scenario_sources: tuple[tuple[str, str], ...] = ()
    kind: SessionKind | None = None
    """The kind of session every cell runs as, and its loader (``kind.load``), instead of the one
    :func:`harness.batch.kinds.kind_for` picks by the scenario: tests and plug-ins swap what runs
    in a worker so (a module-level object, so that it pickles)."""
    agent_settings: tuple[tuple[str, tuple[tuple[str, Any], ...]], ...] = ()
    """Knobs every session of an agent gets ((agent spec, ((knob, value), ...)), ...), under
    the ones its cell sweeps: ``harness run``'s ``--llm-*`` flags reach the llm agent so. The
    manifest records them (``agent_settings``), so they never hold a secret."""
    llm_concurrency: int = DEFAULT_LLM_CONCURRENCY
    """Sessions of an agent that calls a model run this many at once, in threads, each with one
    request in flight: the requests in flight on this machine (per worker on Dask)."""
    session_timeout: float | None = DEFAULT_SESSION_TIMEOUT_S
    """Seconds a session may take before it is stopped as a ``harness_error`` (None: no limit)."""


class SessionTimeout(BaseException):
    """A session ran past ``--session-timeout``. A BaseException, so that an agent's own
    ``except Exception`` cannot swallow it on its way out of the session."""


class ProcessExit(BaseException):
    """A session's code called ``os._exit`` where sessions run in the run's own process (the
    serial executor): the call is refused and the session becomes a ``harness_error``, as it does
    in a worker process that ends. A BaseException, so that an ``except Exception`` in the agent
    does not swallow it."""


@contextlib.contextmanager
def no_process_exit() -> Iterator[None]:
    """While the block runs, ``os._exit`` raises :class:`ProcessExit` instead of ending this
    process: a serial run's sessions share its process, and one agent's ``os._exit`` would end
    the run with no table and its manifest left ``running`` (issue 49). A signal the process
    sends itself is not stopped here; a resume of such a run starts worker processes instead
    (``harness run --resume``, docs/batches.md)."""
    real = os._exit
    owner = os.getpid()

    def refused(status: int) -> NoReturn:
        if os.getpid() != owner:  # a child the session forked ends as it asked: it is not the run
            real(status)
        raise ProcessExit(
            f"the session called os._exit({status}), which would have ended the run's own process "
            "(--executor serial runs sessions in it): refused"
        )

    os._exit = refused
    try:
        yield
    finally:
        os._exit = real


def _timed_out(seconds: float) -> SessionTimeout:
    return SessionTimeout(
        f"the session took longer than {seconds:g} s (--session-timeout); its agent (or a tool) hung"
    )


@contextlib.contextmanager
def time_limit(seconds: float | None) -> Iterator[None]:
    """Raise :class:`SessionTimeout` in this thread once the block has run ``seconds``.

    In a main thread (the serial executor, a pool worker) a timer signal does it, which also
    cuts a sleep or a blocked read short. In any other thread (a Dask worker's, a model
    session's) the exception is set on the thread when the time is up, and is raised at its
    next Python instruction: a call blocked in C code ends first.
    """
    if not seconds:
        yield
        return
    if threading.current_thread() is threading.main_thread() and hasattr(signal, "setitimer"):

        def ring(signum: int, frame: Any) -> None:
            raise _timed_out(seconds)

        previous = signal.signal(signal.SIGALRM, ring)
        signal.setitimer(signal.ITIMER_REAL, seconds)
        try:
            yield
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous)
        return
    target = threading.get_ident()
    lock = threading.Lock()
    inside = [True]

    def ring_thread() -> None:
        with lock:
            if inside[0]:
                ctypes.pythonapi.PyThreadState_SetAsyncExc(
                    ctypes.c_ulong(target), ctypes.py_object(SessionTimeout)
                )

    timer = threading.Timer(seconds, ring_thread)
    timer.daemon = True
    timer.start()
    try:
        yield
    finally:
        with lock:
            inside[0] = False
        timer.cancel()


@dataclass(frozen=True)
class Outcome:
    """One finished cell: its row, and the traceback and trace if any."""

    row: dict[str, Any]
    error: str | None = None
    trace: bytes | None = None
    usage: Mapping[str, float] | None = None
    """What the session's model requests cost, as its agent's meter counted them (requests sent,
    cached, tokens_in, tokens_out, latency_s), its baseline's not included; None without a meter."""


@dataclass(frozen=True)
class BaselineOutcome:
    """One fault-free baseline, run for a cell's key (:func:`run_baseline_cell`)."""

    baseline: Any
    """A :class:`harness.session.loop.Baseline` (or what the kind's ``baseline`` returns)."""
    usage: Mapping[str, float] | None = None


class ModelMeter(Protocol):
    """What the batch reads of an agent that calls a model, through ``model_meter()`` on its class
    (:class:`harness.llm.client.Meter`; duck-typed, so that nothing here imports ``harness.llm``)."""

    stopped: str | None

    def totals(self) -> dict[str, float]: ...

    def mine(self) -> dict[str, float]: ...

    def limit(self, max_requests: int | None = None, max_tokens: int | None = None) -> None: ...

    def stop(self, reason: str) -> None: ...

    def clear(self) -> None: ...


@functools.lru_cache(maxsize=64)
def calls_a_model(spec: str) -> bool:
    """Whether the agent ``spec`` asks a model endpoint (False for a name the registry cannot
    resolve: a session function of a test may take agents no registry knows)."""
    from harness.session.registry import agent_class

    try:
        return bool(getattr(agent_class(spec), "calls_a_model", False))
    except Exception:
        return False


@functools.lru_cache(maxsize=64)
def model_meter(spec: str) -> ModelMeter | None:
    """The meter of the agent ``spec``'s model requests in this process, if it has one."""
    if not calls_a_model(spec):
        return None
    from harness.session.registry import agent_class

    hook = getattr(agent_class(spec), "model_meter", None)
    meter: ModelMeter | None = hook() if callable(hook) else None
    return meter


def _spent(meter: ModelMeter | None, before: Mapping[str, float] | None) -> dict[str, float] | None:
    if meter is None or before is None:
        return None
    return {k: v - before.get(k, 0) for k, v in meter.mine().items()}


def halts_the_batch(exc: BaseException) -> bool:
    """Whether a session ended by ``exc`` was stopped because the batch stopped asking (a budget
    spent, an interrupt): it has no row, and nothing of it is written."""
    return bool(getattr(exc, "halts_the_batch", False))


class KindWithLoader(SessionKind, Protocol):
    """A kind of session that brings its own loader (``SessionOptions.kind``)."""

    def load(self, source: str, overrides: Knobs, /) -> Any: ...


@dataclass(frozen=True)
class TaskSetup:
    """What every cell of a task looks up, looked up once per task."""

    options: SessionOptions
    loader: Loader
    sources: dict[str, str]
    settings: dict[str, dict[str, Any]]

    @classmethod
    def of(cls, options: SessionOptions) -> TaskSetup:
        kind = options.kind
        loader: Loader = load_source if kind is None else cast(KindWithLoader, kind).load
        return cls(
            options,
            loader,
            dict(options.scenario_sources),
            {agent: dict(knobs) for agent, knobs in options.agent_settings},
        )

    def cell(self, cell: Cell) -> tuple[Any, dict[str, Any]]:
        """The scenario a cell runs (its scenario overrides applied) and its agent's knobs (the
        batch's settings for the agent, under the ones the cell sweeps)."""
        knobs, overrides = split_agent_params(cell.params) if cell.params else ({}, ())
        if cell.agent in self.settings:
            knobs = {**self.settings[cell.agent], **knobs}
        return self.loader(self.sources.get(cell.scenario, cell.scenario), overrides), knobs

    def spec(self, cell: Cell) -> tuple[SessionKind, SessionSpec]:
        """The kind of session that runs ``cell``, and the session's spec."""
        scenario, knobs = self.cell(cell)
        kind = self.options.kind or kind_for(scenario)
        spec = SessionSpec(
            scenario, cell.agent, cell.strategy, cell.seed, self.options.codec, cell.host, cell.era,
            SessionSpec.knobs(knobs),
        )  # fmt: skip
        return kind, spec


def cell_setup(cell: Cell, options: SessionOptions) -> tuple[Any, dict[str, Any]]:
    """The scenario a cell runs (its scenario overrides applied) and its agent's knobs."""
    return TaskSetup.of(options).cell(cell)


def run_cell(cell: Cell, options: SessionOptions, baseline: Any = None) -> Outcome:
    """Run one cell; never raises for a session's failure (a :func:`halts_the_batch` stop aside).

    A cell's ``agent.<knob>`` parameters go to the session's spec as ``agent_params``; the rest,
    to the loader as scenario overrides. The row records them all as they were swept.
    ``baseline``, when given, is the session's precomputed fault-free baseline.
    """
    return _run_cell(TaskSetup.of(options), cell, baseline)


def _run_cell(setup: TaskSetup, cell: Cell, baseline: Any = None) -> Outcome:
    options = setup.options
    meter = model_meter(cell.agent)
    before = meter.mine() if meter is not None else None
    trace = io.BytesIO() if options.traces else None
    ended: Ended | None = None
    try:
        kind, spec = setup.spec(cell)
        with ended_with_session() as ended, time_limit(options.session_timeout):
            result = kind.run(spec, trace, baseline)
        row = dict(result.to_row())
        error = None
        if row.get("status") == "harness_error":
            # What broke (the agent's own exception, say) goes to errors.log, as a harness bug's
            # traceback does; a break with no exception behind it (a model endpoint gave out)
            # has its one line there.
            error = getattr(result, "traceback", "") or f"{row.get('error') or 'no reason recorded'}\n"
    except (Exception, SystemExit, ProcessExit) as exc:  # sys.exit(), os._exit(): one session ends
        row = error_row(cell, reason=f"{type(exc).__name__}: {exc}")
        error = traceback.format_exc()
    except SessionTimeout as exc:
        reason = str(exc) or str(_timed_out(options.session_timeout or 0))  # a thread's has no text
        row = error_row(cell, reason=reason)
        error = f"{reason}\n{traceback.format_exc()}"
    if ended is not None:  # a session that broke ends what it started too, and says so
        row["processes_ended"] = ended.processes
    row.update({"scenario": cell.scenario, "host": cell.host, "era": cell.era, **dict(cell.params)})
    return Outcome(row, error, trace.getvalue() if trace is not None else None, _spent(meter, before))


def run_cells(
    cells: Sequence[Cell], options: SessionOptions, baselines: Sequence[Any] | None = None
) -> list[Outcome]:
    """Run cells in this process, in their order; never raises for a session's failure.

    Cells of an agent that calls a model run side by side, ``options.llm_concurrency`` at a
    time, in threads (a Dask worker runs a task of them so); the rest one after another.
    ``baselines``, when given, holds each cell's precomputed baseline (or None).
    """
    setup = TaskSetup.of(options)
    given = list(baselines) if baselines is not None else [None] * len(cells)
    threads = min(options.llm_concurrency, len(cells))
    if threads > 1 and all(calls_a_model(c.agent) for c in cells):
        with cf.ThreadPoolExecutor(threads, thread_name_prefix="session") as pool:
            outcomes = list(pool.map(_run_cell, [setup] * len(cells), cells, given))
    else:
        outcomes = [_run_cell(setup, cell, base) for cell, base in zip(cells, given, strict=True)]
    collector.task_ended()
    return outcomes


def run_baseline_cell(cell: Cell, options: SessionOptions) -> BaselineOutcome:
    """The fault-free baseline of ``cell``'s key (any strategy: it is run under is_error), run once
    for every session of the key; a baseline that breaks is returned broken, never raised."""
    meter = model_meter(cell.agent)
    before = meter.mine() if meter is not None else None
    try:
        kind, spec = TaskSetup.of(options).spec(cell)
        with ended_with_session():  # what the baseline's agent leaves running ends with it too
            baseline = kind.baseline(spec)
    except Exception as exc:  # a UserError (a cassette that misses, say) breaks the baseline
        from harness.session.loop import Baseline

        baseline = Baseline(False, error=f"{type(exc).__name__}: {exc}", traceback=traceback.format_exc())
    return BaselineOutcome(baseline, _spent(meter, before))


def run_baseline_cells(cells: Sequence[Cell], options: SessionOptions) -> list[BaselineOutcome]:
    """:func:`run_baseline_cell` for each cell, ``options.llm_concurrency`` at a time (a Dask task)."""
    threads = min(options.llm_concurrency, len(cells))
    if threads > 1:
        with cf.ThreadPoolExecutor(threads, thread_name_prefix="baseline") as pool:
            return list(pool.map(run_baseline_cell, cells, [options] * len(cells)))
    return [run_baseline_cell(cell, options) for cell in cells]


def error_row(cell: Cell, status: str = "harness_error", *, reason: str = "") -> dict[str, Any]:
    """The row of a session that failed inside the harness: its key, that it failed, and why
    (one line in the ``error`` column; the traceback goes to ``errors.log``)."""
    key = {c: getattr(cell, c) for c in KEY_COLUMNS}
    return {
        **key,
        "status": status,
        "success": False,
        "error": reason.strip().splitlines()[0][:500] if reason else "",
    }
