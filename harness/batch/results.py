"""A results directory: what ``harness run`` writes, and how it is read back.

Layout of ``results/<timestamp>/``::

    manifest.json        what was run, by which code, when; written first, updated last
    chunks/part-*.parquet  rows as sessions finish, one file per finished task
    sessions.parquet     all rows, one per session, in grid order (written when the grid is done)
    baselines/part-*.parquet  fault-free baselines of agents that call a model, as they finish
    baselines.parquet    all of them, one per key (written when the grid is done)
    errors.log           tracebacks of sessions that failed inside the harness
    traces/*.jsonl       wire traces, with --traces
    writer.lock          locked by the one process writing the run (it holds that pid)

Every file is written to a temporary name and renamed into place, so a kill at
any moment leaves only whole files. Chunks are named by the grid position of
their first row and cover contiguous ranges, so reading them in name order is
grid order, whichever executor finished them. Once ``sessions.parquet`` exists
it is the table, and leftover chunks (a kill before their removal) are ignored,
so nothing is lost and nothing is counted twice.

One writer at a time: a run holds an exclusive ``flock`` on ``writer.lock`` from before its
manifest is written until it ends. The kernel drops the lock when the process dies however it
dies, so a killed run can be resumed at once, while a second ``harness run`` (a new run or a
``--resume``) on a directory that is being written is refused, naming the holder's pid. Every
reader refuses a table that holds a session key twice rather than count it twice.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import itertools
import json
import operator
import os
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from harness.batch.grid import KEY_COLUMNS, Grid
from harness.errors import UserError, loads_json
from harness.session.row import ROW_COLUMNS

FORMAT = "harness-results/2"
READABLE_FORMATS: tuple[str, ...] = ("harness-results/1", FORMAT)
"""/2 writes a grid's consecutive seeds as a ``{"start", "stop"}`` span instead of a list;
runs written as /1 are still read (and resumed) as they are."""
MANIFEST = "manifest.json"
SESSIONS = "sessions.parquet"
CHUNKS = "chunks"
ERRORS = "errors.log"
TRACES = "traces"
LOCK = "writer.lock"
BASELINES = "baselines.parquet"
BASELINE_PARTS = "baselines"
ROW_GROUP = 5_000
FINISHED = "complete"
"""The manifest's ``status`` once every cell of the grid has its row in ``sessions.parquet``;
a run is also ``running`` (or was killed while it was), or ``interrupted`` (Ctrl-C, or its
executor failed; ``--resume`` finishes it)."""


LATER_KEYS: dict[str, tuple[int, Any]] = {"era": (5, "handshake")}
"""Key columns added to the row after the first results were written: the row version that
added each, and the value every row of an earlier run had (runs before the stateless era were
all handshake-era), so that those runs still load and compare."""


@dataclass(frozen=True)
class RunState:
    """Whether a results directory holds a finished run, and if not, why not.

    ``complete`` is None when there is nothing to tell (a bare parquet file, no manifest).
    """

    complete: bool | None
    status: str | None
    sessions: int
    sessions_in_grid: int | None
    reasons: tuple[str, ...] = ()

    def warning(self, path: str | Path) -> str:
        """One line for a reader of partial rows; empty for a finished run."""
        if self.complete is not False:
            return ""
        of = f" of {self.sessions_in_grid}" if self.sessions_in_grid is not None else ""
        return (
            f"INCOMPLETE RUN: {self.sessions}{of} sessions, status {self.status or 'unknown'!r} "
            f"({'; '.join(self.reasons)}); these rows are partial, not a finished comparison. "
            + ("If it is no longer running (killed), finish it" if self.status == "running" else "Finish it")
            + f": harness run --resume --out {path}"
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "complete": self.complete,
            "status": self.status,
            "sessions": self.sessions,
            "sessions_in_grid": self.sessions_in_grid,
        }


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


class WriterBusy(UserError):
    """Another process is writing this results directory; a second writer would count rows twice."""


class WriterLock:
    """The one writer's exclusive lock on a results directory (``writer.lock``, see the module).

    ``flock`` rather than a pid file: the kernel releases it when the holder dies, however it
    dies, so there is no stale lock to clear after a kill. The file is never removed (removing a
    lock file lets two processes lock two different files of the same name).
    """

    def __init__(self, path: Path, fd: int) -> None:
        self.path, self._fd = path, fd

    @classmethod
    def acquire(cls, directory: Path) -> WriterLock:
        """Take the lock now, or raise :class:`WriterBusy` naming the holder's pid."""
        path = directory / LOCK
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        except OSError as exc:
            raise UserError(f"{directory}: cannot open {LOCK} ({exc.strerror or exc})") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            holder = _pid_in(fd)
            os.close(fd)
            if exc.errno not in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                raise UserError(f"{path}: cannot lock ({exc.strerror or exc})") from None
            who = f"process {holder}" if holder else "another process"
            raise WriterBusy(
                f"{directory}: {who} is writing this run now; one writer at a time "
                "(wait for it to end, or stop it and then --resume)"
            ) from None
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        return cls(path, fd)

    @classmethod
    def check(cls, directory: Path) -> None:
        """Raise :class:`WriterBusy` if a writer holds ``directory`` now (the lock is taken and
        given back at once; the writer that runs takes it again for good)."""
        if (directory / LOCK).exists():
            cls.acquire(directory).release()

    def release(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)  # closing the only descriptor drops the flock
            self._fd = -1


def _pid_in(fd: int) -> int | None:
    try:
        text = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
    except OSError:
        return None
    return int(text) if text.isdigit() else None


def refuse_duplicates(df: pd.DataFrame, keys: Sequence[str], where: str | Path) -> None:
    """Refuse a table in which a session key appears twice: its rates would count it twice."""
    present = [k for k in keys if k in df.columns]
    if not present or df.empty:
        return
    extra = int(df.duplicated(subset=present).sum())
    if extra:
        sessions = len(df) - extra
        raise UserError(
            f"{where}: {extra} row{'s' if extra != 1 else ''} repeat a session key already in the table "
            f"({len(df)} rows for {sessions} sessions): two writers wrote into this run, and its rates "
            "would count those sessions twice; refusing to read it (rerun it into a new --out)"
        )


def _table(rows: Sequence[dict[str, Any]]) -> pa.Table:
    # Every column any row has, in order of first appearance: from_pylist would take the first
    # row's keys alone, and a short error row first would drop the other rows' columns.
    names = list(dict.fromkeys(itertools.chain.from_iterable(rows)))
    columns: Iterable[Sequence[Any]]
    if len(names) > 1 and all(len(row) == len(names) for row in rows):  # every row, every column
        columns = zip(*map(operator.itemgetter(*names), rows), strict=True)  # transposed in C
    else:
        columns = [[row.get(n) for row in rows] for n in names]
    table = pa.Table.from_arrays([pa.array(c) for c in columns], names=names)
    # Empty lists alone infer list<null>; pin list columns to list<int64> so chunks concatenate.
    for i, fld in enumerate(table.schema):
        if pa.types.is_list(fld.type) and pa.types.is_null(fld.type.value_type):
            table = table.set_column(i, fld.name, table.column(i).cast(pa.list_(pa.int64())))
    return table


def _table_bytes(table: pa.Table) -> bytes:
    """A part file (a chunk, a baselines part): read once, when it is consolidated, so written
    without column statistics or dictionary pages; the consolidated file gets both."""
    sink = pa.BufferOutputStream()
    pq.write_table(table, sink, write_statistics=False, use_dictionary=False)
    return bytes(sink.getvalue().to_pybytes())


def _part_bytes(rows: Sequence[dict[str, Any]]) -> bytes:
    return _table_bytes(_table(rows))


def _chunk_first(path: Path) -> int:
    """The grid position of a chunk's first row, from its name (``part-<first>-<id>[-<digest>].parquet``)."""
    return int(path.name.split("-")[1])


CHUNK_DIGEST_CHARS = 24
"""Hex characters of a chunk's sha256 that its name carries (``part-<first>-<id>-<digest>.parquet``):
the digest is written with the chunk in one atomic rename, so no manifest is rewritten per chunk,
and a chunk changed after it was written is refused by every reader (issue 49)."""


def _chunk_digest(path: Path) -> str | None:
    """The sha256 prefix a chunk's name records, or None for a chunk from before names carried it."""
    parts = path.name.removesuffix(".parquet").split("-")
    return parts[3] if len(parts) == 4 and len(parts[3]) == CHUNK_DIGEST_CHARS else None


AHEAD_ROWS = 2 * ROW_GROUP
"""Rows :class:`_Ahead` holds in memory at most, waiting for the rows before them in grid order;
a chunk that would go over is read back from its file at the end instead."""


class _Ahead:
    """``sessions.parquet`` written while the run goes, from the chunks' tables as they are written.

    The consolidation reads every chunk back and writes them, in grid order, into row groups of
    :data:`ROW_GROUP`; this does the same with the tables the parent has just built, as soon as
    the rows before them in grid order are in (a temporary file, renamed into place only when
    the run is complete). A chunk that arrives before its turn is held, up to
    :data:`AHEAD_ROWS` rows; past that it is left on disk, and read back at the end as the
    consolidation would. The file is byte for byte the one the consolidation writes from the
    same chunks: same schema (every chunk's must be the first's, else this gives up and the
    consolidation runs as before), same row groups, same writer.
    """

    def __init__(self, directory: Path) -> None:
        self.tmp = directory / f".{SESSIONS}.tmp-{os.getpid()}-{uuid.uuid4().hex[:8]}"
        self.schema: pa.Schema | None = None
        self.writer: pq.ParquetWriter | None = None
        self.cursor = 0
        """The grid position of the next row to write."""
        self.written: set[int] = set()
        """The first positions of the chunks written so far."""
        self.held: dict[int, pa.Table] = {}
        self.held_rows = 0
        self.pending: list[pa.Table] = []
        self.pending_rows = 0
        self.given_up = False

    def add(self, first: int, table: pa.Table, path: Path) -> None:
        """A chunk whose file (``path``) is written: its rows go in now, or when their turn comes."""
        if self.given_up:
            return
        if self.schema is None:
            # As the chunk reads back: a list's item is named "element" in a parquet file
            # (equal types to Arrow, but the name is in the file the consolidation writes).
            self.schema = pq.read_schema(path)
        if not table.schema.equals(self.schema):
            self.give_up()
            return
        table = table.cast(self.schema)
        if first != self.cursor:
            if self.held_rows + table.num_rows <= AHEAD_ROWS:
                self.held[first] = table
                self.held_rows += table.num_rows
            return
        self._put(first, table)
        while self.cursor in self.held:
            table = self.held.pop(self.cursor)
            self.held_rows -= table.num_rows
            self._put(self.cursor, table)

    def _put(self, first: int, table: pa.Table) -> None:
        self.written.add(first)
        self.cursor = first + table.num_rows
        self.pending.append(table)
        self.pending_rows += table.num_rows
        if self.pending_rows >= ROW_GROUP:
            self._flush()

    def _flush(self) -> None:
        if not self.pending:
            return
        if self.writer is None:
            self.writer = pq.ParquetWriter(self.tmp, self.schema)
        self.writer.write_table(pa.concat_tables(self.pending))
        self.pending, self.pending_rows = [], 0
        pa.default_memory_pool().release_unused()  # as the consolidation does, each group

    def finish(self, chunks: Sequence[Path], read: Callable[[Path], pa.Table]) -> Path | None:
        """The whole file from ``chunks`` (every chunk of the run, in name order), or None when
        it cannot be (then nothing is left of it, and the consolidation runs)."""
        try:
            if self.given_up or self.schema is None:
                return None
            before = {_chunk_first(c) for c in chunks if _chunk_first(c) < self.cursor}
            if before != self.written:  # a chunk this did not see lies before the cursor
                return None
            for c in chunks:
                first = _chunk_first(c)
                if first < self.cursor:
                    continue
                table = self.held.pop(first, None)
                if table is None:
                    table = read(c)
                if not table.schema.equals(self.schema):
                    return None
                self._put(first, table)
            self._flush()
            if self.writer is None:
                return None
            self.writer.close()
            self.writer = None
            return self.tmp
        finally:
            if self.writer is not None or self.given_up:
                self.give_up()

    def give_up(self) -> None:
        """Drop the file and what is held (the chunks on disk hold every row)."""
        self.given_up = True
        self.held.clear()
        self.pending.clear()
        if self.writer is not None:
            with contextlib.suppress(Exception):
                self.writer.close()
            self.writer = None
        self.tmp.unlink(missing_ok=True)


MANIFEST_SHAPE: Mapping[str, tuple[type | tuple[type, ...], type | None]] = {
    "grid": (dict, None),
    "status": (str, None),
    "scenario_sources": (dict, str),
    "agent_settings": (dict, dict),
    "sessions": (int, None),
    "sessions_in_grid": (int, None),
    "harness_errors": (int, None),
    "codec": (str, None),
    "executor": (str, None),
    "row_version": (int, None),
    "traces": (bool, None),
    "sessions_sha256": (str, None),
}
"""What a manifest's keys hold, where present (``grid`` always is): the type of each value and, for
a mapping, of each of its values. A manifest edited or damaged by hand is refused in one line
naming the key, before any reader meets a value of another type."""


def check_manifest(manifest: Mapping[str, Any], shown: str) -> None:
    """Refuse a manifest whose keys do not hold what :data:`MANIFEST_SHAPE` says, or whose grid does
    not read: a UserError naming the file and the key."""
    if "grid" not in manifest:
        raise UserError(f"{shown}: grid: missing (every run records its grid)")
    for key, (kind, inner) in MANIFEST_SHAPE.items():
        if key not in manifest or (manifest[key] is None and key != "grid"):
            continue
        value: Any = manifest[key]
        if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
            raise UserError(f"{shown}: {key}: {_shape_name(kind)} expected, not {type(value).__name__}")
        if inner is not None and isinstance(value, dict):
            wrong = next((k for k, v in value.items() if not isinstance(v, inner)), None)
            if wrong is not None:
                found = type(value[wrong]).__name__
                raise UserError(f"{shown}: {key}: {wrong!r}: {_shape_name(inner)} expected, not {found}")
    try:
        Grid.from_json(manifest["grid"])
    except UserError as exc:
        raise UserError(f"{shown}: {str(exc).removeprefix('manifest.json: ')}") from None


def _shape_name(kind: type | tuple[type, ...]) -> str:
    names: dict[Any, str] = {dict: "an object", str: "a string", int: "an integer", bool: "true or false"}
    return names.get(kind, str(kind))


class ResultsDir:
    """One batch's directory; create it for a new run, open it to resume or analyse."""

    def __init__(self, path: Path, manifest: dict[str, Any]) -> None:
        self.path = path
        self.manifest = manifest
        self.lock: WriterLock | None = None
        """Held while this object writes the run (:meth:`create`, :meth:`claim`)."""
        self._ahead: _Ahead | None = None
        """``sessions.parquet`` being written as the chunks come (:meth:`write_ahead`)."""

    # -- creating and opening ------------------------------------------------------

    @staticmethod
    def check_new(path: str | os.PathLike[str]) -> Path:
        """Refuse a ``path`` a new run cannot be written to, and create it (empty) if it is not there.

        Called before anything is announced, so a bad ``--out`` is the first and only thing said.
        """
        path = Path(path)
        if path.is_file():
            raise UserError(f"{path}: a file, not a directory; give --out a new or empty directory")
        if path.is_dir() and any(p.name != LOCK for p in path.iterdir()):
            WriterLock.check(path)  # a run being written now: say whose, not just "use --resume"
            if (path / MANIFEST).exists():
                try:
                    state = f" ({_brief(ResultsDir.open(path).state())})"
                except UserError:
                    state = ""
                raise UserError(
                    f"{path}: already holds a run{state}; use --resume to finish it, or another --out"
                )
            raise UserError(f"{path}: exists and is not an empty directory; refusing to write into it")
        try:
            path.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise UserError(f"--out {path}: cannot create the directory ({exc.strerror or exc})") from None
        if not os.access(path, os.W_OK | os.X_OK):
            raise UserError(f"--out {path}: the directory is not writable")
        return path

    @classmethod
    def create(cls, path: str | os.PathLike[str], manifest: dict[str, Any]) -> ResultsDir:
        """A new run in ``path``, locked for this process until :meth:`release`."""
        path = cls.check_new(path)
        lock = WriterLock.acquire(path)
        try:
            cls.check_new(path)  # again under the lock: another writer may have begun in between
            try:
                (path / CHUNKS).mkdir(exist_ok=True)
            except OSError as exc:
                raise UserError(f"{path}: cannot create {CHUNKS}/ ({exc.strerror or exc})") from None
            results = cls(path, {"format": FORMAT, **manifest})
            results.lock = lock
            results.write_manifest()
        except BaseException:
            lock.release()
            raise
        return results

    def claim(self) -> None:
        """Become the run's one writer (to resume it), or raise :class:`WriterBusy`.

        The manifest is read again under the lock: the writer that held it may have finished
        the run (and rewritten the manifest) since this object read it.
        """
        if self.lock is None:
            self.lock = WriterLock.acquire(self.path)
            self.manifest = ResultsDir.open(self.path).manifest

    def release(self) -> None:
        """Stop being the writer (the kernel does this too if the process dies)."""
        if self.lock is not None:
            self.lock.release()
            self.lock = None

    @classmethod
    def open(cls, path: str | os.PathLike[str]) -> ResultsDir:
        path = Path(path)
        if path.is_file():
            raise UserError(f"{path}: a file, not a results directory (give the directory a run wrote)")
        if not path.is_dir():
            raise UserError(f"{path}: no such results directory")
        mpath = path / MANIFEST
        if not mpath.exists():
            raise UserError(f"{path}: not a harness results directory (no {MANIFEST})")
        try:
            manifest = loads_json(mpath.read_bytes())
        except (OSError, ValueError) as exc:
            raise UserError(f"{mpath}: unreadable manifest ({str(exc)[:200]})") from None
        if not isinstance(manifest, dict) or manifest.get("format") not in READABLE_FORMATS:
            known = ", ".join(READABLE_FORMATS)
            raise UserError(f"{mpath}: not a harness results manifest (format is not one of {known})")
        check_manifest(manifest, str(mpath))
        return cls(path, manifest)

    @property
    def grid(self) -> Grid:
        return Grid.from_json(self.manifest["grid"])

    def state(self, sessions: int | None = None) -> RunState:
        """Finished, or not and why: the manifest's status, where the rows are, how many.

        ``sessions`` is the number of rows if the caller has already read them.
        """
        status = self.manifest.get("status")
        status = status if isinstance(status, str) else None
        expected = self.manifest.get("sessions_in_grid")
        if not isinstance(expected, int):
            try:
                expected = len(self.grid)
            except (UserError, KeyError):
                expected = None
        if sessions is None:
            sessions = self.count_rows()
        reasons = []
        if status != FINISHED:
            reasons.append(f"the manifest says {status or 'nothing'!r}, not {FINISHED!r}")
        if not (self.path / SESSIONS).exists():
            chunks = len(self._chunks())
            reasons.append(f"no {SESSIONS} yet, {chunks} chunk{'s' if chunks != 1 else ''} of rows")
        if expected is not None and sessions < expected:
            reasons.append(f"{expected - sessions} sessions of the grid have no row")
        return RunState(not reasons, status, sessions, expected, tuple(reasons))

    def count_rows(self) -> int:
        """Rows on disk, from the parquet footers (no row is read)."""
        total = 0
        for f in self._files():
            try:
                total += pq.ParquetFile(f).metadata.num_rows
            except (OSError, pa.ArrowInvalid) as exc:
                raise UserError(f"{f}: corrupt results file ({' '.join(str(exc).split())})") from None
        return total

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
        (self.path / CHUNKS).mkdir(exist_ok=True)
        table = _table(rows)
        data = _table_bytes(table)
        digest = hashlib.sha256(data).hexdigest()[:CHUNK_DIGEST_CHARS]
        path = self.path / CHUNKS / f"part-{first:012d}-{uuid.uuid4().hex[:8]}-{digest}.parquet"
        atomic_write_bytes(path, data)
        if self._ahead is not None:
            self._ahead.add(first, table, path)
        return path

    def write_ahead(self) -> None:
        """From now on, write ``sessions.parquet`` as the chunks come (:class:`_Ahead`), so that
        :meth:`consolidate` need not read them back; :meth:`stop_ahead` drops what it wrote."""
        self.stop_ahead()
        self._ahead = _Ahead(self.path)

    def stop_ahead(self) -> None:
        if self._ahead is not None:
            self._ahead.give_up()
            self._ahead = None

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
        """A results file's rows; a chunk whose name records its digest is checked against it first."""
        wanted = list(columns) if columns is not None else None
        try:
            digest = _chunk_digest(path)
            if digest is None:
                return pq.read_table(path, columns=wanted)
            data = path.read_bytes()
            if hashlib.sha256(data).hexdigest()[:CHUNK_DIGEST_CHARS] != digest:
                raise UserError(
                    f"{path}: its bytes are not the ones the run wrote (sha256 differs from the one its "
                    "name records): the chunk changed after it was written; restore it or remove it "
                    "and --resume runs its sessions again"
                )
            return pq.read_table(pa.BufferReader(data), columns=wanted)
        except (OSError, pa.ArrowInvalid, KeyError) as exc:
            raise UserError(f"{path}: corrupt results file ({' '.join(str(exc).split())})") from None

    def read_rows(self) -> pd.DataFrame:
        """Every finished row, once each, in grid order (a finished run's file checked first)."""
        self.check_integrity()
        frames = [t.to_pandas() for t in (self._read(f) for f in self._files()) if t.num_rows]
        if not frames:
            return pd.DataFrame(columns=[*ROW_COLUMNS, *self.grid.param_names])  # no rows yet: all columns
        df: pd.DataFrame = pd.concat(frames, ignore_index=True) if len(frames) > 1 else frames[0]
        missing = [k for k in self.key_columns() if k not in df.columns]
        written = self.manifest.get("row_version")
        for key, (since, value) in LATER_KEYS.items():
            if key in missing and (not isinstance(written, int) or written < since):
                df[key] = value  # a run from before the key existed: every row had this value
                missing.remove(key)
        if missing:
            raise UserError(f"{self.path}: results lack key columns {missing}")
        refuse_duplicates(df, self.key_columns(), self.path)
        return df

    def done_keys(self) -> set[tuple[Any, ...]]:
        """Keys of finished rows (read column by column: the rows themselves stay on disk)."""
        keys = self.key_columns()
        done: set[tuple[Any, ...]] = set()
        rows = 0
        for f in self._files():
            table = self._read(f, keys)
            rows += table.num_rows
            done.update(zip(*(table.column(k).to_pylist() for k in keys), strict=True))
        if rows > len(done):
            raise UserError(
                f"{self.path}: {rows - len(done)} rows repeat a session key ({rows} rows for {len(done)} "
                "sessions): two writers wrote into this run; it cannot be resumed into a sound table "
                "(rerun it into a new --out)"
            )
        return done

    def consolidate(self) -> dict[str, Any]:
        """Stream every chunk, in grid order, into ``sessions.parquet``; then drop the chunks.

        Memory stays flat: one chunk is held at a time. Returns the manifest's counts.
        """
        chunks = self._chunks()
        if (self.path / SESSIONS).exists():
            for c in chunks:  # a kill after the rename left them: sessions.parquet is whole
                c.unlink(missing_ok=True)
            self._drop_chunk_dir()
            return {**self._stats([self.path / SESSIONS]), DIGEST_KEY: file_sha256(self.path / SESSIONS)}
        ahead, self._ahead = self._ahead, None
        tmp = ahead.finish(chunks, self._read) if ahead is not None else None
        if tmp is None:
            tmp = self._consolidate(chunks)
        os.replace(tmp, self.path / SESSIONS)
        for c in chunks:
            c.unlink(missing_ok=True)
        self._drop_chunk_dir()
        return {**self._stats([self.path / SESSIONS]), DIGEST_KEY: file_sha256(self.path / SESSIONS)}

    def check_integrity(self) -> None:
        """Refuse a finished run's ``sessions.parquet`` whose bytes are not the ones its run wrote
        (the sha256 the manifest records at the end, :data:`DIGEST_KEY`): a flipped bit can change
        a result and still read as parquet (2 of 40 single-bit flips did, issue 49). A run from
        before the digest was recorded has none to check."""
        recorded = self.manifest.get(DIGEST_KEY)
        path = self.path / SESSIONS
        if not isinstance(recorded, str) or not path.exists():
            return
        if file_sha256(path) != recorded:
            raise UserError(
                f"{path}: its bytes are not the ones the run wrote (sha256 differs from the manifest's "
                f"{DIGEST_KEY}): the file changed after the run finished; restore it or run again"
            )

    def _consolidate(self, chunks: Sequence[Path]) -> Path:
        """Every chunk, read back in grid order, into a temporary ``sessions.parquet``."""
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
        return tmp

    def _drop_chunk_dir(self) -> None:
        """Remove ``chunks/`` once ``sessions.parquet`` holds every row (and temporaries left in it)."""
        chunk_dir = self.path / CHUNKS
        if not chunk_dir.is_dir():
            return
        for p in chunk_dir.glob(".*.tmp-*"):
            p.unlink(missing_ok=True)
        with contextlib.suppress(OSError):  # something else is in it: not ours to remove
            chunk_dir.rmdir()

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

    # -- baselines ---------------------------------------------------------------------

    def write_baselines(self, rows: Sequence[dict[str, Any]]) -> Path:
        """Persist finished baselines now (each row has its ``key``, JSON text); a later kill or
        a resume keeps them, so none is asked of a model twice."""
        (self.path / BASELINE_PARTS).mkdir(exist_ok=True)
        path = self.path / BASELINE_PARTS / f"part-{uuid.uuid4().hex}.parquet"
        atomic_write_bytes(path, _part_bytes(rows))
        return path

    def _baseline_files(self) -> list[Path]:
        parts = self.path / BASELINE_PARTS
        found = sorted(parts.glob("part-*.parquet")) if parts.is_dir() else []
        whole = self.path / BASELINES
        return [whole, *found] if whole.exists() else found

    def read_baselines(self) -> dict[str, dict[str, Any]]:
        """Every recorded baseline by its key (the JSON text the runner gave it); the first wins."""
        out: dict[str, dict[str, Any]] = {}
        for f in self._baseline_files():
            for row in self._read(f).to_pylist():
                out.setdefault(str(row["key"]), row)
        return out

    def consolidate_baselines(self) -> int:
        """Gather the baseline parts into ``baselines.parquet`` (atomically), then drop them."""
        files = self._baseline_files()
        if not files:
            return 0
        rows = list(self.read_baselines().values())
        if len(files) > 1 or files[0].name != BASELINES:
            sink = pa.BufferOutputStream()
            pq.write_table(_table(rows), sink)
            atomic_write_bytes(self.path / BASELINES, sink.getvalue().to_pybytes())
        parts = self.path / BASELINE_PARTS
        if parts.is_dir():
            for p in [*parts.glob("part-*.parquet"), *parts.glob(".*.tmp-*")]:
                p.unlink(missing_ok=True)
            with contextlib.suppress(OSError):
                parts.rmdir()
        return len(rows)

    # -- side files -------------------------------------------------------------------

    def log_errors(self, entries: Iterable[tuple[str, str]]) -> None:
        """Append (label, traceback) entries to errors.log."""
        with open(self.path / ERRORS, "a", encoding="utf-8") as fh:
            for label, tb in entries:
                fh.write(f"=== {label}\n{tb.rstrip()}\n")

    def trace_labels(self) -> set[str]:
        """The labels of the sessions whose trace is written (``traces/<label>.jsonl``)."""
        tdir = self.path / TRACES
        return {p.name.removesuffix(".jsonl") for p in tdir.glob("*.jsonl")} if tdir.is_dir() else set()

    def write_trace(self, label: str, data: bytes) -> None:
        tdir = self.path / TRACES
        tdir.mkdir(exist_ok=True)
        atomic_write_bytes(tdir / f"{label}.jsonl", data)

    def clean_temporaries(self) -> None:
        """Remove temp files a killed writer left behind (never whole files)."""
        temporaries = [*self.path.glob(".*.tmp-*"), *(self.path / CHUNKS).glob(".*.tmp-*")]
        for p in [*temporaries, *(self.path / BASELINE_PARTS).glob(".*.tmp-*")]:
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


def _brief(state: RunState) -> str:
    of = f" of {state.sessions_in_grid}" if state.sessions_in_grid is not None else ""
    return f"status {state.status or 'unknown'!r}, {state.sessions}{of} sessions"


DIGEST_KEY = "sessions_sha256"
"""The manifest's key for the sha256 of a finished run's ``sessions.parquet``."""


def file_sha256(path: Path) -> str:
    """The sha256 of a file's bytes, read in pieces."""
    with path.open("rb") as fh:
        return hashlib.file_digest(fh, "sha256").hexdigest()


def load_sessions(path: str | os.PathLike[str]) -> pd.DataFrame:
    """The session table of a results directory (or of a parquet file)."""
    return load_run(path)[0]


def load_run(path: str | os.PathLike[str]) -> tuple[pd.DataFrame, RunState]:
    """The session table of a results directory (or of a parquet file), and whether it is finished.

    A parquet file inside a results directory answers for that run; any other parquet file
    has no manifest to tell, and its state's ``complete`` is None.
    """
    p = Path(path)
    if p.is_file() and p.suffix == ".parquet":
        owner: ResultsDir | None = None
        if p.name == SESSIONS and (p.parent / MANIFEST).exists():
            try:
                owner = ResultsDir.open(p.parent)
                keys = owner.key_columns()
            except (UserError, KeyError):
                owner = None
            else:
                owner.check_integrity()  # before the bytes are read as parquet at all
        try:
            frame: pd.DataFrame = pq.read_table(p).to_pandas()
        except (OSError, pa.ArrowInvalid) as exc:
            raise UserError(f"{p}: corrupt results file ({' '.join(str(exc).split())})") from None
        if owner is not None:
            refuse_duplicates(frame, keys, p)
            return frame, owner.state(len(frame))
        # No manifest to name the swept parameters: they are the columns with a dot in the name
        # (faults.rate, agent.backoff), which no row column has.
        refuse_duplicates(frame, [*KEY_COLUMNS, *(c for c in frame.columns if "." in str(c))], p)
        return frame, RunState(None, None, len(frame), None)
    results = ResultsDir.open(p)
    frame = results.read_rows()
    return frame, results.state(len(frame))
