"""``harness check``: lint scenario files and ask the oracle whether each can be solved at all.

A scenario file that does not load is named with its field and problem (as every command
names it), and the exit status is 2, the status every command gives that mistake. One that
loads is run by the oracle, which knows every fault before it strikes, under is_error for a few
seeds: where it fails in all of them no agent can succeed, and every strategy would tie at 0
(``unsolvable``, exit 1 unless a file is broken). The same check with the faults removed is the
fault-free baseline that recovery is measured against: where even the oracle fails there, no
session of the scenario has a recovery opportunity (a warning; the exit stays 0).

A served scenario (a file with a ``[server]`` table, docs/real-servers.md) names a real server's
tools: its keys are checked as ``harness run`` checks them, but the oracle knows no real server's
faults ahead, so it is not run; the line says so (status ``served``, exit 0 when it loads).
"""

from __future__ import annotations

import json

import click

from harness.errors import UserError


@click.command("check")
@click.argument("scenarios", nargs=-1)
@click.option(
    "--seeds",
    type=click.IntRange(min=1),
    default=3,
    show_default=True,
    help="Seeds the oracle tries (0..N-1); solvable when any of them succeeds.",
)
@click.option("--json", "as_json", is_flag=True, help="One JSON object per scenario, one per line.")
def command(scenarios: tuple[str, ...], seeds: int, as_json: bool) -> int:
    """Lint SCENARIOS (shipped names, .toml paths or world tasks such as agentdojo/banking or
    bfcl/multi_turn_base; default: every shipped one) and check that the oracle can solve each.
    Exit 2 when one does not load (a mistake in the file, as every command says), else 1 when
    one is unsolvable, else 0."""
    from harness.scenarios.scenario import list_scenarios, load_scenario
    from harness.scenarios.served import has_server_table, load_served
    from harness.session.simulated import oracle_check
    from harness.worlds import is_world_name

    failed = broken = 0
    for spec in scenarios or tuple(list_scenarios()):
        if is_world_name(spec):  # every task it names, judged by the world's own check
            failed += _check_world(spec, seeds, as_json)
            continue
        if spec.endswith(".toml") and has_server_table(spec):
            try:
                load_served(spec)
            except UserError as exc:
                broken += 1
                _say(as_json, {"scenario": spec, "status": "broken", "line": f"{spec}: broken: {exc}"})
                continue
            line = (
                f"{spec}: served: its keys hold; the oracle check needs the real server and is not run "
                f"(harness run {spec} runs it against the server)"
            )
            _say(as_json, {"scenario": spec, "status": "served", "line": line, "undone": []})
            continue
        try:
            scenario = load_scenario(spec)
        except UserError as exc:
            broken += 1
            _say(as_json, {"scenario": spec, "status": "broken", "line": f"{spec}: broken: {exc}"})
            continue
        solved = oracle_check(scenario, range(seeds))
        baseline = oracle_check(scenario, range(seeds), faults=False)
        if not solved.solved:
            failed += 1
            status, line = "unsolvable", solved.line(spec)
        elif not baseline.solved:
            status, line = "baseline_unsolvable", baseline.line(spec) + NO_RECOVERY
        else:
            status, line = "ok", solved.line(spec)
        undone = list(solved.undone or baseline.undone)
        _say(as_json, {"scenario": spec, "status": status, "line": line, "undone": undone})
    return 2 if broken else 1 if failed else 0


def _check_world(spec: str, seeds: int, as_json: bool) -> int:
    """Each world task ``spec`` names: can the oracle, following its plan, get the world's judge
    to say yes, with its faults and without? The lines failing ones say why; the count of those."""
    from harness.batch.kinds import world_check
    from harness.worlds.scenario import load_world, world_names

    failed = 0
    for name in world_names(spec):
        scenario = load_world(name)
        solved = world_check(scenario, range(seeds))
        baseline = world_check(scenario, range(seeds), faults=False)
        if not baseline.solved:
            failed += 1
            status, line = "unsolvable", baseline.line(name)
        elif not solved.solved:
            status, line = "faults_unsolvable", solved.line(name) + " (its faults make it so)"
        else:
            status = "ok"
            line = f"{name}: solvable: following its plan, the oracle gets the world's judge to say yes"
        _say(as_json, {"scenario": name, "status": status, "line": line, "undone": list(baseline.undone)})
    return failed


NO_RECOVERY = (
    "; so no session of it has a recovery opportunity: recovery is not measured on it (success is, "
    "and the oracle solves it as written)"
)
"""What a scenario without a fault-free baseline means for its rows (docs/outcomes.md)."""

_LABELS = {"ok": "ok", "served": "ok", "baseline_unsolvable": "warning", "faults_unsolvable": "warning"}
"""The line's first word per status; any other status (broken, unsolvable) is FAIL."""


def _say(as_json: bool, doc: dict[str, object]) -> None:
    if as_json:
        click.echo(json.dumps(doc))
        return
    status = str(doc["status"])
    click.echo(f"{_LABELS.get(status, 'FAIL'):<7} {doc['line']}")
