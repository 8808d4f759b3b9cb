"""One proxied connection at run time: a :class:`ProxyCore`, its upstream, a lock and a timer.

Everything that reaches the core goes through :meth:`ProxyLink._run` under one lock: the
client's messages (from the front), the upstream's (from its threads) and the timer's ticks.
So the core sees one input at a time, and what it says to send is sent in the order it said
it, before the next input: the trace and the wire agree.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

from harness.protocol.messages import Message, RequestId
from harness.protocol.server import DEFAULT_MAX_MESSAGE_BYTES
from harness.proxy.core import STOP_AT_END, Out, ProxyCore
from harness.proxy.upstream import Handlers, Upstream

ClientSink = Callable[[Message, RequestId | None], None]
"""Sends one message to the client; the second argument is the request it belongs to."""


class ProxyLink:
    """Bind ``core`` to ``upstream``; messages for the client go to ``sink``, warnings to ``warn``."""

    def __init__(
        self,
        core: ProxyCore,
        upstream: Upstream,
        sink: ClientSink,
        warn: Callable[[str], None],
        *,
        max_message: int = DEFAULT_MAX_MESSAGE_BYTES,
    ) -> None:
        self.max_message = max_message
        """Bytes a client's message may hold (``--max-message``); a longer one gets -32600."""
        self.core = core
        self.upstream = upstream
        self.sink = sink
        self.warn = warn
        self._cond = threading.Condition(threading.RLock())
        self._closed = False
        self._draining = False
        self._sleeping_until: float | None = None
        """When the timer wakes next on its own (None: not asleep, or asleep until told)."""
        self._timer = threading.Thread(target=self._tick, name="proxy-timer", daemon=True)

    def start(self) -> None:
        """Start the upstream (TransportError if it cannot start) and the timer."""
        self.upstream.start(
            Handlers(
                message=lambda m: self._run(lambda: self.core.from_upstream(m)),
                garbage=lambda line: self._run(lambda: self.core.upstream_garbage(line)),
                gone=lambda why: self._run(lambda: self.core.upstream_gone(why)),
                failed=lambda rid, why: self._run(lambda: self.core.request_failed(rid, why)),
                oversized=lambda limit: self._run(lambda: self.core.upstream_oversized(limit)),
            )
        )
        self._timer.start()

    def from_client(self, message: Any) -> None:
        """A message the client sent (parsed JSON)."""
        self._run(lambda: self.core.from_client(message))

    def client_unparseable(self, text: str, why: str) -> None:
        """The client wrote something that is not JSON."""
        self._run(lambda: self.core.client_unparseable(text, why))

    def client_oversized(self, limit: int) -> None:
        """The client wrote a line longer than ``limit`` bytes (read past, not held)."""
        self._run(lambda: self.core.client_oversized(limit))

    def _run(self, step: Callable[[], Out]) -> None:
        with self._cond:
            if self._closed:
                return
            out = step()
            for message in out.to_upstream:
                self.upstream.send(message)
            for message, related in out.to_client:
                self.sink(message, related)
            for line in out.warnings:
                self.warn(line)
            if out.crash:
                self.upstream.kill()
            due = self.core.next_due()
            sooner = due is not None and (self._sleeping_until is None or due < self._sleeping_until)
            if sooner or self._draining:
                self._cond.notify_all()  # the timer sleeps past something due sooner; drain rechecks

    def _tick(self) -> None:
        with self._cond:
            while not self._closed:
                due = self.core.next_due()
                left = None if due is None else due - self.core.now()
                if left is not None and left <= 0:
                    self._run(self.core.due)
                    continue
                self._sleeping_until = due
                self._cond.wait(left)
                self._sleeping_until = None

    def drain(self, limit: float | None) -> None:
        """Wait until every client request has its answer (at most ``limit`` seconds; None: no limit)."""
        deadline = None if limit is None else time.monotonic() + limit
        with self._cond:
            self._draining = True
            while not self._closed and self.core.busy():
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    return
                self._cond.wait(left)

    def busy(self) -> bool:
        """Whether a client request still waits for its answer."""
        with self._cond:
            return not self._closed and self.core.busy()

    def close(self, why: str = STOP_AT_END, hurry: threading.Event | None = None) -> dict[str, Any]:
        """Stop: every request still waiting is answered (:meth:`ProxyCore.stop`), the summary
        goes into the trace, the upstream is stopped (``hurry``: without waiting for it to exit
        on its own); the summary."""
        with self._cond:
            if not self._closed:
                self._run(lambda: self.core.stop(why))
                self._closed = True
                self.core.close()
            self._cond.notify_all()
        self.upstream.close(hurry)
        if self._timer.is_alive():
            self._timer.join(timeout=2.0)
        summary = self.core.summary()
        left = getattr(self.upstream, "not_ended", None)
        if left:  # the stop could not reach them (outside the server's group): named, not hidden
            summary["not_ended"] = list(left)
        return summary
