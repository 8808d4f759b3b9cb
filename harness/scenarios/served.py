"""Served scenarios: a task for a real MCP server, named in that server's own tools.

A served scenario is a scenario file with a ``[server]`` table (or any scenario file run with
``harness run --server CMD``). Its tools, arguments and fault tables name the real server's
tools, so nothing here is checked against the simulated catalogue: the server's own
``tools/list`` decides, once it runs (:mod:`harness.cli.served` checks a scenario against it
before a run starts, :mod:`harness.proxy.session` again in every session). Everything that can
be checked without the server is checked on load, and a mistake is one line,
``file: field: what is wrong``, as in any scenario::

    description = "Write a note, then read it back."
    max_steps = 20                         # as in a scenario: step_cost_s, call_timeout_s,
                                           # deadline_s, protocol, name, summary too
    tools = ["write_file", "read_text_file"]   # optional: tools the server must have

    [server]
    command = "mcp-server-filesystem {workdir}"   # a string (split as a shell would) or a list;
                                                  # {workdir}: the session's own fresh directory
    name = "filesystem"                           # optional: the rows' server column (with
                                                  # --server, that command's program's name)
    env = { MEMORY_FILE_PATH = "{workdir}/memory.jsonl" }   # optional

    [task]
    prompt = "Write the note, then read it back."
    [[task.subgoals]]                      # done when its verify read holds after the session
    name = "write"
    tool = "write_file"
    arguments = { path = "note.txt", content = "buy milk" }
    verify = { tool = "read_text_file", arguments = { path = "note.txt" }, expect_text = "buy milk" }
    [[task.subgoals]]                      # no verify: done by a call that really ran
    name = "read"
    tool = "read_text_file"
    arguments = { path = "note.txt" }

    [[faults]]                             # a scenario's fault tables (the proxy's kinds)
    kind = "transient"
    tool = "write_file"
    rate = 0.3

    [[events]]                             # as in a faults file (docs/proxy.md): a change_schema
    kind = "change_schema"                 # variant is a table of renames, old = "new"
    tool = "read_text_file"
    at_call = 2
    variant = { path = "file" }

``verify`` is the harness's own read of the end state, made after the session against the same
server: ``expect_text`` (a substring of the answer's text), ``expect_json = { path = "a.b[0]",
equals = ... }`` (a value in the answer's ``structuredContent``, or its text parsed as JSON), or
neither (the read must succeed). A subgoal without ``verify`` is done by a call of one of its
options that reached the server and succeeded with arguments that satisfy the option.

In a batch, a served scenario is named by :func:`served_source` (its file and the server command
it runs with), which :func:`harness.scenarios.family.load_source` loads like any other source.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import shlex
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from harness.errors import loads_toml
from harness.protocol.versions import LATEST_VERSION, SUPPORTED_VERSIONS
from harness.scenarios.scenario import (
    EVENT_KINDS,
    Event,
    Option,
    Scenario,
    ScenarioError,
    Subgoal,
    Task,
    _after,
    _display,
    _kind,
    _Table,
    _tolerance,
    parse_fault_table,
    task_table,
)

SERVED_PREFIX = "served:"
"""How a batch's ``scenario_sources`` mark a served scenario (see :func:`served_source`)."""

WORKDIR = "{workdir}"
"""Stands for the session's own fresh working directory in ``command`` and ``env``."""

TOP_KEYS = frozenset({
    "name", "description", "summary", "tools", "max_steps", "step_cost_s", "call_timeout_s",
    "protocol", "task", "faults", "events", "deadline_s", "server",
})  # fmt: skip
SERVER_KEYS = frozenset({"command", "name", "env"})
SUBGOAL_KEYS = frozenset({"name", "tool", "arguments", "alternatives", "verify", "tolerance", "after"})
VERIFY_KEYS = frozenset({"tool", "arguments", "expect_text", "expect_json"})
EVENT_KEYS = frozenset({"kind", "tool", "at_step", "at_call", "notify", "variant"})
MAX_AT = 1_000_000

_LAUNCHERS = frozenset(
    {"npx", "node", "python", "python3", "uv", "uvx", "pipx", "run", "exec", "deno", "bun"}
)
"""Words of a command that start something else: the server's name is the first word after them."""


@dataclass(frozen=True)
class ServerSpec:
    """How to start the real server of a served scenario, fresh for each session."""

    command: tuple[str, ...]
    """The argv; ``{workdir}`` in a word becomes the session's working directory."""
    name: str
    """What the rows' ``server`` column says."""
    env: tuple[tuple[str, str], ...] = ()
    """Variables set for the server (``{workdir}`` replaced), over the harness's own environment."""

    def argv(self, workdir: str) -> list[str]:
        return [word.replace(WORKDIR, workdir) for word in self.command]

    def environment(self, workdir: str) -> dict[str, str]:
        return {key: value.replace(WORKDIR, workdir) for key, value in self.env}


@dataclass(frozen=True)
class Check:
    """A subgoal's ``verify``: the read the harness makes after the session, and what it must show."""

    tool: str
    arguments: Mapping[str, Any] = field(default_factory=dict)
    expect_text: str | None = None
    """A substring the answer's text must hold."""
    expect_json: tuple[str, Any] | None = None
    """(path, value): the answer's JSON must hold ``value`` at ``path``."""

    @property
    def option(self) -> Option:
        return Option(self.tool, dict(self.arguments))

    def describe(self) -> str:
        if self.expect_text is not None:
            return f"text holds {self.expect_text!r}"
        if self.expect_json is not None:
            return f"{self.expect_json[0]} == {json.dumps(self.expect_json[1])}"
        return "the read succeeds"


@dataclass(frozen=True)
class ServedScenario(Scenario):
    """A scenario for a real server: its :class:`ServerSpec`, its end-state checks, its renames.

    ``task`` is what the agents get; its subgoals carry no ``verify`` (the scripted reader's own
    read-back looks for a catalogue record and would misread a real answer): the checks are in
    :attr:`checks`, by subgoal index.
    """

    session_kind: ClassVar[str] = "served"
    """Which kind of session runs it (:func:`harness.batch.kinds.kind_for`)."""

    server: ServerSpec = ServerSpec((), "")
    checks: tuple[Check | None, ...] = ()
    renames: tuple[tuple[int, tuple[tuple[str, str], ...]], ...] = ()
    """change_schema events (by index): their renames, old argument name -> new one."""
    source_path: str = ""


# -- loading ------------------------------------------------------------------------------


def has_server_table(path: str | Path) -> bool:
    """Whether a scenario file has a top-level ``[server]`` table (False if it cannot be read)."""
    try:
        data = loads_toml(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return False
    return isinstance(data.get("server"), dict)


def load_served(path: str | Path, command: str | None = None) -> ServedScenario:
    """Load and check a served scenario; ``command`` (``--server``) replaces its ``[server] command``."""
    file = Path(path)
    shown = _display(file, str(path))
    if not file.is_file():
        raise ScenarioError(f"{path}: file: no such scenario file")
    try:
        data = loads_toml(file.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise ScenarioError(f"{shown}: toml: {exc}") from None
    except UnicodeDecodeError:
        raise ScenarioError(f"{shown}: file: not UTF-8 text") from None
    return parse_served(data, path=file, shown=shown, command=command)


def served_source(path: str | Path, command: str | None = None) -> str:
    """What a batch's ``scenario_sources`` hold for a served scenario: its file (absolute) and
    the ``--server`` command it runs with (None: its own ``[server] command``), whose program is
    made absolute when given as a relative path (sessions run in a directory of their own)."""
    if command is not None:
        words = shlex.split(command)
        if words and "/" in words[0] and not Path(words[0]).is_absolute():
            words[0] = os.path.abspath(words[0])
        command = shlex.join(words)
    spec = {"path": str(Path(path).resolve()), "command": command}
    return SERVED_PREFIX + json.dumps(spec, sort_keys=True)


def load_served_source(source: str) -> ServedScenario:
    """The served scenario a :func:`served_source` string names."""
    spec = json.loads(source[len(SERVED_PREFIX) :])
    return load_served(spec["path"], spec.get("command"))


def server_name(command: tuple[str, ...]) -> str:
    """A short name for the server a command starts: its program's file name, past launchers
    and their options (``npx -y @scope/server-x`` -> ``server-x``; ``python -m pkg.server`` ->
    ``pkg.server``)."""
    for word in command:
        if word.startswith("-") or WORKDIR in word:
            continue
        base = word.rstrip("/").rsplit("/", 1)[-1]
        stem = re.sub(r"\.(m?js|cjs|ts|py|exe)$", "", base)
        if stem.lower() in _LAUNCHERS or re.fullmatch(r"python3?(\.\d+)?", stem.lower()):
            continue
        return stem or base
    return command[0] if command else ""


def parse_served(
    data: dict[str, Any], *, path: Path | None = None, shown: str = "<scenario>", command: str | None = None
) -> ServedScenario:
    """Check a parsed served scenario (see the module's docstring); ScenarioError for any mistake."""
    top = _Table(shown, "", data)
    top.done(set(TOP_KEYS))
    name = top.string("name", path.stem if path is not None else "scenario")
    description = " ".join(top.string("description").split())
    if not description:
        raise top.fail("description", "must not be empty")
    summary = top.string("summary", description.split(". ")[0].rstrip(".") + ".")
    server = _server(shown, data.get("server"), command)
    max_steps = top.integer("max_steps", 40) or 40
    step_cost = top.number("step_cost_s", 1.0) or 1.0
    call_timeout = top.number("call_timeout_s", 30.0) or 30.0
    deadline = top.number("deadline_s", None)
    protocol = top.string("protocol", LATEST_VERSION)
    if protocol not in SUPPORTED_VERSIONS:
        raise top.fail(
            "protocol", f"unsupported version {protocol!r} (valid: {', '.join(SUPPORTED_VERSIONS)})"
        )
    if not top.has("task"):
        raise top.fail("task", "missing (a [task] table with [[task.subgoals]] is required)")
    task, checks = _task(shown, top.get("task"))
    faults = tuple(parse_fault_table(raw, i, shown=shown) for i, raw in enumerate(top.tables("faults")))
    parsed = [_event(shown, i, raw) for i, raw in enumerate(top.tables("events"))]
    events = tuple(event for event, _ in parsed)
    renames = tuple((event.index, tuple(table.items())) for event, table in parsed if table)
    named = [t for g in task.subgoals for t in g.tools] + [c.tool for c in checks if c is not None]
    named += [r.tool for r in faults] + [e.tool for e in events]
    listed = top.strings("tools")
    if listed is not None:
        for i, tool in enumerate(listed):
            if listed.index(tool) != i:
                raise top.fail(f"tools[{i}]", f"{tool!r} is listed twice")
    tools = tuple(listed) if listed else tuple(dict.fromkeys(named))
    return ServedScenario(
        name=name,
        description=description,
        path=path,
        tools=tools,
        task=task,
        faults=faults,
        events=events,
        max_steps=max_steps,
        step_cost_s=step_cost,
        call_timeout_s=call_timeout,
        protocol=protocol,
        summary=summary,
        deadline_s=deadline,
        server=server,
        checks=checks,
        renames=renames,
        source_path=str(path.resolve()) if path is not None else "",
    )


def _server(shown: str, raw: Any, command: str | None) -> ServerSpec:
    if raw is None and command is None:
        raise ScenarioError(
            f'{shown}: server: missing (a [server] table with command = "...", or harness run --server CMD)'
        )
    table = _Table(shown, "server", raw if raw is not None else {})
    table.done(set(SERVER_KEYS))
    given = table.get("command")
    words: list[str]
    if command is not None:
        try:
            words = shlex.split(command)
        except ValueError as exc:
            raise ScenarioError(f"--server: {exc}") from None
        if not words:
            raise ScenarioError("--server: names no command")
    elif given is None:
        raise table.fail("command", 'missing (the server\'s command line, e.g. "mcp-server-x {workdir}")')
    elif isinstance(given, str):
        try:
            words = shlex.split(given)
        except ValueError as exc:
            raise table.fail("command", str(exc)) from None
    elif isinstance(given, list) and given and all(isinstance(w, str) for w in given):
        words = list(given)
    else:
        raise table.fail("command", f"must be a string or a list of strings, got {_kind(given)}")
    if not words:
        raise table.fail("command", "names no command")
    if "/" in words[0] and WORKDIR not in words[0] and not Path(words[0]).is_absolute():
        # A program named by a relative path is found from where harness runs, as a shell would:
        # the server itself runs in its session's own directory.
        words[0] = os.path.abspath(words[0])
    env = table.get("env") or {}
    if not isinstance(env, dict) or not all(isinstance(v, str) for v in env.values()):
        raise table.fail("env", 'must be a table of name = "value" strings')
    named = table.string("name", "")
    label = server_name(tuple(words)) if command is not None or not named else named  # --server: its own
    return ServerSpec(tuple(words), label, tuple(sorted(env.items())))


def _arguments(table: _Table, key: str = "arguments") -> dict[str, Any]:
    value = table.get(key)
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise table.fail(key, f"must be a table, got {_kind(value)}")
    return dict(value)


def _option(shown: str, where: str, raw: Any) -> Option:
    table = _Table(shown, where, raw)
    table.done({"tool", "arguments"})
    tool = table.string("tool")
    if not tool:
        raise table.fail("tool", "must name a tool of the server")
    return Option(tool, _arguments(table))


def _check(shown: str, where: str, raw: Any) -> Check:
    table = _Table(shown, where, raw)
    table.done(set(VERIFY_KEYS))
    tool = table.string("tool")
    arguments = _arguments(table)
    text = table.get("expect_text")
    if text is not None and (not isinstance(text, str) or not text):
        raise table.fail("expect_text", f"must be a non-empty string, got {_kind(text)}")
    raw_json = table.get("expect_json")
    if text is not None and raw_json is not None:
        raise table.fail("expect_json", "give expect_text or expect_json, not both")
    expect_json: tuple[str, Any] | None = None
    if raw_json is not None:
        sub = _Table(shown, f"{where}.expect_json", raw_json)
        sub.done({"path", "equals"})
        json_path = sub.string("path")
        try:
            json_steps(json_path)
        except ValueError as exc:
            raise sub.fail("path", str(exc)) from None
        if not sub.has("equals"):
            raise sub.fail("equals", "missing (the value the answer must hold at path)")
        expect_json = (json_path, sub.get("equals"))
    return Check(tool, arguments, text, expect_json)


def _task(shown: str, raw: Any) -> tuple[Task, tuple[Check | None, ...]]:
    checks: list[Check | None] = []

    def subgoal(where: str, st: _Table, sub: Mapping[str, Any], before: Sequence[Subgoal]) -> Subgoal:
        first = _option(shown, where, {k: v for k, v in sub.items() if k in ("tool", "arguments")})
        options = [first]
        for j, alt in enumerate(st.tables("alternatives")):
            options.append(_option(shown, f"{where}.alternatives[{j}]", alt))
        verify = st.get("verify")
        checks.append(None if verify is None else _check(shown, f"{where}.verify", verify))
        return Subgoal(
            st.string("name", f"subgoal {len(before) + 1}"),
            tuple(options),
            None,
            {},
            _tolerance(st),
            _after(st, [g.name for g in before]),
        )

    return task_table(shown, raw, SUBGOAL_KEYS, subgoal), tuple(checks)


def _event(shown: str, i: int, raw: Any) -> tuple[Event, dict[str, str]]:
    """One ``[[events]]`` table as a faults file has it (docs/proxy.md); the renames of a change_schema."""
    table = _Table(shown, f"events[{i}]", raw)
    table.done(set(EVENT_KEYS))
    kind = table.string("kind")
    if kind not in EVENT_KINDS:
        raise table.fail("kind", f"unknown event kind {kind!r} (valid: {', '.join(EVENT_KINDS)})")
    tool = table.string("tool")
    if table.has("at_step") == table.has("at_call"):
        raise table.fail("at_step", "give exactly one of at_step and at_call")
    at_step = table.integer("at_step", None, 1, MAX_AT)
    at_call = table.integer("at_call", None, 1, MAX_AT)
    variant = table.get("variant")
    renames: dict[str, str] = {}
    if kind != "change_schema":
        if variant is not None:
            raise table.fail("variant", "only change_schema events take a variant")
    elif not isinstance(variant, dict) or not variant:
        raise table.fail(
            "variant",
            'must be a table of renames, old = "new" (e.g. { path = "file" }); got '
            + ("nothing" if variant is None else _kind(variant)),
        )
    else:
        for old, new in variant.items():
            if not isinstance(new, str) or not new:
                raise table.fail(f"variant.{old}", f"must be the new argument name, got {new!r}")
        if len(set(variant.values())) != len(variant):
            raise table.fail("variant", "two arguments renamed to one name")
        renames = dict(variant)
    return Event(i, kind, tool, at_step, at_call, table.boolean("notify", True), None), renames


# -- reading an answer -------------------------------------------------------------------------

_STEP = re.compile(r"\[(\d+)\]|\.?([^.\[\]]+)")


def json_steps(path: str) -> list[str | int]:
    """``a.b[0].c`` (or ``$.a.b.0.c``) as keys and indices; ValueError for a path that says nothing."""
    text = path.strip()
    if text.startswith("$"):
        text = text[1:]
    steps: list[str | int] = []
    pos = 0
    while pos < len(text):
        m = _STEP.match(text, pos)
        if m is None or m.end() == pos:
            raise ValueError(f"cannot read {path!r} as a JSON path (write a.b[0].c)")
        index, key = m.groups()
        steps.append(int(index) if index is not None else int(key) if key.isdigit() else key)
        pos = m.end()
    if not steps:
        raise ValueError("must name at least one key (write a.b[0].c)")
    return steps


_MISSING = object()


def json_at(value: Any, path: str) -> Any:
    """The value at ``path`` in ``value``; :data:`MISSING` when there is none."""
    for step in json_steps(path):
        if isinstance(step, int) and isinstance(value, list) and -len(value) <= step < len(value):
            value = value[step]
        elif isinstance(value, dict) and str(step) in value:
            value = value[str(step)]
        else:
            return _MISSING
    return value


MISSING = _MISSING
"""What :func:`json_at` gives for a path the value does not have."""


def answer_text(result: Mapping[str, Any]) -> str:
    """A ``tools/call`` result's text blocks, joined."""
    content = result.get("content")
    blocks = content if isinstance(content, list) else []
    return "\n".join(
        b["text"]
        for b in blocks
        if isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str)
    )


def holds(check: Check, result: Mapping[str, Any] | None) -> tuple[bool, str]:
    """Whether a verify read's result (None: no result, an error) shows what ``check`` asks, and
    what it showed (for the trace)."""
    if result is None or result.get("isError") is True:
        return False, "the read failed: " + (answer_text(result)[:200] if result else "no result")
    text = answer_text(result)
    if check.expect_text is not None:
        return check.expect_text in text, text[:200]
    if check.expect_json is not None:
        path, want = check.expect_json
        data = result.get("structuredContent")
        if not isinstance(data, dict | list):
            try:
                data = json.loads(text)
            except ValueError:
                return False, f"not JSON: {text[:200]}"
        got = json_at(data, path)
        if got is MISSING:
            return False, f"nothing at {path}"
        same = (
            type(got) is type(want) and got == want
            if isinstance(got, bool) or isinstance(want, bool)
            else got == want
        )
        return bool(same), json.dumps(got)[:200]
    return True, text[:200]


def without_faults(scenario: ServedScenario) -> ServedScenario:
    """The fault-free baseline's scenario: its faults removed, its events kept."""
    return dataclasses.replace(scenario, faults=())
