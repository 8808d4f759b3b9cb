"""``harness list``: what there is to run, and the tables that describe the simulated world.

With no flag it lists the shipped scenarios (one-line summaries), agents, strategies and
scenario families (``scenarios/families/``, sampled by ``harness generate``).
``--tools`` lists the catalogue's tools with their argument schemas, the values an argument must
take where the tool knows only some (cities, tables, currencies), and schema variants;
``--faults`` lists the fault kinds with their keys, defaults and meanings. Both are generated
from the code (:data:`harness.sim.catalogue.CATALOGUE`,
:data:`harness.faults.kinds.FAULT_KIND_TABLE`), so a page that shows them cannot fall behind it.

``--json`` prints the same as one JSON object whose keys are ``scenarios``, ``agents``,
``strategies``, ``families``, ``tools`` and ``faults`` -- all six, or only ``tools``/``faults``
when those flags select them -- then ``agent_knobs`` and ``worlds`` (each world scenario,
``agentdojo/<suite>/<task>``, ``bfcl/<category>/<id>``, and its task's prompt; a world whose
extra is not installed is left out). The text listing shows the worlds per suite or category
(how many tasks, the first and the last), not each of their 900 tasks.
Tables are left to wrap at the terminal's width.
"""

from __future__ import annotations

import json
from typing import Any

import click

STRATEGY_SUMMARIES: dict[str, str] = {
    "is_error": "isError result with the readable reason (the reference).",
    "masked": "isError result, reason hidden (the official SDK's default).",
    "collapse": "JSON-RPC -32603 carrying the reason (a host may drop it).",
    "escape": "The exception leaves the server: the session is wedged.",
    "input_required": "As is_error; an argument a tool cannot use is asked for (MRTR / elicitation).",
}


def tools_json() -> dict[str, Any]:
    """Every catalogue tool: description, whether it writes, its arguments and its variants.

    An argument is its JSON Schema property with ``required`` added, and ``values`` where the tool
    serves only some values (the cities with a station, the tables): a scenario that names
    another is refused as it loads.
    """
    from harness.sim.catalogue import CATALOGUE, CatalogueTool

    def arguments(tool: CatalogueTool, schema: dict[str, Any], renames: Any = None) -> dict[str, Any]:
        required = set(schema.get("required", ()))
        out: dict[str, Any] = {}
        for name, prop in schema.get("properties", {}).items():
            out[name] = {**prop, "required": name in required}
            known = tool.values.get((renames or {}).get(name, name))
            if known is not None:
                out[name]["values"] = list(known.values)
        return out

    return {
        name: {
            "description": tool.description,
            "read_only": tool.read_only,
            "verifier": tool.verifier,
            "arguments": arguments(tool, tool.schema),
            "variants": {
                vname: {
                    "description": v.description,
                    "renames": dict(v.renames),
                    "arguments": arguments(tool, v.schema, v.renames),
                }
                for vname, v in tool.variants.items()
            },
        }
        for name, tool in CATALOGUE.items()
    }


def faults_json() -> dict[str, Any]:
    """Every fault kind: what it does, what recovers, how it answers, and the keys it takes.

    ``keys`` are the kind's own; every kind also takes :data:`~harness.faults.kinds.RULE_KEYS`.
    """
    from harness.faults.kinds import FAULT_KIND_TABLE

    def key(k: Any) -> dict[str, Any]:
        out: dict[str, Any] = {"type": k.type, "meaning": k.meaning, "required": k.missing is not None}
        if k.missing is None:
            out["default"] = k.default
        if k.bounds is not None:
            out["minimum"], out["maximum"] = k.bounds
        return out

    return {
        name: {
            "does": kind.does,
            "recovers": kind.recovers,
            "raises": kind.raises,
            "explicit_default": kind.explicit_default,
            "can_be_explicit": kind.never_explicit is None,
            "retry_fixes": kind.retry_fixes,
            "keys": {k.name: key(k) for k in kind.keys},
            "example": dict(kind.example),
        }
        for name, kind in FAULT_KIND_TABLE.items()
    }


def worlds_json() -> dict[str, str]:
    """Every world scenario (``agentdojo/<suite>/<task>``, ``bfcl/<category>/<id>``) and its task's
    prompt, of each world whose package is installed; for one that is not, one line on stderr
    saying what to install."""
    from harness.worlds import WORLDS
    from harness.worlds.scenario import list_world_scenarios, summary, world_missing

    out: dict[str, str] = {}
    for world in WORLDS:
        why = world_missing(world)
        if why is not None:
            click.echo(f"harness list: {why}", err=True)
            continue
        out.update({name: summary(name) for name in list_world_scenarios(world)})
    return out


def worlds_text(worlds: dict[str, str]) -> dict[str, str]:
    """The worlds as the text listing shows them: per suite or category (``agentdojo/banking``,
    ``bfcl/multi_turn_base``), its task count, first and last task; ``--json`` lists every task."""
    by: dict[str, list[str]] = {}
    for name in worlds:
        by.setdefault("/".join(name.split("/")[:2]), []).append(name)
    return {
        group: f"{len(names)} tasks, {names[0]} to {names[-1]} (each with its prompt: harness list --json)"
        for group, names in by.items()
    }


def qualities_json() -> dict[str, Any]:
    """Every message quality: what it means and its default text (None: each kind's own text)."""
    from harness.faults.kinds import QUALITIES, QUALITY_TEXTS

    return {
        name: {"meaning": meaning, "text": QUALITY_TEXTS.get(name)} for name, meaning in QUALITIES.items()
    }


def _argument_line(name: str, prop: dict[str, Any]) -> str:
    facts = [str(prop.get("type", "any"))]
    low, high = prop.get("minimum"), prop.get("maximum")
    if low is not None or high is not None:
        facts.append(f"{'' if low is None else low}..{'' if high is None else high}")
    if prop["required"]:
        facts.append("required")
    if "default" in prop:
        facts.append(f"default {prop['default']}")
    line = f"{name} ({', '.join(facts)})"
    if "values" in prop:
        line += f": one of {', '.join(map(str, prop['values']))}"
    return line


def _tools_table(tools: dict[str, Any]) -> Any:
    from rich.table import Table

    table = Table(title="tools", title_justify="left", show_lines=True)
    table.add_column("name", style="bold")
    table.add_column("arguments")
    table.add_column("description")
    for name, tool in tools.items():
        args = "\n".join(_argument_line(a, p) for a, p in tool["arguments"].items()) or "none"
        text = [tool["description"]]
        if not tool["read_only"]:
            text.append(f"Writes; {tool['verifier']} shows what was written.")
        for vname, variant in tool["variants"].items():
            text.append(f"variant {vname}: {variant['description']}")
        table.add_row(name, args, "\n".join(text))
    return table


def _faults_table(faults: dict[str, Any]) -> Any:
    from rich.table import Table

    from harness.faults.kinds import RULE_KEYS

    common = ", ".join(k for k in RULE_KEYS if k != "kind")
    table = Table(
        title="fault kinds",
        title_justify="left",
        caption=f"Every [[faults]] table also takes {common} (give rate or calls).",
        caption_justify="left",
        show_lines=True,
    )
    table.add_column("kind", style="bold")
    table.add_column("keys")
    table.add_column("a hit call -> what recovers")
    for name, kind in faults.items():
        keys = []
        for kname, k in kind["keys"].items():
            if k["required"]:
                keys.append(f"{kname} (required): {k['meaning']}")
            else:
                keys.append(f"{kname} = {k['default']}: {k['meaning']}")
        if not kind["can_be_explicit"]:
            keys.append("never explicit")
        elif not kind["explicit_default"]:
            keys.append("explicit = false")
        if kind["retry_fixes"]:
            keys.append("a retry can pass it")
        table.add_row(name, "\n".join(keys) or "-", f"{kind['does']} -> {kind['recovers']}")
    return table


@click.command("list")
@click.option(
    "--tools", "show_tools", is_flag=True,
    help="The catalogue's tools, their arguments and the values each knows (cities, tables, currencies).",
)  # fmt: skip
@click.option("--faults", "show_faults", is_flag=True, help="The fault kinds and the keys they take.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object instead of tables.")
def command(show_tools: bool, show_faults: bool, as_json: bool) -> None:
    """List scenarios, agents, strategies and families; or the tools (--tools) or fault kinds (--faults)."""
    out: dict[str, Any] = {}
    if not (show_tools or show_faults):
        from harness.protocol.strategies import STRATEGIES
        from harness.scenarios.scenario import list_scenarios, load_scenario
        from harness.session.registry import agent_class, list_agents

        out["scenarios"] = {name: load_scenario(name).summary for name in list_scenarios()}
        out["agents"] = {name: agent_class(name).summary for name in list_agents()}
        out["strategies"] = {name: STRATEGY_SUMMARIES.get(name, "") for name in STRATEGIES}
        from harness.scenarios.family import list_families, load_family

        out["families"] = {name: load_family(name).summary for name in list_families()}
    if show_tools or (as_json and not show_faults):
        out["tools"] = tools_json()
    if show_faults or (as_json and not show_tools):
        out["faults"] = faults_json()
        out["qualities"] = qualities_json()
    if "agents" in out:  # after the older keys, whose order users rely on
        from harness.session.registry import agent_class, list_agents

        out["agent_knobs"] = {name: agent_class(name).describe_knobs() for name in list_agents()}
        out["worlds"] = worlds_json()
    if as_json:
        click.echo(json.dumps(out, indent=2))
        return
    from rich.console import Console
    from rich.table import Table

    console = Console(markup=False)  # the texts are the code's, square brackets and all
    if "worlds" in out:  # 900 tasks: one row per suite or category here, each task in --json
        out["worlds"] = worlds_text(out["worlds"])
    for title in ("scenarios", "agents", "strategies", "families", "worlds"):
        if title in out:
            table = Table(title=title, title_justify="left")
            table.add_column("name", style="bold")
            table.add_column("summary")
            for name, text in out[title].items():
                table.add_row(name, text)
            console.print(table)
    knobs = {name: k for name, k in out.get("agent_knobs", {}).items() if k}
    if knobs:
        table = Table(title="agent knobs (--set agent.<knob>=...)", title_justify="left", show_lines=True)
        table.add_column("agent", style="bold")
        table.add_column("knob", style="bold")
        table.add_column("values; default: what it does")
        for name, described in knobs.items():
            for knob, text in described.items():
                table.add_row(name, knob, text)
        console.print(table)
    if "tools" in out:
        console.print(_tools_table(out["tools"]))
    if "faults" in out:
        console.print(_faults_table(out["faults"]))
        table = Table(title="message qualities (quality = ...)", title_justify="left")
        table.add_column("quality", style="bold")
        table.add_column("meaning")
        table.add_column("default text (explicit and absent: each kind's own)")
        for name, quality in out["qualities"].items():
            table.add_row(name, quality["meaning"], quality["text"] or "-")
        console.print(table)
