"""``live_http``: a :class:`~harness.transports.StreamableHTTP` on a real uvicorn, for one test or module.

The HTTP tests that need real sockets (our client, the SDK's client, held
streams) all start a server the same way: a free 127.0.0.1 port from
:func:`~harness.transports.http.bind_socket`, uvicorn in a daemon thread, and on
the way out the transport's sessions closed first (so open GET streams let
uvicorn stop promptly).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import uvicorn

from harness.transports.http import StreamableHTTP, bind_socket


@contextmanager
def live_http(transport: StreamableHTTP, app: Any = None) -> Iterator[str]:
    """Serve ``transport`` (or ``app``, an ASGI wrapper around it) live; yield its endpoint URL."""
    sock = bind_socket("127.0.0.1", 0)
    port = sock.getsockname()[1]
    config = uvicorn.Config(
        transport.app if app is None else app,
        log_level="warning",
        lifespan="off",
        timeout_graceful_shutdown=1,
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.01)
    try:
        assert server.started, "uvicorn did not start"
        yield f"http://127.0.0.1:{port}{transport.path}"
    finally:
        transport.shutdown()
        server.should_exit = True
        thread.join(timeout=10)
        sock.close()
