"""JSON-RPC error codes and the exception hierarchy that carries them.

Like h11's ``ProtocolError`` carrying the status to answer with, every
:class:`RPCError` carries the JSON-RPC code the server answers with. Raising one
anywhere inside a handler produces exactly that error response; any other
exception becomes ``INTERNAL_ERROR`` (the three-tier dispatch in the server)::

    RPCError(code, message, data=None)
    ├── ParseError           -32700  the bytes were not JSON (transport edge; id null)
    ├── InvalidRequest       -32600  not a valid request object, or a policy rejection
    ├── MethodNotFound       -32601  unknown method, or unknown tool name
    ├── InvalidParams        -32602  method exists, params are wrong
    ├── InternalError        -32603  a handler raised something unintended
    ├── ResourceNotFound     -32002  MCP's code for resources/read of an unknown URI (handshake era)
    ├── MissingClientCapability     -32021  a tool needs input the client declared no capability for
    └── UnsupportedProtocolVersion  -32022  a stateless request names a version this server does not speak

``ServerCrashed`` is not an RPC error: it is what a transport raises when the
server side died (the ``escape`` strategy), so no reply will ever come.
"""

from __future__ import annotations

from typing import Any, ClassVar

PARSE_ERROR = -32700
"""Invalid JSON was received; raised at the transport edge, answered with id null."""
INVALID_REQUEST = -32600
"""Not a valid request object; also jsonrpc != "2.0" and any call before the handshake."""
METHOD_NOT_FOUND = -32601
"""The method does not exist; also tools/call of an unknown tool name."""
INVALID_PARAMS = -32602
"""Wrong params: a missing required tool argument, a missing prompt variable, a bad cursor."""
INTERNAL_ERROR = -32603
"""An unhandled exception inside a handler, converted instead of propagated."""
RESOURCE_NOT_FOUND = -32002
"""MCP-specific: resources/read of a URI the server does not have (spec, not the reference)."""
MISSING_REQUIRED_CLIENT_CAPABILITY = -32021
"""MCP 2026-07-28: serving the request needs a client capability it did not declare."""
UNSUPPORTED_PROTOCOL_VERSION = -32022
"""MCP 2026-07-28: the request's ``_meta`` protocol version is not one this server speaks."""

STANDARD_CODES: tuple[int, ...] = (
    PARSE_ERROR,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    INVALID_PARAMS,
    INTERNAL_ERROR,
)
"""The five JSON-RPC codes the reference maps MCP conditions onto."""

CODE_NAMES: dict[int, str] = {
    PARSE_ERROR: "parse_error",
    INVALID_REQUEST: "invalid_request",
    METHOD_NOT_FOUND: "method_not_found",
    INVALID_PARAMS: "invalid_params",
    INTERNAL_ERROR: "internal_error",
    RESOURCE_NOT_FOUND: "resource_not_found",
    MISSING_REQUIRED_CLIENT_CAPABILITY: "missing_required_client_capability",
    UNSUPPORTED_PROTOCOL_VERSION: "unsupported_protocol_version",
}


class RPCError(Exception):
    """A deliberate, coded protocol error; the server answers with exactly this code."""

    default_code: ClassVar[int] = INTERNAL_ERROR

    def __init__(self, code: int | None, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code: int = self.default_code if code is None else code
        self.message = message
        self.data = data

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.code}, {self.message!r})"

    def to_error(self) -> dict[str, Any]:
        """The JSON-RPC ``error`` member for this exception."""
        err: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.data is not None:
            err["data"] = self.data
        return err

    @classmethod
    def from_error(cls, error: dict[str, Any]) -> RPCError:
        """Rebuild the exception a client raises from a received ``error`` member."""
        code = error.get("code")
        message = error.get("message")
        sub = _BY_CODE.get(code) if isinstance(code, int) else None
        text = message if isinstance(message, str) else repr(message)
        if sub is None:
            return RPCError(code if isinstance(code, int) else INTERNAL_ERROR, text, error.get("data"))
        return sub(text, error.get("data"))


class _Coded(RPCError):
    def __init__(self, message: str, data: Any = None) -> None:
        super().__init__(self.default_code, message, data)


class ParseError(_Coded):
    """-32700: the bytes were not valid JSON."""

    default_code = PARSE_ERROR


class InvalidRequest(_Coded):
    """-32600: not a valid request object, or a protocol-policy rejection."""

    default_code = INVALID_REQUEST


class MethodNotFound(_Coded):
    """-32601: unknown method or unknown tool."""

    default_code = METHOD_NOT_FOUND


class InvalidParams(_Coded):
    """-32602: the method exists but its params are wrong."""

    default_code = INVALID_PARAMS


class InternalError(_Coded):
    """-32603: something inside a handler failed unintentionally."""

    default_code = INTERNAL_ERROR


class ResourceNotFound(_Coded):
    """-32002: resources/read of an unknown URI."""

    default_code = RESOURCE_NOT_FOUND


class MissingClientCapability(_Coded):
    """-32021: the request needs a capability (elicitation, sampling, roots) the client did not declare.

    ``data`` is ``{"requiredCapabilities": {...}}``, the capabilities that were missing.
    """

    default_code = MISSING_REQUIRED_CLIENT_CAPABILITY


class UnsupportedProtocolVersion(_Coded):
    """-32022: a stateless request names a version this server does not speak.

    ``data`` is ``{"supported": [...], "requested": "..."}``, the supported versions newest first.
    """

    default_code = UNSUPPORTED_PROTOCOL_VERSION


_BY_CODE: dict[int, type[_Coded]] = {
    sub.default_code: sub
    for sub in (
        ParseError,
        InvalidRequest,
        MethodNotFound,
        InvalidParams,
        InternalError,
        ResourceNotFound,
        MissingClientCapability,
        UnsupportedProtocolVersion,
    )
}


class ServerCrashed(Exception):
    """The server side died (an exception escaped ``handle``); no reply will come."""


class TransportError(Exception):
    """The transport failed: the peer exited, timed out, or sent something unusable."""
