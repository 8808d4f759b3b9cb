"""What the server does when a tool function raises: the variable the harness compares.

Each strategy maps (tool name, exception) to the reply's ``result``, or raises.
The table is the whole story; the server looks a strategy up once, at
construction, and never branches on its name.

=========  ==============================================================  ==========================
strategy   what the client receives                                         reason readable by agent
=========  ==============================================================  ==========================
is_error   result ``{"content": [text "ERROR: <reason>"], "isError": true}``  yes (the reference)
masked     result ``isError: true`` with "Error executing tool <name>"     no (official SDK 2.3.0)
collapse   JSON-RPC error -32603 whose message is the reason               only if the host shows it
escape     nothing: the exception leaves ``handle`` (a naive server)       no: the server is dead
input_     as is_error; and where the failure is missing or ambiguous       yes, and a tool may ask
required   input, the tool asks the client instead of failing (MRTR in     for what it needs
           the stateless era, a server-to-client request in the handshake
           era; -32021 to a client that declared no elicitation)
=========  ==============================================================  ==========================

The asking is the tool's (:func:`harness.protocol.inputs.ask`, the server's two era paths);
what this table holds is what a tool's exception becomes. ``input_required`` reports an
exception as ``is_error`` does, so that the two differ only where a tool asks.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from harness.protocol.errors import InternalError


class ToolEscape(Exception):
    """Carries a tool's exception out through the server's catch-all (strategy ``escape``)."""

    def __init__(self, original: BaseException) -> None:
        super().__init__(str(original))
        self.original = original


def _reason(exc: BaseException) -> str:
    text = str(exc)
    return text if text else type(exc).__name__


def is_error(tool: str, exc: BaseException) -> dict[str, Any]:
    """The reference: the failure is tool-call content the model can read."""
    return {"content": [{"type": "text", "text": f"ERROR: {_reason(exc)}"}], "isError": True}


def masked(tool: str, exc: BaseException) -> dict[str, Any]:
    """isError, but the reason is hidden behind a generic text (as the official SDK does)."""
    return {"content": [{"type": "text", "text": f"Error executing tool {tool}"}], "isError": True}


def collapse(tool: str, exc: BaseException) -> dict[str, Any]:
    """The common bug: the tool failure becomes a protocol error, -32603."""
    raise InternalError(_reason(exc))


def escape(tool: str, exc: BaseException) -> dict[str, Any]:
    """The naive server: the exception is not caught at all."""
    raise ToolEscape(exc)


ToolErrorStrategy = Callable[[str, BaseException], dict[str, Any]]

TOOL_ERROR_STRATEGIES: dict[str, ToolErrorStrategy] = {
    "is_error": is_error,
    "masked": masked,
    "collapse": collapse,
    "escape": escape,
    "input_required": is_error,
}
"""Strategy name -> what a raising tool turns into. Names are a public contract."""

STRATEGIES: tuple[str, ...] = tuple(TOOL_ERROR_STRATEGIES)

ASKING_STRATEGIES: frozenset[str] = frozenset({"input_required"})
"""Strategies under which a tool whose failure is missing or ambiguous input asks the client for
it (:mod:`harness.protocol.inputs`) instead of failing; the simulation's tools read this."""
