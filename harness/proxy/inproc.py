"""A :class:`ProxyCore` in the caller's own thread, as the transport of an :class:`MCPClient`.

``harness run --server`` sessions put the proxy between the harness's client and a real server
without a second process: :class:`ProxyTransport` is what :class:`~harness.protocol.client.MCPClient`
sends through (``send``, ``take_notifications``, ``close``), the core decides, and the upstream
(a server process over stdio, :class:`~harness.proxy.upstream.StdioUpstream`) moves the bytes.
Everything the upstream reports lands on a queue that only the caller's thread reads, so the
core sees one input at a time and its trace comes out in one order.

Time is the session's: the core's clock is a number the caller moves (a step's cost, a wait),
and the transport moves it on itself only when nothing else can happen: a call a ``timeout``
fault holds, or an upstream that has not answered within :attr:`ProxyTransport.wait_s` real
seconds (:attr:`~ProxyTransport.start_wait_s` for its first word: a server may be slow to
start), jumps the clock to the core's next deadline (the sim's ``call_timeout_s`` for a hung
call). So the same calls against a server that answers the same way give the same trace.

Beside the proxied traffic, :meth:`ProxyTransport.side_call` asks the upstream directly (ids
``harness-verify-N``, past the core: no fault, no strategy), for the harness's own reads of the
end state after the session.
"""

from __future__ import annotations

import queue
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from harness.faults.kinds import Clock
from harness.protocol.codecs import get_codec
from harness.protocol.errors import TransportError
from harness.protocol.messages import Message, RequestId, answer_request
from harness.protocol.stateless import LISTEN
from harness.proxy.core import Out, ProxyCore
from harness.proxy.upstream import Handlers, Upstream

SIDE_PREFIX = "harness-verify-"
"""The ids of :meth:`ProxyTransport.side_call` requests (never the core's)."""
DEFAULT_WAIT_S = 30.0
"""Real seconds the transport waits for the upstream before it lets the core's clock run out."""


@dataclass
class UpstreamCall:
    """A ``tools/call`` the core sent the server, and the server's answer (None: none yet)."""

    id: RequestId
    name: str
    arguments: dict[str, Any]
    reply: Message | None = None

    @property
    def succeeded(self) -> bool:
        """The server answered a result without ``isError``."""
        result = self.reply.get("result") if self.reply is not None else None
        return isinstance(result, dict) and result.get("isError") is not True

    @property
    def result(self) -> dict[str, Any]:
        result = self.reply.get("result") if self.reply is not None else None
        return result if isinstance(result, dict) else {}


@dataclass
class ProxyTransport:
    """An MCP client's transport: ``core`` in front of ``upstream``, driven from the caller's thread."""

    core: ProxyCore
    upstream: Upstream
    clock: Clock
    """The core's clock (``core`` was built with ``clock=lambda: clock.now``)."""
    codec: str = "json"
    wait_s: float = DEFAULT_WAIT_S
    start_wait_s: float = DEFAULT_WAIT_S
    """Real seconds the server has for its first message (the larger of this and ``wait_s``)."""
    on_request: Callable[[Message], Message] | None = None
    """Answers a request the server (or the proxy) sends the client; set by :class:`MCPClient`."""
    calls: list[UpstreamCall] = field(default_factory=list)
    """Every ``tools/call`` that reached the server, in order, with its answer."""
    crashed: bool = False
    """The core ended the server as a crash would (``escape``)."""
    gone: str | None = None
    """Why the server went away on its own (it exited, closed its output), or None."""
    _events: queue.Queue[tuple[str, Any, Any]] = field(default_factory=queue.Queue)
    _replies: dict[RequestId, Message] = field(default_factory=dict)
    _posted: set[RequestId] = field(default_factory=set)
    _notes: list[Message] = field(default_factory=list)
    _sent: dict[RequestId, UpstreamCall] = field(default_factory=dict)
    _side: int = 0
    _side_replies: dict[RequestId, Message | None] = field(default_factory=dict)
    _closed: bool = False
    _heard: bool = False

    def __post_init__(self) -> None:
        self._codec = get_codec(self.codec)

    def start(self) -> None:
        """Start the server (TransportError if it cannot be started)."""
        events = self._events
        self.upstream.start(
            Handlers(
                message=lambda m: events.put(("message", m, None)),
                garbage=lambda line: events.put(("garbage", line, None)),
                gone=lambda why: events.put(("gone", why, None)),
                failed=lambda rid, why: events.put(("failed", rid, why)),
            )
        )

    # -- the client's side ----------------------------------------------------------------

    def _wire(self, message: Message) -> Message:
        """The message as the wire carries it: serialized and parsed again, in the session's codec."""
        parsed: Message = self._codec.decode(self._codec.encode(message))
        return parsed

    def send(self, message: Message) -> Message | None:
        """Deliver one client message; its reply, or None for a notification or a response."""
        if self._closed:
            raise TransportError("the proxy transport is closed")
        sent = self._wire(message)
        self._apply(self.core.from_client(sent))
        if "method" not in sent or "id" not in sent:
            self._poll()
            return None
        rid = sent["id"]
        while rid not in self._replies:
            self._step()
        return self._replies.pop(rid)

    def post(self, message: Message) -> None:
        """Deliver a request without waiting for its reply (a ``subscriptions/listen`` stream):
        the reply, when the stream ends, comes with the notifications."""
        sent = self._wire(message)
        if isinstance(sent.get("id"), int | str):
            self._posted.add(sent["id"])
        self._apply(self.core.from_client(sent))
        self._poll()

    def take_notifications(self) -> list[Message]:
        """What reached the client outside a reply so far (the upstream's queue read first)."""
        self._poll()
        out, self._notes = self._notes, []
        return out

    def close(self) -> None:
        """The core's summary goes into its trace; the server is closed (stdin, then signals)."""
        if self._closed:
            return
        self._closed = True
        self.core.close()
        self.upstream.close()

    # -- moving messages ------------------------------------------------------------------

    def _apply(self, out: Out) -> None:
        for message in out.to_upstream:
            self._to_upstream(message)
        for message, _ in out.to_client:
            got = self._wire(message)
            if "method" not in got:
                rid = got.get("id")
                if isinstance(rid, int | str) and rid in self._posted:
                    self._posted.discard(rid)
                    self._notes.append(got)  # a stream's end: the client reads it as a notification
                elif isinstance(rid, int | str):
                    self._replies[rid] = got
            elif "id" in got:  # a request for the client: answered at once, as a host would
                answer = self._wire(answer_request(self.on_request, got))
                self._apply(self.core.from_client(answer))
            else:
                self._notes.append(got)
        if out.crash:
            self.crashed = True
            self.upstream.kill()

    def _to_upstream(self, message: Message) -> None:
        if message.get("method") == "tools/call" and "id" in message:
            params = message.get("params")
            params = params if isinstance(params, dict) else {}
            arguments = params.get("arguments")
            call = UpstreamCall(
                message["id"], str(params.get("name")), dict(arguments) if isinstance(arguments, dict) else {}
            )
            self.calls.append(call)
            self._sent[message["id"]] = call
        self.upstream.send(message)

    def _wait(self) -> float:
        """How long the next wait for the upstream may last, in real seconds."""
        return self.wait_s if self._heard else max(self.wait_s, self.start_wait_s)

    def _feed(self, kind: str, what: Any, why: Any) -> None:
        if kind == "message":
            self._heard = True
            rid = what.get("id") if isinstance(what, dict) else None
            if isinstance(rid, str) and rid in self._side_replies and "method" not in what:
                self._side_replies[rid] = what
                return
            if isinstance(rid, int | str) and "method" not in what and rid in self._sent:
                self._sent.pop(rid).reply = what
            self._apply(self.core.from_upstream(what))
        elif kind == "garbage":
            self._apply(self.core.upstream_garbage(what))
        elif kind == "gone":
            self.gone = self.gone or str(what)
            self._apply(self.core.upstream_gone(str(what)))
        else:
            self._apply(self.core.request_failed(what, str(why)))

    def _poll(self) -> None:
        """Handle whatever the upstream has reported already, without waiting."""
        while True:
            try:
                event = self._events.get_nowait()
            except queue.Empty:
                return
            self._feed(*event)

    def _waiting_upstream(self) -> bool:
        return any(p.method != LISTEN for p in self.core.pending.values())

    def _step(self) -> None:
        """One thing happens: the upstream says something, or the clock runs to the next deadline."""
        if not self._events.empty():
            self._poll()
            return
        if self._waiting_upstream() and self.gone is None and not self.crashed:
            try:
                event = self._events.get(timeout=self._wait())
            except queue.Empty:
                pass
            else:
                self._feed(*event)
                return
        due = self.core.next_due()
        if due is None:
            raise TransportError("the proxy has no answer and nothing left to wait for")
        self.clock.advance(max(due - self.core.now(), 0.0))
        self._apply(self.core.due())

    # -- the harness's own reads ---------------------------------------------------------------

    def side_call(
        self, name: str, arguments: dict[str, Any], meta: dict[str, Any] | None = None
    ) -> Message | None:
        """``tools/call`` sent straight to the server (no fault, no strategy), with ``meta`` as its
        ``_meta`` (a stateless-era request's); its reply, or None when the server is gone or has
        not answered within :attr:`wait_s` seconds."""
        if self.crashed or self.gone is not None:
            return None
        self._side += 1
        rid = f"{SIDE_PREFIX}{self._side}"
        self._side_replies[rid] = None
        params: dict[str, Any] = {"name": name, "arguments": arguments}
        if meta is not None:
            params["_meta"] = meta
        self.upstream.send({"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": params})
        while self._side_replies[rid] is None and self.gone is None:
            try:
                event = self._events.get(timeout=self._wait())
            except queue.Empty:
                break
            self._feed(*event)
        return self._side_replies.pop(rid)
