"""The public API of harness.protocol: the names and signatures issue 3 promises outside users."""

from __future__ import annotations

import inspect
import subprocess
import sys

import pytest

import harness.protocol as protocol

PROMISED = [
    "request", "response", "error_response", "notification",
    "PARSE_ERROR", "INVALID_REQUEST", "METHOD_NOT_FOUND", "INVALID_PARAMS", "INTERNAL_ERROR",
    "RPCError", "MCPServer", "MCPClient", "InMemoryTransport", "ServerCrashed",
]  # fmt: skip


@pytest.mark.parametrize("name", PROMISED)
def test_promised_name_is_importable_and_exported(name: str) -> None:
    assert name in protocol.__all__
    assert getattr(protocol, name) is not None


def test_stdio_transport_still_resolves_from_the_core_but_warns_that_it_moved() -> None:
    # Issue 3 promised harness.protocol.StdioTransport; the core no longer imports a transport
    # (issue 16), so the old name is a deprecated alias looked up on first use.
    from harness.transports import StdioTransport

    with pytest.warns(DeprecationWarning, match="harness.transports"):
        alias = protocol.StdioTransport
    assert alias is StdioTransport
    assert "StdioTransport" not in protocol.__all__


def _isort_key(name: str) -> tuple[int, str]:
    # ruff's RUF022 order: CONSTANTS, then Classes, then functions, each alphabetical
    return (0 if name.isupper() else 1 if name[0].isupper() else 2, name)


def test_all_is_sorted_and_complete() -> None:
    assert protocol.__all__ == sorted(protocol.__all__, key=_isort_key)
    for name in protocol.__all__:
        getattr(protocol, name)


def _params(fn: object) -> list[tuple[str, object, inspect._ParameterKind]]:
    sig = inspect.signature(fn)  # type: ignore[arg-type]
    return [(p.name, p.default, p.kind) for p in sig.parameters.values()]


KW = inspect.Parameter.KEYWORD_ONLY
POS = inspect.Parameter.POSITIONAL_OR_KEYWORD
EMPTY = inspect.Parameter.empty


def test_mcp_server_signature() -> None:
    params = _params(protocol.MCPServer)
    assert params[:4] == [
        ("name", EMPTY, POS),
        ("version", "0", POS),
        ("allowed_tools", None, KW),
        ("tool_errors", "is_error", KW),
    ]


def test_add_tool_and_remove_tool_signatures() -> None:
    assert _params(protocol.MCPServer.add_tool)[1:6] == [
        ("name", EMPTY, POS),
        ("fn", EMPTY, POS),
        ("input_schema", None, POS),
        ("description", "", POS),
        ("notify", False, POS),
    ]
    assert _params(protocol.MCPServer.remove_tool)[1:] == [("name", EMPTY, POS), ("notify", True, POS)]


def test_rpc_error_signature() -> None:
    assert _params(protocol.RPCError)[:3] == [
        ("code", EMPTY, POS),
        ("message", EMPTY, POS),
        ("data", None, POS),
    ]


def test_importing_the_package_does_not_import_the_stdio_transport() -> None:
    code = "import sys, harness.protocol; print('harness.transports.stdio' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"
