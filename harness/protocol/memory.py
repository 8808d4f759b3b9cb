"""The in-memory transport: proof of the layering, not a shortcut around it.

``send`` serializes the message, parses the bytes, hands the result to
``server.handle`` and sends the reply back the same way. Nothing but what JSON
can carry crosses; that is why the same client and server run unchanged over
stdio or HTTP. A ``tap`` sees every wire message (direction, bytes) for traces.

If an exception escapes the server (the ``escape`` strategy), the server is
dead: this and every later ``send`` raise :class:`ServerCrashed`.
"""

from __future__ import annotations

from collections.abc import Callable

from harness.protocol.codecs import get_codec
from harness.protocol.errors import INTERNAL_ERROR, ServerCrashed
from harness.protocol.messages import Message, error_response
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
        self._inbox: list[Message] = []

    def send(self, message: Message) -> Message | None:
        """Deliver one message; return the parsed reply, or None for a notification."""
        if self.crashed is not None:
            raise ServerCrashed(f"server is dead: {self.crashed!r}")
        encode, decode, tap = self.codec.encode, self.codec.decode, self.tap
        wire = encode(message)
        if tap is not None:
            tap("c2s", wire)
        try:
            reply = self.server.handle(decode(wire))
        except Exception as exc:
            self.crashed = exc
            raise ServerCrashed(f"server raised {type(exc).__name__}: {exc}") from exc
        if self.server.has_notifications:
            self._drain()
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
            self._inbox.append(decode(wire))

    def close(self) -> None:
        """Nothing to release in memory."""
