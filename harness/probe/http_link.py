"""Probing a Streamable HTTP endpoint: each message the probe writes is one POST, in order.

``harness probe URL`` runs the same rules as over stdio, against a server that is already
listening. :class:`HTTPLink` stands where a process's pipes stand (:class:`harness.probe.session.Link`):
``write_raw`` queues one body, and one sender thread POSTs the bodies in the order written, each
only once the one before has its response headers (so ``notifications/initialized`` reaches the
server before the request after it). The body of each response is read on a thread of its own, so
a held SSE stream never blocks the next POST, and every JSON object it carries (the reply, a
notification, a request from the server) goes into one inbox that ``next_message`` reads with
the probe's own timeouts. What is no JSON object (an HTTP error with a plain-text body, a stream
event that is not JSON) goes to ``garbage``, as a non-JSON line from a process would. A request
answered with a 4xx status whose body is no reply to it (a JSON-RPC error with id null, plain
text) was refused: the refusal is kept by its id (:attr:`HTTPLink.refusals`), status and body,
for the exchange waiting on it to end at once, not after its timeout.

The headers follow the era of each message, as :mod:`harness.transports.http_client` sends them:

* a message whose ``params._meta`` names a protocol version (any, so that an unsupported one
  is asked for as it is) is a self-contained 2026-07-28 POST: ``MCP-Protocol-Version`` from the
  ``_meta``, ``Mcp-Method``, ``Mcp-Name`` and the ``Mcp-Param-*`` headers of the tool's
  ``x-mcp-header`` arguments (learnt from ``tools/list`` results that pass through);
* anything else is handshake-era traffic: the ``Mcp-Session-Id`` the ``initialize`` answer handed
  out and the version it named go on every later POST; ``close`` ends the session with DELETE.

One link is one probe session (one "process"): each lane of the probe opens its own, so each has
its own MCP session on the server. An endpoint that cannot be reached is what a process that died
at start is: the session reports ``server died`` with the connection's error, and the lane is not
retried.
"""

from __future__ import annotations

import contextlib
import json
import logging
import queue
import socket
import threading
from collections.abc import Sequence

import httpx

from harness.probe.outcomes import DIED, REFUSED, Outcome, shorten
from harness.probe.session import CLOSE_GRACE, ProbeSession
from harness.protocol.errors import TransportError
from harness.protocol.messages import Message
from harness.protocol.versions import META_PROTOCOL_VERSION
from harness.transports.http_client import parse_sse
from harness.transports.mcp_headers import (
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

log = logging.getLogger("harness.probe.http")

_JSON = "application/json"
_SSE = "text/event-stream"
_ACCEPT = f"{_JSON}, {_SSE}"


def _object(data: bytes) -> Message | None:
    try:
        parsed = json.loads(data)
    except ValueError:
        return None
    return parsed if isinstance(parsed, dict) else None


def _meta_version(message: Message | None) -> str | None:
    """The protocol version a message's ``params._meta`` names (a 2026-07-28-style request), or None."""
    params = message.get("params") if message is not None else None
    meta = params.get("_meta") if isinstance(params, dict) else None
    version = meta.get(META_PROTOCOL_VERSION) if isinstance(meta, dict) else None
    if not isinstance(version, str) or (message or {}).get("method") == "initialize":
        return None
    return version


class HTTPLink:
    """One probe session's connection to ``url``: bodies out in order, JSON objects in (module docstring).

    ``wait`` bounds how long a POST may wait for its response headers, and a response body
    between two chunks; the probe's own timeouts decide what counts as no reply.
    """

    def __init__(self, url: str, *, wait: float) -> None:
        self.url = url
        self.garbage: list[bytes] = []
        self.failure: str | None = None
        """Why the endpoint cannot be reached, once a POST failed to connect."""
        self.session_id: str | None = None
        self.protocol_version: str | None = None
        self.tool_headers: dict[str, dict[str, tuple[str, ...]]] = {}
        self.closed = False
        self.refusals: dict[object, Outcome] = {}
        """Requests the endpoint refused with a 4xx status and no reply to them, by id."""
        self._http = httpx.Client(timeout=httpx.Timeout(wait))
        self._inbox: queue.Queue[Message] = queue.Queue()
        self._outbox: queue.Queue[bytes | None] = queue.Queue()
        self._open: set[httpx.Response] = set()
        self._lock = threading.Lock()
        self._readers: list[threading.Thread] = []
        self._sender = threading.Thread(target=self._send_all, name="probe-http-send", daemon=True)
        self._sender.start()

    # -- the Link API ------------------------------------------------------------------------

    def write_raw(self, data: bytes) -> None:
        """Queue one POST body; TransportError once the endpoint proved unreachable or the link closed."""
        if self.failure is not None:
            raise TransportError(self.failure)
        if self.closed:
            raise TransportError("the HTTP link is closed")
        self._outbox.put(data)

    def next_message(self, timeout: float) -> Message | None:
        """The next JSON object any response carried, waiting up to ``timeout`` seconds."""
        try:
            return self._inbox.get(timeout=max(0.0, timeout))
        except queue.Empty:
            return None

    def close(self) -> None:
        """End the session (DELETE, if one was opened), hang up open streams, release the pool."""
        if self.closed:
            return
        self.closed = True
        self._outbox.put(None)
        with self._lock:
            held = list(self._open)
        for reply in held:
            _hang_up(reply)
        if self.session_id is not None and self.failure is None:
            with contextlib.suppress(httpx.HTTPError):  # the server may be gone already
                self._http.delete(self.url, headers=self._session_headers(), timeout=CLOSE_GRACE)
        for thread in [self._sender, *self._readers]:
            thread.join(timeout=CLOSE_GRACE)
        self._http.close()

    # -- sending -----------------------------------------------------------------------------

    def _send_all(self) -> None:
        while True:
            data = self._outbox.get()
            if data is None or self.closed:
                return
            try:
                self._post(data)
            except Exception as exc:  # a sender thread has nobody to raise to; the POST is lost
                log.debug("POST to %s failed: %s", self.url, exc)

    def _post(self, data: bytes) -> None:
        message = _object(data)
        request = self._http.build_request("POST", self.url, content=data, headers=self._headers(message))
        try:
            reply = self._http.send(request, stream=True)
        except httpx.ConnectError as exc:
            self.failure = shorten(f"cannot connect to {self.url}: {exc}")
            return
        except (httpx.HTTPError, RuntimeError) as exc:  # no answer in time, or the link closed meanwhile
            log.debug("POST to %s: %s", self.url, exc)
            return
        if message is not None and message.get("method") == "initialize" and reply.status_code == 200:
            self.session_id = reply.headers.get(SESSION_HEADER) or self.session_id
        with self._lock:
            self._open.add(reply)
        reader = threading.Thread(
            target=self._read, args=(reply, message), name="probe-http-read", daemon=True
        )
        self._readers.append(reader)
        reader.start()

    def _session_headers(self) -> dict[str, str]:
        headers = {}
        if self.session_id is not None:
            headers[SESSION_HEADER] = self.session_id
        if self.protocol_version is not None:
            headers[VERSION_HEADER] = self.protocol_version
        return headers

    def _headers(self, message: Message | None) -> dict[str, str]:
        base = {"Content-Type": _JSON, "Accept": _ACCEPT}
        version = _meta_version(message)
        if version is None or message is None:
            return {**self._session_headers(), **base}
        headers = {**base, VERSION_HEADER: encode_header_value(version)}
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
            for header, path in self.tool_headers.get(name, {}).items():
                text = param_text(value_at(params.get("arguments"), path))
                if text is not None:
                    headers[PARAM_HEADER_PREFIX + header] = encode_header_value(text)
        return headers

    # -- receiving ---------------------------------------------------------------------------

    def _read(self, reply: httpx.Response, request: Message | None) -> None:
        try:
            ctype = reply.headers.get("content-type", "").split(";", 1)[0].strip().lower()
            if ctype == _SSE and reply.status_code < 400:
                for event in parse_sse(reply.iter_lines()):
                    if event.data.strip():
                        self._receive(event.data.encode(), request, reply.status_code)
                return
            body = reply.read()
            if self._refused(reply, request, body):
                return
            if body.strip():
                self._receive(body, request, reply.status_code)
            elif reply.status_code >= 400:
                self.garbage.append(f"HTTP {reply.status_code} {reply.reason_phrase}, no body".encode())
        except Exception as exc:  # a reader thread has nobody to raise to; the stream just ends
            if not self.closed:
                log.debug("the answer to a POST to %s ended: %s", self.url, exc)
        finally:
            with self._lock:
                self._open.discard(reply)
            reply.close()

    def _refused(self, reply: httpx.Response, request: Message | None, body: bytes) -> bool:
        """Keep a 4xx answer to a request as its refusal, unless the body is the request's reply."""
        if not 400 <= reply.status_code < 500 or request is None or "method" not in request:
            return False
        rid = request.get("id")
        if not isinstance(rid, int | str) or isinstance(rid, bool):
            return False
        found = _object(body)
        if found is not None and found.get("id") == rid and ("result" in found or "error" in found):
            return False  # the server answered the request, at an HTTP error status
        error = found.get("error") if found is not None else None
        if isinstance(error, dict) and "message" in error:  # a JSON-RPC error addressed to no one
            text = f"error {error.get('code')}: {error['message']}"
        else:
            text = body.decode("utf-8", "replace").strip() or "no body"
        said = f"HTTP {reply.status_code} {reply.reason_phrase}: {text}"
        self.refusals[rid] = Outcome(REFUSED, shorten(said))
        return True

    def _receive(self, data: bytes, request: Message | None, status: int) -> None:
        found = _object(data)
        if found is None:
            text = data.decode("utf-8", "replace").strip()
            self.garbage.append((text if status < 400 else f"HTTP {status}: {text}").encode())
            return
        if request is not None and "method" not in found and found.get("id") == request.get("id"):
            self._learn(request, found)
        self._inbox.put(found)

    def _learn(self, request: Message, reply: Message) -> None:
        """Keep what later headers need: the version initialize named, tools' ``x-mcp-header`` paths."""
        result = reply.get("result")
        if not isinstance(result, dict):
            return
        method = request.get("method")
        if method == "initialize" and isinstance(result.get("protocolVersion"), str):
            self.protocol_version = result["protocolVersion"]
        elif method == "tools/list" and isinstance(result.get("tools"), list):
            for tool in result["tools"]:
                if isinstance(tool, dict) and isinstance(tool.get("name"), str):
                    self.tool_headers[tool["name"]] = header_paths(tool.get("inputSchema"))


def _hang_up(reply: httpx.Response) -> None:
    """Close a stream another thread is reading: shut its socket down, so the blocked read returns."""
    stream = reply.extensions.get("network_stream")
    sock = stream.get_extra_info("socket") if stream is not None else None
    with contextlib.suppress(OSError):
        if sock is not None:
            sock.shutdown(socket.SHUT_RDWR)


class HTTPProbeSession(ProbeSession):
    """A probe session over Streamable HTTP: the same exchanges, an :class:`HTTPLink` for the pipes.

    There is no process: the session is alive while the endpoint can be reached, and "dies" (at
    start, if its first POST could not connect) when it cannot.
    """

    def _start(self, command: Sequence[str]) -> None:
        # Long enough for any reply the probe may still collect late (its waits are shorter).
        self.http = HTTPLink(command[0], wait=max(self.startup_timeout, 3 * self.timeout))
        self.link = self.http

    @property
    def alive(self) -> bool:
        return self.http.failure is None and not self.http.closed

    def _exited(self) -> bool:
        return self.http.failure is not None

    def _died(self, *, eof: bool) -> Outcome:
        self.death = Outcome(DIED, self.http.failure or "the endpoint stopped answering")
        return self.death

    def close(self) -> None:
        self.http.close()

    def refusal(self, reply_ids: Sequence[object]) -> Outcome | None:
        for rid in reply_ids:
            refused = self.http.refusals.pop(rid, None) if isinstance(rid, int | str) else None
            if refused is not None:
                return refused
        return None

    def stderr_tail(self) -> str:
        return ""
