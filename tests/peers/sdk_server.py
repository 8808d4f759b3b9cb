"""A small MCP server written with the official SDK (mcp==2.3.0), served over stdio.

Why: the probe, the interop tests and the README compare our server with what the official SDK
really does (it masks a raising tool's reason, answers an unknown tool with isError). Run it as
``python tests/peers/sdk_server.py``; it speaks newline-delimited JSON-RPC on stdin/stdout.
"""

from __future__ import annotations

from mcp.server.mcpserver import MCPServer

STATIONS: dict[str, str] = {"Oslo": "4°C, light snow", "Paris": "12°C, overcast"}

server = MCPServer(name="sdk-weather", version="0.1.0")


@server.tool()
def add(x: int, y: int) -> int:
    """Add two integers."""
    return x + y


@server.tool()
def weather(city: str) -> str:
    """Current weather at the station nearest to a city; fails for a city with no station."""
    if city not in STATIONS:
        raise ValueError(f"no station near {city}")
    return STATIONS[city]


if __name__ == "__main__":
    server.run("stdio")
