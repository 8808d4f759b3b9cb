"""A peer that answers ``initialize`` as a server does, then answers every request with one line
of ``HUGE`` bytes that never ends in a newline until the very end (the proxy must not hold it)."""

from __future__ import annotations

import json
import sys

HUGE = int(sys.argv[1]) if len(sys.argv) > 1 else 50_000_000

if __name__ == "__main__":
    for line in sys.stdin:
        message = json.loads(line)
        if "id" not in message:
            continue
        if message.get("method") == "initialize":
            result = {"protocolVersion": message["params"]["protocolVersion"], "capabilities": {"tools": {}},
                      "serverInfo": {"name": "huge", "version": "0"}}  # fmt: skip
            sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}) + "\n")
        else:
            head = '{"jsonrpc":"2.0","id":' + json.dumps(message["id"]) + ',"result":{"tools":[],"pad":"'
            sys.stdout.write(head)
            chunk = "x" * 65536
            for _ in range(HUGE // len(chunk)):
                sys.stdout.write(chunk)
            sys.stdout.write('"}}\n')
        sys.stdout.flush()
