"""Transports: thin adapters that move bytes to and from the sans-IO core.

* :class:`harness.protocol.InMemoryTransport` -- in process, through a codec.
* :mod:`harness.transports.stdio` -- newline-delimited JSON over a child's pipes
  (:class:`StdioTransport` for a client, :func:`serve_stdio` for a server).
* :mod:`harness.transports.http` -- Streamable HTTP (starlette + uvicorn): imported
  from its module, so that code that never serves HTTP never loads starlette.
"""

from harness.transports.stdio import StdioTransport, serve_stdio

__all__ = ["StdioTransport", "serve_stdio"]
