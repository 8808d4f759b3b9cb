"""A small MCP server written with the official SDK (mcp==2.3.0), served over stdio.

Why: the probe, the interop tests and the README compare our server with what the official SDK
really does (it masks a raising tool's reason, answers an unknown tool with isError). Run it as
``python tests/peers/sdk_server.py``; it speaks newline-delimited JSON-RPC on stdin/stdout.
With ``--input-tools`` it also serves ``delete_file(path)``, which asks the client to confirm
(an elicitation: MRTR in the 2026-07-28 era, a mid-call request in the handshake era), and
``retire(name)``, which removes a tool and tells ``subscriptions/listen`` streams.
"""

from __future__ import annotations

import sys
from typing import Annotated

from mcp.server.mcpserver import Context, MCPServer, Resolve
from mcp.server.mcpserver.resolve import Elicit
from pydantic import BaseModel

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


class Confirmation(BaseModel):
    confirm: bool


def ask_to_confirm(path: str) -> Elicit[Confirmation]:
    return Elicit(f"Delete {path}?", Confirmation)


def delete_file(path: str, answer: Annotated[Confirmation, Resolve(ask_to_confirm)]) -> str:
    """Delete a file once the user confirms (the SDK asks in whichever era the call came)."""
    return f"deleted {path}" if answer.confirm else f"kept {path}"


async def retire(name: str, ctx: Context) -> str:
    """Remove a tool; listen streams that asked for tool changes hear of it."""
    server.remove_tool(name)
    await ctx.notify_tools_changed()
    return f"retired {name}"


if __name__ == "__main__":
    if "--input-tools" in sys.argv[1:]:
        server.add_tool(delete_file)
        server.add_tool(retire)
    server.run("stdio")
