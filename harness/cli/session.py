"""``harness session``: run one session and show what happened.

Prints the record as a table (or one JSON object with ``--json``) and, with
``--trace FILE`` or ``--trace -``, the JSONL wire trace (to stdout, before the
record, for ``-``). A broken scenario file or an unknown name is a one-line
error and exit status 2.
"""

from __future__ import annotations

import io
import json
import math
import sys
from pathlib import Path
from typing import Any

import click

from harness.cli.choices import NameChoice
from harness.cli.run import llm_options, model_settings
from harness.errors import UserError
from harness.protocol.codecs import CODECS
from harness.protocol.strategies import STRATEGIES
from harness.session.host import HOSTS
from harness.session.simulated import ERAS


def _jsonable(row: dict[str, Any]) -> dict[str, Any]:
    return {k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in row.items()}


@click.command("session")
@click.argument("scenario")
@click.option(
    "--agent", "agent_name", default="reader", show_default=True, help="Scripted agent (harness list)."
)
@click.option("--strategy", type=NameChoice("strategy", STRATEGIES), default="is_error", show_default=True)
@click.option("--seed", type=click.IntRange(min=0), default=0, show_default=True)
@click.option(
    "--host",
    "host_mode",
    type=NameChoice("host", HOSTS),
    default="typical",
    show_default=True,
    help="What reaches the agent of an RPC error: the code (typical) or code and message.",
)
@click.option(
    "--era",
    type=NameChoice("era", ERAS),
    default="handshake",
    show_default=True,
    help="How the client speaks: handshake (initialize first) or stateless (2026-07-28: _meta on "
    "every request).",
)
@click.option("--codec", type=click.Choice(CODECS), default="json", show_default=True)
@click.option(
    "--trace",
    "trace_to",
    default=None,
    metavar="FILE|-",
    help="Write the JSONL trace to FILE, or - for stdout.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the record as one JSON object.")
@click.option(
    "--server",
    default=None,
    metavar="CMD",
    help="Run the SCENARIO file against a real MCP server started with CMD, behind the proxy "
    "(docs/real-servers.md); a scenario file with a [server] table names its own.",
)
@llm_options
@click.option(
    "--set",
    "sets",
    multiple=True,
    metavar="KEY=VALUE",
    help="A scenario override (e.g. faults.rate=0.3, max_steps=20) or an agent knob "
    "(e.g. agent.backoff=exponential), as harness run --set takes them, one value each; repeatable.",
)
def command(
    scenario: str,
    agent_name: str,
    strategy: str,
    seed: int,
    host_mode: str,
    era: str,
    codec: str,
    trace_to: str | None,
    as_json: bool,
    sets: tuple[str, ...],
    llm_base_url: str | None,
    llm_model: str | None,
    llm_api_key_env: str,
    cassette: Path | None,
    replay: bool,
    server: str | None = None,
) -> int:
    """Run SCENARIO (a shipped name, a .toml path or a world's task, agentdojo/<suite>/<task> or
    bfcl/<category>/<id>) once and print its record."""
    from harness.batch.grid import parse_sets
    from harness.scenarios.scenario import Scenario, load_scenario
    from harness.session.registry import split_agent_params
    from harness.session.simulated import run_session

    values: list[tuple[str, Any]] = []
    for key, given in parse_sets(sets):
        if len(given) != 1:
            raise UserError(f"--set {key}: one session takes one value (harness run sweeps several)")
        values.append((key, given[0]))
    knobs, overrides = split_agent_params(tuple(values))
    settings = model_settings(
        (agent_name,), llm_base_url, llm_model, llm_api_key_env, cassette, replay, agents_flag="--agent"
    )
    if settings:  # the --llm-* flags, under any agent.* knob the user set with --set
        knobs = {**dict(settings[0][1]), **knobs}
    from harness.cli.served import is_served_run
    from harness.worlds import is_world_name

    loaded: Scenario
    served = is_served_run((scenario,), server)
    world = is_world_name(scenario) and not served
    if world:  # a world's task: the world's tools and judge (harness.worlds.session)
        from harness.batch.kinds import kind_for
        from harness.session.loop import LoopKind
        from harness.worlds.scenario import load_world

        loaded = load_world(scenario)
        kind = kind_for(loaded)
        assert isinstance(kind, LoopKind)
        run_session = kind.run_session
    elif served:  # a scenario for a real server: its own loader and session (harness.proxy.session)
        from harness.cli.served import check_servers
        from harness.proxy.session import run_served_session as run_session
        from harness.scenarios.served import load_served

        loaded = load_served(scenario, server)
        check_servers([loaded])
    else:
        loaded = load_scenario(scenario)
    if overrides:
        loaded = loaded.with_overrides(dict(overrides))
    buffer = io.BytesIO() if trace_to is not None else None
    result = run_session(
        loaded, agent_name, strategy, seed, codec, buffer, host=host_mode, agent_params=knobs or None, era=era
    )
    if buffer is not None and trace_to is not None:
        data = buffer.getvalue()
        if trace_to == "-":
            sys.stdout.flush()
            sys.stdout.buffer.write(data)
            sys.stdout.buffer.flush()
        else:
            try:
                with open(trace_to, "wb") as fh:
                    fh.write(data)
            except OSError as exc:
                raise UserError(f"{trace_to}: cannot write the trace: {exc.strerror or exc}") from None
    row = result.to_row()
    if as_json:
        click.echo(json.dumps(_jsonable(row), allow_nan=False))
    else:
        _print_record(row)
    from harness.session.simulated import Solvability, oracle_check

    check: Solvability | None
    if world:
        from harness.batch.kinds import world_check
        from harness.worlds.scenario import WorldScenario

        assert isinstance(loaded, WorldScenario)
        check = world_check(loaded, range(seed, seed + 1), era=era)
    else:
        check = None if served else oracle_check(loaded, range(seed, seed + 1), era=era)
    if check is not None and not check.solved:  # every agent would fail here: no finding about this one
        click.echo(f"harness session: warning: {check.line(scenario)}", err=True)
    if row["status"] == "harness_error":
        from harness.cli.run import HARNESS_ERROR_EXIT

        if result.traceback:
            click.echo(result.traceback.rstrip(), err=True)
        click.echo(f"harness session: the session broke (harness_error): {row['error']}", err=True)
        return HARNESS_ERROR_EXIT
    return 0


def _print_record(row: dict[str, Any]) -> None:
    from rich.console import Console
    from rich.table import Table

    table = Table(title=f"{row['scenario']} · {row['agent']} · {row['strategy']} · seed {row['seed']}")
    table.add_column("column", style="bold")
    table.add_column("value")
    for key, value in row.items():
        if (
            isinstance(value, int)
            and not isinstance(value, bool)
            and value == 0
            and key.startswith(("faults_", "errors_"))
        ):
            continue  # zero counters add nothing for a reader; --json shows every column
        shown = f"{value:.6f}" if key == "wall_time_s" else str(value)
        table.add_row(key, shown)
    Console().print(table)
