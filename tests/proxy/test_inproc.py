"""The in-process proxy transport: how long it waits for a real server, in real seconds.

A server gets ``start_wait_s`` for its first word (starting a process can be slow on a loaded
machine) and ``wait_s`` for every answer after it; past that the call is hung and the session's
clock jumps to its deadline.
"""

from __future__ import annotations

import threading
from typing import Any

from harness.faults.kinds import Clock
from harness.protocol.messages import Message
from harness.proxy.core import ProxyCore
from harness.proxy.inproc import ProxyTransport
from harness.proxy.upstream import Handlers

INIT = {
    "protocolVersion": "2025-06-18",
    "capabilities": {"tools": {}},
    "serverInfo": {"name": "slow", "version": "1"},
}


class Slow:
    """An upstream that answers each request after its own delay (real seconds), from a timer thread."""

    def __init__(self, delays: list[float]) -> None:
        self.delays = delays
        self.timers: list[threading.Timer] = []

    def start(self, handlers: Handlers) -> None:
        self.handlers = handlers

    def send(self, message: Message) -> None:
        if "method" not in message or "id" not in message:
            return
        result = INIT if message["method"] == "initialize" else {"tools": []}
        reply = {"jsonrpc": "2.0", "id": message["id"], "result": result}
        timer = threading.Timer(self.delays.pop(0), self.handlers.message, [reply])
        self.timers.append(timer)
        timer.start()

    def kill(self) -> None:
        self.close()

    def close(self) -> None:
        for timer in self.timers:
            timer.cancel()


def request(rid: int, method: str, params: dict[str, Any]) -> Message:
    return {"jsonrpc": "2.0", "id": rid, "method": method, "params": params}


def link(delays: list[float], **waits: float) -> ProxyTransport:
    clock = Clock()
    transport = ProxyTransport(ProxyCore(clock=lambda: clock.now), Slow(delays), clock, **waits)
    transport.start()
    return transport


HELLO = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}


def test_a_slow_start_gets_the_start_wait_then_a_slow_answer_is_hung() -> None:
    transport = link([0.3, 0.3], wait_s=0.02, start_wait_s=10.0)
    first = transport.send(request(1, "initialize", HELLO))
    assert first is not None and first.get("result", {}).get("serverInfo") == INIT["serverInfo"]
    transport.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    second = transport.send(request(2, "tools/list", {}))
    assert second is not None and "error" in second and "did not answer" in second["error"]["message"]
    transport.close()


def test_the_start_wait_never_shortens_the_answer_wait() -> None:
    transport = link([0.2], wait_s=10.0, start_wait_s=0.01)
    first = transport.send(request(1, "initialize", HELLO))
    assert first is not None and "result" in first
    transport.close()
