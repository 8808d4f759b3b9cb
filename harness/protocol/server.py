"""The sans-IO MCP server: ``handle(message) -> reply | None``, no I/O anywhere.

Dispatch is the reference's three-tier try, in this order:

1. an :class:`RPCError` raised anywhere maps to an error response with its code;
2. a tool exception under the ``escape`` strategy leaves ``handle`` unchanged;
3. any other exception maps to -32603, never a traceback across the boundary;

and a notification returns None before anything can answer it. The handshake
gate is :mod:`harness.protocol.lifecycle`; the ``tools/call`` lattice is
:data:`CALL_LATTICE` below plus the strategy table of
:mod:`harness.protocol.strategies`. Transports call :meth:`MCPServer.handle` (or
:meth:`MCPServer.handle_text` at a byte edge) and drain
:meth:`MCPServer.take_notifications` after each message.
"""

from __future__ import annotations

import base64
import functools
import json
import math
import string
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, ClassVar

import harness.protocol.lifecycle as lifecycle
from harness.protocol.errors import (
    INTERNAL_ERROR,
    INVALID_REQUEST,
    PARSE_ERROR,
    InvalidParams,
    InvalidRequest,
    MethodNotFound,
    MissingClientCapability,
    ResourceNotFound,
    RPCError,
)
from harness.protocol.inputs import Answer, InputRequest, InputRequired, answering, missing_capabilities
from harness.protocol.lifecycle import State
from harness.protocol.messages import (
    JSONRPC,
    TOOLS_LIST_CHANGED,
    Message,
    RequestId,
    check_envelope,
    error_response,
    is_response,
    notification,
    reply_id,
)
from harness.protocol.payload import DEFAULT_MAX_RESULT_BYTES
from harness.protocol.request_state import RequestStateSealer
from harness.protocol.runner import ToolRunner
from harness.protocol.stateless import (
    ACKNOWLEDGED,
    CACHE_SCOPES,
    CANCELLED,
    LOG_LEVEL,
    SERVER_INFO,
    SUPPORTED_NEWEST_FIRST,
    Listener,
    StatelessRequest,
    read_envelope,
)
from harness.protocol.strategies import TOOL_ERROR_STRATEGIES, ToolEscape
from harness.protocol.tools import Tool, ToolFn, decode_cursor, encode_cursor, to_result
from harness.protocol.versions import (
    META_CLIENT_CAPABILITIES,
    META_CLIENT_INFO,
    META_PROTOCOL_VERSION,
    SEP_1303_VERSION,
    STATELESS_VERSIONS,
    at_least,
    negotiate,
)

DEFAULT_MAX_MESSAGE_BYTES = 4 * 1024 * 1024
"""Messages larger than this are refused at the byte edge with -32600 (configurable)."""


_ID_TYPES = frozenset({int, str})
"""The exact types of a valid request id (``bool`` is an int subclass, so it is left out)."""
_NO_PARAMS: dict[str, Any] = {}
"""A stand-in for absent params in the envelope fast path; never handed to a handler."""
_INFO_TYPES = frozenset({dict, type(None)})
"""What a stateless request's clientInfo may be (absent reads as None)."""

LOG_LEVELS: tuple[str, ...] = (
    "debug",
    "info",
    "notice",
    "warning",
    "error",
    "critical",
    "alert",
    "emergency",
)
"""RFC 5424 severities, least severe first (``logging/setLevel``, ``notifications/message``)."""

MAX_COMPLETIONS = 100
"""The spec's cap on ``completion/complete`` values in one answer."""


def _no_constants(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _finite_float(text: str) -> float:
    value = float(text)
    if value in (math.inf, -math.inf):
        raise ValueError(f"number {text[:40]} overflows a double")
    return value


def parse_json(text: str | bytes) -> Any:
    """Strict JSON: NaN and Infinity are not JSON (nor is 1e999), deep nesting is a parse error."""
    try:
        return json.loads(text, parse_constant=_no_constants, parse_float=_finite_float)
    except RecursionError:
        raise ValueError("nesting too deep") from None


@dataclass(frozen=True)
class CallRule:
    """One row of the tools/call lattice: when ``applies``, answer ``error``."""

    name: str
    error: Callable[[str], RPCError]
    message: str
    applies: Callable[[MCPServer, str], bool]


CALL_LATTICE: tuple[CallRule, ...] = (
    CallRule("unknown tool", MethodNotFound, "unknown tool {name!r}", lambda s, n: n not in s.tools),
    CallRule(
        "not allow-listed",
        InvalidRequest,
        "tool {name!r} not permitted for this client",
        lambda s, n: s.allowed_tools is not None and n not in s.allowed_tools,
    ),
)
"""Checked in order before anything runs; then arguments, then the tool itself."""


@dataclass
class Resource:
    uri: str
    name: str
    text: str | None
    blob: str | None
    mime_type: str
    description: str


@dataclass
class ResourceTemplate:
    uri_template: str
    name: str
    fn: Callable[..., Any]
    mime_type: str
    description: str


@dataclass
class Prompt:
    name: str
    template: str | Callable[..., Any]
    description: str
    arguments: list[dict[str, Any]]


Handler = Callable[["MCPServer", dict[str, Any]], dict[str, Any]]
"""A request method's implementation: (server, params) -> result."""

StatelessHandler = Callable[["MCPServer", dict[str, Any], StatelessRequest], "dict[str, Any] | None"]
"""A stateless-era method: (server, params, the request's envelope) -> result, None while open."""

_NO_ANSWERS: dict[str, Answer] = {}


class _AskClient(Exception):
    """A handshake-era tools/call needs the client's answers: send these requests, then resume."""

    def __init__(self, params: dict[str, Any], requests: dict[str, InputRequest], answers: dict[str, Answer]):
        super().__init__("input required")
        self.params, self.requests, self.answers = params, requests, answers


@dataclass
class PendingCall:
    """A handshake-era tools/call waiting for the client's answers to the server's requests."""

    request_id: RequestId
    params: dict[str, Any]
    answers: dict[str, Answer]
    waiting: dict[str, tuple[str, InputRequest]]
    """Server request id -> (the tool's key, the question)."""


class MCPServer:
    """An MCP server session over any transport; one instance serves one client.

    ``allowed_tools`` is the per-client allow-list (None allows every tool);
    ``tool_errors`` names the strategy for a raising tool (see
    :mod:`harness.protocol.strategies`); ``page_size`` turns on tools/list
    pagination. ``tool_runner`` runs each tool call (None: in place; see
    :mod:`harness.protocol.runner` for a per-call timeout); a tool result above
    ``max_result_bytes`` or one JSON cannot carry is a tool failure, reported
    through the strategy (:mod:`harness.protocol.payload`).

    Stateless era (2026-07-28): a request whose ``params._meta`` names a stateless
    version is served from its envelope alone (:mod:`harness.protocol.stateless`).
    ``state_key`` keys the HMAC of MRTR ``requestState`` (random unless given);
    ``cache_ttl_ms`` and ``cache_scope`` are the caching hints of list results.
    A tool asks the client for input with :func:`harness.protocol.inputs.ask`.
    """

    _methods: ClassVar[dict[str, Handler]]  # the tables after the class body
    _stateless_methods: ClassVar[dict[str, StatelessHandler]]

    def __init__(
        self,
        name: str,
        version: str = "0",
        *,
        allowed_tools: Iterable[str] | None = None,
        tool_errors: str = "is_error",
        page_size: int | None = None,
        instructions: str | None = None,
        max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
        tool_runner: ToolRunner | None = None,
        max_result_bytes: int = DEFAULT_MAX_RESULT_BYTES,
        state_key: bytes | None = None,
        cache_ttl_ms: int = 0,
        cache_scope: str = "private",
    ) -> None:
        if tool_errors not in TOOL_ERROR_STRATEGIES:
            raise ValueError(
                f"unknown tool_errors strategy {tool_errors!r}; one of {', '.join(TOOL_ERROR_STRATEGIES)}"
            )
        if page_size is not None and page_size < 1:
            raise ValueError("page_size must be a positive integer")
        if cache_ttl_ms < 0 or cache_scope not in CACHE_SCOPES:
            raise ValueError(f"cache_ttl_ms must be >= 0 and cache_scope one of {', '.join(CACHE_SCOPES)}")
        self.name = name
        self.version = version
        self.allowed_tools: set[str] | None = None if allowed_tools is None else set(allowed_tools)
        self.tool_errors = tool_errors
        self._on_tool_error = TOOL_ERROR_STRATEGIES[tool_errors]
        self.page_size = page_size
        self.instructions = instructions
        self.max_message_bytes = max_message_bytes
        self.tool_runner = tool_runner  # None: call tools in place (sans-IO); see harness.protocol.runner
        self.max_result_bytes = max_result_bytes
        # Stateless era: the requestState key (shared by every session of this server) and the
        # caching hints list results carry.
        self.request_states = RequestStateSealer(state_key)
        self.cache_ttl_ms = cache_ttl_ms
        self.cache_scope = cache_scope
        self.tools: dict[str, Tool] = {}
        self.resources: dict[str, Resource] = {}
        self.resource_templates: list[ResourceTemplate] = []
        self.prompts: dict[str, Prompt] = {}
        self.completions: dict[tuple[str, str], list[str]] = {}
        self._start_session()

    def _start_session(self) -> None:
        # Everything one client's session changes, and nothing else: new_session() relies on it.
        self.subscriptions: set[str] = set()
        self.log_level: str | None = None
        self._call_params: dict[str, Any] = {}
        self.state = State.NEW
        self.protocol_version: str | None = None
        self.client_info: dict[str, Any] | None = None
        self.client_capabilities: dict[str, Any] | None = None
        self._outbox: list[Message] = []
        self.pending_calls: dict[str, PendingCall] = {}  # server request id -> the call it serves
        self._request_log: tuple[object] | None = None  # (logLevel,) while a stateless request runs
        self.listeners: dict[tuple[type, RequestId], Listener] = {}
        self._asked = 0

    def new_session(self) -> MCPServer:
        """A server for the next client: this one's configuration and registrations, state NEW.

        What a server that serves many clients in turn wants (the official SDK's
        ``Client(server)`` opens a new session on one registry): it costs a few dict
        copies instead of registering every tool again. The registries are copied, so
        a tool added or removed in one session (a mid-session registration) is not seen
        by the other; the :class:`Tool` objects are shared, as nothing changes them
        after registration. The allow-list is copied too.
        """
        clone = object.__new__(type(self))
        clone.__dict__.update(self.__dict__)
        clone.allowed_tools = None if self.allowed_tools is None else set(self.allowed_tools)
        clone.tools = dict(self.tools)
        clone.resources = dict(self.resources)
        clone.resource_templates = list(self.resource_templates)
        clone.prompts = dict(self.prompts)
        clone.completions = dict(self.completions)
        clone._start_session()
        return clone

    # -- registration -------------------------------------------------------------

    def add_tool(
        self,
        name: str,
        fn: ToolFn,
        input_schema: dict[str, Any] | None = None,
        description: str = "",
        notify: bool = False,
        *,
        title: str | None = None,
        annotations: dict[str, Any] | None = None,
        checked: bool = True,
    ) -> Tool:
        """Register (or replace, keeping its place) a tool; ``notify`` queues list_changed.
        ``checked=False``: the tool validates its own arguments (:attr:`Tool.checked`)."""
        tool = Tool(
            name,
            fn,
            dict(input_schema or {"type": "object", "properties": {}}),
            description,
            title,
            annotations,
            checked,
        )
        self.tools[name] = tool
        if notify:
            self._list_changed()
        return tool

    def remove_tool(self, name: str, notify: bool = True) -> None:
        """Unregister a tool; later calls to it get -32601."""
        if self.tools.pop(name, None) is not None and notify:
            self._list_changed()

    def set_allowed_tools(self, names: Iterable[str] | None, notify: bool = False) -> None:
        """Replace the allow-list (None allows all), e.g. to revoke a tool mid-session."""
        self.allowed_tools = None if names is None else set(names)
        if notify:
            self._list_changed()

    def add_resource(
        self,
        uri: str,
        name: str,
        *,
        text: str | None = None,
        blob: str | None = None,
        mime_type: str = "text/plain",
        description: str = "",
    ) -> None:
        """A static resource: ``text``, or ``blob`` (base64) for binary content."""
        if (text is None) == (blob is None):
            raise ValueError("a resource has exactly one of text and blob")
        self.resources[uri] = Resource(uri, name, text, blob, mime_type, description)

    def add_resource_template(
        self,
        uri_template: str,
        name: str,
        fn: Callable[..., Any],
        *,
        mime_type: str = "text/plain",
        description: str = "",
    ) -> None:
        """A URI template like ``test://item/{id}``; ``fn`` gets the variables as keywords."""
        self.resource_templates.append(ResourceTemplate(uri_template, name, fn, mime_type, description))

    def add_prompt(
        self,
        name: str,
        template: str | Callable[..., Any],
        description: str = "",
        arguments: list[dict[str, Any]] | None = None,
    ) -> None:
        """A prompt from a ``{variable}`` template (its arguments found in it) or a function."""
        if arguments is None:
            if isinstance(template, str):
                arguments = [{"name": f, "required": True} for f in _template_fields(template)]
            else:
                arguments = []
        self.prompts[name] = Prompt(name, template, description, arguments)

    @property
    def has_notifications(self) -> bool:
        """Whether the outbox holds messages a transport has not drained yet."""
        return bool(self._outbox)

    def take_notifications(self) -> list[Message]:
        """Drain the outbox (transports call this after every message and between them).

        It holds what the server sends unprompted, oldest first: notifications;
        handshake-era server-to-client requests (``elicitation/create``, ... with
        string ids ``"s2c-<n>"``; their responses go back through :meth:`handle`); and
        the final result of a listen stream that the server ended.
        """
        out, self._outbox = self._outbox, []
        return out

    def _list_changed(self) -> None:
        if self.state is State.READY:
            self._outbox.append(notification(TOOLS_LIST_CHANGED))
        if self.listeners:
            self._to_listeners(TOOLS_LIST_CHANGED, lambda listener: listener.tools)

    def _to_listeners(
        self, method: str, wants: Callable[[Listener], bool], params: dict[str, Any] | None = None
    ) -> None:
        # A level trigger: one undrained event of a kind per stream is enough ("refetch if you care").
        for listener in self.listeners.values():
            if wants(listener):
                event = listener.event(method, params)
                if event not in self._outbox:
                    self._outbox.append(event)

    def close_subscriptions(self) -> None:
        """End every open listen stream gracefully: its final result is queued in the outbox."""
        for listener in self.listeners.values():
            self._outbox.append(
                {
                    "jsonrpc": JSONRPC,
                    "id": listener.id,
                    "result": self._stateless_result({"_meta": listener.meta}),
                }
            )
        self.listeners.clear()

    def add_completion(self, ref: str, argument: str, values: Iterable[str]) -> None:
        """Offer ``values`` for ``argument`` of a prompt name or a resource template URI."""
        self.completions[(ref, argument)] = list(values)

    def log(self, level: str, data: Any, logger: str | None = None) -> None:
        """Queue ``notifications/message`` if ``level`` is at or above the client's ``logging/setLevel``."""
        if level not in LOG_LEVELS:
            raise ValueError(f"unknown log level {level!r}; one of {', '.join(LOG_LEVELS)}")
        request_log = self._request_log
        if request_log is not None:  # a stateless request: only its own logLevel opts in
            wanted = request_log[0]
            if wanted not in LOG_LEVELS:
                return
            floor = LOG_LEVELS.index(wanted)
        elif self.state is State.READY:
            floor = LOG_LEVELS.index(self.log_level) if self.log_level is not None else 0
        else:
            return
        if LOG_LEVELS.index(level) >= floor:
            params: dict[str, Any] = {"level": level, "data": data}
            if logger is not None:
                params["logger"] = logger
            self._outbox.append(notification("notifications/message", params))

    def progress(self, progress: float, total: float | None = None, message: str | None = None) -> None:
        """Queue ``notifications/progress`` for the running tools/call, if it sent a progressToken."""
        meta = self._call_params.get("_meta")
        token = meta.get("progressToken") if isinstance(meta, dict) else None
        if token is None:
            return
        params: dict[str, Any] = {"progressToken": token, "progress": progress}
        if total is not None:
            params["total"] = total
        if message is not None:
            params["message"] = message
        self._outbox.append(notification("notifications/progress", params))

    def resource_updated(self, uri: str) -> None:
        """Queue ``notifications/resources/updated`` if the client subscribed to ``uri``."""
        if self.state is State.READY and uri in self.subscriptions:
            self._outbox.append(notification("notifications/resources/updated", {"uri": uri}))
        if self.listeners:
            self._to_listeners("notifications/resources/updated", lambda lst: uri in lst.uris, {"uri": uri})

    # -- the edges -----------------------------------------------------------------

    def handle(self, message: Message) -> Message | None:
        """Answer one parsed message: a reply dict, or None for a notification."""
        try:
            method: str
            if (
                type(message) is dict
                and type(message.get("id")) in _ID_TYPES
                and type(message.get("method")) is str
                and message.get("jsonrpc") == JSONRPC
                and type(params := message.get("params", _NO_PARAMS)) is dict
            ):
                method = message["method"]  # a well-formed request: check_envelope would pass it
            else:
                if is_response(message) and message.get("jsonrpc") == JSONRPC:
                    return self._answered(message)  # the client's answer to a server request
                check_envelope(message)
                method = message["method"]
                params = message.get("params") or _NO_PARAMS
                if "id" not in message:
                    self._notified(method, params)
                    return None
            if "_meta" in params and method != lifecycle.INITIALIZE:
                meta = params["_meta"]
                if type(meta) is dict and META_PROTOCOL_VERSION in meta:
                    return self._handle_stateless(message["id"], method, params, meta)
            lifecycle.check_request(self.state, method)
            handler = self._methods.get(method)
            if handler is None:
                raise MethodNotFound(f"method not found: {method}")
            result = handler(self, message.get("params") or {})
            if method == lifecycle.INITIALIZE:
                self.state = lifecycle.after(self.state, method)
            return {"jsonrpc": JSONRPC, "id": message["id"], "result": result}
        except ToolEscape as esc:
            raise esc.original from None
        except Exception as exc:
            if isinstance(exc, RPCError) and _is_notification_envelope(message):
                return None  # a notification is never answered, not even with an error (bad params)
            return self._failed(reply_id(message), exc)

    def _failed(self, request_id: RequestId | None, exc: Exception) -> Message | None:
        """The reply to a request whose handling raised ``exc`` (a tools/call that asks the client waits)."""
        if isinstance(exc, RPCError):
            return error_response(request_id, exc.code, exc.message, exc.data)
        if isinstance(exc, _AskClient):
            assert request_id is not None
            return self._ask_client(request_id, exc)
        return error_response(request_id, INTERNAL_ERROR, f"internal error: {type(exc).__name__}: {exc}")

    def handle_text(self, text: str | bytes) -> str | None:
        """The byte edge: parse, handle, serialize. Bad bytes get -32700 with id null."""
        if len(text) > self.max_message_bytes or (
            type(text) is str  # characters, not bytes: only text near the limit is measured
            and len(text) * 4 > self.max_message_bytes
            and len(text.encode("utf-8", "surrogatepass")) > self.max_message_bytes
        ):
            return _dump(
                error_response(None, INVALID_REQUEST, f"message larger than {self.max_message_bytes} bytes")
            )
        try:
            message = parse_json(text)
        except ValueError as exc:
            return _dump(error_response(None, PARSE_ERROR, f"parse error: {exc}"))
        if isinstance(message, list):
            return _dump(error_response(None, INVALID_REQUEST, "JSON-RPC batches are not part of MCP"))
        if not isinstance(message, dict):
            return _dump(error_response(None, INVALID_REQUEST, "a JSON-RPC message must be an object"))
        reply = self.handle(message)
        if reply is None:
            return None
        try:
            return _dump(reply)
        except (TypeError, ValueError, OverflowError, RecursionError) as exc:
            return _dump(error_response(reply_id(message), INTERNAL_ERROR, f"reply not serializable: {exc}"))

    def _notified(self, method: str, params: dict[str, Any]) -> None:
        # Notifications never get a reply; anything they break stays on this side.
        self.state = lifecycle.after(self.state, method)
        if method == CANCELLED and (self.pending_calls or self.listeners):
            self._cancelled(params.get("requestId"))

    def _cancelled(self, request_id: object) -> None:
        # The client gave up on a pending call or a listen stream: forget it, answer nothing.
        if type(request_id) not in _ID_TYPES:
            return
        assert isinstance(request_id, int | str)
        self.listeners.pop((type(request_id), request_id), None)
        for sid, call in list(self.pending_calls.items()):
            if type(call.request_id) is type(request_id) and call.request_id == request_id:
                del self.pending_calls[sid]

    # -- the stateless era -----------------------------------------------------------

    def _handle_stateless(
        self, request_id: RequestId, method: str, params: dict[str, Any], meta: dict[str, Any]
    ) -> Message | None:
        version, caps = meta[META_PROTOCOL_VERSION], meta.get(META_CLIENT_CAPABILITIES)
        info = meta.get(META_CLIENT_INFO)
        if type(caps) is dict and version in STATELESS_VERSIONS and type(info) in _INFO_TYPES:
            # A well-formed envelope: read_envelope would accept it and build the same request.
            request = StatelessRequest(request_id, version, caps, info)
        else:
            request = read_envelope(request_id, meta)  # the rules, and the error to answer
        handler = self._stateless_methods.get(method)
        if handler is None:
            raise MethodNotFound(f"method not found: {method} (not part of {request.version})")
        outer, self._request_log = self._request_log, (meta.get(LOG_LEVEL),)
        try:
            result = handler(self, params, request)
        except ResourceNotFound as exc:  # -32002 is not emitted from 2026-07-28 on
            raise InvalidParams(exc.message, exc.data) from None
        finally:
            self._request_log = outer
        if result is None:
            return None
        return {"jsonrpc": JSONRPC, "id": request_id, "result": result}

    @property
    def server_info(self) -> dict[str, Any]:
        return {"name": self.name, "version": self.version}

    def _stateless_result(self, result: dict[str, Any], result_type: str = "complete") -> dict[str, Any]:
        """``result`` as the stateless era shapes it: ``resultType`` and the serverInfo stamp."""
        meta = result.get("_meta")
        info = {"name": self.name, "version": self.version}  # server_info, without the call
        stamp = {**meta, SERVER_INFO: info} if isinstance(meta, dict) else {SERVER_INFO: info}
        return {**result, "resultType": result_type, "_meta": stamp}

    def _cacheable(self, result: dict[str, Any]) -> dict[str, Any]:
        out = self._stateless_result(result)
        out["ttlMs"] = self.cache_ttl_ms
        out["cacheScope"] = self.cache_scope
        return out

    def _discover(self, params: dict[str, Any], request: StatelessRequest) -> dict[str, Any]:
        result: dict[str, Any] = {
            "supportedVersions": list(SUPPORTED_NEWEST_FIRST),
            "capabilities": {
                "tools": {"listChanged": True},
                "resources": {"subscribe": True},
                "prompts": {},
                "completions": {},
            },
        }
        if self.instructions:
            result["instructions"] = self.instructions
        return self._cacheable(result)

    def _listen(self, params: dict[str, Any], request: StatelessRequest) -> dict[str, Any] | None:
        listener = Listener.from_params(request.id, params)
        key = (type(request.id), request.id)
        if key in self.listeners:
            raise InvalidRequest(f"a listen stream with id {request.id!r} is already open")
        self.listeners[key] = listener
        self._outbox.append(listener.event(ACKNOWLEDGED, {"notifications": listener.honoured()}))
        return None  # the stream stays open: its events go out through the outbox

    def _call_tool_stateless(self, params: dict[str, Any], request: StatelessRequest) -> dict[str, Any]:
        name, tool, arguments = self._target(params)
        responses = params.get("inputResponses")
        if responses is not None and not isinstance(responses, dict):
            raise InvalidParams("inputResponses must be an object")
        answers = _NO_ANSWERS
        state = params.get("requestState")
        if state is not None:  # checked before anything runs: the tool must not run on bad state
            opened = self.request_states.open(state, "tools/call", name, arguments)
            answers = dict(opened.answers)
            for key, digest in opened.asked.items():
                answer = (responses or {}).get(key)
                if answer is None:
                    continue  # not answered: the tool will ask again
                if not isinstance(answer, dict):
                    raise InvalidParams(f"inputResponses[{key!r}] must be an object")
                answers[key] = Answer(digest, answer)
        try:
            result = self._run_tool(name, tool, params, arguments, request.version, answers)
        except InputRequired as need:
            missing = missing_capabilities(need.requests, request.capabilities)
            if missing:
                raise _missing(missing) from None
            asked = {key: r.digest for key, r in need.requests.items()}
            return self._stateless_result(
                {
                    "inputRequests": {key: r.to_wire() for key, r in need.requests.items()},
                    "requestState": self.request_states.seal("tools/call", name, arguments, asked, answers),
                },
                "input_required",
            )
        return self._stateless_result(result)

    # -- server-to-client requests (handshake era) --------------------------------------

    def _ask_client(self, request_id: RequestId, ask: _AskClient) -> Message | None:
        """Queue the requests ``ask`` needs answered; the call's reply waits for them (None now)."""
        call = PendingCall(request_id, ask.params, ask.answers, {})
        for key, question in ask.requests.items():
            self._asked += 1
            sid = f"s2c-{self._asked}"
            call.waiting[sid] = (key, question)
            self.pending_calls[sid] = call
            out: Message = {"jsonrpc": JSONRPC, "id": sid, "method": question.method}
            if question.params:
                out["params"] = question.params
            self._outbox.append(out)
        return None

    def _answered(self, response: Message) -> Message | None:
        sid = response.get("id")
        call = self.pending_calls.pop(sid, None) if type(sid) is str else None
        if call is None:
            return None  # an answer to nothing pending (cancelled, or never asked): dropped
        assert isinstance(sid, str)
        key, question = call.waiting.pop(sid)
        result, error = response.get("result"), response.get("error")
        if isinstance(result, dict) and "error" not in response:
            call.answers[key] = Answer(question.digest, result)
        else:
            err = (
                error
                if isinstance(error, dict)
                else {"code": INVALID_REQUEST, "message": "malformed response"}
            )
            call.answers[key] = Answer(question.digest, None, err)
        if call.waiting:
            return None  # more answers to come
        try:
            result = self._call_tool(call.params, call.answers)
        except ToolEscape as esc:
            raise esc.original from None
        except Exception as exc:
            return self._failed(call.request_id, exc)
        return {"jsonrpc": JSONRPC, "id": call.request_id, "result": result}

    # -- methods -------------------------------------------------------------------

    def _initialize(self, params: dict[str, Any]) -> dict[str, Any]:
        requested = params.get("protocolVersion")
        if not isinstance(requested, str):
            raise InvalidParams("initialize needs a string protocolVersion")
        caps = params.get("capabilities")
        info = params.get("clientInfo")
        self.client_capabilities = caps if isinstance(caps, dict) else {}
        self.client_info = info if isinstance(info, dict) else None
        self.protocol_version = negotiate(requested)
        result: dict[str, Any] = {
            "protocolVersion": self.protocol_version,
            "capabilities": {
                "tools": {"listChanged": True},
                "resources": {"subscribe": True},
                "prompts": {},
                "logging": {},
                "completions": {},
            },
            "serverInfo": self.server_info,
        }
        if self.instructions:
            result["instructions"] = self.instructions
        return result

    def _ping(self, params: dict[str, Any]) -> dict[str, Any]:
        return {}

    def _list_tools(self, params: dict[str, Any]) -> dict[str, Any]:
        tools = list(self.tools.values())
        cursor = params.get("cursor")
        if self.page_size is None:
            if cursor is not None:
                decode_cursor(cursor)  # still reject a cursor this server never issued
                return {"tools": []}
            return {"tools": [t.descriptor for t in tools]}
        start = 0 if cursor is None else decode_cursor(cursor)
        end = start + self.page_size
        page: dict[str, Any] = {"tools": [t.descriptor for t in tools[start:end]]}
        if end < len(tools):
            page["nextCursor"] = encode_cursor(end)
        return page

    def _lookup_tool(self, params: dict[str, Any]) -> tuple[str, Tool]:
        name = params.get("name")
        if not isinstance(name, str):
            raise InvalidParams("tools/call needs a string name")
        tool = self.tools.get(name)
        allowed = self.allowed_tools
        if tool is None or (allowed is not None and name not in allowed):
            # Only a call some row may reject walks the table (the fast test above is the
            # negation of every row; a new row must be added to it too).
            for rule in CALL_LATTICE:
                if rule.applies(self, name):
                    raise rule.error(rule.message.format(name=name))
            tool = self.tools[name]
        return name, tool

    def _target(self, params: dict[str, Any]) -> tuple[str, Tool, dict[str, Any]]:
        """The tool a tools/call names, and its arguments (either era). A registered, allowed
        tool with an object of arguments is taken at once; anything else goes to the lattice
        and to ``_arguments``, which give the error."""
        name: Any = params.get("name")
        tool = self.tools.get(name) if type(name) is str else None
        allowed = self.allowed_tools
        if tool is None or (allowed is not None and name not in allowed):
            name, tool = self._lookup_tool(params)  # the lattice decides
        arguments = params.get("arguments")
        if type(arguments) is not dict:
            arguments = _arguments(params)
        return name, tool, arguments

    def _call_tool(self, params: dict[str, Any], answers: dict[str, Answer] = _NO_ANSWERS) -> dict[str, Any]:
        """tools/call in the handshake era (``answers``: what the client answered so far)."""
        name, tool, arguments = self._target(params)
        try:
            return self._run_tool(name, tool, params, arguments, self.protocol_version, answers)
        except InputRequired as need:
            missing = missing_capabilities(need.requests, self.client_capabilities)
            if missing:
                raise _missing(missing) from None
            raise _AskClient(params, need.requests, dict(answers)) from None

    def _run_tool(
        self,
        name: str,
        tool: Tool,
        params: dict[str, Any],
        arguments: dict[str, Any],
        version: str | None,
        answers: dict[str, Answer],
    ) -> dict[str, Any]:
        """Arguments, then the tool; InputRequired leaves for the era to handle, failures the strategy's."""
        self._call_params = params  # one store; progress() reads _meta only when a tool reports
        problem = tool.argument_problem(arguments)
        if problem is not None:
            if version is not None and at_least(version, SEP_1303_VERSION):
                # SEP-1303: invalid input is a tool execution error the model can correct.
                text = f"ERROR: invalid arguments for tool {name!r}: {problem}"
                return {"content": [{"type": "text", "text": text}], "isError": True}
            raise InvalidParams(f"invalid arguments for tool {name!r}: {problem}")
        try:
            runner = self.tool_runner
            if answers:
                with answering(answers):
                    value = tool.fn(**arguments) if runner is None else runner(name, tool.fn, arguments)
            else:
                value = tool.fn(**arguments) if runner is None else runner(name, tool.fn, arguments)
            if type(value) is str and len(value) * 4 <= self.max_result_bytes:  # as to_result would
                return {"content": [{"type": "text", "text": value}]}
            return to_result(value, self.max_result_bytes)
        except (RPCError, InputRequired):
            raise
        except Exception as exc:
            return self._on_tool_error(name, exc)

    def _list_resources(self, params: dict[str, Any]) -> dict[str, Any]:
        items = []
        for r in self.resources.values():
            item: dict[str, Any] = {"uri": r.uri, "name": r.name, "mimeType": r.mime_type}
            if r.description:
                item["description"] = r.description
            items.append(item)
        return {"resources": items}

    def _list_resource_templates(self, params: dict[str, Any]) -> dict[str, Any]:
        items = []
        for t in self.resource_templates:
            item: dict[str, Any] = {"uriTemplate": t.uri_template, "name": t.name, "mimeType": t.mime_type}
            if t.description:
                item["description"] = t.description
            items.append(item)
        return {"resourceTemplates": items}

    def _read_resource(self, params: dict[str, Any]) -> dict[str, Any]:
        uri = params.get("uri")
        if not isinstance(uri, str):
            raise InvalidParams("resources/read needs a string uri")
        res = self.resources.get(uri)
        if res is not None:
            content: dict[str, Any] = {"uri": uri, "mimeType": res.mime_type}
            if res.text is not None:
                content["text"] = res.text
            else:
                content["blob"] = res.blob
            return {"contents": [content]}
        for tmpl in self.resource_templates:
            variables = match_template(tmpl.uri_template, uri)
            if variables is not None:
                value = tmpl.fn(**variables)
                if isinstance(value, bytes | bytearray):
                    return {
                        "contents": [
                            {"uri": uri, "mimeType": tmpl.mime_type, "blob": base64.b64encode(value).decode()}
                        ]
                    }
                return {"contents": [{"uri": uri, "mimeType": tmpl.mime_type, "text": str(value)}]}
        raise ResourceNotFound(f"resource not found: {uri}", {"uri": uri})

    def _list_prompts(self, params: dict[str, Any]) -> dict[str, Any]:
        items = []
        for p in self.prompts.values():
            item: dict[str, Any] = {"name": p.name, "arguments": p.arguments}
            if p.description:
                item["description"] = p.description
            items.append(item)
        return {"prompts": items}

    def _get_prompt(self, params: dict[str, Any]) -> dict[str, Any]:
        name = params.get("name")
        prompt = self.prompts.get(name) if isinstance(name, str) else None
        if prompt is None:
            raise InvalidParams(f"unknown prompt {name!r}")
        arguments = params.get("arguments") or {}
        if not isinstance(arguments, dict):
            raise InvalidParams("prompt arguments must be an object")
        for arg in prompt.arguments:
            if arg.get("required") and arg["name"] not in arguments:
                raise InvalidParams(f"missing prompt argument {arg['name']!r}")
        if isinstance(prompt.template, str):
            try:
                text = prompt.template.format(**arguments)
            except (KeyError, IndexError) as exc:
                raise InvalidParams(f"missing prompt argument {exc}") from None
            messages: Any = [{"role": "user", "content": {"type": "text", "text": text}}]
        else:
            messages = prompt.template(**arguments)
            if isinstance(messages, str):
                messages = [{"role": "user", "content": {"type": "text", "text": messages}}]
        result: dict[str, Any] = {"messages": messages}
        if prompt.description:
            result["description"] = prompt.description
        return result

    def _set_level(self, params: dict[str, Any]) -> dict[str, Any]:
        level = params.get("level")
        if level not in LOG_LEVELS:
            raise InvalidParams(f"level must be one of {', '.join(LOG_LEVELS)}")
        self.log_level = level
        return {}

    def _complete(self, params: dict[str, Any]) -> dict[str, Any]:
        ref, argument = params.get("ref"), params.get("argument")
        if not isinstance(ref, dict) or not isinstance(argument, dict):
            raise InvalidParams("completion/complete needs ref and argument objects")
        kind, templates = ref.get("type"), {t.uri_template for t in self.resource_templates}
        if kind == "ref/prompt" and ref.get("name") in self.prompts:
            key = ref["name"]
        elif kind == "ref/resource" and ref.get("uri") in templates:
            key = ref["uri"]
        else:
            raise InvalidParams(f"no prompt or resource template matches ref {ref!r}")
        name, value = argument.get("name"), argument.get("value")
        if not isinstance(name, str) or not isinstance(value, str):
            raise InvalidParams("argument needs a string name and a string value")
        values = [v for v in self.completions.get((key, name), ()) if v.startswith(value)]
        shown = values[:MAX_COMPLETIONS]
        return {"completion": {"values": shown, "total": len(values), "hasMore": len(values) > len(shown)}}

    def _subscribe(self, params: dict[str, Any]) -> dict[str, Any]:
        uri = params.get("uri")
        if not isinstance(uri, str):
            raise InvalidParams("resources/subscribe needs a string uri")
        known = uri in self.resources or any(
            match_template(t.uri_template, uri) is not None for t in self.resource_templates
        )
        if not known:
            raise ResourceNotFound(f"resource not found: {uri}", {"uri": uri})
        self.subscriptions.add(uri)
        return {}

    def _unsubscribe(self, params: dict[str, Any]) -> dict[str, Any]:
        uri = params.get("uri")
        if not isinstance(uri, str):
            raise InvalidParams("resources/unsubscribe needs a string uri")
        self.subscriptions.discard(uri)
        return {}


MCPServer._methods = {
    "initialize": MCPServer._initialize,
    "ping": MCPServer._ping,
    "tools/list": MCPServer._list_tools,
    "tools/call": MCPServer._call_tool,
    "resources/list": MCPServer._list_resources,
    "resources/templates/list": MCPServer._list_resource_templates,
    "resources/read": MCPServer._read_resource,
    "prompts/list": MCPServer._list_prompts,
    "prompts/get": MCPServer._get_prompt,
    "logging/setLevel": MCPServer._set_level,
    "completion/complete": MCPServer._complete,
    "resources/subscribe": MCPServer._subscribe,
    "resources/unsubscribe": MCPServer._unsubscribe,
}
"""Request method -> handler, one table for every instance (built once, not per session)."""


def _complete_with(handler: Handler) -> StatelessHandler:
    return lambda server, params, request: server._stateless_result(handler(server, params))


def _cacheable_with(handler: Handler) -> StatelessHandler:
    return lambda server, params, request: server._cacheable(handler(server, params))


MCPServer._stateless_methods = {
    "server/discover": MCPServer._discover,
    "tools/list": _cacheable_with(MCPServer._list_tools),
    "tools/call": MCPServer._call_tool_stateless,
    "resources/list": _cacheable_with(MCPServer._list_resources),
    "resources/templates/list": _cacheable_with(MCPServer._list_resource_templates),
    "resources/read": _cacheable_with(MCPServer._read_resource),
    "prompts/list": _cacheable_with(MCPServer._list_prompts),
    "prompts/get": _complete_with(MCPServer._get_prompt),
    "completion/complete": _complete_with(MCPServer._complete),
    "subscriptions/listen": MCPServer._listen,
}
"""The stateless era's methods (2026-07-28): no initialize, ping, logging/setLevel or
resources/(un)subscribe; server/discover and subscriptions/listen instead."""


def _arguments(params: dict[str, Any]) -> dict[str, Any]:
    arguments = params.get("arguments")
    if arguments is None:
        return {}
    if not isinstance(arguments, dict):
        raise InvalidParams("arguments must be an object")
    return arguments


def _missing(capabilities: dict[str, Any]) -> MissingClientCapability:
    return MissingClientCapability(
        f"the tool needs input the client declared no capability for: {', '.join(capabilities)}",
        {"requiredCapabilities": capabilities},
    )


@functools.lru_cache(maxsize=256)
def _template_fields(template: str) -> tuple[str, ...]:
    """The distinct ``{field}`` names of a prompt template, in order (parsed once per template)."""
    return tuple(dict.fromkeys(f for _, f, _, _ in string.Formatter().parse(template) if f))


def match_template(template: str, uri: str) -> dict[str, str] | None:
    """Match ``uri`` against a simple level-1 URI template (``{var}`` segments)."""
    out: dict[str, str] = {}
    pos = 0
    parts = list(string.Formatter().parse(template))
    for i, (literal, field, _, _) in enumerate(parts):
        if not uri.startswith(literal, pos):
            return None
        pos += len(literal)
        if field is None:
            continue
        nxt = parts[i + 1][0] if i + 1 < len(parts) else ""
        end = uri.find(nxt, pos) if nxt else len(uri)
        if end < 0 or end == pos:
            return None
        value = uri[pos:end]
        if "/" in value:
            return None
        out[field] = value
        pos = end
    return out if pos == len(uri) else None


def _is_notification_envelope(message: object) -> bool:
    return (
        isinstance(message, dict)
        and "id" not in message
        and message.get("jsonrpc") == JSONRPC
        and isinstance(message.get("method"), str)
    )


def _dump(message: Message) -> str:
    # allow_nan=False: NaN and Infinity are not JSON; such a reply becomes -32603 instead.
    return json.dumps(message, separators=(",", ":"), allow_nan=False)
