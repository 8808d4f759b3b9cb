"""One results directory as the viewer reads it: a light index in memory, rows paged from parquet.

Opening a run reads the manifest and, from the parquet files, only the columns a list or a
filter needs (:data:`INDEX_COLUMNS`): a few megabytes for 100,000 sessions. A page of sessions
is cut from that index and its full rows read from the row groups that hold them; a trace
is read when a session is opened. The comparison and the per-scenario effects are built by
:mod:`harness.report.documents` over the whole table, with the arguments ``harness compare`` and
``harness effects`` use (the commands print what the same functions build), computed on first
request and kept.
"""

from __future__ import annotations

import hashlib
import io
import json
import math
import shlex
import threading
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from harness.batch.grid import Cell
from harness.batch.results import (
    CHUNKS,
    LATER_KEYS,
    MANIFEST,
    SESSIONS,
    TRACES,
    ResultsDir,
    RunState,
    load_run,
    refuse_duplicates,
)
from harness.errors import UserError, unknown_name
from harness.session.row import COLUMNS as ROW_COLUMN_TABLE
from harness.session.row import KEY_COLUMNS
from harness.view import markdown
from harness.view.timeline import Timeline, first_divergence, parse_lines, steps_json, timeline

BASELINE = "is_error"
"""``harness compare``'s and ``harness effects``' default baseline."""
K = 3
UNIT = "scenario"
ADJUST = "holm"
"""``harness compare``'s defaults: k of pass^k, the unit of inference, the p adjustment."""

INDEX_COLUMNS: tuple[str, ...] = (
    "status",
    "end",
    "success",
    "subgoals_done",
    "subgoals_total",
    "steps",
    "tool_calls",
    "recoveries",
    "recovery_opportunities",
    "repeated_failing_calls",
    "errors_is_error",
    "errors_rpc_32603",
    "trace_hash",
)
"""Besides the key columns: what the session list shows and filters on."""
LIST_COLUMNS: tuple[str, ...] = (
    "status",
    "end",
    "success",
    "subgoals_done",
    "steps",
    "tool_calls",
    "recoveries",
    "repeated_failing_calls",
)
"""The outcome columns of the session list (each session's page shows every column)."""
OUTCOME_FACETS: tuple[str, ...] = ("status", "end", "success")
"""Outcome columns offered as choices; the others filter by comparison (``steps >= 10``)."""
DIMENSIONS: tuple[str, ...] = ("agent", "strategy", "host", "era")
"""What two paired sessions of one scenario and seed may differ in."""
OPS = ("=", "!=", ">=", "<=", ">", "<")
PAGE_LIMIT = 500
CACHED_GROUPS = 8
"""Row groups kept in memory (a page touches one or two)."""
CACHED_TIMELINES = 512

MEANINGS: dict[str, str] = {c.name: c.meaning for c in ROW_COLUMN_TABLE}
"""Each row column's one-line meaning (:mod:`harness.session.row`), shown as the page's tooltips."""


def jsonable(value: Any) -> Any:
    """A parquet or pandas value as JSON: NaN is null, numpy scalars and arrays are plain."""
    if isinstance(value, float | np.floating):
        return None if math.isnan(float(value)) else float(value)
    if isinstance(value, np.bool_):
        return bool(value)
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.ndarray):
        return [jsonable(v) for v in value.tolist()]
    if isinstance(value, list | tuple):
        return [jsonable(v) for v in value]
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if value is pd.NA or value is pd.NaT:
        return None
    return value


def records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    """A frame's rows as ``harness compare --format json`` writes them (NaN as null)."""
    return [{str(k): jsonable(v) for k, v in r.items()} for r in frame.to_dict(orient="records")]


class ViewError(UserError):
    """A request the page made that cannot be answered (a bad filter, sessions that are no pair)."""


class NotFound(ViewError):
    """No such route, session or figure."""


@dataclass(frozen=True)
class Filter:
    column: str
    op: str
    value: Any


@dataclass(frozen=True)
class _Group:
    file: Path
    index: int
    start: int
    rows: int


class RunView:
    """A results directory (or a ``sessions.parquet``) opened for viewing."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.results: ResultsDir | None = None
        if path.is_file() and path.suffix == ".parquet":
            self.files = [path]
            self.root = path.parent
            if (path.parent / MANIFEST).exists():
                self.results = ResultsDir.open(path.parent)
                if path.name == SESSIONS:
                    self.results.check_integrity()
        else:
            self.results = ResultsDir.open(path)  # the errors compare gives for a bad directory
            self.root = path
            chunks = sorted((path / CHUNKS).glob("part-*.parquet")) if (path / CHUNKS).is_dir() else []
            self.files = [path / SESSIONS] if (path / SESSIONS).exists() else chunks
            self.results.check_integrity()
        self.manifest: dict[str, Any] = dict(self.results.manifest) if self.results is not None else {}
        self.sweeps: dict[str, tuple[Any, ...]] = {}
        try:
            if self.results is not None:
                self.sweeps = dict(self.results.grid.sweeps)
        except (UserError, KeyError):
            pass
        self.params: tuple[str, ...] = tuple(self.sweeps)
        self._lock = threading.Lock()
        self._groups_cache: OrderedDict[tuple[Path, int], pa.Table] = OrderedDict()
        self._frame: tuple[pd.DataFrame, RunState] | None = None
        self._compare: dict[tuple[str, ...], dict[str, Any]] = {}
        self._effects: dict[str, Any] | None = None
        self._figures: dict[str, bytes | None] = {}
        self._timelines: OrderedDict[int, tuple[Timeline | None, str]] = OrderedDict()
        self.index, self.groups = self._read_index()
        if not self.params:  # a bare parquet file: swept parameters are the dotted columns
            self.params = tuple(c for c in self.index.column_names if "." in c)
        self.keys: tuple[str, ...] = (*KEY_COLUMNS, *self.params)
        refuse_duplicates(self.index.select(list(self.keys)).to_pandas(), self.keys, self.path)
        self.state = (
            self.results.state(self.index.num_rows)
            if self.results is not None
            else RunState(None, None, self.index.num_rows, None)
        )

    # -- the index -----------------------------------------------------------------------

    def _read_index(self) -> tuple[pa.Table, list[_Group]]:
        tables: list[pa.Table] = []
        groups: list[_Group] = []
        start = 0
        for f in self.files:
            try:
                pf = pq.ParquetFile(f)
                names = set(pf.schema_arrow.names)
                params = [c for c in pf.schema_arrow.names if "." in c]
                wanted = [c for c in (*KEY_COLUMNS, *params, *INDEX_COLUMNS) if c in names]
                table = pf.read(columns=wanted)
            except (OSError, pa.ArrowInvalid) as exc:
                raise UserError(f"{f}: corrupt results file ({exc})") from None
            for g in range(pf.metadata.num_row_groups):
                n = pf.metadata.row_group(g).num_rows
                groups.append(_Group(f, g, start, n))
                start += n
            tables.append(table)
        if not tables:
            empty = {c: pa.array([], pa.string()) for c in KEY_COLUMNS if c != "seed"}
            return pa.table({**empty, "seed": pa.array([], pa.int64())}), groups
        index = pa.concat_tables(tables, promote_options="permissive") if len(tables) > 1 else tables[0]
        written = self.manifest.get("row_version")
        for key, (since, value) in LATER_KEYS.items():
            if key not in index.column_names and (not isinstance(written, int) or written < since):
                index = index.append_column(key, pa.array([value] * index.num_rows))
        return index, groups

    @property
    def sessions(self) -> int:
        return int(self.index.num_rows)

    def column_type(self, column: str) -> pa.DataType:
        return self.index.schema.field(column).type

    def facets(self) -> dict[str, Any]:
        """Each filterable column's values (seeds as a range), for the page's choices."""
        out: dict[str, Any] = {}
        for col in [*self.keys, *OUTCOME_FACETS]:
            if col not in self.index.column_names:
                continue
            if col == "seed":
                seeds = self.index.column("seed")
                out["seed"] = {
                    "min": jsonable(pc.min(seeds).as_py()),
                    "max": jsonable(pc.max(seeds).as_py()),
                    "count": len(pc.unique(seeds)),
                }
                continue
            values = pc.unique(self.index.column(col)).to_pylist()
            out[col] = sorted((jsonable(v) for v in values), key=lambda v: (v is None, str(v)))
        return out

    def parse_filters(self, given: Sequence[Sequence[Any]]) -> list[Filter]:
        """``[[column, op, value], ...]`` checked against the index and typed as its column."""
        out = []
        for item in given:
            if not isinstance(item, list | tuple) or len(item) != 3:
                raise ViewError(f"a filter is [column, op, value], not {item!r}")
            col, op, value = item
            if col not in self.index.column_names:
                raise unknown_name("filter column", str(col), self.index.column_names)
            if op not in OPS:
                raise ViewError(f"filter {col}: unknown operator {op!r} (one of {' '.join(OPS)})")
            out.append(Filter(str(col), str(op), self._typed(str(col), value)))
        return out

    def _typed(self, col: str, value: Any) -> Any:
        kind = self.column_type(col)
        try:
            if pa.types.is_boolean(kind):
                if isinstance(value, bool):
                    return value
                text = str(value).strip().lower()
                if text not in ("true", "false", "1", "0"):
                    raise ValueError(value)
                return text in ("true", "1")
            if pa.types.is_integer(kind) or pa.types.is_floating(kind):
                number = int(value) if pa.types.is_integer(kind) else float(value)
                pa.scalar(number, kind)  # a number the column cannot hold is refused here, not in mask
                return number
        except (TypeError, ValueError, OverflowError, pa.ArrowException):
            raise ViewError(f"filter {col}: {str(value)[:60]!r} is not a {kind}") from None
        return str(value)

    def mask(self, filters: Sequence[Filter]) -> np.ndarray[Any, Any]:
        """Positions of the sessions every filter keeps."""
        keep = np.ones(self.sessions, dtype=bool)
        ops = {
            "=": pc.equal,
            "!=": pc.not_equal,
            ">=": pc.greater_equal,
            "<=": pc.less_equal,
            ">": pc.greater,
            "<": pc.less,
        }
        for f in filters:
            hit = ops[f.op](self.index.column(f.column), pa.scalar(f.value, self.column_type(f.column)))
            keep &= np.asarray(pc.fill_null(hit, False).to_numpy(zero_copy_only=False), dtype=bool)
        return np.flatnonzero(keep)

    def page(self, filters: Sequence[Filter], offset: int = 0, limit: int = 50) -> dict[str, Any]:
        """One page of the sessions the filters keep, in the table's (grid) order."""
        limit = max(1, min(int(limit), PAGE_LIMIT))
        offset = max(0, int(offset))
        hits = self.mask(filters)
        chosen = hits[offset : offset + limit]
        shown = [c for c in (*self.keys, *LIST_COLUMNS) if c in self.index.column_names]
        sub = self.index.take(pa.array(chosen, pa.int64())).select(shown).to_pylist()
        rows = [
            {"id": int(i), **{k: jsonable(v) for k, v in r.items()}} for i, r in zip(chosen, sub, strict=True)
        ]
        return {"total": len(hits), "offset": offset, "limit": limit, "columns": shown, "rows": rows}

    # -- one session -----------------------------------------------------------------------

    def _check_id(self, sid: int) -> int:
        if not 0 <= sid < self.sessions:
            raise NotFound(f"no session {sid} in this run ({self.sessions} sessions)")
        return sid

    def _group_table(self, g: _Group) -> pa.Table:
        key = (g.file, g.index)
        with self._lock:
            table = self._groups_cache.get(key)
            if table is not None:
                self._groups_cache.move_to_end(key)
                return table
        table = pq.ParquetFile(g.file).read_row_group(g.index)
        with self._lock:
            self._groups_cache[key] = table
            while len(self._groups_cache) > CACHED_GROUPS:
                self._groups_cache.popitem(last=False)
        return table

    def row(self, sid: int) -> dict[str, Any]:
        """Every column of session ``sid`` (its position in the table), read from its row group."""
        self._check_id(sid)
        starts = [g.start for g in self.groups]
        g = self.groups[int(np.searchsorted(starts, sid, side="right")) - 1]
        row = {k: jsonable(v) for k, v in self._group_table(g).slice(sid - g.start, 1).to_pylist()[0].items()}
        for key in self.keys:  # a key the file lacks (an old run's era) comes from the index
            row.setdefault(key, jsonable(self.index.column(key)[sid].as_py()))
        return row

    def key_of(self, sid: int) -> dict[str, Any]:
        return {k: jsonable(self.index.column(k)[sid].as_py()) for k in self.keys}

    def swept(self, name: str, value: Any) -> Any:
        """A swept value as the grid has it (parquet widens ``0`` to ``0.0`` beside ``0.4``), so that
        the cell, its trace's file name and its ``--set`` are the run's own."""
        return next((v for v in self.sweeps.get(name, ()) if v == value), value)

    def cell(self, row: Mapping[str, Any]) -> Cell:
        params = tuple((p, self.swept(p, row[p])) for p in self.params)
        return Cell(
            str(row["scenario"]),
            str(row["agent"]),
            str(row["strategy"]),
            str(row["host"]),
            int(row["seed"]),
            params,
            str(row.get("era") or "handshake"),
        )

    def trace_path(self, row: Mapping[str, Any]) -> Path:
        return self.root / TRACES / f"{self.cell(row).label()}.jsonl"

    def session_command(self, row: Mapping[str, Any]) -> str:
        """The ``harness session`` line that runs this one session again, deterministically."""
        from harness.scenarios.family import SOURCE_PREFIX
        from harness.scenarios.served import SERVED_PREFIX

        sources = self.manifest.get("scenario_sources") or {}
        source = str(sources.get(row["scenario"], row["scenario"]))
        before = ""
        if source.startswith(
            SOURCE_PREFIX
        ):  # a scenario sampled from a family: draw it again to a file first
            spec = json.loads(source[len(SOURCE_PREFIX) :])
            before = (
                f"harness generate {shlex.quote(str(spec['path']))} --count {spec['count']} "
                f"--seed {spec['seed']} --out /tmp/harness-gen && "
            )
            source = f"/tmp/harness-gen/{row['scenario']}.toml"
        from harness.worlds import is_world_source

        if is_world_source(source):  # a world's task: its name is the scenario
            source = str(row["scenario"])
        served: list[str] = []
        if source.startswith(SERVED_PREFIX):  # a scenario for a real server: its file, and the --server given
            spec = json.loads(source[len(SERVED_PREFIX) :])
            source = str(spec["path"])
            served = ["--server", str(spec["command"])] if spec.get("command") else []
        args = [
            "harness",
            "session",
            source,
            *served,
            "--agent",
            str(row["agent"]),
            "--strategy",
            str(row["strategy"]),
            "--seed",
            str(row["seed"]),
            "--host",
            str(row["host"]),
            "--era",
            str(row.get("era") or "handshake"),
        ]
        codec = row.get("codec") or self.manifest.get("codec")
        if codec and codec != "json":
            args += ["--codec", str(codec)]
        for name in self.params:
            args += ["--set", f"{name}={self.swept(name, row[name])}"]
        settings = (self.manifest.get("agent_settings") or {}).get(str(row["agent"])) or {}
        for knob, value in sorted(settings.items()):
            args += ["--set", f"agent.{knob}={value}"]
        return before + " ".join(shlex.quote(a) for a in args) + " --trace -"

    def replayable(self, row: Mapping[str, Any]) -> str | None:
        """None if the session can be run again here to get its trace; else why not."""
        if row.get("agent") == "llm":
            return "an llm session asks a model again: run the harness session command yourself"
        if not row.get("trace_hash"):
            return "the row has no trace hash to check a replay against"
        if row.get("status") == "harness_error":
            return "the session broke inside the harness (see errors.log)"
        return None

    def replay(self, row: Mapping[str, Any]) -> tuple[bytes, bool]:
        """Run the session again as the batch ran it; its trace, and whether its hash is the row's."""
        from harness.batch.worker import SessionOptions, run_cells

        sources = tuple(sorted((self.manifest.get("scenario_sources") or {}).items()))
        settings = tuple(
            (agent, tuple(sorted(knobs.items())))
            for agent, knobs in sorted((self.manifest.get("agent_settings") or {}).items())
        )
        options = (
            SessionOptions(  # each session runs again as its scenario's kind (a real server's, a world's)
                codec=str(self.manifest.get("codec") or row.get("codec") or "json"),
                traces=True,
                scenario_sources=sources,
                agent_settings=settings,
            )
        )
        outcome = run_cells([self.cell(row)], options)[0]
        data = outcome.trace or b""
        return data, hashlib.sha256(data).hexdigest() == row.get("trace_hash")

    def trace(self, sid: int, *, replay: bool) -> tuple[bytes | None, str]:
        """The session's trace and where it came from (``file``, ``replay``), or None and why not."""
        row = self.row(sid)
        path = self.trace_path(row)
        if path.is_file():
            return path.read_bytes(), "file"
        if not replay:
            return None, "no trace file"
        why = self.replayable(row)
        if why is not None:
            return None, why
        try:
            data, same = self.replay(row)
        except Exception as exc:  # a scenario file moved away, an agent that no longer imports
            return None, f"the replay failed: {type(exc).__name__}: {exc}"
        if not same:
            return None, "a replay here gave another trace than the run's (other code or scenario files)"
        return data, "replay"

    def session(self, sid: int, *, replay: bool = False) -> dict[str, Any]:
        """A session's page: key, every column with its meaning, the trace cut into steps."""
        row = self.row(sid)
        data, source = self.trace(sid, replay=replay)
        doc: dict[str, Any] = {
            "id": sid,
            "key": {k: row.get(k) for k in self.keys},
            "label": self.cell(row).label(),
            "row": row,
            "command": self.session_command(row),
            "replayable": self.replayable(row) is None,
            "trace_source": source,
            "trace_file": str(self.trace_path(row)),
            "siblings": self.siblings(sid),
        }
        if data is None:
            doc["trace"] = None
            doc["no_trace"] = source
        else:
            lines = parse_lines(data)
            doc["trace"] = steps_json(timeline(lines), raw=lines)
        return doc

    def timeline_of(self, sid: int, *, replay: bool = True) -> tuple[Timeline | None, str]:
        """The session's steps (kept for the next pair that needs them), or None and why not."""
        with self._lock:
            cached = self._timelines.get(sid)
        if cached is not None:
            return cached
        data, source = self.trace(sid, replay=replay)
        found = (timeline(parse_lines(data)), source) if data is not None else (None, source)
        if data is not None:
            with self._lock:
                self._timelines[sid] = found
                while len(self._timelines) > CACHED_TIMELINES:
                    self._timelines.popitem(last=False)
        return found

    def siblings(self, sid: int) -> list[dict[str, Any]]:
        """The sessions of the same scenario, seed and swept values: what a pair is made of."""
        key = self.key_of(sid)
        fixed = [Filter(c, "=", key[c]) for c in ("scenario", "seed", *self.params)]
        hits = self.mask(fixed)
        dims = [d for d in DIMENSIONS if d in self.index.column_names]
        sub = self.index.take(pa.array(hits, pa.int64())).select(dims).to_pylist()
        out = []
        for i, r in zip(hits, sub, strict=True):
            if int(i) == sid:
                continue
            differ = [d for d in dims if r[d] != key[d]]
            out.append({"id": int(i), **r, "differs_in": differ})
        return out

    # -- pairs -------------------------------------------------------------------------------

    def pair(self, a: int, b: int, *, replay: bool = True) -> dict[str, Any]:
        """Two sessions of one scenario and seed: the first step where what the agent saw differs.

        The page puts the two sessions' steps side by side and their rows column by column.
        """
        ka, kb = self.key_of(self._check_id(a)), self.key_of(self._check_id(b))
        for col in ("scenario", "seed", *self.params):
            if ka[col] != kb[col]:
                raise ViewError(f"sessions {a} and {b} are no pair: {col} {ka[col]!r} against {kb[col]!r}")
        ta, sa = self.timeline_of(a, replay=replay)
        tb, sb = self.timeline_of(b, replay=replay)
        doc: dict[str, Any] = {
            "a": a,
            "b": b,
            "differs_in": [d for d in DIMENSIONS if ka.get(d) != kb.get(d)],
            "trace_source": {"a": sa, "b": sb},
        }
        if ta is None or tb is None:
            doc["divergence"] = None
            doc["no_divergence"] = "no trace for " + " and ".join(
                f"session {s} ({why})" for s, t, why in ((a, ta, sa), (b, tb, sb)) if t is None
            )
        else:
            d = first_divergence(ta, tb)
            doc["divergence"] = {"seen": d.seen, "action": d.action, "steps": d.steps}
        return doc

    def differing_pair(
        self, group: Mapping[str, Any], strategy: str, baseline: str = BASELINE, scenario: str | None = None
    ) -> dict[str, Any]:
        """A seed where ``strategy`` and ``baseline`` part within ``group``: success first, then the trace.

        Pairs are matched as the comparison pairs them: same scenario, agent, host, era, seed and
        swept values.
        """
        filters = [
            Filter(c, "=", self._typed(c, v)) for c, v in group.items() if c in self.index.column_names
        ]
        if scenario is not None:
            filters.append(Filter("scenario", "=", scenario))
        hits = self.mask(filters)
        wanted = [c for c in (*self.keys, "success", "trace_hash", "status") if c in self.index.column_names]
        frame = self.index.take(pa.array(hits, pa.int64())).select(wanted).to_pandas()
        frame["id"] = hits
        frame = frame[frame["strategy"].isin([strategy, baseline])]
        if "status" in frame.columns:  # a broken session has no outcome to differ in
            frame = frame[frame["status"] != "harness_error"]
        pair_keys = [k for k in self.keys if k != "strategy"]
        base = frame[frame["strategy"] == baseline].drop(columns="strategy")
        other = frame[frame["strategy"] == strategy].drop(columns="strategy")
        joined = base.merge(other, on=pair_keys, how="inner", suffixes=("_base", "_other"))
        doc: dict[str, Any] = {
            "group": dict(group),
            "strategy": strategy,
            "baseline": baseline,
            "scenario": scenario,
            "pairs": len(joined),
        }
        if joined.empty:
            return {**doc, "found": False, "why": "no pairs of these two strategies here"}
        success = joined[joined["success_base"] != joined["success_other"]]
        doc["differ_in_success"] = len(success)
        chosen, by = success, "success"
        if chosen.empty and "trace_hash_base" in joined:
            chosen, by = joined[joined["trace_hash_base"] != joined["trace_hash_other"]], "trace"
        if chosen.empty:
            return {**doc, "found": False, "why": f"all {len(joined)} pairs agree, trace for trace"}
        first = chosen.iloc[0]
        return {**doc, "found": True, "by": by, "a": int(first["id_base"]), "b": int(first["id_other"])}

    # -- the whole table: comparison, effects, figures ---------------------------------------

    def frame(self) -> tuple[pd.DataFrame, RunState]:
        """Every row, as ``harness compare`` reads them (:func:`harness.batch.results.load_run`)."""
        with self._lock:
            if self._frame is None:
                self._frame = load_run(self.path)
            return self._frame

    def comparison(self, by: Sequence[str] = ("agent",), baseline: str = BASELINE) -> dict[str, Any]:
        """``harness compare --by BY --format json``'s document, and the table as it prints: both
        from :func:`harness.report.documents.comparison`, which the command prints."""
        key = (baseline, *by)
        cached = self._compare.get(key)
        if cached is not None:
            return cached
        from harness.report.documents import comparison

        df, state = self.frame()
        if df.empty:
            raise ViewError(f"{self.path}: no finished sessions yet ({state.status or 'no status'})")
        try:
            shown = comparison(df, by=by, baseline=baseline, k=K, unit=UNIT, adjust=ADJUST,
                               source=str(self.path), state=state)  # fmt: skip
        except UserError as exc:
            raise ViewError(str(exc)) from None
        columns = [str(c) for c in shown.shown.columns]
        groups = columns[: columns.index("n")] if "n" in columns else []
        doc = {
            **shown.document(),
            "warning": shown.warning,
            "by": list(by),
            "rows": records(shown.table),
            "shown": {
                "columns": columns,
                "groups": groups,
                "rows": [[str(v) for v in r] for r in shown.shown.itertuples(index=False, name=None)],
            },
        }
        with self._lock:
            self._compare[key] = doc
        return doc

    def effects(self) -> dict[str, Any]:
        """``harness effects RUN``: its ``--format json`` document, and its tables as ``--format
        markdown`` prints them, both from :func:`harness.report.documents.effects`, which the
        command prints, so the page cannot drift from it."""
        if self._effects is not None:
            return self._effects
        from harness.report.documents import effects

        df, state = self.frame()
        sources = dict(self.manifest.get("scenario_sources") or {})
        try:
            shown = effects(df, state, source=str(self.path), sources=sources)
        except UserError as exc:
            doc: dict[str, Any] = {"unavailable": f"harness effects {self.path}: {exc}"}
        else:
            doc = {**shown.document, "shown": markdown.tables(shown.markdown())}
        with self._lock:
            self._effects = doc
        return doc

    def figure_names(self) -> list[str]:
        from harness.report.plots import FIGURES

        return list(FIGURES)

    def figure(self, name: str) -> bytes | None:
        """One of ``harness plot``'s figures, drawn from the table (None: it does not apply)."""
        if name in self._figures:
            return self._figures[name]
        from harness.report.plots import FIGURES

        make = FIGURES.get(name)
        if make is None:
            raise unknown_name("figure", name, FIGURES)
        df, state = self.frame()
        run = self.path.name or str(self.path)
        if state.complete is False:
            of = f" of {state.sessions_in_grid}" if state.sessions_in_grid is not None else ""
            run = f"{run} (INCOMPLETE: {state.sessions}{of} sessions, status {state.status or 'unknown'})"
        with _DRAW:  # pyplot keeps global state: one figure at a time, whatever thread asks
            if name in self._figures:
                return self._figures[name]
            data = _png(make, df, run)
            self._figures[name] = data
        return data

    # -- the run ---------------------------------------------------------------------------

    def summary(self) -> dict[str, Any]:
        """What the run's header shows: the manifest, the state and the filters' choices."""
        present = set(self.index.column_names)
        return {
            "kind": "run",
            "path": str(self.path),
            "title": self.path.name or str(self.path),
            "manifest": jsonable(self.manifest),
            **self.state.to_json(),
            "reasons": list(self.state.reasons),
            "warning": self.state.warning(str(self.path)),
            "keys": list(self.keys),
            "params": list(self.params),
            "facets": self.facets(),
            "outcomes": [c for c in INDEX_COLUMNS if c in present and c != "trace_hash"],
            "list_columns": [c for c in (*self.keys, *LIST_COLUMNS) if c in present],
            "meanings": MEANINGS,
            "traces": (self.root / TRACES).is_dir(),
            "baseline": BASELINE,
            "strategies": self.facets().get("strategy", []),
        }


_DRAW = threading.Lock()
"""matplotlib's pyplot is not thread-safe; the server answers requests on several threads."""


def _png(make: Any, df: pd.DataFrame, run: str) -> bytes | None:
    import matplotlib.pyplot as plt

    fig = make(df, run)
    if fig is None:
        return None
    buf = io.BytesIO()
    try:
        fig.savefig(buf, format="png", dpi=90)
    finally:
        plt.close(fig)
    return buf.getvalue()
