"""A results directory: what ``harness run`` writes, and how it is read back.

Layout of ``results/<timestamp>/``::

    manifest.json        what was run, by which code, when; written first, updated last
    chunks/part-*.parquet  rows as sessions finish, one file per finished task
    sessions.parquet     all rows, one per session, in grid order (written when the grid is done)
    errors.log           tracebacks of sessions that failed inside the harness
    traces/*.jsonl       wire traces, with --traces

Every file is written to a temporary name and renamed into place, so a kill at
any moment leaves only whole files. Chunks are named by the grid position of
their first row and cover contiguous ranges, so reading them in name order is
grid order, whichever executor finished them. Once ``sessions.parquet`` exists
it is the table, and leftover chunks (a kill before their removal) are ignored,
so nothing is lost and nothing is counted twice.
"""

from __future__ import annotations

import hashlib
import json
import os
import uuid
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from harness.batch.grid import KEY_COLUMNS, Grid
from harness.errors import UserError

FORMAT = "harness-results/2"
READABLE_FORMATS: tuple[str, ...] = ("harness-results/1", FORMAT)
"""/2 writes a grid's consecutive seeds as a ``{"start", "stop"}`` span instead of a list;
runs written as /1 are still read (and resumed) as they are."""
MANIFEST = "manifest.json"
SESSIONS = "sessions.parquet"
CHUNKS = "chunks"
ERRORS = "errors.log"
TRACES = "traces"
ROW_GROUP = 5_000


def atomic_write_bytes(path: Path, data: bytes, *, durable: bool = False) -> None:
    """Write ``data`` to ``path`` so that readers see the old file or the new one, whole.

    Temp file + rename survives any kill of the writer. ``durable`` adds an fsync,
    which only a power cut needs; chunks skip it, since there are many of them.
    """
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}-{uuid.uuid4().hex[:8]}")
    try:
        with open(tmp, "wb") as fh:
            fh.write(data)
            if durable:
                fh.flush()
                os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def _table(rows: Sequence[dict[str, Any]]) -> pa.Table:
    table = pa.Table.from_pylist(list(rows))
    # Empty lists alone infer list<null>; pin list columns to list<int64> so chunks concatenate.
    for i, fld in enumerate(table.schema):
        if pa.types.is_list(fld.type) and pa.types.is_null(fld.type.value_type):
            table = table.set_column(i, fld.name, table.column(i).cast(pa.list_(pa.int64())))
    return table


class ResultsDir:
    """One batch's directory; create it for a new run, open it to resume or analyse."""

    def __init__(self, path: Path, manifest: dict[str, Any]) -> None:
        self.path = path
        self.manifest = manifest

    # -- creating and opening ------------------------------------------------------

    @classmethod
    def create(cls, path: Path, manifest: dict[str, Any]) -> ResultsDir:
        if path.exists() and (not path.is_dir() or any(path.iterdir())):
            if (path / MANIFEST).exists():
                raise UserError(f"{path}: already holds a run; use --resume to finish it, or another --out")
            raise UserError(f"{path}: exists and is not an empty directory; refusing to write into it")
        (path / CHUNKS).mkdir(parents=True, exist_ok=True)
        manifest = {"format": FORMAT, **manifest}
        results = cls(path, manifest)
        results.write_manifest()
        return results

    @classmethod
    def open(cls, path: Path) -> ResultsDir:
        if path.is_file():
            raise UserError(f"{path}: a file, not a results directory (give the directory a run wrote)")
        if not path.is_dir():
            raise UserError(f"{path}: no such results directory")
        mpath = path / MANIFEST
        if not mpath.exists():
            raise UserError(f"{path}: not a harness results directory (no {MANIFEST})")
        try:
            manifest = json.loads(mpath.read_text())
        except (OSError, ValueError) as exc:
            raise UserError(f"{mpath}: unreadable manifest ({exc})") from None
        if not isinstance(manifest, dict) or manifest.get("format") not in READABLE_FORMATS:
            known = ", ".join(READABLE_FORMATS)
            raise UserError(f"{mpath}: not a harness results manifest (format is not one of {known})")
        return cls(path, manifest)

    @property
    def grid(self) -> Grid:
        return Grid.from_json(self.manifest["grid"])

    def write_manifest(self) -> None:
        data = json.dumps(self.manifest, indent=2, sort_keys=True, default=str).encode() + b"\n"
        atomic_write_bytes(self.path / MANIFEST, data, durable=True)

    # -- rows ------------------------------------------------------------------------

    def key_columns(self) -> list[str]:
        return [*KEY_COLUMNS, *self.grid.param_names]

    def write_chunk(self, rows: Sequence[dict[str, Any]], first: int = 0) -> Path:
        """Persist finished rows now; a later kill cannot lose them.

        ``first`` is the grid position of the first row; chunk names sort in grid order.
        """
        sink = pa.BufferOutputStream()
        pq.write_table(_table(rows), sink)
        path = self.path / CHUNKS / f"part-{first:012d}-{uuid.uuid4().hex[:8]}.parquet"
        atomic_write_bytes(path, sink.getvalue().to_pybytes())
        return path

    def _chunks(self) -> list[Path]:
        chunk_dir = self.path / CHUNKS
        return sorted(chunk_dir.glob("part-*.parquet")) if chunk_dir.is_dir() else []

    def _files(self) -> list[Path]:
        # Once sessions.parquet exists it holds every row: chunks left by a kill between
        # writing it and removing them are duplicates, never extra rows.
        if (self.path / SESSIONS).exists():
            return [self.path / SESSIONS]
        return self._chunks()

    def _read(self, path: Path, columns: Sequence[str] | None = None) -> pa.Table:
        try:
            return pq.read_table(path, columns=list(columns) if columns is not None else None)
        except (OSError, pa.ArrowInvalid, KeyError) as exc:
            raise UserError(f"{path}: corrupt results file ({exc})") from None

    def read_rows(self) -> pd.DataFrame:
        """Every finished row, once each, in grid order."""
        frames = [t.to_pandas() for t in (self._read(f) for f in self._files()) if t.num_rows]
        if not frames:
            return pd.DataFrame(columns=self.key_columns())
        df: pd.DataFrame = pd.concat(frames, ignore_index=True) if len(frames) > 1 else frames[0]
        missing = [k for k in self.key_columns() if k not in df.columns]
        if missing:
            raise UserError(f"{self.path}: results lack key columns {missing}")
        return df

    def done_keys(self) -> set[tuple[Any, ...]]:
        """Keys of finished rows (read column by column: the rows themselves stay on disk)."""
        keys = self.key_columns()
        done: set[tuple[Any, ...]] = set()
        for f in self._files():
            table = self._read(f, keys)
            done.update(zip(*(table.column(k).to_pylist() for k in keys), strict=True))
        return done

    def consolidate(self) -> dict[str, Any]:
        """Stream every chunk, in grid order, into ``sessions.parquet``; then drop the chunks.

        Memory stays flat: one chunk is held at a time. Returns the manifest's counts.
        """
        chunks = self._chunks()
        if (self.path / SESSIONS).exists() and not chunks:
            return self._stats([self.path / SESSIONS])
        if (self.path / SESSIONS).exists():
            for c in chunks:  # a kill after the rename left them: sessions.parquet is whole
                c.unlink(missing_ok=True)
            return self._stats([self.path / SESSIONS])
        schema = pa.schema([])
        for c in chunks:  # one schema at a time: a million-session run has ten thousand chunks
            schema = pa.unify_schemas([schema, pq.read_schema(c)], promote_options="permissive")
        tmp = self.path / f".{SESSIONS}.tmp-{os.getpid()}-{uuid.uuid4().hex[:8]}"
        pool = pa.default_memory_pool()
        with pq.ParquetWriter(tmp, schema) as writer:
            # Chunks are small; gather them into row groups of ROW_GROUP rows, so memory is
            # bounded by one row group and the file's metadata by the number of groups.
            pending: list[pa.Table] = []
            rows = 0
            for c in chunks:
                table = _conform(self._read(c), schema)
                pending.append(table)
                rows += table.num_rows
                if rows >= ROW_GROUP:
                    writer.write_table(pa.concat_tables(pending))
                    pending, rows = [], 0
                    # Arrow's allocator keeps what it freed; over ten thousand chunks that
                    # would grow the peak with the run's size, so hand it back each group.
                    pool.release_unused()
            if pending:
                writer.write_table(pa.concat_tables(pending))
        os.replace(tmp, self.path / SESSIONS)
        for c in chunks:
            c.unlink(missing_ok=True)
        return self._stats([self.path / SESSIONS])

    def _stats(self, files: Sequence[Path]) -> dict[str, Any]:
        """Row and harness-error counts, and one sha256 over every row's fault schedule."""
        keys = [k for k in self.key_columns() if k not in ("strategy", "host")]
        digest = hashlib.sha256()
        rows = errors = 0
        pool = pa.default_memory_pool()
        for f in files:
            pf = pq.ParquetFile(f)
            names = set(pf.schema_arrow.names)
            cols = [c for c in [*keys, "status", "fault_schedule_hash"] if c in names]
            # One row group at a time, handing the allocator's freed memory back after each
            # (iter_batches reads ahead, and what it frees stays with Arrow otherwise).
            for group in range(pf.num_row_groups):
                batch = pf.read_row_group(group, columns=cols, use_threads=False)
                pool.release_unused()
                data = batch.to_pydict()
                rows += batch.num_rows
                errors += sum(1 for s in data.get("status", []) if s == "harness_error")
                if "fault_schedule_hash" in data:
                    for values in zip(
                        *(data[k] for k in [*keys, "fault_schedule_hash"] if k in data), strict=True
                    ):
                        digest.update("\x1f".join(map(str, values)).encode() + b"\n")
        return {"sessions": rows, "harness_errors": errors, "fault_schedule_hash": digest.hexdigest()}

    # -- side files -------------------------------------------------------------------

    def log_errors(self, entries: Iterable[tuple[str, str]]) -> None:
        """Append (label, traceback) entries to errors.log."""
        with open(self.path / ERRORS, "a", encoding="utf-8") as fh:
            for label, tb in entries:
                fh.write(f"=== {label}\n{tb.rstrip()}\n")

    def write_trace(self, label: str, data: bytes) -> None:
        tdir = self.path / TRACES
        tdir.mkdir(exist_ok=True)
        atomic_write_bytes(tdir / f"{label}.jsonl", data)

    def clean_temporaries(self) -> None:
        """Remove temp files a killed writer left behind (never whole files)."""
        for p in [*self.path.glob(".*.tmp-*"), *(self.path / CHUNKS).glob(".*.tmp-*")]:
            p.unlink(missing_ok=True)


def _conform(table: pa.Table, schema: pa.Schema) -> pa.Table:
    """Give ``table`` exactly ``schema``'s columns (missing ones null) and types."""
    if table.schema.equals(schema):
        return table  # the common case: every chunk of a run has the same columns
    columns = []
    for fld in schema:
        if fld.name in table.column_names:
            columns.append(table.column(fld.name).cast(fld.type))
        else:
            columns.append(pa.nulls(table.num_rows, fld.type))
    return pa.Table.from_arrays(columns, schema=schema)


def load_sessions(path: str | Path) -> pd.DataFrame:
    """The session table of a results directory (or of a parquet file)."""
    p = Path(path)
    if p.is_file() and p.suffix == ".parquet":
        try:
            frame: pd.DataFrame = pq.read_table(p).to_pandas()
            return frame
        except (OSError, pa.ArrowInvalid) as exc:
            raise UserError(f"{p}: corrupt results file ({exc})") from None
    return ResultsDir.open(p).read_rows()
