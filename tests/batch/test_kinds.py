"""Each cell runs as its scenario's kind of session, so that one batch may mix them (issue 47).

The batch is given no configuration of kinds: a simulated scenario, a world's task and a
scenario for a real server sit in one grid, and each row equals the row of its own kind's
session run alone (wall time aside).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from harness.batch.grid import Grid
from harness.batch.kinds import KINDS, grid_kinds, kind_for, load_source, source_kind
from harness.batch.runner import SessionOptions, run_batch
from harness.errors import UserError
from harness.scenarios.served import served_source
from harness.session import SessionSpec
from harness.session.row import summary_row
from harness.worlds.scenario import world_source

REPO = Path(__file__).resolve().parents[2]
NOTES = REPO / "tests" / "peers" / "notes_server.py"
SERVED = f"""description = "Write a note and read it back."
max_steps = 20

[server]
command = {json.dumps([sys.executable, str(NOTES)])}
name = "notes"

[task]
prompt = "Save the note todo.txt saying 'buy milk'."

[[task.subgoals]]
name = "write"
tool = "write_note"
arguments = {{ name = "todo.txt", text = "buy milk" }}
"""
WORLD_TASK = "agentdojo/banking/user_task_0"
BFCL_TASK = "bfcl/multi_turn_base/0/raised"
SAME = ("status", "success", "tool_calls", "steps", "trace_hash", "fault_schedule_hash")
"""Columns that tell one session from another: its trace's hash above all."""


def mixed(tmp_path: Path) -> tuple[Grid, tuple[tuple[str, str], ...]]:
    path = tmp_path / "notes.toml"
    path.write_text(SERVED, encoding="utf-8")
    sources = (
        ("notes", served_source(path)),
        (WORLD_TASK, world_source(WORLD_TASK)),
        (BFCL_TASK, world_source(BFCL_TASK)),
    )
    grid = Grid(
        ("flaky_weather", WORLD_TASK, "notes", BFCL_TASK),
        ("reader",),
        ("is_error", "collapse"),
        ("typical",),
        (0,),
    )
    return grid, sources


def test_each_source_names_its_kind_without_loading_it(tmp_path: Path) -> None:
    grid, sources = mixed(tmp_path)
    assert [source_kind(dict(sources).get(s, s)) for s in grid.scenarios] == [
        "simulated",
        "world",
        "served",
        "bfcl",
    ]
    assert grid_kinds(grid.scenarios, sources) == set(KINDS)


@pytest.mark.parametrize("executor", ["serial", "process"])
def test_a_batch_mixing_simulated_world_and_served_scenarios_runs_each_as_its_kind(
    tmp_path: Path, executor: str
) -> None:
    grid, sources = mixed(tmp_path)
    summary = run_batch(
        grid, tmp_path / "out", executor=executor, workers=2, options=SessionOptions(scenario_sources=sources)
    )
    frame = summary.frame.set_index(["scenario", "strategy"])
    assert len(frame) == len(grid) and set(frame["status"]) == {"ok"}
    for name in grid.scenarios:
        scenario = load_source(dict(sources).get(name, name))
        for strategy in grid.strategies:
            alone = summary_row(kind_for(scenario).run(SessionSpec(scenario, "reader", strategy, 0)))
            row = frame.loc[(name, strategy)].to_dict()
            for column in SAME:
                assert row[column] == alone[column], (name, strategy, column)
    assert frame.loc[("notes", "is_error"), "server"] == "notes"


def test_a_scenario_of_no_known_kind_is_named() -> None:
    class Odd:
        session_kind = "quantum"

    with pytest.raises(UserError, match="quantum"):
        kind_for(Odd())
