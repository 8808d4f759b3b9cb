"""Repair on a world: moves picked by reading the text, or tried in a fixed order without it.

On a world (AgentDojo's suites, ``Task.world``) the tools, their answers and their failures are
someone else's. A scripted agent that walks the task's plan there repairs with nothing but:

* the **reading** of an error text (:func:`harness.reading.read`);
* the world's **tool list**: names, descriptions and schemas (a tool that lists the things an
  argument names; the failed tool itself with an optional filter dropped);
* what **earlier results** said (a listing it asked for; an answer that was empty).

It never uses the harness's own fixes (``scripted_agents.fixes``, whose rewrites undo the
corruptions the harness's families write): this module imports nothing of the other scripted
agents' modules, and ``tests/test_layers.py`` and ``tests/worlds/test_repair.py`` keep it so.

The moves (:class:`WorldWalker`):

* ``retry`` the same call, after a wait (the text's ``retry_after_s``, else the backoff);
* ``rediscover``: for an argument of the failed call, call a tool the tool list points to (one
  that takes no required argument and whose name or description names the argument's thing:
  ``get_channels`` for ``channel``, ``list_files`` for ``file_id``; or the failed tool with that
  argument dropped where its schema makes it optional), then take from the answer the value
  most like the old one (the name a channel was renamed to, the day an event moved to; never
  one the plan already names for something else). The old -> new value then stands in every
  later call of the plan and in what the agent tells the user;
* ``use`` the valid value an error text states (a quoted value, a "did you mean"), as stated;
* ``follow`` an instruction the text gives (``trust``: follow, verify, ignore);
* ``stop``: give up, saying why.

A **reader** picks the move by the reading: ``transient``/``timeout`` retry, ``rate_limited``
waits, ``not_found`` re-discovers, a stated valid value is used, ``permission``/``permanent``/
``unknown_tool`` stop; a text that says nothing (masked, collapsed, unreadable) leaves it to the
fixed order. The **blind** control never reads: after every failure it takes the fixed order
(retries with backoff, then each re-discovery, then stop). An empty answer to a call that names
something is a silent not-found for both (a content check, not a reading): re-discovery either
finds the new name or shows the thing is there as named, and then the empty answer stands.
"""

from __future__ import annotations

import ast
import difflib
import json
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from harness.protocol.messages import TOOLS_LIST_CHANGED
from harness.reading import Reading, read_memo
from harness.scenarios.scenario import Task, answered
from harness.session.agent import (
    Action,
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

MAX_ATTEMPTS = 8
"""Calls of one planned call (first call and repairs) before the agent stops."""

SIMILAR = 0.6
"""How alike (difflib's ratio) a listed value must be to the old one to be taken for it."""

_GENERIC = frozenset(
    ("get", "list", "all", "the", "search", "find", "read", "new", "by", "for", "and", "with", "from",
     "given", "name", "names", "type", "query", "value", "info", "data")
)  # fmt: skip
"""Words that name no thing: ``list_files`` names files, ``get_channels`` channels."""

_DAY = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_DATETIME = re.compile(r"^(\d{4}-\d{2}-\d{2})[ T]\d{2}:\d{2}")


def _words(text: str) -> set[str]:
    """The thing-words of a name or a sentence: lower case, split at ``_``, case and spaces,
    plural ``s`` dropped, generic and short words out."""
    spaced = re.sub(r"([a-z])([A-Z])", r"\1 \2", text)
    out = set()
    for word in re.split(r"[^A-Za-z]+", spaced.lower()):
        word = word[:-1] if word.endswith("s") and len(word) > 4 else word
        if len(word) >= 4 and word not in _GENERIC:
            out.add(word)
    return out


def _names_thing(tool_words: set[str], argument: str) -> bool:
    """Whether a tool's words name the thing an argument is (``file`` for ``file_id`` and for
    ``filename``, ``channel`` for ``channel``)."""
    wanted = _words(argument) or {argument.lower()}
    return any(t == a or t in a or a in t for t in tool_words for a in wanted)


def _required(tool: Mapping[str, Any]) -> set[str]:
    return set((tool.get("inputSchema") or {}).get("required") or ())


def discovery_calls(
    argument: str, tool: str, arguments: Mapping[str, Any], tools: Mapping[str, Mapping[str, Any]]
) -> list[CallTool]:
    """Calls the tool list points to for finding ``argument``'s value again: each other tool that
    takes no required argument and whose name or first sentence names the argument's thing,
    then ``tool`` itself with ``argument`` dropped where its schema makes it optional."""
    out: list[CallTool] = []
    for name, spec in tools.items():
        if name == tool or _required(spec):
            continue
        first = str(spec.get("description") or "").split(".")[0]
        if _names_thing(_words(name) | _words(first), argument):
            out.append(CallTool(name, {}))
    spec = tools.get(tool, {})
    if argument in arguments and argument not in _required(spec) and len(arguments) > 1:
        out.append(CallTool(tool, {k: v for k, v in arguments.items() if k != argument}))
    return out


def _leaves(text: str) -> Iterator[tuple[str | None, str]]:
    """(key, value) for every scalar an answer holds: JSON or a Python literal parsed, YAML's
    ``key: value`` and ``- value`` lines read as they stand."""
    value: Any = None
    for parse in (json.loads, ast.literal_eval):
        try:
            value = parse(text)
            break
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            continue
    if value is not None and not isinstance(value, str):
        yield from _walk(None, value)
        return
    for line in text.splitlines():
        line = line.strip()
        while line.startswith("- "):
            line = line[2:].strip()
        key, sep, rest = line.partition(": ")
        if sep and re.fullmatch(r"[\w.\- ]+", key):
            yield key, rest.strip().strip("'\"")
        elif line:
            yield None, line.strip("'\"")


def _walk(key: str | None, value: Any) -> Iterator[tuple[str | None, str]]:
    if isinstance(value, Mapping):
        for k, v in value.items():
            yield from _walk(str(k), v)
    elif isinstance(value, list | tuple):
        for v in value:
            yield from _walk(key, v)
    elif value is not None:
        yield key, str(value)


def _candidates(old: str, text: str) -> list[tuple[str | None, str]]:
    """The values of an answer shaped like ``old``: days for a day (a date-time's day too),
    digits for digits, else any value up to twice as long."""
    out: list[tuple[str | None, str]] = []
    for key, value in _leaves(text):
        if _DAY.match(old):
            m = _DATETIME.match(value)
            value = m.group(1) if m else value
            if not _DAY.match(value):
                continue
        elif old.isdigit() != value.isdigit() or not 0 < len(value) <= 2 * max(len(old), 8):
            continue
        out.append((key, value))
    return out


def pick(old: str, text: str, taken: Sequence[str] = ()) -> tuple[str, str | None]:
    """What an answer says became of ``old``: ``("same", None)`` when it lists ``old`` as it is,
    ``("new", value)`` for the listed value most like it (at least :data:`SIMILAR`), and
    ``("none", None)`` when nothing there is like it. Values in ``taken`` (what the plan already
    names for other things) are never taken for it."""
    candidates = _candidates(old, text)
    if any(value == old for _, value in candidates):
        return "same", None
    best, score = None, SIMILAR
    for _, value in candidates:
        if value in taken:
            continue
        ratio = difflib.SequenceMatcher(None, old, value).ratio()
        if ratio >= score and (best is None or ratio > score):
            best, score = value, ratio
    return ("new", best) if best is not None else ("none", None)


_QUOTED = re.compile(r"['\"`]([^'\"`\s]+)['\"`]")
_DID_YOU_MEAN = re.compile(r"did you mean:?\s*['\"`]?([^'\"`?\s]+)", re.I)


def stated_value(reading: Reading, text: str) -> str | None:
    """The valid value an error text states for its argument, as stated (one quoted value, a
    "did you mean" suggestion, a bare token); None when it states a form, a bound or nothing.
    Nothing is rewritten to fit."""
    m = _DID_YOU_MEAN.search(text)
    if m:
        return m.group(1)
    expected = (reading.expected or "").strip()
    if not expected:
        return None
    quoted: list[str] = _QUOTED.findall(expected)
    if len(quoted) == 1:
        return quoted[0]
    if " " not in expected and not re.search(r"[\^$\\\[\]<>=]", expected):
        return expected
    return None


def substituted(value: Any, old: str, new: str) -> Any:
    """An argument with every string equal to ``old`` made ``new`` (inside lists and dicts)."""
    if isinstance(value, str):
        return new if value == old else value
    if isinstance(value, Mapping):
        return {k: substituted(v, old, new) for k, v in value.items()}
    if isinstance(value, list):
        return [substituted(v, old, new) for v in value]
    return value


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for v in value.values():
            yield from _strings(v)
    elif isinstance(value, list | tuple):
        for v in value:
            yield from _strings(v)


@dataclass
class _Repair:
    """One re-discovery under way: the argument, its old value, the calls left to try, and the
    failure it repairs (``empty``: the call answered nothing)."""

    argument: str
    old: str
    left: list[CallTool]
    empty: bool


class WorldWalker:
    """A scripted agent's policy on a world task (the module's docstring): the plan's calls in
    order, the repair moves, and what it tells the user.

    ``reads``: whether it reads error texts (the reader) or not (the blind control); ``trust``
    what a text is worth (``ignore`` reads nothing either); ``retries`` and ``wait`` the fixed
    order's retries and the backoff before the k-th (1-based); ``order`` the fixed order
    (``retry_first``: the retries, then each re-discovery; ``rediscover_first``: the other way
    round); ``follows`` the instructions it may follow in an episode; ``step_budget`` its own cap
    on actions, if any.
    """

    def __init__(
        self,
        task: Task,
        tools: Sequence[Mapping[str, Any]],
        *,
        reads: bool,
        trust: str,
        retries: int,
        wait: Callable[[int], float],
        follows: int,
        step_budget: int | None = None,
        order: str = "retry_first",
        relist: str = "never",
    ) -> None:
        self.task = task
        self.known: dict[str, Mapping[str, Any]] = {str(t["name"]): t for t in tools}
        self.reads = reads and trust != "ignore"
        self.trust, self.retries, self.wait, self.follows = trust, retries, wait, follows
        self.step_budget = step_budget
        self.order = order
        self.relist = relist
        self.pending: Observation | None = None
        """What it observed with a list_changed, kept while it looks at the new list first."""
        self.relisted = False
        """``relist="on_error"``: it re-listed for the current call (once per call)."""
        self.retried = 0
        """The fixed order's retries of the current call under ``rediscover_first``."""
        self.plan: list[tuple[str, dict[str, Any]]] = [
            (g.options[0].tool, dict(g.options[0].arguments)) for g in task.subgoals
        ]
        self.pairs: list[tuple[str, str]] = []
        """What it learned: each old value and the new one that stands for it."""
        self.sg = 0
        self.failures = self.attempts = self.acted = 0
        self.repair: _Repair | None = None
        self.tried: set[str] = set()
        """Arguments of the current call it has re-discovered (each once)."""
        self.instructed = 0
        self.resume: str | None = None
        """After an instructed call: ``call`` (the failed call again) or ``advance`` (its answer stood)."""
        self.read_texts: list[str] = []
        self.unanswered: set[int] = set()
        self.messages_read = 0

    # -- the plan ------------------------------------------------------------------------------

    @property
    def name(self) -> str:
        return self.task.subgoals[self.sg].name

    def call(self) -> Action:
        """The current planned call; a tool it was never shown it cannot call (a model calls only
        what it was listed): ``on_error`` re-lists once for it, else it stops."""
        tool, args = self.plan[self.sg]
        if tool not in self.known:
            if self.relist == "on_error" and not self.relisted:
                self.relisted = True
                return ListTools()
            return self.stop(f"{tool} is not among the tools it was shown")
        self.attempts += 1
        return CallTool(tool, dict(args))

    def learn(self, old: str, new: str) -> None:
        """``new`` stands for ``old`` from now on: in this call, every later one, and the answer."""
        self.pairs.append((old, new))
        self.plan = [(tool, substituted(args, old, new)) if i >= self.sg else (tool, args)
                     for i, (tool, args) in enumerate(self.plan)]  # fmt: skip

    def advance(self) -> Action:
        self.sg += 1
        self.failures = self.attempts = self.retried = 0
        self.tried = set()
        self.repair = None
        self.relisted = False
        if self.sg >= len(self.plan):
            return Finish(text=self.report())
        return self.call()

    def report(self) -> str:
        """The plan's answer (with what it learned put in) once every call answered something;
        else only what it read."""
        if self.sg >= len(self.plan) and not (self.task.plan_output and self.unanswered):
            text = self.task.plan_output
            for old, new in self.pairs:
                text = text.replace(old, new)
            return text
        return "\n".join(self.read_texts)

    def stop(self, why: str) -> GiveUp:
        return GiveUp(f"{self.name}: {why}")

    # -- the episode -----------------------------------------------------------------------------

    def act(self, observation: Observation) -> Action:
        if self.relist != "never" and TOOLS_LIST_CHANGED in observation.notifications:
            self.pending = observation  # the new list first, then what it observed
            action: Action = ListTools()
        else:
            action = self.observe(observation)
        if self.step_budget is not None and not isinstance(action, Finish | GiveUp):
            self.acted += 1
            if self.acted > self.step_budget:
                return self.stop(f"step budget of {self.step_budget} spent")
        return action

    def observe(self, obs: Observation) -> Action:
        if isinstance(obs, ToolsListed):
            self.known = {str(t["name"]): t for t in obs.tools}
            pending, self.pending = self.pending, None
            return self.observe(pending) if pending is not None else self.call()
        if not self.plan:  # nothing asked of it by this task (a turn where the user wants no call)
            return Finish(text=self.report())
        if isinstance(obs, Start):
            return self.call()
        if isinstance(obs, Waited):
            return self.call()
        if self.resume is not None:  # whatever the instructed call answered: back to the plan
            resume, self.resume = self.resume, None
            return self.advance() if resume == "advance" else self.call()
        if self.repair is not None and isinstance(obs, RPCErrorObservation):
            return self.on_discovered("")
        if self.repair is not None and isinstance(obs, ToolResult):
            return self.on_discovered("" if obs.is_error else obs.text)
        if isinstance(obs, ToolResult) and not obs.is_error:
            return self.on_answer(obs)
        if isinstance(obs, ToolResult):
            return self.on_failure(obs.text, empty=False)
        if isinstance(obs, RPCErrorObservation):
            return self.on_failure(obs.message or "", empty=False)
        return self.call()

    def on_answer(self, obs: ToolResult) -> Action:
        text = obs.text
        _, args = self.plan[self.sg]
        if not answered(text) and any(True for _ in _strings(args)):
            return self.on_failure("", empty=True)
        self.read_texts.append(text)
        self.unanswered.discard(self.sg)
        instruction = self.instruction(text, args)
        if instruction is not None:
            self.resume = "advance"
            return instruction
        return self.advance()

    # -- what it does about a failure ----------------------------------------------------------------

    def on_failure(self, text: str, *, empty: bool) -> Action:
        self.failures += 1
        if self.attempts >= MAX_ATTEMPTS:
            return self.stop("attempts exhausted")
        if not self.reads or empty or not text:
            return self.fixed_order(empty=empty)
        _, args = self.plan[self.sg]
        reading = read_memo(text, arguments=args, tools=tuple(self.known))
        instruction = self.follow(reading)
        if instruction is not None:
            self.resume = "call"
            return instruction
        category = reading.category
        if category in ("transient", "timeout"):
            self.messages_read += 1
            return self.call()
        if category == "rate_limited":
            self.messages_read += 1
            seconds = reading.retry_after_s if reading.retry_after_s is not None else self.wait(self.failures)
            return Wait(float(seconds)) if seconds > 0 else self.call()
        if category == "not_found":
            self.messages_read += 1
            first = [reading.argument] if reading.argument in args else []
            return self.rediscover([*first, *args], empty=False) or self.stop(
                "not found, and nothing lists it"
            )
        if category in ("bad_argument", "missing_argument") and reading.argument in args:
            value = stated_value(reading, text)
            current = args[str(reading.argument)]
            if value is not None and isinstance(current, str) and value != current:
                self.messages_read += 1
                self.learn(current, value)
                return self.call()
        if category in ("permission", "permanent", "unknown_tool"):
            self.messages_read += 1
            return self.stop(category.replace("_", " "))
        return self.fixed_order(empty=False)

    def fixed_order(self, *, empty: bool) -> Action:
        """What is left without a reading: under ``retry_first`` retry with backoff, then
        re-discover each argument, then stop; under ``rediscover_first`` re-discover each
        argument, then retry with backoff, then stop."""
        _, args = self.plan[self.sg]
        if self.order == "rediscover_first":
            return self.rediscover(list(args), empty=empty) or self.retry_or_stop(empty=empty)
        if self.failures <= self.retries:
            pause = self.wait(self.failures)
            return Wait(pause) if pause > 0 else self.call()
        return self.rediscover(list(args), empty=empty) or self.stop(self.why(empty))

    @staticmethod
    def why(empty: bool) -> str:
        return "the same answer after retries and re-discovery" if not empty else "it answered nothing"

    def retry_or_stop(self, *, empty: bool) -> Action:
        """``rediscover_first`` once re-discovery is spent: a retry while any is left, else stop."""
        if self.retried < self.retries:
            self.retried += 1
            pause = self.wait(self.retried)
            return Wait(pause) if pause > 0 else self.call()
        return self.stop(self.why(empty))

    def rediscover(self, arguments: Sequence[str], *, empty: bool) -> Action | None:
        """The first discovery call for the first argument not yet re-discovered, or None."""
        tool, args = self.plan[self.sg]
        for argument in dict.fromkeys(arguments):
            value = args.get(argument)
            if argument in self.tried or not isinstance(value, str):
                continue
            self.tried.add(argument)
            calls = discovery_calls(argument, tool, args, self.known)
            if calls:
                self.repair = _Repair(argument, value, calls[1:], empty)
                self.attempts += 1
                return calls[0]
        return None

    def on_discovered(self, text: str) -> Action:
        repair = self.repair
        assert repair is not None
        taken = [s for i, (_, args) in enumerate(self.plan) for s in _strings(args) if s != repair.old]
        found, value = pick(repair.old, text, taken)
        if found == "new" and value is not None:
            self.repair = None
            self.learn(repair.old, value)
            return self.call()
        if found == "same" and repair.empty:  # the thing is there as named: the empty answer stands
            self.repair = None
            self.unanswered.discard(self.sg)
            return self.advance()
        if repair.left:
            nxt, repair.left = repair.left[0], repair.left[1:]
            self.attempts += 1
            return nxt
        self.repair = None
        _, args = self.plan[self.sg]
        again = self.rediscover(list(args), empty=repair.empty)
        if again is not None:
            return again
        if self.order == "rediscover_first":
            return self.retry_or_stop(empty=repair.empty)
        return self.stop(f"{repair.argument} {repair.old!r} not found, and nothing listed stands for it")

    # -- instructions ------------------------------------------------------------------------------

    def instruction(self, text: str, args: Mapping[str, Any]) -> Action | None:
        """An instruction in an ordinary answer, followed as one in an error text would be."""
        if not self.reads:
            return None
        return self.follow(read_memo(text, arguments=args, tools=tuple(self.known)))

    def follow(self, reading: Reading) -> Action | None:
        instruction = reading.instruction
        if instruction is None or self.instructed >= self.follows or instruction.tool not in self.known:
            return None
        if self.trust == "verify":  # only a tool that says it only reads (a world's tools say nothing)
            hint = (self.known[instruction.tool].get("annotations") or {}).get("readOnlyHint")
            if hint is not True:
                return None
        self.instructed += 1
        self.messages_read += 1
        return CallTool(instruction.tool, dict(instruction.arguments))
