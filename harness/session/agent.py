"""The agent interface: what an agent observes, what it may do, and the class it implements.

One session is an episode, Gymnasium-style: :meth:`Agent.reset` once with the task,
the tools the host listed and a seed; then :meth:`Agent.act` maps each observation
to one action until the agent finishes, gives up or runs out of steps. Observations
are what the host (:mod:`harness.session.host`) lets through; notifications that arrive
with a step ride on that step's observation (``notifications``), as a host would add
them to the model's next turn.

This module is the whole vocabulary: an agent written outside this package (see
``docs/agents.md``) imports from here and from :mod:`harness.scenarios.scenario` (the task).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

from harness.errors import UserError

if TYPE_CHECKING:
    from harness.scenarios.scenario import Task

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
        """The text blocks joined (what a model reads); worked out once, then kept on the result
        (a cache of a frozen value in the instance's dict, not a field: equality ignores it)."""
        try:
            return self.__dict__["_text"]  # type: ignore[no-any-return]
        except KeyError:
            pass
        content = self.content
        if len(content) == 1:  # the common case: one block
            block = content[0]
            text = block.get("text")
            joined = text if block.get("type") == "text" and isinstance(text, str) else ""
        else:
            joined = "\n".join(
                b["text"] for b in content if b.get("type") == "text" and isinstance(b.get("text"), str)
            )
        self.__dict__["_text"] = joined
        return joined


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
    """The agent believes the task is done, and tells the user so.

    ``answer`` is what it reports for read subgoals: subgoal name -> the value it read (the tool's
    JSON answer). The outcome checks each against the world's truth (``answers_wrong``): a stale,
    partial or wrong-unit value reported as the answer is a wrong answer.

    ``text`` is what it tells the user in words: a model's last message. A world's judge reads it
    as the model's output (docs/worlds.md: AgentDojo's ``utility`` checks, say, that the answer
    names the amount asked for); the harness's own checks do not read it.
    """

    answer: Mapping[str, Any] | None = None
    text: str = ""


@dataclass(frozen=True)
class GiveUp:
    reason: str = ""


Action = CallTool | ListTools | Wait | Finish | GiveUp


AGENT_PARAM_PREFIX = "agent."
"""A swept parameter named ``agent.<knob>`` (``--set agent.backoff=fixed,exponential``) goes to
the agent's :meth:`Agent.configure`; every other one is a scenario override."""


class AgentParamError(UserError):
    """An agent was given a knob it does not take, or a value it does not accept."""


class Agent(ABC):
    """What the session drives. ``name`` is the registry name; ``summary`` one line for ``harness list``."""

    name: ClassVar[str]
    summary: ClassVar[str] = ""
    omniscient: ClassVar[bool] = False
    """True for an agent that must be bound to the session's fault schedule (the oracle)."""
    knobs: ClassVar[tuple[str, ...]] = ()
    """The parameters :meth:`configure` takes (swept as ``agent.<knob>``); none by default."""

    @classmethod
    def describe_knobs(cls) -> dict[str, str]:
        """One line per knob for ``harness list``: what it does, its values and default."""
        return {knob: "" for knob in cls.knobs}

    def configure(self, params: Mapping[str, Any]) -> None:
        """Set knobs (``{"backoff": "fixed"}``) once, before the first :meth:`reset`.

        Called only with a non-empty mapping; an agent left unconfigured behaves as it always
        has. This default takes no knobs and refuses any with :class:`AgentParamError`, naming
        the agent and the knob; an agent with knobs overrides it (and lists them in ``knobs``).
        """
        if params:
            raise self.unknown_knob(next(iter(params)))

    def unknown_knob(self, key: str) -> AgentParamError:
        """The one-line error for a knob this agent does not take, naming those it does."""
        name = getattr(self, "name", type(self).__name__)
        takes = f"it takes: {', '.join(self.knobs)}" if self.knobs else "it takes no knobs"
        return AgentParamError(f"agent {name!r} does not take {AGENT_PARAM_PREFIX}{key} ({takes})")

    @abstractmethod
    def reset(self, task: Task, tools: Sequence[dict[str, Any]], seed: int) -> None:
        """Start an episode: forget everything, seed the generator."""

    @abstractmethod
    def act(self, observation: Observation) -> Action:
        """The next action, given what just happened."""

    def answer_input(self, method: str, params: Mapping[str, Any]) -> dict[str, Any] | None:
        """Answer a server's question in the middle of a tool call, or None to decline.

        ``method`` is ``elicitation/create`` (``params``: ``message`` and ``requestedSchema``),
        ``sampling/createMessage`` or ``roots/list``; the answer is that method's result (an
        elicitation: ``{"action": "accept", "content": {...}}``). The question comes inside a
        call, between two :meth:`act`: the session asks it synchronously and the answer goes back
        to the server (MRTR in the stateless era, a server-to-client reply in the handshake era).
        An agent that does not override this method declares no input capability at all, so a
        server cannot ask it (an asking tool answers it -32021).
        """
        return None

    @classmethod
    def answers_input(cls) -> bool:
        """Whether this agent overrides :meth:`answer_input` (and so declares the capability)."""
        return cls.answer_input is not Agent.answer_input
