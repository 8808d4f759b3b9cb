"""The real server behind the proxy: a process over stdio, or a Streamable HTTP endpoint.

An upstream moves messages and reports trouble; it decides nothing. It is started with
:class:`Handlers` (what to call when the server sends a message, writes something that is
not JSON-RPC, goes away, or one request cannot be delivered) and then takes messages with
:meth:`send`, which never blocks on the server: a stdio upstream writes from its own thread,
an HTTP upstream posts each message on a thread of its own.

* :class:`StdioUpstream` starts the command in a process group of its own (its stderr goes on
  to the proxy's stderr, line by line, and the last line is kept to say why it died). End of its
  stdout is :attr:`Handlers.gone` with the exit status (:func:`exit_reason`). Closing it ends
  its input, then SIGTERM, then SIGKILL, each after a grace, to the whole group: nothing the
  server started outlives the proxy.
* :class:`HTTPUpstream` drives a URL with :class:`~harness.transports.HTTPClientTransport`
  (sessions, SSE answers, resumption, both eras), one POST per message; what arrives outside
  a POST's answer (the GET stream, a listen stream) is collected every few milliseconds. A
  request the server sends in the middle of a call waits for the client's answer, which
  :meth:`HTTPUpstream.send` hands back.
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass
from typing import IO, Any, Protocol

from harness.protocol.errors import INTERNAL_ERROR, TransportError
from harness.protocol.messages import Message, RequestId, error_response, is_valid_id
from harness.protocol.server import DEFAULT_MAX_MESSAGE_BYTES, parse_json
from harness.protocol.stateless import LISTEN
from harness.transports.stdio import fd_lines

POLL_SECONDS = 0.02
"""How often an HTTP upstream collects what arrived outside a POST's answer."""
STOP_GRACE_S = 1.0
"""Seconds a server gets at each step of its stop: to exit once its input ends, then to exit
after SIGTERM, before SIGKILL. Two graces fit inside the two seconds the official SDK clients
give a stdio server (the proxy) between each of those steps of their own."""

_ERROR_WORDS = re.compile(
    r"\b(?:\w*(?:error|exception)|traceback|fatal|panic|abort(?:ed)?|fail(?:ed|ure|s)?|refus\w*|denied|"
    r"cannot|can't|could not|unable|invalid|not found|no such|missing|killed|crash\w*|segmentation|errno)\b",
    re.IGNORECASE,
)
"""Words that make a line of a server's stderr read as an error (not a banner or a log line)."""


def looks_like_error(line: str) -> bool:
    """Whether a server's last stderr line says what went wrong (``ValueError: ...``, ``fatal:
    ...``) rather than what it was doing (``Starting default (STDIO) server...``)."""
    return _ERROR_WORDS.search(line) is not None


def exit_reason(code: int | None, last_stderr: str = "") -> str:
    """How a server process ended, for a client: its exit status (or the signal that killed it),
    and its last stderr line only when that line reads as an error (:func:`looks_like_error`)."""
    if code is None:
        how = "closed its output"
    elif code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        how = f"was killed by {name} (exit status {code})"
    else:
        how = f"exited with code {code}"
    return f"{how}: {last_stderr}" if last_stderr and looks_like_error(last_stderr) else how


@dataclass(frozen=True)
class Handlers:
    """What an upstream reports, each called from the upstream's own threads."""

    message: Callable[[Any], None]
    garbage: Callable[[bytes], None]
    gone: Callable[[str], None]
    failed: Callable[[RequestId, str], None]
    oversized: Callable[[int], None] | None = None
    """A message longer than the limit (its bytes) was read past, never held; None: as garbage."""


class Upstream(Protocol):
    """The server behind the proxy."""

    def start(self, handlers: Handlers) -> None: ...
    def send(self, message: Message) -> None: ...
    def kill(self) -> None: ...
    def close(self, hurry: threading.Event | None = None) -> None:
        """Stop the server and release what it holds; ``hurry`` set: no time for a quiet exit."""


_STOP = object()


def group_alive(pgid: int) -> bool:
    """Whether process group ``pgid`` still has a member that is not a zombie (a zombie waits
    for a parent to reap it, which a container's init may never do: it is gone all the same)."""
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    if not sys.platform.startswith("linux"):
        return True
    with contextlib.suppress(OSError):
        for entry in os.scandir("/proc"):
            if not entry.name.isdigit():
                continue
            try:
                with open(f"/proc/{entry.name}/stat", "rb") as stat:
                    fields = stat.read().rsplit(b")", 1)[1].split()
            except (OSError, IndexError):
                continue
            if len(fields) > 2 and fields[2] == str(pgid).encode() and fields[0] != b"Z":
                return True
        return False
    return True


STDERR_LINE_BYTES = 64 * 1024
"""A server's stderr line is passed on up to this many bytes; a longer one is dropped."""


def pipe_holders(fd: int) -> list[str]:
    """The processes of this machine, but this one, that hold the pipe ``fd`` is an end of: their
    pid and command (Linux's /proc; elsewhere none can be named)."""
    try:
        ino = os.fstat(fd).st_ino
    except OSError:
        return []
    target = f"pipe:[{ino}]"
    found = []
    with contextlib.suppress(OSError):
        for entry in os.scandir("/proc"):
            if not entry.name.isdigit() or int(entry.name) == os.getpid():
                continue
            try:
                links = {
                    os.readlink(f"/proc/{entry.name}/fd/{n}") for n in os.listdir(f"/proc/{entry.name}/fd")
                }
            except OSError:
                continue
            if target in links:
                try:
                    with open(f"/proc/{entry.name}/cmdline", "rb") as fh:
                        command = fh.read().replace(b"\0", b" ").decode("utf-8", "replace").strip()
                except OSError:
                    command = "?"
                found.append(f"{entry.name} ({command[:200]})")
    return found


class StdioUpstream:
    """A server process: newline-delimited JSON-RPC on its stdin and stdout."""

    def __init__(
        self,
        command: Sequence[str],
        *,
        env: dict[str, str] | None = None,
        cwd: str | None = None,
        stderr: IO[bytes] | None = None,
        grace: float = STOP_GRACE_S,
        max_message: int = DEFAULT_MAX_MESSAGE_BYTES,
    ) -> None:
        if not command:
            raise ValueError("StdioUpstream needs a command")
        self.max_message = max_message
        """Bytes an upstream line may hold; a longer one is read past, never held (``--max-message``)."""
        self.command = list(command)
        self.env = env
        self.cwd = cwd
        self.stderr_sink = stderr
        self.grace = grace
        """Seconds of each step of the stop (:data:`STOP_GRACE_S`)."""
        self.process: subprocess.Popen[bytes] | None = None
        self.last_stderr = ""
        self._queue: queue.Queue[Any] = queue.Queue()
        self._threads: list[threading.Thread] = []
        self._closing = False
        self.not_ended: list[str] = []
        """After :meth:`close`: what still held the server's pipes (pid and command): a process
        outside its group that the stop could not reach."""

    def start(self, handlers: Handlers) -> None:
        """Start the command; TransportError if it cannot be started."""
        try:
            self.process = subprocess.Popen(
                self.command,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=self.env,
                cwd=self.cwd,
                start_new_session=True,  # a group of its own: the stop reaches what it started
            )
        except OSError as exc:
            raise TransportError(f"cannot start {self.command[0]!r}: {exc.strerror or exc}") from None
        for target, name in (
            (lambda: self._read(handlers), "proxy-upstream-out"),
            (self._read_stderr, "proxy-upstream-err"),
            (self._write, "proxy-upstream-in"),
        ):
            thread = threading.Thread(target=target, name=name, daemon=True)
            thread.start()
            self._threads.append(thread)

    def _read(self, handlers: Handlers) -> None:
        assert self.process is not None and self.process.stdout is not None
        for raw in fd_lines(self.process.stdout, self.max_message):
            if raw is None:  # read past, not held: the requests in flight get an error saying so
                if handlers.oversized is not None:
                    handlers.oversized(self.max_message)
                else:
                    handlers.garbage(
                        f"a message of more than {self.max_message} bytes, dropped unread".encode()
                    )
                continue
            line = raw.strip()
            if not line:
                continue
            try:
                message = parse_json(line)
            except ValueError:
                handlers.garbage(line)
                continue
            handlers.message(message)
        if self._closing:
            return
        try:
            code = self.process.wait(timeout=2.0)
        except subprocess.TimeoutExpired:
            handlers.gone(exit_reason(None))
            return
        handlers.gone(exit_reason(code, self.last_stderr))

    def _read_stderr(self) -> None:
        assert self.process is not None and self.process.stderr is not None
        sink = self.stderr_sink if self.stderr_sink is not None else sys.stderr.buffer
        for line in fd_lines(self.process.stderr, STDERR_LINE_BYTES):
            if line is None:
                continue  # a stderr line past the bound is not kept, nor passed on
            raw = line + b"\n"
            self.last_stderr = raw.decode("utf-8", "replace").strip() or self.last_stderr
            with contextlib.suppress(OSError, ValueError):
                sink.write(raw)
                sink.flush()

    def _write(self) -> None:
        assert self.process is not None and self.process.stdin is not None
        stdin = self.process.stdin
        while (data := self._queue.get()) is not _STOP:
            try:
                stdin.write(data)
                stdin.flush()
            except (BrokenPipeError, OSError, ValueError):
                continue  # the reader reports the death
        with contextlib.suppress(OSError, ValueError):
            stdin.close()

    def send(self, message: Message) -> None:
        self._queue.put(json.dumps(message, separators=(",", ":"), ensure_ascii=False).encode() + b"\n")

    def kill(self) -> None:
        """End the process and its group at once, as a crash would."""
        if self.process is not None:
            self._signal(signal.SIGKILL)

    def _signal(self, sig: int) -> bool:
        """Send ``sig`` to the server's process group; False once nothing of it is left."""
        assert self.process is not None
        try:
            os.killpg(self.process.pid, sig)
        except ProcessLookupError:
            return False
        except OSError:  # not ours to signal (it changed its group): the process itself, then
            with contextlib.suppress(OSError):
                self.process.send_signal(sig)
        return True

    def _ended(self, seconds: float, hurry: threading.Event | None = None) -> bool:
        """Wait up to ``seconds`` for the group to be gone (the server reaped, nothing it
        started left); cut short by ``hurry``. Whether it is gone."""
        assert self.process is not None
        deadline = time.monotonic() + seconds
        while True:
            if self.process.poll() is not None and not group_alive(self.process.pid):
                return True
            left = deadline - time.monotonic()
            if left <= 0 or (hurry is not None and hurry.is_set()):
                return False
            time.sleep(min(0.02, left))

    def close(self, hurry: threading.Event | None = None) -> None:
        """Stop the server: end its input and give it :attr:`grace` seconds to exit (none when
        ``hurry`` is set, or once it is), then SIGTERM its group, a grace more, then SIGKILL."""
        self._closing = True
        self._queue.put(_STOP)
        process = self.process
        if process is None:
            return
        if not self._ended(self.grace, hurry):
            self._signal(signal.SIGTERM)
            if not self._ended(self.grace):
                self._signal(signal.SIGKILL)
                self._ended(self.grace)
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(timeout=self.grace)
        for thread in self._threads:
            thread.join(timeout=0.2 if hurry is not None and hurry.is_set() else 2.0)
        readers = {"proxy-upstream-out": process.stdout, "proxy-upstream-err": process.stderr}
        held = [readers[t.name] for t in self._threads if t.is_alive() and t.name in readers]
        # A reader still blocked: something outside the server's group (a daemon it started with
        # setsid) holds the pipe open. Its pipe is left to the exit; what holds it is named.
        self.not_ended = sorted({h for pipe in held if pipe is not None for h in pipe_holders(pipe.fileno())})
        for pipe in (process.stdout, process.stderr, process.stdin):
            if pipe is not None and pipe not in held:
                with contextlib.suppress(OSError, ValueError):
                    pipe.close()


class HTTPUpstream:
    """A Streamable HTTP server at ``url`` (a new MCP session per proxied connection)."""

    def __init__(
        self,
        url: str,
        *,
        timeout: float = 30.0,
        headers: dict[str, str] | None = None,
        max_message: int = DEFAULT_MAX_MESSAGE_BYTES,
    ) -> None:
        self.url = url
        self.timeout = timeout
        self.max_message = max_message
        self.headers = headers
        self.transport: Any = None
        self._handlers: Handlers | None = None
        self._waiting: dict[RequestId, Future[Message]] = {}
        self._lock = threading.Lock()
        self._closed = threading.Event()
        self._threads: list[threading.Thread] = []

    def start(self, handlers: Handlers) -> None:
        from harness.transports.http_client import HTTPClientTransport

        self._handlers = handlers
        self.transport = HTTPClientTransport(
            self.url, timeout=self.timeout or 3600.0, headers=self.headers, max_message=self.max_message
        )
        self.transport.on_request = self._server_request
        poller = threading.Thread(target=self._poll, name="proxy-upstream-poll", daemon=True)
        poller.start()
        self._threads.append(poller)

    def _poll(self) -> None:
        while not self._closed.wait(POLL_SECONDS):
            self._drain()

    def _drain(self) -> None:
        assert self._handlers is not None
        with self._lock:  # one drain at a time keeps the order the server sent
            for note in self.transport.take_notifications():
                self._handlers.message(note)

    def _server_request(self, request: Message) -> Message:
        """A request the server sent mid-stream: the client answers it through the proxy."""
        assert self._handlers is not None
        rid = request.get("id")
        if not isinstance(rid, int | str) or isinstance(rid, bool):
            return error_response(None, INTERNAL_ERROR, "a request without a valid id")
        future: Future[Message] = Future()
        self._waiting[rid] = future
        self._drain()
        self._handlers.message(request)
        try:
            return future.result(timeout=self.timeout or None)
        except FutureTimeout:
            return error_response(rid, INTERNAL_ERROR, "the client did not answer through the proxy in time")
        finally:
            self._waiting.pop(rid, None)

    def send(self, message: Message) -> None:
        if "method" not in message:
            rid = message.get("id")
            future = self._waiting.get(rid) if isinstance(rid, int | str) else None
            if future is not None and not future.done():
                future.set_result(message)
            return
        if "id" not in message:
            # A notification is posted before anything sent after it: the server answers it at
            # once (202), and on a thread of its own the call that follows an initialized could
            # reach the server first and be refused as "server not initialized".
            self._post(message)
            return
        thread = threading.Thread(target=self._post, args=(message,), name="proxy-upstream-post", daemon=True)
        thread.start()
        self._threads = [t for t in self._threads if t.is_alive()] + [thread]

    def _post(self, message: Message) -> None:
        assert self._handlers is not None
        try:
            if message.get("method") == LISTEN and "id" in message:
                self.transport.post(message)
                return
            reply = self.transport.send(message)
        except TransportError as exc:
            if not self._closed.is_set() and is_valid_id(message.get("id")):
                self._handlers.failed(message["id"], str(exc))
            return
        self._drain()
        if reply is not None:
            self._handlers.message(reply)

    def kill(self) -> None:
        """As a crash would: the session is dropped without a word."""
        self._closed.set()

    def close(self, hurry: threading.Event | None = None) -> None:
        self._closed.set()
        for future in self._waiting.values():
            if not future.done():
                future.set_result(error_response(None, INTERNAL_ERROR, "the proxy is closing"))
        if self.transport is not None:
            self.transport.close()
        for thread in self._threads:
            thread.join(timeout=1.0)
