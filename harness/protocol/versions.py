"""Protocol versions this server speaks, and how one is chosen.

Rule (spec, lifecycle): a server that supports the requested version echoes it;
otherwise it answers the latest version it supports, and a client that cannot
use that answer disconnects.

Two eras share these names. The handshake era (2024-11-05 ... 2025-11-25)
negotiates one version per connection in ``initialize``; the stateless era
(2026-07-28 on) has no handshake: every request names its own version in
``params._meta`` (:data:`META_PROTOCOL_VERSION`) and a client learns what a
server speaks from ``server/discover``.
"""

from __future__ import annotations

SUPPORTED_VERSIONS: tuple[str, ...] = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
"""Handshake-era revisions, oldest to newest."""

LATEST_VERSION = SUPPORTED_VERSIONS[-1]

STATELESS_VERSION = "2026-07-28"
"""The first stateless revision: no ``initialize``, per-request ``_meta``, ``server/discover``, MRTR."""

STATELESS_VERSIONS: tuple[str, ...] = (STATELESS_VERSION,)
"""Stateless-era revisions, oldest to newest."""

ALL_VERSIONS: tuple[str, ...] = SUPPORTED_VERSIONS + STATELESS_VERSIONS
"""Every revision, oldest to newest (``at_least`` orders by this)."""

META_PROTOCOL_VERSION = "io.modelcontextprotocol/protocolVersion"
META_CLIENT_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"
META_CLIENT_INFO = "io.modelcontextprotocol/clientInfo"
"""The ``params._meta`` keys every stateless-era request carries (the last is optional)."""

SEP_1303_VERSION = "2025-11-25"
"""From this revision on, invalid tool arguments are tool execution errors (isError)."""


def negotiate(requested: object) -> str:
    """The version the server answers to an ``initialize`` asking for ``requested``."""
    if isinstance(requested, str) and requested in SUPPORTED_VERSIONS:
        return requested
    return LATEST_VERSION


def at_least(version: str, floor: str) -> bool:
    """Whether ``version`` is ``floor`` or newer, by position in the known list."""
    return ALL_VERSIONS.index(version) >= ALL_VERSIONS.index(floor)


def is_stateless(version: object) -> bool:
    """Whether ``version`` is a stateless-era revision (no handshake, ``_meta`` on every request)."""
    return isinstance(version, str) and version in STATELESS_VERSIONS
