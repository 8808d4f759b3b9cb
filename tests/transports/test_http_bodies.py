"""HTTP bodies and slow clients: the size limit enforced while reading, 408s, hang-ups.

Most tests run ``harness serve --demo --http --port 0`` as a subprocess (module
scope) with a limit above the 4 MiB default and one-second timeouts, and talk to
it over raw sockets where httpx would hide what a misbehaving client does. The
memory test gets a fresh server with the defaults and measures it with psutil.
One test serves the transport in-process to read its debug line.
"""

from __future__ import annotations

import json
import logging
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field

import httpx
import psutil
import pytest
import uvicorn

from harness.cli.serve import command as serve_command
from harness.fixtures.demo import build_demo_server
from harness.protocol import LATEST_VERSION
from harness.transports.http import (
    DEFAULT_BODY_TIMEOUT,
    DEFAULT_HEADER_TIMEOUT,
    SESSION_HEADER,
    StreamableHTTP,
    bind_socket,
    h11_protocol,
)

LIMIT = 5_000_000
"""The module server's ``--max-message-bytes``: above the 4 MiB default, which cannot pass for it."""
TIMEOUT = 1.0
"""``--header-timeout`` and ``--body-timeout`` of the module's server."""
MiB = 1024 * 1024
HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
INIT = json.dumps(
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": LATEST_VERSION,
            "capabilities": {},
            "clientInfo": {"name": "t", "version": "0"},
        },
    }
).encode()


def initialize_of(size: int) -> bytes:
    """An initialize request of exactly ``size`` bytes (JSON allows trailing blanks)."""
    return INIT + b" " * (size - len(INIT))


@dataclass
class Served:
    """A ``harness serve --http`` subprocess: its endpoint, port, and every stderr line after the first."""

    proc: subprocess.Popen[str]
    url: str
    port: int
    stderr: list[str] = field(default_factory=list)


@contextmanager
def harness_serve(*options: str) -> Iterator[Served]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "harness.cli.main", "serve", "--demo", "--http", "--port", "0", *options],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stderr is not None
    err = proc.stderr
    try:
        line = err.readline()
        found = re.search(r"listening on (http://127\.0\.0\.1:(\d+)/mcp)", line)
        assert found, line
        served = Served(proc, found.group(1), int(found.group(2)))
        reader = threading.Thread(target=lambda: served.stderr.extend(err), daemon=True)
        reader.start()
        yield served
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=10)
        err.close()


@pytest.fixture(scope="module")
def served() -> Iterator[Served]:
    with harness_serve(
        "--max-message-bytes", str(LIMIT), "--header-timeout", str(TIMEOUT), "--body-timeout", str(TIMEOUT)
    ) as s:
        yield s


def head(port: int, *, length: int | None = None, chunked: bool = False) -> bytes:
    framing = f"Content-Length: {length}\r\n" if length is not None else ""
    if chunked:
        framing = "Transfer-Encoding: chunked\r\n"
    return (
        f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n"
        f"Accept: application/json\r\n{framing}\r\n"
    ).encode()


def connect(port: int) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port))
    sock.settimeout(10)
    return sock


def read_all(sock: socket.socket) -> bytes:
    """Everything the server sends until it closes (a reset after its answer counts as the end)."""
    got = b""
    while True:
        try:
            data = sock.recv(65536)
        except ConnectionResetError:
            return got
        if not data:
            return got
        got += data


def read_one(sock: socket.socket) -> bytes:
    """One whole response with a ``Content-Length`` (the connection stays open)."""
    got = b""
    while b"\r\n\r\n" not in got:
        got += sock.recv(65536)
    top, body = got.split(b"\r\n\r\n", 1)
    length = re.search(rb"(?i)content-length: (\d+)", top)
    assert length is not None
    while len(body) < int(length.group(1)):
        body += sock.recv(65536)
    return got


def trickle(sock: socket.socket, data: bytes, every: float) -> bytes:
    """Send ``data`` a byte every ``every`` seconds until the server says something; what it said."""
    sock.settimeout(every)
    for byte in data:
        sock.sendall(bytes([byte]))
        try:
            return sock.recv(4096)
        except TimeoutError:
            continue
    return b""


def status_line(reply: bytes) -> str:
    return reply.split(b"\r\n", 1)[0].decode()


def stream(total: int, counter: list[int], chunk: int = 64 * 1024) -> Iterator[bytes]:
    """``total`` blanks in chunks, counting in ``counter[0]`` how many the client took."""
    piece = b" " * chunk
    while counter[0] < total:
        counter[0] += chunk
        yield piece


class TestTheSizeLimit:
    def test_a_declared_length_over_the_limit_gets_413_at_once(self, served: Served) -> None:
        with connect(served.port) as sock:
            start = time.monotonic()
            sock.sendall(head(served.port, length=50 * MiB) + b" " * 1024)
            reply = read_all(sock)  # the server closes: it will not read the other 49.99 MiB
            took = time.monotonic() - start
        assert status_line(reply) == "HTTP/1.1 413 Request Entity Too Large"
        assert b"connection: close" in reply.lower()
        assert json.loads(reply.split(b"\r\n\r\n", 1)[1])["error"]["code"] == -32600
        assert took < TIMEOUT / 2  # well before the body timeout would have answered

    def test_a_chunked_body_gets_413_as_soon_as_it_passes_the_limit(self, served: Served) -> None:
        taken = [0]
        with httpx.Client(timeout=30) as http:
            reply = http.post(served.url, content=stream(200 * MiB, taken), headers=HEADERS)
        assert reply.status_code == 413
        assert reply.headers["connection"] == "close"
        # what the client sent past the limit sat in socket buffers; it stopped long before 200 MiB
        assert LIMIT < taken[0] < LIMIT + 32 * MiB

    @pytest.mark.parametrize("framing", ["content-length", "chunked"])
    def test_the_limit_is_max_message_bytes_a_body_at_it_passes_one_byte_more_gets_413(
        self, served: Served, framing: str
    ) -> None:
        def post(body: bytes) -> httpx.Response:
            content: bytes | Iterator[bytes] = body
            if framing == "chunked":
                content = (body[i : i + 65536] for i in range(0, len(body), 65536))
            with httpx.Client(timeout=30) as http:
                return http.post(served.url, content=content, headers=HEADERS)

        at = post(initialize_of(LIMIT))
        assert at.status_code == 200, at.text
        assert at.json()["result"]["serverInfo"]["name"] == "harness-demo"
        assert post(initialize_of(LIMIT + 1)).status_code == 413

    def test_a_refused_upload_gets_its_answer_and_a_clean_end_not_a_reset(self, served: Served) -> None:
        # Closing with the client's data unread would reset the connection at once, and a
        # reset can beat the answer; the server shuts its side, lingers, and only then closes.
        with connect(served.port) as sock:
            sock.sendall(head(served.port, chunked=True))
            chunk = b"10000\r\n" + b" " * 0x10000 + b"\r\n"

            def write() -> None:
                with suppress(OSError):
                    while True:
                        sock.sendall(chunk)

            writer = threading.Thread(target=write, daemon=True)
            writer.start()
            got = b""
            while data := sock.recv(65536):  # a reset here would raise ConnectionResetError
                got += data
            writer.join(timeout=10)
        assert status_line(got) == "HTTP/1.1 413 Request Entity Too Large"
        assert got.endswith(b'bytes"}}')


class TestSlowAndVanishingClients:
    def test_a_body_that_stops_arriving_gets_408_after_the_body_timeout(self, served: Served) -> None:
        with connect(served.port) as sock:
            start = time.monotonic()
            sock.sendall(head(served.port, length=1000) + b" " * 10)
            reply = read_all(sock)
            took = time.monotonic() - start
        assert status_line(reply) == "HTTP/1.1 408 Request Timeout"
        assert (
            TIMEOUT * 0.9 < took < TIMEOUT + 10
        )  # the lower bound is the rule; the upper, generous for a loaded machine

    def test_headers_sent_a_byte_at_a_time_get_408_after_the_header_timeout(self, served: Served) -> None:
        partial = head(served.port, length=len(INIT))[:-2]  # never the blank line that ends the head
        with connect(served.port) as sock:
            start = time.monotonic()
            reply = trickle(sock, partial, every=0.2)
            took = time.monotonic() - start
        assert status_line(reply) == "HTTP/1.1 408 Request Timeout"
        assert (
            TIMEOUT * 0.9 < took < TIMEOUT + 10
        )  # the lower bound is the rule; the upper, generous for a loaded machine

    def test_a_connection_that_sends_nothing_is_closed_after_the_header_timeout(self, served: Served) -> None:
        with connect(served.port) as sock:
            start = time.monotonic()
            assert sock.recv(4096) == b""
            assert TIMEOUT * 0.9 < time.monotonic() - start < TIMEOUT + 10

    def test_the_header_timeout_restarts_for_each_request_on_a_kept_alive_connection(
        self, served: Served
    ) -> None:
        with connect(served.port) as sock:
            sock.sendall(head(served.port, length=len(INIT)) + INIT)
            assert status_line(read_one(sock)) == "HTTP/1.1 200 OK"
            time.sleep(TIMEOUT * 1.2)  # idle longer than the header timeout: uvicorn's keep-alive (5 s) rules
            sock.sendall(head(served.port, length=len(INIT))[:20])
            start = time.monotonic()
            reply = read_all(sock)
            took = time.monotonic() - start
        assert status_line(reply) == "HTTP/1.1 408 Request Timeout"
        assert (
            TIMEOUT * 0.9 < took < TIMEOUT + 10
        )  # the lower bound is the rule; the upper, generous for a loaded machine

    def test_a_response_that_outlives_the_header_timeout_is_not_cut(self, served: Served) -> None:
        with httpx.Client(timeout=10) as http:
            sid = http.post(served.url, content=INIT, headers=HEADERS).headers[SESSION_HEADER]
            note = b'{"jsonrpc":"2.0","method":"notifications/initialized"}'
            http.post(served.url, content=note, headers={**HEADERS, SESSION_HEADER: sid})
            get = {"Accept": "text/event-stream", SESSION_HEADER: sid}
            with http.stream("GET", served.url, headers=get) as events:
                assert events.status_code == 200
                time.sleep(TIMEOUT * 1.5)
                with httpx.Client(timeout=10) as other:
                    assert other.delete(served.url, headers={SESSION_HEADER: sid}).status_code == 200
                assert list(events.iter_bytes()) == []  # ended by the DELETE, cleanly

    def test_a_client_that_hangs_up_mid_body_leaves_no_traceback(self, served: Served) -> None:
        before = len(served.stderr)
        with connect(served.port) as sock:
            sock.sendall(head(served.port, length=100_000) + b" " * 1000)
            time.sleep(0.2)
        with connect(served.port) as sock:  # and one hanging up mid-chunk
            sock.sendall(head(served.port, chunked=True) + b"10000\r\n" + b" " * 1000)
            time.sleep(0.2)
        with httpx.Client(timeout=10) as http:
            assert http.post(served.url, content=INIT, headers=HEADERS).status_code == 200
        time.sleep(0.3)
        assert served.stderr[before:] == []


def test_a_300_mb_chunked_body_leaves_peak_rss_within_64_mb_of_idle() -> None:
    with harness_serve() as s, httpx.Client(timeout=60) as http:
        assert http.post(s.url, content=INIT, headers=HEADERS).status_code == 200  # warm
        server = psutil.Process(s.proc.pid)
        time.sleep(0.2)
        idle = peak = server.memory_info().rss
        done = threading.Event()

        def sample() -> None:
            nonlocal peak
            while not done.is_set():
                peak = max(peak, server.memory_info().rss)
                time.sleep(0.002)

        sampler = threading.Thread(target=sample)
        sampler.start()
        taken = [0]
        try:
            reply = http.post(s.url, content=stream(300 * MiB, taken), headers=HEADERS)
            time.sleep(0.2)
        finally:
            done.set()
            sampler.join()
        assert reply.status_code == 413
        assert taken[0] < 64 * MiB  # the client stopped once the server answered
        assert peak - idle < 64 * MiB, f"idle {idle / MiB:.0f} MiB, peak {peak / MiB:.0f} MiB"
        assert s.stderr == []


@contextmanager
def in_process(transport: StreamableHTTP, header_timeout: float) -> Iterator[int]:
    """``transport`` on uvicorn with the harness's h11 protocol, in a thread; yields the port."""
    sock = bind_socket("127.0.0.1", 0)
    config = uvicorn.Config(
        transport.app, http=h11_protocol(header_timeout), log_level="warning", lifespan="off"
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.01)
    try:
        assert server.started
        yield sock.getsockname()[1]
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        sock.close()


def test_a_hang_up_mid_body_is_one_debug_line(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger="harness.http")
    with in_process(StreamableHTTP(build_demo_server), header_timeout=5) as port:
        with connect(port) as sock:
            sock.sendall(head(port, length=100_000) + b" " * 1000)
            time.sleep(0.2)
        deadline = time.monotonic() + 5
        while not any("hung up" in r.getMessage() for r in caplog.records) and time.monotonic() < deadline:
            time.sleep(0.02)
    assert [(r.name, r.levelno) for r in caplog.records] == [("harness.http", logging.DEBUG)]
    assert re.fullmatch(
        r"the client hung up after \d+ bytes of its POST body", caplog.records[0].getMessage()
    )


def test_harness_serve_s_timeout_defaults_are_the_transport_s() -> None:
    defaults = {p.name: p.default for p in serve_command.params}
    assert defaults["header_timeout"] == DEFAULT_HEADER_TIMEOUT
    assert defaults["body_timeout"] == DEFAULT_BODY_TIMEOUT


def test_timeouts_must_be_positive() -> None:
    with pytest.raises(ValueError, match="body_timeout"):
        StreamableHTTP(build_demo_server, body_timeout=0)
    with pytest.raises(ValueError, match="header_timeout"):
        h11_protocol(0)
