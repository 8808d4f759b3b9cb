"""A stdio pass-through that records every line both ways: ``stdio_tee.py LOG -- COMMAND...``.

Why: when the official SDK client drives our server, the SDK parses the
replies itself; to check them against the models too (and to see that it sent
``server/discover`` first) the tests put this between them. Each line crosses
unchanged; LOG gets one JSON object per line, ``{"dir": "c2s"|"s2c", "line": ...}``.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from typing import IO


def _pump(src: IO[bytes], dst: IO[bytes], direction: str, log: IO[str], lock: threading.Lock) -> None:
    for raw in src:
        with lock:
            log.write(
                json.dumps({"dir": direction, "line": raw.decode("utf-8", "replace").rstrip("\r\n")}) + "\n"
            )
            log.flush()
        dst.write(raw)
        dst.flush()
    dst.close()


def main(argv: list[str]) -> int:
    log_path, sep, *command = argv
    if sep != "--" or not command:
        print("usage: stdio_tee.py LOG -- COMMAND...", file=sys.stderr)
        return 2
    child = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert child.stdin is not None and child.stdout is not None
    lock = threading.Lock()
    with open(log_path, "a", encoding="utf-8") as log:
        up = threading.Thread(
            target=_pump, args=(sys.stdin.buffer, child.stdin, "c2s", log, lock), daemon=True
        )
        up.start()
        _pump(child.stdout, sys.stdout.buffer, "s2c", log, lock)
        code = child.wait()
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
