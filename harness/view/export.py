"""``harness view RUN --html FILE``: the page as one self-contained file, its data inline.

The file is the served page with its CSS and JavaScript inlined and the API's answers
(:func:`harness.view.api.answer`) computed ahead of time into a JSON block: the comparison,
the effects and the figures over *every* session of the run, and a stated sample of the
sessions themselves, each with its trace cut into steps.

The sample (:func:`sample`) is stratified so that a pair stays a pair: it takes whole
(scenario, seed) units, every session of each (every agent, strategy, host and era), one unit
per scenario in turn, units whose sessions disagree on success first; then, for each row of
the comparison and of the effects, a pair of sessions whose outcomes differ, so that "show me
a seed where these two differ" has an answer in the file. What was taken is said at the top
of the page.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import uuid
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

from harness.errors import OutputError, UserError
from harness.report.display import plural
from harness.view.run import DIMENSIONS, LIST_COLUMNS, RunView, jsonable
from harness.view.server import STATIC
from harness.view.sources import Source

EFFECT_PAIRS = 40
"""Per-scenario effect rows (help or hurt) that get a differing pair in the file, at most."""


def _data_uri(png: bytes | None) -> str | None:
    return None if png is None else "data:image/png;base64," + base64.b64encode(png).decode("ascii")


def sample(
    run: RunView, budget: int, pairs: Iterable[tuple[int, int]] = ()
) -> tuple[list[int], dict[str, Any]]:
    """At most ``budget`` session ids: the ``pairs`` first (while two more fit), then whole
    (scenario, seed) units, one per scenario in turn, units that disagree on success first."""
    must_ids: list[int] = []
    for a, b in pairs:
        new = [i for i in (a, b) if i not in must_ids]
        if len(must_ids) + len(new) <= budget:
            must_ids.extend(new)
    must_ids.sort()
    units_cols = [c for c in ("scenario", "seed", *run.params) if c in run.index.column_names]
    cols = [*units_cols, *(c for c in ("success",) if c in run.index.column_names)]
    frame = run.index.select(cols).to_pandas()
    frame["id"] = np.arange(len(frame))
    if frame.empty:
        return [], {"sessions": 0, "of": 0, "units": 0, "units_of": 0, "text": "the run has no sessions"}
    grouped = frame.groupby(units_cols, sort=True, dropna=False)
    units: dict[str, list[tuple[int, Any, list[int]]]] = {}
    for key, part in grouped:
        key = key if isinstance(key, tuple) else (key,)
        disagree = int(part["success"].nunique() > 1) if "success" in part else 0
        units.setdefault(str(key[0]), []).append((-disagree, key[1:], part["id"].tolist()))
    for queue in units.values():
        queue.sort(key=lambda u: (u[0], [str(v) for v in u[1]]))
    taken = set(must_ids)
    room = budget - len(taken)
    chosen: list[int] = []
    taken_units = 0
    scenarios_used: set[str] = set()
    size = max(len(ids) for q in units.values() for _, _, ids in q)
    depth = 0
    while room > 0 and any(depth < len(q) for q in units.values()):
        for scenario in sorted(units):
            queue = units[scenario]
            if depth >= len(queue):
                continue
            ids = queue[depth][2]
            new = [i for i in ids if i not in taken]  # a pair already taken may lie in this unit
            if len(new) > room:
                if taken_units == 0:  # one unit is bigger than the whole budget: part of it
                    chosen.extend(ids[: room + len(ids) - len(new)])
                    taken_units = 1
                    scenarios_used.add(scenario)
                room = 0
                break
            chosen.extend(ids)
            taken.update(new)
            room -= len(new)
            taken_units += 1
            scenarios_used.add(scenario)
        depth += 1
    extra = [i for i in must_ids if i not in set(chosen)]
    ids = sorted(set(chosen) | set(must_ids))
    total_units = sum(len(q) for q in units.values())
    unit_text = "(scenario, seed" + "".join(f", {p}" for p in run.params) + ")"
    of_scenarios = plural(len(units), "scenario")
    text = (
        f"This file holds {len(ids):,} of the run's {run.sessions:,} sessions: every session of "
        f"{taken_units:,} of {total_units:,} {unit_text} units (up to {size} each: every agent, "
        f"strategy, host and era), taken in turn from {len(scenarios_used)} of {of_scenarios}, "
        f"units whose sessions disagree on success first"
        + (
            f"; and {len(extra)} that make, for rows of the comparison and the effects, a pair "
            "whose outcomes differ"
            if extra
            else ""
        )
        + f". The comparison, the effects and the figures are computed over all {run.sessions:,}."
    )
    statement = {
        "sessions": len(ids),
        "of": run.sessions,
        "units": taken_units,
        "units_of": total_units,
        "scenarios": len(scenarios_used),
        "scenarios_of": len(units),
        "extra": len(extra),
        "text": text,
    }
    return ids, statement


def _differs(run: RunView, compare: dict[str, Any] | None, effects: dict[str, Any]) -> dict[str, Any]:
    """A differing pair for each comparison row, effects row, and the first help/hurt scenarios."""
    out: dict[str, Any] = {}
    if compare is not None and "rows" in compare:
        groups = [g for g in compare["shown"]["groups"] if g != "strategy"]
        for i, rec in enumerate(compare["rows"]):
            if rec.get("strategy") == compare["baseline"] or not rec.get("n"):
                continue
            group = {g: rec[g] for g in groups}
            out[f"compare:{i}"] = run.differing_pair(group, str(rec["strategy"]), compare["baseline"])
    for i, rec in enumerate(effects.get("shares") or []):
        out[f"shares:{i}"] = run.differing_pair(
            {"agent": rec["agent"]}, str(rec["against"]), effects["baseline"]
        )
    shown = 0
    for i, rec in enumerate(effects.get("effects") or []):
        if not rec.get("effect") or shown >= EFFECT_PAIRS:
            continue
        group = {"agent": rec["agent"], **{p: rec[p] for p in run.params if p in rec}}
        out[f"effect:{i}"] = run.differing_pair(
            group, str(rec["against"]), effects["baseline"], str(rec["scenario"])
        )
        shown += 1
    return out


def run_document(run: RunView, *, max_sessions: int, by: str) -> dict[str, Any]:
    """Everything the page of ``run`` asks, answered ahead of time."""
    from harness.batch.grid import split_names

    info = run.summary()
    compare: dict[str, Any] | None
    try:
        compare = run.comparison(split_names([by]))
    except UserError as exc:
        compare = None
        compare_error = str(exc)
    effects = run.effects() if run.sessions else {"unavailable": "no sessions"}
    figures = {name: _data_uri(run.figure(name)) for name in run.figure_names()} if run.sessions else {}
    differ = _differs(run, compare, effects) if run.sessions else {}
    pairs = [(d["a"], d["b"]) for d in differ.values() if d.get("found")]
    ids, statement = sample(run, max_sessions, pairs)
    shown = [c for c in (*run.keys, *LIST_COLUMNS) if c in run.index.column_names]
    table = run.index.take(pa.array(ids, pa.int64())).select(shown).to_pylist()
    rows = [{"id": i, **{k: jsonable(v) for k, v in r.items()}} for i, r in zip(ids, table, strict=True)]
    sessions = {str(i): run.session(i, replay=True) for i in ids}
    in_file = set(ids)
    in_pairs: dict[str, Any] = {}
    for i in ids:
        for sib in sessions[str(i)]["siblings"]:
            j = sib["id"]
            if j in in_file and i < j and len(sib["differs_in"]) == 1:
                in_pairs[f"{i},{j}"] = run.pair(i, j)
    for d in differ.values():
        if d.get("found") and d["a"] in in_file and d["b"] in in_file:
            a, b = sorted((d["a"], d["b"]))
            in_pairs.setdefault(f"{a},{b}", run.pair(a, b))
    return {
        "info": {**info, "mode": "file", "by": by, "sample": statement, "dimensions": list(DIMENSIONS)},
        "compare": compare if compare is not None else {"error": compare_error},
        "effects": effects,
        "figures": figures,
        "rows": rows,
        "sessions": sessions,
        "pairs": in_pairs,
        "differ": {k: d for k, d in differ.items() if not d.get("found") or {d["a"], d["b"]} <= in_file},
    }


def source_document(source: Source, *, max_sessions: int, by: str) -> dict[str, Any]:
    if isinstance(source, RunView):
        return run_document(source, max_sessions=max_sessions, by=by)
    info = {**source.summary(), "mode": "file"}
    figures = {name: _data_uri(source.figure(name)) for name in info.get("figures", [])}
    return {"info": info, "figures": figures}


def render(document: dict[str, Any]) -> str:
    """The page with its CSS, JavaScript and ``document`` inline: one file, nothing to fetch."""
    page = (STATIC / "index.html").read_text(encoding="utf-8")
    css = (STATIC / "view.css").read_text(encoding="utf-8")
    js = (STATIC / "view.js").read_text(encoding="utf-8")
    data = json.dumps(document, default=str, allow_nan=False, separators=(",", ":"))
    data = data.replace("<", "\\u003c")  # nothing in the data can close the script element
    script = js.replace("</script", "<\\/script")
    replacements = {
        '<link rel="stylesheet" href="static/view.css">': f"<style>\n{css}\n</style>",
        '<script src="static/view.js"></script>': (
            f'<script type="application/json" id="harness-data">{data}</script>\n'
            f"<script>\n{script}\n</script>"
        ),
        "connect-src 'self'": "connect-src 'none'",
    }
    for old, new in replacements.items():
        if old not in page:
            raise RuntimeError(f"index.html lacks {old!r}: the export cannot inline it")
        page = page.replace(old, new)
    return page


def write_html(source: Source, out: Path, *, max_sessions: int, by: str = "agent") -> dict[str, Any]:
    """Write the page for ``source`` to ``out``; returns what the file holds (its sample statement)."""
    document = source_document(source, max_sessions=max_sessions, by=by)
    text = render(document)
    if out.is_dir():
        raise UserError(f"--html {out}: a directory; give a file name")
    tmp = out.with_name(f".{out.name}.tmp-{os.getpid()}-{uuid.uuid4().hex[:8]}")
    try:
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, out)
    except OSError as exc:
        with contextlib.suppress(OSError):  # on a read-only file system the cleanup fails too
            tmp.unlink(missing_ok=True)
        raise OutputError(f"--html {out}: cannot write ({exc.strerror or exc})") from None
    return {"bytes": len(text.encode("utf-8")), "sample": document["info"].get("sample")}
