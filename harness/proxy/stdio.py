"""The stdio front: the proxy speaks newline-delimited JSON-RPC on its own stdin and stdout.

One client, one upstream, one :class:`~harness.proxy.link.ProxyLink`. Each line the client
writes is parsed and handed to the link (a line that is not JSON gets -32700, as a server
answers it) by a reader thread; whatever the link says to send the client is written as one
line, under a lock, since the upstream's reader and the timer write too. The main thread waits
for the end of stdin or a stop (:class:`Stop`, the SIGTERM and SIGINT handler), answers what
is still waiting, stops the upstream and returns the summary. Real clients close a server by
ending its input and then, two seconds later, sending SIGTERM (the official SDKs, the MCP
Inspector): either order ends the proxy the same way.
"""

from __future__ import annotations

import json
import signal
import threading
import time
from collections.abc import Callable
from typing import IO, Any

from harness.protocol.messages import Message, RequestId
from harness.protocol.server import parse_json
from harness.proxy.core import STOP_AT_END
from harness.proxy.link import ClientSink, ProxyLink
from harness.transports.stdio import fd_lines


class LineWriter:
    """Writes messages to a binary stream, one JSON line each; stops quietly once the reader is gone."""

    def __init__(self, stream: IO[bytes]) -> None:
        self.stream = stream
        self._lock = threading.Lock()
        self.broken = threading.Event()

    def __call__(self, message: Message, related: RequestId | None = None) -> None:
        data = json.dumps(message, separators=(",", ":"), ensure_ascii=False).encode() + b"\n"
        with self._lock:
            if self.broken.is_set():
                return
            try:
                self.stream.write(data)
                self.stream.flush()
            except (BrokenPipeError, OSError, ValueError):
                self.broken.set()


POLL_S = 0.05
"""How often the main thread looks whether the input ended or a stop was asked for."""


class Stop:
    """Why the proxy was asked to stop (a signal's name); the handler itself: ``signal(SIGTERM, stop)``.

    The handler only sets a name and an event. The main thread never waits on that event (it
    polls), so a signal landing anywhere in it cannot deadlock on a lock it holds itself; other
    threads (the upstream's stop) may wait on :attr:`event`.
    """

    def __init__(self) -> None:
        self.why: str | None = None
        self.event = threading.Event()

    def __call__(self, signum: int, frame: Any = None) -> None:
        if self.why is None:
            self.why = signal.Signals(signum).name
        self.event.set()

    @property
    def requested(self) -> bool:
        return self.why is not None


def _read_client(stdin: IO[bytes], link: ProxyLink, writer: LineWriter, ended: threading.Event) -> None:
    try:
        for raw in fd_lines(stdin, link.max_message):
            if writer.broken.is_set():
                break
            if raw is None:
                link.client_oversized(link.max_message)
                continue
            line = raw.strip()
            if not line:
                continue
            try:
                message = parse_json(line)
            except ValueError as exc:
                link.client_unparseable(line.decode("utf-8", "replace"), str(exc))
                continue
            link.from_client(message)
    except OSError:
        pass  # the input is gone: as its end
    finally:
        ended.set()


def serve_proxy_stdio(
    make_link: Callable[[ClientSink], ProxyLink],
    stdin: IO[bytes],
    stdout: IO[bytes],
    *,
    drain: float | None = None,
    stop: Stop | None = None,
) -> dict[str, Any]:
    """Run the proxy until stdin ends, the client stops reading, or ``stop`` is asked for (a
    signal); the connection's summary.

    ``make_link(sink)`` builds the link; its upstream is started here (TransportError if it
    cannot be). At the end of stdin, requests still in flight are answered first (for at most
    ``drain`` seconds; None: as long as the upstream timeout lets them take). Whatever still
    waits then, or when a stop is asked for, gets -32603 (:meth:`ProxyLink.close`), and the
    upstream is stopped: at once after a signal, after a grace at the end of input.
    """
    stop = stop if stop is not None else Stop()
    writer = LineWriter(stdout)
    link = make_link(writer)
    link.start()
    ended = threading.Event()
    threading.Thread(
        target=_read_client, args=(stdin, link, writer, ended), name="proxy-client-in", daemon=True
    ).start()
    try:
        while not stop.requested and not ended.wait(POLL_S):
            pass
        # End of input is not the end of the answers: a server answers what it has read first.
        deadline = None if drain is None else time.monotonic() + drain
        while not stop.requested and not writer.broken.is_set() and link.busy():
            if deadline is not None and time.monotonic() >= deadline:
                break
            time.sleep(POLL_S)
    except KeyboardInterrupt:  # no handler of ours (not the main thread's, or not installed)
        stop(signal.SIGINT)
    return link.close(stop.why or STOP_AT_END, hurry=stop.event)
