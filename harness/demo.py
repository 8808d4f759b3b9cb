"""The reference lab as a server: the tools the deep dive's worked trace uses.

* ``add(x, y)`` -- integers in, their sum out.
* ``weather(city)`` -- a fixed table; an unknown city raises
  ``ValueError("no station near <city>")``, the failure every strategy encodes.
* ``delete_db()`` -- present in tools/list but not allow-listed: -32600.
* ``subtract(x, y)`` -- registered mid-session by :func:`add_subtract` with
  ``notify=True``, to show ``listChanged``.

Deterministic: no clock, no randomness.
"""

from __future__ import annotations

from harness.protocol.server import MCPServer

STATIONS: dict[str, str] = {
    "Oslo": "Oslo: 4°C, light rain",
    "Paris": "Paris: 11°C, cloudy",
    "Lima": "Lima: 19°C, overcast",
    "Tokyo": "Tokyo: 14°C, clear",
}

_INTS = {"x": {"type": "integer"}, "y": {"type": "integer"}}
ADD_SCHEMA = {"type": "object", "properties": _INTS, "required": ["x", "y"]}
WEATHER_SCHEMA = {
    "type": "object",
    "properties": {"city": {"type": "string", "description": "City name, e.g. Oslo"}},
    "required": ["city"],
}


def add(x: int, y: int) -> str:
    return str(x + y)


def subtract(x: int, y: int) -> str:
    return str(x - y)


def weather(city: str) -> str:
    report = STATIONS.get(city)
    if report is None:
        raise ValueError(f"no station near {city}")
    return report


def delete_db() -> str:
    # Never reachable through tools/call: the allow-list stops it before it runs.
    raise AssertionError("delete_db must never execute")


def build_demo_server(strategy: str = "is_error", *, page_size: int | None = None) -> MCPServer:
    """The lab server with ``tool_errors=strategy``."""
    server = MCPServer(
        "harness-demo",
        "0.1.0",
        allowed_tools=["add", "subtract", "weather"],
        tool_errors=strategy,
        page_size=page_size,
    )
    server.add_tool("add", add, ADD_SCHEMA, "Add two integers.")
    server.add_tool("weather", weather, WEATHER_SCHEMA, "Current weather for a city with a station.")
    server.add_tool("delete_db", delete_db, {"type": "object", "properties": {}}, "Drop the database.")
    server.add_resource(
        "lab://readme", "readme", text="The harness demo lab.", description="What this server is"
    )
    server.add_prompt("greet", "Say hello to {name}.", "Greet someone by name")
    return server


def add_subtract(server: MCPServer) -> None:
    """Register ``subtract`` with notify=True (queues tools/list_changed when live)."""
    server.add_tool("subtract", subtract, ADD_SCHEMA, "Subtract y from x.", notify=True)
