"""The MCP protocol core, sans-IO in the manner of h11.

Nothing in this package reads or writes a socket, a pipe or a file: the server
is ``MCPServer.handle(message) -> reply | None`` over plain dicts, and
transports (in-memory here; stdio and HTTP in :mod:`harness.transports`) are thin
adapters around it. The rules it follows are stated in ``docs/protocol.md``;
where they are silent, the current MCP specification.

The public API is named once, here. No module of this package imports a transport
or this package face. ``harness.protocol.StdioTransport`` still resolves, for code
written against earlier releases, but warns: it lives in :mod:`harness.transports`.
"""

import importlib
import warnings
from typing import Any

from harness.protocol.client import MCPClient, Transport
from harness.protocol.codecs import CODECS, Codec, available_codecs, compact_text, get_codec
from harness.protocol.errors import (
    CODE_NAMES,
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    MISSING_REQUIRED_CLIENT_CAPABILITY,
    PARSE_ERROR,
    RESOURCE_NOT_FOUND,
    UNSUPPORTED_PROTOCOL_VERSION,
    InternalError,
    InvalidParams,
    InvalidRequest,
    MethodNotFound,
    MissingClientCapability,
    ParseError,
    ResourceNotFound,
    RPCError,
    ServerCrashed,
    TransportError,
    UnsupportedProtocolVersion,
)
from harness.protocol.inputs import (
    InputRefused,
    InputRequest,
    InputRequired,
    ask,
    ask_all,
    elicit,
    list_roots,
    sample,
)
from harness.protocol.lifecycle import State
from harness.protocol.memory import InMemoryTransport
from harness.protocol.messages import (
    error_response,
    is_notification,
    notification,
    request,
    response,
)
from harness.protocol.server import MCPServer
from harness.protocol.strategies import STRATEGIES, TOOL_ERROR_STRATEGIES
from harness.protocol.versions import (
    ALL_VERSIONS,
    LATEST_VERSION,
    STATELESS_VERSION,
    STATELESS_VERSIONS,
    SUPPORTED_VERSIONS,
    is_stateless,
    negotiate,
)

__all__ = [
    "ALL_VERSIONS",
    "CODECS",
    "CODE_NAMES",
    "INTERNAL_ERROR",
    "INVALID_PARAMS",
    "INVALID_REQUEST",
    "LATEST_VERSION",
    "METHOD_NOT_FOUND",
    "MISSING_REQUIRED_CLIENT_CAPABILITY",
    "PARSE_ERROR",
    "RESOURCE_NOT_FOUND",
    "STATELESS_VERSION",
    "STATELESS_VERSIONS",
    "STRATEGIES",
    "SUPPORTED_VERSIONS",
    "TOOL_ERROR_STRATEGIES",
    "UNSUPPORTED_PROTOCOL_VERSION",
    "Codec",
    "InMemoryTransport",
    "InputRefused",
    "InputRequest",
    "InputRequired",
    "InternalError",
    "InvalidParams",
    "InvalidRequest",
    "MCPClient",
    "MCPServer",
    "MethodNotFound",
    "MissingClientCapability",
    "ParseError",
    "RPCError",
    "ResourceNotFound",
    "ServerCrashed",
    "State",
    "Transport",
    "TransportError",
    "UnsupportedProtocolVersion",
    "ask",
    "ask_all",
    "available_codecs",
    "compact_text",
    "elicit",
    "error_response",
    "get_codec",
    "is_notification",
    "is_stateless",
    "list_roots",
    "negotiate",
    "notification",
    "request",
    "response",
    "sample",
]


def __getattr__(name: str) -> Any:
    if name == "StdioTransport":  # a deprecated alias, looked up by name: the core imports no transport
        warnings.warn(
            "harness.protocol.StdioTransport moved: import it from harness.transports",
            DeprecationWarning,
            stacklevel=2,
        )
        return importlib.import_module("harness.transports.stdio").StdioTransport
    raise AttributeError(f"module 'harness.protocol' has no attribute {name!r}")
