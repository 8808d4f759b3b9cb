"""The Streamable HTTP front: the proxy as an MCP endpoint, one upstream per client session.

What the front does, in the order it is checked:

1. ``Origin`` and ``Host`` must name this machine (403, 421), as for ``harness serve --http``.
2. **POST** carries one JSON-RPC message (a body over ``max_body_bytes`` gets 413, bad JSON
   400 with -32700, a batch or a non-object 400 with -32600).
3. A message whose ``params._meta`` names a protocol version (or whose
   ``MCP-Protocol-Version`` header names a stateless one) is stateless traffic: it goes to
   one shared connection (one upstream) for every stateless request. ``initialize`` opens a
   session of its own (a fresh upstream; ``Mcp-Session-Id`` on the answer); every other
   message names its session (400 without the header, 404 for an unknown one).
4. A request is answered with JSON when its reply is the first thing that comes back for it;
   otherwise (progress, a request the server sends mid-call, a listen stream's events) with
   an SSE stream that ends with the reply. What belongs to no request in flight goes down
   the session's GET stream (kept in a bounded buffer until one opens). A notification or a
   response gets 202. A stateless stream the client closes early cancels its request.
5. **DELETE** ends the session and its upstream.
6. **A client that went away** costs nothing for long: a session whose client closed a
   request's connection before its answer came, and sent nothing more within
   :data:`GONE_GRACE_S`, is closed and its server stopped (``client gone``); so is one with no
   request in flight and no stream open for ``idle`` seconds (``idle``). The summary counts
   both (``abandoned``). The shared stateless connection is never closed so: a closed
   stateless request is cancelled instead.

The front decides nothing about MCP itself: every message goes through the session's
:class:`~harness.proxy.link.ProxyLink`, which says which request each outgoing message
belongs to.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import threading
import uuid
from collections import Counter, deque
from collections.abc import AsyncIterator, Callable, Iterable
from typing import Any
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
    PARSE_ERROR,
    TransportError,
)
from harness.protocol.messages import Message, RequestId, error_response, notification, reply_id
from harness.protocol.server import parse_json
from harness.protocol.stateless import CANCELLED
from harness.protocol.versions import META_PROTOCOL_VERSION, is_stateless
from harness.proxy.core import DEFAULT_MAX_SESSIONS, STOP_AT_END
from harness.proxy.link import ClientSink, ProxyLink
from harness.transports.http import (
    DEFAULT_MAX_BODY_BYTES,
    DEFAULT_PATH,
    LOCAL_NAMES,
    MAX_PENDING,
    STATELESS_ERROR_STATUS,
    sse_event,
)
from harness.transports.mcp_headers import SESSION_HEADER, VERSION_HEADER

log = logging.getLogger("harness.proxy")

LinkFactory = Callable[[ClientSink, int], ProxyLink]
"""Builds the link of a new connection: its client sink, and its number (0: the stateless one)."""

_JSON = "application/json"
_SSE = "text/event-stream"
DEFAULT_SESSION_IDLE_S = 300.0
"""``harness proxy --http --session-idle``'s default."""
GONE_GRACE_S = 1.0
"""Seconds a session whose client dropped a request mid-call has to show it is still there."""
REAP_EVERY_S = 0.25
"""How often the front looks for sessions to close."""
GONE = "client gone"
IDLE = "idle"


CLOSING_WAIT_S = 30.0
"""How long a shutdown waits for a link a reaper is closing in a thread, so its summary counts."""


class _Refuse(Exception):
    def __init__(self, status: int, code: int | None, message: str, req_id: Any = None) -> None:
        super().__init__(message)
        self.status, self.code, self.message, self.req_id = status, code, message, req_id

    def response(self) -> Response:
        if self.code is None:
            return Response(self.message, status_code=self.status, media_type="text/plain")
        return _json(error_response(self.req_id, self.code, self.message), self.status)


def _check_initialize(message: Message, rid: Any) -> None:
    """Refuse an ``initialize`` no server could accept before a process is started for it."""
    params = message.get("params")
    if not isinstance(params, dict):
        raise _Refuse(400, INVALID_PARAMS, "initialize needs params: an object", rid)
    if not isinstance(params.get("protocolVersion"), str):
        raise _Refuse(400, INVALID_PARAMS, "initialize needs params.protocolVersion: a string", rid)


def _dump(message: Message) -> bytes:
    return json.dumps(message, separators=(",", ":"), ensure_ascii=False).encode()


def _json(message: Message, status: int = 200, headers: dict[str, str] | None = None) -> Response:
    return Response(_dump(message), status_code=status, media_type=_JSON, headers=headers)


def _accepts(request: Request, media: str) -> bool:
    accept = request.headers.get("accept")
    if accept is None:
        return media == _JSON
    kinds = {part.split(";", 1)[0].strip().lower() for part in accept.split(",")}
    return bool(kinds & {media, media.split("/", 1)[0] + "/*", "*/*"})


def _is_reply(message: Message, rid: RequestId) -> bool:
    got = message.get("id")
    return "method" not in message and got == rid and type(got) is type(rid)


def _stateless(request: Request, message: Message) -> bool:
    params = message.get("params")
    meta = params.get("_meta") if isinstance(params, dict) else None
    if isinstance(meta, dict) and META_PROTOCOL_VERSION in meta and message.get("method") != "initialize":
        return True
    return is_stateless(request.headers.get(VERSION_HEADER))


class FrontSession:
    """One client connection: its link, the POSTs waiting for answers, its GET stream."""

    def __init__(self, sid: str | None, loop: asyncio.AbstractEventLoop) -> None:
        self.id = sid
        self.loop = loop
        self.link: ProxyLink | None = None
        self.waiters: dict[RequestId, asyncio.Queue[Message]] = {}
        self.stream: asyncio.Queue[Message | None] | None = None
        self.buffer: deque[Message] = deque(maxlen=MAX_PENDING)
        self.closed = False
        self.seen = loop.time()
        """When the client last did something in this session (a request, an answer, a stream)."""
        self.gone_at: float | None = None
        """When the client dropped a request before its answer (None: it has not, or came back)."""

    def touch(self) -> None:
        """The client is here: it sent something, or something of it ended."""
        self.seen = self.loop.time()
        self.gone_at = None

    def idle_since(self) -> float | None:
        """Since when nothing of the client is open here (None: a request or a stream is)."""
        if self.waiters or self.stream is not None:
            return None
        return self.seen

    def sink(self, message: Message, related: RequestId | None) -> None:
        """The link's client sink (any thread): route on the event loop."""
        with contextlib.suppress(RuntimeError):  # the loop has stopped: nobody to tell
            self.loop.call_soon_threadsafe(self.route, message, related)

    def route(self, message: Message, related: RequestId | None) -> None:
        waiting = self.waiters.get(related) if related is not None else None
        if waiting is not None:
            waiting.put_nowait(message)
        elif "method" not in message:
            return  # an answer nobody waits for any more
        elif self.stream is not None:
            self.stream.put_nowait(message)
        else:
            self.buffer.append(message)

    def from_client(self, message: Message) -> None:
        assert self.link is not None
        self.link.from_client(message)


class ProxyHTTP:
    """The front's state (sessions) and its ASGI app, :attr:`app`."""

    def __init__(
        self,
        make_link: LinkFactory,
        *,
        path: str = DEFAULT_PATH,
        allowed_hosts: Iterable[str] | None = None,
        max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
        idle: float | None = DEFAULT_SESSION_IDLE_S,
        max_sessions: int = DEFAULT_MAX_SESSIONS,
    ) -> None:
        self.make_link = make_link
        self.max_sessions = max_sessions
        """Cap on live sessions: each one is an upstream process, so an unbounded count is a fork bomb."""
        self.idle = idle
        """Seconds a session may sit idle before it is closed (None: never)."""
        self.abandoned: Counter[str] = Counter()
        """Sessions closed because their client went away, by why (``client gone``, ``idle``)."""
        self._reaper: asyncio.Task[None] | None = None
        self.path = path
        self.allowed_hosts = frozenset(h.lower().strip("[]") for h in (allowed_hosts or LOCAL_NAMES))
        self.max_body_bytes = max_body_bytes
        self.sessions: dict[str, FrontSession] = {}
        self.summaries: list[dict[str, Any]] = []
        self._closing: list[threading.Event] = []
        """One per link being closed in a thread (:meth:`_finish`), set once its summary is in."""
        self._stateless: FrontSession | None = None
        self._stateless_lock: asyncio.Lock | None = None
        self._count = 0
        self._opening = 0  # sessions whose upstream is starting: counted against the cap too
        self.app = Starlette(routes=[Route(path, self._endpoint, methods=["GET", "POST", "DELETE"])])

    async def _endpoint(self, request: Request) -> Response:
        try:
            self._check_origin_and_host(request)
            if request.method == "POST":
                return await self._post(request)
            if request.method == "GET":
                return self._get(request)
            return await self._delete(request)
        except _Refuse as refused:
            return refused.response()
        except ClientDisconnect:
            return Response(status_code=400)

    def _check_origin_and_host(self, request: Request) -> None:
        origin = request.headers.get("origin")
        if origin is not None:
            parts = urlsplit(origin) if "://" in origin else None
            name = parts.hostname if parts is not None and parts.scheme in ("http", "https") else None
            if name not in self.allowed_hosts:
                raise _Refuse(403, None, f"Origin {origin!r} not allowed")
        host = request.headers.get("host")
        try:
            name = urlsplit("//" + host).hostname if host is not None else None
        except ValueError:
            name = None
        if name not in self.allowed_hosts:
            raise _Refuse(421, None, f"Host {host!r} not allowed")

    async def _read(self, request: Request) -> bytes:
        ctype = request.headers.get("content-type", "").split(";", 1)[0].strip().lower()
        if ctype != _JSON:
            raise _Refuse(415, None, f"Content-Type must be {_JSON}")
        declared = request.headers.get("content-length", "")
        too_big = _Refuse(413, INVALID_REQUEST, f"message larger than {self.max_body_bytes} bytes")
        if declared.isdigit() and int(declared) > self.max_body_bytes:
            raise too_big
        chunks: list[bytes] = []
        size = 0
        async for chunk in request.stream():
            size += len(chunk)
            if size > self.max_body_bytes:
                raise too_big
            chunks.append(chunk)
        return b"".join(chunks)

    # -- sessions -----------------------------------------------------------------------------------

    async def _open(self, sid: str | None, req_id: Any = None) -> FrontSession:
        number = 0  # the stateless connection
        if sid is not None:
            if len(self.sessions) + self._opening >= self.max_sessions:
                raise _Refuse(
                    503,
                    INTERNAL_ERROR,
                    f"too many live sessions (--max-sessions {self.max_sessions}); try again later",
                    req_id,
                )
            self._count += 1
            number = self._count
        session = FrontSession(sid, asyncio.get_running_loop())
        if self._reaper is None:
            self._reaper = asyncio.create_task(self._reap())
        session.link = self.make_link(session.sink, number)
        self._opening += 1
        try:
            await anyio.to_thread.run_sync(session.link.start)
        except TransportError as exc:
            raise _Refuse(502, INTERNAL_ERROR, f"the upstream server did not start: {exc}", req_id) from None
        finally:
            self._opening -= 1
        return session

    async def _stateless_session(self) -> FrontSession:
        if self._stateless_lock is None:
            self._stateless_lock = asyncio.Lock()
        async with self._stateless_lock:
            if self._stateless is None:
                self._stateless = await self._open(None)
            return self._stateless

    def _session(self, request: Request, req_id: Any = None) -> FrontSession:
        sid = request.headers.get(SESSION_HEADER)
        if sid is None:
            raise _Refuse(
                400, INVALID_REQUEST, f"missing {SESSION_HEADER} header; send initialize first", req_id
            )
        session = self.sessions.get(sid)
        if session is None:
            raise _Refuse(404, INVALID_REQUEST, f"unknown or ended session {sid!r}", req_id)
        return session

    async def _end(self, session: FrontSession, why: str = STOP_AT_END) -> None:
        if self._detach(session):
            await self._finish(session, why)

    def _detach(self, session: FrontSession) -> bool:
        """Take a session out of the front (no request reaches it from now on); False if it was."""
        if session.closed:
            return False
        session.closed = True
        if session.id is not None:
            self.sessions.pop(session.id, None)
        if session is self._stateless:
            self._stateless = None
        if session.stream is not None:
            session.stream.put_nowait(None)
        return True

    async def _finish(self, session: FrontSession, why: str) -> None:
        """Close a detached session's link: its waiting requests answered, its server stopped."""
        if session.link is not None:
            link, done = session.link, threading.Event()
            self._closing.append(done)

            def close() -> None:  # the summary is kept by the thread itself: a stop that ends
                try:  # the event loop first (SIGTERM) cannot lose it
                    self.summaries.append(link.close(why))
                finally:
                    done.set()

            await anyio.to_thread.run_sync(close)

    async def _reap(self) -> None:
        """Close the sessions whose client went away (module docstring, rule 6), for as long as
        the front runs."""
        while True:
            await asyncio.sleep(REAP_EVERY_S)
            now = asyncio.get_running_loop().time()
            ending: list[tuple[FrontSession, str]] = []
            for session in list(self.sessions.values()):
                since = session.idle_since()
                if since is None:
                    continue
                if session.gone_at is not None and now - session.gone_at >= GONE_GRACE_S:
                    ending.append((session, GONE))
                elif self.idle is not None and now - since >= self.idle:
                    ending.append((session, IDLE))
            for session, why in ending:
                self.abandoned[why] += 1
                self._detach(session)  # now, so that no request gets in while it closes
            if ending:
                await asyncio.gather(*(self._finish(session, why) for session, why in ending))

    async def close_all(self, why: str) -> None:
        """Close every session (each request still waiting gets its -32603, each server is
        stopped, side by side); the front stops reaping."""
        if self._reaper is not None:
            self._reaper.cancel()
        sessions = list(self.sessions.values()) + ([self._stateless] if self._stateless is not None else [])
        await asyncio.gather(*(self._end(session, why) for session in sessions))

    async def _next(self, request: Request, waiting: asyncio.Queue[Message]) -> Message | None:
        """The next message for a request, or None if its client hung up first."""
        got = asyncio.ensure_future(waiting.get())
        gone = asyncio.ensure_future(_hung_up(request))
        done, _ = await asyncio.wait({got, gone}, return_when=asyncio.FIRST_COMPLETED)
        if got in done:
            gone.cancel()
            return got.result()
        got.cancel()
        return None

    def _dropped(self, session: FrontSession, rid: RequestId, stateless: bool) -> None:
        """A request's client hung up before its answer: cancel it (stateless), or suspect the
        session's client is gone (the reaper closes the session unless it comes back)."""
        session.waiters.pop(rid, None)
        if session.closed:
            return
        if stateless:
            cancel = notification(CANCELLED, {"requestId": rid})
            session.loop.run_in_executor(None, session.from_client, cancel)
        else:
            session.gone_at = session.loop.time()

    # -- the methods --------------------------------------------------------------------------------

    async def _post(self, request: Request) -> Response:
        if not _accepts(request, _JSON):
            raise _Refuse(406, None, f"Accept must allow {_JSON}")
        body = await self._read(request)
        try:
            message = parse_json(body)
        except ValueError as exc:
            raise _Refuse(400, PARSE_ERROR, f"parse error: {exc}") from None
        if isinstance(message, list):
            raise _Refuse(400, INVALID_REQUEST, "JSON-RPC batches are not part of MCP")
        if not isinstance(message, dict):
            raise _Refuse(400, INVALID_REQUEST, "a JSON-RPC message must be an object")
        method = message.get("method")
        rid = message.get("id")
        is_request = isinstance(method, str) and isinstance(rid, int | str) and not isinstance(rid, bool)
        stateless = _stateless(request, message)
        if stateless:
            session = await self._stateless_session()
        elif is_request and method == "initialize":
            _check_initialize(message, rid)  # a server process only for a well-formed initialize
            session = await self._open(uuid.uuid4().hex, rid)
            assert session.id is not None
            self.sessions[session.id] = session
        else:
            session = self._session(request, reply_id(message))
        session.touch()
        if not is_request:
            await anyio.to_thread.run_sync(session.from_client, message)
            return Response(status_code=202)
        assert isinstance(rid, int | str)
        waiting: asyncio.Queue[Message] = asyncio.Queue()
        session.waiters[rid] = waiting
        await anyio.to_thread.run_sync(session.from_client, message)
        first = await self._next(request, waiting)
        if first is None:
            self._dropped(session, rid, stateless)
            return Response(status_code=499)  # nobody reads it
        headers = {SESSION_HEADER: session.id} if method == "initialize" and session.id else {}
        if _is_reply(first, rid):
            session.waiters.pop(rid, None)
            session.touch()
            if method == "initialize" and "result" not in first:
                await self._end(session)
                headers = {}
            status = 200
            if stateless and isinstance(first.get("error"), dict):
                status = STATELESS_ERROR_STATUS.get(first["error"].get("code"), 200)
            return _json(first, status, headers)
        if not _accepts(request, _SSE):
            reply: Message | None = first
            while reply is not None and not _is_reply(reply, rid):
                session.route(reply, None)
                reply = await self._next(request, waiting)
            if reply is None:
                self._dropped(session, rid, stateless)
                return Response(status_code=499)
            session.waiters.pop(rid, None)
            session.touch()
            return _json(reply, headers=headers)
        events = self._events(session, rid, first, waiting, stateless)
        headers.update({"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})
        return StreamingResponse(events, media_type=_SSE, headers=headers)

    async def _events(
        self,
        session: FrontSession,
        rid: RequestId,
        first: Message,
        waiting: asyncio.Queue[Message],
        stateless: bool,
    ) -> AsyncIterator[bytes]:
        answered = False
        try:
            message = first
            while True:
                yield sse_event(message)
                if _is_reply(message, rid):
                    answered = True
                    return
                message = await waiting.get()
        finally:
            if answered:
                session.waiters.pop(rid, None)
                session.touch()
            else:
                # Closing a stateless stream cancels its request (a listen stream, say); closing
                # a session's stream mid-call suggests its client is gone.
                self._dropped(session, rid, stateless)

    def _get(self, request: Request) -> Response:
        if not _accepts(request, _SSE):
            raise _Refuse(406, None, f"Accept must allow {_SSE}")
        session = self._session(request)
        if session.stream is not None:
            raise _Refuse(409, None, "this session already has a GET stream")
        session.touch()
        stream: asyncio.Queue[Message | None] = asyncio.Queue()
        while session.buffer:
            stream.put_nowait(session.buffer.popleft())
        session.stream = stream

        async def events() -> AsyncIterator[bytes]:
            try:
                while (message := await stream.get()) is not None:
                    yield sse_event(message)
            finally:
                if session.stream is stream:
                    session.stream = None
                    session.touch()

        return StreamingResponse(events(), media_type=_SSE, headers={"Cache-Control": "no-cache"})

    async def _delete(self, request: Request) -> Response:
        session = self._session(request)
        await self._end(session)
        return Response(status_code=200)

    def shutdown(self, why: str = "shutdown") -> list[dict[str, Any]]:
        """Close every connection still open (their upstreams with them), once the event loop
        has stopped; the summaries of all of them."""
        for done in self._closing:  # links a reaper was closing when the loop stopped
            done.wait(CLOSING_WAIT_S)
        sessions = list(self.sessions.values()) + ([self._stateless] if self._stateless is not None else [])
        self.sessions.clear()
        self._stateless = None
        for session in sessions:
            if not session.closed and session.link is not None:
                session.closed = True
                self.summaries.append(session.link.close(why))
        return self.summaries


async def _hung_up(request: Request) -> None:
    """Return once the client of ``request`` (whose body has been read) disconnects."""
    while (await request.receive())["type"] != "http.disconnect":
        pass
