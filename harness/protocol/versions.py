"""Protocol versions this server speaks, and how one is chosen.

Rule (spec, lifecycle): a server that supports the requested version echoes it;
otherwise it answers the latest version it supports, and a client that cannot
use that answer disconnects. The 2026-07-28 stateless revision has no handshake
and is not offered here.
"""

from __future__ import annotations

SUPPORTED_VERSIONS: tuple[str, ...] = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
"""Handshake-era revisions, oldest to newest."""

LATEST_VERSION = SUPPORTED_VERSIONS[-1]

SEP_1303_VERSION = "2025-11-25"
"""From this revision on, invalid tool arguments are tool execution errors (isError)."""


def negotiate(requested: object) -> str:
    """The version the server answers to an ``initialize`` asking for ``requested``."""
    if isinstance(requested, str) and requested in SUPPORTED_VERSIONS:
        return requested
    return LATEST_VERSION


def at_least(version: str, floor: str) -> bool:
    """Whether ``version`` is ``floor`` or newer, by position in the known list."""
    return SUPPORTED_VERSIONS.index(version) >= SUPPORTED_VERSIONS.index(floor)
