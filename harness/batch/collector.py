"""The cyclic garbage collector, set as a process that runs sessions one after another wants it.

Why: a world session allocates tens of thousands of containers (an environment's copy, its
messages, its trace), almost all freed by reference counting the moment the session ends, while a
worker holds a few hundred thousand that live as long as it does (AgentDojo's environments and
pydantic models, BFCL's tasks and data, the families' draws, the caches). CPython's default
thresholds, ``(700, 10, 10)``, run a young collection every 700 allocations, and, as the long-lived
heap grows, full ones that walk all of it; measured in the worlds' study (issue 48), the collector
was a third of a BFCL or workspace session's time. Two standard settings:

* **a young generation of** :data:`YOUNG` **objects**, not 700: a session's garbage is mostly freed
  by reference counts before any collection would look at it, so a young collection finds
  little whenever it runs; running it 70 times less often costs a few megabytes of cycles held a
  little longer;
* **the long-lived heap frozen after the first task** (``gc.freeze()`` after a ``gc.collect()``):
  what the imports and the first sessions' caches made moves to the permanent generation, which
  no collection walks. It is what pre-forking servers do for the same reason. A cycle made
  before the freeze that later becomes garbage is not collected; the caches that could make one
  are bounded.

When a cycle is collected changes no session's result: nothing in a session reads the
collector, so rows and traces are the same either way (``tests/batch/test_collector.py`` runs a
batch both ways). The settings apply to processes the harness owns for the batch: a pool's
workers (:func:`settle`, from their initializer, for their life) and the run's own process
under the serial executor (:func:`serial`, undone when the batch ends). A Dask cluster's workers
are not ours and are left as they are.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator

YOUNG = 50_000
"""The young generation's threshold while sessions run (CPython's default is 700)."""

_freeze_pending = False
"""Whether the end of the next task freezes the heap (a settled process, before its first)."""


def settle() -> None:
    """This process runs sessions from now on: the young threshold raised, the heap frozen after
    the next task ends (:func:`task_ended`)."""
    global _freeze_pending
    _, middle, old = gc.get_threshold()
    gc.set_threshold(YOUNG, middle, old)
    _freeze_pending = True


def task_ended() -> None:
    """A task of sessions ended here: the first one after :func:`settle` freezes what is left."""
    global _freeze_pending
    if _freeze_pending:
        _freeze_pending = False
        gc.collect()
        gc.freeze()


@contextlib.contextmanager
def serial() -> Iterator[None]:
    """Sessions run in this process for a while (the serial executor): settled, and on leaving,
    the thresholds as they were and the frozen heap handed back to the collector."""
    global _freeze_pending
    before, frozen_before = gc.get_threshold(), gc.get_freeze_count()
    settle()
    try:
        yield
    finally:
        _freeze_pending = False
        gc.set_threshold(*before)
        if not frozen_before:  # a heap someone else froze stays theirs (frozen, and not by us)
            gc.unfreeze()
