"""The host: what stands between the MCP client and the model, and what it lets through.

Real MCP hosts do not hand the model raw JSON-RPC. A ``tools/call`` *result*
(its content and ``isError``) goes into the model's context as is. A JSON-RPC
*error reply* does not: typical hosts tell the model that the call failed and
drop the server's message (SEP-1303's motivating case: the agent, told nothing,
repeats the identical call). So the host has two modes:

* ``typical`` (default): an RPC error reaches the agent as its code only.
* ``transparent``: the code and the server's message.

This is what makes the ``collapse`` strategy lose the reason while still
"carrying the message" on the wire: the message is in the -32603 reply, and the
typical host drops it.

Observations and actions are the agent interface (Gymnasium-like): the agent is
``reset`` once, then maps each observation to one action. Notifications that
arrive with a step ride on that step's observation (``notifications``), as a
host would add them to the model's next turn.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from harness.protocol.client import MCPClient
from harness.protocol.errors import RPCError

HOSTS: tuple[str, ...] = ("typical", "transparent")

# -- observations -------------------------------------------------------------------------


@dataclass(frozen=True)
class Start:
    """The first observation: the task and tools were given to ``reset``."""

    notifications: tuple[str, ...] = field(default=(), kw_only=True)


@dataclass(frozen=True)
class ToolResult:
    """A ``tools/call`` result as the server sent it (content blocks and isError)."""

    tool: str
    arguments: dict[str, Any]
    content: tuple[dict[str, Any], ...]
    is_error: bool
    notifications: tuple[str, ...] = field(default=(), kw_only=True)

    @property
    def text(self) -> str:
        """The text blocks joined (what a model reads)."""
        return "\n".join(
            b["text"] for b in self.content if b.get("type") == "text" and isinstance(b.get("text"), str)
        )


@dataclass(frozen=True)
class RPCErrorObservation:
    """A JSON-RPC error reply: the code always, the message only if the host lets it through."""

    tool: str | None
    arguments: dict[str, Any]
    code: int
    message: str | None
    notifications: tuple[str, ...] = field(default=(), kw_only=True)


@dataclass(frozen=True)
class ToolsListed:
    """The answer to a ListTools action: every tool's descriptor."""

    tools: tuple[dict[str, Any], ...]
    notifications: tuple[str, ...] = field(default=(), kw_only=True)


@dataclass(frozen=True)
class Waited:
    """A Wait action is over; ``now`` is the session's virtual time."""

    seconds: float
    now: float
    notifications: tuple[str, ...] = field(default=(), kw_only=True)


Observation = Start | ToolResult | RPCErrorObservation | ToolsListed | Waited

# -- actions ------------------------------------------------------------------------------


@dataclass(frozen=True)
class CallTool:
    tool: str
    arguments: dict[str, Any]


@dataclass(frozen=True)
class ListTools:
    pass


@dataclass(frozen=True)
class Wait:
    """Let virtual time pass (e.g. for a rate limit); costs a step."""

    seconds: float


@dataclass(frozen=True)
class Finish:
    """The agent believes the task is done."""


@dataclass(frozen=True)
class GiveUp:
    reason: str = ""


Action = CallTool | ListTools | Wait | Finish | GiveUp


class Host:
    """Turns client outcomes into observations; ``ServerCrashed`` passes through to the session."""

    def __init__(self, client: MCPClient, mode: str = "typical") -> None:
        if mode not in HOSTS:
            raise ValueError(f"unknown host {mode!r}; one of {', '.join(HOSTS)}")
        self.client = client
        self.transparent = mode == "transparent"

    def call(self, tool: str, arguments: dict[str, Any]) -> ToolResult | RPCErrorObservation:
        try:
            result = self.client.call_tool(tool, arguments)
        except RPCError as exc:
            return RPCErrorObservation(tool, arguments, exc.code, exc.message if self.transparent else None)
        content = result.get("content")
        blocks = tuple([b for b in content if isinstance(b, dict)]) if isinstance(content, list) else ()
        return ToolResult(tool, arguments, blocks, result.get("isError") is True)

    def list_tools(self) -> ToolsListed | RPCErrorObservation:
        try:
            return ToolsListed(tuple(self.client.list_tools()))
        except RPCError as exc:
            return RPCErrorObservation(None, {}, exc.code, exc.message if self.transparent else None)
