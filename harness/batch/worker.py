"""What runs inside a batch worker: one task of cells, one session after another.

Kept apart from :mod:`harness.batch.runner` so that a worker process imports only the
session machinery -- not pandas or pyarrow, which only the parent needs -- and
starts quickly.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import importlib
import io
import os
import signal
import sys
import threading
import time
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from harness.batch.grid import Cell
from harness.sim.registry import split_agent_params
from harness.sim.row import KEY_COLUMNS

DEFAULT_SESSION_FN = "harness.sim.session:run_session"
DEFAULT_LOADER = "harness.batch.worker:load_cell_scenario"

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
    threading.Thread(target=_watch_parent, args=(parent,), name="die-with-parent", daemon=True).start()


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
    session_fn: str = DEFAULT_SESSION_FN
    loader: str = DEFAULT_LOADER
    """``module:function`` paths, so tests and plug-ins can swap what runs in a worker."""
    agent_settings: tuple[tuple[str, tuple[tuple[str, Any], ...]], ...] = ()
    """Knobs every session of an agent gets ((agent spec, ((knob, value), ...)), ...), under
    the ones its cell sweeps: ``harness run``'s ``--llm-*`` flags reach the llm agent so. The
    manifest records them (``agent_settings``), so they never hold a secret."""


@dataclass(frozen=True)
class Outcome:
    """One finished cell: its row, and the traceback and trace if any."""

    row: dict[str, Any]
    error: str | None = None
    trace: bytes | None = None


@functools.lru_cache(maxsize=8)
def _resolve(path: str) -> Callable[..., Any]:
    module, _, attr = path.partition(":")
    fn: Callable[..., Any] = getattr(importlib.import_module(module), attr)
    return fn


@functools.lru_cache(maxsize=256)
def load_cell_scenario(source: str, params: tuple[tuple[str, Any], ...]) -> Any:
    """The scenario a cell runs, loaded once per worker and parameter set."""
    from harness.sim.scenario import load_scenario

    scenario = load_scenario(source)
    return scenario.with_overrides(dict(params)) if params else scenario


def run_cells(cells: Sequence[Cell], options: SessionOptions) -> list[Outcome]:
    """Run cells one after another in this process; never raises for a session's failure.

    A cell's ``agent.<knob>`` parameters go to the session as ``agent_params`` (only when there
    are some, so a session function that takes none still works); the rest, to the loader as
    scenario overrides. The row records them all as they were swept.
    """
    fn = _resolve(options.session_fn)
    loader = _resolve(options.loader)
    sources = dict(options.scenario_sources)
    settings = {agent: dict(knobs) for agent, knobs in options.agent_settings}
    out: list[Outcome] = []
    for cell in cells:
        trace = io.BytesIO() if options.traces else None
        try:
            knobs, overrides = split_agent_params(cell.params) if cell.params else ({}, ())
            if cell.agent in settings:
                knobs = {**settings[cell.agent], **knobs}
            scenario = loader(sources.get(cell.scenario, cell.scenario), overrides)
            extra: dict[str, Any] = {"agent_params": knobs} if knobs else {}
            result = fn(
                scenario,
                cell.agent,
                cell.strategy,
                cell.seed,
                codec=options.codec,
                trace=trace,
                host=cell.host,
                era=cell.era,
                **extra,
            )
            row = dict(result.to_row())
            error = None
            if row.get("status") == "harness_error":
                # What broke (the agent's own exception, say) goes to errors.log, as a harness bug's
                # traceback does; a break with no exception behind it (a model endpoint gave out)
                # has its one line there.
                error = getattr(result, "traceback", "") or f"{row.get('error') or 'no reason recorded'}\n"
        except Exception as exc:
            row = error_row(cell, reason=f"{type(exc).__name__}: {exc}")
            error = traceback.format_exc()
        row.update({"scenario": cell.scenario, "host": cell.host, "era": cell.era, **dict(cell.params)})
        out.append(Outcome(row, error, trace.getvalue() if trace is not None else None))
    return out


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
