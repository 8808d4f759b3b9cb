"""Check every message our server emits against the official ``mcp_types`` models.

Why: our core builds plain dicts by hand, so nothing but an outside schema can
tell us a reply is one a real MCP client would accept. The models are the
official SDK's (``mcp==2.3.0``): the generated wire models of
``mcp_types._v2025_11_25`` (the schema of every handshake-era version, as
``mcp_types.methods`` maps them) and the version-free models of
``mcp_types._types`` that the SDK client parses into.

Contract: :func:`validate_server_message` raises :class:`SchemaViolation` (an
``AssertionError``) naming what is wrong, and returns what the message is.
Pydantic is lax (it takes ``id: true`` as 1), so the JSON-RPC rules the models
let through are checked here by hand: strict ids, ``result`` XOR ``error``, no
stray keys, and bytes that are real JSON (no NaN). :class:`WireChecker` follows
a whole conversation, both directions, so that each reply is checked against
the model of the method it answers, for the version that was negotiated, and
each request is answered at most once.

The stateless era (2026-07-28) is checked against ``mcp_types._v2026_07_28``:
a request whose ``params._meta`` names that version is answered under its
models (``resultType`` required, caching hints on cacheable results,
``input_required`` only where MRTR is allowed, -32002 never emitted, the
-32021/-32022 error shapes), and a notification stamped with a
``subscriptionId`` is a listen stream's. A message from the server with an id
and a method is a server-to-client request (handshake era only), checked
against that version's request model.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping
from typing import Any, Literal

import mcp_types
import mcp_types._v2025_11_25 as wire
import mcp_types._v2026_07_28 as wire26
from mcp_types import methods
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, LATEST_HANDSHAKE_VERSION, MODERN_PROTOCOL_VERSIONS
from pydantic import BaseModel, TypeAdapter, ValidationError

Kind = Literal["result", "error", "notification", "request"]

RESULT_MODELS: dict[str, type[BaseModel]] = {
    "initialize": wire.InitializeResult,
    "ping": wire.Result,  # EmptyResult is an alias of Result in the generated schema
    "tools/list": wire.ListToolsResult,
    "tools/call": wire.CallToolResult,
    "resources/list": wire.ListResourcesResult,
    "resources/templates/list": wire.ListResourceTemplatesResult,
    "resources/read": wire.ReadResourceResult,
    "prompts/list": wire.ListPromptsResult,
    "prompts/get": wire.GetPromptResult,
    "logging/setLevel": wire.Result,
    "completion/complete": wire.CompleteResult,
    "resources/subscribe": wire.Result,
    "resources/unsubscribe": wire.Result,
}
"""The wire model of the result of each method our server implements."""

MONOLITH_RESULTS: dict[str, type[BaseModel]] = {
    "initialize": mcp_types.InitializeResult,
    "ping": mcp_types.EmptyResult,
    "tools/list": mcp_types.ListToolsResult,
    "tools/call": mcp_types.CallToolResult,
    "resources/list": mcp_types.ListResourcesResult,
    "resources/templates/list": mcp_types.ListResourceTemplatesResult,
    "resources/read": mcp_types.ReadResourceResult,
    "prompts/list": mcp_types.ListPromptsResult,
    "prompts/get": mcp_types.GetPromptResult,
    "logging/setLevel": mcp_types.EmptyResult,
    "completion/complete": mcp_types.CompleteResult,
    "resources/subscribe": mcp_types.EmptyResult,
    "resources/unsubscribe": mcp_types.EmptyResult,
}
"""What the SDK client parses each result into (it must accept ours)."""

STATELESS_ERRORS: dict[int, type[BaseModel]] = {
    -32021: wire26.MissingRequiredClientCapabilityError,
    -32022: wire26.UnsupportedProtocolVersionError,
}
"""Stateless-era error codes whose ``data`` the spec fixes, and the model that checks it."""

SUBSCRIPTION_ID = "io.modelcontextprotocol/subscriptionId"
PROTOCOL_VERSION = "io.modelcontextprotocol/protocolVersion"

_ENVELOPE_KEYS: dict[str, frozenset[str]] = {
    "result": frozenset({"jsonrpc", "id", "result"}),
    "error": frozenset({"jsonrpc", "id", "error"}),
    "notification": frozenset({"jsonrpc", "method", "params"}),
    "request": frozenset({"jsonrpc", "id", "method", "params"}),
}


class SchemaViolation(AssertionError):
    """A server message that the official models (or JSON-RPC) reject."""


def _fail(message: object, why: str) -> SchemaViolation:
    text = json.dumps(message, default=repr)
    return SchemaViolation(f"{why}\n  message: {text[:600]}")


def _strict_id(value: object) -> bool:
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def _check_json(message: object, path: str = "$") -> None:
    """Only what JSON can carry: dicts with str keys, lists, str, int, finite float, bool, None."""
    if isinstance(message, dict):
        for key, value in message.items():
            if not isinstance(key, str):
                raise SchemaViolation(f"non-string key {key!r} at {path}")
            _check_json(value, f"{path}.{key}")
    elif isinstance(message, list):
        for i, value in enumerate(message):
            _check_json(value, f"{path}[{i}]")
    elif isinstance(message, float):
        if not math.isfinite(message):
            raise SchemaViolation(f"{message!r} at {path} is not JSON")
    elif not (message is None or isinstance(message, str | int | bool)):
        raise SchemaViolation(f"{type(message).__name__} at {path} is not JSON")


def _validate(model: type[BaseModel], data: object, message: object, what: str) -> None:
    try:
        model.model_validate(data, by_name=False)
    except ValidationError as exc:
        raise _fail(message, f"{what} fails {model.__module__}.{model.__qualname__}: {exc}") from None


def validate_result(method: str, version: str, result: Mapping[str, Any], message: object = None) -> None:
    """Check one result body against the models for ``(method, version)``."""
    model = RESULT_MODELS.get(method)
    if model is None:
        raise _fail(message, f"a result for {method!r}, which our server does not implement")
    surface = methods.SERVER_RESULTS.get((method, version))
    if surface is not model:
        raise _fail(message, f"{method!r} has no result in version {version} (surface {surface!r})")
    _validate(model, result, message if message is not None else result, f"{method} result")
    _validate(
        MONOLITH_RESULTS[method], result, message if message is not None else result, f"{method} result"
    )


def validate_server_message(
    message: object, *, method: str | None = None, version: str | None = None
) -> Kind:
    """Validate one message from our server; ``method`` is what it answers, if known.

    ``version`` is the negotiated protocol version (None before the handshake:
    the latest handshake version's schema applies, as for every handshake era).
    """
    if not isinstance(message, dict):
        raise _fail(message, "a JSON-RPC message must be an object")
    _check_json(message)
    version = version or LATEST_HANDSHAKE_VERSION
    if version in MODERN_PROTOCOL_VERSIONS:
        return _validate_stateless(message, method, version)
    if version not in HANDSHAKE_PROTOCOL_VERSIONS:
        raise _fail(message, f"negotiated version {version!r} is not a handshake-era version")
    if message.get("jsonrpc") != "2.0":
        raise _fail(message, 'jsonrpc must be exactly "2.0"')
    kind: Kind
    if "method" in message and "id" in message and (message["method"], version) in methods.SERVER_REQUESTS:
        kind = "request"
    elif "method" in message:
        kind = "notification"
    elif ("result" in message) == ("error" in message):
        raise _fail(message, "a response carries exactly one of result and error")
    else:
        kind = "result" if "result" in message else "error"
    stray = set(message) - _ENVELOPE_KEYS[kind]
    if stray:
        raise _fail(message, f"stray keys {sorted(stray)} in a {kind}")
    if kind == "request":
        _check_server_request(message, version)
    elif kind == "notification":
        _check_notification(message, version)
    elif kind == "error":
        _check_error(message)
    else:
        _check_result(message, method, version)
    return kind


def _check_server_request(message: dict[str, Any], version: str) -> None:
    if not _strict_id(message["id"]):
        raise _fail(message, "a server request's id is a string or an integer")
    _validate(wire.JSONRPCRequest, message, message, "request envelope")
    _validate(methods.SERVER_REQUESTS[(message["method"], version)], message, message, "server request")


def _adapt(model: Any, data: object, message: object, what: str) -> None:
    try:
        TypeAdapter(model).validate_python(data, by_name=False)
    except ValidationError as exc:
        raise _fail(message, f"{what} fails {model}: {exc}") from None


def _validate_stateless(message: dict[str, Any], method: str | None, version: str) -> Kind:
    """One server message under the stateless era's models (see the module docstring)."""
    if message.get("jsonrpc") != "2.0":
        raise _fail(message, 'jsonrpc must be exactly "2.0"')
    kind: Kind
    if "method" in message:
        if "id" in message:
            raise _fail(message, "the stateless era has no server-to-client requests (MRTR replaces them)")
        kind = "notification"
    elif ("result" in message) == ("error" in message):
        raise _fail(message, "a response carries exactly one of result and error")
    else:
        kind = "result" if "result" in message else "error"
    stray = set(message) - _ENVELOPE_KEYS[kind]
    if stray:
        raise _fail(message, f"stray keys {sorted(stray)} in a {kind}")
    if kind == "notification":
        _validate(wire26.JSONRPCNotification, message, message, "notification envelope")
        model = methods.SERVER_NOTIFICATIONS.get((message["method"], version))
        if model is None:
            raise _fail(message, f"{message['method']!r} is not a server notification in {version}")
        _validate(model, message, message, "notification")
    elif kind == "error":
        _check_error(message)
        code = message["error"]["code"]
        if code in (-32002, -32042):
            raise _fail(message, f"{code} must not be emitted from {version} on")
        if code in STATELESS_ERRORS:
            _validate(STATELESS_ERRORS[code], message, message, f"{code} error")
    else:
        if not _strict_id(message["id"]):
            raise _fail(message, "a result's id is a string or an integer, never null")
        _validate(wire26.JSONRPCResultResponse, message, message, "result envelope")
        if method is not None:
            validate_stateless_result(method, version, message["result"], message)
    return kind


def validate_stateless_result(
    method: str, version: str, result: Mapping[str, Any], message: object = None
) -> None:
    """A stateless-era result: its version's surface model, then what the SDK client parses it into."""
    where = message if message is not None else result
    result_type = result.get("resultType")
    if result_type not in ("complete", "input_required"):
        raise _fail(where, f"resultType must be 'complete' or 'input_required', not {result_type!r}")
    if result_type == "input_required":
        if method not in methods.INPUT_REQUIRED_METHODS:
            raise _fail(where, f"{method} may not answer input_required")
        _validate(wire26.InputRequiredResult, result, where, "input_required result")
        if "inputRequests" not in result and "requestState" not in result:
            raise _fail(where, "an input_required result needs inputRequests or requestState")
        for key, request in (result.get("inputRequests") or {}).items():
            _adapt(wire26.InputRequest, request, where, f"inputRequests[{key!r}]")
        return
    if method == "subscriptions/listen":
        _validate(wire26.SubscriptionsListenResult, result, where, "listen result")
        return
    if (method, version) not in methods.SERVER_RESULTS:
        raise _fail(where, f"{method!r} has no result in version {version}")
    try:
        methods.parse_server_result(method, version, result)
    except ValidationError as exc:
        raise _fail(where, f"{method} result fails the {version} models: {exc}") from None


def _check_notification(message: dict[str, Any], version: str) -> None:
    if "id" in message:
        raise _fail(message, "our server sends no requests; a message with method must be a notification")
    _validate(wire.JSONRPCNotification, message, message, "notification envelope")
    model = methods.SERVER_NOTIFICATIONS.get((message["method"], version))
    if model is None:
        raise _fail(message, f"{message['method']!r} is not a server notification in {version}")
    _validate(model, message, message, "notification")


def _check_error(message: dict[str, Any]) -> None:
    if message["id"] is not None and not _strict_id(message["id"]):
        raise _fail(message, "an error's id is a string, an integer or null")
    err = message["error"]
    if not isinstance(err, dict) or set(err) - {"code", "message", "data"}:
        raise _fail(message, "error must be an object of code, message and data")
    code = err.get("code")
    if not isinstance(code, int) or isinstance(code, bool):
        raise _fail(message, "error code must be an integer")
    if not isinstance(err.get("message"), str):
        raise _fail(message, "error message must be a string")
    _validate(wire.JSONRPCErrorResponse, message, message, "error envelope")
    _validate(mcp_types.JSONRPCError, message, message, "error envelope")


def _check_result(message: dict[str, Any], method: str | None, version: str) -> None:
    if not _strict_id(message["id"]):
        raise _fail(message, "a result's id is a string or an integer, never null")
    _validate(wire.JSONRPCResultResponse, message, message, "result envelope")
    _validate(mcp_types.JSONRPCResponse, message, message, "result envelope")
    if method is not None:
        validate_result(method, version, message["result"], message)


def _stateless_version(message: dict[str, Any]) -> str | None:
    """The stateless version a request names in ``params._meta`` (None: a handshake-era request)."""
    params = message.get("params")
    meta = params.get("_meta") if isinstance(params, dict) else None
    if message.get("method") == "initialize" or not isinstance(meta, dict) or PROTOCOL_VERSION not in meta:
        return None
    version = meta[PROTOCOL_VERSION]
    # an unsupported or malformed version is still answered under the stateless era's error rules
    return version if version in MODERN_PROTOCOL_VERSIONS else MODERN_PROTOCOL_VERSIONS[-1]


def _is_stream_event(message: dict[str, Any]) -> bool:
    params = message.get("params")
    meta = params.get("_meta") if isinstance(params, dict) else None
    return isinstance(meta, dict) and SUBSCRIPTION_ID in meta


Decode = Callable[[bytes], Any]


class WireChecker:
    """Follows one conversation and validates every server message in context.

    Feed it client-to-server messages with :meth:`client_sent` and
    server-to-client ones with :meth:`server_sent`. It remembers which method
    each pending request id asked for, learns the negotiated version from the
    initialize result, and fails on a reply to nothing or a second reply.
    """

    def __init__(self) -> None:
        self.version: str | None = None
        self.pending: dict[tuple[type, int | str], tuple[str | None, str | None]] = {}
        """Request id -> (the method it asked, its stateless version or None: the negotiated one)."""
        self.answered: set[tuple[type, int | str]] = set()
        self.server_messages: list[dict[str, Any]] = []
        self.kinds: list[Kind] = []

    def client_sent(self, message: object) -> None:
        """Note a client message; one with a readable id (and not a response) awaits a reply."""
        if not isinstance(message, dict) or not _strict_id(message.get("id")):
            return
        method = message.get("method")
        is_response = "method" not in message and ("result" in message or "error" in message)
        if is_response and message.get("jsonrpc") == "2.0":
            return  # a response from the client: nothing comes back
        key = (type(message["id"]), message["id"])
        # a request with a bad envelope is still answered: envelope check only, no method
        self.pending[key] = (method if isinstance(method, str) else None, _stateless_version(message))
        self.answered.discard(key)

    def server_sent(self, message: object) -> Kind:
        method = None
        version = self.version
        if isinstance(message, dict) and "method" not in message and _strict_id(message.get("id")):
            req_id = message["id"]
            key = (type(req_id), req_id)
            if key in self.answered:
                raise _fail(message, f"a second reply to request id {req_id!r}")
            if key not in self.pending:
                raise _fail(message, f"a reply to id {req_id!r}, which no pending request has")
            method, stateless = self.pending.pop(key)
            version = stateless or version
            self.answered.add(key)
        elif isinstance(message, dict) and _is_stream_event(message):
            version = MODERN_PROTOCOL_VERSIONS[-1]
        kind = validate_server_message(message, method=method, version=version)
        if kind == "result" and method == "initialize":
            assert isinstance(message, dict)
            self.version = message["result"]["protocolVersion"]
        assert isinstance(message, dict)
        self.server_messages.append(message)
        self.kinds.append(kind)
        return kind

    def tap(self, decode: Decode) -> Callable[[str, bytes], None]:
        """A tap for :class:`~harness.protocol.InMemoryTransport` that checks each crossing."""

        def on_wire(direction: str, data: bytes) -> None:
            message = decode(data)
            if direction == "c2s":
                self.client_sent(message)
            else:
                self.server_sent(message)

        return on_wire
