"""The in-memory transport: proof of the layering, not a shortcut around it.

``send`` serializes the message, parses the bytes, hands the result to
``server.handle`` and sends the reply back the same way. Nothing but what JSON
can carry crosses; that is why the same client and server run unchanged over
stdio or HTTP. A ``tap`` sees every wire message (direction, bytes) for traces.

If an exception escapes the server (the ``escape`` strategy), the server is
dead: this and every later ``send`` raise :class:`ServerCrashed`.

Server-to-client requests (a handshake-era tool asking for input) are answered
while the transport waits for a reply, by ``on_request`` as every transport
answers them (:func:`~harness.protocol.messages.answer_request`); each answer is
handed to ``server.handle``, which returns the pending call's reply once it has
every answer. Notifications still go to :meth:`InMemoryTransport.take_notifications`.
"""

from __future__ import annotations

from collections.abc import Callable

from harness.protocol.codecs import get_codec
from harness.protocol.errors import INTERNAL_ERROR, ServerCrashed
from harness.protocol.messages import Message, answer_request, error_response
from harness.protocol.server import MCPServer

Tap = Callable[[str, bytes], None]
"""Called with ("c2s" | "s2c", wire bytes) for every message that crosses."""


class InMemoryTransport:
    """A client-side transport whose peer is an in-process :class:`MCPServer`."""

    def __init__(self, server: MCPServer, codec: str = "json", *, tap: Tap | None = None) -> None:
        self.server = server
        self.codec = get_codec(codec)
        self.tap = tap
        self.crashed: BaseException | None = None
        self.on_request: Callable[[Message], Message] | None = None
        """Answers a server-to-client request (the client sets it); None: ping gets {}, the rest -32601."""
        self._inbox: list[Message] = []
        self._asked: list[Message] = []

    def send(self, message: Message) -> Message | None:
        """Deliver one message; return the parsed reply, or None for a notification."""
        if self.crashed is not None:
            raise ServerCrashed(f"server is dead: {self.crashed!r}")
        encode, decode, tap = self.codec.encode, self.codec.decode, self.tap
        wire = encode(message)
        if tap is not None:
            tap("c2s", wire)
        reply = self._deliver(decode(wire))
        if self.server.has_notifications:
            self._drain()
        while reply is None and self._asked:
            reply = self._answer(self._asked.pop(0))
        if reply is None:
            return None
        try:
            wire = encode(reply)
        except (TypeError, ValueError, OverflowError) as exc:  # as handle_text does: -32603, not a crash
            wire = encode(error_response(reply.get("id"), INTERNAL_ERROR, f"reply not serializable: {exc}"))
        if tap is not None:
            tap("s2c", wire)
        parsed: Message = decode(wire)
        return parsed

    def _deliver(self, message: Message) -> Message | None:
        try:
            return self.server.handle(message)
        except Exception as exc:
            self.crashed = exc
            raise ServerCrashed(f"server raised {type(exc).__name__}: {exc}") from exc

    def _answer(self, request: Message) -> Message | None:
        """Answer one server-to-client request; the server's reply to that (None: still waiting)."""
        answer = answer_request(self.on_request, request)
        wire = self.codec.encode(answer)
        if self.tap is not None:
            self.tap("c2s", wire)
        reply = self._deliver(self.codec.decode(wire))
        if self.server.has_notifications:
            self._drain()
        return reply

    def take_notifications(self) -> list[Message]:
        """Server-to-client notifications received so far, oldest first."""
        if self.server.has_notifications:
            self._drain()  # events between sends (a tool added by the scenario) cross too
        out, self._inbox = self._inbox, []
        return out

    def _drain(self) -> None:
        encode, decode = self.codec.encode, self.codec.decode
        for note in self.server.take_notifications():
            wire = encode(note)
            if self.tap is not None:
                self.tap("s2c", wire)
            message = decode(wire)
            if "id" in message and "method" in message:
                self._asked.append(message)  # a request: answered while a reply is awaited
            else:
                self._inbox.append(message)

    def close(self) -> None:
        """Nothing to release in memory."""
