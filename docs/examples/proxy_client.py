"""A client that waits for each answer, through ``harness proxy`` to the demo lab (docs/proxy.md).

    python docs/examples/proxy_client.py [PROXY OPTIONS...]

runs ``harness proxy PROXY OPTIONS -- harness serve --demo``, lists the tools, calls ``weather``
four times and ``add`` twice (in its old and its renamed shape), lists the tools again, and
prints one line per step: what the client got.
"""

from __future__ import annotations

import json
import sys
import time
from typing import Any

from harness.protocol import MCPClient, RPCError
from harness.transports import StdioTransport


def shown(call: Any) -> str:
    try:
        out = call()
    except RPCError as exc:
        return f"error {exc.code}: {exc.message}"
    if isinstance(out, list):
        return "tools: " + ", ".join(t["name"] for t in out)
    text = out["content"][0]["text"]
    return f"isError: {text}" if out.get("isError") else text


def main(options: list[str]) -> None:
    harness = [sys.executable, "-m", "harness.cli.main"]
    argv = [*harness, "proxy", *options, "--", *harness, "serve", "--demo"]
    client = MCPClient(StdioTransport(argv, timeout=60))
    client.initialize()
    steps = [("list", client.list_tools)]
    steps += [("weather Oslo", lambda: client.call_tool("weather", {"city": "Oslo"}))] * 4
    steps += [
        ("add x=2 y=3", lambda: client.call_tool("add", {"x": 2, "y": 3})),
        ("add a=2 b=3", lambda: client.call_tool("add", {"a": 2, "b": 3})),
        ("list", lambda: client.list_tools(refresh=True)),
    ]
    for name, step in steps:
        print(f"{name:>13}  {shown(step)}")
        time.sleep(0.05)  # let a notification that follows an answer arrive before the next step
        notes = client.transport.take_notifications()
        for note in notes:
            print(f"{'':>13}  {json.dumps(note)}")
    client.close()


if __name__ == "__main__":
    main(sys.argv[1:])
