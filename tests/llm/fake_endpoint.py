"""A small OpenAI-compatible chat-completions server on 127.0.0.1: real HTTP, scripted answers.

``FakeEndpoint(policy)`` serves ``POST /v1/chat/completions`` with uvicorn in a thread; the
policy maps each request body to an :class:`Answer` (or a plain body, answered 200). Every
request and its headers are kept, so a test reads what the model was shown. ``latency_s``
answers every request that long after it arrived (requests wait side by side, as at a real
endpoint), so a test or a measurement sees a model's latency.

Run as a script it serves until stopped, for measuring ``harness run`` against a fixed latency::

    python tests/llm/fake_endpoint.py --latency 0.3 --port 8765 --policy weather
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

    def __init__(self, policy: Policy, *, latency_s: float = 0.0, port: int = 0) -> None:
        self.policy = policy
        self.latency_s = latency_s
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.arrived: list[float] = []
        """``time.monotonic()`` at each request's arrival, in the order of ``requests``."""
        self.in_flight = self.most_in_flight = 0
        """Requests being answered now, and the most there ever were at once."""
        self._lock = threading.Lock()
        app = Starlette(routes=[Route("/v1/chat/completions", self._complete, methods=["POST"])])
        self.server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="error"))
        self.thread = threading.Thread(target=self.server.run, daemon=True)
        self.port = 0

    async def _complete(self, request: Request) -> Response:
        body = await request.json()
        with self._lock:
            self.arrived.append(time.monotonic())
            self.requests.append(body)
            self.headers.append(dict(request.headers))
            answer = self.policy(body)
            self.in_flight += 1
            self.most_in_flight = max(self.most_in_flight, self.in_flight)
        if not isinstance(answer, Answer):
            answer = Answer(answer)
        try:
            if answer.delay_s + self.latency_s:
                await asyncio.sleep(answer.delay_s + self.latency_s)
        finally:
            with self._lock:
                self.in_flight -= 1
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


CITY_CALL = "weather"


def weather_caller(request: dict[str, Any]) -> dict[str, Any]:
    """A model for ``flaky_weather`` (and any task naming cities): the weather of each city the
    task names, in order; a failed call is made again as it was; then a final answer. A function
    of the conversation alone, so concurrent sessions get the answers they would get alone."""
    messages = request["messages"]
    task = next(m["content"] for m in messages if m["role"] == "user")
    cities = [c for c in ("Oslo", "Lima", "Tokyo", "Paris") if c in task]
    calls = [c for m in messages if m["role"] == "assistant" for c in m.get("tool_calls") or []]
    results = [m["content"] for m in messages if m["role"] == "tool"]
    done = sum(1 for r in results if not r.startswith("Tool error"))
    if done >= len(cities):
        return final("Done: " + "; ".join(r for r in results if not r.startswith("Tool error")))
    return tool_call(CITY_CALL, {"city": cities[done]}, f"call_{len(calls)}")


POLICIES: dict[str, Policy] = {"weather": weather_caller, "booker": careful_booker}


def main(argv: list[str] | None = None) -> None:
    import argparse

    parser = argparse.ArgumentParser(description="Serve a scripted chat-completions endpoint until stopped.")
    parser.add_argument("--port", type=int, default=8765, help="0: any free port (the first line names it)")
    parser.add_argument("--latency", type=float, default=0.3, help="seconds before each answer")
    parser.add_argument("--policy", choices=sorted(POLICIES), default="weather")
    parser.add_argument("--rate-limit-every", type=int, default=0, help="answer every Nth request 429")
    parser.add_argument("--retry-after", type=float, default=1.0, help="the 429's Retry-After, seconds")
    args = parser.parse_args(argv)
    policy = POLICIES[args.policy]
    if args.rate_limit_every:
        policy = rate_limited(policy, args.rate_limit_every, args.retry_after)
    with FakeEndpoint(policy, latency_s=args.latency, port=args.port) as fake:
        print(f"serving {fake.base_url} (latency {args.latency} s, policy {args.policy})", flush=True)
        shown = 0
        try:
            while fake.thread.is_alive():
                time.sleep(1.0)
                if len(fake.requests) != shown:
                    shown = len(fake.requests)
                    print(f"requests so far: {shown}", flush=True)
        except KeyboardInterrupt:
            pass
    print(f"requests: {len(fake.requests)}", flush=True)


def rate_limited(policy: Policy, every: int, retry_after_s: float) -> Policy:
    """``policy``, but every ``every``-th request is answered 429 with ``Retry-After``."""
    seen = [0]

    def limited(request: dict[str, Any]) -> Answer | dict[str, Any]:
        seen[0] += 1
        if seen[0] % every == 0:
            return Answer(
                {"error": "rate limited"}, status=429, headers={"Retry-After": f"{retry_after_s:g}"}
            )
        return policy(request)

    return limited


if __name__ == "__main__":
    main()
