"""The demo lab over Streamable HTTP on a free port; the first line on stdout is its URL.

Why: ``harness probe URL`` must probe a Streamable HTTP endpoint in both eras (it used to look
for a command named like the URL). The tests start this peer, read the URL, probe it, and end
it. ``--strategy S`` and ``--elicit`` are as for ``harness serve --demo``. It serves until it
is terminated or its stdin closes.
"""

from __future__ import annotations

import argparse
import sys
import threading

import uvicorn

from harness.fixtures.demo import build_demo_server
from harness.transports.http import StreamableHTTP, bind_socket

if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--strategy", default="is_error")
    parser.add_argument("--elicit", action="store_true")
    options = parser.parse_args()
    transport = StreamableHTTP(lambda: build_demo_server(options.strategy, elicit=options.elicit))
    sock = bind_socket("127.0.0.1", 0)
    server = uvicorn.Server(uvicorn.Config(transport.app, log_level="warning", lifespan="off"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    while not server.started and thread.is_alive():
        thread.join(timeout=0.05)
    print(f"http://127.0.0.1:{sock.getsockname()[1]}{transport.path}", flush=True)
    sys.stdin.read()  # until the test closes our stdin
    transport.shutdown()
    server.should_exit = True
    thread.join(timeout=5)
