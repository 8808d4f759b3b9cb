"""Version negotiation: echo a supported version, else answer the latest."""

from __future__ import annotations

from typing import Any

import pytest
from helpers.pair import ClientServerPair, result_of
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS

from harness.protocol import LATEST_VERSION, SUPPORTED_VERSIONS, negotiate


def test_we_support_exactly_the_handshake_era_versions_of_the_official_sdk() -> None:
    assert SUPPORTED_VERSIONS == HANDSHAKE_PROTOCOL_VERSIONS
    assert LATEST_VERSION == "2025-11-25"


@pytest.mark.parametrize("version", SUPPORTED_VERSIONS, ids=[f"{v} is echoed" for v in SUPPORTED_VERSIONS])
def test_a_supported_version_is_echoed(version: str) -> None:
    pair = ClientServerPair(protocol_version=version)
    assert pair.client.protocol_version == version
    assert pair.server.protocol_version == version
    assert pair.checker.version == version  # later replies were validated for this version


UNSUPPORTED: list[tuple[str, Any]] = [
    ("the stateless 2026-07-28 revision", "2026-07-28"),
    ("a future date", "2099-01-01"),
    ("an unknown draft name", "DRAFT-2026-v1"),
    ("a date before the first release", "2024-01-01"),
]


@pytest.mark.parametrize(
    "requested", [u[1] for u in UNSUPPORTED], ids=[f"{u[0]} gets the latest" for u in UNSUPPORTED]
)
def test_an_unsupported_version_gets_the_latest(requested: str) -> None:
    pair = ClientServerPair(handshake=False)
    params = {"protocolVersion": requested, "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}}
    assert result_of(pair.request(1, "initialize", params))["protocolVersion"] == LATEST_VERSION


@pytest.mark.parametrize(
    ("requested", "answer"),
    [(None, LATEST_VERSION), (20251125, LATEST_VERSION), ("2025-06-18", "2025-06-18")],
    ids=["None gets the latest", "a number gets the latest", "a supported string is echoed"],
)
def test_negotiate(requested: object, answer: str) -> None:
    assert negotiate(requested) == answer


def test_initialize_result_declares_capabilities_and_server_info(fresh_pair: ClientServerPair) -> None:
    params = {
        "protocolVersion": "2025-06-18",
        "capabilities": {"elicitation": {}},
        "clientInfo": {"name": "c"},
    }
    result = result_of(fresh_pair.request(1, "initialize", params))
    assert result["capabilities"]["tools"] == {"listChanged": True}
    assert "resources" in result["capabilities"] and "prompts" in result["capabilities"]
    assert result["serverInfo"] == {"name": "harness-demo", "version": "0.1.0"}
    assert fresh_pair.server.client_capabilities == {"elicitation": {}}
    assert fresh_pair.server.client_info == {"name": "c"}
