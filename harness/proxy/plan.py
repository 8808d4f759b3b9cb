"""A faults file for real tools: ``[[faults]]`` and ``[[events]]`` tables, checked twice.

The file is a scenario's fault and event tables on their own (``docs/scenarios.md``)::

    description = "optional: what this file does"

    [[faults]]
    kind = "transient"
    tool = "weather"          # a tool of the real server
    rate = 0.5                # or calls = [1, 3]

    [[events]]
    kind = "remove_tool"      # add_tool | remove_tool | change_schema | revoke
    tool = "add"
    at_call = 2               # tools/call answered so far; or at_step: requests answered so far
    variant = { city = "location" }   # change_schema only: old argument name = new name

**At load** every key is checked as the scenario parser checks it
(:func:`harness.scenarios.scenario.parse_fault_table` for a fault), except what needs the tool;
a mistake is one line, ``file: field: what is wrong``, and the CLI exits 2.

**Against the real server**, once its ``tools/list`` is known (:meth:`Plan.check`): a tool
the server lacks, an ``argument`` that is not one of the tool's (or not numeric, for
``too_large``), a rename of an argument the tool does not take, a write fault on a tool that
says it is read-only: each is a warning line naming the server's tools or arguments; a rule
that cannot work as written (a missing argument, a rename of nothing) is switched off.

**The schedule** (:class:`ProxyFaultEngine`): a rule with a ``rate`` hits call ``n`` of its
tool when a uniform number drawn for (seed, tool, n) is below the rate: one generator per
(seed, tool, n), ``np_random(derive_seed("proxy-faults", seed, tool, n))``, one number per
rule on that tool in file order. So the same client calls meet the same faults in every run,
whatever else the client does, and a higher rate hits a superset of calls.
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.errors import UserError, loads_toml
from harness.faults.kinds import FAULT_KIND_TABLE, Clock, FaultEngine, FaultKind, FaultRule
from harness.scenarios.scenario import EVENT_KINDS, Event, parse_fault_table
from harness.seeding import derive_seed, np_random
from harness.sim.catalogue import CATALOGUE, CatalogueTool, Variant, World

JSON = dict[str, Any]

TOP_KEYS: tuple[str, ...] = ("description", "faults", "events")
EVENT_KEYS: tuple[str, ...] = ("kind", "tool", "at_step", "at_call", "notify", "variant")
MAX_AT = 1_000_000

WRITE_KINDS: frozenset[str] = frozenset({"post_commit", "silent_noop"})
"""Kinds meant for a tool that writes; a tool annotated ``readOnlyHint: true`` gets a warning."""
READ_KINDS: frozenset[str] = frozenset({"stale", "wrong_units", "partial"})
"""Kinds meant for a read; a tool annotated ``readOnlyHint: false`` gets a warning."""


class FaultsFileError(UserError):
    """A faults file is wrong; the message is ``file: field: what is wrong``."""


ProxyEvent = Event
"""A change to the tool list the client sees, after a number of requests or tool calls: the
scenario's :class:`~harness.scenarios.scenario.Event`, its ``variant`` a catalogue variant's name or a
table of renames."""


@dataclass(frozen=True)
class Plan:
    """A validated faults file: the rules, the events, and the name it is shown by."""

    shown: str
    faults: tuple[FaultRule, ...] = ()
    events: tuple[ProxyEvent, ...] = ()
    description: str = ""

    @property
    def tools(self) -> tuple[str, ...]:
        """Every tool a rule or an event names, in file order."""
        names = [r.tool for r in self.faults] + [e.tool for e in self.events]
        return tuple(dict.fromkeys(names))

    @property
    def notifies(self) -> bool:
        """Whether an event will send ``notifications/tools/list_changed``."""
        return any(e.notify for e in self.events)

    def check(self, tools: Mapping[str, JSON]) -> Checked:
        """The plan against the real server's tools (name -> descriptor): warnings, what is off."""
        return _check(self, tools)


@dataclass
class Checked:
    """What :meth:`Plan.check` found: warning lines, rules and events switched off, renames."""

    warnings: list[str] = field(default_factory=list)
    rules_off: set[int] = field(default_factory=set)
    events_off: set[int] = field(default_factory=set)
    renames: dict[int, dict[str, str]] = field(default_factory=dict)
    """Per change_schema event (by index): old argument name -> new name, on the real tool."""


# -- loading ---------------------------------------------------------------------------------


def load_plan(path: Path) -> Plan:
    """Read and check a faults file; :class:`FaultsFileError` (one line) for any mistake."""
    shown = str(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise FaultsFileError(f"{shown}: no such faults file") from None
    except IsADirectoryError:
        raise FaultsFileError(f"{shown}: a directory, not a faults file") from None
    except UnicodeDecodeError:
        raise FaultsFileError(f"{shown}: file: not UTF-8 text") from None
    except OSError as exc:
        raise FaultsFileError(f"{shown}: cannot read: {exc.strerror or exc}") from None
    try:
        data = loads_toml(text)
    except tomllib.TOMLDecodeError as exc:
        raise FaultsFileError(f"{shown}: toml: {exc}") from None
    return parse_plan(data, shown=shown)


def parse_plan(data: Mapping[str, Any], *, shown: str = "<faults>") -> Plan:
    """Check a parsed faults file (see the module's docstring)."""
    extra = sorted(set(data) - set(TOP_KEYS))
    if extra:
        raise FaultsFileError(
            f"{shown}: {extra[0]}: unknown key (valid here: {', '.join(TOP_KEYS)}; "
            "a faults file holds [[faults]] and [[events]] tables)"
        )
    description = data.get("description", "")
    if not isinstance(description, str):
        raise FaultsFileError(f"{shown}: description: must be a string, got {_kind(description)}")
    faults = tuple(
        parse_fault_table(raw, i, shown=shown) for i, raw in enumerate(_tables(data, "faults", shown))
    )
    for rule in faults:
        if rule.kind == "schema_drift":
            _catalogue_variant(shown, f"faults[{rule.index}].variant", rule.tool, rule.variant)
    events = tuple(_event(shown, i, raw) for i, raw in enumerate(_tables(data, "events", shown)))
    if not faults and not events:
        raise FaultsFileError(f"{shown}: faults: no [[faults]] or [[events]] tables: nothing to inject")
    return Plan(shown, faults, events, " ".join(description.split()))


def _tables(data: Mapping[str, Any], key: str, shown: str) -> list[Any]:
    value = data.get(key)
    if value is None:
        return []
    if not isinstance(value, list):
        raise FaultsFileError(f"{shown}: {key}: must be an array of tables ([[{key}]]), got {_kind(value)}")
    return value


def _kind(value: Any) -> str:
    names = {bool: "a boolean", int: "an integer", float: "a number", str: "a string", list: "an array"}
    return names.get(type(value), "a table" if isinstance(value, dict) else type(value).__name__)


def _event(shown: str, i: int, raw: Any) -> ProxyEvent:
    where = f"{shown}: events[{i}]"
    if not isinstance(raw, dict):
        raise FaultsFileError(f"{where}: must be a table, got {_kind(raw)}")
    extra = sorted(set(raw) - set(EVENT_KEYS))
    if extra:
        raise FaultsFileError(f"{where}.{extra[0]}: unknown key (valid here: {', '.join(EVENT_KEYS)})")
    kind = raw.get("kind")
    if not isinstance(kind, str):
        raise FaultsFileError(f"{where}.kind: missing (a string is required)")
    if kind not in EVENT_KINDS:
        raise FaultsFileError(f"{where}.kind: unknown event kind {kind!r} (valid: {', '.join(EVENT_KINDS)})")
    tool = raw.get("tool")
    if not isinstance(tool, str) or not tool:
        raise FaultsFileError(f"{where}.tool: missing (the name of a tool of the real server)")
    if ("at_step" in raw) == ("at_call" in raw):
        raise FaultsFileError(f"{where}.at_step: give exactly one of at_step and at_call")
    at: dict[str, int | None] = {}
    for key in ("at_step", "at_call"):
        value = raw.get(key)
        if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
            raise FaultsFileError(f"{where}.{key}: must be an integer, got {_kind(value)}")
        if value is not None and not 1 <= value <= MAX_AT:
            raise FaultsFileError(f"{where}.{key}: must be between 1 and {MAX_AT}, got {value}")
        at[key] = value
    notify = raw.get("notify", True)
    if not isinstance(notify, bool):
        raise FaultsFileError(f"{where}.notify: must be true or false, got {_kind(notify)}")
    variant = raw.get("variant")
    if kind != "change_schema":
        if variant is not None:
            raise FaultsFileError(f"{where}.variant: only change_schema events take a variant")
    elif variant is None:
        raise FaultsFileError(
            f'{where}.variant: missing (a table of renames, old = "new", e.g. {{ city = "location" }}, '
            "or a catalogue variant's name)"
        )
    elif isinstance(variant, str):
        _catalogue_variant(shown, f"events[{i}].variant", tool, variant)
    elif isinstance(variant, dict):
        variant = _renames(where, variant)
    else:
        raise FaultsFileError(
            f"{where}.variant: must be a table of renames or a string, got {_kind(variant)}"
        )
    return ProxyEvent(i, kind, tool, at["at_step"], at["at_call"], notify, variant)


def _renames(where: str, table: dict[str, Any]) -> dict[str, str]:
    if not table:
        raise FaultsFileError(f"{where}.variant: an empty table renames nothing")
    for old, new in table.items():
        if not isinstance(new, str) or not new:
            raise FaultsFileError(f"{where}.variant.{old}: must be the new argument name, got {new!r}")
    news = list(table.values())
    if len(set(news)) != len(news):
        raise FaultsFileError(f"{where}.variant: two arguments renamed to one name")
    return dict(table)


def _catalogue_variant(shown: str, where: str, tool: str, name: str) -> Variant:
    spec = CATALOGUE.get(tool)
    if spec is None or name not in spec.variants:
        have = (
            f"{tool} has: {', '.join(spec.variants) or 'none'}"
            if spec is not None
            else "not a catalogue tool"
        )
        raise FaultsFileError(
            f"{shown}: {where}: {name!r} is not a catalogue variant of {tool!r} ({have}); "
            'a change_schema event can give a table of renames instead, e.g. { city = "location" }'
        )
    return spec.variants[name]


# -- checking against the real tools -------------------------------------------------------------


def renames_of(event: ProxyEvent) -> dict[str, str]:
    """A change_schema event's renames, old name -> new name."""
    if isinstance(event.variant, str):
        variant = CATALOGUE[event.tool].variants[event.variant]
        return {base: new for new, base in variant.renames.items()}
    return dict(event.variant or {})


def properties(descriptor: Mapping[str, Any]) -> dict[str, Any]:
    """The argument schemas a real tool's descriptor declares (name -> schema)."""
    schema = descriptor.get("inputSchema")
    props = schema.get("properties") if isinstance(schema, dict) else None
    return dict(props) if isinstance(props, dict) else {}


_NUMERIC = ("integer", "number")


def _check(plan: Plan, tools: Mapping[str, JSON]) -> Checked:
    out = Checked()
    listing = ", ".join(tools) or "none"
    for name in plan.tools:
        if name not in tools:
            out.warnings.append(
                f"{plan.shown}: tool {name!r} is not a tool of this server (its tools: {listing}); "
                "its rules and events wait for a tool of that name"
            )
    for rule in plan.faults:
        desc = tools.get(rule.tool)
        if desc is None:
            continue
        where = f"{plan.shown}: faults[{rule.index}]"
        props = properties(desc)
        annotations = desc.get("annotations")
        hint = annotations.get("readOnlyHint") if isinstance(annotations, dict) else None
        numeric = [k for k, v in props.items() if isinstance(v, dict) and v.get("type") in _NUMERIC]
        problem: str | None = None
        if rule.kind == "bad_argument" and rule.argument not in props:
            have = ", ".join(props) or "none"
            problem = f"argument: {rule.tool} has no argument {rule.argument!r} (it has: {have})"
        elif rule.kind == "too_large" and rule.argument not in numeric:
            problem = (
                f"argument: {rule.tool} has no numeric argument {rule.argument!r} "
                f"(numeric: {', '.join(numeric) or 'none'})"
            )
        elif rule.kind == "schema_drift":
            missing = [
                b for b in CATALOGUE[rule.tool].variants[rule.variant].renames.values() if b not in props
            ]
            if missing:
                problem = f"variant: {rule.tool} has no argument {missing[0]!r} to rename"
        if problem is not None:
            out.warnings.append(f"{where}.{problem}; this rule is off")
            out.rules_off.add(rule.index)
        elif rule.kind in WRITE_KINDS and hint is True:
            out.warnings.append(
                f"{where}.tool: a {rule.kind} fault is for a write, and {rule.tool} says readOnlyHint: true"
            )
        elif rule.kind in READ_KINDS and hint is False:
            out.warnings.append(
                f"{where}.tool: a {rule.kind} fault is for a read, and {rule.tool} says readOnlyHint: false"
            )
    for event in plan.events:
        desc = tools.get(event.tool)
        if event.kind != "change_schema" or desc is None:
            continue
        renames = renames_of(event)
        props = properties(desc)
        absent = [old for old in renames if old not in props]
        if absent:
            out.warnings.append(
                f"{plan.shown}: events[{event.index}].variant: {event.tool} has no argument {absent[0]!r} "
                f"(it has: {', '.join(props) or 'none'}); this event is off"
            )
            out.events_off.add(event.index)
        else:
            out.renames[event.index] = renames
    return out


# -- the engine ---------------------------------------------------------------------------------------


def _never(world: World, arguments: JSON) -> str:
    raise AssertionError("the proxy never runs a real tool itself")


def as_catalogue_tool(name: str, descriptor: Mapping[str, Any] | None) -> CatalogueTool:
    """A real tool as the fault table's functions see one: its name, schema and annotations."""
    desc = descriptor or {}
    schema = desc.get("inputSchema")
    if not isinstance(schema, dict):
        schema = {"type": "object", "properties": {}}
    annotations = desc.get("annotations")
    read_only = isinstance(annotations, dict) and annotations.get("readOnlyHint") is True
    spec = CATALOGUE.get(name)
    props = properties(desc)
    variants = {
        v: variant
        for v, variant in (spec.variants.items() if spec is not None else ())
        if all(base in props for base in variant.renames.values())
    }
    description = desc.get("description")
    return CatalogueTool(
        name,
        description if isinstance(description, str) else "",
        schema,
        _never,
        _never,
        read_only=read_only,
        variants=variants,
    )


@dataclass
class ProxyFaultEngine(FaultEngine):
    """The fault table's engine with the proxy's schedule: one draw per (seed, tool, call index).

    Everything else is :class:`~harness.faults.kinds.FaultEngine`'s: how each kind's hit plays
    out over later calls (a burst, a rate limit's block, a permanent death), what a raising
    fault says (quality, ``message``, ``source``). ``clock.now`` is the proxy's wall clock in
    seconds since it started, set before each decision.
    """

    _positions: dict[int, int] = field(default_factory=dict, init=False)
    _per_tool: dict[str, int] = field(default_factory=dict, init=False)

    def __post_init__(self) -> None:
        super().__post_init__()
        for i, rule in enumerate(self.rules):
            self._positions[i] = self._per_tool.get(rule.tool, 0)
            self._per_tool[rule.tool] = self._positions[i] + 1

    def draws(self, tool: str, call: int) -> list[float]:
        """The uniform numbers of call ``call`` (1-based) of ``tool``: one per rule on the tool."""
        count = self._per_tool.get(tool, 0)
        if count == 0:
            return []
        values: list[float] = (
            np_random(derive_seed("proxy-faults", self.seed, tool, call)).random(count).tolist()
        )
        return values

    def scheduled(self, rule: int, call: int) -> bool:
        spec = self.rules[rule]
        if spec.rate is None:
            return call in spec.calls
        return self.draws(spec.tool, call)[self._positions[rule]] < spec.rate

    def switch_off(self, indices: set[int]) -> None:
        """Rules (by their file index) that can never fire, as :meth:`Plan.check` found."""
        for name, rules in self._by_tool.items():
            self._by_tool[name] = [i for i in rules if self.rules[i].index not in indices]

    def decide(self, tool: CatalogueTool, arguments: JSON, call: int, now: float) -> FaultRule | None:
        """The rule that fails call ``call`` of ``tool`` with ``arguments`` (its state updated), or None."""
        self.clock.now = now
        self.counts[tool.name] = call  # the proxy counts calls; a banked text is picked by this index
        hit = self._evaluate(tool, arguments, call, self._states)
        return None if hit is None else self.rules[hit]

    def text(self, rule: FaultRule, tool: CatalogueTool, arguments: JSON, now: float) -> str:
        """What a raising ``rule`` says about this call now."""
        self.clock.now = now
        return self.message(rule, tool, arguments)


def build_engine(plan: Plan | None, seed: int, timeout_s: float) -> ProxyFaultEngine:
    """The engine for one client connection (a fresh one per connection: state is per session)."""
    rules: Sequence[FaultRule] = plan.faults if plan is not None else ()
    return ProxyFaultEngine(
        rules=rules, seed=seed, horizon=0, clock=Clock(), world=World(), call_timeout_s=timeout_s
    )


def kind_of(rule: FaultRule) -> FaultKind:
    """The rule's row of the fault table."""
    return FAULT_KIND_TABLE[rule.kind]
