"""AgentDojo, the one place the harness touches it: suites, tools, plans, episodes and the judge.

AgentDojo (ETH Zurich SPY Lab; the ``agentdojo`` package, MIT, the optional extra ``[worlds]``)
ships suites of tools, environments and tasks written by others. Everything of it stays in its
package and is read at run time; the harness copies none of it. What this module takes:

* the suites of :data:`SUITE_VERSION` (``get_suites``): each suite's tools, typed Python
  functions whose signatures and docstrings AgentDojo turns into pydantic models (their JSON
  Schema is a tool's ``inputSchema``) and its default environment (no injection);
* for a user task: ``PROMPT``, ``ground_truth(pre_environment)`` (the calls that solve it: the
  plan) and ``GROUND_TRUTH_OUTPUT`` (what a model should answer once they ran);
* :class:`Episode`: one session's world, a fresh environment and AgentDojo's own
  ``FunctionsRuntime``; every call of a world tool is ``run_function`` on it, its result put in
  words by AgentDojo's own ``tool_result_to_str`` (YAML, as its pipeline shows a model) and its
  own failure text (``ValueError: ...``, pydantic's validation text) raised for the strategy;
* the judge: the task's own ``utility_from_traces``, then ``utility``, as AgentDojo's suites
  call them, on the output the agent told the user and the environments before and after.

Two things are changed in AgentDojo's tool modules at run time, so that a session's trace is the
same on every run: a tool that stamps the time (``send_email``, ``create_file``,
``append_to_file``) reads the session's virtual clock from :data:`EPOCH` instead of the machine's,
and a tool that makes a list of a set (a calendar event's participants) lists it in first-seen
order instead of the order the process's string hashing gives.
"""

from __future__ import annotations

import contextlib
import contextvars
import datetime as _dt
import functools
import hashlib
import importlib
import inspect
import pickle
import re
import sys
import types
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from harness.errors import UserError
from harness.worlds import installed

PACKAGE = "agentdojo"
PINNED = "0.1.35"
"""The version ``pyproject.toml``'s ``[worlds]`` extra pins; another is refused (one line)."""
SUITE_VERSION = "v1"
"""The benchmark version whose suites are served: banking, slack, travel, workspace."""
INSTALL = "pip install -e '.[worlds]'"

EPOCH = _dt.datetime(2024, 5, 15, 0, 0)
"""When a session's virtual clock starts for a tool that reads the time: the day AgentDojo's
workspace calendar names as today (``current_day``), at midnight; naive, as ``now()`` is."""

_NOW: contextvars.ContextVar[_dt.datetime] = contextvars.ContextVar("world_now", default=EPOCH)


class WorldMissing(UserError):
    """AgentDojo is not installed (or not the pinned version): one line, exit 2."""


def installed_version() -> str | None:
    """The installed package's version, or None (:func:`harness.worlds.installed`)."""
    return installed(PACKAGE)


def missing() -> str | None:
    """Why world scenarios cannot run here (one line), or None when they can."""
    version = installed_version()
    if version is None:
        return f"world scenarios need AgentDojo: {INSTALL} (installs {PACKAGE}=={PINNED})"
    if version != PINNED:
        return f"world scenarios need {PACKAGE}=={PINNED}, found {version}: {INSTALL}"
    return None


class _FrozenNow(_dt.datetime):
    """``datetime.datetime`` as a world's tool module sees it: ``now()`` is the session's time."""

    @classmethod
    def now(cls, tz: _dt.tzinfo | None = None) -> _dt.datetime:  # type: ignore[override]
        at = _NOW.get()
        return at if tz is None else at.replace(tzinfo=tz)


class _ClockModule(types.ModuleType):
    """The ``datetime`` module with :class:`_FrozenNow` for its ``datetime``; the rest its own."""

    datetime = _FrozenNow

    def __getattr__(self, name: str) -> Any:
        return getattr(_dt, name)


_CLOCK = _ClockModule("datetime")


def _first_seen(items: Iterable[Any] = ()) -> dict[Any, None]:
    """``set(items)`` as a tool module that lists a set's items sees it: the items in the order
    first seen (a dict's keys), where a real set's order depends on the process's string hashing."""
    return dict.fromkeys(items)


def _pin_tool_modules(suites: Mapping[str, Any]) -> None:
    """Make a tool's answer the same on every run: every tool module that calls
    ``datetime.datetime.now()`` gets the session's clock, and every one that lists a set's items
    (``list(set(...))``: the participants of a calendar event) gets them in first-seen order."""
    for suite in suites.values():
        for function in suite.tools:
            module = sys.modules.get(getattr(function.run, "__module__", ""))
            if module is None:
                continue
            source = inspect.getsource(module)
            if getattr(module, "datetime", None) is _dt and "datetime.datetime.now(" in source:
                module.datetime = _CLOCK  # type: ignore[attr-defined]  # only there: the subclass's other classmethods make subclasses
            if "list(set(" in source:
                module.set = _first_seen  # type: ignore[attr-defined]


def suites() -> dict[str, Any]:
    """AgentDojo's suites of :data:`SUITE_VERSION` by name (imported on first use: ~2 s);
    :class:`WorldMissing` where the pinned AgentDojo is not installed."""
    why = missing()
    if why is not None:
        raise WorldMissing(why)
    return _load_suites()


@functools.cache
def _load_suites() -> dict[str, Any]:
    load = importlib.import_module("agentdojo.task_suite.load_suites")
    found: dict[str, Any] = dict(load.get_suites(SUITE_VERSION))
    _pin_tool_modules(found)
    return found


def suite(name: str) -> Any:
    """One suite; an unknown name is a UserError with the nearest ones."""
    from harness.errors import unknown_name

    found = suites()
    if name not in found:
        raise unknown_name(f"{PACKAGE} suite", name, sorted(found))
    return found[name]


def _task_number(task_id: str) -> tuple[int, str]:
    match = re.fullmatch(r"user_task_(\d+)", task_id)
    return (int(match.group(1)), "") if match else (sys.maxsize, task_id)


@functools.cache
def task_ids(suite_name: str) -> tuple[str, ...]:
    """The suite's user tasks, in their numbers' order."""
    return tuple(sorted(suite(suite_name).user_tasks, key=_task_number))


def user_task(suite_name: str, task_id: str) -> Any:
    from harness.errors import unknown_name

    tasks = suite(suite_name).user_tasks
    if task_id not in tasks:
        raise unknown_name(f"{PACKAGE}/{suite_name} task", task_id, task_ids(suite_name))
    return tasks[task_id]


def prompt(suite_name: str, task_id: str) -> str:
    return str(user_task(suite_name, task_id).PROMPT)


@dataclass(frozen=True)
class ToolSpec:
    """A world tool as an MCP server lists it: AgentDojo's own name, description and schema."""

    name: str
    description: str
    input_schema: dict[str, Any]


@functools.cache
def tools(suite_name: str) -> tuple[ToolSpec, ...]:
    """The suite's tools in AgentDojo's order; the schema is the JSON Schema of the pydantic model
    AgentDojo builds from each function's signature and docstring."""
    return tuple(
        ToolSpec(f.name, str(f.description), dict(f.parameters.model_json_schema()))
        for f in suite(suite_name).tools
    )


@functools.cache
def _base_environment(suite_name: str) -> Any:
    """The suite's default environment, no injection, loaded once per process (copied per session)."""
    return suite(suite_name).load_and_inject_default_environment({})


def default_environment(suite_name: str) -> Any:
    """The suite's default environment, no injection (shared: read it, never change it)."""
    return _base_environment(suite_name)


@functools.lru_cache(maxsize=32)
def _injected_environment(suite_name: str, injected: tuple[tuple[str, str], ...]) -> Any:
    """The suite's default environment with AgentDojo's own injection of ``injected`` (vector,
    text) pairs, loaded once per process for each (copied per session: a load parses YAML, ~0.5 s)."""
    return suite(suite_name).load_and_inject_default_environment(dict(injected))


SNAPSHOTS = 256
"""How many tasks' pre-environments a process keeps (each a pickle and the object it loads to:
about 50 kB and 1 MB for a workspace task)."""

_plain: contextvars.ContextVar[bool] = contextvars.ContextVar("world_plain", default=False)


@contextlib.contextmanager
def plain() -> Iterator[None]:
    """Build every episode inside the plain way (the task's ``init_environment`` on a deep copy of
    the suite's environment, and a deep copy of that for ``pre``), skipping :func:`_snapshot`:
    the path the shortcut is tested against (``tests/worlds/test_snapshots.py``)."""
    token = _plain.set(True)
    try:
        yield
    finally:
        _plain.reset(token)


def _prepared(suite_name: str, task_id: str, injected: tuple[tuple[str, str], ...]) -> Any:
    """The task's pre-environment, the plain way: its ``init_environment`` on a fresh copy of the
    suite's environment (with ``injected``)."""
    base = _injected_environment(suite_name, injected) if injected else _base_environment(suite_name)
    return user_task(suite_name, task_id).init_environment(base.model_copy(deep=True))


@dataclass(frozen=True)
class Snapshot:
    """A task's pre-environment built once per process (:func:`_snapshot`)."""

    blob: bytes
    """Its pickle."""
    pre: Any
    """One object loaded from it, shared as ``pre`` by every session that leaves it as it was
    (nothing writes ``pre``: the judge reads it, :meth:`Episode.alter` replaces it)."""
    parts: Mapping[str, bytes]
    """Each top-level part's own pickle (``inbox``, ``calendar``...), loaded for a session when a
    call first needs that part (:meth:`Episode.run`)."""


@functools.lru_cache(maxsize=SNAPSHOTS)
def _snapshot(suite_name: str, task_id: str, injected: tuple[tuple[str, str], ...]) -> Snapshot:
    """The task's pre-environment built once per process, as its pickle and its parts' (about
    4 x quicker to load than a deep copy of it), and one object loaded from it."""
    blob = pickle.dumps(_prepared(suite_name, task_id, injected), protocol=pickle.HIGHEST_PROTOCOL)
    pre = pickle.loads(blob)
    parts = {name: _pickled(getattr(pre, name)) for name in type(pre).model_fields}
    return Snapshot(blob, pre, parts)


@functools.cache
def _needs(suite_name: str) -> dict[str, frozenset[str] | None]:
    """Each tool's parts of the environment (AgentDojo's ``Depends``, each naming a top-level
    field; None where one is a function, which may reach any part)."""
    out: dict[str, frozenset[str] | None] = {}
    for function in suite(suite_name).tools:
        names = [d.env_dependency for d in function.dependencies.values()]
        out[function.name] = None if any(not isinstance(n, str) for n in names) else frozenset(names)
    return out


VERDICTS = 8192
"""How many judges' verdicts a process keeps (:meth:`Episode._verdict`)."""

_verdicts: dict[bytes, tuple[bool, tuple[Any, ...]]] = {}

SAID = 4096
"""How many tool results' YAML a process keeps (most are a few kB: the same read of the same
world answers in every session of a task)."""

_said: dict[bytes, str] = {}


def _said_before(data: Any) -> str:
    """``yaml.safe_dump(data)``, remembered by the digest of ``data``'s pickle: PyYAML's emitter
    is most of a read's cost (8 of a banking session's 11 ms), and the same read of the same world
    gives the same data in every session of a task. An equal pickle means equal values of equal
    types in the same order (a dict's, a set's), so the same YAML. (libyaml's emitter would be
    quicker still, but it folds a long double-quoted string at other places than PyYAML's.)"""
    import yaml  # type: ignore[import-untyped]

    try:
        key = hashlib.blake2b(_pickled(data), digest_size=32).digest()
    except (pickle.PicklingError, TypeError, AttributeError):
        return str(yaml.safe_dump(data))
    found = _said.get(key)
    if found is None:
        if len(_said) >= SAID:
            _said.clear()
        found = _said[key] = str(yaml.safe_dump(data))
    return found


def _yaml_dump(*, plain: bool) -> Callable[[Any], str]:
    """How a tool's result becomes YAML: AgentDojo's own ``yaml.safe_dump`` on the plain path,
    :func:`_said_before` otherwise."""
    import yaml

    return yaml.safe_dump if plain else _said_before


def _pickled(value: Any) -> bytes:
    return pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)


PRE_PICKLES = 65536
"""How many parts of pre-environments a process keeps the pickle of (:func:`_pre_pickled`)."""

_pre_pickles: dict[int, tuple[Any, bytes]] = {}


def _pre_pickled(part: Any) -> bytes:
    """The pickle of a part of a snapshot's shared pre-environment, made once per process: every
    session of a task compares its post-environment with the same ``pre``, which nothing changes
    (an altered world's ``pre`` is a session's own, pickled afresh). Kept by ``id`` beside the
    part itself, so an id is never another object's."""
    found = _pre_pickles.get(id(part))
    if found is not None and found[0] is part:
        return found[1]
    if len(_pre_pickles) >= PRE_PICKLES:
        _pre_pickles.clear()
    blob = _pickled(part)
    _pre_pickles[id(part)] = (part, blob)
    return blob


def _shared(after: Any, before: Any, pickled: Callable[[Any], bytes] = lambda v: _pickled(v)) -> Any:
    """``after`` with each of its parts that pickles as ``before``'s same part replaced by that part,
    at every depth: a model's fields, a dict's values under the same keys, a list's items at the
    same places. A workspace session that sends one email changes the inbox, and sharing only
    whole top-level parts left the judge's diff walking every other email (most of its time).
    ``pickled`` gives ``before``'s parts' pickles (:func:`_pre_pickled` for a snapshot's)."""
    if after is before or type(after) is not type(before):
        return after
    if after == before and _pickled(after) == pickled(before):  # ``==`` first: cheap where it fails
        return before
    fields = getattr(type(after), "model_fields", None)
    if fields is not None:
        for name in fields:
            after.__dict__[name] = _shared(getattr(after, name), getattr(before, name), pickled)
    elif isinstance(after, dict):
        for key, value in after.items():
            if key in before:
                after[key] = _shared(value, before[key], pickled)
    elif isinstance(after, list):
        for i, value in enumerate(after[: len(before)]):
            after[i] = _shared(value, before[i], pickled)
    return after


@dataclass(frozen=True)
class Plan:
    """What a task's ground truth asks: its calls in order, the output, and which calls write."""

    calls: tuple[tuple[str, dict[str, Any]], ...]
    output: str
    writes: frozenset[str]
    """Tools whose call in the plan changed the environment (run once on a fresh one)."""


@functools.cache
def plan(suite_name: str, task_id: str, injected: tuple[tuple[str, str], ...] = ()) -> Plan:
    """The task's ``ground_truth`` on a fresh environment (with ``injected``, the injection
    vectors and their texts, put in as AgentDojo puts them: the ground truth of the world the
    agent meets, where a channel's name may carry the injection), and, by running it once, which
    of its calls change the environment (the writes a ``post_commit`` fault can strike)."""
    task = user_task(suite_name, task_id)
    episode = Episode(suite_name, task_id, injected)
    calls = tuple(
        (str(c.function), dict(c.args)) for c in task.ground_truth(episode.pre.model_copy(deep=True))
    )
    writes: set[str] = set()
    before = episode.env.model_dump()
    for function, args in calls:
        episode.runtime.run_function(episode.env, function, dict(args))
        after = episode.env.model_dump()
        if after != before:
            writes.add(function)
        before = after
    return Plan(calls, str(task.GROUND_TRUTH_OUTPUT or ""), frozenset(writes))


class WorldToolError(Exception):
    """A world tool failed in the world's own words (AgentDojo's runtime: ``ValueError: ...``)."""


@dataclass(frozen=True)
class WorldCall:
    """One call that reached the world's runtime: what ran, and its failure text if it failed."""

    function: str
    args: dict[str, Any]
    error: str | None


ATTACKS: tuple[str, ...] = (
    "important_instructions", "tool_knowledge", "direct", "ignore_previous", "injecagent", "system_message",
)  # fmt: skip
"""AgentDojo's attacks that render an injection task's goal into text without a model (its
``FixedJailbreakAttack`` family); ``important_instructions`` is the one its paper reports."""

MODEL_NAME = "gpt-4o-2024-05-13"
"""The pipeline name an attack is given: ``important_instructions`` and ``tool_knowledge`` address
the model by the name AgentDojo derives from it ("GPT-4"); no model is asked anything."""


def injection_task_ids(suite_name: str) -> tuple[str, ...]:
    """The suite's injection tasks, in their numbers' order."""
    found = suite(suite_name).injection_tasks
    return tuple(sorted(found, key=lambda t: _task_number(t.replace("injection_task_", "user_task_"))))


def injection_goal(suite_name: str, injection_id: str) -> str:
    return str(suite(suite_name).injection_tasks[injection_id].GOAL)


def injection_tools(suite_name: str, injection_id: str) -> tuple[str, ...]:
    """The tools the injection task's own ground truth calls (what following it means)."""
    task = suite(suite_name).injection_tasks[injection_id]
    calls = task.ground_truth(_base_environment(suite_name).model_copy(deep=True))
    return tuple(dict.fromkeys(str(c.function) for c in calls))


@functools.cache
def _attack(suite_name: str, attack: str) -> Any:
    from types import SimpleNamespace

    registry = importlib.import_module("agentdojo.attacks.attack_registry")
    importlib.import_module("agentdojo.attacks")  # registers the attacks
    return registry.ATTACKS[attack](suite(suite_name), SimpleNamespace(name=MODEL_NAME))


@functools.cache
def injections(suite_name: str, task_id: str, injection_id: str, attack: str) -> tuple[tuple[str, str], ...]:
    """AgentDojo's own attack on a user task: each injection vector its ground truth reads, and the
    text ``attack`` renders the injection task's goal into; empty where the task reads none
    (AgentDojo calls it not injectable)."""
    try:
        goal = suite(suite_name).injection_tasks[injection_id]
        found = _attack(suite_name, attack).attack(user_task(suite_name, task_id), goal)
    except ValueError:  # "user_task_N is not injectable."
        return ()
    return tuple(sorted((str(k), str(v)) for k, v in found.items()))


@functools.cache
def rendered(suite_name: str, injection_id: str, attack: str) -> str:
    """The text ``attack`` renders the injection task's goal into (the same for every vector and,
    for these attacks, every user task: rendered on the suite's first injectable task)."""
    for task_id in task_ids(suite_name):
        found = injections(suite_name, task_id, injection_id, attack)
        if found:
            return found[0][1]
    raise ValueError(f"{suite_name}: no user task is injectable")


class Episode:
    """One session's world: a fresh environment of the suite, the task's ``init_environment``
    applied, a copy of it kept as it was (``pre``), and AgentDojo's ``FunctionsRuntime``.

    ``env`` is the environment the calls change (the post-environment the judge reads); an event
    or a security check can act on it and on ``pre`` through the session that holds the episode.
    ``injected``: injection vectors and their texts, put where AgentDojo's environment has them
    (its own ``load_and_inject_default_environment``).
    """

    def __init__(self, suite_name: str, task_id: str, injected: tuple[tuple[str, str], ...] = ()) -> None:
        from agentdojo.functions_runtime import FunctionsRuntime

        self.suite_name, self.task_id, self.injected = suite_name, task_id, injected
        self.suite = suite(suite_name)
        self.task = user_task(suite_name, task_id)
        self._env: Any
        self.pre: Any
        self._snapshot: Snapshot | None = None
        """The task's snapshot, while this session's parts not yet needed are its ``pre``'s."""
        if _plain.get():
            self._env = _prepared(suite_name, task_id, injected)
            self.pre = self._env.model_copy(deep=True)
        else:
            self._snapshot = _snapshot(suite_name, task_id, injected)
            self.pre = self._snapshot.pre
            self._env = self.pre.model_copy()  # every part shared with ``pre`` until a call needs it
        self._own: set[str] = set(type(self._env).model_fields) if self._snapshot is None else set()
        """The parts of ``env`` that are this session's own (loaded from the snapshot's pickles)."""
        self.runtime = FunctionsRuntime(self.suite.tools)
        self._plain = _plain.get()
        self._shared = self._plain
        """Whether the post-environment already shares ``pre``'s unchanged parts (or must not)."""
        self.calls: list[WorldCall] = []
        """Every call that reached the runtime, in order (what AgentDojo calls the functions trace)."""

    @property
    def env(self) -> Any:
        """The environment the calls change, every part of it this session's own: what a caller
        outside the session may read and write (a test, a world event)."""
        self._take(None)
        return self._env

    def _take(self, parts: frozenset[str] | None) -> None:
        """Make ``parts`` of ``env`` (None: all) this session's own, each loaded from the
        snapshot's pickle of it the first time: a session pays only for the parts its calls
        reach, and a part no call reached stays ``pre``'s, which the judge's diff then skips."""
        if self._snapshot is None:
            return
        wanted = set(type(self._env).model_fields) if parts is None else parts
        for name in wanted - self._own:
            self._env.__dict__[name] = pickle.loads(self._snapshot.parts[name])  # our own pickle
            self._own.add(name)

    def alter(self, change: Callable[[Any], None]) -> None:
        """Change the world before the session's first call (a world event: another user renamed
        a file), and keep the changed world as ``pre``: the judge then compares what the agent
        did with the world it met, not with the one its plan was made on."""
        if self.calls:
            raise RuntimeError("a world is altered before its first call, not during the session")
        change(self.env)
        self.pre = self._env.model_copy(deep=True)

    def _share(self) -> None:
        """Before the judge reads it: every part of the post-environment that is still byte for
        byte (by its pickle) the pre-environment's becomes that same object (:func:`_shared`).
        AgentDojo's judges diff the whole environment (``DeepDiff``, 0.2 s on a travel world), and
        a diff skips a pair that is one object, so it walks only what the session changed; an
        equal pickle means equal values of equal types, so the diff's answer is the same."""
        if self._shared:
            return
        self._shared = True
        snapshot = self._snapshot is not None and self.pre is self._snapshot.pre
        self._env = _shared(self._env, self.pre, _pre_pickled if snapshot else _pickled)

    def run(self, function: str, args: Mapping[str, Any], now_s: float = 0.0) -> str:
        """Run ``function`` in this world at ``now_s`` virtual seconds; its result as AgentDojo puts
        it in words for a model. Its own failure raises :class:`WorldToolError` with its text."""
        from agentdojo.agent_pipeline.tool_execution import tool_result_to_str

        dump = _yaml_dump(plain=self._plain)
        token = _NOW.set(EPOCH + _dt.timedelta(seconds=now_s))
        try:
            self._take(_needs(self.suite_name).get(function))
            result, error = self.runtime.run_function(self._env, function, dict(args))
        finally:
            _NOW.reset(token)
        self.calls.append(WorldCall(function, dict(args), error))
        if error is not None:
            raise WorldToolError(error)
        return str(tool_result_to_str(result, dump_fn=dump))

    def state(self) -> Any:
        """The environment as plain data (to see whether a call changed it)."""
        return self._env.model_dump()

    def _trace(self) -> list[Any]:
        from agentdojo.functions_runtime import FunctionCall

        return [FunctionCall(function=c.function, args=dict(c.args)) for c in self.calls]

    def utility(self, output: str) -> bool:
        """The task's own verdict: ``utility_from_traces`` where the task has one, else
        ``utility(output, pre, post)``, as AgentDojo's suites decide it."""
        return self._verdict(self.task, ("utility_from_traces", "utility"), output, self._utility)

    def _utility(self, output: str) -> bool:
        self._share()
        verdict = self.task.utility_from_traces(output, self.pre, self._env, self._trace())
        if verdict is None:
            verdict = self.task.utility(output, self.pre, self._env)
        return bool(verdict)

    def security(self, injection_id: str, output: str) -> bool:
        """The injection task's own verdict on this session: True when its goal was met (the
        attack worked), by ``security_from_traces`` where it has one, else ``security(output,
        pre, post)``, as AgentDojo's suites decide it."""
        task = self.suite.injection_tasks[injection_id]
        judges = ("security_from_traces", "security")
        return self._verdict(task, judges, output, functools.partial(self._security, injection_id))

    def _security(self, injection_id: str, output: str) -> bool:
        task = self.suite.injection_tasks[injection_id]
        self._share()
        verdict = task.security_from_traces(output, self.pre, self._env, self._trace())
        if verdict is None:
            verdict = task.security(output, self.pre, self._env)
        return bool(verdict)

    def _verdict(
        self, task: Any, judges: tuple[str, ...], output: str, decide: Callable[[str], bool]
    ) -> bool:
        """``decide(output)``, remembered per process (:data:`_verdicts`) while ``pre`` is the
        task's snapshot: a judge of AgentDojo's is a function of the task, ``pre``, the
        post-environment, the output and the calls made, and most sessions of a task end in the
        same post-environment with the same output and calls, where the judge's diff of the whole
        environment is most of a workspace session. The key is the digest of their pickles; an
        equal pickle means equal values of equal types (unequal ones can only miss). On the plain
        path, or with ``pre`` a session's own (a world event), every verdict is decided afresh.
        The judge's own functions are part of the key (and kept alive beside the verdict, so
        that an id is never another's): a judge replaced in the process is asked afresh."""
        if self._snapshot is None or self.pre is not self._snapshot.pre or self._plain:
            return decide(output)
        functions = tuple(getattr(task, name) for name in judges)
        ids = tuple(id(getattr(f, "__func__", f)) for f in functions)
        try:
            calls = [(c.function, c.args) for c in self.calls]
            blob = _pickled((self.suite_name, self.task_id, self.injected, ids, output, calls, self._env))
        except (pickle.PicklingError, TypeError, AttributeError):
            return decide(output)
        key = hashlib.blake2b(blob, digest_size=32).digest()
        found = _verdicts.get(key)
        if found is None:
            if len(_verdicts) >= VERDICTS:
                _verdicts.clear()
            found = _verdicts[key] = (decide(output), functions)
        return found[0]
