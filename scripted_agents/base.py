"""The agent interface and the machinery the scripted agents share.

An agent is Gymnasium-like: :meth:`Agent.reset` once with the task, the tools
the host listed and a seed; then :meth:`Agent.act` maps each observation
(:mod:`harness.session.host`) to one action. Agents are deterministic: the only
randomness is the :class:`numpy.random.Generator` built from the reset seed,
used where a real agent would have to guess.

:class:`ScriptedAgent` walks the task's subgoals in order: for each, it calls
the first option whose tool it knows, and on trouble the subclass's policy
decides between retrying, waiting, fixing the arguments, switching to an
alternative, re-listing tools and giving up. What it can *read* is only what
the observation carries: an error whose reason is hidden (a masked text, an
implicit fault, an RPC code without its message) leaves it to :meth:`guess`.
"""

from __future__ import annotations

import ast
import json
from abc import abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from harness.protocol.errors import INVALID_PARAMS, INVALID_REQUEST, METHOD_NOT_FOUND
from harness.protocol.messages import TOOLS_LIST_CHANGED
from harness.reading import Reading, read_memo
from harness.scenarios.scenario import Option, Subgoal, Task, answered
from harness.seeding import np_random
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
    Start,
    ToolResult,
    ToolsListed,
    Wait,
    Waited,
)
from scripted_agents.fixes import fix_value
from scripted_agents.world import WorldWalker

REMEDY_OF: dict[str, str] = {
    "transient": "retry",
    "timeout": "retry",
    "rate_limited": "wait",
    "permanent": "switch",
    "not_found": "switch",
    "permission": "switch",
    "unknown_tool": "switch",
    "bad_argument": "fix_argument",
    "missing_argument": "fix_argument",
}
"""What a scripted reader does about each category a :class:`~harness.reading.Reading` gives
(``unknown`` has no remedy: it guesses). The reading itself comes from :mod:`harness.reading`,
which never saw how the harness makes its errors."""


def parse_json_object(text: str) -> dict[str, Any] | None:
    try:
        value = json.loads(text)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def looks_ok(obs: ToolResult) -> bool:
    """A usable result: text blocks only, and text that is whole: what starts as JSON (as every
    catalogue tool answers) must parse, as JSON or as the Python literal a server that prints a
    dict with ``str()`` writes (AgentDojo's tools do: ``{'message': '...'}``); plain text (as many
    real servers answer) is taken as it is."""
    if not obs.content or any(b.get("type") != "text" for b in obs.content):
        return False
    text = obs.text.lstrip()
    if not text:
        return False
    if text[0] in "{[":
        try:
            json.loads(text)
        except ValueError:
            try:
                ast.literal_eval(text)
            except (ValueError, SyntaxError, MemoryError, RecursionError):
                return False
    return True


def mentions(value: Any, fields: dict[str, Any]) -> bool:
    """Whether a JSON value holds an object with all of ``fields`` (a verification read)."""
    if isinstance(value, dict):
        if fields and all(value.get(k) == v for k, v in fields.items()):
            return True
        return any(mentions(v, fields) for v in value.values())
    if isinstance(value, list):
        return any(mentions(v, fields) for v in value)
    return False


def remap(arguments: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    """Fit arguments to a (changed) schema: an argument the schema lost fills a required one it gained."""
    props = schema.get("properties") or {}
    if not props or (type(props) is dict and arguments.keys() <= props.keys()):
        return dict(arguments)  # nothing lost, so nothing to move: the general case gives the same
    kept = {k: v for k, v in arguments.items() if k in props}
    lost = [k for k in arguments if k not in props]
    gained = [r for r in schema.get("required", ()) if r not in kept]
    for new, old in zip(gained, lost, strict=False):
        kept[new] = arguments[old]
    return kept


@dataclass(frozen=True)
class Knob:
    """One agent parameter a grid can sweep (``--set agent.<name>=...``)."""

    does: str
    choices: tuple[str, ...] = ()
    """The values it takes; empty: an integer of at least :attr:`minimum`."""
    minimum: int = 0

    def problem(self, value: Any) -> str | None:
        """Why ``value`` is not one this knob takes, or None."""
        if self.choices:
            if value in self.choices:
                return None
            return f"must be one of {', '.join(self.choices)}, got {value!r}"
        if isinstance(value, bool) or not isinstance(value, int) or value < self.minimum:
            return f"must be an integer of at least {self.minimum}, got {value!r}"
        return None


MAX_INSTRUCTIONS = 2
"""Instructions in error texts a scripted agent follows in one episode at most (no loops)."""

BACKOFF_S = 1.0
"""The first wait of ``fixed`` and ``exponential`` backoff, in virtual seconds."""

WORLD_RETRIES = 3
"""On a world, the retries of the fixed order when ``retry_budget`` is unset (scripted_agents/world.py)."""

KNOBS: dict[str, Knob] = {
    "retry_budget": Knob("blind retries of an option before switching to another (or giving up)"),
    "backoff": Knob(
        "the wait before a blind retry, or for a rate limit that names no wait: none (at once), "
        "random (0, 1 or 2 s drawn from the episode's generator; 1 s for the rate limit), fixed "
        "(1 s each time), exponential (1, 2, 4, ... s, doubling with each wait on one option)",
        ("none", "random", "fixed", "exponential"),
    ),
    "trust": Knob(
        "what an error's text is worth: follow (act on it), verify (act on it, but check a claim "
        "before acting on it), ignore (treat every error as unexplained)",
        ("follow", "verify", "ignore"),
    ),
    "relist": Knob(
        "when to re-list tools: never, on_notification (on list_changed), on_error (on list_changed, "
        "and once per option when a tool seems gone, forbidden or changed, or nothing is left)",
        ("never", "on_notification", "on_error"),
    ),
    "step_budget": Knob(
        "the agent's own cap: after this many actions it gives up (one at or above the "
        "scenario's max_steps never binds)",
        minimum=1,
    ),
    "order": Knob(
        "on a world, the fixed order of moves a text that says nothing leaves it to: retry_first "
        "(retries with the backoff, then each re-discovery, then stop) or rediscover_first (each "
        "re-discovery, then the retries, then stop); the harness's own scenarios keep their order",
        ("retry_first", "rediscover_first"),
    ),
    "rewrites": Knob(
        "on: a stated pattern or format is met by rewriting the sent value (case, date order); "
        "off: not (the ablation of docs/study.md: what the corruption/rewrite pairing carries)",
        ("on", "off"),
    ),
}
"""Every knob a scripted agent may take; each agent lists those it does in ``knobs``."""


class ScriptedAgent(Agent):
    """Subgoals in order; subclasses set the policy flags and override the ``on_*`` hooks.

    The knobs (:data:`KNOBS`) are attributes too: their class values are the agent's defaults
    (what it does unconfigured), and :meth:`configure` sets them on the instance.
    """

    @classmethod
    def describe_knobs(cls) -> dict[str, str]:
        """Each knob's meaning (:data:`KNOBS`), its values and this agent's default."""
        out = {}
        for name in cls.knobs:
            knob = KNOBS[name]
            values = "|".join(knob.choices) if knob.choices else f"an integer >= {knob.minimum}"
            default = getattr(cls, name)
            shown = "unset (the agent's own policy)" if default is None else default
            out[name] = f"{values}; default {shown}: {knob.does}"
        return out

    checks_content: ClassVar[bool] = False
    """Parse every result; a garbled one (``malformed``) is a failure, not a success."""
    verifies: ClassVar[bool] = False
    """After a write, call the subgoal's ``verify`` read and redo the write if it did not happen."""
    max_attempts: ClassVar[int] = 8
    """Calls of one option before moving on to the next (or giving up)."""
    knobs: ClassVar[tuple[str, ...]] = ("retry_budget", "backoff", "step_budget")
    repairs_on_worlds: ClassVar[bool] = False
    """On a world task (``Task.world``), walk it with :class:`scripted_agents.world.WorldWalker`:
    the repair moves that use only the texts, the world's tool list and earlier results."""
    reads: ClassVar[bool] = True
    """Whether it reads error texts at all (the ``blind`` control does not)."""

    retry_budget: int | None = None
    """Blind retries of an option; None: 1 or 2, the generator's first draw (:attr:`guess_retries`)."""
    backoff: str = "random"
    trust: str = "follow"
    relist: str = "never"
    """``never``, ``on_notification`` or ``on_error`` (see :data:`KNOBS`)."""
    step_budget: int | None = None
    """None: no cap of its own (the scenario's ``max_steps`` still ends the session)."""
    rewrites: str = "on"
    order: str = "retry_first"
    """On a world: the fixed order's moves, retries or re-discovery first (see :data:`KNOBS`)."""

    def configure(self, params: Mapping[str, Any]) -> None:
        for key, value in params.items():
            if key not in self.knobs:
                raise self.unknown_knob(key)
            problem = KNOBS[key].problem(value)
            if problem is not None:
                raise AgentParamError(f"agent {self.name!r}: {AGENT_PARAM_PREFIX}{key} {problem}")
        for key, value in params.items():
            setattr(self, key, value)

    @classmethod
    def knob_defaults(cls) -> dict[str, Any]:
        """Each knob this agent takes and its default (what it does unconfigured)."""
        return {k: getattr(cls, k) for k in cls.knobs}

    def reset(self, task: Task, tools: Sequence[dict[str, Any]], seed: int) -> None:
        if seed < 0:
            raise ValueError(f"seed must be a non-negative integer, got {seed}")
        self.task = task
        self.known: dict[str, dict[str, Any]] = {t["name"]: t for t in tools}
        self._seed = seed
        self._rng: np.random.Generator | None = None
        self._guess_retries: int | None = None
        self.sg = 0
        self.deferred: Action | None = None
        self.acted = 0
        self.answers: dict[str, ToolResult] = {}
        """What it read for each read subgoal: what its Finish reports to the user."""
        self.unanswered: set[str] = set()
        """Subgoals whose call answered with nothing (``[]``, an empty text: :func:`answered`)."""
        self.messages_read = self.instructed = 0
        self.after_instruction: CallTool | None = None
        self.walker: WorldWalker | None = None
        if task.world and self.repairs_on_worlds:
            self.walker = WorldWalker(
                task, tools, reads=self.reads, trust=self.trust, follows=MAX_INSTRUCTIONS,
                retries=WORLD_RETRIES if self.retry_budget is None else self.retry_budget,
                wait=self.world_wait, step_budget=self.step_budget, order=self.order,
                relist=self.relist,
            )  # fmt: skip
        self._new_subgoal()

    def world_wait(self, k: int) -> float:
        """The backoff before the k-th retry of the fixed order on a world: none, fixed (1 s), or
        exponential (1, 2, 4 s; also what ``random`` means there, so that a reader and the blind
        control wait alike)."""
        if self.backoff == "none":
            return 0.0
        if self.backoff == "fixed":
            return BACKOFF_S
        return BACKOFF_S * 2.0 ** (k - 1)

    def answer(self) -> dict[str, str]:
        """What it tells the user it read: each read subgoal's result, as text."""
        return {name: obs.text for name, obs in self.answers.items()}

    def report(self) -> str:
        """What it tells the user in words as it finishes (``Finish.text``): the task's
        ``plan_output`` once every call of its plan has answered something (:func:`answered`: a
        model would write that answer from what it read; docs/worlds.md), else only the texts it
        read. Empty for a task with no ``plan_output``, as every simulated task is."""
        if self.sg >= len(self.task.subgoals) and not (self.task.plan_output and self.unanswered):
            return self.task.plan_output
        return "\n".join(obs.text for obs in self.answers.values())

    def noted(self, obs: ToolResult) -> None:
        """Note whether the current subgoal's call answered something a report can rest on."""
        name = self.task.subgoals[self.sg].name
        if answered(obs.text):
            self.unanswered.discard(name)
        else:
            self.unanswered.add(name)

    def finish(self) -> Finish:
        """Tell the user the task is done: the answers read, and the report in words."""
        return Finish(answer=self.answer(), text=self.report())

    @property
    def rng(self) -> np.random.Generator:
        """The episode's generator, built on first use (building one costs ~10 us; most
        episodes never guess). Its first draw is always :attr:`guess_retries`."""
        if self._rng is None:
            self._rng = np_random(self._seed)
        return self._rng

    @property
    def guess_retries(self) -> int:
        """How many blind retries this agent allows itself before switching: ``retry_budget``,
        or, left unset, 1 or 2.

        The generator's first draw, taken when first needed (and taken under a set
        ``retry_budget`` too, so the pauses that follow are the same draws): the stream is the
        same as drawing it at reset, because nothing else draws before the first guess.
        """
        if self._guess_retries is None:
            drawn = int(self.rng.integers(1, 3))
            self._guess_retries = drawn if self.retry_budget is None else self.retry_budget
        return self._guess_retries

    def _new_subgoal(self) -> None:
        self.tried: list[int] = []
        self.opt = -1
        self.args: dict[str, Any] = {}
        self.write_args: dict[str, Any] = {}
        self.current: CallTool | None = None
        self.phase = "call"
        self._new_option()

    def _new_option(self) -> None:
        self.attempts = 0
        self.guesses = 0
        self.waits = 0
        self.relisted = self.checked = False

    @property
    def subgoal(self) -> Subgoal:
        return self.task.subgoals[self.sg]

    @property
    def option(self) -> Option:
        return self.subgoal.options[self.opt]

    # -- the episode ---------------------------------------------------------------------

    def act(self, observation: Observation) -> Action:
        if self.walker is not None:
            return self.walker.act(observation)
        action = self.observe(observation)
        if (
            observation.notifications  # mostly empty: the cheapest test first
            and self.relist != "never"
            and TOOLS_LIST_CHANGED in observation.notifications
            and not isinstance(action, Finish | GiveUp | ListTools)
        ):
            self.deferred = action  # look at the new list first, then carry on
            action = ListTools()
        if self.step_budget is not None:
            self.acted += 1
            if self.acted > self.step_budget and not isinstance(action, Finish | GiveUp):
                return GiveUp(f"{self.subgoal.name}: step budget of {self.step_budget} spent")
        return action

    def observe(self, obs: Observation) -> Action:
        if self.phase == "instructed":  # whatever the instructed call answered: back to the task
            self.phase = "call"
            failed, self.after_instruction = self.after_instruction, None
            if failed is not None:
                self.current = failed
                return self.resend()
        if isinstance(obs, ToolResult):  # the types are disjoint: the order is for speed only
            return self.on_error(obs.text, obs) if obs.is_error else self.on_success(obs)
        if isinstance(obs, Start):
            return self.start()
        if isinstance(obs, Waited):
            return self.resend()
        if isinstance(obs, ToolsListed):
            return self.adopt(obs.tools)
        return self.on_rpc_error(obs)

    # -- moves ----------------------------------------------------------------------------

    def call(self) -> CallTool:
        """Call the current option with the current arguments."""
        self.attempts += 1
        self.current = CallTool(self.task.subgoals[self.sg].options[self.opt].tool, dict(self.args))
        return self.current

    def resend(self) -> Action:
        """The same call again, unless this option has had its attempts."""
        if self.current is None:
            return self.start()
        if self.attempts >= self.max_attempts:
            return self.switch("attempts exhausted")
        self.attempts += 1
        return self.current

    def use(self, j: int) -> Action:
        self.opt = j
        self.tried.append(j)
        self.attempts = self.guesses = self.waits = 0  # _new_option, inlined
        self.relisted = self.checked = False
        self.phase = "call"
        option = self.task.subgoals[self.sg].options[j]
        schema = self.known.get(option.tool, {}).get("inputSchema") or {}
        self.args = remap(dict(option.arguments), schema)
        self.attempts += 1  # call(), inlined
        self.current = CallTool(option.tool, dict(self.args))
        return self.current

    def next_option(self) -> int | None:
        tried, known = self.tried, self.known
        for j, opt in enumerate(self.task.subgoals[self.sg].options):
            if j not in tried and opt.tool in known:
                return j
        return None

    def start(self) -> Action:
        if self.sg >= len(self.task.subgoals):  # a task that asks for no call (a BFCL turn may not)
            return self.finish()
        j = self.next_option()
        return self.use(j) if j is not None else self.stuck("no tool for this subgoal")

    def switch(self, why: str) -> Action:
        """An alternative tool if one is known and untried, else :meth:`stuck`."""
        j = self.next_option()
        return self.use(j) if j is not None else self.stuck(why)

    def stuck(self, why: str) -> Action:
        return self._relist_once() or GiveUp(f"{self.subgoal.name}: {why}")

    def _relist_once(self) -> Action | None:
        """``relist="on_error"``: a fresh tool list, once per option (else None)."""
        if self.relist != "on_error" or self.relisted:
            return None
        self.relisted = True
        self.deferred = None
        return ListTools()

    def advance(self) -> Action:
        self.sg += 1
        if self.sg >= len(self.task.subgoals):
            return self.finish()
        self._new_subgoal()
        return self.start()

    def guess(self) -> Action:
        """No reason given: what a real agent can do. Retry (maybe after a wait), then switch."""
        self.guesses += 1
        if self.guesses <= self.guess_retries:
            return self.blind_retry()
        return self.switch("unexplained failures")

    def blind_retry(self) -> Action:
        """The same call again after the ``backoff`` wait (:meth:`resend` once it is over)."""
        pause = self.backoff_wait()
        return Wait(pause) if pause else self.resend()

    def backoff_wait(self, unread: float = 0.0) -> float:
        """Seconds to wait before a retry whose wait nobody said (0: none), by ``backoff``.

        ``random`` draws 0, 1 or 2 from the generator, or gives ``unread`` if that is set (a
        rate limit that names no wait: the reader waits 1 s); ``exponential`` doubles with each
        wait on the current option.
        """
        backoff = self.backoff
        if backoff == "random":
            return unread or float(self.rng.integers(0, 3))
        if backoff == "fixed":
            return BACKOFF_S
        if backoff == "exponential":
            self.waits += 1
            return BACKOFF_S * 2.0 ** (self.waits - 1)
        return 0.0

    # -- what happened ----------------------------------------------------------------------

    def on_success(self, obs: ToolResult) -> Action:
        if self.phase == "verify":
            record = parse_json_object(obs.text)
            if record is not None and mentions(record, self.write_args):
                return self.advance()
            self.phase = "call"  # the write did not happen: do it again
            self.args = dict(self.write_args)
            return self.resend_write()
        if self.checks_content and not looks_ok(obs):
            return self.on_garbled(obs)
        self.noted(obs)
        subgoal = self.task.subgoals[self.sg]
        read_only = self.known.get(obs.tool, {}).get("annotations", {}).get("readOnlyHint") is True
        if read_only:
            self.answers[subgoal.name] = obs  # its text is what it will report
        verify = subgoal.verify if self.verifies else None
        if verify is not None and not read_only and verify.tool in self.known:
            self.phase = "verify"
            self.write_args = dict(self.args)
            self.current = CallTool(verify.tool, dict(verify.arguments))
            return self.current
        return self.advance()

    def resend_write(self) -> Action:
        if self.attempts >= self.max_attempts:
            return self.switch("writes keep vanishing")
        return self.call()

    def on_garbled(self, obs: ToolResult) -> Action:
        return self.resend()

    @abstractmethod
    def on_error(self, text: str, obs: ToolResult) -> Action:
        """A result with isError; ``text`` is what it says (maybe nothing useful)."""

    @abstractmethod
    def on_rpc_error(self, obs: RPCErrorObservation) -> Action:
        """A JSON-RPC error; ``obs.message`` is None unless the host shows it."""

    def adopt(self, tools: Sequence[dict[str, Any]]) -> Action:
        """A fresh tool list: refit the pending call, or pick up a tool that was missing."""
        old = self.known
        self.known = {t["name"]: t for t in tools}
        deferred, self.deferred = self.deferred, None
        if self.opt < 0:
            return self.switch("no tool for this subgoal")
        tool = self.option.tool if self.phase == "call" else None
        if tool is not None and tool not in self.known:
            return self.switch(f"{tool} is gone")
        if tool is not None:
            schema = self.known[tool].get("inputSchema") or {}
            changed = schema != (old.get(tool, {}).get("inputSchema") or {})
            if changed:
                self.args = remap(self.args, schema)
        else:
            changed = False
        if isinstance(deferred, CallTool) and tool is not None and deferred.tool == tool:
            self.current = CallTool(tool, dict(self.args))
            return self.current
        if deferred is not None:
            return deferred
        if changed:
            return self.call()
        return self.switch("the tool list did not help")

    # -- reading reasons (used by reader and up) -----------------------------------------------

    def reading(self, text: str | None) -> Reading:
        """What the text says, read with what the agent knows: the call it made, the tools it has."""
        current = self.current
        return read_memo(
            text, arguments=current.arguments if current is not None else None, tools=tuple(self.known)
        )

    def respond(self, reading: Reading) -> Action:
        """Act on what an error's text says; a text that says nothing usable means guess.

        An instruction in the text (call this tool) is followed under ``trust=follow``, under
        ``verify`` only when the tool only reads; then the failed call is made again. Every
        text the agent acts on counts in ``messages_read``.
        """
        instruction = reading.instruction
        if (
            instruction is not None
            and self.instructed < MAX_INSTRUCTIONS
            and self._will_follow(instruction.tool)
        ):
            self.instructed += 1
            self.messages_read += 1
            self.after_instruction = self.current
            self.phase = "instructed"
            return CallTool(instruction.tool, dict(instruction.arguments))
        remedy = REMEDY_OF.get(reading.category)
        action = self._remedy(remedy, reading)
        if action is not None:
            self.messages_read += 1
            return action
        return self.guess()

    def _will_follow(self, tool: str) -> bool:
        if tool not in self.known or self.trust == "ignore":
            return False
        if self.trust == "verify":  # only what cannot change anything
            return self.known[tool].get("annotations", {}).get("readOnlyHint") is True
        return True

    def _remedy(self, remedy: str | None, reading: Reading) -> Action | None:
        """The action ``remedy`` calls for, or None where the reading gives too little to act on."""
        if remedy == "retry":
            if self.trust == "verify" and self.write_may_have_happened():
                return self.check_write()
            return self.resend()
        if remedy == "wait":
            if self.attempts >= self.max_attempts:
                return self.switch("still rate limited")
            if reading.retry_after_s is not None:
                return Wait(float(reading.retry_after_s))
            pause = self.backoff_wait(unread=1.0)
            return Wait(pause) if pause else self.resend()
        if remedy == "switch":
            if self.trust == "verify" and not self.checked and isinstance(self.current, CallTool):
                return self.check_unavailable()
            return self.switch(f"{reading.category.replace('_', ' ')}")
        if remedy == "fix_argument" and self.phase == "call" and reading.argument:
            argument = reading.argument
            if argument not in self.args and reading.category == "missing_argument":
                return self.on_schema_error()  # the tool wants an argument the call never had
            value = self.fixed(argument, reading.expected)
            if value is None or self.args.get(argument) == value:
                return None  # nothing to make of it, or the fix was made and did not help
            self.args[argument] = value
            return self.call()
        return None

    def fixed(self, argument: str, expected: str | None) -> Any:
        """A value for ``argument`` from what the text says it must be (:func:`fix_value`)."""
        props = (self.known.get(self.option.tool, {}).get("inputSchema") or {}).get("properties", {})
        kind = props.get(argument, {}).get("type")
        return fix_value(self.args.get(argument), expected, kind if isinstance(kind, str) else None,
                         rewrite=self.rewrites == "on")  # fmt: skip

    def session_metrics(self) -> dict[str, int]:
        """The error texts it acted on (the session's ``messages_read``)."""
        if self.walker is not None:
            return {"messages_read": self.walker.messages_read}
        return {"messages_read": self.messages_read}

    def on_schema_error(self) -> Action:
        """The server says the arguments do not fit: a fresh schema (``relist="on_error"``), else a guess."""
        return self._relist_once() or self.guess()

    # -- trust="verify": a claim checked before it is acted on ----------------------------------

    def write_may_have_happened(self) -> bool:
        """The failed call was a write the subgoal's ``verify`` read can look for."""
        verify = self.task.subgoals[self.sg].verify
        current = self.current
        if self.phase != "call" or verify is None or current is None or verify.tool not in self.known:
            return False
        return self.known.get(current.tool, {}).get("annotations", {}).get("readOnlyHint") is not True

    def check_write(self) -> Action:
        """Told a write failed and to call again: first read whether it was stored after all
        (:meth:`on_success` then moves on, or redoes the write)."""
        verify = self.subgoal.verify
        assert verify is not None  # write_may_have_happened said so
        self.phase = "verify"
        self.write_args = dict(self.args)
        self.current = CallTool(verify.tool, dict(verify.arguments))
        return self.current

    def check_unavailable(self) -> Action:
        """Told to use another tool: first look at the tool list (:meth:`adopt` switches if the
        tool is gone), then call it once more; a second such answer is believed."""
        self.checked = True
        self.deferred = self.current
        return ListTools()

    def respond_rpc(self, obs: RPCErrorObservation) -> Action:
        """Read the message if the host showed it; else act on what the code means."""
        if obs.message:
            reading = self.reading(obs.message)
            if reading.category != "unknown" or reading.instruction is not None:
                return self.respond(reading)
        if obs.code in (METHOD_NOT_FOUND, INVALID_REQUEST):
            return self.tool_unusable()
        if obs.code == INVALID_PARAMS:
            return self.on_schema_error()
        return self.guess()

    def tool_unusable(self) -> Action:
        """-32601 (no such tool) or -32600 (not permitted): this tool will not work as called
        (a fresh tool list first under ``relist="on_error"``)."""
        return self._relist_once() or self.switch("tool not callable")
