"""The demo lab over Streamable HTTP on a free port; the first line on stdout is its URL.

Why: ``harness probe URL`` must probe a Streamable HTTP endpoint in both eras (it used to look
for a command named like the URL). The tests start this peer, read the URL, probe it, and end
it. ``--strategy S`` and ``--elicit`` are as for ``harness serve --demo``. It serves until it
is terminated or its stdin closes.

``--refuse-before-initialize`` answers every POST without a session that is not ``initialize``
at once with HTTP 400 and the body the TypeScript SDK's server sends (``Bad Request: Server not
initialized``, id null): the probe must report that refusal, not wait for a reply and call it
silence.
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
from typing import Any

import uvicorn

from harness.fixtures.demo import build_demo_server
from harness.transports.http import StreamableHTTP, bind_socket

REFUSAL = json.dumps(
    {
        "jsonrpc": "2.0",
        "error": {"code": -32000, "message": "Bad Request: Server not initialized"},
        "id": None,
    }
).encode()


def refusing(app: Any) -> Any:
    """``app``, but a POST without a session that is not initialize gets 400 at once."""

    async def wrapped(scope: dict[str, Any], receive: Any, send: Any) -> None:
        headers = dict(scope.get("headers") or [])
        if scope["type"] != "http" or scope["method"] != "POST" or b"mcp-session-id" in headers:
            await app(scope, receive, send)
            return
        body, more = b"", True
        while more:
            message = await receive()
            body += message.get("body", b"")
            more = message.get("more_body", False)
        try:
            method = json.loads(body).get("method")
        except (ValueError, AttributeError):
            method = None
        if method != "initialize":
            await send({"type": "http.response.start", "status": 400,
                        "headers": [(b"content-type", b"application/json")]})  # fmt: skip
            await send({"type": "http.response.body", "body": REFUSAL})
            return
        replay = [{"type": "http.request", "body": body, "more_body": False}]

        async def again() -> Any:
            return replay.pop() if replay else await receive()

        await app(scope, again, send)

    return wrapped


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--strategy", default="is_error")
    parser.add_argument("--elicit", action="store_true")
    parser.add_argument("--refuse-before-initialize", action="store_true")
    options = parser.parse_args()
    transport = StreamableHTTP(lambda: build_demo_server(options.strategy, elicit=options.elicit))
    sock = bind_socket("127.0.0.1", 0)
    app = refusing(transport.app) if options.refuse_before_initialize else transport.app
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    while not server.started and thread.is_alive():
        thread.join(timeout=0.05)
    print(f"http://127.0.0.1:{sock.getsockname()[1]}{transport.path}", flush=True)
    sys.stdin.read()  # until the test closes our stdin
    transport.shutdown()
    server.should_exit = True
    thread.join(timeout=5)
