"""Transports: thin adapters that move bytes to and from the sans-IO core.

* :class:`harness.protocol.InMemoryTransport` -- in process, through a codec.
* :mod:`harness.transports.stdio` -- newline-delimited JSON over a child's pipes.
* :mod:`harness.transports.http` -- Streamable HTTP (starlette + uvicorn).
"""
