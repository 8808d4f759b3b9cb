"""The cassette: every model request and its accepted answer, keyed by a hash of the request.

A cassette is a JSON Lines file; each line is one entry::

    {"key": "<sha256>", "request": {...}, "response": {...}, "latency_s": 0.41,
     "attempts": 1, "tokens_in": 812, "tokens_out": 35}

``key`` is the sha256 of the request body in canonical JSON (sorted keys, no spaces, UTF-8):
the model, the whole conversation, the tools, temperature and sampling seed. The endpoint's
address and the API key are not in the body, so they are in no entry.

Recording, a request already in the cassette is answered from it (a grid asks the same first
question of many sessions; one answer serves them all, and the rows agree with a replay).
Worker processes share one file: an entry is appended under an exclusive ``flock``, after
reading what others appended, and if another process recorded the same key meanwhile its entry
wins. So each key has one answer and a replay gives every session the answer it had.

Within a process, sessions run side by side in threads (``--llm-concurrency``): a request that
another thread is asking right now is not asked again; its thread waits for that answer
(:meth:`Cassette.ask`). So a grid asks each distinct request once, however many sessions
reach it at the same moment.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from harness.errors import UserError
from harness.llm.client import Reply

__all__ = ["Cassette", "CassetteMiss", "open_cassette", "request_key"]


class CassetteMiss(UserError):
    """Replaying, a request is not in the cassette: the session asked something not recorded."""


def canonical(request: Mapping[str, Any]) -> bytes:
    """The request body as the bytes its key hashes."""
    return json.dumps(request, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def request_key(request: Mapping[str, Any]) -> str:
    """The sha256 of the canonical request: its name in a cassette."""
    return hashlib.sha256(canonical(request)).hexdigest()


class Cassette:
    """One cassette file, read incrementally (other processes may be appending to it)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.entries: dict[str, Reply] = {}
        self.unreadable = 0
        """Lines that are no entry (skipped): a write a kill tore, or a file that is no cassette."""
        self._offset = 0
        self._lock = threading.RLock()
        """Threads of this process read and append one at a time (flock orders the processes)."""
        self._asking: dict[str, threading.Event] = {}
        """Keys some thread of this process is asking the endpoint now (:meth:`ask`)."""

    def _read_new(self, fh: Any) -> None:
        """Take the whole lines appended since the last read (the caller holds a lock)."""
        fh.seek(self._offset)
        data = fh.read()
        end = data.rfind(b"\n") + 1
        for line in data[:end].splitlines():
            try:
                entry = json.loads(line)
                key = entry["key"]
                reply = Reply.from_json(entry)
            except (ValueError, KeyError, TypeError):
                self.unreadable += bool(line.strip())  # a write torn by a kill, or not a cassette
                continue
            self.entries.setdefault(key, reply)  # the first answer recorded for a key is its answer
        self._offset += end

    def refresh(self) -> None:
        """Read what was appended since the last look (nothing if the file is not there yet)."""
        with self._lock:
            self._refresh()

    def _refresh(self) -> None:
        try:
            with open(self.path, "rb") as fh:
                fcntl.flock(fh, fcntl.LOCK_SH)
                try:
                    self._read_new(fh)
                finally:
                    fcntl.flock(fh, fcntl.LOCK_UN)
        except FileNotFoundError:
            return
        except OSError as exc:
            raise UserError(f"cassette {self.path}: cannot read it ({exc.strerror or exc})") from None

    def get(self, key: str) -> Reply | None:
        """The recorded answer for ``key``, looking at the file again if it is not known yet."""
        reply = self.entries.get(key)
        if reply is None:
            with self._lock:
                self._refresh()
                reply = self.entries.get(key)
        return reply

    def ask(self, key: str, request: Mapping[str, Any], fetch: Callable[[], Reply]) -> tuple[Reply, bool]:
        """The answer for ``key``: recorded, or ``fetch()``-ed and recorded; and whether this call
        fetched it. If another thread of this process is fetching the same key, wait for its answer
        instead (if its fetch fails, this one fetches)."""
        while True:
            reply = self.get(key)
            if reply is not None:
                return reply, False
            with self._lock:
                # Looked at again under the lock: a thread that fetched this key may have put it
                # and left between the look above and here (else this one would ask again).
                reply = self.entries.get(key)
                busy = None if reply is not None else self._asking.get(key)
                if reply is None and busy is None:
                    done = self._asking[key] = threading.Event()
            if reply is not None:
                return reply, False
            if busy is not None:
                busy.wait()
                continue
            try:
                return self.put(key, request, fetch()), True
            finally:
                with self._lock:
                    del self._asking[key]
                done.set()

    def put(self, key: str, request: Mapping[str, Any], reply: Reply) -> Reply:
        """Record ``reply`` for ``request``; the answer recorded first for this key is returned."""
        with self._lock:
            return self._put(key, request, reply)

    def _put(self, key: str, request: Mapping[str, Any], reply: Reply) -> Reply:
        line = json.dumps({"key": key, "request": request, **reply.to_json()}, ensure_ascii=False)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_APPEND, 0o644)
        except OSError as exc:
            raise UserError(f"cassette {self.path}: cannot write it ({exc.strerror or exc})") from None
        with os.fdopen(fd, "r+b") as fh:
            fcntl.flock(fh, fcntl.LOCK_EX)
            try:
                self._read_new(fh)
                if key in self.entries:
                    return self.entries[key]
                fh.seek(0, os.SEEK_END)
                size = fh.tell()
                prefix = b"" if size == self._offset else b"\n"  # a torn last line stays apart
                fh.write(prefix + line.encode() + b"\n")
                fh.flush()
                self._offset = fh.tell()
                self.entries[key] = reply
            finally:
                fcntl.flock(fh, fcntl.LOCK_UN)
        return reply


_OPEN: dict[Path, Cassette] = {}
_NAMED: dict[str | os.PathLike[str], Cassette] = {}
"""The same, by the path as given: resolving a path costs a system call per component, and
every model request of a session asks for its cassette."""
_OPEN_LOCK = threading.Lock()


def open_cassette(path: str | os.PathLike[str]) -> Cassette:
    """The process's :class:`Cassette` for ``path`` (one per file, shared by its sessions)."""
    cassette = _NAMED.get(path)
    if cassette is not None:
        return cassette
    resolved = Path(path).expanduser().resolve()
    with _OPEN_LOCK:
        cassette = _OPEN.get(resolved)
        if cassette is None:
            cassette = _OPEN[resolved] = Cassette(resolved)
        if os.path.isabs(path):  # a relative one may name another file after a chdir
            _NAMED[path] = cassette
        return cassette
