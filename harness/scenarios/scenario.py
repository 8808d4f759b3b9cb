"""Scenario files: what a session asks of the agent, and what goes wrong on the way.

A scenario is a TOML file in ``scenarios/`` (or anywhere, by path), validated
completely on load: every mistake is a :class:`ScenarioError` whose message is
``file: field: what is wrong`` (the CLI prints it and exits 2). The format::

    description = "One paragraph: what this scenario tests."
    tools = ["weather", "forecast"]        # catalogue names served from the start
    allowed = ["weather"]                  # optional allow-list (default: every tool)
    max_steps = 40                         # the agent's step budget
    step_cost_s = 1.0                      # virtual seconds per step
    call_timeout_s = 30.0                  # a hung call fails after this (virtual)
    deadline_s = 60.0                      # optional: virtual seconds the task must be done in
    list_ttl_s = 0.0                       # stateless era: seconds a tools/list stays fresh (ttlMs)
    protocol = "2025-11-25"                # the version the client asks for

    [task]
    prompt = "What a person would ask."
    [[task.subgoals]]                      # ordered; each has an end-state check
    name = "oslo"
    tool = "weather"
    arguments = { city = "Oslo" }
    alternatives = [{ tool = "forecast", arguments = { location = "Oslo" } }]
    verify = { tool = "list_bookings" }   # optional: the read that shows a write happened
    expect = { date = "2025-03-14" }      # optional: values the end state must hold instead
    tolerance = { amount = 0.01 }         # optional: how far a number may be off, or "any"

    [[faults]]                             # see harness.faults.kinds for the kinds
    kind = "transient"
    tool = "weather"
    rate = 0.3                             # or calls = [1, 3]
    explicit = true                        # or quality = "explicit" | "vague" | "absent" |
                                           #   "misleading" | "adversarial"
    message = "{tool} is busy; try again"  # optional: the text, with placeholders
    source = "fastmcp"                     # or: where the text comes from (harness.faults.sources)

    [[events]]                             # changes to the tool list mid-session
    kind = "add_tool"                      # add_tool | remove_tool | change_schema | revoke
    tool = "forecast"
    at_step = 2                            # or at_call = 3 (tool calls so far)
    notify = true                          # send notifications/tools/list_changed
    variant = "v2"                         # change_schema only: the catalogue variant

Unknown keys are errors, so a typo never silently drops a fault.
"""

from __future__ import annotations

import dataclasses
import functools
import tomllib
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any, ClassVar

from harness.errors import UserError, loads_toml, unknown_name
from harness.faults.kinds import (
    FAULT_KIND_TABLE,
    FAULT_KINDS,
    PLACEHOLDERS,
    QUALITIES,
    RULE_KEYS,
    FaultKey,
    FaultRule,
)
from harness.faults.sources import SOURCES, TEMPLATE
from harness.protocol.tools import Tool
from harness.protocol.versions import LATEST_VERSION, SUPPORTED_VERSIONS
from harness.sim.catalogue import CATALOGUE


def _shipped_dir() -> Path:
    # A checkout (or an editable install) reads the top-level ``scenarios/``; a wheel carries
    # the same files as ``harness/scenarios/shipped/`` (setup.py maps that package to the folder).
    checkout = Path(__file__).resolve().parents[2] / "scenarios"
    if checkout.is_dir():
        return checkout
    return Path(str(resources.files("harness.scenarios") / "shipped"))


SCENARIO_DIR = _shipped_dir()
"""Where the shipped scenarios live: the checkout's ``scenarios/``, or the installed package's."""

EVENT_KINDS: tuple[str, ...] = ("add_tool", "remove_tool", "change_schema", "revoke")

MAX_STEPS_LIMIT = 10_000


class ScenarioError(UserError):
    """A scenario file is wrong; the message is ``file: field: what is wrong``."""


@dataclass(frozen=True)
class Option:
    """One way to do a subgoal: call ``tool`` with ``arguments``."""

    tool: str
    arguments: Mapping[str, Any] = field(default_factory=dict)


ANY = "any"
"""A ``tolerance`` value: any value of the argument satisfies the task."""


@dataclass(frozen=True)
class Subgoal:
    """A step of the task, and its end-state check (:mod:`harness.scenarios.outcome`).

    A read option is done by a real (unfaulted) call whose arguments satisfy it; a write
    option by a record in the store that does. ``expect`` holds the values the end state must
    have where they differ from the options' arguments (the form a tool stores, when the task
    words it otherwise); ``tolerance`` how far a numeric argument may be off (a number), or
    :data:`ANY` for an argument whose value the task does not fix.
    """

    name: str
    options: tuple[Option, ...]
    verify: Option | None = None
    expect: Mapping[str, Any] = field(default_factory=dict)
    tolerance: Mapping[str, float | str] = field(default_factory=dict)
    after: tuple[str, ...] = ()
    """Subgoals (by name) that must be done before this one counts: a write that depends on a
    read ("book if it is dry") counts only once the read is done."""

    @property
    def tools(self) -> tuple[str, ...]:
        return tuple(o.tool for o in self.options)


ORDERS: tuple[str, ...] = ("strict", "any")
"""A task's ``order``: ``strict`` (the default: each subgoal counts only after the one before it)
or ``any`` (only the ``after`` of each subgoal binds)."""


EMPTY_ANSWERS: frozenset[str] = frozenset({"", "[]", "{}"})
"""Result texts that answer nothing: an empty string (AgentDojo's ``read_file`` of a missing
file), an empty list (a search for a name nothing has any more), an empty object."""


def answered(text: str) -> bool:
    """Whether a call's result says something a report can be written from (not one of
    :data:`EMPTY_ANSWERS`): a model that read only ``[]`` cannot tell the user what the plan's
    author read there."""
    return text.strip() not in EMPTY_ANSWERS


@dataclass(frozen=True)
class Task:
    """What the agent is asked to do: subgoals, in the stated order unless ``order = "any"``."""

    prompt: str
    subgoals: tuple[Subgoal, ...]
    order: str = "strict"
    plan_output: str = ""
    """What the task's author says the agent should tell the user once every call of its plan has
    answered (a world task's ground-truth output, docs/worlds.md); empty for the harness's own
    tasks. A scripted agent that got an answer (:func:`answered`) to every call of its plan
    reports it in ``Finish.text``, standing in for the model that would have written it from what
    it read."""
    world: str = ""
    """The world the task comes from (``agentdojo``), empty for the harness's own: on a world a
    scripted agent repairs only with what the texts, the world's tool list and earlier results
    say (``scripted_agents/world.py``), never with the harness's own fixes."""

    @functools.cached_property
    def predecessors(self) -> tuple[tuple[int, ...], ...]:
        """For each subgoal, the subgoals that must be done before it counts (computed once)."""
        names = {g.name: j for j, g in enumerate(self.subgoals)}
        out = []
        for i, goal in enumerate(self.subgoals):
            before = {names[n] for n in goal.after}
            if self.order == "strict" and i > 0:
                before.add(i - 1)
            out.append(tuple(sorted(before)))
        return tuple(out)

    @functools.cached_property
    def tools_needed(self) -> frozenset[str]:
        """Tools the subgoals call or verify with: a call of any other is one no task needs."""
        return frozenset(
            t for g in self.subgoals for t in (*g.tools, *((g.verify.tool,) if g.verify else ()))
        )


@dataclass(frozen=True)
class Event:
    """A change to the server's tools at a step (or after a number of tool calls): one class for
    a scenario's ``[[events]]`` and a proxy faults file's (``harness.proxy.ProxyEvent``)."""

    index: int
    kind: str
    tool: str
    at_step: int | None = None
    """Fires at this step of the session; behind the proxy, once this many client requests (any
    method) have been answered."""
    at_call: int | None = None
    """Fires once this many ``tools/call`` requests have been answered."""
    notify: bool = True
    variant: str | Mapping[str, str] | None = None
    """change_schema: a catalogue variant's name, or (behind the proxy) a table of renames (old
    name = new name)."""

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": self.kind, "tool": self.tool, "notify": self.notify}
        if self.variant is not None:
            out["variant"] = self.variant if isinstance(self.variant, str) else dict(self.variant)
        return out


@dataclass(frozen=True)
class Scenario:
    """A validated scenario. Frozen; :meth:`with_overrides` returns a changed copy."""

    session_kind: ClassVar[str] = "simulated"
    """Which kind of session runs it (:func:`harness.batch.kinds.kind_for`)."""

    name: str
    description: str
    path: Path | None
    tools: tuple[str, ...]
    task: Task
    faults: tuple[FaultRule, ...] = ()
    events: tuple[Event, ...] = ()
    allowed: tuple[str, ...] | None = None
    max_steps: int = 40
    step_cost_s: float = 1.0
    call_timeout_s: float = 30.0
    protocol: str = LATEST_VERSION
    summary: str = ""
    overrides: tuple[tuple[str, Any], ...] = ()
    deadline_s: float | None = None
    list_ttl_s: float = 0.0
    """Stateless era: the ``ttlMs`` the server puts on ``tools/list`` results (virtual seconds;
    0, the default: no caching hint). A client honours it, so a tool removed without notice
    can still be in the list it reuses."""
    """Virtual seconds the task must be done in; None: no deadline (``harness.session.simulated``)."""

    @property
    def all_tools(self) -> tuple[str, ...]:
        """Tools served at any point: the initial ones, then those events add."""
        added = [e.tool for e in self.events if e.kind == "add_tool" and e.tool not in self.tools]
        return self.tools + tuple(dict.fromkeys(added))

    def with_overrides(self, overrides: Mapping[str, Any]) -> Scenario:
        """A copy with sweep parameters changed, e.g. ``{"faults.rate": 0.2}``.

        Keys: ``faults.rate`` (every rule that uses a rate), ``faults.<kind>.rate``,
        ``faults.explicit`` (every rule but silent ones), ``faults.quality`` (every raising
        rule that can speak: its message's quality, with the row's text), ``faults.source``
        (every raising rule: where its text comes from, :mod:`harness.faults.sources`), ``alternatives``
        (false drops every subgoal's alternatives; true keeps them), ``max_steps``,
        ``step_cost_s``, ``call_timeout_s``, ``deadline_s``, ``list_ttl_s``. The name is kept on
        purpose: seeds derive from it, so the swept copies meet the same random draws.
        """
        out = self
        for key, value in overrides.items():
            apply = _OVERRIDES.get(key)
            if apply is None:
                raise ScenarioError(
                    f"{_display(self.path, self.name)}: overrides.{key}: unknown override "
                    f"(valid: {', '.join(sorted(_OVERRIDES))})"
                )
            out = apply(out, value, f"{_display(self.path, self.name)}: overrides.{key}")
        return dataclasses.replace(out, overrides=self.overrides + tuple(overrides.items()))


def _rate_value(value: Any, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0.0 <= float(value) <= 1.0:
        raise ScenarioError(f"{where}: must be a number between 0 and 1, got {value!r}")
    return float(value)


def _set_rate(kind: str | None) -> Callable[[Scenario, Any, str], Scenario]:
    def apply(s: Scenario, value: Any, where: str) -> Scenario:
        rate = _rate_value(value, where)
        faults = tuple(
            dataclasses.replace(r, rate=rate) if r.rate is not None and kind in (None, r.kind) else r
            for r in s.faults
        )
        return dataclasses.replace(s, faults=faults)

    return apply


def _bool_value(value: Any, where: str) -> bool:
    """A boolean override: true or false, or its text (``--set`` passes ``"false"``)."""
    if isinstance(value, str) and value.lower() in ("true", "false"):
        return value.lower() == "true"
    if not isinstance(value, bool):
        raise ScenarioError(f"{where}: must be true or false, got {value!r}")
    return value


def _set_explicit(s: Scenario, value: Any, where: str) -> Scenario:
    value = _bool_value(value, where)
    faults = tuple(
        dataclasses.replace(r, explicit=value, quality=None, message=None)
        if FAULT_KIND_TABLE[r.kind].never_explicit is None
        else r
        for r in s.faults
    )
    return dataclasses.replace(s, faults=faults)


def _set_quality(s: Scenario, value: Any, where: str) -> Scenario:
    if value not in QUALITIES:
        raise ScenarioError(f"{where}: unknown quality {value!r} (valid: {', '.join(QUALITIES)})")
    faults = tuple(
        dataclasses.replace(r, quality=value, explicit=value != "absent", message=None)
        if FAULT_KIND_TABLE[r.kind].raises and FAULT_KIND_TABLE[r.kind].never_explicit is None
        else r
        for r in s.faults
    )
    return dataclasses.replace(s, faults=faults)


def _set_source(s: Scenario, value: Any, where: str) -> Scenario:
    if value not in SOURCES:
        raise ScenarioError(f"{where}: unknown source {value!r} (valid: {', '.join(SOURCES)})")
    faults = tuple(
        dataclasses.replace(r, source=value, message=None) if FAULT_KIND_TABLE[r.kind].raises else r
        for r in s.faults
    )
    return dataclasses.replace(s, faults=faults)


def _set_alternatives(s: Scenario, value: Any, where: str) -> Scenario:
    if _bool_value(value, where):
        return s  # the scenario's own alternatives
    subgoals = tuple(dataclasses.replace(g, options=g.options[:1]) for g in s.task.subgoals)
    return dataclasses.replace(s, task=dataclasses.replace(s.task, subgoals=subgoals))


def _ttl_value(value: Any, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
        raise ScenarioError(f"{where}: must be a number of seconds, 0 or more, got {value!r}")
    return float(value)


def _set_number(name: str, integer: bool) -> Callable[[Scenario, Any, str], Scenario]:
    def apply(s: Scenario, value: Any, where: str) -> Scenario:
        ok = isinstance(value, int) if integer else isinstance(value, int | float)
        if isinstance(value, bool) or not ok or value <= 0:
            raise ScenarioError(
                f"{where}: must be a positive {'integer' if integer else 'number'}, got {value!r}"
            )
        changes: dict[str, Any] = {name: value if integer else float(value)}
        return dataclasses.replace(s, **changes)

    return apply


_OVERRIDES: dict[str, Callable[[Scenario, Any, str], Scenario]] = {
    "faults.rate": _set_rate(None),
    **{f"faults.{k}.rate": _set_rate(k) for k in FAULT_KINDS},
    "faults.explicit": _set_explicit,
    "faults.quality": _set_quality,
    "faults.source": _set_source,
    "alternatives": _set_alternatives,
    "max_steps": _set_number("max_steps", True),
    "step_cost_s": _set_number("step_cost_s", False),
    "call_timeout_s": _set_number("call_timeout_s", False),
    "deadline_s": _set_number("deadline_s", False),
    "list_ttl_s": lambda s, value, where: dataclasses.replace(s, list_ttl_s=_ttl_value(value, where)),
}


# -- loading ------------------------------------------------------------------------------


def shipped_names(folder: Path) -> list[str]:
    """The names shipped in ``folder``: its ``*.toml`` file stems, sorted."""
    return sorted(p.stem for p in folder.glob("*.toml"))


def shipped_or_path(name_or_path: str, folder: Path, what: str, error: type[UserError]) -> Path:
    """The file a shipped name (in ``folder``) or a path stands for. A missing path raises
    ``error`` as ``path: file: no such <what> file``; an unknown name a UserError naming the
    nearest shipped ones. Scenarios and families are found the same way."""
    path = Path(name_or_path)
    if name_or_path.endswith(".toml") or path.parent != Path("."):
        if not path.is_file():
            raise error(f"{name_or_path}: file: no such {what} file")
        return path
    shipped = folder / f"{name_or_path}.toml"
    if not shipped.is_file():
        raise unknown_name(what, name_or_path, shipped_names(folder))
    return shipped


def list_scenarios() -> list[str]:
    """The shipped scenario names (file stems in ``scenarios/``), sorted."""
    return shipped_names(SCENARIO_DIR)


def scenario_path(name_or_path: str) -> Path:
    """The file a shipped name or a path stands for; an unknown name is a UserError."""
    return shipped_or_path(name_or_path, SCENARIO_DIR, "scenario", ScenarioError)


def load_scenario(name_or_path: str) -> Scenario:
    """Load and validate a scenario by shipped name (``"flaky_weather"``) or by path."""
    path = scenario_path(name_or_path)
    shown = _display(path, name_or_path)
    try:
        data = loads_toml(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise ScenarioError(f"{shown}: toml: {exc}") from None
    except UnicodeDecodeError:
        raise ScenarioError(f"{shown}: file: not UTF-8 text") from None
    return parse_scenario(data, path=path, shown=shown)


def _display(path: Path | None, fallback: str) -> str:
    if path is None:
        return fallback
    try:
        return str(path.resolve().relative_to(Path.cwd()))
    except ValueError:
        return str(path)


class _Table:
    """Typed reads from one TOML table, each failure naming ``file: field``."""

    def __init__(self, shown: str, where: str, data: Any) -> None:
        self.shown, self.where = shown, where
        if not isinstance(data, dict):
            raise ScenarioError(f"{shown}: {where or 'scenario'}: must be a table, got {_kind(data)}")
        self.data: dict[str, Any] = data
        self.used: set[str] = set()

    def field_name(self, key: str) -> str:
        return f"{self.where}.{key}" if self.where else key

    def fail(self, key: str, what: str) -> ScenarioError:
        return ScenarioError(f"{self.shown}: {self.field_name(key)}: {what}")

    def get(self, key: str) -> Any:
        self.used.add(key)
        return self.data.get(key)

    def has(self, key: str) -> bool:
        return key in self.data

    def string(self, key: str, default: str | None = None) -> str:
        value = self.get(key)
        if value is None:
            if default is None:
                raise self.fail(key, "missing (a string is required)")
            return default
        if not isinstance(value, str):
            raise self.fail(key, f"must be a string, got {_kind(value)}")
        return value

    def integer(self, key: str, default: int | None, low: int = 1, high: int = MAX_STEPS_LIMIT) -> int | None:
        value = self.get(key)
        if value is None:
            return default
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.fail(key, f"must be an integer, got {_kind(value)}")
        if not low <= value <= high:
            raise self.fail(key, f"must be between {low} and {high}, got {value}")
        return value

    def number(self, key: str, default: float | None, *, positive: bool = True) -> float | None:
        value = self.get(key)
        if value is None:
            return default
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise self.fail(key, f"must be a number, got {_kind(value)}")
        if positive and value <= 0:
            raise self.fail(key, f"must be positive, got {value}")
        return float(value)

    def boolean(self, key: str, default: bool) -> bool:
        value = self.get(key)
        if value is None:
            return default
        if not isinstance(value, bool):
            raise self.fail(key, f"must be true or false, got {_kind(value)}")
        return value

    def strings(self, key: str, required: bool = False) -> list[str] | None:
        value = self.get(key)
        if value is None:
            if required:
                raise self.fail(key, "missing (a list of strings is required)")
            return None
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise self.fail(key, f"must be a list of strings, got {_kind(value)}")
        return value

    def tables(self, key: str) -> list[Any]:
        value = self.get(key)
        if value is None:
            return []
        if not isinstance(value, list):
            raise self.fail(key, f"must be an array of tables, got {_kind(value)}")
        return value

    def done(self, allowed: set[str] | None = None) -> None:
        extra = sorted(set(self.data) - (allowed if allowed is not None else self.used))
        if extra:
            valid = ", ".join(sorted(allowed if allowed is not None else self.used))
            raise self.fail(extra[0], f"unknown key (valid here: {valid})")


def _kind(value: Any) -> str:
    names = {
        bool: "a boolean",
        int: "an integer",
        float: "a number",
        str: "a string",
        list: "an array",
        dict: "a table",
    }
    return names.get(type(value), type(value).__name__)


_TOP_KEYS = {
    "name", "description", "summary", "tools", "allowed", "max_steps", "step_cost_s",
    "call_timeout_s", "protocol", "task", "faults", "events", "deadline_s", "list_ttl_s",
}  # fmt: skip

_RULE_KEYS = set(RULE_KEYS)


def parse_scenario(data: dict[str, Any], *, path: Path | None = None, shown: str = "<scenario>") -> Scenario:
    """Validate a parsed TOML document; every problem raises a ScenarioError."""
    top = _Table(shown, "", data)
    top.done(_TOP_KEYS)
    name = top.string("name", path.stem if path is not None else "scenario")
    description = " ".join(top.string("description").split())
    if not description:
        raise top.fail("description", "must not be empty")
    summary = top.string("summary", description.split(". ")[0].rstrip(".") + ".")
    tools = top.strings("tools", required=True) or []
    if not tools:
        raise top.fail("tools", "must name at least one tool")
    for i, t in enumerate(tools):
        if t not in CATALOGUE:
            raise _unknown_tool(shown, f"tools[{i}]", t)
        if tools.index(t) != i:
            raise top.fail(f"tools[{i}]", f"{t!r} is listed twice")
    max_steps = top.integer("max_steps", 40) or 40
    step_cost = top.number("step_cost_s", 1.0) or 1.0
    call_timeout = top.number("call_timeout_s", 30.0) or 30.0
    deadline = top.number("deadline_s", None)
    list_ttl = top.number("list_ttl_s", 0.0, positive=False) or 0.0
    if list_ttl < 0:
        raise top.fail("list_ttl_s", f"must be 0 or more, got {list_ttl:g}")
    protocol = top.string("protocol", LATEST_VERSION)
    if protocol not in SUPPORTED_VERSIONS:
        raise top.fail(
            "protocol", f"unsupported version {protocol!r} (valid: {', '.join(SUPPORTED_VERSIONS)})"
        )

    events = tuple(_event(shown, i, raw, tools) for i, raw in enumerate(top.tables("events")))
    served = list(tools) + [e.tool for e in events if e.kind == "add_tool"]
    allowed_list = top.strings("allowed")
    if allowed_list is not None:
        for i, t in enumerate(allowed_list):
            if t not in served:
                raise _unknown_tool(shown, f"allowed[{i}]", t, served)
    if not top.has("task"):
        raise top.fail("task", "missing (a [task] table with [[task.subgoals]] is required)")
    task = _task(shown, top.get("task"), served)
    faults = tuple(_fault(shown, i, raw, served) for i, raw in enumerate(top.tables("faults")))
    return Scenario(
        name=name,
        description=description,
        path=path,
        tools=tuple(tools),
        task=task,
        faults=faults,
        events=events,
        allowed=None if allowed_list is None else tuple(allowed_list),
        max_steps=max_steps,
        step_cost_s=step_cost,
        call_timeout_s=call_timeout,
        protocol=protocol,
        summary=summary,
        deadline_s=deadline,
        list_ttl_s=list_ttl,
    )


def _unknown_tool(shown: str, where: str, name: str, served: list[str] | None = None) -> ScenarioError:
    if served is not None and name in CATALOGUE:
        return ScenarioError(
            f"{shown}: {where}: tool {name!r} is not served by this scenario (add it to tools)"
        )
    hint = unknown_name("tool", name, CATALOGUE)
    return ScenarioError(f"{shown}: {where}: {hint}")


def _option(shown: str, where: str, raw: Any, served: list[str]) -> Option:
    table = _Table(shown, where, raw)
    table.done({"tool", "arguments"})
    tool = table.string("tool")
    if tool not in served:
        raise _unknown_tool(shown, f"{where}.tool", tool, served)
    arguments = table.get("arguments")
    if arguments is None:
        arguments = {}
    if not isinstance(arguments, dict):
        raise table.fail("arguments", f"must be a table, got {_kind(arguments)}")
    spec = CATALOGUE[tool]
    problem = Tool(tool, lambda **_: None, spec.schema).argument_problem(arguments)
    if problem is not None:
        raise table.fail("arguments", f"do not fit {tool}'s inputSchema: {problem}")
    return Option(tool, dict(arguments))


SubgoalMaker = Callable[[str, "_Table", Mapping[str, Any], Sequence[Subgoal]], Subgoal]
"""Builds one ``[[task.subgoals]]`` entry: (where, its table, its raw keys, the subgoals before it)."""


def task_table(shown: str, raw: Any, keys: Collection[str], subgoal: SubgoalMaker) -> Task:
    """A ``[task]`` table's rules, one place for every scenario format (ours and a served one's):
    only ``prompt``, ``subgoals`` and ``order``; a known order; at least one subgoal, each with
    only ``keys`` and built by ``subgoal``; no two subgoals of one name."""
    table = _Table(shown, "task", raw)
    table.done({"prompt", "subgoals", "order"})
    prompt = table.string("prompt", "")
    order = table.string("order", "strict")
    if order not in ORDERS:
        raise table.fail("order", f"unknown order {order!r} (valid: {', '.join(ORDERS)})")
    raws = table.tables("subgoals")
    if not raws:
        raise table.fail("subgoals", "missing (at least one [[task.subgoals]] is required)")
    subgoals: list[Subgoal] = []
    for i, sub in enumerate(raws):
        where = f"task.subgoals[{i}]"
        st = _Table(shown, where, sub)
        st.done(set(keys))
        subgoals.append(subgoal(where, st, sub, subgoals))
    names = [g.name for g in subgoals]
    if len(set(names)) != len(names):
        dup = next(n for n in names if names.count(n) > 1)
        raise table.fail("subgoals", f"two subgoals are named {dup!r}; names must differ (after names them)")
    return Task(prompt, tuple(subgoals), order)


_SUBGOAL_KEYS: tuple[str, ...] = (
    "name", "tool", "arguments", "alternatives", "verify", "expect", "tolerance", "after",
)  # fmt: skip
"""The keys of one of our scenarios' ``[[task.subgoals]]``."""


def _task(shown: str, raw: Any, served: list[str]) -> Task:
    def subgoal(where: str, st: _Table, sub: Mapping[str, Any], before: Sequence[Subgoal]) -> Subgoal:
        first = _option(shown, where, {k: v for k, v in sub.items() if k in ("tool", "arguments")}, served)
        options = [first]
        for j, alt in enumerate(st.tables("alternatives")):
            options.append(_option(shown, f"{where}.alternatives[{j}]", alt, served))
        verify = st.get("verify")
        checked = None if verify is None else _option(shown, f"{where}.verify", verify, served)
        expect = _expect(st, options)
        _known_values(shown, where, options, expect, checked)
        return Subgoal(
            st.string("name", f"subgoal {len(before) + 1}"),
            tuple(options),
            checked,
            expect,
            _tolerance(st, options),
            _after(st, [g.name for g in before]),
        )

    return task_table(shown, raw, _SUBGOAL_KEYS, subgoal)


def _known_values(
    shown: str, where: str, options: list[Option], expect: Mapping[str, Any], verify: Option | None
) -> None:
    """Every value the end state needs names something its tool knows (a city with a station, a
    table): the value ``expect`` gives where it gives one, else the option's. A tool asked for a
    city it does not know fails on every call, so no agent could do the subgoal, and the session
    would only say that its budget ran out (:class:`harness.sim.catalogue.ValueSet`)."""
    places = [(f"{where}.alternatives[{j - 1}]" if j else where, o) for j, o in enumerate(options)]
    if verify is not None:
        places.append((f"{where}.verify", verify))
    for at, option in places:
        spec = CATALOGUE[option.tool]
        if not spec.values:
            continue
        takes = spec.schema.get("properties", {})
        from_expect = {k: v for k, v in expect.items() if k in takes and option is not verify}
        found = spec.value_problem({**option.arguments, **from_expect})
        if found is not None:
            name, problem = found
            field = f"{where}.expect.{name}" if name in from_expect else f"{at}.arguments.{name}"
            raise ScenarioError(f"{shown}: {field}: {problem}")


def _after(st: _Table, earlier: list[str]) -> tuple[str, ...]:
    """The ``after`` key: names of earlier subgoals (so there is never a cycle)."""
    raw = st.get("after")
    if raw is None:
        return ()
    names = [raw] if isinstance(raw, str) else raw
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        raise st.fail("after", f"must be a subgoal name or a list of them, got {raw!r}")
    for name in names:
        if name not in earlier:
            known = ", ".join(repr(n) for n in earlier) or "none"
            raise st.fail("after", f"{name!r} is not an earlier subgoal (earlier: {known})")
    return tuple(names)


def _takers(st: _Table, key: str, name: str, options: list[Option]) -> list[Option]:
    """The options whose tool takes argument ``name``; none is an error at ``key.name``."""
    takers = [o for o in options if name in CATALOGUE[o.tool].schema.get("properties", {})]
    if not takers:
        takes = "; ".join(
            f"{tool} takes {', '.join(CATALOGUE[tool].schema.get('properties', {})) or 'nothing'}"
            for tool in dict.fromkeys(o.tool for o in options)
        )
        raise st.fail(f"{key}.{name}", f"no option's tool takes an argument {name!r} ({takes})")
    return takers


def _expect(st: _Table, options: list[Option]) -> dict[str, Any]:
    raw = st.get("expect")
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise st.fail("expect", f"must be a table of argument = value, got {_kind(raw)}")
    for name, value in raw.items():
        if isinstance(value, dict | list):
            raise st.fail(f"expect.{name}", f"must be a string, a number or a boolean, got {_kind(value)}")
        for option in _takers(st, "expect", name, options):
            spec = CATALOGUE[option.tool]
            wanted = {**option.arguments, name: value}
            problem = Tool(option.tool, lambda **_: None, spec.schema).argument_problem(wanted)
            if problem is not None:
                raise st.fail(f"expect.{name}", f"does not fit {option.tool}'s inputSchema: {problem}")
    return dict(raw)


def _tolerance(st: _Table, options: list[Option] | None = None) -> dict[str, float | str]:
    """A subgoal's ``tolerance`` table: per argument a non-negative number or ``"*"``; with the
    subgoal's ``options`` (ours: catalogue tools), a number only for a numeric argument that one
    of them takes (a served scenario's tools are the server's, checked there)."""
    raw = st.get("tolerance")
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise st.fail("tolerance", f"must be a table of argument = tolerance, got {_kind(raw)}")
    out: dict[str, float | str] = {}
    for name, value in raw.items():
        takers = _takers(st, "tolerance", name, options) if options is not None else []
        if value == ANY:
            out[name] = ANY
            continue
        if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
            raise st.fail(f"tolerance.{name}", f'must be a non-negative number or "{ANY}", got {value!r}')
        for option in takers:
            kind = CATALOGUE[option.tool].schema["properties"][name].get("type")
            if kind not in ("integer", "number"):
                raise st.fail(
                    f"tolerance.{name}",
                    f"a number needs a numeric argument, and {option.tool}'s {name} is a {kind} "
                    f'(or use "{ANY}")',
                )
        out[name] = float(value)
    return out


def parse_fault_table(raw: Any, index: int, *, shown: str = "<faults>") -> FaultRule:
    """One ``[[faults]]`` table for a tool outside the catalogue (``harness proxy``'s real tools).

    Every check :func:`parse_scenario` makes but those that need the catalogue tool (that it
    is served, and the keys checked against it, such as ``argument``): the caller checks
    those against the real tool. A mistake is a :class:`ScenarioError` like any other.
    """
    return _fault(shown, index, raw, None)


def _fault(shown: str, i: int, raw: Any, served: list[str] | None) -> FaultRule:
    where = f"faults[{i}]"
    table = _Table(shown, where, raw)
    kind = table.string("kind")
    if kind not in FAULT_KINDS:
        raise table.fail("kind", f"unknown fault kind {kind!r} (valid: {', '.join(FAULT_KINDS)})")
    row = FAULT_KIND_TABLE[kind]
    table.done(_RULE_KEYS | {key.name for key in row.keys})
    tool = table.string("tool")
    if served is not None and tool not in served:
        raise _unknown_tool(shown, f"{where}.tool", tool, served)
    has_rate, has_calls = table.has("rate"), table.has("calls")
    if has_rate == has_calls:
        raise table.fail("rate", "give exactly one of rate (a probability per call) and calls (a schedule)")
    rate = _rate_value(table.get("rate"), f"{shown}: {where}.rate") if has_rate else None
    calls: tuple[int, ...] = ()
    if has_calls:
        value = table.get("calls")
        if (
            not isinstance(value, list)
            or not value
            or not all(isinstance(n, int) and not isinstance(n, bool) and n >= 1 for n in value)
        ):
            raise table.fail("calls", f"must be a non-empty list of call numbers (1, 2, ...), got {value!r}")
        calls = tuple(sorted(set(value)))
    explicit = table.boolean("explicit", row.explicit_default)
    if explicit and row.never_explicit is not None:
        raise table.fail("explicit", f"{row.never_explicit}; it cannot be explicit")
    quality = _quality(table, row.name, row.raises, row.never_explicit, explicit)
    if quality is not None:
        explicit = quality != "absent"
    message = _message(table, row.raises, quality)
    source = _source(table, row.raises, message)
    spec = CATALOGUE[tool] if served is not None else None
    if row.tool_check is not None and spec is not None:
        problem = row.tool_check(spec)
        if problem is not None:
            raise table.fail("tool", f"a {kind} fault: {problem}")
    values: dict[str, Any] = {}
    for key in row.keys:
        if table.has(key.name):
            value = _KEY_READS[key.type](table, key)
        elif key.missing is not None:
            raise table.fail(key.name, f"missing ({key.missing})")
        else:
            value = key.default
        problem = key.check(value, spec) if key.check is not None and spec is not None else None
        if problem is not None:
            raise table.fail(key.name, problem)
        values[key.name] = value
    known = spec.values.get(str(values.get("argument"))) if spec is not None else None
    if known is not None and "valid" in values:  # the form a fault accepts must be one the tool serves
        problem = known.problem(tool, values["valid"])
        if problem is not None:
            raise table.fail("valid", problem)
    return FaultRule(
        i, kind, tool, rate, calls, explicit, quality=quality, message=message, source=source, **values
    )


def _source(table: _Table, raises: bool, message: str | None) -> str:
    """The ``source`` key: where a raising kind's text comes from (``template`` when absent)."""
    if not table.has("source"):
        return TEMPLATE
    source = table.string("source")
    if source not in SOURCES:
        raise table.fail("source", f"unknown source {source!r} (valid: {', '.join(SOURCES)})")
    if not raises:
        raise table.fail("source", "this kind answers content, not an error text")
    if message is not None and source != TEMPLATE:
        raise table.fail("source", "give message (your own text) or a source, not both")
    return source


def _quality(table: _Table, kind: str, raises: bool, never: str | None, explicit: bool) -> str | None:
    """The ``quality`` key, checked against the kind and against ``explicit``; None if absent."""
    if not table.has("quality"):
        return None
    quality = table.string("quality")
    if quality not in QUALITIES:
        raise table.fail("quality", f"unknown quality {quality!r} (valid: {', '.join(QUALITIES)})")
    if never is not None and quality != "absent":
        raise table.fail("quality", f"{never}; its quality can only be absent, got {quality!r}")
    if not raises and quality not in ("explicit", "absent"):
        raise table.fail(
            "quality",
            f"a {kind} fault answers content, not an error text: explicit or absent, got {quality!r}",
        )
    if table.has("explicit") and explicit != (quality != "absent"):
        raise table.fail("quality", f"{quality!r} contradicts explicit = {str(explicit).lower()}")
    return quality


def _message(table: _Table, raises: bool, quality: str | None) -> str | None:
    """The ``message`` key: a raising kind's text, whose placeholders must be known."""
    if not table.has("message"):
        return None
    text = table.string("message")
    if not raises:
        raise table.fail("message", "this kind answers content, not an error text")
    if quality == "absent":
        raise table.fail("message", "quality absent says nothing; give no message")
    if not text.strip():
        raise table.fail("message", 'must not be empty (use quality = "absent" for no text)')
    try:
        text.format_map(dict.fromkeys(PLACEHOLDERS, ""))
    except KeyError as exc:
        raise table.fail(
            "message", f"unknown placeholder {{{exc.args[0]}}} (valid: {', '.join(PLACEHOLDERS)})"
        ) from None
    except (ValueError, IndexError) as exc:
        raise table.fail("message", f"not a valid template: {exc} (write {{{{ and }}}} for braces)") from None
    return text


def _scalar(table: _Table, key: FaultKey) -> Any:
    value = table.get(key.name)
    if isinstance(value, dict | list):
        raise table.fail(key.name, f"must be a string or a number, got {_kind(value)}")
    return value


_KEY_READS: dict[str, Callable[[_Table, FaultKey], Any]] = {
    "integer": lambda table, key: table.integer(key.name, None, *(key.bounds or (1, MAX_STEPS_LIMIT))),
    "number": lambda table, key: table.number(key.name, None),
    "string": lambda table, key: table.string(key.name),
    "scalar": _scalar,
}
"""How each of :data:`harness.faults.kinds.KEY_TYPES` is read from a ``[[faults]]`` table."""


def _event(shown: str, i: int, raw: Any, tools: list[str]) -> Event:
    where = f"events[{i}]"
    table = _Table(shown, where, raw)
    table.done({"kind", "tool", "at_step", "at_call", "notify", "variant"})
    kind = table.string("kind")
    if kind not in EVENT_KINDS:
        raise table.fail("kind", f"unknown event kind {kind!r} (valid: {', '.join(EVENT_KINDS)})")
    tool = table.string("tool")
    if tool not in CATALOGUE:
        raise _unknown_tool(shown, f"{where}.tool", tool)
    if kind == "add_tool" and tool in tools:
        raise table.fail("tool", f"{tool!r} is served from the start; add_tool needs a new tool")
    if kind != "add_tool" and tool not in tools:
        raise table.fail("tool", f"{kind} needs a tool the scenario serves from the start, got {tool!r}")
    if table.has("at_step") == table.has("at_call"):
        raise table.fail("at_step", "give exactly one of at_step and at_call")
    at_step = table.integer("at_step", None)
    at_call = table.integer("at_call", None)
    variant = table.get("variant")
    if kind == "change_schema":
        variants = CATALOGUE[tool].variants
        if not isinstance(variant, str) or variant not in variants:
            raise table.fail(
                "variant", f"{tool} has variants: {', '.join(variants) or 'none'}; got {variant!r}"
            )
    elif variant is not None:
        raise table.fail("variant", "only change_schema events take a variant")
    return Event(i, kind, tool, at_step, at_call, table.boolean("notify", True), variant)
