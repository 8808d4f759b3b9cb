"""The JSONL session trace: every wire message, plus what the harness did off the wire.

One line per record, written as it happens and hashed as it goes (sha256 of the
exact bytes: the session's ``trace_hash``):

* ``{"dir":"c2s","msg":...}`` / ``{"dir":"s2c","msg":...}``: a message as it
  crossed the in-memory transport, byte for byte in the session's codec.
* ``{"dir":"harness","step":N,...}``: an injected fault, a tool-list event, an
  agent action that sends nothing (wait, finish, give up), what the host showed
  the agent for an RPC error, and the end of the session.

No wall-clock value is ever written (times are the session's virtual clock), so
the same inputs give byte-identical traces.
"""

from __future__ import annotations

import hashlib
from typing import IO, Any

from harness.protocol.codecs import compact_text

_DIRS = {"c2s": b'{"dir":"c2s","msg":', "s2c": b'{"dir":"s2c","msg":'}
_dumps = compact_text


class Trace:
    """Hash every line; also write it to ``sink`` (a binary file) when given."""

    def __init__(self, sink: IO[bytes] | None = None) -> None:
        self.sink = sink
        self._hash = hashlib.sha256()
        self._update = self._hash.update
        self.lines = 0

    def _emit(self, line: bytes) -> None:
        self._update(line)
        if self.sink is not None:
            self.sink.write(line)
        self.lines += 1

    def wire(self, direction: str, data: bytes) -> None:
        """The transport's tap: one wire message (``_emit`` inlined: this runs twice a call)."""
        line = _DIRS[direction] + data + b"}\n"
        self._update(line)
        if self.sink is not None:
            self.sink.write(line)
        self.lines += 1

    def note(self, step: int, **fields: Any) -> None:
        """A harness record (fault, event, action, host view, end)."""
        self._emit(_dumps({"dir": "harness", "step": step, **fields}).encode() + b"\n")

    def hexdigest(self) -> str:
        return self._hash.hexdigest()
