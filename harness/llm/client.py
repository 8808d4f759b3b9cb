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

A 429 pauses the endpoint, not just the request: every request of this process to the same
``/chat/completions`` waits until its ``Retry-After`` has passed (:class:`_Gate`), so sessions
running side by side in threads do not keep knocking while the endpoint asked for quiet.

Every request sent and every token spent is counted in the process's :data:`METER`, whole and
per thread (a batch runs one session per thread at a time, so a thread's counts before and
after a session are that session's). The meter also holds a batch's budget: once
``--max-requests`` or ``--max-tokens`` is spent, or the batch is stopping, every further request
raises :class:`Halted` instead of being sent.

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
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

__all__ = [
    "METER",
    "ChatClient",
    "EndpointError",
    "Halted",
    "Meter",
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


class Halted(BaseException):
    """A model request not sent: the batch's budget is spent or the batch is stopping.

    A ``BaseException``, as ``KeyboardInterrupt`` is: the session it ends is not judged, and
    no row of it is written (nothing half-finished is); the batch that stopped asking knows
    why (:attr:`Meter.stopped`) and marks the run interrupted, to be resumed.
    """

    halts_the_batch = True
    """How the batch runner, which imports nothing from here, recognises it."""


FIGURES: tuple[str, ...] = ("requests", "cached", "tokens_in", "tokens_out", "latency_s")
"""What the meter counts: requests sent to an endpoint (retries included), requests answered
from a cassette, tokens the endpoint reported (prompt, completion) and seconds waited on it."""


class Meter:
    """What this process's model requests cost, whole and per thread, and the budget they may spend.

    One per process (:data:`METER`); the batch runner finds it through the agent class
    (``LLMAgent.model_meter``). Thread-safe.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._totals: dict[str, float] = dict.fromkeys(FIGURES, 0)
        self._local = threading.local()
        self._budget: tuple[int | None, int | None, dict[str, float]] | None = None
        self._stopping = threading.Event()
        self.stopped: str | None = None
        """Why requests are refused now (a budget spent, the batch stopping), or None."""

    def _mine(self) -> dict[str, float]:
        mine: dict[str, float] | None = getattr(self._local, "figures", None)
        if mine is None:
            mine = self._local.figures = dict.fromkeys(FIGURES, 0)
        return mine

    def _add(self, **figures: float) -> None:
        mine = self._mine()
        with self._lock:
            for name, value in figures.items():
                self._totals[name] += value
                mine[name] += value

    def admit(self) -> None:
        """Count one request about to be sent, or raise :class:`Halted` if none may be."""
        mine = self._mine()
        with self._lock:
            if self.stopped is None and self._budget is not None:
                max_requests, max_tokens, start = self._budget
                spent = self._totals["tokens_in"] + self._totals["tokens_out"]
                if max_requests is not None and self._totals["requests"] - start["requests"] >= max_requests:
                    self._stop(f"--max-requests {max_requests} reached")
                elif max_tokens is not None and spent - start["tokens"] >= max_tokens:
                    self._stop(f"--max-tokens {max_tokens} reached")
            if self.stopped is not None:
                raise Halted(self.stopped)
            self._totals["requests"] += 1
            mine["requests"] += 1

    def answered(self, tokens_in: int, tokens_out: int, latency_s: float) -> None:
        """An endpoint's answer (accepted or not): the tokens it reported, the seconds it took."""
        self._add(tokens_in=tokens_in, tokens_out=tokens_out, latency_s=latency_s)

    def cached(self) -> None:
        """A request answered from a cassette: nothing sent, nothing spent."""
        self._add(cached=1)

    def totals(self) -> dict[str, float]:
        """Everything this process counted so far."""
        with self._lock:
            return dict(self._totals)

    def mine(self) -> dict[str, float]:
        """What this thread counted so far (a session runs in one thread)."""
        return dict(self._mine())

    def limit(self, max_requests: int | None = None, max_tokens: int | None = None) -> None:
        """Allow this many more requests sent and tokens spent, from now; None is no limit.
        Clears a stop."""
        with self._lock:
            start = {
                "requests": self._totals["requests"],
                "tokens": self._totals["tokens_in"] + self._totals["tokens_out"],
            }
            self._budget = (max_requests, max_tokens, start)
            self.stopped = None
            self._stopping.clear()

    def stop(self, reason: str) -> None:
        """Refuse every request from now on (a batch that is stopping), waking any waits."""
        with self._lock:
            self._stop(reason)

    def _stop(self, reason: str) -> None:
        if self.stopped is None:
            self.stopped = reason
            self._stopping.set()

    def clear(self) -> None:
        """No budget, no stop."""
        self.limit(None, None)
        with self._lock:
            self._budget = None

    def sleep(self, seconds: float) -> None:
        """Wait ``seconds``, or less if requests are stopped meanwhile (a retry's wait then ends
        at once, and the retry is refused)."""
        self._stopping.wait(seconds)


METER = Meter()
"""The process's meter (see :class:`Meter`)."""


class _Gate:
    """One endpoint's pause: after a 429, every request of this process to it waits."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.until = 0.0
        """``time.monotonic()`` before which no request is sent."""

    def pause(self, seconds: float) -> None:
        with self._lock:
            self.until = max(self.until, time.monotonic() + seconds)

    def wait(self, sleep: Callable[[float], None]) -> float:
        """Sleep until the pause is over (again if it was extended meanwhile); the seconds asked."""
        asked = 0.0
        waited_for = None
        while True:
            with self._lock:
                until = self.until
            left = until - time.monotonic()
            if left <= 0 or until == waited_for:
                return asked
            sleep(left)
            asked += left
            waited_for = until


_GATES: dict[str, _Gate] = {}
_GATES_LOCK = threading.Lock()


def _gate(url: str) -> _Gate:
    with _GATES_LOCK:
        gate = _GATES.get(url)
        if gate is None:
            gate = _GATES[url] = _Gate()
        return gate


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
    pause: bool = False
    """A 429: the wait holds every request to the endpoint, not just this one."""


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
        sleep: Callable[[float], None] | None = None,
        meter: Meter | None = None,
    ) -> None:
        self.url = base_url.rstrip("/") + "/chat/completions"
        self.api_key_env = api_key_env
        self.max_retries, self.backoff_s, self.max_wait_s = max_retries, backoff_s, max_wait_s
        self.meter = meter or METER
        self.sleep = sleep or self.meter.sleep
        """How a retry waits: by default as long as asked, or until the batch stops asking."""
        self.gate = _gate(self.url)
        import httpx  # here, not at the top: see the module's docstring

        # Sessions in threads share the client: keep a connection open for each one.
        limits = httpx.Limits(max_connections=None, max_keepalive_connections=KEEP_ALIVE)
        self.http = httpx.Client(timeout=timeout_s, limits=limits)

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
            return _Attempt(reason=f"{self.url}: 429 Too Many Requests", retry=True, wait_s=wait, pause=True)
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
            self.gate.wait(self.sleep)  # a 429 to any request of this process pauses this one too
            self.meter.admit()  # Halted instead, once the batch's budget is spent
            started = time.perf_counter()
            verdict = self._attempt(request)
            took = time.perf_counter() - started
            latency += took
            spent_in = spent_out = 0
            if verdict.body is not None:  # answered: its tokens were spent, accepted or not
                usage = verdict.body.get("usage") or {}
                spent_in, spent_out = (
                    int(usage.get("prompt_tokens") or 0),
                    int(usage.get("completion_tokens") or 0),
                )
                tokens_in += spent_in
                tokens_out += spent_out
            self.meter.answered(spent_in, spent_out, took)
            if verdict.body is not None and not verdict.reason:
                return Reply(verdict.body, latency, attempt + 1, tokens_in, tokens_out)
            if not verdict.retry:
                raise EndpointError(verdict.reason)
            if attempt < self.max_retries:
                backoff = self.backoff_s * 2**attempt
                wait = min(verdict.wait_s if verdict.wait_s is not None else backoff, self.max_wait_s)
                if verdict.pause:
                    self.gate.pause(wait)  # waited at the gate, with every other request to it
                else:
                    self.sleep(wait)
        raise EndpointError(f"{verdict.reason} (gave up after {self.max_retries + 1} attempts)")


KEEP_ALIVE = 256
"""Connections a client keeps open: one per session in flight (``--llm-concurrency``), or more."""

_CLIENTS: dict[tuple[Any, ...], ChatClient] = {}
_CLIENTS_LOCK = threading.Lock()


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
    with _CLIENTS_LOCK:
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
    """Close and forget the process's clients (their connections) and endpoint pauses."""
    with _CLIENTS_LOCK:
        while _CLIENTS:
            _CLIENTS.popitem()[1].close()
    with _GATES_LOCK:
        _GATES.clear()
