"""``ProxyPair``: a :class:`~harness.proxy.ProxyCore` between a test and a real server, in memory.

The upstream is an :class:`~harness.protocol.MCPServer` answering through ``handle`` (each
message serialized both ways, as the in-memory transport does), or nothing at all (a hung
server). Time is a number the test moves. Every line the core records is kept.
"""

from __future__ import annotations

import json
from collections import deque
from typing import Any

from harness.protocol.messages import Message
from harness.protocol.server import MCPServer
from harness.proxy.core import Out, ProxyCore


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


class ProxyPair:
    """A test client -> ProxyCore -> an in-memory upstream (None: one that never answers)."""

    def __init__(self, server: MCPServer | None, **core: Any) -> None:
        self.clock = Clock()
        self.lines: list[bytes] = []
        self.core = ProxyCore(clock=self.clock, record=self.lines.append, **core)
        self.server = server
        self.received: list[Message] = []
        self.related: list[Any] = []
        self.upstream_got: list[Message] = []
        self.warnings: list[str] = []
        self.crashed = False
        self._next = 0

    def _pump(self, first: Out) -> list[Message]:
        got: list[Message] = []
        queue = deque([first])
        while queue:
            out = queue.popleft()
            for message, related in out.to_client:
                got.append(json.loads(json.dumps(message)))
                self.related.append(related)
            self.warnings += out.warnings
            if out.crash:
                self.crashed = True
            for message in out.to_upstream:
                self.upstream_got.append(message)
                if self.server is None or self.crashed:
                    continue
                reply = self.server.handle(json.loads(json.dumps(message)))
                for note in self.server.take_notifications():
                    queue.append(self.core.from_upstream(json.loads(json.dumps(note))))
                if reply is not None:
                    queue.append(self.core.from_upstream(json.loads(json.dumps(reply))))
        self.received += got
        return got

    def send(self, message: Any) -> list[Message]:
        """Feed one client message; what the client received because of it."""
        return self._pump(self.core.from_client(message))

    def upstream(self, message: Any) -> list[Message]:
        """Feed one message as if the upstream sent it."""
        return self._pump(self.core.from_upstream(message))

    def request(self, method: str, params: dict[str, Any] | None = None) -> Message:
        """Send a request; its reply (the last message with its id)."""
        self._next += 1
        message: Message = {"jsonrpc": "2.0", "id": self._next, "method": method}
        if params is not None:
            message["params"] = params
        got = self.send(message)
        replies = [m for m in got if m.get("id") == self._next and "method" not in m]
        assert replies, f"no reply to {method}: {got}"
        return replies[-1]

    def handshake(self, capabilities: dict[str, Any] | None = None, version: str = "2025-11-25") -> Message:
        reply = self.request(
            "initialize",
            {
                "protocolVersion": version,
                "capabilities": capabilities or {},
                "clientInfo": {"name": "t", "version": "0"},
            },
        )
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return reply

    def call(self, name: str, arguments: dict[str, Any] | None = None) -> Message:
        return self.request("tools/call", {"name": name, "arguments": arguments or {}})

    def tick(self, seconds: float) -> list[Message]:
        self.clock.now += seconds
        return self._pump(self.core.due())

    def trace(self) -> list[dict[str, Any]]:
        return [json.loads(line) for line in self.lines]
