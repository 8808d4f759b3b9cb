"""The ``llm`` agent: a language model behind an OpenAI-compatible endpoint, as a host runs one.

The session's loop is the host's loop. :meth:`LLMAgent.reset` turns the tools ``tools/list``
gave into the model's tools (each ``inputSchema`` is the function's JSON schema) and starts the
conversation with the scenario's task as the user's message. Each :meth:`LLMAgent.act` adds
what just happened to the conversation and answers with one action:

* a tool call the model asked for (several in one answer are made one per step, in order);
* ``ListTools`` when ``notifications/tools/list_changed`` arrived (the model's tools are
  replaced by the new list, as a host does);
* ``Finish`` when the model answers without a tool call, ``GiveUp`` when that answer starts
  with ``GIVE UP`` (the system prompt offers it).

A tool's outcome reaches the model as the host shows it (:func:`render`): a result's text,
flagged when ``isError``; a JSON-RPC error as its code, with the server's message only behind
the ``transparent`` host (the typical host dropped it before the agent saw it). So under
``collapse`` a typical host's model never reads the reason that ``is_error`` would have shown.

Every model request may go through a cassette (:mod:`harness.llm.cassette`) and, replaying,
only through it. The agent's knobs (:data:`KNOBS`) come from ``harness run``'s ``--llm-*``
flags and ``--set agent.<knob>=...``; the API key never does (the client reads it from the
environment, see :mod:`harness.llm.client`).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from harness.errors import UserError
from harness.llm.cassette import CassetteMiss, open_cassette, request_key
from harness.llm.client import METER, Meter, Reply, call_arguments, chat_client
from harness.session.agent import (
    AGENT_PARAM_PREFIX,
    Action,
    Agent,
    AgentParamError,
    CallTool,
    Finish,
    GiveUp,
    ListTools,
    Observation,
    RPCErrorObservation,
    ToolResult,
    ToolsListed,
)

if TYPE_CHECKING:
    from harness.scenarios.scenario import Task

__all__ = ["KNOBS", "SYSTEM_PROMPT", "Knob", "LLMAgent", "render", "to_model_tool"]

SYSTEM_PROMPT = (
    "You complete the user's task by calling the tools you are given. Read each tool's result "
    "before the next step. When the task is done, answer with a short summary and no tool call. "
    "If you cannot complete it, answer with a message that starts with 'GIVE UP:' and says why."
)
GIVE_UP = "GIVE UP"
TOOL_ERROR = "Tool error"
"""How a failed call's text starts in the model's context (isError, or a JSON-RPC error)."""
LIST_CHANGED = "notifications/tools/list_changed"


# -- knobs ------------------------------------------------------------------------------------


def _text(value: Any) -> str:
    text = str(value).strip()
    if not text:
        raise ValueError("must not be empty")
    return text


def _flag(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if str(value).lower() in ("true", "1", "yes"):
        return True
    if str(value).lower() in ("false", "0", "no"):
        return False
    raise ValueError("must be true or false")


def _number(low: float, high: float = float("inf"), *, open_low: bool = False) -> Callable[[Any], float]:
    def parse(value: Any) -> float:
        if isinstance(value, bool):
            raise ValueError("must be a number")
        number = float(value)
        if number < low or number > high or (open_low and number == low):
            bound = f"> {low:g}" if open_low else f">= {low:g}"
            raise ValueError(f"must be {bound}" + (f" and <= {high:g}" if high != float("inf") else ""))
        return number

    return parse


def _count(low: int) -> Callable[[Any], int]:
    def parse(value: Any) -> int:
        if isinstance(value, bool) or int(value) != float(value) or int(value) < low:
            raise ValueError(f"must be an integer >= {low}")
        return int(value)

    return parse


def _sampling_seed(value: Any) -> int | str:
    if value == "session":
        return "session"
    return _count(0)(value)


@dataclass(frozen=True)
class Knob:
    """One setting of the agent: how a value is read, its default, what it means."""

    parse: Callable[[Any], Any]
    default: Any
    meaning: str


KNOBS: dict[str, Knob] = {
    "base_url": Knob(_text, None, "the endpoint, up to /v1 (http://127.0.0.1:8000/v1); not needed to replay"),
    "model": Knob(_text, None, "the model name, sent in every request"),
    "api_key_env": Knob(_text, "OPENAI_API_KEY", "the environment variable holding the API key"),
    "temperature": Knob(_number(0.0, 2.0), 0.0, "sampling temperature, sent in every request"),
    "sampling_seed": Knob(
        _sampling_seed, "session", "the request's seed: an integer, or session (from the session's seed)"
    ),
    "max_tokens": Knob(_count(1), None, "a cap on each answer's tokens"),
    "cassette": Knob(_text, None, "a JSONL file recording every request and answer"),
    "replay": Knob(_flag, False, "answer every request from the cassette; no endpoint is asked"),
    "timeout_s": Knob(_number(0.0, open_low=True), 120.0, "seconds to wait for one answer"),
    "max_retries": Knob(_count(0), 4, "retries of a failed request before the session is a harness_error"),
    "backoff_s": Knob(_number(0.0), 1.0, "the first retry's wait; it doubles with each retry"),
    "max_wait_s": Knob(_number(0.0), 60.0, "the longest wait before a retry (Retry-After included)"),
}
"""The knobs the agent takes, each ``agent.<knob>`` to ``--set`` (the ``--llm-*`` flags set some)."""


def _shown(default: Any) -> str:
    if default is None:
        return "none"
    if isinstance(default, bool):
        return str(default).lower()
    return f"{default:g}" if isinstance(default, float) else str(default)


# -- what the model sees ------------------------------------------------------------------------


def to_model_tool(tool: Mapping[str, Any]) -> dict[str, Any]:
    """An MCP tool descriptor as a chat-completions function tool (``inputSchema`` as parameters)."""
    schema = tool.get("inputSchema")
    return {
        "type": "function",
        "function": {
            "name": str(tool.get("name", "")),
            "description": str(tool.get("description") or ""),
            "parameters": dict(schema) if isinstance(schema, Mapping) else {"type": "object"},
        },
    }


def _content_text(obs: ToolResult) -> str:
    parts = [
        block["text"]
        if block.get("type") == "text" and isinstance(block.get("text"), str)
        else json.dumps(block)
        for block in obs.content
    ]
    return "\n".join(parts)


def render(obs: ToolResult | RPCErrorObservation) -> str:
    """The text a host puts in the model's context for a tool's outcome.

    A result goes in as its content (``isError`` flagged in words: chat completions has no field
    for it); a JSON-RPC error as its code, and its message only when the host let it through.
    """
    if isinstance(obs, ToolResult):
        text = _content_text(obs) or "(no content)"
        return f"{TOOL_ERROR}: {text}" if obs.is_error else text
    said = f": {obs.message}" if obs.message is not None else ""
    return f"{TOOL_ERROR}: the call failed (JSON-RPC error {obs.code}){said}"


# -- the agent --------------------------------------------------------------------------------


class LLMAgent(Agent):
    """A chat-completions model behind the agent interface (docs/llm.md)."""

    name: ClassVar[str] = "llm"
    summary: ClassVar[str] = "A language model behind an OpenAI-compatible endpoint (docs/llm.md)."
    knobs: ClassVar[tuple[str, ...]] = tuple(KNOBS)
    calls_a_model: ClassVar[bool] = True
    """Read by ``harness run``: its ``--llm-*`` flags go to agents that have it (duck-typed, so
    that nothing in the harness imports this package), and the batch runs its sessions side by
    side in threads, by requests in flight (docs/llm.md)."""

    @staticmethod
    def model_meter() -> Meter:
        """The process's count of model requests and tokens, and the budget they may spend
        (:class:`harness.llm.client.Meter`): how ``harness run`` shows and limits what a batch costs."""
        return METER

    @classmethod
    def describe_knobs(cls) -> dict[str, str]:
        """Each knob's default and meaning (:data:`KNOBS`), for ``harness list``."""
        return {name: f"default {_shown(knob.default)}: {knob.meaning}" for name, knob in KNOBS.items()}

    def __init__(self) -> None:
        self.settings: dict[str, Any] = {k: knob.default for k, knob in KNOBS.items()}
        self._start([], [], 0)

    def configure(self, params: Mapping[str, Any]) -> None:
        for key, value in params.items():
            knob = KNOBS.get(key)
            if knob is None:
                raise self.unknown_knob(key)
            try:
                self.settings[key] = knob.parse(value)
            except (ValueError, TypeError) as exc:
                raise AgentParamError(
                    f"agent {self.name!r}: {AGENT_PARAM_PREFIX}{key}={value!r} {exc}"
                ) from None

    def reset(self, task: Task, tools: Sequence[dict[str, Any]], seed: int) -> None:
        system = {"role": "system", "content": SYSTEM_PROMPT}
        self._start([system, {"role": "user", "content": task.prompt}], tools, seed)

    def _start(self, messages: list[dict[str, Any]], tools: Sequence[dict[str, Any]], seed: int) -> None:
        """Begin an episode (the constructor begins an empty one): everything but the settings."""
        self.messages = messages
        self.tools = [to_model_tool(t) for t in tools]
        self.queue: list[tuple[str, CallTool]] = []
        self.awaiting: str | None = None
        self.relist = False
        self.turns = self.steps = 0
        self.seed = seed
        self.tokens_in = self.tokens_out = 0
        self.latency_s = 0.0

    def session_metrics(self) -> dict[str, Any]:
        """What this session's model requests cost (the row's ``tokens_in``, ``tokens_out``,
        ``model_latency_s``): recorded figures when answered from a cassette."""
        return {"tokens_in": self.tokens_in, "tokens_out": self.tokens_out, "model_latency_s": self.latency_s}

    def act(self, observation: Observation) -> Action:
        self.steps += 1
        self._observe(observation)
        if self.relist:
            self.relist = False
            return ListTools()
        if not self.queue:
            ending = self._turn()
            if ending is not None:
                return ending
        call_id, call = self.queue.pop(0)
        self.awaiting = call_id
        return call

    def _observe(self, obs: Observation) -> None:
        if isinstance(obs, ToolResult | RPCErrorObservation) and obs.tool is not None and self.awaiting:
            self.messages.append({"role": "tool", "tool_call_id": self.awaiting, "content": render(obs)})
            self.awaiting = None
        elif isinstance(obs, ToolsListed):
            self.tools = [to_model_tool(t) for t in obs.tools]
        if LIST_CHANGED in obs.notifications and not isinstance(obs, ToolsListed):
            self.relist = True

    def _request(self) -> dict[str, Any]:
        s = self.settings
        if s["model"] is None:
            raise UserError(f"agent {self.name!r}: no model named: give --llm-model NAME (agent.model)")
        seed = self.seed % 2**31 if s["sampling_seed"] == "session" else s["sampling_seed"]
        request: dict[str, Any] = {
            "model": s["model"],
            "messages": self.messages,
            "temperature": s["temperature"],
            "seed": seed,
        }
        if self.tools:
            request["tools"] = self.tools
        if s["max_tokens"] is not None:
            request["max_tokens"] = s["max_tokens"]
        return request

    def _ask(self, request: dict[str, Any]) -> Reply:
        s = self.settings
        key = request_key(request)
        cassette = open_cassette(s["cassette"]) if s["cassette"] is not None else None
        if cassette is not None:
            recorded = cassette.get(key)
            if recorded is not None:
                METER.cached()
                return recorded
        if s["replay"]:
            if cassette is None:
                raise UserError(f"agent {self.name!r}: --replay needs a --cassette to replay from")
            raise CassetteMiss(
                f"request sha256:{key} (model turn {self.turns}, session step {self.steps}) is not in "
                f"the cassette {cassette.path} ({len(cassette.entries)} entries): this run asks what "
                "the recorded one did not (another model, temperature, seed, scenario or harness?); "
                "record it again without --replay"
            )
        if s["base_url"] is None:
            raise UserError(
                f"agent {self.name!r}: no endpoint: give --llm-base-url URL (agent.base_url), or replay"
            )
        client = chat_client(
            s["base_url"],
            s["api_key_env"],
            timeout_s=s["timeout_s"],
            max_retries=s["max_retries"],
            backoff_s=s["backoff_s"],
            max_wait_s=s["max_wait_s"],
        )
        if cassette is None:
            return client.complete(request)
        # Asked once even when another session of this process asks the same at the same moment.
        reply, asked = cassette.ask(key, request, lambda: client.complete(request))
        if not asked:
            METER.cached()
        return reply

    def _turn(self) -> Finish | GiveUp | None:
        """Ask the model; queue its tool calls, or end the episode when it made none."""
        self.turns += 1
        reply = self._ask(self._request())
        self.tokens_in += reply.tokens_in
        self.tokens_out += reply.tokens_out
        self.latency_s += reply.latency_s
        message = reply.response["choices"][0]["message"]
        content = message.get("content")
        calls = message.get("tool_calls") or []
        said: dict[str, Any] = {"role": "assistant", "content": content}
        if calls:
            said["tool_calls"] = []
            for i, call in enumerate(calls):
                function = call["function"]
                call_id = str(call.get("id") or f"call_{self.turns}_{i}")
                arguments = dict(call_arguments(function))  # the client let only an object through
                said["tool_calls"].append(
                    {
                        "id": call_id,
                        "type": "function",
                        "function": {"name": function["name"], "arguments": json.dumps(arguments)},
                    }
                )
                self.queue.append((call_id, CallTool(function["name"], arguments)))
        self.messages.append(said)
        if calls:
            return None
        text = content if isinstance(content, str) else ""
        if text.strip().upper().startswith(GIVE_UP):
            return GiveUp(" ".join(text.split())[:200])
        return Finish(text=text)
