"""Transports: thin adapters that move bytes to and from the sans-IO core.

* :class:`harness.protocol.InMemoryTransport` -- in process, through a codec.
* :mod:`harness.transports.stdio` -- newline-delimited JSON over a child's pipes
  (:class:`StdioTransport` for a client, :func:`serve_stdio` for a server).
* :mod:`harness.transports.http` -- the Streamable HTTP server (starlette +
  uvicorn): :class:`StreamableHTTP`, :func:`serve_http`.
* :mod:`harness.transports.http_client` -- the Streamable HTTP client (httpx):
  :class:`HTTPClientTransport`.

The HTTP names load their module on first use, so that code that never speaks
HTTP never imports starlette or httpx.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from harness.transports.stdio import StdioTransport, serve_stdio

if TYPE_CHECKING:
    from harness.transports.http import StreamableHTTP, serve_http
    from harness.transports.http_client import HTTPClientTransport

_LAZY = {
    "HTTPClientTransport": "harness.transports.http_client",
    "StreamableHTTP": "harness.transports.http",
    "serve_http": "harness.transports.http",
}

__all__ = ["HTTPClientTransport", "StdioTransport", "StreamableHTTP", "serve_http", "serve_stdio"]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'harness.transports' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
