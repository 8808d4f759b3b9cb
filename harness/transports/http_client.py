"""The client side of Streamable HTTP (httpx): one POST per message, JSON or SSE back.

:class:`HTTPClientTransport` is a transport for :class:`~harness.protocol.client.MCPClient`
(``send``, ``take_notifications``, ``close``) speaking both eras on one URL. The era
is read from each message, so the client above decides it:

* **Handshake era** (2024-11-05 .. 2025-11-25). The ``Mcp-Session-Id`` the server
  hands out with the ``initialize`` reply is sent on every later message, and the
  version that reply names goes in ``MCP-Protocol-Version``. ``close`` ends the
  session with DELETE.
* **Stateless era** (a request whose ``params._meta`` names 2026-07-28). The POST is
  self-contained: no session id, ``MCP-Protocol-Version`` from the ``_meta``,
  ``Mcp-Method``, ``Mcp-Name`` (``tools/call``, ``prompts/get``, ``resources/read``)
  and the ``Mcp-Param-*`` headers a tool's ``x-mcp-header`` annotations ask for
  (learnt from the stateless ``tools/list`` replies that pass through).

A request's answer is ``application/json`` or an SSE stream. On a stream,
notifications go to :meth:`take_notifications`; a server-to-client *request* is
handed to :attr:`on_request` (None: ping gets ``{}``, anything else -32601) and
its answer POSTed back while the stream stays open; the response with the
request's id ends the wait. A handshake-era stream that ends before that response
is resumed: wait the last ``retry`` the server sent, then GET with
``Last-Event-ID`` and keep reading (at most ``max_reconnects`` times in a row with
no new event). Stateless streams are not resumable (the spec says so).

Two readers run on threads: after ``notifications/initialized`` the session's GET
stream (requests and notifications the server sends outside any POST; ``listen=False``
leaves it shut), and :meth:`HTTPClientTransport.post`, which holds one request's
stream open (``subscriptions/listen``). :meth:`~HTTPClientTransport.close` hangs
both up.

An HTTP error whose body is a JSON-RPC error for the request is returned as the
reply (the client raises :class:`~harness.protocol.errors.RPCError` with its
code); any other failure raises :class:`~harness.protocol.errors.TransportError`.
"""

from __future__ import annotations

import contextlib
import json
import logging
import socket
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import httpx

from harness.protocol.errors import TransportError
from harness.protocol.messages import Message, answer_request, is_valid_id
from harness.protocol.server import DEFAULT_MAX_MESSAGE_BYTES
from harness.protocol.versions import META_PROTOCOL_VERSION, is_stateless
from harness.transports.mcp_headers import (
    LAST_EVENT_HEADER,
    METHOD_HEADER,
    NAME_HEADER,
    NAME_PARAM,
    PARAM_HEADER_PREFIX,
    SESSION_HEADER,
    VERSION_HEADER,
    encode_header_value,
    header_paths,
    param_text,
    value_at,
)
from harness.transports.stdio import chunk_lines

log = logging.getLogger("harness.http_client")

DEFAULT_TIMEOUT = 30.0
DEFAULT_RETRY = 1.0
"""Seconds to wait before resuming a stream whose server never sent ``retry``."""
DEFAULT_MAX_RECONNECTS = 3

_JSON = "application/json"
_SSE = "text/event-stream"
_ACCEPT = f"{_JSON}, {_SSE}"

_NO_REQUEST = object()
"""What the GET stream waits for: no reply (every response there is someone else's)."""

RequestHandler = Callable[[Message], Message]
"""Answers one server-to-client request with its response message."""


@dataclass
class SSEEvent:
    """One dispatched Server-Sent Event (``data`` lines joined with newlines)."""

    data: str = ""
    event: str = "message"
    id: str | None = None
    retry: int | None = None


def parse_sse(lines: Iterable[str], limit: int | None = None) -> Iterator[SSEEvent]:
    """Events from SSE lines (the WHATWG rules we need: comments, fields, blank-line dispatch).

    An event whose block carried only ``id``/``retry`` is still yielded (with empty
    ``data``): a priming event moves the resumption point. An event whose data grows past
    ``limit`` characters is a :class:`TransportError`, never held whole.
    """
    data: list[str] = []
    size = 0
    event = SSEEvent()
    seen = False
    for line in lines:
        if not line:
            if seen:
                event.data = "\n".join(data)
                yield event
            data, size, event, seen = [], 0, SSEEvent(), False
            continue
        if line.startswith(":"):
            continue
        name, _, value = line.partition(":")
        value = value.removeprefix(" ")
        seen = True
        if name == "data":
            size += len(value) + 1
            if limit is not None and size > limit:
                raise TransportError(f"the server sent an event larger than {limit} bytes (max_message)")
            data.append(value)
        elif name == "event":
            event.event = value or "message"
        elif name == "id" and "\0" not in value:
            event.id = value
        elif name == "retry" and value.isdigit():
            event.retry = int(value)
    if seen and data:
        event.data = "\n".join(data)
        yield event


def _stateless_version(message: Message) -> str | None:
    params = message.get("params")
    meta = params.get("_meta") if isinstance(params, dict) else None
    version = meta.get(META_PROTOCOL_VERSION) if isinstance(meta, dict) else None
    return version if is_stateless(version) else None


class HTTPClientTransport:
    """Drive a Streamable HTTP server: ``MCPClient(HTTPClientTransport("http://.../mcp"))``.

    ``client`` lets a caller bring its own :class:`httpx.Client` (a mock transport in
    tests); ``sleep`` is what waits out ``retry`` (tests record the delays instead).
    ``max_message`` bounds every message read from the server (:meth:`_body`, :meth:`_lines`).
    """

    def __init__(
        self,
        url: str,
        *,
        timeout: float = DEFAULT_TIMEOUT,
        headers: Mapping[str, str] | None = None,
        max_reconnects: int = DEFAULT_MAX_RECONNECTS,
        client: httpx.Client | None = None,
        sleep: Callable[[float], None] = time.sleep,
        listen: bool = True,
        max_message: int = DEFAULT_MAX_MESSAGE_BYTES,
    ) -> None:
        self.url = url
        self.max_message = max_message
        """The most bytes one message from the server may take (a JSON body, a stream's line or
        event): past it the reply is a :class:`TransportError`, read no further (issue 49)."""
        self.timeout = timeout
        self.extra_headers = dict(headers or {})
        self.max_reconnects = max_reconnects
        self._own_client = client is None
        self.http = client if client is not None else httpx.Client(timeout=httpx.Timeout(timeout))
        self.sleep = sleep
        self.on_request: RequestHandler | None = None
        self.session_id: str | None = None
        self.protocol_version: str | None = None
        self.retry = DEFAULT_RETRY
        self.last_event_id: str | None = None
        self.reconnects = 0
        """GETs sent to resume a stream, over this transport's life (tests and reports read it)."""
        self.reconnects_in_a_row = 0
        self.tool_headers: dict[str, dict[str, tuple[str, ...]]] = {}
        self.listen = listen
        self._inbox: list[Message] = []
        self._inbox_lock = threading.Lock()
        self._listener: threading.Thread | None = None
        self._get_reply: httpx.Response | None = None
        self._held: list[httpx.Response] = []
        self._held_threads: list[threading.Thread] = []
        self._closed = False

    # -- the transport API --------------------------------------------------------------

    def send(self, message: Message) -> Message | None:
        """POST one message; for a request, the reply (waiting through SSE and resumption)."""
        if self._closed:
            raise TransportError("the HTTP transport is closed")
        stateless = _stateless_version(message)
        is_request = "method" in message and "id" in message
        headers = self._headers(message, stateless)
        body = json.dumps(message, separators=(",", ":")).encode()
        try:
            with self.http.stream("POST", self.url, content=body, headers=headers) as reply:
                if is_request and message.get("method") == "initialize" and reply.status_code == 200:
                    self.session_id = reply.headers.get(SESSION_HEADER) or self.session_id
                answer = self._answer(reply, message if is_request else None, stateless)
        except httpx.HTTPError as exc:
            raise TransportError(f"HTTP {message.get('method', 'message')}: {exc}") from None
        if answer is None and is_request:
            if stateless is not None:
                raise TransportError(f"the stream for request {message['id']!r} ended without its response")
            answer = self._resume(message["id"])
        if answer is not None:
            self._learn(message, answer, stateless)
        elif message.get("method") == "notifications/initialized":
            self._start_listening()
        return answer

    def post(self, message: Message) -> None:
        """Send a request without waiting (a ``subscriptions/listen`` stream), on a thread.

        Everything its answer carries comes through :meth:`take_notifications`, its final
        response (the stream's end) too. :meth:`close` closes the stream, which is how
        the client cancels it over HTTP.
        """
        if self._closed:
            raise TransportError("the HTTP transport is closed")
        thread = threading.Thread(target=self._hold, args=(message,), name="mcp-http-post", daemon=True)
        self._held_threads.append(thread)
        thread.start()

    def _hold(self, message: Message) -> None:
        stateless = _stateless_version(message)
        body = json.dumps(message, separators=(",", ":")).encode()
        timeout = httpx.Timeout(self.timeout, read=None)
        try:
            with self.http.stream(
                "POST", self.url, content=body, headers=self._headers(message, stateless), timeout=timeout
            ) as reply:
                self._held.append(reply)
                ctype = reply.headers.get("content-type", "").split(";", 1)[0].strip().lower()
                if ctype != _SSE:
                    final: Any = _loads(self._body(reply))
                else:
                    final = None
                    for event in parse_sse(self._lines(reply), self.max_message):
                        if event.data.strip():
                            final = self._dispatch(_loads(event.data.encode()), message["id"])
                            if final is not None:
                                break
                if isinstance(final, dict):
                    with self._inbox_lock:
                        self._inbox.append(final)
        except Exception as exc:  # a reader thread has nobody to raise to; the stream just ends
            if not self._closed:
                log.debug("the stream of request %r ended: %s", message.get("id"), exc)

    def take_notifications(self) -> list[Message]:
        """Notifications that arrived on response streams, oldest first."""
        with self._inbox_lock:
            out, self._inbox = self._inbox, []
        return out

    def close(self) -> None:
        """End the handshake-era session (DELETE), then release the connection pool."""
        if self._closed:
            return
        self._closed = True
        for held in [self._get_reply, *self._held]:
            if held is not None:
                _hang_up(held)
        if self.session_id is not None:
            with contextlib.suppress(httpx.HTTPError):  # the server may be gone already
                self.http.delete(self.url, headers=self._session_headers())
        for thread in [self._listener, *self._held_threads]:
            if thread is not None:
                thread.join(timeout=1.0)
        if self._own_client:
            self.http.close()

    def __enter__(self) -> HTTPClientTransport:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- headers ----------------------------------------------------------------------------

    def _session_headers(self) -> dict[str, str]:
        headers = dict(self.extra_headers)
        if self.session_id is not None:
            headers[SESSION_HEADER] = self.session_id
        if self.protocol_version is not None:
            headers[VERSION_HEADER] = self.protocol_version
        return headers

    def _headers(self, message: Message, stateless: str | None) -> dict[str, str]:
        base = {"Content-Type": _JSON, "Accept": _ACCEPT}
        if stateless is None:
            return {**self._session_headers(), **base}
        headers = {**self.extra_headers, **base, VERSION_HEADER: stateless}
        method = message.get("method")
        if not isinstance(method, str) or "id" not in message:
            return headers
        headers[METHOD_HEADER] = method
        params = message.get("params") or {}
        key = NAME_PARAM.get(method)
        name = params.get(key) if key is not None else None
        if isinstance(name, str):
            headers[NAME_HEADER] = encode_header_value(name)
        if method == "tools/call" and isinstance(name, str):
            headers.update(self._param_headers(name, params.get("arguments")))
        return headers

    def _param_headers(self, tool: str, arguments: Any) -> dict[str, str]:
        out: dict[str, str] = {}
        for header, path in self.tool_headers.get(tool, {}).items():
            text = param_text(value_at(arguments, path))
            if text is not None:
                out[PARAM_HEADER_PREFIX + header] = encode_header_value(text)
        return out

    def _learn(self, message: Message, reply: Message, stateless: str | None) -> None:
        """Keep what later headers need: the negotiated version, tools' x-mcp-header paths."""
        result = reply.get("result")
        if not isinstance(result, dict):
            return
        method = message.get("method")
        if method == "initialize" and isinstance(result.get("protocolVersion"), str):
            self.protocol_version = result["protocolVersion"]
        elif method == "tools/list" and stateless is not None:
            for tool in result.get("tools") or ():
                if isinstance(tool, dict) and isinstance(tool.get("name"), str):
                    self.tool_headers[tool["name"]] = header_paths(tool.get("inputSchema"))

    # -- answers ----------------------------------------------------------------------------

    def _answer(
        self, reply: httpx.Response, request: Message | None, stateless: str | None
    ) -> Message | None:
        """The reply to ``request`` in this HTTP response, None when it must be resumed (or none is due)."""
        status = reply.status_code
        if status >= 400:
            return self._http_error(reply, request)
        if request is None:
            return None  # a notification or a response: 202 expected, a body is not ours to read
        ctype = reply.headers.get("content-type", "").split(";", 1)[0].strip().lower()
        if status == 202:
            raise TransportError(f"the server accepted request {request['id']!r} without answering it")
        if ctype == _SSE:
            return self._read_stream(reply, request["id"], stateless)
        if ctype == _JSON:
            parsed = _loads(self._body(reply))
            if not isinstance(parsed, dict):
                raise TransportError(f"reply to {request.get('method')} is not a JSON-RPC object")
            return parsed
        raise TransportError(f"HTTP {status}, Content-Type {ctype or 'none'!r}, to {request.get('method')}")

    def _body(self, reply: httpx.Response) -> bytes:
        """The response's body, read as it arrives and never held past :attr:`max_message`."""
        parts: list[bytes] = []
        held = 0
        for chunk in reply.iter_bytes():
            held += len(chunk)
            if held > self.max_message:
                raise TransportError(
                    f"the server sent a message larger than {self.max_message} bytes (max_message)"
                )
            parts.append(chunk)
        return b"".join(parts)

    def _lines(self, reply: httpx.Response) -> Iterator[str]:
        """An SSE stream's lines (a line end is LF, CRLF or CR), none held past :attr:`max_message`:
        :func:`~harness.transports.stdio.chunk_lines` over the body's chunks."""
        for line in chunk_lines(reply.iter_bytes(), self.max_message):
            if line is None:
                raise TransportError(
                    f"the server sent a stream line larger than {self.max_message} bytes (max_message)"
                )
            yield from line.removesuffix(b"\r").decode("utf-8", "replace").split("\r")

    def _http_error(self, reply: httpx.Response, request: Message | None) -> Message:
        try:
            text = self._body(reply).decode("utf-8", "replace")
        except TransportError as exc:
            raise TransportError(f"HTTP {reply.status_code} from the server, and {exc}") from None
        try:
            parsed = json.loads(text)
        except ValueError:
            parsed = None
        if (
            request is not None
            and isinstance(parsed, dict)
            and isinstance(parsed.get("error"), dict)
            and parsed.get("id") == request.get("id")
        ):
            return parsed
        detail = text.strip().replace("\n", " ")[:200] or reply.reason_phrase
        raise TransportError(f"HTTP {reply.status_code} from the server: {detail}")

    def _read_stream(self, reply: httpx.Response, req_id: Any, stateless: str | None) -> Message | None:
        for event in parse_sse(self._lines(reply), self.max_message):
            if stateless is None and event.id is not None:
                self.last_event_id = event.id
                self.reconnects_in_a_row = 0
            if event.retry is not None:
                self.retry = event.retry / 1000
            if not event.data.strip():
                continue  # a priming event: nothing but a resumption point
            found = self._dispatch(_loads(event.data.encode()), req_id)
            if found is not None:
                return found
        return None

    def _dispatch(self, message: Any, req_id: Any) -> Message | None:
        """Route one message read off a stream; the reply to ``req_id`` when it is that."""
        if not isinstance(message, dict):
            return None
        if "method" not in message:
            return message if message.get("id") == req_id else None  # a late answer is ignored
        if "id" not in message:
            with self._inbox_lock:
                self._inbox.append(message)
            return None
        self._answer_server_request(message)
        return None

    def _answer_server_request(self, request: Message) -> None:
        if is_valid_id(request.get("id")):
            self.send(answer_request(self.on_request, request))

    def _start_listening(self) -> None:
        """Open the session's GET stream on a thread once the handshake is done (``listen``)."""
        if not self.listen or self._listener is not None or self.session_id is None:
            return
        self._listener = threading.Thread(target=self._listen, name="mcp-http-get", daemon=True)
        self._listener.start()

    def _listen(self) -> None:
        """Read the GET stream: requests the server sends outside any POST, and notifications."""
        headers = {**self._session_headers(), "Accept": _SSE}
        timeout = httpx.Timeout(self.timeout, read=None)  # an idle stream is not a failure
        try:
            with self.http.stream("GET", self.url, headers=headers, timeout=timeout) as reply:
                self._get_reply = reply
                if reply.status_code != 200 or self._closed:
                    return  # 405: the server offers no GET stream, which it may
                for event in parse_sse(self._lines(reply), self.max_message):
                    if event.data.strip():
                        self._dispatch(_loads(event.data.encode()), _NO_REQUEST)
        except Exception as exc:  # a reader thread has nobody to raise to; the stream just ends
            if not self._closed:
                log.debug("the GET stream ended: %s", exc)

    def _resume(self, req_id: Any) -> Message:
        """GET with ``Last-Event-ID`` after ``retry`` until the reply to ``req_id`` arrives."""
        if self.last_event_id is None:
            raise TransportError(f"the stream for request {req_id!r} ended without its response")
        self.reconnects_in_a_row = 0
        while self.reconnects_in_a_row < self.max_reconnects:
            self.reconnects_in_a_row += 1
            self.sleep(self.retry)
            self.reconnects += 1
            headers = {**self._session_headers(), "Accept": _SSE, LAST_EVENT_HEADER: self.last_event_id}
            try:
                with self.http.stream("GET", self.url, headers=headers) as reply:
                    if reply.status_code >= 400:
                        self._body(reply)
                        raise TransportError(
                            f"resuming request {req_id!r}: GET answered HTTP {reply.status_code}"
                        )
                    found = self._read_stream(reply, req_id, None)
            except httpx.HTTPError as exc:
                raise TransportError(f"resuming request {req_id!r}: {exc}") from None
            if found is not None:
                return found
        raise TransportError(f"no response to request {req_id!r} after {self.max_reconnects} reconnections")


def _hang_up(reply: httpx.Response) -> None:
    """Close a stream another thread is reading: shut its socket down, so the blocked read returns."""
    stream = reply.extensions.get("network_stream")
    sock = stream.get_extra_info("socket") if stream is not None else None
    with contextlib.suppress(OSError):
        if sock is not None:
            sock.shutdown(socket.SHUT_RDWR)
    with contextlib.suppress(Exception):  # the reader may be inside the response right now
        reply.close()


def _loads(data: bytes) -> Any:
    try:
        return json.loads(data)
    except ValueError as exc:
        raise TransportError(f"the server sent bad JSON: {exc}") from None
