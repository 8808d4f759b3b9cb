"""``harness run``: the main job -- a grid of sessions into a results directory."""

from __future__ import annotations

import contextlib
import dataclasses
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import click

from harness.batch.grid import Axes, Grid, given_names, parse_sets, split_names
from harness.errors import OutputError, UserError, cannot_write, unknown_name

F = TypeVar("F", bound=Callable[..., Any])

HARNESS_ERROR_EXIT = 3
"""``harness run``'s exit status when any session of the run is a ``harness_error`` (an agent that
raised, a harness bug) and ``--allow-errors`` was not given; ``harness session``'s for its one."""
BUDGET_EXIT = 4
"""``harness run``'s exit status when ``--max-requests`` or ``--max-tokens`` stopped the run: its
finished sessions are kept and ``--resume`` finishes it."""
INTERRUPTED_EXIT = 130
"""``harness run``'s exit status after Ctrl-C (128 + SIGINT); after SIGTERM it is 143 (128 + 15)."""
BIG_GRID = 10_000_000
"""Sessions from which a new run asks to be confirmed (``--yes``), saying how long it would take."""
RATE_SAMPLE_S = 1.0
"""Seconds of sessions run (and dropped) to measure the rate a big grid would run at."""
DEFAULT_SEEDS = 100
STUDY_SCENARIOS = 200
"""``--study`` samples at least this many scenarios, spread evenly over the shipped families."""
STUDY_SEEDS = 5
"""``--study``'s seeds per scenario: the scenario is the unit, so few seeds and many scenarios."""
WORLD_STUDY_SEEDS = 2
"""``--study --worlds``' seeds per scenario: each task comes in several fault draws
(:data:`harness.worlds.task.FAULT_DRAWS`), so its sessions under our faults are draws x seeds;
a world event's or an injection's session has no random draw and is the same at every seed."""
HOSTS = ("typical", "transparent")
ERAS = ("handshake", "stateless")
"""Spelled here so that the CLI loads fast; :data:`harness.session.simulated.ERAS` holds them too
(a test holds the two equal)."""


def build_grid(
    scenarios: tuple[str, ...],
    agents: tuple[str, ...],
    strategies: tuple[str, ...],
    hosts: tuple[str, ...],
    seeds: int,
    sets: tuple[str, ...],
    families: tuple[str, ...] = (),
    count: int = 0,
    family_seed: int = 0,
    eras: tuple[str, ...] = (),
) -> tuple[Grid, tuple[tuple[str, str], ...]]:
    """Validate every name now (nearest-name hints) and load every scenario once.

    ``families`` add ``count`` scenarios each, sampled with ``family_seed``; they reach the
    workers as :func:`harness.scenarios.family.family_source` strings, not as files.
    """
    from harness.scenarios.family import drawn, family_source, load_family
    from harness.scenarios.scenario import list_scenarios, load_scenario
    from harness.session.registry import check_agent_params
    from harness.worlds import is_world_name

    sources: dict[str, str] = {}
    names: list[str] = []
    family_names = given_names(families, "--family")
    for fname in family_names:
        fam = load_family(fname)
        for index, (name, _) in enumerate(drawn(fam, count, family_seed)):
            if name in sources:
                raise UserError(f"--family {fname}: scenario {name} is drawn twice (a family named twice?)")
            names.append(name)
            sources[name] = family_source(fam, count, family_seed, index)
    for spec in given_names(scenarios, "SCENARIOS") or (() if family_names else tuple(list_scenarios())):
        if is_world_name(spec):  # a world's tasks (harness.worlds): named, not loaded, here
            from harness.worlds.scenario import world_names, world_source

            for name in world_names(spec):
                if name in sources:
                    raise UserError(f"{spec}: world scenario {name} is named twice")
                names.append(name)
                sources[name] = world_source(name)
            continue
        if not spec.endswith(".toml") and spec not in list_scenarios():
            raise unknown_name(
                "scenario", spec, [*list_scenarios(), "agentdojo/<suite>[/<task>]", "bfcl/<category>[/<id>]"]
            )
        scenario = load_scenario(spec)
        names.append(scenario.name)
        if spec != scenario.name:
            sources[scenario.name] = str(Path(spec).resolve())
    # The default grid: every registered agent that needs no model endpoint (docs/llm.md).
    axes = Axes.named(agents, strategies, hosts, eras, seeds)
    agent_names = axes.agents
    sweeps = parse_sets(sets)
    if sweeps:
        from harness.batch.kinds import load_source

        probe = load_source(sources.get(names[0], names[0]))
        for key, values in sweeps:
            for v in values:
                if key.startswith("agent."):  # an agent knob: every agent of the grid must take it
                    for a in agent_names:
                        check_agent_params(a, {key: v})
                else:
                    probe.with_overrides({key: v})  # raises ScenarioError for a bad key or value
    grid = Grid(tuple(names), axes.agents, axes.strategies, axes.hosts, axes.seeds, sweeps, axes.eras)
    return grid, tuple(sorted(sources.items()))


UNSOLVABLE_SHOWN = 5
"""Unsolvable scenarios ``harness run`` names one line each before the rest are counted."""


def unsolvable(grid: Grid, sources: tuple[tuple[str, str], ...]) -> list[str]:
    """One line for each scenario of ``grid`` (and each combination of its scenario sweeps) that
    even the oracle cannot solve in the grid's first seeds
    (:func:`harness.session.simulated.oracle_check`)."""
    import itertools

    from harness.scenarios.family import load_source
    from harness.session.simulated import ORACLE_SEEDS, oracle_check
    from harness.worlds import is_world_source

    where = dict(sources)
    swept = [(k, v) for k, v in grid.sweeps if not k.startswith("agent.")]
    seeds = list(itertools.islice(grid.seeds, ORACLE_SEEDS))
    lines = []
    for name in grid.scenarios:
        for values in itertools.product(*(v for _, v in swept)):
            params = tuple(zip((k for k, _ in swept), values, strict=True))
            source = where.get(name, name)
            if is_world_source(source):  # the oracle follows the plan; the world's judge decides
                from harness.batch.kinds import world_check
                from harness.worlds.scenario import WorldScenario
                from harness.worlds.scenario import load_source as load_world_source

                world = load_world_source(source, params)
                assert isinstance(world, WorldScenario)
                check = world_check(world, seeds)
            else:
                check = oracle_check(load_source(source, params), seeds)
            if not check.solved:
                at = " ".join(f"{k}={v}" for k, v in params)
                lines.append(check.line(f"{name} ({at})" if at else name))
    return lines


def warn_unsolvable(lines: list[str]) -> None:
    """The pre-check's lines on stderr: the first :data:`UNSOLVABLE_SHOWN`, then a count."""
    for line in lines[:UNSOLVABLE_SHOWN]:
        click.echo(f"harness run: warning: {line}", err=True)
    if len(lines) > UNSOLVABLE_SHOWN:
        click.echo(
            f"harness run: warning: {len(lines) - UNSOLVABLE_SHOWN} more scenarios are unsolvable even "
            "by the oracle (harness check names them, for files harness generate writes)",
            err=True,
        )


def load_comparison() -> None:
    """Import what the comparison needs (pandas, scipy, statsmodels, rich, the report's modules:
    after the run they were most of its time in a study)."""
    import rich.console
    import rich.table  # noqa: F401

    import harness.cli.compare
    import harness.report.documents
    import harness.report.effects
    import harness.report.findings
    import harness.report.stats  # noqa: F401


class Beside(threading.Thread):
    """Work of this process's own, done in a thread while a pool's workers run the sessions.

    A run on a process pool leaves this process waiting on its workers most of the time; the
    oracle's pre-check (:func:`unsolvable`) and the comparison's imports would otherwise come
    before and after the run, each with one core busy and the other idle. The steps run in
    order and print nothing (what they have to say is kept for the main thread, so that it
    does not land in the middle of the progress lines); an exception from one is raised again
    by :meth:`finish`, once the run is over. A run that is interrupted does not wait for them:
    the thread is a daemon, and what it found is dropped.
    """

    def __init__(self) -> None:
        super().__init__(name="beside-the-run", daemon=True)
        self.steps: list[Callable[[], None]] = []
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            for step in self.steps:
                step()
        except BaseException as exc:  # raised again in the main thread, by finish()
            self.error = exc

    def finish(self) -> None:
        """Wait for the steps (run in this thread if never started), then raise what they raised."""
        if self.ident is None:
            self.run()
        else:
            self.join()
        if self.error is not None:
            raise self.error


def calls_a_model(spec: str) -> bool:
    """Whether an agent asks a model endpoint (``calls_a_model`` on its class: the llm agent's
    ``--llm-*`` flags go to it, and the default grid leaves it out)."""
    from harness.session.registry import agent_class

    return bool(getattr(agent_class(spec), "calls_a_model", False))


def model_settings(
    grid: Grid | tuple[str, ...],
    base_url: str | None,
    model: str | None,
    key_env: str,
    cassette: Path | None,
    replay: bool,
    agents_flag: str = "--agents",
) -> tuple[tuple[str, tuple[tuple[str, object], ...]], ...]:
    """Each model agent's settings from the ``--llm-*`` flags, checked now; what the workers
    and the manifest get (the key's variable name, never the key; a knob the grid sweeps is left
    to the sweep). ``grid`` may be a tuple of agent specs (``harness session``'s one agent)."""
    from harness.session.registry import make_agent

    given = {"--llm-base-url": base_url, "--llm-model": model, "--cassette": cassette, "--replay": replay}
    agents, swept_names = (grid.agents, grid.param_names) if isinstance(grid, Grid) else (grid, ())
    models = [a for a in agents if calls_a_model(a)]
    if not models:
        flag = next((f for f, v in given.items() if v), None)
        if flag:
            raise UserError(f"{flag} goes with an agent that calls a model ({agents_flag} llm)")
        return ()
    if replay and cassette is None:
        raise UserError("--replay needs --cassette PATH: the recording to answer every request from")
    if replay and cassette is not None and not cassette.is_file():
        raise UserError(f"--cassette {cassette}: no such file to replay")
    if not replay and not base_url:
        raise UserError(f"{agents_flag} {models[0]} needs --llm-base-url URL (or --replay --cassette PATH)")
    if not model:
        raise UserError(f"{agents_flag} {models[0]} needs --llm-model NAME")
    flags: dict[str, object] = {"model": model, "api_key_env": key_env, "replay": replay}
    if base_url:
        flags["base_url"] = base_url
    if cassette is not None:
        flags["cassette"] = str(cassette.expanduser().resolve())
    out = []
    for spec in models:
        settings = getattr(make_agent(spec, flags), "settings", flags)
        swept = {name.removeprefix("agent.") for name in swept_names}
        out.append((spec, tuple((k, v) for k, v in settings.items() if k not in swept and v is not None)))
    return tuple(out)


LLM_OPTIONS = (
    click.option("--llm-base-url", default=None, metavar="URL", help="The llm agent's endpoint, up to /v1."),
    click.option("--llm-model", default=None, metavar="NAME", help="The model the llm agent asks."),
    click.option(
        "--llm-api-key-env",
        default="OPENAI_API_KEY",
        show_default=True,
        metavar="VAR",
        help="The environment variable holding the API key (the key is never written anywhere).",
    ),
    click.option(
        "--cassette",
        type=click.Path(path_type=Path, dir_okay=False),
        default=None,
        help="Record every model request and answer in this JSONL file (answered from it when there).",
    ),
    click.option("--replay", is_flag=True, help="Answer every model request from --cassette; no endpoint."),
)
"""The flags that set up an agent that calls a model, the same for ``run`` and ``session``."""


def llm_options(fn: F) -> F:
    """Decorate a command with :data:`LLM_OPTIONS`, in their order."""
    for option in reversed(LLM_OPTIONS):
        fn = option(fn)
    return fn


def print_dry_run(grid: Grid, sources: tuple[tuple[str, str], ...], options: Any = None) -> None:
    """Print the grid's size and, per model agent, the model requests it can cost: exactly for a
    replay (``options`` replays from a cassette: the grid is run against it, nothing written),
    at most otherwise."""
    import itertools

    from harness.scenarios.family import load_source
    from harness.session.registry import split_agent_params

    axes = (
        f"{len(grid.scenarios)} scenarios x {len(grid.agents)} agents x {len(grid.strategies)} strategies"
        f" x {len(grid.hosts)} hosts x {len(grid.eras)} eras x {len(grid.seeds)} seeds"
        + "".join(f" x {len(values)} {name}" for name, values in grid.sweeps)
    )
    click.echo(f"harness run --dry-run: {len(grid)} sessions ({axes}); nothing is run")
    found = dict(sources)
    keys = len(grid.hosts) * len(grid.eras) * len(grid.seeds)  # baseline keys per scenario and sweep
    per_load = len(grid.strategies) * keys
    replaying = {
        agent for agent, knobs in (options.agent_settings if options else ()) if dict(knobs).get("replay")
    }
    for spec in (a for a in grid.agents if calls_a_model(a)):
        if spec in replaying:
            print_replay_count(spec, grid, options)
            continue
        sessions = requests = baselines = 0
        for name in grid.scenarios:
            for values in itertools.product(*(v for _, v in grid.sweeps)):
                _, overrides = split_agent_params(tuple(zip(grid.param_names, values, strict=True)))
                scenario = load_source(found.get(name, name), ())
                if overrides:
                    scenario = scenario.with_overrides(dict(overrides))
                sessions += per_load
                requests += per_load * scenario.max_steps
                baselines += keys * scenario.max_steps if scenario.faults else 0
        click.echo(
            f"harness run --dry-run: {spec}: {sessions} sessions x their step budgets = at most "
            f"{requests} model requests (retries not counted), and at most {baselines} more for the "
            "fault-free baselines of scenarios with faults, one per (scenario, seed, host, era, swept "
            "values), whatever the strategies (with --cassette an identical request is asked once)"
        )


def print_replay_count(spec: str, grid: Grid, options: Any) -> None:
    """The exact number of model requests a replay of ``grid`` asks for agent ``spec``: the grid
    is run against the cassette here (no endpoint, nothing written)."""
    from harness.batch.model import count_replay

    mine = dataclasses.replace(grid, agents=(spec,))
    count = count_replay(mine, options)
    total = count.session_requests + count.baseline_requests
    click.echo(
        f"harness run --dry-run: {spec}: a replay asks exactly {total} model requests of the cassette: "
        f"{count.session_requests} for {count.sessions} sessions and {count.baseline_requests} for "
        f"{count.baselines} fault-free baselines (each run once); no endpoint is asked"
    )
    if count.missed:
        click.echo(
            f"harness run --dry-run: {spec}: {count.missed} sessions or baselines ask a request the "
            f"cassette does not hold (they would be harness errors); the first: {count.first_miss}"
        )


Advance = Callable[[int, Any], None]
"""A progress callback: sessions just finished, and what the model requests cost so far (a
:class:`harness.batch.model.Usage`, or None when no agent calls a model)."""


def progress_factory(enabled: bool, shown: list[Any] | None = None) -> Callable[[int, int], Advance] | None:
    """A rich progress bar with rate and ETA on a terminal (and, with a model, its requests,
    tokens, tokens per second and requests left); nothing in CI or a pipe. Each bar started is
    put in ``shown``, for the caller to stop when the run stops early."""
    if not enabled:
        return None
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TaskProgressColumn,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    def start(total: int, done: int) -> Advance:
        progress = Progress(
            TextColumn("sessions"),
            BarColumn(),
            MofNCompleteColumn(),
            TaskProgressColumn(),
            TextColumn("{task.fields[rate]}"),
            TimeElapsedColumn(),
            TextColumn("ETA"),
            TimeRemainingColumn(),
            TextColumn("{task.fields[model]}"),
            console=Console(stderr=True),
            transient=True,
        )
        task = progress.add_task("run", total=total, completed=done, rate="", model="")
        progress.start()
        if shown is not None:
            shown.append(progress)
        started, ran = time.perf_counter(), 0

        def advance(n: int, usage: Any = None) -> None:
            nonlocal ran
            ran += n
            rate = ran / max(time.perf_counter() - started, 1e-9)
            model = f"model: {usage.line()}" if usage is not None else ""
            progress.update(task, advance=n, rate=f"{rate:,.0f}/s", model=model)
            if progress.finished:
                progress.stop()

        return advance

    return start


def line_progress(total: int, done: int) -> Advance:
    """Progress as a line on stderr at every tenth of the run (where no bar can be drawn), with
    what the model requests cost so far when an agent calls a model."""
    started, state = time.perf_counter(), {"done": done, "shown": done * 10 // max(total, 1)}

    def advance(n: int, usage: Any = None) -> None:
        state["done"] += n
        tenth = state["done"] * 10 // max(total, 1)
        if tenth > state["shown"]:
            state["shown"] = tenth
            elapsed = time.perf_counter() - started
            model = f"; model: {usage.line()}" if usage is not None else ""
            click.echo(f"harness run: {state['done']}/{total} sessions ({elapsed:.0f} s){model}", err=True)

    return advance


@dataclass(frozen=True)
class RunRequest:
    """What ``harness run`` was asked, as parsed: every option's value, and which of them the user
    gave (``given``): a value left at its default yields to a resumed run's or the study's."""

    scenarios: tuple[str, ...]
    agents: tuple[str, ...]
    strategies: tuple[str, ...]
    hosts: tuple[str, ...]
    eras: tuple[str, ...]
    seeds: int
    sets: tuple[str, ...]
    out: Path | None
    executor: str
    workers: int | None
    scheduler: str | None
    resume: bool
    traces: bool
    codec: str
    by: str
    no_compare: bool
    explain: bool
    families: tuple[str, ...]
    count: int
    family_seed: int
    study: bool
    worlds: bool
    llm_base_url: str | None
    llm_model: str | None
    llm_api_key_env: str
    cassette: Path | None
    replay: bool
    llm_concurrency: int
    max_requests: int | None
    max_tokens: int | None
    dry_run: bool
    allow_errors: bool
    session_timeout: float = 600.0
    yes: bool = False
    server: str | None = None
    given: frozenset[str] = frozenset()

    def gave(self, name: str) -> bool:
        return name in self.given


@dataclass(frozen=True)
class RunPlan:
    """What a request resolves to before anything runs (:func:`plan`): the grid, its sources and
    options, where it runs, and what is said before it starts."""

    request: RunRequest
    grid: Grid
    sources: tuple[tuple[str, str], ...]
    options: Any
    """The sessions' :class:`harness.batch.runner.SessionOptions`."""
    kinds: Any
    """Each cell's kind of session (:func:`harness.batch.kinds.grid_kinds`)."""
    budget: Any
    """The model requests' :class:`harness.batch.runner.Budget`."""
    executor: str
    where: str
    """The executor as announced (with why it was chosen)."""
    workers: int | None
    scheduler: str | None
    resume: bool
    out: Path | None
    """The run's folder: a resumed run's, the one asked for, or None for a new default one."""
    families: tuple[str, ...]
    family_seed: int
    settings: tuple[tuple[str, tuple[tuple[str, Any], ...]], ...]
    notes: tuple[str, ...] = ()
    """Lines said before the run starts."""

    @property
    def in_process(self) -> bool:
        """Whether every session runs in this machine's processes (no real server's)."""
        return "served" not in self.kinds


@click.command("run")
@click.argument("scenarios", nargs=-1)
@click.option("--agents", multiple=True, help="Agents to run (comma-separated or repeated); default all.")
@click.option("--strategies", multiple=True, help="tool_errors strategies; default all five.")
@click.option("--hosts", multiple=True, help="Host models (typical, transparent); default typical.")
@click.option(
    "--eras",
    multiple=True,
    help="Protocol eras: handshake (initialize first), stateless (2026-07-28); default handshake.",
)
@click.option("--seeds", type=int, default=DEFAULT_SEEDS, show_default=True, help="Seeds 0..N-1 per cell.")
@click.option("--set", "sets", multiple=True, metavar="KEY=V1,V2", help="Sweep a scenario parameter.")
@click.option(
    "--out", type=click.Path(path_type=Path), default=None, help="Results directory; default results/<time>."
)
@click.option(
    "--executor",
    type=click.Choice(["serial", "process", "dask"]),
    default="process",
    show_default=True,
    help="Where sessions run; --resume keeps the run's unless given.",
)
@click.option(
    "--workers", type=click.IntRange(min=1), default=None, help="Worker processes; default all cores."
)
@click.option(
    "--scheduler",
    default=None,
    metavar="ADDRESS",
    help="A dask scheduler, e.g. tcp://host:8786; --resume keeps the run's unless given.",
)
@click.option("--resume", is_flag=True, help="Finish an interrupted run in --out (or the latest run).")
@click.option("--traces", is_flag=True, help="Also write every session's JSONL wire trace.")
@click.option("--codec", type=click.Choice(["json", "orjson", "msgspec"]), default="json", show_default=True)
@click.option(
    "--by", default="agent", show_default=True, help="Group the printed comparison by these columns."
)
@click.option("--no-compare", is_flag=True, help="Do not print the comparison at the end.")
@click.option("--explain", is_flag=True, help="Under the comparison, what each of its columns means.")
@click.option(
    "--server",
    default=None,
    metavar="CMD",
    help="Run the SCENARIO files against a real MCP server: CMD (one quoted command line; {workdir} "
    "names the session's fresh directory) is started anew for every session, behind the proxy "
    "(docs/real-servers.md). A scenario file with a [server] table names its own.",
)
@click.option(
    "--family",
    "families",
    multiple=True,
    help="Also run COUNT scenarios sampled from these families (names or paths; comma-separated).",
)
@click.option(
    "--count",
    type=click.IntRange(min=1),
    default=10,
    show_default=True,
    help="Scenarios sampled from each --family (--study: enough for 200 in all).",
)
@click.option(
    "--family-seed", type=click.IntRange(min=0), default=0, show_default=True, help="The families' seed."
)
@click.option(
    "--study",
    is_flag=True,
    help=f"The study preset: {STUDY_SCENARIOS}+ scenarios sampled from every shipped family, every agent "
    f"and strategy, {STUDY_SEEDS} seeds each (unless --seeds), compared with the scenario as the unit.",
)
@click.option(
    "--worlds",
    is_flag=True,
    help="With --study: the worlds' study instead (docs/worlds.md): every AgentDojo task under our "
    "upstream faults (three fault draws each), each admitted world event and both injection conditions, "
    "and every fourth BFCL multi-turn task under upstream and raised (three draws each), "
    f"{WORLD_STUDY_SEEDS} seeds each (unless --seeds); needs the [worlds] and [bfcl] extras.",
)
@llm_options
@click.option(
    "--llm-concurrency",
    type=click.IntRange(min=1),
    default=4,
    show_default=True,
    help="Model requests in flight at most on this machine (per worker on Dask): sessions of an "
    "agent that calls a model run this many at once, in threads, whatever --workers says; "
    "--resume keeps the run's unless given.",
)
@click.option(
    "--max-requests",
    type=click.IntRange(min=1),
    default=None,
    metavar="N",
    help="Stop cleanly once N model requests were sent (retries included; cassette answers are free); "
    "finished sessions are kept, --resume goes on.",
)
@click.option(
    "--max-tokens",
    type=click.IntRange(min=1),
    default=None,
    metavar="N",
    help="Stop cleanly once the endpoint reported N tokens (prompt and completion); as --max-requests.",
)
@click.option(
    "--dry-run",
    is_flag=True,
    help="Print the grid's size and its model requests (exactly for a --replay, else at most); run nothing.",
)
@click.option(
    "--session-timeout",
    type=click.FloatRange(min=0),
    default=600.0,
    show_default=True,
    metavar="S",
    help="Stop a session that takes longer than S seconds (an agent that hangs) and record it as a "
    "harness_error with the reason; a scripted session takes milliseconds, so only a hang reaches "
    "it (0: no limit).",
)
@click.option(
    "--yes",
    is_flag=True,
    help=f"Run a grid of more than {BIG_GRID:,} sessions without asking (the question says how long "
    "it would take at the rate measured here).",
)
@click.option(
    "--allow-errors",
    is_flag=True,
    help=f"Exit 0 even when sessions broke inside the harness or their agent raised (else exit "
    f"{HARNESS_ERROR_EXIT}); such sessions are left out of every rate either way.",
)
@click.pass_context
def command(ctx: click.Context, /, **params: Any) -> int:
    """Run every scenario x agent x strategy x seed (default: all shipped, 100 seeds) and compare.

    With --family, scenarios sampled from families run too (and alone when no SCENARIOS are
    named); --study is the preset over the shipped families, which takes a few minutes.
    """
    request = _request(ctx, params)
    run_plan = plan(request)
    if request.dry_run:
        print_dry_run(run_plan.grid, run_plan.sources, run_plan.options)
        return 0
    return execute(run_plan)


def _request(ctx: click.Context, params: dict[str, Any]) -> RunRequest:
    return RunRequest(**params, given=frozenset(name for name in params if _given(ctx, name)))


def parse_request(args: list[str]) -> RunRequest:
    """The request ``harness run ARGS`` makes, parsed as the command line parses it; nothing runs
    (what :func:`plan` is tested on)."""
    ctx = command.make_context("run", list(args))
    return _request(ctx, dict(ctx.params))


def plan(request: RunRequest) -> RunPlan:
    """Resolve a request into the run it asks for, reading only what is on disk (a resumed run's
    manifest, the scenario files): every mistake in it a UserError before anything runs or any
    folder is made. Tested on its own (``tests/cli/test_run_plan.py``)."""
    from harness.batch.kinds import grid_kinds
    from harness.batch.results import ResultsDir, WriterLock
    from harness.batch.runner import Budget, SessionOptions, default_executor
    from harness.cli.served import is_served_run, served_grid

    r = request  # the values below change as the plan resolves them (--study, --resume)
    scenarios, agents, strategies, hosts = r.scenarios, r.agents, r.strategies, r.hosts  # fmt: skip
    eras, seeds, sets, out, executor = r.eras, r.seeds, r.sets, r.out, r.executor  # fmt: skip
    workers, scheduler, resume, traces = r.workers, r.scheduler, r.resume, r.traces  # fmt: skip
    codec, by, families, count, family_seed = r.codec, r.by, r.families, r.count, r.family_seed  # fmt: skip
    study, worlds, llm_base_url, llm_model = r.study, r.worlds, r.llm_base_url, r.llm_model  # fmt: skip
    llm_api_key_env, cassette, replay = r.llm_api_key_env, r.cassette, r.replay  # fmt: skip
    llm_concurrency, max_requests, max_tokens = r.llm_concurrency, r.max_requests, r.max_tokens  # fmt: skip
    dry_run, session_timeout, server = r.dry_run, r.session_timeout, r.server  # fmt: skip
    notes: list[str] = []
    if server is not None and resume:
        raise UserError("--resume keeps the run's server (its manifest): drop --server")

    if worlds and not study:
        raise UserError("--worlds goes with --study (harness run --study --worlds)")
    if study:
        if resume or scenarios or families:
            raise UserError("--study is a preset of its own: drop SCENARIOS, --family and --resume")
        from harness.scenarios.family import list_families

        if worlds:
            from harness.worlds.scenario import study_names

            scenarios = tuple(study_names())
        else:
            families = tuple(list_families())
            if not families:
                raise UserError("--study: no shipped families (scenarios/families/*.toml)")
            if not request.gave("count"):
                count = -(-STUDY_SCENARIOS // len(families))
        if not request.gave("seeds"):
            seeds = WORLD_STUDY_SEEDS if worlds else STUDY_SEEDS
    if resume:
        if out is None:
            out = _latest_run()
        results = ResultsDir.open(out)
        WriterLock.check(results.path)  # a run being written now is refused before anything is said
        grid = results.grid
        sources = tuple(sorted(results.manifest.get("scenario_sources", {}).items()))
        kept = {"codec": results.manifest.get("codec", codec), "traces": bool(results.manifest.get("traces"))}
        for name, value in (("codec", codec), ("traces", traces)):
            if request.gave(name) and value != kept[name]:
                raise UserError(
                    f"--resume finishes {out} with the run's --{name} ({kept[name]}), not {value}: "
                    f"drop --{name}, or start a new run with another --out"
                )
        codec, traces = str(kept["codec"]), bool(kept["traces"])
        given = {
            name: request.gave(name)
            for name in ("scenarios", "agents", "strategies", "hosts", "eras", "seeds", "sets")
        }
        if any(given.values()):
            _refuse_another_grid(out, grid, given, scenarios, agents, strategies, hosts, seeds, sets, eras)
        if families:
            family_grid, _ = build_grid((), ("naive",), (), (), 1, (), families, count, family_seed)
            if not set(family_grid.scenarios) <= set(grid.scenarios):
                raise UserError(
                    f"--resume finishes {out} as it was started, but --family {','.join(families)} "
                    "draws other scenarios: drop --family to resume, or start a new run with another --out"
                )
        # The run goes on where it was started unless told otherwise.
        if not request.gave("llm_concurrency"):
            llm_concurrency = int(results.manifest.get("llm_concurrency") or llm_concurrency)
        if not request.gave("executor"):
            executor = str(results.manifest.get("executor") or executor)
            if not request.gave("scheduler") and executor == "dask":
                scheduler = results.manifest.get("scheduler") or None
            if executor == "serial" and results.manifest.get("status") == "running":
                # Its process ended with the run still going: a kill from outside, or a session
                # that ended it (a signal to itself). Worker processes find such a session and
                # record it as a harness_error, where the same process would meet it again.
                executor = "process"
                notes.append(
                    f"harness run --resume: {out} was left running by a serial run whose process ended; "
                    "resuming in worker processes (--executor serial to insist)"
                )
    elif is_served_run(scenarios, server):  # scenarios for a real server (harness.cli.served)
        grid, sources = served_grid(scenarios, agents, strategies, hosts, seeds, sets, eras, server, families)
    else:
        grid, sources = build_grid(
            scenarios, agents, strategies, hosts, seeds, sets, families, count, family_seed, eras
        )
    if resume:
        if any(
            request.gave(n) for n in ("llm_base_url", "llm_model", "llm_api_key_env", "cassette", "replay")
        ):
            raise UserError("--resume keeps the run's model settings (its manifest): drop the --llm-* flags")
        settings = tuple(
            (agent, tuple(knobs.items()))
            for agent, knobs in results.manifest.get("agent_settings", {}).items()
        )
    else:
        settings = model_settings(grid, llm_base_url, llm_model, llm_api_key_env, cassette, replay)
    budget = Budget(max_requests, max_tokens)
    if budget and not any(calls_a_model(a) for a in grid.agents):
        flag = "--max-requests" if max_requests is not None else "--max-tokens"
        raise UserError(f"{flag} goes with an agent that calls a model (--agents llm)")
    options = SessionOptions(
        codec=codec,
        traces=traces,
        scenario_sources=sources,
        agent_settings=settings,
        llm_concurrency=llm_concurrency,
        session_timeout=session_timeout or None,
    )
    kinds = grid_kinds(grid.scenarios, sources)  # each cell runs as its scenario's kind
    if dry_run and resume:
        raise UserError("--dry-run describes a new run: drop --resume")
    if scheduler and executor != "dask":
        raise UserError("--scheduler goes with --executor dask")
    from harness.session.simulated import ROW_COLUMNS

    known = (*ROW_COLUMNS, *grid.param_names)
    for col in split_names([by]):
        if col not in known:
            raise unknown_name("--by column", col, known)
    where = f"{executor}, {scheduler}" if scheduler else executor
    if not resume and not request.gave("executor") and "served" not in kinds:
        scripted = len(grid) // len(grid.agents) * sum(not calls_a_model(a) for a in grid.agents)
        executor, why = default_executor(scripted, workers or os.cpu_count() or 1)
        if why:
            where = f"{executor}: {why}; --executor process starts one anyway"
    return RunPlan(
        request=request, grid=grid, sources=sources, options=options, kinds=kinds, budget=budget,
        executor=executor, where=where, workers=workers, scheduler=scheduler, resume=resume, out=out,
        families=families, family_seed=family_seed, settings=settings, notes=tuple(notes),
    )  # fmt: skip


def execute(run_plan: RunPlan) -> int:
    """Run a plan (:func:`plan`): the last checks that touch the world (the scheduler reached, a
    big grid confirmed, the run's folder taken), then the batch, then the comparison; the exit
    status."""
    from harness.batch.results import ResultsDir
    from harness.batch.runner import SchedulerUnreachable, check_scheduler, default_out, run_batch

    request = run_plan.request
    grid, sources, options, budget = run_plan.grid, run_plan.sources, run_plan.options, run_plan.budget
    executor, where = run_plan.executor, run_plan.where
    workers, scheduler = run_plan.workers, run_plan.scheduler
    resume, out, families, family_seed, settings = (
        run_plan.resume, run_plan.out, run_plan.families, run_plan.family_seed, run_plan.settings
    )  # fmt: skip
    study, worlds, no_compare, explain, by, allow_errors, yes = (
        request.study, request.worlds, request.no_compare, request.explain, request.by, request.allow_errors,
        request.yes,
    )  # fmt: skip
    for line in run_plan.notes:
        click.echo(line, err=True)
    if scheduler:
        check_scheduler(scheduler)
    if not resume and len(grid) > BIG_GRID and not yes:
        confirm_big_grid(grid, options, workers or os.cpu_count() or 1)
    if not resume:
        # Last of the checks, and before anything is announced: the directory is taken now.
        out = ResultsDir.check_new(out) if out is not None else default_out()
    assert out is not None
    interactive = sys.stderr.isatty() and not os.environ.get("CI")
    in_process = run_plan.in_process
    verb = "resuming" if resume else "running"
    if study and worlds:
        click.echo(
            f"harness run --study --worlds: {len(grid.scenarios)} world scenarios, {len(grid.agents)} agents "
            f"x {len(grid.strategies)} strategies x {len(grid.seeds)} seeds; this may take a few minutes",
            err=True,
        )
    elif study:
        click.echo(
            f"harness run --study: {len(grid.scenarios)} scenarios sampled from {', '.join(families)} "
            f"(--family-seed {family_seed}), {len(grid.agents)} agents x {len(grid.strategies)} "
            f"strategies x {len(grid.seeds)} seeds; this may take a few minutes",
            err=True,
        )
    # With a pool, this process mostly waits on its workers: what it has to do of its own before
    # the run or after it (the oracle's check, loading the comparison's libraries) is done then,
    # and the check's warnings are printed once the run is over.
    beside = Beside() if executor == "process" else None
    oracle_lines: list[str] = []
    if not resume and in_process:  # the oracle cannot see a real server
        if beside is not None:
            beside.steps.append(lambda: oracle_lines.extend(unsolvable(grid, sources)))
        else:
            warn_unsolvable(unsolvable(grid, sources))
    if beside is not None and not no_compare:
        beside.steps.append(load_comparison)
    click.echo(f"harness run: {verb} {len(grid)} sessions -> {out} ({where})", err=True)
    bars: list[Any] = []
    signalled: list[int] = []
    try:
        with _signals_as_interrupt(signalled):
            if beside is not None:
                beside.start()
            summary = run_batch(
                grid,
                out,
                executor=executor,
                workers=workers,
                scheduler=scheduler,
                resume=resume,
                options=options,
                progress=progress_factory(interactive, bars)
                or (line_progress if study or settings else None),
                budget=budget,
            )
    except SchedulerUnreachable as exc:
        raise UserError(
            f"{exc}; the run is kept (status 'interrupted'). Resume: harness run --resume --out {out}"
            " [--scheduler ADDRESS | --executor process]"
        ) from None
    except OSError as exc:
        if not cannot_write(exc) or signalled:
            return _stopped_by_signal(out, signalled)
        raise OutputError(
            f"{exc.filename or out}: cannot write ({exc.strerror or exc}); every session finished "
            f"before is kept. Make room, then resume: harness run --resume --out {out}"
        ) from None
    except Exception:
        return _stopped_by_signal(out, signalled)
    finally:
        for bar in bars:
            bar.stop()
    if summary.interrupted and not summary.stopped:
        _interrupted(out, signalled, summary)
        return 128 + signalled[0] if signalled else INTERRUPTED_EXIT
    if beside is not None:
        beside.finish()
        warn_unsolvable(oracle_lines)
    rate = summary.ran / summary.seconds if summary.seconds > 0 else 0.0
    click.echo(
        f"harness run: ran {summary.ran} sessions in {summary.seconds:.1f}s ({rate:,.0f}/s), "
        f"{summary.skipped} already done, {summary.harness_errors} harness errors",
        err=True,
    )
    if summary.usage is not None:
        click.echo(f"harness run: model: {summary.usage.summary()}", err=True)
    if summary.first_error:
        click.echo(
            f"harness run: first harness error: {summary.first_error} (all in {out / 'errors.log'})",
            err=True,
        )
    if summary.stopped:
        click.echo(
            f"harness run: stopped: {summary.stopped}; the {summary.ran} sessions finished are kept, "
            f"none half-finished is written. Resume: harness run --resume --out {out} "
            "[--max-requests N | --max-tokens N]",
            err=True,
        )
        return BUDGET_EXIT
    frame = summary.frame
    if not no_compare and len(frame):
        from harness.cli.compare import print_comparison

        print_comparison(frame, by=split_names([by]), baseline="is_error", k=3, fmt="table", source=str(out),
                         explain=explain)  # fmt: skip
    broken = int((frame["status"] == "harness_error").sum()) if "status" in frame.columns else 0
    if broken and not allow_errors:
        click.echo(
            f"harness run: {broken} of {len(frame)} sessions broke (harness_error: an agent that raised "
            f"or a harness bug; tracebacks in {out / 'errors.log'}); they are left out of the rates. "
            f"Exit {HARNESS_ERROR_EXIT}; --allow-errors accepts them",
            err=True,
        )
        return HARNESS_ERROR_EXIT
    return 0


@contextlib.contextmanager
def _signals_as_interrupt(signalled: list[int]) -> Iterator[None]:
    """SIGTERM stops the run as Ctrl-C does (finished sessions kept, the manifest 'interrupted',
    the resume command shown); either signal is put in ``signalled``, so that a stop that a
    library turned into another exception (a Dask cluster interrupted while it starts) is still
    known for what it was."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def stop(signum: int, frame: Any) -> None:
        signalled.append(signum)
        raise KeyboardInterrupt

    previous = {sig: signal.signal(sig, stop) for sig in (signal.SIGTERM, signal.SIGINT)}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def _stopped_by_signal(out: Path, signalled: list[int]) -> int:
    """The exit of a run that a signal stopped while something else was raised (a Dask cluster
    interrupted as it starts fails in its own words): the interrupted line. Without a signal, the
    exception goes on (called from an ``except`` block)."""
    if not signalled:
        raise  # the exception being handled by the caller
    _interrupted(out, signalled, None)
    return 128 + signalled[0]


def _interrupted(out: Path, signalled: list[int], summary: Any) -> None:
    """The one line a stopped run ends with: how it was stopped, how far it got, how to go on."""
    how = "SIGTERM" if signalled and signalled[0] == signal.SIGTERM else "Ctrl-C"
    done = "" if summary is None else f" after {summary.skipped + summary.ran} of {summary.total} sessions"
    click.echo(
        f"harness run: interrupted ({how}){done}; every finished session is kept. "
        f"Resume: harness run --resume --out {out}",
        err=True,
    )


def measured_rate(grid: Grid, options: Any, seconds: float = RATE_SAMPLE_S) -> float | None:
    """Sessions per second of one worker on this grid: its first cells, run here for about
    ``seconds`` and dropped (None when its agents call a model or its scenarios need a server:
    such sessions are not run for a guess)."""
    from harness.batch.kinds import grid_kinds
    from harness.batch.worker import run_cell

    simulated = grid_kinds(grid.scenarios, options.scenario_sources) == {"simulated"}
    if options.kind is not None or not simulated or any(calls_a_model(a) for a in grid.agents):
        return None
    started, ran = time.perf_counter(), 0
    for cell in next(grid.iter_blocks(max(1, 200 // max(1, len(grid.strategies))))):
        run_cell(cell, options)
        ran += 1
        if time.perf_counter() - started >= seconds:
            break
    return ran / max(time.perf_counter() - started, 1e-9)


def _duration(seconds: float) -> str:
    for unit, size in (("years", 365 * 86400), ("days", 86400), ("hours", 3600), ("minutes", 60)):
        if seconds >= 2 * size:
            return f"{seconds / size:,.0f} {unit}"
    return f"{seconds:,.0f} seconds"


def confirm_big_grid(grid: Grid, options: Any, workers: int) -> None:
    """Ask before a run of more than :data:`BIG_GRID` sessions, saying how long it would take at
    the rate measured here; without a terminal to ask on, refuse it unless ``--yes``."""
    rate = measured_rate(grid, options)
    usable = max(1, min(workers, os.cpu_count() or 1))
    if rate:
        how_long = (
            f"at {rate:,.0f} sessions/s measured here x {usable} workers, about "
            f"{_duration(len(grid) / (rate * usable))}"
        )
    else:
        how_long = "its sessions cannot be timed here (a model or a real server)"
    question = f"harness run: {len(grid):,} sessions is more than {BIG_GRID:,}: {how_long}"
    if not (sys.stdin.isatty() and sys.stderr.isatty()):
        raise UserError(f"{question[len('harness run: ') :]}; give --yes to run them (or fewer --seeds)")
    click.echo(question, err=True)
    if not click.confirm("Run them?", default=False, err=True):
        raise UserError("not started; give fewer --seeds, or --yes to run them without asking")


def _given(ctx: click.Context, name: str) -> bool:
    """Whether the user gave ``name`` (on the command line or in the environment), not its default."""
    source = ctx.get_parameter_source(name)
    return source is not None and source not in (
        click.core.ParameterSource.DEFAULT,
        click.core.ParameterSource.DEFAULT_MAP,
    )


def _describe(values: object) -> str:
    if isinstance(values, range):
        return f"{len(values)} ({values.start}..{values.stop - 1})" if len(values) else "none"
    if isinstance(values, tuple) and all(isinstance(v, str) for v in values):
        return ",".join(values)
    return str(values)


def _refuse_another_grid(
    out: Path,
    grid: Grid,
    given: dict[str, bool],
    scenarios: tuple[str, ...],
    agents: tuple[str, ...],
    strategies: tuple[str, ...],
    hosts: tuple[str, ...],
    seeds: int,
    sets: tuple[str, ...],
    eras: tuple[str, ...] = (),
) -> None:
    """A resume finishes the grid the run started with; an option that would change it is refused."""
    from harness.scenarios.scenario import list_scenarios, load_scenario
    from harness.session.registry import agent_class
    from harness.worlds import is_world_name

    differ: list[str] = []
    if given["scenarios"]:
        names = []
        for spec in split_names(scenarios):
            if is_world_name(spec):
                from harness.worlds.scenario import world_names

                names += world_names(spec)
                continue
            if not spec.endswith(".toml") and spec not in list_scenarios() and spec not in grid.scenarios:
                raise unknown_name("scenario", spec, list_scenarios())
            names.append(load_scenario(spec).name if spec.endswith(".toml") else spec)
        if tuple(names) != grid.scenarios:
            differ.append(f"scenarios {','.join(names)} (the run's: {_describe(grid.scenarios)})")
    for name, values, have in (("agents", agents, grid.agents), ("strategies", strategies, grid.strategies),
                               ("hosts", hosts, grid.hosts), ("eras", eras, grid.eras)):  # fmt: skip
        if given[name]:
            wanted = split_names(values)
            if name == "agents":
                for a in wanted:
                    if a not in have:
                        agent_class(a)  # an unknown name says so, with the nearest ones
            if wanted != have:
                differ.append(f"--{name} {','.join(wanted)} (the run's: {_describe(have)})")
    if given["seeds"]:
        if seeds < 1:
            raise UserError("--seeds must be at least 1")
        if range(seeds) != grid.seeds:
            differ.append(f"--seeds {seeds} (the run's: {_describe(grid.seeds)})")
    if given["sets"]:
        sweeps = parse_sets(sets)
        if sweeps != grid.sweeps:
            run_sets = " ".join(f"{k}={','.join(map(str, v))}" for k, v in grid.sweeps) or "none"
            differ.append(f"--set {' '.join(sets)} (the run's: {run_sets})")
    if differ:
        raise UserError(
            f"--resume finishes {out} as it was started, but {'; '.join(differ)} would change its grid: "
            "drop those options to resume, or start a new run with another --out"
        )


def _run_order(path: Path) -> tuple[str, int]:
    """``<stamp>`` before ``<stamp>-2`` before ``<stamp>-10`` (a bare stamp ends in its 6-digit time)."""
    base, sep, n = path.name.rpartition("-")
    if sep and n.isdigit() and len(n) < 6:
        return (base, int(n))
    return (path.name, 1)


def _latest_run(root: Path = Path("results")) -> Path:
    runs = sorted((p for p in root.glob("*") if (p / "manifest.json").exists()), key=_run_order)
    if not runs:
        raise UserError(f"--resume: no runs under {root}/; name one with --out")
    return runs[-1]
