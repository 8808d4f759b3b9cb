"""``harness run --server CMD``: a batch of served scenarios, checked against the server first.

:func:`served_grid` builds the grid of a run whose scenarios are files for a real server
(:mod:`harness.scenarios.served`): every name is checked as ``harness run`` checks it, and each
scenario against its server's ``tools/list`` (the server started once, fresh, in a directory of
its own), so that a tool the server lacks, or arguments that do not fit its schema, is one line
and exit 2 before any session runs. Each cell then runs as the served kind of session
(:data:`harness.proxy.session.SERVED`), chosen by its scenario's type; a resumed run or a replay
finds its served scenarios again in the manifest's ``scenario_sources``.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from collections.abc import Iterable, Sequence
from typing import Any

from harness.batch.grid import Axes, Grid, given_names, parse_sets, split_names
from harness.errors import UserError
from harness.protocol.client import MCPClient
from harness.protocol.errors import RPCError, TransportError
from harness.proxy.session import problems
from harness.scenarios.served import (
    SERVED_PREFIX,
    ServedScenario,
    ServerSpec,
    has_server_table,
    load_served,
    served_source,
)

START_TIMEOUT_S = 60.0
"""Seconds the check waits for a server's handshake and tool list (a first ``npx`` may download)."""


def is_served(source: str) -> bool:
    """Whether a batch's scenario source names a served scenario."""
    return source.startswith(SERVED_PREFIX)


def is_served_run(scenarios: Iterable[str], server: str | None) -> bool:
    """Whether ``harness run`` was asked for a served run: ``--server``, or a scenario file with a
    ``[server]`` table."""
    if server is not None:
        return True
    return any(spec.endswith(".toml") and has_server_table(spec) for spec in split_names(tuple(scenarios)))


def served_grid(
    scenarios: Sequence[str],
    agents: Sequence[str],
    strategies: Sequence[str],
    hosts: Sequence[str],
    seeds: int,
    sets: Sequence[str],
    eras: Sequence[str] = (),
    server: str | None = None,
    families: Sequence[str] = (),
) -> tuple[Grid, tuple[tuple[str, str], ...]]:
    """The grid of a served run and its scenario sources; UserError (one line) for any mistake,
    a scenario that does not fit its server's tools included."""
    from harness.scenarios.scenario import list_scenarios
    from harness.session.registry import check_agent_params

    if families:
        raise UserError("--family samples simulated scenarios; a served run takes scenario files")
    names = given_names(scenarios, "SCENARIOS")
    if not names:
        raise UserError("--server: name the scenario files to run against the server (SCENARIO.toml ...)")
    loaded: list[ServedScenario] = []
    sources: dict[str, str] = {}
    for spec in names:
        if not spec.endswith(".toml"):
            if spec in list_scenarios():
                raise UserError(
                    f"{spec}: a simulated scenario; a served run takes scenario files written for the "
                    "server's tools (docs/real-servers.md)"
                )
            raise UserError(f"{spec}: not a scenario file (a served run takes SCENARIO.toml paths)")
        sc = load_served(spec, server)
        if sc.name in sources:
            raise UserError(f"{spec}: a second scenario named {sc.name!r}; names must differ")
        loaded.append(sc)
        sources[sc.name] = served_source(spec, server)
    check_servers(loaded)
    axes = Axes.named(agents, strategies, hosts, eras, seeds)
    sweeps = parse_sets(sets)
    for key, values in sweeps:
        for v in values:
            if key.startswith("agent."):
                for a in axes.agents:
                    check_agent_params(a, {key: v})
            else:
                loaded[0].with_overrides({key: v})
    grid = Grid(tuple(sources), axes.agents, axes.strategies, axes.hosts, axes.seeds, sweeps, axes.eras)
    return grid, tuple(sorted(sources.items()))


def check_servers(scenarios: Sequence[ServedScenario]) -> None:
    """Start each scenario's server once (fresh, in a temporary directory), list its tools, and
    raise UserError naming the first thing a scenario asks of it that it does not have."""
    listed: dict[ServerSpec, dict[str, dict[str, Any]]] = {}
    for sc in scenarios:
        if sc.server not in listed:
            listed[sc.server] = server_tools(sc.server, sc.protocol)
        lines = problems(sc, listed[sc.server])
        if lines:
            more = f" (and {len(lines) - 1} more)" if len(lines) > 1 else ""
            raise UserError(lines[0] + more)


def server_tools(server: ServerSpec, protocol: str) -> dict[str, dict[str, Any]]:
    """The tools a server lists (name -> descriptor), started fresh in a temporary directory."""
    from harness.transports.stdio import StdioTransport

    workdir = tempfile.mkdtemp(prefix="harness-served-check-")
    transport: StdioTransport | None = None
    shown = " ".join(server.command)
    try:
        try:
            transport = StdioTransport(
                server.argv(workdir),
                timeout=START_TIMEOUT_S,
                env=server.environment(workdir),
                cwd=workdir,
                stderr=subprocess.PIPE,
            )
        except TransportError as exc:
            raise UserError(f"--server {shown}: the server did not start: {exc}") from None
        client = MCPClient(transport, protocol_version=protocol)
        try:
            client.connect()
            tools = client.list_tools()
        except (RPCError, TransportError) as exc:
            tail = "; ".join(transport.stderr_lines[-2:])
            said = f" (its stderr: {tail})" if tail else ""
            raise UserError(f"--server {shown}: no tools/list from the server: {exc}{said}") from None
        return {str(t.get("name")): dict(t) for t in tools if isinstance(t, dict)}
    finally:
        if transport is not None:
            transport.close()
        shutil.rmtree(workdir, ignore_errors=True)
