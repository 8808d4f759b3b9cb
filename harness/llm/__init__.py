"""A language model as an agent: an OpenAI-compatible chat-completions endpoint behind the
agent interface, every request recorded in a cassette and replayable without the endpoint.

The harness finds the agent through the registry (the entry point ``llm`` in the group
``harness.agents``) and imports nothing from here by name. See docs/llm.md.
"""

from harness.llm.agent import KNOBS, LLMAgent, render, to_model_tool
from harness.llm.cassette import Cassette, CassetteMiss, open_cassette, request_key
from harness.llm.client import (
    ChatClient,
    EndpointError,
    Reply,
    chat_client,
    close_clients,
    malformed_tool_calls,
)

__all__ = [
    "KNOBS",
    "Cassette",
    "CassetteMiss",
    "ChatClient",
    "EndpointError",
    "LLMAgent",
    "Reply",
    "chat_client",
    "close_clients",
    "malformed_tool_calls",
    "open_cassette",
    "render",
    "request_key",
    "to_model_tool",
]
