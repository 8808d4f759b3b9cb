"""A results directory: what ``harness run`` writes, and how it is read back.

Layout of ``results/<timestamp>/``::

    manifest.json        what was run, by which code, when; written first, updated last
    chunks/part-*.parquet  rows as sessions finish, one file per finished task
    sessions.parquet     all rows, one per session, sorted by key (written when the grid is done)
    errors.log           tracebacks of sessions that failed inside the harness
    traces/*.jsonl       wire traces, with --traces

Every file is written to a temporary name and renamed into place, so a kill at
any moment leaves only whole files. Rows are read from ``sessions.parquet`` and
any chunks, de-duplicated by key, so a kill between consolidating and removing
chunks loses nothing and duplicates nothing.
"""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from harness.errors import UserError
from harness.grid import KEY_COLUMNS, Grid

FORMAT = "harness-results/1"
MANIFEST = "manifest.json"
SESSIONS = "sessions.parquet"
CHUNKS = "chunks"
ERRORS = "errors.log"
TRACES = "traces"


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` so that readers see the old file or the new one, whole."""
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}-{uuid.uuid4().hex[:8]}")
    with open(tmp, "wb") as fh:
        fh.write(data)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)


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
        if not path.is_dir():
            raise UserError(f"{path}: no such results directory")
        mpath = path / MANIFEST
        if not mpath.exists():
            raise UserError(f"{path}: not a harness results directory (no {MANIFEST})")
        try:
            manifest = json.loads(mpath.read_text())
        except (OSError, ValueError) as exc:
            raise UserError(f"{mpath}: unreadable manifest ({exc})") from None
        if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
            raise UserError(f"{mpath}: not a harness results manifest (format is not {FORMAT!r})")
        return cls(path, manifest)

    @property
    def grid(self) -> Grid:
        return Grid.from_json(self.manifest["grid"])

    def write_manifest(self) -> None:
        data = json.dumps(self.manifest, indent=2, sort_keys=True, default=str).encode() + b"\n"
        atomic_write_bytes(self.path / MANIFEST, data)

    # -- rows ------------------------------------------------------------------------

    def key_columns(self) -> list[str]:
        return [*KEY_COLUMNS, *self.grid.param_names]

    def write_chunk(self, rows: Sequence[dict[str, Any]]) -> Path:
        """Persist finished rows now; a later kill cannot lose them."""
        sink = pa.BufferOutputStream()
        pq.write_table(_table(rows), sink)
        path = self.path / CHUNKS / f"part-{uuid.uuid4().hex}.parquet"
        atomic_write_bytes(path, sink.getvalue().to_pybytes())
        return path

    def _files(self) -> list[Path]:
        files = [self.path / SESSIONS] if (self.path / SESSIONS).exists() else []
        chunk_dir = self.path / CHUNKS
        if chunk_dir.is_dir():
            files.extend(sorted(chunk_dir.glob("part-*.parquet")))
        return files

    def read_rows(self) -> pd.DataFrame:
        """Every finished row, once each, sorted by key."""
        frames = []
        for f in self._files():
            try:
                frames.append(pq.read_table(f).to_pandas())
            except (OSError, pa.ArrowInvalid) as exc:
                raise UserError(f"{f}: corrupt results file ({exc})") from None
        if not frames:
            return pd.DataFrame(columns=self.key_columns())
        frames = [f for f in frames if len(f)]
        if not frames:
            return pd.DataFrame(columns=self.key_columns())
        df = pd.concat(frames, ignore_index=True) if len(frames) > 1 else frames[0]
        keys = self.key_columns()
        missing = [k for k in keys if k not in df.columns]
        if missing:
            raise UserError(f"{self.path}: results lack key columns {missing}")
        df = df.drop_duplicates(subset=keys, keep="first")
        out: pd.DataFrame = df.sort_values(keys, kind="stable").reset_index(drop=True)
        return out

    def done_keys(self) -> set[tuple[Any, ...]]:
        df = self.read_rows()
        return set(df[self.key_columns()].itertuples(index=False, name=None))

    def consolidate(self) -> pd.DataFrame:
        """Write ``sessions.parquet`` from everything finished, then drop the chunks."""
        df = self.read_rows()
        chunks = sorted((self.path / CHUNKS).glob("part-*.parquet")) if (self.path / CHUNKS).is_dir() else []
        sink = pa.BufferOutputStream()
        pq.write_table(pa.Table.from_pandas(df, preserve_index=False), sink)
        atomic_write_bytes(self.path / SESSIONS, sink.getvalue().to_pybytes())
        for c in chunks:
            c.unlink(missing_ok=True)
        return df

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
