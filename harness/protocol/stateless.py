"""The stateless era (2026-07-28): reading a request's ``_meta`` envelope, and listen streams.

A request is stateless when ``params._meta`` carries
``io.modelcontextprotocol/protocolVersion`` (the key alone decides, so a
half-built envelope still gets the stateless era's error). The envelope is
checked in this order, the first failure answering:

==============================================  =======  =========================================
envelope                                        code     why
==============================================  =======  =========================================
``clientCapabilities`` key missing              -32602   every request must carry it
protocol version not a string                   -32602   a malformed envelope, not a negotiation
protocol version not one this server speaks     -32022   ``data``: supported (newest first), requested
``clientCapabilities`` or ``clientInfo`` not    -32602   they are objects (``clientInfo`` optional)
an object
==============================================  =======  =========================================

Nothing is remembered between requests: :class:`StatelessRequest` is built from
the envelope alone and lives for one ``handle`` call. A listen stream
(``subscriptions/listen``) is the one thing that outlives its request, and it is
scoped to the request's id (:class:`Listener`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from harness.protocol.errors import InvalidParams, UnsupportedProtocolVersion
from harness.protocol.messages import RequestId
from harness.protocol.versions import (
    ALL_VERSIONS,
    META_CLIENT_CAPABILITIES,
    META_CLIENT_INFO,
    META_PROTOCOL_VERSION,
    STATELESS_VERSIONS,
)

SERVER_INFO = "io.modelcontextprotocol/serverInfo"
"""The result ``_meta`` key naming the server (the spec's SHOULD on every stateless result)."""
LOG_LEVEL = "io.modelcontextprotocol/logLevel"
"""The request ``_meta`` key opting one stateless request into ``notifications/message`` (absent: none)."""
SUBSCRIPTION_ID = "io.modelcontextprotocol/subscriptionId"
"""The ``_meta`` key tying a listen stream's notifications (and its final result) to its request id."""
LISTEN = "subscriptions/listen"
ACKNOWLEDGED = "notifications/subscriptions/acknowledged"
CANCELLED = "notifications/cancelled"

CACHE_SCOPES = ("private", "public")

SUPPORTED_NEWEST_FIRST: list[str] = list(reversed(ALL_VERSIONS))
"""What ``server/discover`` and -32022 name: every version this server speaks, newest first."""


@dataclass(slots=True)
class StatelessRequest:
    """What one stateless request says about itself: its version, client and capabilities."""

    id: RequestId
    version: str
    capabilities: dict[str, Any]
    client_info: dict[str, Any] | None


def read_envelope(request_id: RequestId, meta: dict[str, Any]) -> StatelessRequest:
    """Check a stateless request's ``_meta`` (the table above); the request, or the error to answer."""
    if META_CLIENT_CAPABILITIES not in meta:
        raise InvalidParams(f"params._meta is missing the required key {META_CLIENT_CAPABILITIES!r}")
    version = meta[META_PROTOCOL_VERSION]
    if not isinstance(version, str):
        raise InvalidParams(f"params._meta {META_PROTOCOL_VERSION!r} must be a string")
    if version not in STATELESS_VERSIONS:
        raise UnsupportedProtocolVersion(
            f"unsupported protocol version {version!r}; this server speaks "
            f"{', '.join(SUPPORTED_NEWEST_FIRST)} (the handshake versions through initialize)",
            {"supported": list(SUPPORTED_NEWEST_FIRST), "requested": version},
        )
    caps = meta[META_CLIENT_CAPABILITIES]
    if not isinstance(caps, dict):
        raise InvalidParams(f"params._meta {META_CLIENT_CAPABILITIES!r} must be an object")
    info = meta.get(META_CLIENT_INFO)
    if info is not None and not isinstance(info, dict):
        raise InvalidParams(f"params._meta {META_CLIENT_INFO!r} must be an object")
    return StatelessRequest(request_id, version, caps, info)


@dataclass(frozen=True)
class Listener:
    """One open ``subscriptions/listen`` stream: which events it asked for and the server honours."""

    id: RequestId
    tools: bool
    uris: frozenset[str]

    @classmethod
    def from_params(cls, request_id: RequestId, params: dict[str, Any]) -> Listener:
        """The stream a listen request opens; -32602 for a filter that is not an object."""
        wanted = params.get("notifications")
        if not isinstance(wanted, dict):
            raise InvalidParams("subscriptions/listen needs a notifications object")
        uris = wanted.get("resourceSubscriptions") or []
        if not isinstance(uris, list) or not all(isinstance(u, str) for u in uris):
            raise InvalidParams("resourceSubscriptions must be a list of URIs")
        return cls(request_id, wanted.get("toolsListChanged") is True, frozenset(uris))

    @property
    def meta(self) -> dict[str, Any]:
        return {SUBSCRIPTION_ID: self.id}

    def honoured(self) -> dict[str, Any]:
        """The acknowledged filter: the kinds this server emits (prompt and resource lists never change)."""
        out: dict[str, Any] = {}
        if self.tools:
            out["toolsListChanged"] = True
        if self.uris:
            out["resourceSubscriptions"] = sorted(self.uris)
        return out

    def event(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        """A notification of this stream, stamped with its subscription id."""
        return {"jsonrpc": "2.0", "method": method, "params": {**(params or {}), "_meta": self.meta}}
