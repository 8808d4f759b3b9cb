"""One server process under probe: bytes in, one bounded wait, an :class:`Outcome` out.

A :class:`ProbeSession` wraps :class:`~harness.transports.stdio.StdioTransport`
and never raises for anything the server does: every exchange ends, within its
timeout, in a reply, ``no reply``, ``garbage`` or ``server died``. The first
exchange of a process may take ``startup_timeout`` (the server is still
importing) until the server writes anything; from then on, and for every later
exchange, it gets ``timeout``.

The session tracks the handshake state the probe has driven it to (it cannot
see the server's own). A handshake that failed is remembered, so later steps on
the same process report ``not run`` at once instead of waiting again.

A message that carries ``method`` is a request or notification *from* the
peer, never the answer to one of ours, whatever its id. A message equal to one
the probe itself wrote is an echo (``cat`` sends everything back): it ends the
exchange as ``echoed`` and is neither answered nor taken as a reply. The
session keeps the evidence the runner needs to tell a peer that is not an MCP
server at all: the first echo, the first JSON object that is no JSON-RPC
message, and whether any valid JSON-RPC response arrived.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from harness.probe.outcomes import (
    DIED,
    ECHOED,
    GARBAGE,
    NO_REPLY,
    NOT_RUN,
    Outcome,
    classify_reply,
    shorten,
)
from harness.protocol.errors import TransportError
from harness.protocol.lifecycle import State
from harness.protocol.messages import Message, error_response, is_valid_id, response
from harness.transports.stdio import StdioTransport

CLIENT_INFO = {"name": "harness-probe", "version": "1"}

STATE_RANK: dict[State, int] = {State.NEW: 0, State.INITIALIZING: 1, State.READY: 2}
"""Handshake states in the only order a session can move through them."""

POLL = 0.05
"""Seconds between looks at the garbage count while waiting (a start-up wait ends early on output)."""

CLOSE_GRACE = 0.5
"""Seconds a server gets to exit after its stdin closes, before it is terminated."""


@dataclass(frozen=True)
class Reply:
    """One exchange: the reply ``message``, or ``failure`` (no reply, garbage, died)."""

    message: Message | None = None
    failure: Outcome | None = None


class ProbeSession:
    """Drive one server process; ``state`` is how far the probe took its handshake."""

    def __init__(
        self, command: Sequence[str], version: str, *, timeout: float, startup_timeout: float
    ) -> None:
        self.version = version
        self.timeout = timeout
        self.startup_timeout = startup_timeout
        self.state = State.NEW
        self.handshake_failure: Outcome | None = None
        self.server_info: dict[str, Any] | None = None
        self.answered_version: str | None = None
        self.echoed: Message | None = None
        """The first of our own messages the peer sent back, if it did."""
        self.not_jsonrpc: Message | None = None
        """The first JSON object from the peer that is neither a request, a notification nor a response."""
        self.responded = False
        """Whether the peer sent at least one valid JSON-RPC response (result or error, with an id)."""
        self._sent: set[str] = set()
        self._next_id = 0
        self._exchanged = False
        self._eof = False
        self._stderr = tempfile.TemporaryFile()  # noqa: SIM115 -- lives as long as the session; close() closes it
        try:
            self.transport = StdioTransport(command, timeout=timeout, stderr=self._stderr)
        except BaseException:
            self._stderr.close()
            raise

    # -- raw exchanges ---------------------------------------------------------------

    def new_id(self) -> int:
        """A fresh request id (1, 2, 3 ... per process: deterministic)."""
        self._next_id += 1
        return self._next_id

    @property
    def alive(self) -> bool:
        """Whether the process still runs and its output is open."""
        return not self._eof and self.transport.process.poll() is None

    def exchange(self, data: bytes, reply_ids: Sequence[object]) -> Reply:
        """Write one line; wait for a reply whose id is one of ``reply_ids`` (None: id null)."""
        wait = self.timeout if self._exchanged else max(self.timeout, self.startup_timeout)
        self._exchanged = True
        try:
            self._write(data)
        except TransportError:
            return Reply(failure=self._died())
        garbage_before = seen = len(self.transport.garbage)
        deadline = time.monotonic() + wait
        while True:
            remaining = deadline - time.monotonic()
            try:
                msg = self.transport.next_message(min(remaining, POLL))
            except TransportError:
                return Reply(failure=self._died())
            if len(self.transport.garbage) > seen:
                # The server is up and talking: from now on it gets the ordinary timeout.
                seen = len(self.transport.garbage)
                deadline = min(deadline, time.monotonic() + self.timeout)
            if msg is None:
                if remaining > POLL:
                    continue
                return Reply(failure=self._silence(wait, garbage_before))
            deadline = min(deadline, time.monotonic() + self.timeout)  # talking: ordinary timeout from now
            if _canonical(msg) in self._sent:
                if self.echoed is None:
                    self.echoed = msg
                return Reply(failure=Outcome(ECHOED, shorten(f"sent our own message back: {_text(msg)}")))
            if "method" in msg:
                # A request or notification from the peer: never the answer to our id.
                self._from_server(msg)
                continue
            if not _is_response(msg):
                if self.not_jsonrpc is None:
                    self.not_jsonrpc = msg
            else:
                self.responded = True
            if "id" in msg and _id_in(msg["id"], reply_ids):
                return Reply(message=msg)
            # a reply to some other request (a late answer): not ours, keep waiting

    def request(self, method: str, params: dict[str, Any] | None = None) -> Reply:
        """Send a well-formed request and wait for its reply."""
        req_id = self.new_id()
        msg: Message = {"jsonrpc": "2.0", "id": req_id, "method": method}
        if params is not None:
            msg["params"] = params
        return self.exchange(_dump(msg), (req_id,))

    def notify(self, method: str) -> Outcome | None:
        """Send a notification; an Outcome only if the server is already gone."""
        try:
            self._write(_dump({"jsonrpc": "2.0", "method": method}))
        except TransportError:
            return self._died()
        return None

    # -- the handshake -----------------------------------------------------------------

    def initialize(self, version: str | None = None) -> Reply:
        """Send initialize asking for ``version`` (default: the session's); record the answer."""
        reply = self.request(
            "initialize",
            {
                "protocolVersion": version or self.version,
                "capabilities": {},
                "clientInfo": CLIENT_INFO,
            },
        )
        result = reply.message.get("result") if reply.message is not None else None
        if isinstance(result, dict) and isinstance(result.get("protocolVersion"), str):
            self.state = State.INITIALIZING
            self.answered_version = result["protocolVersion"]
            info = result.get("serverInfo")
            self.server_info = info if isinstance(info, dict) else None
        else:
            said = reply.failure if reply.failure is not None else classify_reply(reply.message or {})
            self.handshake_failure = Outcome(NOT_RUN, shorten(f"initialize: {said.label}: {said.detail}"))
        return reply

    def advance(self, state: State) -> Outcome | None:
        """Drive the handshake forward to ``state``; an Outcome (``not run``) if it fails."""
        if STATE_RANK[self.state] >= STATE_RANK[state]:
            return None
        if self.handshake_failure is not None:
            return self.handshake_failure
        if self.state is State.NEW:
            self.initialize()
            if self.handshake_failure is not None:
                return self.handshake_failure
        if state is State.READY:
            gone = self.notify("notifications/initialized")
            if gone is not None:
                return Outcome(NOT_RUN, f"initialized: {gone.label}: {gone.detail}")
            self.state = State.READY
        return None

    # -- failures ------------------------------------------------------------------------

    def _silence(self, wait: float, garbage_before: int) -> Outcome:
        junk = self.transport.garbage[garbage_before:]
        if junk:
            first = junk[0].decode("utf-8", "replace")
            return Outcome(GARBAGE, shorten(f"{len(junk)} non-JSON line(s), first: {first!r}"))
        return Outcome(NO_REPLY, f"nothing within {wait:g}s")

    def _died(self) -> Outcome:
        self._eof = True
        try:
            code: int | None = self.transport.process.wait(timeout=self.timeout)
        except subprocess.TimeoutExpired:
            return Outcome(DIED, "closed its output but is still running")
        tail = self.stderr_tail()
        return Outcome(DIED, shorten(f"exited with code {code}" + (f": {tail}" if tail else "")))

    def stderr_tail(self) -> str:
        """The last non-empty line the server wrote to stderr so far."""
        # pread leaves the file offset alone: the server shares it while it runs.
        fd = self._stderr.fileno()
        text = os.pread(fd, os.fstat(fd).st_size, 0).decode("utf-8", "replace")
        lines = [ln for ln in text.splitlines() if ln.strip()]
        return lines[-1].strip() if lines else ""

    def _from_server(self, msg: Message) -> None:
        # A server-to-client request gets an answer (ping) or a refusal; notifications are ignored.
        if "id" not in msg or not is_valid_id(msg["id"]):
            return
        if msg.get("method") == "ping":
            reply = response(msg["id"], {})
        else:
            reply = error_response(msg["id"], -32601, f"the probe does not support {msg.get('method')}")
        with contextlib.suppress(TransportError):
            self._write(_dump(reply))

    def _write(self, data: bytes) -> None:
        # Remember what was sent, so that an echo of it is never read as the peer's own message.
        try:
            sent = json.loads(data)
        except ValueError:
            sent = None
        if isinstance(sent, dict):
            self._sent.add(_canonical(sent))
        self.transport.write_raw(data)

    def close(self) -> None:
        """Close stdin, give the server :data:`CLOSE_GRACE`, then terminate; release every pipe."""
        proc = self.transport.process
        if proc.stdin is not None and not proc.stdin.closed:
            with contextlib.suppress(OSError):
                proc.stdin.close()
        try:
            proc.wait(timeout=CLOSE_GRACE)
        except subprocess.TimeoutExpired:
            proc.terminate()
            try:
                proc.wait(timeout=CLOSE_GRACE)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        self._drain()
        self.transport.close()
        if self._eof and proc.stdout is not None:
            # Only after end of file: closing a pipe a reader thread still blocks on would hang.
            proc.stdout.close()
        self._stderr.close()

    def _drain(self) -> None:
        # Read to end of file so the transport's reader thread has finished before stdout closes.
        deadline = time.monotonic() + CLOSE_GRACE
        while not self._eof and time.monotonic() < deadline:
            try:
                self.transport.next_message(deadline - time.monotonic())
            except TransportError:
                self._eof = True


def _id_in(value: object, ids: Sequence[object]) -> bool:
    # Exact type match, so that a reply id of true never counts as 1.
    return any(value == want and type(value) is type(want) for want in ids)


def describe(msg: Message) -> str:
    """A peer's message in a few words: ``initialize id 1`` for a request, else its JSON."""
    method, msg_id = msg.get("method"), msg.get("id")
    if isinstance(method, str):
        return method if msg_id is None else f"{method} id {json.dumps(msg_id)}"
    return _text(msg)


def _is_response(msg: Message) -> bool:
    # A JSON-RPC response: an id and exactly one of result and error (no method: checked before).
    return "id" in msg and ("result" in msg) != ("error" in msg)


def _canonical(msg: Message) -> str:
    return json.dumps(msg, sort_keys=True, separators=(",", ":"))


def _text(msg: Message) -> str:
    return json.dumps(msg, separators=(",", ":"), ensure_ascii=False)


def _dump(message: Message) -> bytes:
    return json.dumps(message, separators=(",", ":")).encode()
