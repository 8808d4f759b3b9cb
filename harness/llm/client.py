"""An OpenAI-compatible chat-completions client: one request in, one accepted answer out.

Hosted APIs, vLLM, Ollama and llama.cpp's server all speak ``POST {base_url}/chat/completions``
with the same body; this client sends the body it is given and returns the assistant message,
or raises :class:`EndpointError` once its retries are spent.

What is retried, with exponential backoff (``backoff_s``, doubling, at most ``max_wait_s``):

======================================  ===========================================
the endpoint did                        then
======================================  ===========================================
time out, or refuse the connection      retry after the backoff
answer 429                              retry after its ``Retry-After`` (else backoff)
answer 5xx                              retry after the backoff
answer 200 with a tool call whose       retry after the backoff (the same request
arguments are not a JSON object         again: a model may well answer it properly)
answer any other 4xx, or not JSON       no retry: :class:`EndpointError` at once
======================================  ===========================================

The API key is read from the environment variable named by ``api_key_env`` when a request is
made, sent as a bearer token and never kept, logged or put into an error (an unset variable
sends no ``Authorization``, which local servers do not need).

httpx is imported when the first client is made: ``harness run`` and ``harness list`` load the
agent's class (to ask ``calls_a_model``, to list its knobs) without asking any endpoint.
"""

from __future__ import annotations

import email.utils
import json
import os
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

__all__ = [
    "ChatClient",
    "EndpointError",
    "Reply",
    "call_arguments",
    "chat_client",
    "close_clients",
    "malformed_tool_calls",
]

REASON_CHARS = 300
"""How much of an endpoint's error body goes into a reason (a row's ``error`` column is one line)."""


class EndpointError(Exception):
    """The endpoint did not give an acceptable answer, retries included; the message says why.

    Not a user error: raised inside a session, it ends that session as a ``harness_error`` row
    with this reason, and the batch goes on.
    """


@dataclass(frozen=True)
class Reply:
    """An accepted answer and what it cost, over every attempt it took."""

    response: dict[str, Any]
    """The response body as the endpoint sent it."""
    latency_s: float
    """Seconds spent waiting on the endpoint, every attempt summed (backoff sleeps excluded)."""
    attempts: int
    tokens_in: int
    tokens_out: int

    def to_json(self) -> dict[str, Any]:
        return {
            "response": self.response,
            "latency_s": self.latency_s,
            "attempts": self.attempts,
            "tokens_in": self.tokens_in,
            "tokens_out": self.tokens_out,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Reply:
        return cls(
            dict(data["response"]),
            float(data["latency_s"]),
            int(data["attempts"]),
            int(data["tokens_in"]),
            int(data["tokens_out"]),
        )


def malformed_tool_calls(message: Mapping[str, Any]) -> str | None:
    """Why an assistant message's tool calls cannot be acted on, or None when they can."""
    calls = message.get("tool_calls") or []
    if not isinstance(calls, list):
        return "tool_calls is not a list"
    for call in calls:
        function = call.get("function") if isinstance(call, dict) else None
        if not isinstance(function, dict) or not isinstance(function.get("name"), str):
            return f"a tool call without a function name: {_brief(call)}"
        raw = function.get("arguments")
        try:
            arguments = call_arguments(function)
        except ValueError:
            return f"malformed tool-call arguments for {function['name']}: {_brief(raw)}"
        if not isinstance(arguments, dict):
            return f"tool-call arguments for {function['name']} are not a JSON object: {_brief(raw)}"
    return None


def call_arguments(function: Mapping[str, Any]) -> Any:
    """A tool call's arguments: its JSON text parsed (``ValueError`` if it is none), an object sent
    as one, or ``{}`` when there are none."""
    raw = function.get("arguments")
    if raw in (None, ""):
        return {}
    return json.loads(raw) if isinstance(raw, str) else raw


def _brief(value: object) -> str:
    text = value if isinstance(value, str) else json.dumps(value, default=str)
    text = " ".join(text.split())
    return text if len(text) <= REASON_CHARS else text[:REASON_CHARS] + "..."


def _retry_after(value: str | None) -> float | None:
    """Seconds from a ``Retry-After`` header: a number of seconds or an HTTP date."""
    if not value:
        return None
    try:
        return max(float(value), 0.0)
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(when.timestamp() - time.time(), 0.0)


@dataclass(frozen=True)
class _Attempt:
    """One attempt's verdict: a reply, or why not and whether (and when) to try again."""

    body: dict[str, Any] | None = None
    reason: str = ""
    retry: bool = False
    wait_s: float | None = None


class ChatClient:
    """``complete(request)`` against one endpoint; one per process and settings (:func:`chat_client`)."""

    def __init__(
        self,
        base_url: str,
        api_key_env: str,
        *,
        timeout_s: float,
        max_retries: int,
        backoff_s: float,
        max_wait_s: float,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.url = base_url.rstrip("/") + "/chat/completions"
        self.api_key_env = api_key_env
        self.max_retries, self.backoff_s, self.max_wait_s = max_retries, backoff_s, max_wait_s
        self.sleep = sleep
        import httpx  # here, not at the top: see the module's docstring

        self.http = httpx.Client(timeout=timeout_s)

    def close(self) -> None:
        """Close the connections kept open."""
        self.http.close()

    def _headers(self) -> dict[str, str]:
        key = os.environ.get(self.api_key_env)
        return {"Authorization": f"Bearer {key}"} if key else {}

    def _attempt(self, request: Mapping[str, Any]) -> _Attempt:
        import httpx  # loaded by __init__ already

        try:
            answer = self.http.post(self.url, json=request, headers=self._headers())
        except httpx.TimeoutException:
            return _Attempt(reason=f"{self.url}: timed out", retry=True)
        except httpx.TransportError as exc:
            return _Attempt(reason=f"{self.url}: {type(exc).__name__}: {exc}", retry=True)
        status = answer.status_code
        if status == 429:
            wait = _retry_after(answer.headers.get("retry-after"))
            return _Attempt(reason=f"{self.url}: 429 Too Many Requests", retry=True, wait_s=wait)
        if status >= 500:
            return _Attempt(reason=f"{self.url}: {status} {_brief(answer.text)}", retry=True)
        if status != 200:
            if status in (401, 403):  # its body may quote the key it refused: not a word of it
                return _Attempt(reason=f"{self.url}: {status} (is {self.api_key_env} set to a valid key?)")
            return _Attempt(reason=f"{self.url}: {status} {_brief(answer.text)}")
        try:
            body = answer.json()
            message = body["choices"][0]["message"]
        except (ValueError, KeyError, IndexError, TypeError):
            return _Attempt(reason=f"{self.url}: not a chat completion: {_brief(answer.text)}")
        if not isinstance(message, dict):
            return _Attempt(reason=f"{self.url}: not a chat completion: {_brief(answer.text)}")
        bad = malformed_tool_calls(message)
        if bad is not None:
            return _Attempt(body=body, reason=bad, retry=True)
        return _Attempt(body=body)

    def complete(self, request: Mapping[str, Any]) -> Reply:
        """The accepted answer to ``request``; :class:`EndpointError` when retries run out."""
        latency = 0.0
        tokens_in = tokens_out = 0
        for attempt in range(self.max_retries + 1):
            started = time.perf_counter()
            verdict = self._attempt(request)
            latency += time.perf_counter() - started
            if verdict.body is not None:  # answered: its tokens were spent, accepted or not
                usage = verdict.body.get("usage") or {}
                tokens_in += int(usage.get("prompt_tokens") or 0)
                tokens_out += int(usage.get("completion_tokens") or 0)
                if not verdict.reason:
                    return Reply(verdict.body, latency, attempt + 1, tokens_in, tokens_out)
            if not verdict.retry:
                raise EndpointError(verdict.reason)
            if attempt < self.max_retries:
                backoff = self.backoff_s * 2**attempt
                self.sleep(min(verdict.wait_s if verdict.wait_s is not None else backoff, self.max_wait_s))
        raise EndpointError(f"{verdict.reason} (gave up after {self.max_retries + 1} attempts)")


_CLIENTS: dict[tuple[Any, ...], ChatClient] = {}


def chat_client(
    base_url: str,
    api_key_env: str,
    *,
    timeout_s: float,
    max_retries: int,
    backoff_s: float,
    max_wait_s: float,
) -> ChatClient:
    """The process's client for these settings (its connections are kept between sessions)."""
    key = (base_url, api_key_env, timeout_s, max_retries, backoff_s, max_wait_s)
    client = _CLIENTS.get(key)
    if client is None:
        client = _CLIENTS[key] = ChatClient(
            base_url,
            api_key_env,
            timeout_s=timeout_s,
            max_retries=max_retries,
            backoff_s=backoff_s,
            max_wait_s=max_wait_s,
        )
    return client


def close_clients() -> None:
    """Close and forget the process's clients (their connections)."""
    while _CLIENTS:
        _CLIENTS.popitem()[1].close()
