"""A small OpenAI-compatible chat-completions server on 127.0.0.1: real HTTP, scripted answers.

``FakeEndpoint(policy)`` serves ``POST /v1/chat/completions`` with uvicorn in a thread; the
policy maps each request body to an :class:`Answer` (or a plain body, answered 200). Every
request and its headers are kept, so a test reads what the model was shown.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route


@dataclass(frozen=True)
class Answer:
    body: dict[str, Any] | str
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    delay_s: float = 0.0


Policy = Callable[[dict[str, Any]], "Answer | dict[str, Any]"]


def completion(message: dict[str, Any], tokens_in: int = 100, tokens_out: int = 10) -> dict[str, Any]:
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "model": "fake",
        "choices": [{"index": 0, "message": {"role": "assistant", **message}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": tokens_in, "completion_tokens": tokens_out},
    }


def tool_call(name: str, arguments: dict[str, Any] | str, call_id: str = "call_1") -> dict[str, Any]:
    raw = arguments if isinstance(arguments, str) else json.dumps(arguments)
    return completion(
        {
            "content": None,
            "tool_calls": [{"id": call_id, "type": "function", "function": {"name": name, "arguments": raw}}],
        }
    )


def final(text: str) -> dict[str, Any]:
    return completion({"content": text})


class FakeEndpoint:
    """Start with ``with FakeEndpoint(policy) as fake:``; ``fake.base_url`` ends in ``/v1``."""

    def __init__(self, policy: Policy) -> None:
        self.policy = policy
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self._lock = threading.Lock()
        app = Starlette(routes=[Route("/v1/chat/completions", self._complete, methods=["POST"])])
        self.server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=0, log_level="error"))
        self.thread = threading.Thread(target=self.server.run, daemon=True)
        self.port = 0

    async def _complete(self, request: Request) -> Response:
        body = await request.json()
        with self._lock:
            self.requests.append(body)
            self.headers.append(dict(request.headers))
            answer = self.policy(body)
        if not isinstance(answer, Answer):
            answer = Answer(answer)
        if answer.delay_s:
            await asyncio.sleep(answer.delay_s)
        if isinstance(answer.body, str):
            return Response(answer.body, status_code=answer.status, headers=answer.headers)
        return JSONResponse(answer.body, status_code=answer.status, headers=answer.headers)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def __enter__(self) -> FakeEndpoint:
        self.thread.start()
        while not self.server.started:
            if not self.thread.is_alive():
                raise RuntimeError("the fake endpoint did not start")
            time.sleep(0.01)
        self.port = self.server.servers[0].sockets[0].getsockname()[1]
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=10)


@contextmanager
def endpoint(policy: Policy) -> Iterator[FakeEndpoint]:
    with FakeEndpoint(policy) as fake:
        yield fake


def scripted(*answers: Answer | dict[str, Any]) -> Policy:
    """Answers in order, one per request; the last one again when they run out."""
    queue = list(answers)

    def policy(request: dict[str, Any]) -> Answer | dict[str, Any]:
        return queue.pop(0) if len(queue) > 1 else queue[0]

    return policy


def careful_booker(request: dict[str, Any]) -> dict[str, Any]:
    """A model for ``strict_dates``: weather, then the booking as the task words it; told why it
    failed ('2025-03-14' in the error), it books again with that date; told nothing, it gives up."""
    messages = request["messages"]
    calls = [c for m in messages if m["role"] == "assistant" for c in m.get("tool_calls") or []]
    if not calls:
        return tool_call("weather", {"city": "Paris"}, "call_w")
    last = next(m for m in reversed(messages) if m["role"] == "tool")["content"]
    if last.startswith("Tool error"):
        if "2025-03-14" in last:
            return tool_call("book", {"item": "table for two", "date": "2025-03-14"}, f"call_{len(calls)}")
        return final("GIVE UP: the booking failed and I was not told why")
    if calls[-1]["function"]["name"] == "weather":
        return tool_call("book", {"item": "table for two", "date": "14/03/2025"}, "call_b")
    return final("Done: the weather is checked and the table is booked.")
