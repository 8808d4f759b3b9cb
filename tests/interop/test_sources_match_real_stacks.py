"""The real sources write what the real stacks write, byte for byte.

``harness.faults.sources`` makes a fault's text by running pydantic, jsonschema and httpx on the
actual call and wrapping the result as a stack does. Here the real stacks run on the same tool
signature and the same call: the official SDK 2.x ``MCPServer`` and FastMCP 4, serving tools
written as a Python author would write them (the constraint in an ``Annotated`` ``Field``), and
tools that raise the very ``httpx`` exceptions the sources construct. The texts must be equal.
The 1.x low-level server is not installed beside 2.x; its source is ``jsonschema.validate``'s
own message after the wrapper that server writes, checked against the library here.
"""

# No ``from __future__ import annotations``: the servers read the tools' annotations at runtime.
from typing import Annotated, Any

import anyio
import httpx
import jsonschema
import pytest
from pydantic import Field

from harness.faults.sources import (
    SOURCES,
    Source,
    argument_text,
    constrained_schema,
    upstream_exception,
    upstream_text,
)
from harness.sim.catalogue import CATALOGUE

pytestmark = pytest.mark.interop

ISO = r"^\d{4}-\d{2}-\d{2}$"

ARGUMENT_CASES: list[tuple[str, dict[str, Any], dict[str, Any]]] = [
    # (tool, the rule's constraint, the call's arguments)
    ("book", {"valid": "2025-03-14"}, {"item": "table", "date": "14/3/2025"}),
    ("book", {"valid": "2025-03-14"}, {"item": "table"}),
    ("search", {"maximum": 5}, {"query": "mcp", "limit": 20}),
    ("search", {"maximum": 5}, {"query": "mcp", "limit": "many"}),
    ("convert", {"valid": "NOK"}, {"amount": 20, "source": "nok", "target": "USD"}),
    ("weather", {"valid": "Oslo"}, {"city": "oslo"}),
]

UPSTREAM_CASES = ["transient", "rate_limited", "timeout", "futile_outage", "post_commit", "permanent"]


def _register(app: Any, limit_max: int) -> None:
    """The catalogue tools as a Python author writes them, with the constraints the rules declare."""

    @app.tool()
    def book(item: str, date: Annotated[str, Field(pattern=ISO)]) -> str:
        return "ok"

    @app.tool()
    def search(query: str, limit: Annotated[int, Field(le=limit_max, ge=1)] = 20) -> str:
        return "ok"

    @app.tool()
    def convert(amount: float, source: Annotated[str, Field(pattern=r"^[A-Z]{3}$")], target: str) -> str:
        return "ok"

    @app.tool()
    def weather(city: Annotated[str, Field(pattern=r"^[A-Z][a-z]+(?: [A-Z][a-z]+)*$")]) -> str:
        return "ok"

    for kind in UPSTREAM_CASES:
        app.tool(name=f"weather_{kind}")(_failing(kind))


def _failing(kind: str) -> Any:
    """A tool whose upstream call fails as a fault of ``kind`` makes it fail."""

    def fails(city: str) -> str:
        raise upstream_exception(kind, f"weather_{kind}", {"city": city}, 5.0)

    return fails


def _real_texts(stack: str) -> dict[tuple[str, str], str]:
    """What ``stack`` answers each case with: (tool, arguments json) -> text."""
    out: dict[tuple[str, str], str] = {}
    calls = [(tool, args) for tool, _, args in ARGUMENT_CASES] + [
        (f"weather_{kind}", {"city": "Oslo"}) for kind in UPSTREAM_CASES
    ]

    async def run() -> None:
        if stack == "pydantic":
            from mcp import Client
            from mcp.server.mcpserver import MCPServer

            app: Any = MCPServer("t")
            _register(app, 5)
            async with Client(app) as client:
                for tool, args in calls:
                    result = await client.call_tool(tool, args)
                    assert result.is_error if hasattr(result, "is_error") else result.isError
                    out[(tool, repr(args))] = result.content[0].text
        else:
            from fastmcp import Client as FastClient
            from fastmcp import FastMCP

            app = FastMCP("t")
            _register(app, 5)
            async with FastClient(app) as client:
                for tool, args in calls:
                    result = await client.call_tool(tool, args, raise_on_error=False)
                    assert result.is_error
                    out[(tool, repr(args))] = result.content[0].text

    anyio.run(run)
    return out


def _ours(source: Source) -> dict[tuple[str, str], str]:
    out: dict[tuple[str, str], str] = {}
    for tool, constraint, args in ARGUMENT_CASES:
        argument = (
            "limit"
            if "maximum" in constraint
            else next(k for k in ("date", "source", "city") if k in CATALOGUE[tool].schema["properties"])
        )
        schema = constrained_schema(CATALOGUE[tool].schema, argument, **constraint)
        text = argument_text(source, tool, schema, args)
        assert text is not None, (tool, args)
        out[(tool, repr(args))] = text
    for kind in UPSTREAM_CASES:
        out[(f"weather_{kind}", repr({"city": "Oslo"}))] = upstream_text(
            source, kind, f"weather_{kind}", {"city": "Oslo"}, 5.0
        )
    return out


@pytest.mark.parametrize("stack", ["pydantic", "fastmcp"])
def test_a_real_source_writes_what_its_stack_writes(stack: str) -> None:
    source = SOURCES[stack]
    assert source is not None
    real, ours = _real_texts(stack), _ours(source)
    assert real.keys() == ours.keys()
    for key, text in real.items():
        assert ours[key] == text, key


def test_the_jsonschema_source_is_the_validate_message_after_the_low_level_wrapper() -> None:
    source = SOURCES["jsonschema"]
    assert source is not None
    for tool, constraint, args in ARGUMENT_CASES:
        argument = (
            "limit"
            if "maximum" in constraint
            else next(k for k in ("date", "source", "city") if k in CATALOGUE[tool].schema["properties"])
        )
        schema = constrained_schema(CATALOGUE[tool].schema, argument, **constraint)
        with pytest.raises(jsonschema.ValidationError) as raised:
            jsonschema.validate(instance=args, schema=schema)
        assert argument_text(source, tool, schema, args) == f"Input validation error: {raised.value.message}"
    for kind in UPSTREAM_CASES:
        exc = upstream_exception(kind, "weather", {"city": "Oslo"}, 5.0)
        assert isinstance(exc, httpx.HTTPError)
        assert upstream_text(source, kind, "weather", {"city": "Oslo"}, 5.0) == str(exc)
