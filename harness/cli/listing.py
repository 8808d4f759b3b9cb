"""``harness list``: the shipped scenarios (with one-line summaries), agents and strategies."""

from __future__ import annotations

import json

import click

STRATEGY_SUMMARIES: dict[str, str] = {
    "is_error": "isError result with the readable reason (the reference).",
    "masked": "isError result, reason hidden (the official SDK's default).",
    "collapse": "JSON-RPC -32603 carrying the reason (a host may drop it).",
    "escape": "The exception leaves the server: the session is wedged.",
}


@click.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object instead of tables.")
def command(as_json: bool) -> None:
    """List scenarios, agents and error-handling strategies."""
    from harness.protocol.strategies import STRATEGIES
    from harness.sim.registry import agent_class, list_agents
    from harness.sim.scenario import list_scenarios, load_scenario

    scenarios = {name: load_scenario(name).summary for name in list_scenarios()}
    agents = {name: agent_class(name).summary for name in list_agents()}
    strategies = {name: STRATEGY_SUMMARIES.get(name, "") for name in STRATEGIES}
    if as_json:
        click.echo(json.dumps({"scenarios": scenarios, "agents": agents, "strategies": strategies}, indent=2))
        return
    from rich.console import Console
    from rich.table import Table

    console = Console()
    for title, items in (("scenarios", scenarios), ("agents", agents), ("strategies", strategies)):
        table = Table(title=title, title_justify="left")
        table.add_column("name", style="bold")
        table.add_column("summary")
        for name, text in items.items():
            table.add_row(name, text)
        console.print(table)
