"""Processes a session starts and leaves running end with it, and the row counts them.

The rules (issue 49; docs/reliability.md):

1. Every process started in a session's thread while it runs is noted: ``os.fork``,
   ``os.forkpty``, ``os.posix_spawn[p]`` and the fork-exec behind ``subprocess`` and
   ``multiprocessing``'s spawn. Noting is an append to a list, so a session that starts
   nothing pays nothing more.
2. When the session ends, each noted process still running is ended (SIGKILL), with every
   descendant it has, and reaped; so is any process adopted by this one while the session ran
   (this process is made a *child subreaper*, so that a daemon that forked twice and left its
   parent is re-parented here instead of to init, where nothing would find it).
3. The row's ``processes_ended`` counts them. A session that stopped its own processes (a
   served session's server, an agent that waited for its child) counts 0.

Why here, not in the agent's code: an agent is anyone's code, and a serial run's sessions
share the run's process; a fork it leaves behind outlives the run with the row reading ``ok``.
The notes are kept per thread, so that sessions run side by side in threads (a model's agent)
end only what each started.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import sys
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import psutil

_PR_SET_CHILD_SUBREAPER = 36
"""Linux prctl(2): orphaned descendants of this process are re-parented to it, not to init."""

GRACE_S = 2.0
"""How long the ended processes are waited for after SIGKILL (a process in the kernel's
uninterruptible sleep takes its time); one still there after it is counted all the same."""

_lock = threading.Lock()
_noted: dict[int, list[int]] = {}
"""Thread id -> the pids started in that thread's open session (only threads in a session)."""
_installed = False
_before: frozenset[int] = frozenset()
"""This process's children when the watch was installed: the pool's, never a session's."""


_outside: set[int] = set()
"""Pids started in this process outside any session (the run's own): never a session's orphan."""


def _note(pid: int) -> None:
    if pid > 0:
        noted = _noted.get(threading.get_ident())
        if noted is not None:
            noted.append(pid)
        else:
            _outside.add(pid)


def _noting_pid(real: Callable[..., int]) -> Callable[..., int]:
    def started(*args: Any, **kwargs: Any) -> int:
        pid = real(*args, **kwargs)
        _note(pid)
        return pid

    started.__wrapped__ = real  # type: ignore[attr-defined]
    return started


def _noting_forkpty(real: Callable[[], tuple[int, int]]) -> Callable[[], tuple[int, int]]:
    def started() -> tuple[int, int]:
        pid, fd = real()
        _note(pid)
        return pid, fd

    started.__wrapped__ = real  # type: ignore[attr-defined]
    return started


def _starters() -> list[tuple[Any, str, Callable[[Any], Any]]]:
    """(module, attribute, wrapper) for every way Python starts a process, as this interpreter
    has them: a table, so that a missing one (no ``forkpty`` on a platform) is a missing row."""
    import _posixsubprocess
    import subprocess

    table: list[tuple[Any, str, Callable[[Any], Any]]] = [
        (os, "fork", _noting_pid),
        (os, "forkpty", _noting_forkpty),
        (os, "posix_spawn", _noting_pid),
        (os, "posix_spawnp", _noting_pid),
        (_posixsubprocess, "fork_exec", _noting_pid),  # multiprocessing's spawn
        (subprocess, "_fork_exec", _noting_pid),  # subprocess.Popen binds it at import
    ]
    return [(module, name, wrap) for module, name, wrap in table if callable(getattr(module, name, None))]


def install() -> None:
    """Note process starts in this process from now on, and adopt orphans (idempotent)."""
    global _installed, _before
    with _lock:
        if _installed:
            return
        for module, name, wrap in _starters():
            setattr(module, name, wrap(getattr(module, name)))
        if sys.platform.startswith("linux"):
            with contextlib.suppress(OSError, AttributeError):
                ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
        _before = frozenset(p.pid for p in _children())
        _installed = True


def _children() -> list[psutil.Process]:
    try:
        children: list[psutil.Process] = psutil.Process().children()
        return children
    except psutil.Error:
        return []


def _left(noted: list[int]) -> list[psutil.Process]:
    """What of the session's processes still runs: each noted one with its descendants, and the
    orphans this process adopted that no other open session started."""
    found: dict[int, psutil.Process] = {}
    for pid in noted:
        with contextlib.suppress(psutil.Error):
            proc = psutil.Process(pid)
            if proc.status() != psutil.STATUS_ZOMBIE:
                found[pid] = proc
            for child in proc.children(recursive=True):
                found[child.pid] = child
    with _lock:
        others = {pid for pids in _noted.values() for pid in pids}
    for child in _children():
        if child.pid in _before or child.pid in _outside or child.pid in others or child.pid in found:
            continue
        with contextlib.suppress(psutil.Error):
            if child.status() != psutil.STATUS_ZOMBIE:
                found[child.pid] = child
                found.update((c.pid, c) for c in child.children(recursive=True))
    return list(found.values())


def _end(procs: list[psutil.Process]) -> None:
    for proc in procs:
        with contextlib.suppress(psutil.Error):
            proc.kill()
    psutil.wait_procs(procs, timeout=GRACE_S)


def _reap(noted: list[int]) -> None:
    """The noted processes that exited by themselves and nobody waited for: no zombie is left."""
    for pid in noted:
        with contextlib.suppress(ChildProcessError, OSError):
            os.waitpid(pid, os.WNOHANG)


@dataclass
class Ended:
    """What :func:`ended_with_session` ended when its session was over (0 until then)."""

    processes: int = 0


@contextlib.contextmanager
def ended_with_session() -> Iterator[Ended]:
    """Around one session: on the way out, what it started and left running is ended and
    counted in the :class:`Ended` yielded. A process started by a way the table does not know
    (a raw ``fork`` through ctypes) is not noted; if it leaves its parent, it is found the next
    time a session of this process notes a start."""
    install()
    ident = threading.get_ident()
    noted: list[int] = []
    with _lock:
        _noted[ident] = noted
    ended = Ended()
    try:
        yield ended
    finally:
        with _lock:
            _noted.pop(ident, None)
        left = _left(noted) if noted else []
        if left:
            _end(left)
        _reap(noted)
        ended.processes = len(left)
