"""One server process under probe: bytes in, one bounded wait, an :class:`Outcome` out.

A :class:`ProbeSession` wraps :class:`~harness.transports.stdio.StdioTransport`
(its :class:`Link`; :class:`harness.probe.http_link.HTTPProbeSession` puts a
Streamable HTTP endpoint in its place) and never raises for anything the server
does: every exchange ends, within its timeout, in a reply, ``no reply``,
``garbage`` or ``server died``. Until the server writes its first line, every
exchange may wait until ``startup_timeout`` after the process started
(:func:`exchange_wait`: the server is still importing); from its first line
on, each exchange gets ``timeout``. A process
that exits is noticed while waiting, even when something it started keeps its
output open, and is reported as ``server died`` at once.

A request that got no reply in time stays pending: a reply that arrives later,
during another exchange or in :meth:`ProbeSession.collect_late`, is kept by its
id in ``late`` (never taken for another request's answer), and gives the
waiting exchange a fresh ``timeout`` (a server that was slow to start is
catching up). The runner reads those late replies into the rows of the steps
that sent them. An ``initialize`` answered late still completes the handshake.

The session tracks the handshake state the probe has driven it to (it cannot
see the server's own). A handshake that failed is remembered, so later steps on
the same process report ``not run`` at once instead of waiting again. A session
of a stateless-era version (2026-07-28) has no handshake: every request carries
the per-request ``_meta``, and ``server/discover`` stands where ``initialize``
stood (``READY`` means the server said it speaks the version).

A message that carries ``method`` is a request or notification *from* the
peer, never the answer to one of ours, whatever its id. A message equal to one
the probe itself wrote is an echo (``cat`` sends everything back): it ends the
exchange as ``echoed`` and is neither answered nor taken as a reply. The
session keeps the evidence the runner needs to tell a peer that is not an MCP
server at all: the first echo, the first JSON object that is no JSON-RPC
message, and whether any valid JSON-RPC response arrived. It also keeps every
error the server answered, with the request that got it, in ``harvested``
(:mod:`harness.probe.harvest`), late replies included.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from harness.probe.harvest import HarvestRecord, record_of
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
from harness.protocol.messages import Message, answer_request, is_valid_id
from harness.protocol.stateless import SERVER_INFO
from harness.protocol.versions import (
    META_CLIENT_CAPABILITIES,
    META_CLIENT_INFO,
    META_PROTOCOL_VERSION,
    is_stateless,
)
from harness.transports.stdio import StdioTransport

CLIENT_INFO = {"name": "harness-probe", "version": "1"}

CLIENT_CAPABILITIES: dict[str, Any] = {"elicitation": {"form": {}}, "sampling": {}, "roots": {}}
"""What the probe declares in a stateless request's ``_meta``: every input a tool may ask for (MRTR)."""

STATE_RANK: dict[State, int] = {State.NEW: 0, State.INITIALIZING: 1, State.READY: 2}
"""Handshake states in the only order a session can move through them."""

POLL = 0.05
"""Seconds between looks at the garbage count and the process while waiting."""

EXIT_GRACE = 0.2
"""Seconds the output of an exited process is still read before it counts as dead."""

CLOSE_GRACE = 0.5
"""Seconds a server gets to exit after its stdin closes, before it is terminated."""


def exchange_wait(now: float, started: float, heard: bool, timeout: float, startup_timeout: float) -> float:
    """Seconds an exchange may wait: ``timeout``, or until the start-up wait ends if longer.

    The start-up wait runs from the process's start until the server writes its
    first line, whichever exchange that falls in.
    """
    if heard:
        return timeout
    return max(timeout, started + startup_timeout - now)


@dataclass(frozen=True)
class Reply:
    """One exchange: the reply ``message``, or ``failure`` (no reply, garbage, died).

    ``request_id`` is the id a ``no reply`` still waits for (a late reply may come).
    """

    message: Message | None = None
    failure: Outcome | None = None
    request_id: int | None = None
    waited: float = 0.0


URL_SCHEMES: tuple[str, ...] = ("http://", "https://")
"""A probe target that starts with one of these is a Streamable HTTP endpoint, not a command."""


def is_url(target: Sequence[str]) -> bool:
    """Whether a probe target (a command line) is one Streamable HTTP URL."""
    return len(target) == 1 and target[0].lower().startswith(URL_SCHEMES)


class Link(Protocol):
    """What a session writes to and reads from: a process's pipes (:class:`StdioTransport`), or an
    HTTP endpoint (:class:`harness.probe.http_link.HTTPLink`)."""

    garbage: list[bytes]
    """What came back that is no JSON object, as it came."""

    def write_raw(self, data: bytes) -> None:
        """Send one message's bytes as they are; TransportError if the peer is gone."""

    def next_message(self, timeout: float) -> Message | None:
        """The next JSON object from the peer within ``timeout`` seconds, or None."""


class ProbeSession:
    """Drive one server process; ``state`` is how far the probe took its handshake.

    Subclasses drive other peers through another :class:`Link` by overriding ``_start``,
    ``alive``, ``_exited``, ``_died`` and ``close`` (:class:`harness.probe.http_link.HTTPProbeSession`).
    """

    link: Link

    def __init__(
        self, command: Sequence[str], version: str, *, timeout: float, startup_timeout: float
    ) -> None:
        self.version = version
        self.stateless = is_stateless(version)
        self.timeout = timeout
        self.startup_timeout = startup_timeout
        self.state = State.NEW
        self.handshake_failure: Outcome | None = None
        self.server_info: dict[str, Any] | None = None
        self.answered_version: str | None = None
        self.discovered: dict[str, Any] | None = None
        """The server/discover result of a stateless session, if the server speaks its version."""
        self.scratch: dict[str, Any] = {}
        """What one step leaves for later steps of the same process (the MRTR steps read it)."""
        self.echoed: Message | None = None
        """The first of our own messages the peer sent back, if it did."""
        self.not_jsonrpc: Message | None = None
        """The first JSON object from the peer that is neither a request, a notification nor a response."""
        self.responded = False
        """Whether the peer sent at least one valid JSON-RPC response (result or error, with an id)."""
        self.death: Outcome | None = None
        """How the process died (``server died`` with its exit code), once it has."""
        self.late: dict[int, Message] = {}
        """Replies that came after their step stopped waiting, by request id."""
        self.harvested: list[HarvestRecord] = []
        """Every error the server answered (isError results, JSON-RPC errors), in the order they came."""
        self._requests: dict[object, Message] = {}
        """The requests sent, by id, so that an error can be filed under the call that got it."""
        self._pending: set[int] = set()
        self._handshake_pending: tuple[int, Callable[[Message | None], bool]] | None = None
        """A handshake request that got no reply in time: its id and how to accept its answer."""
        self._sent: set[str] = set()
        self._next_id = 0
        self._heard = False
        self._eof = False
        self._exit_seen: float | None = None
        self._started = time.monotonic()
        self._start(command)

    def _start(self, command: Sequence[str]) -> None:
        """Start the server process; its stdout and stdin are the session's link."""
        self._stderr = tempfile.TemporaryFile()  # noqa: SIM115 -- lives as long as the session; close() closes it
        try:
            self.transport = StdioTransport(
                command, timeout=self.timeout, stderr=self._stderr, start_new_session=True
            )
        except BaseException:
            self._stderr.close()
            raise
        self.link = self.transport

    # -- raw exchanges ---------------------------------------------------------------

    def new_id(self) -> int:
        """A fresh request id (1, 2, 3 ... per process: deterministic)."""
        self._next_id += 1
        return self._next_id

    @property
    def last_id(self) -> int:
        """The last request id handed out (0 before the first)."""
        return self._next_id

    @property
    def died_at_start(self) -> bool:
        """Whether the process exited without ever having written a line."""
        return not self._heard and self.death is not None

    @property
    def alive(self) -> bool:
        """Whether the process still runs and its output is open."""
        return not self._eof and self._exit_seen is None and self.transport.process.poll() is None

    def exchange(self, data: bytes, reply_ids: Sequence[object]) -> Reply:
        """Write one line; wait for a reply whose id is one of ``reply_ids`` (None: id null)."""
        wait = exchange_wait(time.monotonic(), self._started, self._heard, self.timeout, self.startup_timeout)
        try:
            self._write(data)
        except TransportError:
            return Reply(failure=self._died(eof=False))
        garbage_before = seen = len(self.link.garbage)
        deadline = time.monotonic() + wait
        while True:
            remaining = deadline - time.monotonic()
            try:
                msg = self.link.next_message(min(remaining, POLL))
            except TransportError:
                return Reply(failure=self._died(eof=True))
            if len(self.link.garbage) > seen:
                seen = len(self.link.garbage)
                deadline = self._heard_line(deadline)
            refused = self.refusal(reply_ids)
            if refused is not None:
                self._heard_line(deadline)
                return Reply(failure=refused)
            if msg is None:
                if self._exited():
                    return Reply(failure=self._died(eof=False))
                if remaining > POLL:
                    continue
                ids = [i for i in reply_ids if isinstance(i, int) and not isinstance(i, bool)]
                self._pending.update(ids)
                # Named by the configured wait, not the clock, so that reports stay reproducible.
                named = self.startup_timeout if wait > self.timeout else self.timeout
                return Reply(
                    failure=self._silence(named, garbage_before),
                    request_id=ids[0] if ids else None,
                    waited=named,
                )
            deadline = self._heard_line(deadline)
            if _canonical(msg) in self._sent:
                if self.echoed is None:
                    self.echoed = msg
                return Reply(failure=Outcome(ECHOED, shorten(f"sent our own message back: {_text(msg)}")))
            if self._take(msg):
                continue
            if "id" in msg and _id_in(msg["id"], reply_ids):
                self._harvest(msg)
                return Reply(message=msg)
            if self._late(msg):
                # A slow server catching up: what we wait for may come next.
                deadline = max(deadline, time.monotonic() + self.timeout)

    def refusal(self, reply_ids: Sequence[object]) -> Outcome | None:
        """How the peer refused one of ``reply_ids`` outright (an HTTP 4xx), if it did; a process
        has no such answer."""
        return None

    def _heard_line(self, deadline: float) -> float:
        # The first line ends the start-up wait: from now on the ordinary timeout applies.
        if self._heard:
            return deadline
        self._heard = True
        return time.monotonic() + self.timeout

    def _take(self, msg: Message) -> bool:
        """Book-keep one message from the peer; True if it is a request or notification."""
        if "method" in msg:
            # A request or notification from the peer: never the answer to our id.
            self._from_server(msg)
            return True
        if not _is_response(msg):
            if self.not_jsonrpc is None:
                self.not_jsonrpc = msg
        else:
            self.responded = True
        return False

    def _late(self, msg: Message) -> bool:
        """Keep a reply to a request that stopped waiting; True if it was one."""
        msg_id = msg.get("id")
        if isinstance(msg_id, int) and not isinstance(msg_id, bool) and msg_id in self._pending:
            self._pending.discard(msg_id)
            self.late[msg_id] = msg
            self._harvest(msg)
            return True
        return False

    def collect_late(self, wait: float) -> None:
        """Wait up to ``wait`` seconds for replies to requests that got none in time."""
        deadline = time.monotonic() + wait
        while self._pending and self.alive:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return
            try:
                msg = self.link.next_message(min(remaining, POLL))
            except TransportError:
                self._eof = True
                return
            if msg is None:
                if self._exited():
                    return
                continue
            self._heard = True
            if _canonical(msg) not in self._sent and not self._take(msg):
                self._late(msg)

    def request(self, method: str, params: dict[str, Any] | None = None, *, meta: bool = True) -> Reply:
        """Send a well-formed request and wait for its reply.

        In a stateless session the per-request ``_meta`` is added unless ``meta``
        is False or ``params`` brings its own.
        """
        req_id = self.new_id()
        if self.stateless and meta and "_meta" not in (params or {}):
            params = {**(params or {}), "_meta": self.meta()}
        msg: Message = {"jsonrpc": "2.0", "id": req_id, "method": method}
        if params is not None:
            msg["params"] = params
        return self.exchange(_dump(msg), (req_id,))

    def meta(self, version: str | None = None) -> dict[str, Any]:
        """The per-request ``_meta`` of a 2026-07-28 request asking for ``version``."""
        return {
            META_PROTOCOL_VERSION: version or self.version,
            META_CLIENT_CAPABILITIES: CLIENT_CAPABILITIES,
            META_CLIENT_INFO: CLIENT_INFO,
        }

    def notify(self, method: str) -> Outcome | None:
        """Send a notification; an Outcome only if the server is already gone."""
        try:
            self._write(_dump({"jsonrpc": "2.0", "method": method}))
        except TransportError:
            return self._died(eof=False)
        return None

    # -- the handshake -----------------------------------------------------------------

    def initialize(self, version: str | None = None) -> Reply:
        """Send initialize asking for ``version`` (default: the session's); record the answer."""
        params = {"protocolVersion": version or self.version, "capabilities": {}, "clientInfo": CLIENT_INFO}
        return self._handshake("initialize", params, self._accept_initialize)

    def _accept_initialize(self, message: Message | None) -> bool:
        result = message.get("result") if message is not None else None
        if not (isinstance(result, dict) and isinstance(result.get("protocolVersion"), str)):
            return False
        self.state = State.INITIALIZING
        self.answered_version = result["protocolVersion"]
        info = result.get("serverInfo")
        self.server_info = info if isinstance(info, dict) else None
        self.handshake_failure = None
        return True

    def discover(self) -> Reply:
        """Send server/discover (stateless sessions); READY if the server lists the session's version."""
        return self._handshake("server/discover", None, self._accept_discover)

    def _handshake(
        self, method: str, params: dict[str, Any] | None, accept: Callable[[Message | None], bool]
    ) -> Reply:
        """Send the handshake's request and ``accept`` its answer; a failure is remembered (and, for
        a ``no reply``, its id, so that a late answer may still be accepted)."""
        reply = self.request(method, params)
        if not accept(reply.message):
            said = reply.failure if reply.failure is not None else classify_reply(reply.message or {})
            self.handshake_failure = Outcome(NOT_RUN, shorten(f"{method}: {said.label}: {said.detail}"))
            pending = reply.request_id
            self._handshake_pending = (pending, accept) if pending is not None else None
        return reply

    def _accept_discover(self, message: Message | None) -> bool:
        result = message.get("result") if message is not None else None
        versions = result.get("supportedVersions") if isinstance(result, dict) else None
        if not (isinstance(result, dict) and isinstance(versions, list) and self.version in versions):
            return False
        self.state = State.READY
        self.discovered = result
        self.server_info = server_info_of(result)
        self.handshake_failure = None
        return True

    def advance(self, state: State) -> Outcome | None:
        """Drive the handshake forward to ``state``; an Outcome (``not run``) if it fails.

        A handshake that got no reply is given one more ``timeout`` for a late answer.
        """
        if STATE_RANK[self.state] >= STATE_RANK[state]:
            return None
        if self.handshake_failure is not None and not self._late_handshake():
            return self.handshake_failure
        if self.state is State.NEW:
            if self.stateless:
                self.discover()
            else:
                self.initialize()
            if self.handshake_failure is not None and not self._late_handshake():
                return self.handshake_failure
        if state is State.READY and self.state is not State.READY:
            gone = self.notify("notifications/initialized")
            if gone is not None:
                return Outcome(NOT_RUN, f"initialized: {gone.label}: {gone.detail}")
            self.state = State.READY
        return None

    def _late_handshake(self) -> bool:
        """Whether a handshake that got no reply in time was answered after all."""
        pending, self._handshake_pending = self._handshake_pending, None
        if pending is None:
            return False
        request_id, accept = pending
        self.collect_late(self.timeout)
        return accept(self.late.get(request_id))

    # -- failures ------------------------------------------------------------------------

    def _silence(self, wait: float, garbage_before: int) -> Outcome:
        junk = self.link.garbage[garbage_before:]
        if junk:
            first = junk[0].decode("utf-8", "replace")
            return Outcome(GARBAGE, shorten(f"{len(junk)} non-JSON line(s), first: {first!r}"))
        return Outcome(NO_REPLY, f"nothing within {wait:g}s")

    def _exited(self) -> bool:
        """Whether the process has exited and its output has had :data:`EXIT_GRACE` to drain."""
        if self.transport.process.poll() is None:
            return False
        now = time.monotonic()
        if self._exit_seen is None:
            self._exit_seen = now
        return now - self._exit_seen >= EXIT_GRACE

    def _died(self, *, eof: bool) -> Outcome:
        proc = self.transport.process
        self._eof = self._eof or eof
        try:
            code: int | None = proc.wait(timeout=self.timeout)
        except subprocess.TimeoutExpired:
            return Outcome(DIED, "closed its output but is still running")
        self._exit_seen = self._exit_seen or time.monotonic()
        tail = self.stderr_tail()
        self.death = Outcome(DIED, shorten(f"exited with code {code}" + (f": {tail}" if tail else "")))
        return self.death

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
        with contextlib.suppress(TransportError):
            self._write(_dump(answer_request(None, msg)))

    def _write(self, data: bytes) -> None:
        # Remember what was sent, so that an echo of it is never read as the peer's own message.
        try:
            sent = json.loads(data)
        except ValueError:
            sent = None
        if isinstance(sent, dict):
            self._sent.add(_canonical(sent))
            if "method" in sent and is_valid_id(sent.get("id")):
                self._requests[_id_key(sent["id"])] = sent
        self.link.write_raw(data)

    def _harvest(self, reply: Message) -> None:
        """Keep the error ``reply`` carries (if any), filed under the request that got it."""
        request = self._requests.get(_id_key(reply.get("id")))
        found = record_of(request, reply)
        if found is not None:
            self.harvested.append(found)

    def close(self) -> None:
        """Close stdin, give the server :data:`CLOSE_GRACE`, then terminate; release every pipe.

        Whatever the server started in its process group and left holding the
        output open is killed too, so no pipe outlives the session.
        """
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
        if not self._eof:
            # The server is gone; whatever it started in its group and left behind holding
            # the output open goes too (the group is ours: the session started it).
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, signal.SIGKILL)
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


def server_info_of(result: object) -> dict[str, Any] | None:
    """The server's name and version from a 2026-07-28 result's ``_meta``, if it gives them."""
    meta = result.get("_meta") if isinstance(result, dict) else None
    info = meta.get(SERVER_INFO) if isinstance(meta, dict) else None
    return info if isinstance(info, dict) else None


def _id_key(value: object) -> object:
    # A reply's id names its request only by exact type (true is not 1); any other id names none.
    return (type(value).__name__, value) if is_valid_id(value) else None


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
