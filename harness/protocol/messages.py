"""The three JSON-RPC message shapes, built and told apart by structure.

Rules held here (the reference's "three message shapes"):

* A **request** has an ``id`` that is a string or an integer (never null, never
  a bool or float), a string ``method`` and optional object ``params``.
* A **notification** is a request shape with *no* ``id`` key at all.
  ``"id" not in message`` is the one predicate; ``id: null`` is a present key and
  so makes an *invalid request*, not a notification. :func:`notification` omits
  the key rather than setting it to ``None``.
* A **response** echoes the id and carries ``result`` XOR ``error``.

Messages are plain dicts: whatever crosses a transport has been through JSON.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from harness.protocol.errors import (
    INTERNAL_ERROR,
    METHOD_NOT_FOUND,
    InvalidParams,
    InvalidRequest,
    RPCError,
)

JSONRPC = "2.0"

Message = dict[str, Any]
RequestId = int | str

TOOLS_LIST_CHANGED = "notifications/tools/list_changed"
"""The notification a server sends when its tool list changed (client and server both name it)."""


def request(id: RequestId, method: str, params: dict[str, Any] | None = None) -> Message:
    """A request: demands exactly one reply carrying the same id."""
    msg: Message = {"jsonrpc": JSONRPC, "id": id, "method": method}
    if params is not None:
        msg["params"] = params
    return msg


def notification(method: str, params: dict[str, Any] | None = None) -> Message:
    """A notification: no ``id`` key at all, so the receiver must not reply."""
    msg: Message = {"jsonrpc": JSONRPC, "method": method}
    if params is not None:
        msg["params"] = params
    return msg


def response(id: RequestId | None, result: dict[str, Any]) -> Message:
    """A success response echoing ``id``."""
    return {"jsonrpc": JSONRPC, "id": id, "result": result}


def error_response(id: RequestId | None, code: int, message: str, data: Any = None) -> Message:
    """An error response; ``id`` is None when the request's id could not be read."""
    err: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        err["data"] = data
    return {"jsonrpc": JSONRPC, "id": id, "error": err}


def answer_request(handler: Callable[[Message], Message] | None, request: Message) -> Message:
    """A client's response to a server-to-client ``request``, whatever ``handler`` does.

    ``handler(request)`` when there is one (every transport's ``on_request``); with
    none, ``ping`` gets ``{}`` and anything else -32601. A handler that raises
    :class:`RPCError` answers with its code and data; any other exception, -32603.
    """
    rid = request.get("id")
    try:
        if handler is not None:
            return handler(request)
        if request.get("method") == "ping":
            return response(rid, {})
        return error_response(rid, METHOD_NOT_FOUND, f"client does not support {request.get('method')}")
    except RPCError as exc:
        return error_response(rid, exc.code, exc.message, exc.data)
    except Exception as exc:
        return error_response(rid, INTERNAL_ERROR, f"client handler: {type(exc).__name__}: {exc}")


def is_notification(message: Message) -> bool:
    """The fork in the state machine: no ``id`` key (a null id does not count)."""
    return "id" not in message


def is_valid_id(value: object) -> bool:
    """Request ids are strings or integers; bool is excluded although it is an int."""
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def is_response(message: Message) -> bool:
    """A response: no method, and a result or an error."""
    return "method" not in message and ("result" in message or "error" in message)


def reply_id(message: object) -> RequestId | None:
    """The id an error reply to ``message`` should carry: its own if valid, else null."""
    if isinstance(message, dict):
        value = message.get("id")
        if isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool)):
            return value
    return None


def check_envelope(message: object) -> None:
    """Raise the right :class:`RPCError` if ``message`` is not a valid request or notification.

    Order matters and is pinned by tests: object shape, then ``jsonrpc``, then
    ``method``, then ``id``, then ``params``.
    """
    if not isinstance(message, dict):
        raise InvalidRequest("a JSON-RPC message must be an object")
    if message.get("jsonrpc") != JSONRPC:
        raise InvalidRequest('jsonrpc must be exactly "2.0"')
    method = message.get("method")
    if not isinstance(method, str):
        raise InvalidRequest("method must be a string")
    if "id" in message and not is_valid_id(message["id"]):
        raise InvalidRequest("id must be a string or an integer (null is not allowed)")
    if "params" in message:
        params = message["params"]
        if isinstance(params, list):
            raise InvalidParams("params must be an object (MCP uses named params)")
        if not isinstance(params, dict):
            raise InvalidRequest("params must be an object")


def check_response(message: Message) -> None:
    """Raise if a received response breaks the result-XOR-error rule."""
    has_result, has_error = "result" in message, "error" in message
    if has_result == has_error:
        raise InvalidRequest("a response carries exactly one of result and error")
    if has_error:
        err = message["error"]
        if (
            not isinstance(err, dict)
            or not isinstance(err.get("code"), int)
            or not isinstance(err.get("message"), str)
        ):
            raise InvalidRequest("error must be an object with an integer code and a string message")
