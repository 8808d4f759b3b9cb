"""``harness view``: a browsable page of a run, a bench output or a probe report.

:mod:`.sources` opens what it is given; :mod:`.run` reads a run (a light index in memory, rows
paged from parquet, traces read when a session is opened); :mod:`.timeline` cuts a trace into
steps and finds where two sessions first part; :mod:`.api` answers the page's questions, for
the local server (:mod:`.server`, starlette on 127.0.0.1) and for the self-contained file
(:mod:`.export`) alike. The page itself is plain HTML, CSS and JavaScript in ``static/``.

Names load on first use: ``harness --help`` must not import pandas or starlette.
"""

import importlib
from typing import Any

_HOMES = {
    "RunView": "run",
    "first_divergence": "timeline",
    "make_app": "server",
    "open_source": "sources",
    "write_html": "export",
}

__all__ = ["RunView", "first_divergence", "make_app", "open_source", "write_html"]


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'harness.view' has no attribute {name!r}")
    return getattr(importlib.import_module(f"harness.view.{home}"), name)
