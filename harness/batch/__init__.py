"""A batch: a grid of sessions, run by an executor, written to a results directory as it finishes.

:mod:`.grid` names the cells; :mod:`.worker` runs cells inside a worker (and imports only
the session layer, so a worker starts quickly); :mod:`.runner` holds the executors
(serial, process, dask) and :func:`run_batch`; :mod:`.model` runs the cells of agents that
call a model, by requests in flight, each fault-free baseline once; :mod:`.results` the
results directory and its manifest. Names load on first use, so that importing the worker does not pull in
pandas and pyarrow, which only the parent process needs.
"""

import importlib
from typing import Any

_HOMES = {
    "Cell": "grid",
    "Grid": "grid",
    "KEY_COLUMNS": "grid",
    "SessionOptions": "worker",
    "run_cells": "worker",
    "EXECUTORS": "runner",
    "BatchSummary": "runner",
    "default_out": "runner",
    "run_batch": "runner",
    "ResultsDir": "results",
    "load_sessions": "results",
}

__all__ = [
    "EXECUTORS",
    "KEY_COLUMNS",
    "BatchSummary",
    "Cell",
    "Grid",
    "ResultsDir",
    "SessionOptions",
    "default_out",
    "load_sessions",
    "run_batch",
    "run_cells",
]


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'harness.batch' has no attribute {name!r}")
    return getattr(importlib.import_module(f"harness.batch.{home}"), name)
