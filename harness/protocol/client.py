"""The MCP client: both eras, checked ids, tools cache, list changes, input requests.

The client is transport-agnostic: a transport is anything with ``send(message)
-> reply | None`` (None for notifications), ``take_notifications()`` and
``close()``. Ids increase monotonically from 1 and every reply's id is checked
against its request's. An error reply raises :class:`RPCError` with the code.

Which era is spoken is the ``mode``, as in the official SDK's client:

=============  ===================================================================
``"legacy"``   the default: ``initialize`` then ``notifications/initialized``
               (the handshake era; what every trace before the stateless era shows)
``"auto"``     ``server/discover`` first; an error reply (or a server that offers no
               stateless version) falls back to ``initialize``
a version      ``"2026-07-28"``: no handshake, no ping; every request carries its
               version, the client's capabilities and info in ``params._meta``
=============  ===================================================================

What was settled is ``era`` (``"handshake"`` or ``"stateless"``) and
``protocol_version``; ``discover_result`` keeps the server's answer to discover.

A server may need input from the client (elicitation, sampling, roots). The
client answers through one ``input_handler(method, params) -> result``: in the
handshake era as the transport's ``on_request`` (a server-to-client request
mid-call); in the stateless era by retrying the call with ``inputResponses`` and
the echoed ``requestState`` (MRTR, SEP-2322), at most ``max_input_rounds`` times.
Without a handler the client declares none of those capabilities, and an
InputRequiredResult is returned to the caller as it came.

In the stateless era a ``tools/list`` result may say how long it stays fresh
(``ttlMs``); :meth:`MCPClient.list_tools` reuses the cached list until then, on
the injected ``clock`` (seconds; a simulation passes its virtual clock). A
``subscriptions/listen`` stream (SEP-2575, :meth:`MCPClient.listen`) tells the
client the list changed: a level trigger, on which it drops the cache and
lists again.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Protocol

from harness import __version__
from harness.protocol.errors import (
    INTERNAL_ERROR,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    RPCError,
    TransportError,
)
from harness.protocol.messages import (
    TOOLS_LIST_CHANGED,
    Message,
    check_response,
    error_response,
    is_valid_id,
    notification,
    response,
)
from harness.protocol.versions import (
    LATEST_VERSION,
    META_CLIENT_CAPABILITIES,
    META_CLIENT_INFO,
    META_PROTOCOL_VERSION,
    STATELESS_VERSIONS,
    SUPPORTED_VERSIONS,
    is_stateless,
)

HANDSHAKE = "handshake"
STATELESS = "stateless"
"""The two values of :attr:`MCPClient.era`."""

MODES: tuple[str, ...] = ("legacy", "auto", *STATELESS_VERSIONS)
"""What ``mode=`` takes: the handshake, discover-then-fall-back, or a pinned stateless version."""

INPUT_CAPABILITIES: dict[str, str] = {
    "elicitation/create": "elicitation",
    "sampling/createMessage": "sampling",
    "roots/list": "roots",
}
"""Server-to-client input method -> the client capability that offers it."""

DEFAULT_MAX_INPUT_ROUNDS = 10
"""MRTR rounds before the client gives up (the official SDKs' default)."""

UNSUPPORTED_PROTOCOL_VERSION = -32022
"""MCP 2026-07-28: the ``_meta`` version is not one the server speaks (``data.supported`` lists its own)."""

META_SUBSCRIPTION_ID = "io.modelcontextprotocol/subscriptionId"
META_SERVER_INFO = "io.modelcontextprotocol/serverInfo"
SUBSCRIPTIONS_ACKNOWLEDGED = "notifications/subscriptions/acknowledged"
CANCELLED = "notifications/cancelled"
INPUT_REQUIRED = "input_required"

InputHandler = Callable[[str, dict[str, Any]], dict[str, Any]]
"""``input_handler(method, params) -> result``: answers elicitation, sampling or roots requests."""


class Transport(Protocol):
    """What :class:`MCPClient` needs from a transport.

    Optional, read with ``getattr``: ``on_request`` (set by the client to answer
    server-to-client requests) and ``post(message)`` (write a request without
    waiting for its reply, for a ``subscriptions/listen`` stream).
    """

    def send(self, message: Message) -> Message | None: ...

    def take_notifications(self) -> list[Message]: ...

    def close(self) -> None: ...


class EraError(RPCError):
    """A method that does not exist in the era this client settled (ping when stateless, listen when not).

    Raised locally, before anything is sent, with the code a server would answer (-32601).
    """

    default_code = METHOD_NOT_FOUND


class InputRoundsExceeded(TransportError):
    """The server asked for input more than ``max_input_rounds`` times for one call."""


@dataclass
class Subscription:
    """One ``subscriptions/listen`` stream: what was asked, what the server honours, what arrived.

    ``honored`` is None until the server's acknowledgement; ``changes`` counts the
    list-changed events seen on the stream; ``closed`` is set when the server ends it
    (its result or error, or ``notifications/cancelled`` naming it on stdio).
    """

    id: int
    requested: dict[str, Any]
    honored: dict[str, Any] | None = None
    changes: int = 0
    closed: bool = False
    error: dict[str, Any] | None = None
    events: list[str] = field(default_factory=list)

    @property
    def acknowledged(self) -> bool:
        return self.honored is not None


class MCPClient:
    """One client over ``transport``, in the era ``mode`` settles (see the module docstring)."""

    def __init__(
        self,
        transport: Transport,
        *,
        client_info: dict[str, Any] | None = None,
        protocol_version: str = LATEST_VERSION,
        capabilities: dict[str, Any] | None = None,
        mode: str = "legacy",
        input_handler: InputHandler | None = None,
        input_methods: Iterable[str] | None = None,
        max_input_rounds: int = DEFAULT_MAX_INPUT_ROUNDS,
        clock: Callable[[], float] | None = None,
    ) -> None:
        if mode not in MODES:
            hint = " (a handshake-era version goes in protocol_version=, with mode='legacy')"
            raise ValueError(
                f"mode must be one of {', '.join(MODES)}; got {mode!r}"
                + (hint if mode in SUPPORTED_VERSIONS else "")
            )
        self.transport = transport
        self.client_info = client_info or {"name": "harness", "version": __version__}
        self.requested_version = protocol_version
        self.mode = mode
        self.input_handler = input_handler
        methods = tuple(INPUT_CAPABILITIES) if input_methods is None else tuple(input_methods)
        unknown = [m for m in methods if m not in INPUT_CAPABILITIES]
        if unknown:
            raise ValueError(f"unknown input method {unknown[0]!r}; one of {', '.join(INPUT_CAPABILITIES)}")
        self.input_methods: frozenset[str] = frozenset(methods if input_handler is not None else ())
        self.capabilities = dict(capabilities or {})
        for method in sorted(self.input_methods):
            self.capabilities.setdefault(INPUT_CAPABILITIES[method], {})
        self.max_input_rounds = max_input_rounds
        self.clock: Callable[[], float] = clock if clock is not None else time.monotonic
        self.era: str | None = None
        self.protocol_version: str | None = None
        self.server_capabilities: dict[str, Any] = {}
        self.server_info: dict[str, Any] = {}
        self.discover_result: dict[str, Any] | None = None
        self.tools_cache: dict[str, dict[str, Any]] = {}
        self.tools_fresh_until: float | None = None
        """Clock time until which a stateless ``tools/list`` result may be reused (None: not cached)."""
        self.tools_cache_scope: str | None = None
        self.tools_cache_hits = 0
        self.list_changes_seen = 0
        self.input_rounds = 0
        """MRTR retries made, over all calls (handshake-era answers are counted in ``inputs_answered``)."""
        self.inputs_answered = 0
        self.subscriptions: dict[int, Subscription] = {}
        self._meta: dict[str, Any] | None = None
        self._next_id = 1
        if input_handler is not None and hasattr(transport, "on_request"):
            transport.on_request = self.answer_server_request
        if is_stateless(mode):
            self._adopt(mode)

    # -- plumbing ------------------------------------------------------------------

    def request(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        """Send a request and return its result; an error reply raises RPCError.

        In the stateless era the request carries ``_meta``, and an InputRequiredResult
        is answered through the input handler and retried (when there is one).
        """
        if self._meta is None:
            return self._exchange(method, params)
        result = self._exchange(method, self._stamped(params))
        meta = result.get("_meta")
        info = meta.get(META_SERVER_INFO) if isinstance(meta, dict) else None
        if isinstance(info, dict):  # a pinned client learns who answers from any result, not discover
            self.server_info = info
        if result.get("resultType") == INPUT_REQUIRED and self.input_handler is not None:
            return self._resolve_input(method, params or {}, result)
        return result

    def _exchange(self, method: str, params: dict[str, Any] | None) -> dict[str, Any]:
        """One request, one checked reply."""
        req_id = self._next_id
        self._next_id += 1
        message: Message = {"jsonrpc": "2.0", "id": req_id, "method": method}
        if params is not None:
            message["params"] = params
        reply = self.transport.send(message)
        if reply is None:
            raise TransportError(f"no reply to request {req_id} ({method})")
        got = reply.get("id")
        # type(got) is int: an int and not a bool, so is_valid_id would pass it
        if (type(got) is not int or got != req_id) and (not is_valid_id(got) or got != req_id):
            # strict: true == 1 and 1.0 == 1 in Python
            raise TransportError(f"reply id {reply.get('id')!r} does not match request id {req_id}")
        if "error" in reply or "result" not in reply:  # a result alone passes check_response
            try:
                check_response(reply)
            except RPCError as exc:
                raise TransportError(f"malformed reply to {method}: {exc.message}") from None
            raise RPCError.from_error(reply["error"])
        result = reply["result"]
        if not isinstance(result, dict):
            raise TransportError(f"result of {method} is not an object")
        return result

    def _stamped(self, params: dict[str, Any] | None) -> dict[str, Any]:
        """``params`` with the stateless ``_meta`` keys set (the caller's other ``_meta`` keys kept)."""
        assert self._meta is not None
        if not params or "_meta" not in params:  # the common case: nothing to merge
            return {**(params or {}), "_meta": dict(self._meta)}
        out = dict(params)
        given = out.get("_meta")
        out["_meta"] = {**given, **self._meta} if isinstance(given, dict) else dict(self._meta)
        return out

    def notify(self, method: str, params: dict[str, Any] | None = None) -> None:
        """Send a notification (no id; nothing comes back)."""
        self.transport.send(notification(method, params))

    # -- input requests ------------------------------------------------------------

    def _resolve_input(self, method: str, params: dict[str, Any], result: dict[str, Any]) -> dict[str, Any]:
        """MRTR: answer each ``inputRequests`` entry, retry with the answers and the echoed state."""
        rounds = 0
        while result.get("resultType") == INPUT_REQUIRED:
            rounds += 1
            if rounds > self.max_input_rounds:
                raise InputRoundsExceeded(
                    f"{method}: the server still asked for input after {self.max_input_rounds} rounds"
                )
            requests = result.get("inputRequests") or {}
            state = result.get("requestState")
            if not isinstance(requests, dict) or (not requests and not isinstance(state, str)):
                raise TransportError(
                    f"{method}: an InputRequiredResult with neither inputRequests nor requestState"
                )
            retry = {k: v for k, v in params.items() if k not in ("inputResponses", "requestState")}
            if requests:
                retry["inputResponses"] = {key: self._answer_input(key, req) for key, req in requests.items()}
            if isinstance(state, str):
                retry["requestState"] = state
            self.input_rounds += 1
            result = self._exchange(method, self._stamped(retry))
        return result

    def _answer_input(self, key: str, request: object) -> dict[str, Any]:
        """The handler's result for one embedded input request."""
        if not isinstance(request, dict) or not isinstance(request.get("method"), str):
            raise TransportError(f"input request {key!r} is not a request object")
        method = request["method"]
        if method not in self.input_methods:
            raise RPCError(
                METHOD_NOT_FOUND, f"the server asked for {method}, which this client did not declare"
            )
        params = request.get("params")
        assert self.input_handler is not None
        answer = self.input_handler(method, params if isinstance(params, dict) else {})
        if not isinstance(answer, dict):
            raise RPCError(INTERNAL_ERROR, f"input handler returned no object for {method}")
        self.inputs_answered += 1
        return answer

    def answer_server_request(self, message: Message) -> Message:
        """The response to a server-to-client request (the transport's ``on_request``).

        ``ping`` gets ``{}``; a declared input method gets the handler's result; an
        ``RPCError`` from the handler keeps its code, any other exception is -32603;
        anything else is -32601. Always one valid response with the request's id.
        """
        rid = message.get("id")
        method = message.get("method")
        params = message.get("params")
        if method == "ping":
            return response(rid, {})
        if not isinstance(method, str) or method not in self.input_methods or self.input_handler is None:
            return error_response(rid, METHOD_NOT_FOUND, f"client does not support {method}")
        try:
            result = self.input_handler(method, params if isinstance(params, dict) else {})
        except RPCError as exc:
            return error_response(rid, exc.code, exc.message, exc.data)
        except Exception as exc:
            return error_response(rid, INTERNAL_ERROR, f"input handler failed: {type(exc).__name__}: {exc}")
        if not isinstance(result, dict):
            return error_response(rid, INTERNAL_ERROR, "input handler returned no object")
        self.inputs_answered += 1
        return response(rid, result)

    # -- lifecycle -----------------------------------------------------------------

    def connect(self) -> dict[str, Any]:
        """Settle the era as ``mode`` says; return the initialize or discover result.

        Pinned: no traffic (``{}``). Auto: ``server/discover`` at the newest stateless
        version (once more at a version the server names in a -32022), else ``initialize``.
        """
        if self.mode == "legacy":
            return self.initialize()
        if self.mode != "auto":
            return {}
        version = STATELESS_VERSIONS[-1]
        for attempt in range(2):
            try:
                result = self._exchange("server/discover", {"_meta": self._meta_for(version)})
            except RPCError as exc:
                named = exc.data.get("supported") if isinstance(exc.data, dict) else None
                if exc.code != UNSUPPORTED_PROTOCOL_VERSION or not isinstance(named, list):
                    return self.initialize()  # any other refusal: a handshake-era server
                mutual = [v for v in STATELESS_VERSIONS if v in named]
                if mutual and attempt == 0:
                    version = mutual[-1]
                    continue
                if not any(v in SUPPORTED_VERSIONS for v in named):
                    raise  # it speaks only stateless versions we do not: no era to fall back to
                return self.initialize()
            offered = result.get("supportedVersions")
            mutual = [v for v in STATELESS_VERSIONS if isinstance(offered, list) and v in offered]
            if not mutual:
                return self.initialize()
            self._adopt(mutual[-1], result)
            return result
        raise AssertionError("unreachable")  # pragma: no cover

    def discover(self) -> dict[str, Any]:
        """Ask the server (stateless era) what it speaks; store and return the result."""
        if self.era != STATELESS:
            raise EraError(
                None, "server/discover belongs to the stateless era; this client uses the handshake"
            )
        result = self.request("server/discover")
        self._adopt(self.protocol_version or STATELESS_VERSIONS[-1], result)
        return result

    def _meta_for(self, version: str) -> dict[str, Any]:
        return {
            META_PROTOCOL_VERSION: version,
            META_CLIENT_CAPABILITIES: self.capabilities,
            META_CLIENT_INFO: self.client_info,
        }

    def _adopt(self, version: str, discovered: dict[str, Any] | None = None) -> None:
        self.era, self.protocol_version = STATELESS, version
        self._meta = self._meta_for(version)
        if discovered is not None:
            self.discover_result = discovered
            self.server_capabilities = discovered.get("capabilities") or {}
            meta = discovered.get("_meta")
            info = discovered.get("serverInfo") or (
                meta.get(META_SERVER_INFO) if isinstance(meta, dict) else None
            )
            self.server_info = info if isinstance(info, dict) else {}

    def initialize(self) -> dict[str, Any]:
        """The handshake: initialize, store what was negotiated, then notifications/initialized."""
        result = self._exchange(
            "initialize",
            {
                "protocolVersion": self.requested_version,
                "capabilities": self.capabilities,
                "clientInfo": self.client_info,
            },
        )
        version = result.get("protocolVersion")
        if not isinstance(version, str):
            raise RPCError(INVALID_REQUEST, "initialize result has no protocolVersion")
        if version not in SUPPORTED_VERSIONS:
            # spec: a client that cannot use the server's answer disconnects (no initialized)
            raise TransportError(f"server answered protocol version {version!r}, which we do not speak")
        self.era, self.protocol_version, self._meta = HANDSHAKE, version, None
        self.server_capabilities = result.get("capabilities") or {}
        self.server_info = result.get("serverInfo") or {}
        self.notify("notifications/initialized")
        return result

    def ping(self) -> dict[str, Any]:
        if self.era == STATELESS:
            raise EraError(None, "ping does not exist in the stateless era")
        return self.request("ping")

    def close(self) -> None:
        self.transport.close()

    # -- tools -----------------------------------------------------------------------

    def list_tools(self, *, refresh: bool = False) -> list[dict[str, Any]]:
        """Every tool, following cursors to the end; refills ``tools_cache``.

        Stateless era: a list still fresh by its ``ttlMs`` (on ``clock``) is reused
        without a request unless ``refresh``; the shortest ``ttlMs`` of the pages counts,
        and a page without one makes the list uncacheable.
        """
        fresh = self.tools_fresh_until
        if fresh is not None and not refresh and self.clock() < fresh:
            self.tools_cache_hits += 1
            return list(self.tools_cache.values())
        tools: list[dict[str, Any]] = []
        cursor: str | None = None
        seen: set[str] = set()
        ttl_ms: int | None = None
        scope: str | None = None
        while True:
            result = self.request("tools/list", {"cursor": cursor} if cursor is not None else None)
            tools.extend(result.get("tools", []))
            if self._meta is not None:
                page_ttl = result.get("ttlMs")
                page_ttl = page_ttl if type(page_ttl) is int and page_ttl > 0 else 0
                ttl_ms = page_ttl if ttl_ms is None else min(ttl_ms, page_ttl)
                scope = scope if scope == "private" else result.get("cacheScope")
            next_cursor = result.get("nextCursor")
            if not next_cursor:
                break
            if not isinstance(next_cursor, str) or next_cursor in seen:
                # a paginator that never ends must not hang the client
                raise TransportError(f"tools/list returned a repeated or non-string cursor {next_cursor!r}")
            seen.add(next_cursor)
            cursor = next_cursor
        self.tools_cache = {t["name"]: t for t in tools}
        if ttl_ms:
            self.tools_fresh_until = self.clock() + ttl_ms / 1000
            self.tools_cache_scope = scope if isinstance(scope, str) else None
        elif self.tools_fresh_until is not None:
            self.tools_fresh_until = self.tools_cache_scope = None
        return tools

    def call_tool(self, name: str, arguments: dict[str, Any] | None = None) -> dict[str, Any]:
        """Call a tool; a tool failure is a result with isError, a protocol error raises."""
        return self.request("tools/call", {"name": name, "arguments": arguments or {}})

    def pump_notifications(self) -> list[Message]:
        """Drain notifications; on tools list_changed re-list (a bare invalidation, no diff).

        Stateless era: a change on a ``subscriptions/listen`` stream drops the cached
        list first (a level trigger: several events, one refetch); acknowledgements and
        the stream's end update :attr:`subscriptions`.
        """
        notes = self.transport.take_notifications()
        if not notes:
            return notes
        if self.subscriptions:
            self._on_stream(notes)
        if any(n.get("method") == TOOLS_LIST_CHANGED for n in notes):
            self.list_changes_seen += 1
            self.tools_fresh_until = None
            self.list_tools()
        return notes

    # -- subscriptions/listen (stateless era) ----------------------------------------

    def listen(
        self,
        *,
        tools: bool = True,
        prompts: bool = False,
        resources: bool = False,
        resource_uris: Iterable[str] = (),
    ) -> Subscription:
        """Open a ``subscriptions/listen`` stream for the change events asked for.

        The request's reply is the stream: it stays open until the server ends it.
        Over a transport with ``post`` the request is written without waiting; over
        one without (in memory) ``send`` answers None while the stream is open. The
        acknowledgement and the events arrive through :meth:`pump_notifications`.
        """
        if self._meta is None:
            raise EraError(
                None, "subscriptions/listen belongs to the stateless era; use list_changed instead"
            )
        flags = {"toolsListChanged": tools, "promptsListChanged": prompts, "resourcesListChanged": resources}
        wanted: dict[str, Any] = {key: True for key, on in flags.items() if on}
        uris = list(resource_uris)
        if uris:
            wanted["resourceSubscriptions"] = uris
        req_id = self._next_id
        self._next_id += 1
        sub = Subscription(req_id, wanted)
        self.subscriptions[req_id] = sub
        message: Message = {
            "jsonrpc": "2.0",
            "id": req_id,
            "method": "subscriptions/listen",
            "params": self._stamped({"notifications": wanted}),
        }
        post = getattr(self.transport, "post", None)
        if callable(post):
            post(message)
            return sub
        reply = self.transport.send(message)
        if reply is not None:
            self._end_stream(sub, reply)
            if sub.error is not None:
                del self.subscriptions[req_id]
                raise RPCError.from_error(sub.error)
        self.pump_notifications()
        return sub

    def stop_listening(self, sub: Subscription) -> None:
        """End a stream from the client's side (``notifications/cancelled`` naming it)."""
        if not sub.closed:
            self.notify(CANCELLED, {"requestId": sub.id, "reason": "client stopped listening"})
            sub.closed = True
        self.subscriptions.pop(sub.id, None)

    def _subscription(self, key: object) -> Subscription | None:
        return self.subscriptions.get(key) if type(key) is int else None

    def _on_stream(self, notes: list[Message]) -> None:
        for note in notes:
            if "method" not in note:
                sub = self._subscription(note.get("id"))
                if sub is not None:
                    self._end_stream(sub, note)
                continue
            params = note.get("params")
            params = params if isinstance(params, dict) else {}
            if note["method"] == CANCELLED:
                sub = self._subscription(params.get("requestId"))
                if sub is not None:
                    sub.closed = True
                continue
            meta = params.get("_meta")
            sub = self._subscription(meta.get(META_SUBSCRIPTION_ID)) if isinstance(meta, dict) else None
            if sub is None:
                continue
            if note["method"] == SUBSCRIPTIONS_ACKNOWLEDGED:
                honored = params.get("notifications")
                sub.honored = honored if isinstance(honored, dict) else {}
            else:
                sub.events.append(note["method"])
                if note["method"] == TOOLS_LIST_CHANGED:
                    sub.changes += 1

    @staticmethod
    def _end_stream(sub: Subscription, reply: Message) -> None:
        sub.closed = True
        error = reply.get("error")
        if isinstance(error, dict):
            sub.error = error

    # -- resources and prompts ---------------------------------------------------------

    def list_resources(self) -> list[dict[str, Any]]:
        return list(self.request("resources/list").get("resources", []))

    def read_resource(self, uri: str) -> dict[str, Any]:
        return self.request("resources/read", {"uri": uri})

    def list_prompts(self) -> list[dict[str, Any]]:
        return list(self.request("prompts/list").get("prompts", []))

    def get_prompt(self, name: str, arguments: dict[str, Any] | None = None) -> dict[str, Any]:
        return self.request("prompts/get", {"name": name, "arguments": arguments or {}})
