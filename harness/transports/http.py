"""Streamable HTTP, both eras on one endpoint, as a thin ASGI adapter over the sans-IO core.

One endpoint (``/mcp`` by default). Handshake-era traffic (2024-11-05 .. 2025-11-25)
gets one :class:`~harness.protocol.server.MCPServer` per MCP session, built by a
factory at ``initialize``; stateless traffic (2026-07-28) is served by one shared
server built by the same factory. The adapter only moves messages; every protocol
decision stays in the core. Rules, in the order they are checked:

1. **Origin, then Host** (DNS-rebinding protection): an ``Origin`` whose host is not
   an allowed name gets 403; a ``Host`` that is not gets 421. Allowed by default:
   ``127.0.0.1``, ``localhost``, ``::1`` and the bind address, any port.
2. **POST** carries one JSON-RPC message. An ``Accept`` that rules out JSON gets 406,
   a non-JSON ``Content-Type`` 415. The body is read as it arrives and never held past
   ``max_body_bytes``: a ``Content-Length`` above it gets 413 before anything is read,
   a body that passes it 413 the moment it does, a body that has not all arrived
   ``body_timeout`` seconds after its headers 408; each of these answers closes the
   connection (the rest of the body is never read), and a client that hangs up
   mid-body is a debug line. Bad JSON gets 400 with -32700, a batch or a non-object
   400 with -32600, an unparseable envelope 400 with the core's code, a message over
   the server's ``max_message_bytes`` 413.
3. **Stateless era**: a POST whose ``params._meta`` names a protocol version, or whose
   ``MCP-Protocol-Version`` header names a stateless one, is self-contained. Its
   mirrored headers must match the body (:func:`_check_routing_headers`: version,
   ``Mcp-Method``, ``Mcp-Name``, ``Mcp-Param-*``), else 400 with -32020. The core
   answers it from its envelope alone; an error's HTTP status comes from
   :data:`STATELESS_ERROR_STATUS`. A notification gets 202 and is dropped; a
   ``subscriptions/listen`` request gets an SSE stream that stays open (closing it
   cancels the request). No session id is read or minted.
4. **Sessions** (handshake era): ``initialize`` builds a fresh server; a successful
   answer carries a new ``Mcp-Session-Id`` (a random UUID). Every other message
   needs that header: missing gets 400, unknown (or ended) 404.
   ``MCP-Protocol-Version``, when sent, must be a version the core speaks, else 400.
5. **Answers**: a request is answered with ``application/json``, or with an SSE
   stream (:class:`PostStream`) when the core queued notifications while handling
   it, when the call waits for the client's input (the core queued a request to the
   client and answered None), or when the tool cut its stream
   (:func:`close_sse_stream`). A stream opens with a priming event (``id``,
   ``retry``) and numbers its events; the client's answer to a server request is a
   separate POST (202) whose follow-up (the call's final reply, or further
   requests) goes down the stream the request went out on.
6. **GET** with ``Last-Event-ID`` resumes a POST stream after that event; a plain
   GET opens the session's one server-to-client SSE stream (a second gets 409):
   notifications queued outside any request go there, and wait in a bounded buffer
   while no stream is open.
7. **DELETE** ends the session (200); its streams close, later use gets 404.

A session's messages are handled one at a time (a lock per session), in a worker
thread so that a slow tool does not stall other sessions; stateless requests take
turns on their shared server. If a tool's exception escapes ``handle`` (the
``escape`` strategy), the session is dropped and the POST gets 500, the HTTP
spelling of a dead server. Sessions past ``max_sessions`` evict the least recently
used one. Nothing here touches :meth:`MCPServer.handle`.

:func:`serve_http` runs the app on uvicorn's h11 protocol with two additions
(:func:`h11_protocol`): a request whose headers have not all arrived
``header_timeout`` seconds after its first byte gets 408 and the connection closes
(a connection that sends nothing at all is closed quietly after the same time); and
a connection closed while the client is still sending its body finishes writing
first and lingers half-open briefly, so that the refusal reaches the client.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import json
import logging
import math
import socket
import threading
import time
import uuid
from collections import OrderedDict, deque
from collections.abc import AsyncIterator, Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, cast
from urllib.parse import urlsplit

import anyio.to_thread
from starlette.applications import Starlette
from starlette.requests import ClientDisconnect, Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route

from harness.protocol.errors import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    MISSING_REQUIRED_CLIENT_CAPABILITY,
    PARSE_ERROR,
    UNSUPPORTED_PROTOCOL_VERSION,
    RPCError,
)
from harness.protocol.messages import (
    JSONRPC,
    Message,
    check_envelope,
    error_response,
    is_response,
    notification,
    reply_id,
)
from harness.protocol.server import MCPServer, parse_json
from harness.protocol.stateless import CANCELLED, SUBSCRIPTION_ID
from harness.protocol.versions import (
    META_CLIENT_CAPABILITIES,
    META_PROTOCOL_VERSION,
    SUPPORTED_VERSIONS,
    is_stateless,
)
from harness.transports.mcp_headers import (
    LAST_EVENT_HEADER,
    METHOD_HEADER,
    NAME_HEADER,
    NAME_PARAM,
    PARAM_HEADER_PREFIX,
    SESSION_HEADER,
    VERSION_HEADER,
    decode_header_value,
    header_paths,
    value_at,
)

log = logging.getLogger("harness.http")

ServerFactory = Callable[[], MCPServer]

DEFAULT_PATH = "/mcp"
DEFAULT_HOST = "127.0.0.1"
LOCAL_NAMES: frozenset[str] = frozenset({"127.0.0.1", "localhost", "::1"})
"""Host names a local server answers to; anything else is a DNS-rebinding suspect."""

HEADER_MISMATCH = -32020
"""MCP 2026-07-28, HTTP only: a mirrored header is missing or does not match the body (status 400)."""

STATELESS_ERROR_STATUS: dict[int, int] = {
    PARSE_ERROR: 400,
    INVALID_REQUEST: 400,
    INVALID_PARAMS: 400,
    HEADER_MISMATCH: 400,
    MISSING_REQUIRED_CLIENT_CAPABILITY: 400,
    UNSUPPORTED_PROTOCOL_VERSION: 400,
    METHOD_NOT_FOUND: 404,
}
"""The HTTP status of a stateless request's JSON-RPC error (others: 200), as the 2026-07-28 transport says."""

DEFAULT_MAX_SESSIONS = 1024
DEFAULT_MAX_BODY_BYTES = 4 * 1024 * 1024
"""The largest POST body read (``harness serve`` sets it from ``--max-message-bytes``)."""
DEFAULT_BODY_TIMEOUT = 30.0
"""Seconds a POST body may take to arrive in full once its headers are in; then 408."""
DEFAULT_HEADER_TIMEOUT = 10.0
"""Seconds a request's headers may take to arrive in full from its first byte; then 408."""
MAX_PENDING = 256
"""Notifications kept per session while no GET stream is open; the oldest go first."""

_JSON = "application/json"
_SSE = "text/event-stream"


RETRY_MS = 1000
"""The ``retry`` a priming event suggests: how long a client waits before it resumes a stream."""
MAX_STREAMS = 64
"""POST streams a session keeps for resumption (``Last-Event-ID``); the oldest finished go first."""

_CALL: contextvars.ContextVar[_CallFlags | None] = contextvars.ContextVar("harness_http_call", default=None)


@dataclass
class _CallFlags:
    """What a running request asked of the transport (see :func:`close_sse_stream`)."""

    cut: bool = False
    retry_ms: int | None = None


def close_sse_stream(retry_ms: int | None = None) -> bool:
    """End the running request's SSE stream before its response (SEP-1699 polling).

    Called by a tool while the HTTP transport runs it: the POST is answered with a
    priming event (an id and ``retry``, ``retry_ms`` if given) and any notifications,
    then the connection closes; the response waits in the stream's log for the client
    to resume with GET and ``Last-Event-ID``. Returns False (and does nothing) when
    no handshake-era HTTP request is running, e.g. over stdio or in memory.
    """
    flags = _CALL.get()
    if flags is None:
        return False
    flags.cut = True
    flags.retry_ms = retry_ms
    return True


@dataclass(eq=False)
class PostStream:
    """One POST's SSE answer, kept as its list of events so that a client can resume it.

    ``events[0]`` is the priming event; event ``i`` has id ``"{key}-{i}"``. ``cut_at``
    is where the POST's own connection ends (None: after the response); a resuming
    GET reads past it. ``done`` once the response is in the list.
    """

    key: str
    events: list[bytes] = field(default_factory=list)
    cut_at: int | None = None
    done: bool = False
    changed: asyncio.Event = field(default_factory=asyncio.Event)

    def push(self, message: Message) -> None:
        event_id = f"{self.key}-{len(self.events)}"
        self.events.append(b"id: " + event_id.encode() + b"\n" + sse_event(message))
        if is_response(message):
            self.done = True
        self.changed.set()

    async def follow(self, start: int, *, past_cut: bool) -> AsyncIterator[bytes]:
        """Events from ``start`` on, waiting for new ones, until the response (or the cut)."""
        pos = start
        while True:
            stop = len(self.events) if past_cut or self.cut_at is None else min(self.cut_at, len(self.events))
            while pos < stop:
                yield self.events[pos]
                pos += 1
            if self.done and pos >= len(self.events):
                return
            if not past_cut and self.cut_at is not None and pos >= self.cut_at:
                return
            self.changed.clear()
            await self.changed.wait()


@dataclass(eq=False)
class Session:
    """One MCP session: its server, a lock serialising its messages, its streams.

    ``streams`` are the POST answers kept for resumption; ``outgoing`` maps the id of
    a request the server sent the client to the stream it went out on, so that the
    client's answer (a separate POST) sends what follows down that same stream.
    """

    id: str
    server: MCPServer
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    pending: deque[Message] = field(default_factory=lambda: deque(maxlen=MAX_PENDING))
    stream: asyncio.Queue[Message | None] | None = None
    streams: OrderedDict[str, PostStream] = field(default_factory=OrderedDict)
    outgoing: dict[Any, PostStream] = field(default_factory=dict)
    waiting: dict[Any, PostStream] = field(default_factory=dict)
    next_stream: int = 0

    def deliver(self, notes: Iterable[Message]) -> None:
        """Send notifications down the GET stream, or keep them until one opens."""
        for note in notes:
            if self.stream is not None:
                self.stream.put_nowait(note)
            else:
                self.pending.append(note)

    def open_stream(self, retry_ms: int) -> PostStream:
        """A new POST stream, primed (its first event: an id, ``retry`` and no data)."""
        key = str(self.next_stream)
        self.next_stream += 1
        post = PostStream(key)
        post.events.append(f"id: {key}-0\nretry: {retry_ms}\ndata: \n\n".encode())
        self.streams[key] = post
        if len(self.streams) > MAX_STREAMS:
            for old_key, old in list(self.streams.items()):
                if old.done and old is not post:
                    del self.streams[old_key]
                    break
        return post

    def send_on(self, post: PostStream, messages: Iterable[Message]) -> None:
        """Put messages on ``post``; a request to the client is remembered by its id."""
        for message in messages:
            if "method" in message and "id" in message:
                self.outgoing[message["id"]] = post
            elif "method" not in message:
                self.waiting.pop(message.get("id"), None)
            post.push(message)

    def cancelled(self, request_id: Any) -> None:
        """The client gave up on a call that waits for its input: end the call's stream, unanswered."""
        post = self.waiting.pop(request_id, None)
        if post is None:
            return
        for sid in [sid for sid, out in self.outgoing.items() if out is post]:
            del self.outgoing[sid]
        post.done = True
        post.changed.set()

    def close(self) -> None:
        if self.stream is not None:
            self.stream.put_nowait(None)
            self.stream = None
        for post in self.streams.values():
            post.done = True
            post.changed.set()


@dataclass
class _Outcome:
    """What handling one message gave: the reply (None: none, or not yet), what was queued, flags."""

    reply: Message | None
    notes: list[Message]
    flags: _CallFlags


class _Reject(Exception):
    """An HTTP-level refusal: status, and the JSON-RPC error to put in the body (if any)."""

    def __init__(self, status: int, code: int | None, message: str, req_id: Any = None) -> None:
        super().__init__(message)
        self.status, self.code, self.message, self.req_id = status, code, message, req_id

    def response(self) -> Response:
        if self.code is None:
            return Response(self.message, status_code=self.status, media_type="text/plain")
        return _json(error_response(self.req_id, self.code, self.message), self.status)


class _ClientGone(Exception):
    """The client hung up before its POST body was in: nobody to answer."""


def _dump(message: Message) -> bytes:
    try:
        return json.dumps(message, separators=(",", ":")).encode()
    except (TypeError, ValueError, OverflowError) as exc:
        reply = error_response(reply_id(message), INTERNAL_ERROR, f"reply not serializable: {exc}")
        return json.dumps(reply, separators=(",", ":")).encode()


def _json(message: Message, status: int = 200, headers: dict[str, str] | None = None) -> Response:
    return Response(_dump(message), status_code=status, media_type=_JSON, headers=headers)


def sse_event(message: Message) -> bytes:
    """One SSE ``message`` event carrying one JSON-RPC message (compact JSON has no newline)."""
    return b"event: message\ndata: " + _dump(message) + b"\n\n"


async def _plain_events(messages: list[Message]) -> AsyncIterator[bytes]:
    for message in messages:
        yield sse_event(message)


def _subscription_of(message: Message) -> Any:
    body = message.get("params") if "method" in message else message.get("result")
    meta = body.get("_meta") if isinstance(body, dict) else None
    return meta.get(SUBSCRIPTION_ID) if isinstance(meta, dict) else None


def _stateless_route(request: Request, message: Message) -> bool:
    """Whether a POST is 2026-07-28 traffic: its ``_meta`` names a version, or its header a stateless one."""
    params = message.get("params")
    meta = params.get("_meta") if isinstance(params, dict) else None
    if isinstance(meta, dict) and META_PROTOCOL_VERSION in meta and message.get("method") != "initialize":
        return True
    return is_stateless(request.headers.get(VERSION_HEADER))


def _same(header: str | None, value: Any) -> bool:
    if header is None:
        return False
    text = decode_header_value(header)
    if isinstance(value, bool):
        return text == ("true" if value else "false")
    if isinstance(value, int | float):
        try:
            return float(text or "") == float(value)
        except ValueError:
            return False
    return bool(text == value)


def _check_routing_headers(request: Request, message: Message, server: MCPServer) -> None:
    """The 2026-07-28 transport's header rules: each mirrored value must match the body (-32020)."""
    req_id = message["id"]
    raw = message.get("params")
    params: dict[str, Any] = raw if isinstance(raw, dict) else {}
    meta = params.get("_meta")
    if not isinstance(meta, dict) or META_PROTOCOL_VERSION not in meta:
        raise _Reject(
            400,
            INVALID_PARAMS,
            f"params._meta must carry {META_PROTOCOL_VERSION!r} and {META_CLIENT_CAPABILITIES!r}",
            req_id,
        )

    def mismatch(what: str) -> _Reject:
        return _Reject(400, HEADER_MISMATCH, f"header mismatch: {what}", req_id)

    if request.headers.get(VERSION_HEADER) != meta[META_PROTOCOL_VERSION]:
        raise mismatch(f"{VERSION_HEADER} does not match the body's protocol version")
    method = message["method"]
    if request.headers.get(METHOD_HEADER) != method:
        raise mismatch(f"{METHOD_HEADER} does not match the body's method {method!r}")
    key = NAME_PARAM.get(method)
    name = params.get(key) if key is not None else None
    if name is not None and not _same(request.headers.get(NAME_HEADER), name):
        raise mismatch(f"{NAME_HEADER} does not match the body's {key} {name!r}")
    tool = server.tools.get(name) if method == "tools/call" and isinstance(name, str) else None
    if tool is None:
        return
    arguments = params.get("arguments")
    for header, path in header_paths(tool.input_schema).items():
        value = value_at(arguments, path)
        if value is not None and not _same(request.headers.get(PARAM_HEADER_PREFIX + header), value):
            raise mismatch(f"{PARAM_HEADER_PREFIX}{header} does not match the argument {'.'.join(path)}")


def _stream(events: AsyncIterator[bytes]) -> StreamingResponse:
    headers = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
    return StreamingResponse(events, media_type=_SSE, headers=headers)


def _accepts(request: Request, media: str) -> bool:
    accept = request.headers.get("accept")
    if accept is None:
        return True
    kinds = {part.split(";", 1)[0].strip().lower() for part in accept.split(",")}
    return bool(kinds & {media, media.split("/", 1)[0] + "/*", "*/*"})


def _asks_for_sse(request: Request) -> bool:
    """Whether the client's Accept names SSE (an absent Accept allows anything but asks for JSON)."""
    return request.headers.get("accept") is not None and _accepts(request, _SSE)


def _host_name(value: str) -> str | None:
    try:
        return urlsplit("//" + value).hostname
    except ValueError:
        return None


EVICTION_LOG_S = 10.0
"""At most one line per this many seconds says how many sessions were evicted."""


class EvictionLog:
    """One line per burst of evictions, with its count, where a line per session would let any
    local process flood the log (1,100 sessions opened in a loop printed 3,181 lines, issue 49):
    the first eviction is logged at once, the rest of a burst when :data:`EVICTION_LOG_S` has
    passed since that line (at the next eviction), so a burst costs a line or two."""

    def __init__(self, max_sessions: int) -> None:
        self.max_sessions = max_sessions
        self.pending = 0
        self.total = 0
        self.logged_at = -math.inf

    def evicted(self, now: float) -> None:
        self.pending += 1
        self.total += 1
        if now - self.logged_at >= EVICTION_LOG_S:
            log.info(
                "%d session%s evicted (more than %d sessions; the least recently used go first; %d in all)",
                self.pending, "" if self.pending == 1 else "s", self.max_sessions, self.total,
            )  # fmt: skip
            self.pending, self.logged_at = 0, now


class StreamableHTTP:
    """The transport's state (sessions) and its ASGI app, :attr:`app`."""

    def __init__(
        self,
        factory: ServerFactory,
        *,
        path: str = DEFAULT_PATH,
        allowed_hosts: Iterable[str] | None = None,
        max_sessions: int = DEFAULT_MAX_SESSIONS,
        max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
        body_timeout: float | None = DEFAULT_BODY_TIMEOUT,
        retry_ms: int = RETRY_MS,
    ) -> None:
        if max_sessions < 1:
            raise ValueError("max_sessions must be a positive integer")
        if body_timeout is not None and body_timeout <= 0:
            raise ValueError("body_timeout must be positive (None: no limit)")
        self.factory = factory
        self.path = path
        self.allowed_hosts = frozenset(h.lower().strip("[]") for h in (allowed_hosts or LOCAL_NAMES))
        self.max_sessions = max_sessions
        self.max_body_bytes = max_body_bytes
        self.body_timeout = body_timeout
        self.retry_ms = retry_ms
        self._stateless: MCPServer | None = None
        self._stateless_lock = threading.Lock()
        self.listen_streams: dict[Any, asyncio.Queue[Message | None]] = {}
        """Open ``subscriptions/listen`` streams by request id (stateless era)."""
        self.sessions: OrderedDict[str, Session] = OrderedDict()
        self.evictions = EvictionLog(max_sessions)
        self.app = Starlette(routes=[Route(path, self._endpoint, methods=["GET", "POST", "DELETE"])])

    # -- checks shared by every method -------------------------------------------

    def _check_origin_and_host(self, request: Request) -> None:
        origin = request.headers.get("origin")
        if origin is not None:
            parts = urlsplit(origin) if "://" in origin else None
            name = parts.hostname if parts is not None and parts.scheme in ("http", "https") else None
            if name not in self.allowed_hosts:
                raise _Reject(403, None, f"Origin {origin!r} not allowed")
        host = request.headers.get("host")
        if host is None or _host_name(host) not in self.allowed_hosts:
            raise _Reject(421, None, f"Host {host!r} not allowed")

    def _check_version(self, request: Request, req_id: Any = None) -> None:
        version = request.headers.get(VERSION_HEADER)
        if version is not None and version not in SUPPORTED_VERSIONS:
            raise _Reject(
                400,
                INVALID_REQUEST,
                f"unsupported {VERSION_HEADER} {version!r}; supported: {', '.join(SUPPORTED_VERSIONS)}",
                req_id,
            )

    def _session(self, request: Request, req_id: Any = None) -> Session:
        sid = request.headers.get(SESSION_HEADER)
        if sid is None:
            raise _Reject(
                400, INVALID_REQUEST, f"missing {SESSION_HEADER} header; send initialize first", req_id
            )
        session = self.sessions.get(sid)
        if session is None:
            raise _Reject(404, INVALID_REQUEST, f"unknown or ended session {sid!r}", req_id)
        self.sessions.move_to_end(sid)
        return session

    # -- the endpoint -------------------------------------------------------------

    async def _endpoint(self, request: Request) -> Response:
        # A refusal sent before a POST's body is read closes the connection: the rest of
        # the body is never read, and an answer on a connection still carrying it would
        # leave the client's next request behind it.
        unread = request.method == "POST" and request.headers.get("content-length") != "0"
        try:
            self._check_origin_and_host(request)
            if request.method == "POST":
                body = await self._read_body(request)
                unread = False
                return await self._post(request, body)
            if request.method == "GET":
                return self._get(request)
            return self._delete(request)
        except _Reject as rej:
            response = rej.response()
            if unread:
                response.headers["Connection"] = "close"
            return response
        except _ClientGone:
            return Response(status_code=400)  # nobody reads it; the server drops it

    async def _read_body(self, request: Request) -> bytes:
        """A POST's body, read as it arrives and never held past ``max_body_bytes``.

        406 and 415 come first (from the headers alone); then 413 at once when
        ``Content-Length`` declares more than the limit, or the moment the bytes read
        pass it; 408 when the whole body is not in within ``body_timeout`` seconds.
        A client that hangs up mid-body raises :class:`_ClientGone` (logged at debug).
        """
        if not _accepts(request, _JSON):
            raise _Reject(406, None, f"Accept must allow {_JSON}")
        ctype = request.headers.get("content-type", "").split(";", 1)[0].strip().lower()
        if ctype != _JSON:
            raise _Reject(415, None, f"Content-Type must be {_JSON}")
        limit = self.max_body_bytes
        too_big = _Reject(413, INVALID_REQUEST, f"message larger than {limit} bytes")
        declared = request.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > limit:
            log.debug("refused a body of %s bytes (limit %d) before reading it", declared, limit)
            raise too_big
        chunks: list[bytes] = []
        size = 0
        try:
            with anyio.fail_after(self.body_timeout):
                async with contextlib.aclosing(request.stream()) as stream:
                    async for chunk in stream:
                        size += len(chunk)
                        if size > limit:
                            log.debug("refused a body at %d bytes (limit %d)", size, limit)
                            raise too_big
                        chunks.append(chunk)
        except TimeoutError:
            log.debug("a body was not in after %s s (%d bytes read)", self.body_timeout, size)
            raise _Reject(408, None, f"the body did not arrive within {self.body_timeout:g} s") from None
        except ClientDisconnect:
            log.debug("the client hung up after %d bytes of its POST body", size)
            raise _ClientGone from None
        return b"".join(chunks)

    async def _post(self, request: Request, body: bytes) -> Response:
        try:
            message = parse_json(body)
        except ValueError as exc:
            raise _Reject(400, PARSE_ERROR, f"parse error: {exc}") from None
        if isinstance(message, list):
            raise _Reject(400, INVALID_REQUEST, "JSON-RPC batches are not part of MCP")
        if not isinstance(message, dict):
            raise _Reject(400, INVALID_REQUEST, "a JSON-RPC message must be an object")
        req_id = reply_id(message)
        answer_only = is_response(message) and message.get("jsonrpc") == JSONRPC
        if not answer_only:
            try:
                check_envelope(message)
            except RPCError as exc:
                raise _Reject(400, exc.code, exc.message, req_id) from None
        if not answer_only and _stateless_route(request, message):
            return await self._post_stateless(request, message, len(body))
        self._check_version(request, req_id)
        is_request = not answer_only and "id" in message
        if is_request and message["method"] == "initialize":
            return await self._initialize(message, len(body))
        session = self._session(request, req_id)
        self._check_size(session.server, len(body), req_id)
        outcome = await self._handle(session, message)
        reply, notes = outcome.reply, outcome.notes
        if not is_request:
            post = session.outgoing.pop(message.get("id"), None) if answer_only else None
            out = [*notes, reply] if reply is not None else notes
            if post is not None:  # the client answered our request: what follows goes where it came from
                session.send_on(post, out)
            else:
                session.deliver(out)
            params = message.get("params")
            if message.get("method") == CANCELLED and isinstance(params, dict):
                session.cancelled(params.get("requestId"))
            return Response(status_code=202)
        sse = _asks_for_sse(request)
        if reply is None or outcome.flags.cut or (notes and sse):
            post = session.open_stream(outcome.flags.retry_ms or self.retry_ms)
            session.send_on(post, notes)
            if outcome.flags.cut:
                post.cut_at = len(post.events)
            if reply is not None:
                post.push(reply)
            else:
                session.waiting[message["id"]] = post
            return _stream(post.follow(0, past_cut=False))
        session.deliver(notes)
        return _json(reply)

    @staticmethod
    def _check_size(server: MCPServer, size: int, req_id: Any) -> None:
        if size > server.max_message_bytes:
            raise _Reject(
                413, INVALID_REQUEST, f"message larger than {server.max_message_bytes} bytes", req_id
            )

    async def _initialize(self, message: Message, size: int) -> Response:
        session = Session(uuid.uuid4().hex, self.factory())
        self._check_size(session.server, size, reply_id(message))
        outcome = await self._handle(session, message)
        reply, notes = outcome.reply, outcome.notes
        assert reply is not None
        if "result" not in reply:
            return _json(reply)  # a refused handshake opens no session
        session.deliver(notes)
        self.sessions[session.id] = session
        while len(self.sessions) > self.max_sessions:
            _, old = self.sessions.popitem(last=False)
            old.close()
            self.evictions.evicted(time.monotonic())
        return _json(reply, headers={SESSION_HEADER: session.id})

    async def _handle(self, session: Session, message: Message) -> _Outcome:
        def run() -> _Outcome:
            flags = _CallFlags()
            token = _CALL.set(flags)
            try:
                reply = session.server.handle(message)
            finally:
                _CALL.reset(token)
            return _Outcome(reply, session.server.take_notifications(), flags)

        async with session.lock:
            try:
                return await anyio.to_thread.run_sync(run)
            except Exception:
                log.exception("session %s: an exception escaped the server; session dropped", session.id)
                if self.sessions.pop(session.id, None) is not None:
                    session.close()
                raise _Reject(500, None, "the server session crashed") from None

    # -- the stateless era ------------------------------------------------------------

    async def _post_stateless(self, request: Request, message: Message, size: int) -> Response:
        """One self-contained 2026-07-28 POST: routing headers checked, then the shared stateless server."""
        if "id" not in message:
            return Response(status_code=202)  # the era defines no client notifications over HTTP: dropped
        req_id = message["id"]
        server = self.stateless_server()
        self._check_size(server, size, req_id)
        _check_routing_headers(request, message, server)

        def run() -> tuple[Message | None, list[Message]]:
            with self._stateless_lock:
                return server.handle(message), server.take_notifications()

        try:
            reply, notes = await anyio.to_thread.run_sync(run)
        except Exception:
            log.exception("an exception escaped the stateless server; it is rebuilt")
            self._stateless = None
            raise _Reject(500, None, "the server crashed") from None
        own = self._route_listen_events(notes)
        if reply is None:  # a subscriptions/listen stream: open until the client goes
            return self._listen_stream(server, req_id, own)
        status = 200
        if "error" in reply:
            status = STATELESS_ERROR_STATUS.get(reply["error"].get("code"), 200)
        if own and status == 200 and _asks_for_sse(request):
            return _stream(_plain_events([*own, reply]))
        return _json(reply, status)

    def stateless_server(self) -> MCPServer:
        """The one server every stateless request shares (built on first use; requests take turns)."""
        if self._stateless is None:
            self._stateless = self.factory()
        return self._stateless

    def _route_listen_events(self, notes: list[Message]) -> list[Message]:
        """Send listen-stream events to their streams; the rest belong to the request just served."""
        own = []
        for note in notes:
            stream = self.listen_streams.get(_subscription_of(note))
            if stream is None:
                own.append(note)
            else:
                stream.put_nowait(note)
                if "method" not in note:  # the stream's final result: it ends
                    stream.put_nowait(None)
        return own

    def _listen_stream(self, server: MCPServer, req_id: Any, first: list[Message]) -> Response:
        queue: asyncio.Queue[Message | None] = asyncio.Queue()
        for note in first:
            queue.put_nowait(note)
        self.listen_streams[req_id] = queue

        async def events() -> AsyncIterator[bytes]:
            try:
                while (note := await queue.get()) is not None:
                    yield sse_event(note)
            finally:
                if self.listen_streams.pop(req_id, None) is not None:
                    # Closing the stream cancels the listen request (the spec's rule for this era).
                    cancel = notification(CANCELLED, {"requestId": req_id})
                    asyncio.get_running_loop().run_in_executor(None, self._cancel, server, cancel)

        return _stream(events())

    def _cancel(self, server: MCPServer, cancel: Message) -> None:
        with self._stateless_lock:
            server.handle(cancel)
            server.take_notifications()

    def _get(self, request: Request) -> Response:
        if not _asks_for_sse(request):
            raise _Reject(406, None, f"Accept must allow {_SSE}")
        self._check_version(request)
        session = self._session(request)
        last = request.headers.get(LAST_EVENT_HEADER)
        if last is not None:
            return self._resume(session, last)
        if session.stream is not None:
            raise _Reject(409, None, "this session already has a GET stream")
        queue: asyncio.Queue[Message | None] = asyncio.Queue()
        for note in session.pending:
            queue.put_nowait(note)
        session.pending.clear()
        session.stream = queue

        async def events() -> AsyncIterator[bytes]:
            try:
                while True:
                    note = await queue.get()
                    if note is None:
                        return
                    yield sse_event(note)
            finally:
                if session.stream is queue:
                    session.stream = None

        return StreamingResponse(events(), media_type=_SSE, headers={"Cache-Control": "no-cache"})

    @staticmethod
    def _resume(session: Session, last: str) -> Response:
        key, _, index = last.rpartition("-")
        post = session.streams.get(key)
        if post is None or not index.isdigit() or int(index) >= len(post.events):
            raise _Reject(404, None, f"no stream to resume after event {last!r}")
        return _stream(post.follow(int(index) + 1, past_cut=True))

    def _delete(self, request: Request) -> Response:
        self._check_version(request)
        session = self._session(request)
        del self.sessions[session.id]
        session.close()
        return Response(status_code=200)

    def shutdown(self) -> None:
        """End every session, closing open GET streams (so a server can stop promptly)."""
        for session in self.sessions.values():
            session.close()
        self.sessions.clear()


def create_app(factory: ServerFactory, **options: Any) -> Starlette:
    """The ASGI app serving ``factory``'s servers; ``options`` as for :class:`StreamableHTTP`."""
    return StreamableHTTP(factory, **options).app


def bind_socket(host: str, port: int) -> socket.socket:
    """A listening TCP socket on ``host:port`` (port 0 picks a free one)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host.strip("[]"), port))
    except OSError:
        sock.close()
        raise
    sock.listen(128)
    sock.set_inheritable(True)
    return sock


_TIMED_OUT = b"HTTP/1.1 408 Request Timeout\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"

LINGER_SECONDS = 0.5
"""How long a connection closed while its client is still sending stays half-open.

Closing a socket with unread data makes the kernel reset the connection at once, and
a reset can overtake (or stop the retransmission of) the answer just written, so the
client sees "connection reset" instead of the 413. So the write side is shut (FIN
after the answer), reading paused (nothing more is buffered; the client's writes
stall), and the socket closed this long after; the same trick as Go's net/http.
"""


def h11_protocol(header_timeout: float | None = DEFAULT_HEADER_TIMEOUT) -> type[asyncio.Protocol]:
    """uvicorn's h11 protocol with a header timeout and a close that lets a refusal arrive.

    uvicorn (0.55) has no header timeout: its keep-alive timer runs only between
    requests and stops at the first byte, so a client sending its headers a byte at a
    time holds the connection as long as it likes. Here a timer starts when a
    connection opens and at the first byte of each later request, and stops once h11
    has the whole head (it leaves ``IDLE``); when ``header_timeout`` seconds pass
    first, a partial head gets 408 and the connection closes (one that sent nothing
    is closed without a word). None: no header timeout.

    A connection closed while the client is still sending its body (a 413 or 408
    from :class:`StreamableHTTP`) lingers :data:`LINGER_SECONDS` first. Pass the class
    as ``uvicorn.Config(http=...)``; :func:`serve_http` does.
    """
    import h11
    from uvicorn.protocols.http.h11_impl import H11Protocol

    if header_timeout is not None and header_timeout <= 0:
        raise ValueError("header_timeout must be positive (None: no limit)")

    class Lingering:
        """The transport as uvicorn sees it: a close mid-body shuts writing, then closes later."""

        _lingering: bool

        def __init__(self, transport: asyncio.Transport, protocol: GuardedH11) -> None:
            self._transport = transport
            self._protocol = protocol
            self._lingering = False

        def __getattr__(self, name: str) -> Any:
            return getattr(self._transport, name)

        def is_closing(self) -> bool:
            return self._lingering or self._transport.is_closing()

        def close(self) -> None:
            mid_body = self._protocol.conn.their_state is h11.SEND_BODY
            if self._lingering or not mid_body or self._transport.is_closing():
                self._transport.close()
                return
            try:
                self._transport.pause_reading()
                self._transport.write_eof()
            except (OSError, NotImplementedError):  # the client has gone already (or TLS): just close
                self._transport.close()
                return
            self._lingering = True
            self._protocol.loop.call_later(LINGER_SECONDS, self._transport.close)

    class GuardedH11(H11Protocol):
        _header_timer: asyncio.TimerHandle | None = None

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(cast(asyncio.Transport, Lingering(transport, self)))
            self._arm()

        def data_received(self, data: bytes) -> None:
            if self._header_timer is None and self.conn.their_state is h11.IDLE:
                self._arm()  # the first byte of a new request
            super().data_received(data)
            if self.conn.their_state is not h11.IDLE:
                self._disarm()

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm()
            super().connection_lost(exc)

        def _arm(self) -> None:
            self._disarm()
            if header_timeout is not None:
                self._header_timer = self.loop.call_later(header_timeout, self._expired)

        def _disarm(self) -> None:
            if self._header_timer is not None:
                self._header_timer.cancel()
                self._header_timer = None

        def _expired(self) -> None:
            self._header_timer = None
            if self.conn.their_state is not h11.IDLE or self.transport.is_closing():
                return
            partial, _ = self.conn.trailing_data
            log.debug("request headers not in after %g s (%d bytes); closing", header_timeout, len(partial))
            if partial:
                self.transport.write(_TIMED_OUT)
            self.transport.close()

    return GuardedH11


def serve_http(
    factory: ServerFactory,
    *,
    host: str = DEFAULT_HOST,
    port: int = 8000,
    path: str = DEFAULT_PATH,
    allowed_hosts: Iterable[str] | None = None,
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
    body_timeout: float | None = DEFAULT_BODY_TIMEOUT,
    header_timeout: float | None = DEFAULT_HEADER_TIMEOUT,
) -> None:
    """Serve until interrupted; logs ``listening on http://HOST:PORT/mcp`` (the real port) first.

    ``max_body_bytes`` and ``body_timeout`` are as for :class:`StreamableHTTP`
    (``harness serve`` passes ``--max-message-bytes`` as the first);
    ``header_timeout`` is :func:`h11_protocol`'s (None: no limit).
    """
    import uvicorn

    from harness.errors import UserError

    names = set(LOCAL_NAMES if allowed_hosts is None else allowed_hosts)
    if allowed_hosts is None and host not in ("0.0.0.0", "::"):
        names.add(host.strip("[]"))
    transport = StreamableHTTP(
        factory, path=path, allowed_hosts=names, max_body_bytes=max_body_bytes, body_timeout=body_timeout
    )
    try:
        sock = bind_socket(host, port)
    except OSError as exc:
        raise UserError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    actual = sock.getsockname()[1]
    shown = f"[{host.strip('[]')}]" if ":" in host else host
    log.info("listening on http://%s:%d%s (Streamable HTTP)", shown, actual, path)
    if allowed_hosts is None and host in ("0.0.0.0", "::"):
        log.warning(
            "bound to every interface, but only Host/Origin %s are accepted", ", ".join(sorted(names))
        )
    config = uvicorn.Config(
        transport.app,
        http=h11_protocol(header_timeout),
        log_level="warning",
        timeout_graceful_shutdown=1,
        lifespan="off",
    )
    server = uvicorn.Server(config)
    try:
        server.run(sockets=[sock])
    finally:
        transport.shutdown()
        sock.close()
