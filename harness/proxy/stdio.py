"""The stdio front: the proxy speaks newline-delimited JSON-RPC on its own stdin and stdout.

One client, one upstream, one :class:`~harness.proxy.link.ProxyLink`. Each line the client
writes is parsed and handed to the link (a line that is not JSON gets -32700, as a server
answers it); whatever the link says to send the client is written as one line, under a lock,
since the upstream's reader and the timer write too. End of stdin closes the upstream and
returns the summary.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from typing import IO, Any

from harness.protocol.messages import Message, RequestId
from harness.protocol.server import parse_json
from harness.proxy.link import ClientSink, ProxyLink


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


def serve_proxy_stdio(
    make_link: Callable[[ClientSink], ProxyLink],
    stdin: IO[bytes],
    stdout: IO[bytes],
    *,
    drain: float | None = None,
) -> dict[str, Any]:
    """Run the proxy until stdin ends (or the client stops reading); the connection's summary.

    ``make_link(sink)`` builds the link; its upstream is started here (TransportError if it
    cannot be). At the end of stdin, requests still in flight are answered first (for at most
    ``drain`` seconds; None: as long as the upstream timeout lets them take).
    """
    writer = LineWriter(stdout)
    link = make_link(writer)
    link.start()
    try:
        for raw in iter(stdin.readline, b""):
            if writer.broken.is_set():
                break
            line = raw.strip()
            if not line:
                continue
            try:
                message = parse_json(line)
            except ValueError as exc:
                text = line.decode("utf-8", "replace")
                link.client_unparseable(text, str(exc))
                continue
            link.from_client(message)
    except KeyboardInterrupt:
        return link.close()
    # End of input is not the end of the answers: a server answers what it has read first.
    link.drain(None if drain is None else drain)
    return link.close()
