"""stdio: newline-delimited JSON-RPC over a process's stdin and stdout.

Server side, :func:`serve_stdio` feeds each line to ``MCPServer.handle_text``
and writes the reply (and any queued notifications) back, one per line; logs go
to stderr. A garbage line gets -32700 and the next line is served; a line over
the size limit is never read whole: it gets -32600 and is skipped to its newline. Only the
``escape`` strategy lets an exception out, and then the process dies, as a
naive server would.

Client side, :class:`StdioTransport` starts a command and drives it. Every
request has a timeout, because real servers may never answer (the official SDK
ignores ``id: null`` and truncated JSON). Lines that are not JSON are kept in
``garbage`` rather than raised, so a probe can report them.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import queue
import subprocess
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import IO, Any

from harness.protocol.errors import INVALID_REQUEST, TransportError
from harness.protocol.messages import Message, answer_request, error_response, is_valid_id
from harness.protocol.server import MCPServer

log = logging.getLogger("harness.stdio")

DEFAULT_TIMEOUT = 10.0


def serve_stdio(
    server: MCPServer, stdin: IO[bytes], stdout: IO[bytes], *, max_line_bytes: int | None = None
) -> None:
    """Serve ``server`` until stdin closes (or the client stops reading stdout).

    Memory stays bounded whatever the client writes: a line longer than
    ``max_line_bytes`` (default: the server's ``max_message_bytes``) is never held
    whole; it gets one -32600 with id null and is skipped up to the next newline.
    """
    limit = server.max_message_bytes if max_line_bytes is None else max_line_bytes
    for raw in bounded_lines(stdin, limit):
        if raw is None:
            reply: str | None = json.dumps(
                error_response(None, INVALID_REQUEST, f"message larger than {limit} bytes"),
                separators=(",", ":"),
            )
        else:
            line = raw.strip()
            if not line:
                continue
            reply = server.handle_text(line)
        out = []
        if reply is not None:
            out.append(reply.encode())
        for note in server.take_notifications():
            try:
                out.append(json.dumps(note, separators=(",", ":"), allow_nan=False).encode())
            except (TypeError, ValueError, OverflowError, RecursionError) as exc:
                log.warning("dropped a notification JSON cannot carry: %s", exc)
        if out:
            try:
                stdout.write(b"\n".join(out) + b"\n")
                stdout.flush()
            except BrokenPipeError:
                log.info("the client closed its end of stdout; stopping")
                return


_SKIP_CHUNK = 1 << 16
"""Bytes read at a time while skipping the rest of an oversized line."""


def bounded_lines(stdin: IO[bytes], limit: int) -> Iterator[bytes | None]:
    """Lines of at most ``limit`` bytes (plus a line end), None for each longer one: a longer line
    is never held whole, it is read past in chunks of :data:`_SKIP_CHUNK` to its newline (the server
    here, the proxy on both of its sides)."""
    while True:
        raw = stdin.readline(limit + 2)  # + 2 leaves room for "\r\n"
        if not raw:
            return
        if raw.endswith(b"\n") or len(raw) < limit + 2:
            yield raw
            continue
        while raw and not raw.endswith(b"\n"):
            raw = stdin.readline(_SKIP_CHUNK)
        yield None


READ_BYTES = 1 << 20
"""Bytes :func:`fd_lines` asks of the kernel at a time."""


def fd_lines(stream: IO[bytes], limit: int) -> Iterator[bytes | None]:
    """:func:`bounded_lines`, read by the stream's descriptor rather than through its buffer (lines
    without their newline). A thread blocked here, in ``os.read``, holds no lock: closing the
    stream, or the interpreter's exit, never waits for it, though a process that escaped the
    peer's group may hold the pipe open for ever (issue 49). Tested against
    :func:`bounded_lines`; a stream with no descriptor is read by it."""
    try:
        fd = stream.fileno()
    except (AttributeError, OSError, ValueError):
        yield from (None if line is None else line.rstrip(b"\n") for line in bounded_lines(stream, limit))
        return
    yield from chunk_lines(iter(lambda: os.read(fd, READ_BYTES), b""), limit)


def chunk_lines(chunks: Iterable[bytes], limit: int) -> Iterator[bytes | None]:
    """The lines of a byte stream given in chunks, each of at most ``limit`` bytes (plus a "\r",
    without the newline), None for each longer one, which is never held: past the limit its
    bytes are dropped as they come (:func:`fd_lines` on a descriptor; an HTTP response's body,
    :mod:`harness.transports.http_client`)."""
    parts: list[bytes] = []
    held = 0
    skipping = False
    for chunk in chunks:
        start = 0
        while (end := chunk.find(b"\n", start)) >= 0:
            if skipping or held + end - start > limit + 1:  # + 1: a "\r" before the newline
                yield None
            else:
                parts.append(chunk[start:end])
                yield b"".join(parts)
            parts, held, skipping, start = [], 0, False, end + 1
        if start < len(chunk) and not skipping:
            parts.append(chunk[start:])
            held += len(chunk) - start
            if held > limit + 1:
                parts, held, skipping = [], 0, True
    if skipping:
        yield None
    elif parts:
        yield b"".join(parts)


_EOF = object()


class StdioTransport:
    """Drive any stdio MCP server: ``StdioTransport(["python", "server.py"])``."""

    def __init__(
        self,
        command: Sequence[str],
        *,
        timeout: float = DEFAULT_TIMEOUT,
        env: dict[str, str] | None = None,
        cwd: str | None = None,
        stderr: int | IO[Any] | None = subprocess.PIPE,
        start_new_session: bool = False,
    ) -> None:
        if not command:
            raise ValueError("StdioTransport needs a command")
        self.command = list(command)
        self.timeout = timeout
        try:
            self.process = subprocess.Popen(
                self.command,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=stderr,
                env={**os.environ, **(env or {})},
                cwd=cwd,
                start_new_session=start_new_session,  # its own process group, which a caller can end whole
            )
        except OSError as exc:
            raise TransportError(f"cannot start {self.command[0]!r}: {exc.strerror or exc}") from None
        self.garbage: list[bytes] = []
        self.stderr_lines: list[str] = []
        self.on_request: Callable[[Message], Message] | None = None
        """Answers a server-to-client request (the client sets it); None: ping gets {}, the rest -32601."""
        self._posted: set[Any] = set()
        self._lines: queue.Queue[Any] = queue.Queue()
        self._inbox: list[Message] = []
        self._readers = [threading.Thread(target=self._read_stdout, daemon=True)]
        if self.process.stderr is not None:
            self._readers.append(threading.Thread(target=self._read_stderr, daemon=True))
        for reader in self._readers:
            reader.start()

    def _read_stdout(self) -> None:
        assert self.process.stdout is not None
        for raw in self.process.stdout:
            self._lines.put(raw)
        self._lines.put(_EOF)

    def _read_stderr(self) -> None:
        assert self.process.stderr is not None
        for raw in self.process.stderr:
            self.stderr_lines.append(raw.decode("utf-8", "replace").rstrip("\n"))

    def write_raw(self, data: bytes) -> None:
        """Write bytes as they are (a newline is added): for probes of bad input."""
        stdin = self.process.stdin
        if stdin is None or self.process.poll() is not None:
            raise TransportError(self._exit_text())
        try:
            stdin.write(data.rstrip(b"\n") + b"\n")
            stdin.flush()
        except (BrokenPipeError, OSError):
            raise TransportError(self._exit_text()) from None

    def post(self, message: Message) -> None:
        """Send a request without waiting: its reply (a stream's end) comes through take_notifications."""
        self.write_raw(json.dumps(message, separators=(",", ":")).encode())
        self._posted.add(message.get("id"))

    def _keep_if_posted(self, msg: Message) -> None:
        rid = msg.get("id")
        if is_valid_id(rid) and rid in self._posted:
            self._posted.discard(rid)
            self._inbox.append(msg)

    def send(self, message: Message) -> Message | None:
        """Send one message; for a request, wait for the reply with its id."""
        self.write_raw(json.dumps(message, separators=(",", ":")).encode())
        if "id" not in message:
            return None
        return self.wait_for(message["id"], self.timeout)

    def wait_for(self, req_id: Any, timeout: float) -> Message:
        """Read until the response to ``req_id`` arrives; TransportError on timeout or exit."""
        deadline = time.monotonic() + timeout
        while True:
            msg = self.next_message(deadline - time.monotonic())
            if msg is None:
                raise TransportError(f"no reply to request {req_id!r} within {timeout:g}s")
            if "method" in msg:
                self._from_server(msg)
                continue
            if msg.get("id") == req_id:
                return msg
            self._keep_if_posted(msg)
            # a reply to something else (a late answer): ignored, as the spec says

    def next_message(self, timeout: float) -> Message | None:
        """The next JSON object from the server within ``timeout`` seconds, else None."""
        deadline = time.monotonic() + max(timeout, 0.0)
        while True:
            remaining = deadline - time.monotonic()
            try:
                raw = self._lines.get(timeout=remaining) if remaining > 0 else self._lines.get_nowait()
            except queue.Empty:
                return None
            if raw is _EOF:
                self._lines.put(_EOF)  # stay at end of file for later reads
                raise TransportError(self._exit_text())
            line = raw.strip()
            if not line:
                continue
            try:
                msg = json.loads(line)
            except ValueError:
                self.garbage.append(line)
                continue
            if not isinstance(msg, dict):
                self.garbage.append(line)
                continue
            return msg

    def _from_server(self, msg: Message) -> None:
        if "id" not in msg:
            self._inbox.append(msg)
            return
        # A server-to-client request: on_request answers it; without one, ping gets {}, the rest -32601.
        if not is_valid_id(msg.get("id")):
            return
        reply = answer_request(self.on_request, msg)
        self.write_raw(json.dumps(reply).encode())

    def _exit_text(self) -> str:
        try:
            code = self.process.wait(timeout=1.0)
        except subprocess.TimeoutExpired:
            return "server closed its output"
        tail = f": {self.stderr_lines[-1]}" if self.stderr_lines else ""
        return f"server exited with code {code}{tail}"

    def take_notifications(self) -> list[Message]:
        """Notifications the server sent, oldest first (includes any still queued)."""
        while True:
            try:
                msg = self.next_message(0.0)
            except TransportError:
                break
            if msg is None:
                break
            if "method" in msg:
                self._from_server(msg)
            else:
                self._keep_if_posted(msg)
        out, self._inbox = self._inbox, []
        return out

    def close(self) -> None:
        """Close stdin, then wait briefly, then terminate and kill if needed."""
        if self.process.stdin is not None and not self.process.stdin.closed:
            with contextlib.suppress(OSError):
                self.process.stdin.close()
        try:
            self.process.wait(timeout=2.0)
        except subprocess.TimeoutExpired:
            self.process.terminate()
            try:
                self.process.wait(timeout=2.0)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        # The readers end at EOF once the process is gone; then the pipes can be closed
        # (an unclosed pipe is a ResourceWarning, an error under the test suite's filters).
        for reader in self._readers:
            reader.join(timeout=2.0)
        for pipe in (self.process.stdout, self.process.stderr):
            if pipe is not None and not any(r.is_alive() for r in self._readers):
                pipe.close()

    def __enter__(self) -> StdioTransport:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
