"""``harness worlds``: which (task, event) pairs are fair tests, and what the reader finds in
AgentDojo's injection texts.

``harness worlds events`` lists every (task, event) pair of the four suites, each event kind under
each rename condition (``similar``, ``dissimilar``): ``admitted`` (in the worlds' study) when the
task's own plan, given the new values, passes its utility, ``refused`` with the reason,
``not_applicable`` (the plan names nothing the event changes; left out unless ``--all``); the
decision is :func:`harness.worlds.events.admission`, and no repair of ours takes part in it.
``harness worlds injections`` reads every injection task rendered by every attack that needs no
model, with the suite's tool names, and says whether the reader's instruction extraction finds a
call in it, and one to a tool the injection task's own ground truth calls.
"""

from __future__ import annotations

import collections
import json

import click

VIEWS = ("events", "injections")


@click.command("worlds")
@click.argument("view", type=click.Choice(VIEWS))
@click.option("--all", "show_all", is_flag=True, help="events: also the pairs the event does not apply to.")
@click.option("--json", "as_json", is_flag=True, help="One JSON object per line.")
def command(view: str, show_all: bool, as_json: bool) -> int:
    """VIEW events: every (task, event) pair and whether it is a fair test (admitted, refused and
    why); VIEW injections: what the reader finds in AgentDojo's rendered injection texts."""
    from harness.cli.compare import print_table
    from harness.worlds.agentdojo import WorldMissing, missing

    why = missing()
    if why is not None:
        raise WorldMissing(why)
    import pandas as pd

    if view == "events":
        from harness.worlds.events import admissions

        rows = [a.to_json() for a in admissions() if show_all or a.status != "not_applicable"]
        if as_json:
            for line in rows:
                click.echo(json.dumps(line))
            return 0
        shown = pd.DataFrame(
            [
                {
                    "scenario": r["scenario"],
                    "rename": r["rename"] or "-",
                    "status": r["status"],
                    "reason": r["reason"],
                    "stale plan passes": {None: "-", True: "yes", False: "no"}[r["stale_passes"]],
                    "change": "" if r["change"] is None else f"{r['change']['old']} -> {r['change']['new']}",
                }
                for r in rows
            ]
        )
        counts = collections.Counter((r["condition"], r["status"]) for r in rows)
        print_table(
            shown, title="world events: admitted when the task's own plan, given the new values, passes"
        )
        click.echo(", ".join(f"{k} {s}: {n}" for (k, s), n in sorted(counts.items())))
        return 0
    from harness.worlds.injections import extraction

    found = extraction()
    if as_json:
        for row in found:
            click.echo(json.dumps(row.to_json()))
        return 0
    frame = pd.DataFrame([r.to_json() for r in found])
    table = (
        frame.groupby("attack", sort=False)
        .agg(texts=("found", "size"), instruction_found=("found", "sum"), right_tool=("right_tool", "sum"))
        .reset_index()
    )
    print_table(table, title="AgentDojo's rendered injection texts: does the reader find a call to make?")
    found_n, right_n = int(frame["found"].sum()), int(frame["right_tool"].sum())
    said = f"{found_n} of {len(frame)} texts give an instruction"
    click.echo(f"{said}; {right_n} name a tool the injection task's ground truth calls")
    return 0
