"""How a tool function is run: directly (the server's default), or on a thread with a deadline.

The server stays sans-IO: by default ``tools/call`` calls the tool function in
place and nothing here is involved. A transport that serves real clients (``harness
serve``) passes ``MCPServer(..., tool_runner=ThreadedRunner(30.0))`` so that a
tool which hangs is cut at its deadline instead of wedging the session.

A :data:`ToolRunner` is called with ``(tool name, function, arguments)`` and
returns what the function returned, or raises. Whatever it raises goes through
the active error-handling strategy like any tool failure, so a timeout reaches
the client as ``isError`` "ERROR: tool 'x' timed out after 30s" under ``is_error``,
as -32603 under ``collapse``, and so on.

Rules held by :class:`ThreadedRunner`:

* A Python thread cannot be killed. A tool past its deadline is *abandoned*: it
  keeps running on its daemon thread, its eventual value is dropped, and the
  caller gets :class:`ToolTimeout` at the deadline. At most ``max_abandoned``
  such threads may be alive at once; past that, calls fail at once with
  :class:`ToolTimeout` rather than pile up threads.
* A tool may call back into the server (``server.handle`` from inside a tool).
  Every call gets its own thread and no lock is held, so this cannot deadlock;
  a nested call inherits the caller's deadline (never a later one) and nesting
  is capped at ``max_depth``, so a tool that calls itself forever ends too.
* ``SystemExit`` or any other non-``Exception`` raised by a tool becomes
  :class:`ToolAborted`: a tool cannot end the server process.
"""

from __future__ import annotations

import contextvars
import threading
import time
from collections.abc import Callable
from typing import Any

from harness.protocol.tools import ToolFn

ToolRunner = Callable[[str, ToolFn, dict[str, Any]], Any]
"""``runner(name, fn, arguments)``: run one tool call, return its value or raise."""

DEFAULT_CALL_TIMEOUT = 30.0
"""Seconds a tool may run under ``harness serve`` before it is cut."""

DEFAULT_MAX_DEPTH = 8
"""How deep tools may call tools through the server before a call is refused."""

DEFAULT_MAX_ABANDONED = 32
"""How many timed-out tool threads may still be running before new calls are refused."""


class ToolTimeout(Exception):
    """A tool did not return before its deadline (or could not be started for lack of time)."""


class ToolAborted(Exception):
    """A tool raised something that is not an ``Exception`` (``SystemExit``, ...)."""


class ToolNesting(Exception):
    """Tools called tools through the server deeper than the runner allows."""


def run_direct(name: str, fn: ToolFn, arguments: dict[str, Any]) -> Any:
    """The default: call the tool in place (what the server does when given no runner)."""
    return fn(**arguments)


_CALLER: contextvars.ContextVar[tuple[float, int] | None] = contextvars.ContextVar(
    "harness_tool_caller", default=None
)
"""(deadline, depth) of the tool call the current thread is running, if any."""


class ThreadedRunner:
    """Run each tool call on its own daemon thread and give up on it at ``timeout`` seconds."""

    def __init__(
        self,
        timeout: float = DEFAULT_CALL_TIMEOUT,
        *,
        max_depth: int = DEFAULT_MAX_DEPTH,
        max_abandoned: int = DEFAULT_MAX_ABANDONED,
    ) -> None:
        if not timeout > 0:
            raise ValueError("timeout must be a positive number of seconds")
        if max_depth < 1 or max_abandoned < 0:
            raise ValueError("max_depth must be >= 1 and max_abandoned >= 0")
        self.timeout = timeout
        self.max_depth = max_depth
        self.max_abandoned = max_abandoned
        self._lock = threading.Lock()
        self._abandoned = 0

    @property
    def abandoned(self) -> int:
        """Timed-out tool threads that have not finished yet."""
        with self._lock:
            return self._abandoned

    def __call__(self, name: str, fn: ToolFn, arguments: dict[str, Any]) -> Any:
        now = time.monotonic()
        caller = _CALLER.get()
        deadline, depth, budget = now + self.timeout, 1, self.timeout
        if caller is not None:
            depth = caller[1] + 1
            if caller[0] < deadline:
                deadline, budget = caller[0], caller[0] - now
        if depth > self.max_depth:
            raise ToolNesting(f"tool {name!r} not run: tools nested deeper than {self.max_depth} calls")
        if budget <= 0:
            raise ToolTimeout(f"tool {name!r} not run: the calling tool's deadline has passed")
        with self._lock:
            if self._abandoned >= self.max_abandoned:
                raise ToolTimeout(
                    f"tool {name!r} not run: {self._abandoned} earlier calls still hang past their timeout"
                )
        call = _Call(self, fn, arguments, (deadline, depth))
        thread = threading.Thread(target=call.run, name=f"tool:{name}", daemon=True)
        thread.start()
        if not call.done.wait(budget) and call.abandon():
            raise ToolTimeout(f"tool {name!r} timed out after {budget:.3g}s")
        if call.error is None:
            return call.value
        if isinstance(call.error, Exception):
            raise call.error
        raise ToolAborted(f"tool {name!r} raised {type(call.error).__name__}") from call.error

    def _release(self) -> None:
        with self._lock:
            self._abandoned -= 1


class _Call:
    """One tool call in flight: its outcome, and who gave up on whom (under the runner's lock)."""

    def __init__(
        self, runner: ThreadedRunner, fn: ToolFn, arguments: dict[str, Any], caller: tuple[float, int]
    ) -> None:
        self.runner, self.fn, self.arguments, self.caller = runner, fn, arguments, caller
        self.context = contextvars.copy_context()
        self.done = threading.Event()
        self.value: Any = None
        self.error: BaseException | None = None
        self.abandoned = False

    def run(self) -> None:
        try:
            self.value = self.context.run(self._in_context)
        except BaseException as exc:  # reported to the caller; a thread has nobody else to tell
            self.error = exc
        with self.runner._lock:
            self.done.set()
            late = self.abandoned
        if late:
            self.runner._release()

    def _in_context(self) -> Any:
        _CALLER.set(self.caller)
        return self.fn(**self.arguments)

    def abandon(self) -> bool:
        """Give up on the call; False if it finished in the meantime (then its outcome stands)."""
        with self.runner._lock:
            if self.done.is_set():
                return False
            self.abandoned = True
            self.runner._abandoned += 1
            return True
