"""The page's questions and their answers, one function for the server and the file alike.

The page asks ``GET /api/<route>?<query>``; :func:`answer` maps a route and its query to a
JSON document (or a PNG). The server (:mod:`harness.view.server`) calls it per request; the
file export (:mod:`harness.view.export`) calls it ahead of time and puts the answers inline.

* ``info``: what was opened: a run's manifest, state and filter choices (a bench table, a probe
  report);
* ``compare?by=agent&baseline=is_error``: ``harness compare --format json``'s document, and the
  table as it prints;
* ``effects``: ``harness effects --format json``'s document, and its tables as they print;
* ``sessions?filters=[[col,op,value],...]&offset=0&limit=50``: one page of sessions;
* ``session/ID?replay=1``: one session, every column, its trace cut into steps (replayed when
  there is no trace file);
* ``pair?a=ID&b=ID``: two sessions of one scenario and seed, the first step where what the agent
  saw differs;
* ``differ?group={...}&strategy=S&baseline=B&scenario=X``: a pair of the two strategies whose
  outcome differs;
* ``figures``: the figures' names; ``figure/NAME``: a PNG.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from harness.batch.grid import split_names
from harness.errors import UserError, loads_json
from harness.view.run import PAGE_LIMIT, NotFound, RunView, ViewError
from harness.view.sources import Source


def _int(query: Mapping[str, str], name: str, default: int | None = None) -> int:
    value = query.get(name)
    if value is None or value == "":
        if default is None:
            raise ViewError(f"give {name}")
        return default
    try:
        return int(value)
    except ValueError:
        raise ViewError(f"{name}: {value!r} is not a number") from None


def _json(query: Mapping[str, str], name: str, default: Any) -> Any:
    text = query.get(name)
    if not text:
        return default
    try:
        return loads_json(text)
    except ValueError as exc:
        raise ViewError(f"{name}: not JSON ({str(exc)[:80]})") from None


def answer(source: Source, route: str, query: Mapping[str, str]) -> dict[str, Any] | bytes:
    """The document for ``route`` (see the module docstring); ViewError/UserError for a bad question."""
    head, _, rest = route.strip("/").partition("/")
    if head == "info":
        return source.summary()
    if head == "figures":  # the names; a run's are harness plot's, which loads matplotlib
        names = source.figure_names() if isinstance(source, RunView) else source.summary()["figures"]
        return {"figures": names}
    if head == "figure":
        data = source.figure(rest)
        if data is None:
            raise NotFound(f"no figure {rest!r} for this run")
        return data
    if not isinstance(source, RunView):
        raise NotFound(f"no {head!r} for a {source.kind} page")
    run = source
    if head == "compare":
        by = split_names([query.get("by") or "agent"])
        return run.comparison(by, baseline=query.get("baseline") or "is_error")
    if head == "effects":
        return run.effects()
    if head == "sessions":
        filters = run.parse_filters(_json(query, "filters", []))
        return run.page(filters, _int(query, "offset", 0), min(_int(query, "limit", 50), PAGE_LIMIT))
    if head == "session":
        try:
            sid = int(rest)
        except ValueError:
            raise NotFound(f"no session {rest!r}") from None
        return run.session(sid, replay=query.get("replay") in ("1", "true"))
    if head == "pair":
        return run.pair(_int(query, "a"), _int(query, "b"))
    if head == "differ":
        group = _json(query, "group", {})
        if not isinstance(group, dict):
            raise ViewError("group: a JSON object of column values")
        strategy = query.get("strategy")
        if not strategy:
            raise ViewError("give strategy")
        return run.differing_pair(
            group, strategy, query.get("baseline") or "is_error", query.get("scenario") or None
        )
    raise NotFound(f"no route {route!r}")


def error_doc(exc: UserError) -> dict[str, Any]:
    return {"error": str(exc)}
