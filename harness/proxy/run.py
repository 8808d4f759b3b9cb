"""Putting a proxy together: the configuration, the trace file, and the two fronts' main loops."""

from __future__ import annotations

import contextlib
import logging
import signal
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import IO, Any

from harness.errors import UserError
from harness.protocol.server import DEFAULT_MAX_MESSAGE_BYTES
from harness.proxy.core import DEFAULT_GRACE, DEFAULT_MAX_SESSIONS, DEFAULT_TIMEOUT, ProxyCore
from harness.proxy.link import ClientSink, ProxyLink
from harness.proxy.plan import Plan
from harness.proxy.stdio import Stop, serve_proxy_stdio
from harness.proxy.upstream import STOP_GRACE_S, HTTPUpstream, StdioUpstream, Upstream

log = logging.getLogger("harness.proxy")

DRAIN_WITHOUT_TIMEOUT = 30.0
"""Seconds the stdio front waits for answers after its stdin ends when requests have no time limit."""


@dataclass(frozen=True)
class ProxyConfig:
    """What ``harness proxy`` was asked to do: the upstream (a command or a URL) and the rules."""

    command: tuple[str, ...] = ()
    url: str | None = None
    strategy: str = "is_error"
    plan: Plan | None = None
    seed: int = 0
    timeout: float | None = DEFAULT_TIMEOUT
    """Seconds an upstream request may take (and a ``timeout`` fault holds a call); None: no limit."""
    grace: float = DEFAULT_GRACE
    stop_grace: float = STOP_GRACE_S
    """Seconds a server process gets at each step of its stop (end of input, SIGTERM, SIGKILL)."""
    session_idle: float | None = None
    """HTTP front: seconds a session may sit with nothing in flight and no stream open before
    it is closed and its server stopped (None: never)."""
    max_sessions: int = DEFAULT_MAX_SESSIONS
    """HTTP front: live sessions held at once (each one a server process); past it, refused."""
    max_message: int = DEFAULT_MAX_MESSAGE_BYTES
    """Bytes one message may hold, from the client or from the upstream (stdio or HTTP); a longer
    one is read past or refused, never held, and answered with an error (``--max-message``)."""

    def __post_init__(self) -> None:
        if bool(self.command) == (self.url is not None):
            raise ValueError("give exactly one of command and url")

    def upstream(self) -> Upstream:
        if self.url is not None:
            return HTTPUpstream(self.url, timeout=self.timeout or 0.0, max_message=self.max_message)
        return StdioUpstream(self.command, grace=self.stop_grace, max_message=self.max_message)


class TraceFile:
    """One JSONL file that every connection's core writes to, a line at a time."""

    def __init__(self, stream: IO[bytes] | None) -> None:
        self.stream = stream
        self._lock = threading.Lock()

    def writer(self, session: int | None = None) -> Callable[[bytes], None] | None:
        """A core's ``record``; with ``session``, each line says which connection it is from."""
        if self.stream is None:
            return None
        tag = None if session is None else f',"session":{session}}}\n'.encode()

        def write(line: bytes) -> None:
            data = line if tag is None else line[:-2] + tag
            with self._lock:
                self.stream.write(data)  # type: ignore[union-attr]
                self.stream.flush()  # type: ignore[union-attr]

        return write


def make_link(
    config: ProxyConfig,
    sink: ClientSink,
    *,
    trace: TraceFile,
    warn: Callable[[str], None],
    warned: set[str],
    session: int | None = None,
) -> ProxyLink:
    """A connection: a fresh core (its own fault state and call counts) and a fresh upstream."""
    core = ProxyCore(
        strategy=config.strategy,
        plan=config.plan,
        seed=config.seed,
        timeout=config.timeout,
        grace=config.grace,
        clock=time.monotonic,
        record=trace.writer(session),
        warned=warned,
    )
    return ProxyLink(core, config.upstream(), sink, warn, max_message=config.max_message)


@contextlib.contextmanager
def stop_on_signals(stop: Stop | None = None) -> Iterator[Stop]:
    """SIGTERM and SIGINT ask ``stop`` to stop (they end nothing at once) while the block runs.

    The proxy then answers what waits, stops its server and reports, and exits 0. Outside the
    main thread no handler can be set: the stop is only what the caller asks for.
    """
    stop = stop if stop is not None else Stop()
    if threading.current_thread() is not threading.main_thread():
        yield stop
        return
    previous = {sig: signal.signal(sig, stop) for sig in (signal.SIGTERM, signal.SIGINT)}
    try:
        yield stop
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def run_stdio(
    config: ProxyConfig,
    stdin: IO[bytes],
    stdout: IO[bytes],
    trace: TraceFile,
    warn: Callable[[str], None],
    stop: Stop | None = None,
) -> dict[str, Any]:
    """The stdio front until the client closes stdin or ``stop`` is asked for; the summary."""
    from harness.protocol.errors import TransportError

    warned: set[str] = set()
    with stop_on_signals(stop) as asked:
        try:
            return serve_proxy_stdio(
                lambda sink: make_link(config, sink, trace=trace, warn=warn, warned=warned),
                stdin,
                stdout,
                drain=DRAIN_WITHOUT_TIMEOUT if config.timeout is None else 2 * config.timeout + config.grace,
                stop=asked,
            )
        except TransportError as exc:
            raise UserError(f"the upstream server did not start: {exc}") from None


def run_http(
    config: ProxyConfig,
    *,
    host: str,
    port: int,
    trace: TraceFile,
    warn: Callable[[str], None],
    header_timeout: float | None = 10.0,
    ready: Callable[[int], None] | None = None,
    stop: Stop | None = None,
) -> dict[str, Any]:
    """The Streamable HTTP front until SIGTERM or SIGINT; the summary over every connection.

    On the signal, every session is closed first (each request still waiting gets -32603, each
    server is stopped), then uvicorn lets the answers out and ends.
    """
    import uvicorn

    from harness.proxy.http import ProxyHTTP
    from harness.transports.http import LOCAL_NAMES, bind_socket, h11_protocol

    warned: set[str] = set()
    names = set(LOCAL_NAMES)
    if host not in ("0.0.0.0", "::"):
        names.add(host.strip("[]"))
    front = ProxyHTTP(
        lambda sink, number: make_link(config, sink, trace=trace, warn=warn, warned=warned, session=number),
        allowed_hosts=names,
        idle=config.session_idle,
        max_sessions=config.max_sessions,
        max_body_bytes=config.max_message,  # --max-message bounds a client's POST as it does a line
    )
    try:
        sock = bind_socket(host, port)
    except OSError as exc:
        raise UserError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    actual = sock.getsockname()[1]
    if ready is not None:
        ready(actual)

    class Server(uvicorn.Server):
        """uvicorn's server, which closes the proxy's sessions before it waits for its connections.

        uvicorn catches SIGINT and SIGTERM while it runs and raises them again once done; the
        proxy's own handler (:func:`stop_on_signals`) is in place again by then, so the process
        still ends as the proxy does: summary, exit 0.
        """

        def handle_exit(self, sig: int, frame: Any) -> None:
            asked(sig, frame)
            super().handle_exit(sig, frame)

        async def shutdown(self, sockets: Any = None) -> None:
            await front.close_all(asked.why or "shutdown")
            await super().shutdown(sockets)

    with stop_on_signals(stop) as asked:
        server = Server(
            uvicorn.Config(
                front.app,
                http=h11_protocol(header_timeout),
                log_level="warning",
                timeout_graceful_shutdown=1,
                lifespan="off",
            )
        )
        server.should_exit = asked.requested  # a signal before uvicorn took them over
        try:
            server.run(sockets=[sock])
        finally:
            front.shutdown(asked.why or "shutdown")
            sock.close()
    total = merge(front.summaries)
    total["abandoned"] = dict(sorted(front.abandoned.items()))
    return total


def merge(summaries: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """Several connections' summaries as one (counts added up), with how many there were."""
    total: dict[str, Any] = {"connections": 0, "requests": 0, "calls": 0}
    counters: dict[str, Counter[str]] = {}
    for summary in summaries:
        total["connections"] += 1
        total["requests"] += summary["requests"]
        total["calls"] += summary["calls"]
        for key, value in summary.items():
            if isinstance(value, dict):
                counters.setdefault(key, Counter()).update(value)
    for key in ("faults", "rewrites", "events", "asks", "upstream"):
        total[key] = dict(sorted(counters.get(key, Counter()).items()))
    return total
