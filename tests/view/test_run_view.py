"""The viewer's answers about a run: pages from parquet, sessions, pairs, and what the CLI prints."""

from __future__ import annotations

import hashlib
import json
import shlex
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from harness.batch.results import DIGEST_KEY, load_run
from harness.errors import UserError
from harness.view.api import NotFound, answer
from harness.view.run import Filter, RunView, ViewError
from harness.view.sources import open_source

CLI = [sys.executable, "-m", "harness.cli.main"]


def _cli_json(*args: str) -> dict:
    done = subprocess.run([*CLI, *args], capture_output=True, text=True, timeout=120, check=True)
    return json.loads(done.stdout)


def test_a_page_is_cut_from_the_index_and_filled_from_the_parquet_rows(run: Path) -> None:
    view = RunView(run)
    df, _ = load_run(run)
    page = view.page([Filter("agent", "=", "reader"), Filter("success", "=", False)], offset=1, limit=2)
    expected = df[(df.agent == "reader") & (~df.success)]
    assert page["total"] == len(expected)
    assert [r["id"] for r in page["rows"]] == list(expected.index[1:3])
    for r in page["rows"]:
        full = view.row(r["id"])
        assert full == json.loads(json.dumps(full))  # plain JSON
        assert full["trace_hash"] == df.loc[r["id"], "trace_hash"]
        assert full["steps"] == r["steps"] == df.loc[r["id"], "steps"]


def test_filters_are_typed_as_their_column_and_refused_in_one_line(run: Path) -> None:
    view = RunView(run)
    parsed = view.parse_filters([["seed", ">=", "1"], ["success", "=", "true"], ["steps", "<", 6]])
    assert parsed == [Filter("seed", ">=", 1), Filter("success", "=", True), Filter("steps", "<", 6)]
    with pytest.raises(UserError, match="did you mean 'agent'"):
        view.parse_filters([["agnet", "=", "reader"]])
    with pytest.raises(ViewError, match="unknown operator"):
        view.parse_filters([["seed", "~", 1]])
    with pytest.raises(ViewError, match="is not a"):
        view.parse_filters([["seed", "=", "x"]])


def test_the_comparison_is_what_harness_compare_prints_as_json(run: Path) -> None:
    view = open_source(run)
    for by in ("agent", "agent,scenario"):
        page = answer(view, "compare", {"by": by})
        cli = _cli_json("compare", str(run), "--format", "json", "--by", by)
        assert isinstance(page, dict)
        assert page["rows"] == cli["rows"]
        for key in ("baseline", "k", "unit", "adjust", "inference", "complete", "status", "sessions"):
            assert page[key] == cli[key], key
        assert len(page["shown"]["rows"]) == len(cli["rows"])


def test_the_effects_are_what_harness_effects_prints(run: Path) -> None:
    page = answer(open_source(run), "effects", {})
    cli = _cli_json("effects", str(run), "--format", "json")
    assert isinstance(page, dict)
    assert page["shares"] == cli["shares"] and page["effects"] == cli["effects"]
    markdown = subprocess.run(
        [*CLI, "effects", str(run), "--format", "markdown"], capture_output=True, text=True, check=True
    ).stdout
    first = page["shown"]["tables"][0]
    assert all(f"| {' | '.join(row)} |" in markdown for row in first["rows"])


def test_an_incomplete_run_says_so_as_compare_does(interrupted: Path) -> None:
    view = open_source(interrupted)
    info = answer(view, "info", {})
    assert isinstance(info, dict)
    assert info["complete"] is False and info["sessions"] == 20 and info["sessions_in_grid"] == 36
    assert info["warning"].startswith("INCOMPLETE RUN: 20 of 36 sessions")
    page = answer(view, "compare", {})
    cli = _cli_json("compare", str(interrupted), "--format", "json")
    assert isinstance(page, dict)
    assert page["complete"] is False and page["warning"] == cli["warning"] and page["rows"] == cli["rows"]


def test_a_session_has_its_steps_its_command_and_its_siblings(run: Path) -> None:
    view = RunView(run)
    df, _ = load_run(run)
    sid = int(
        df.index[
            (df.scenario == "strict_dates")
            & (df.agent == "reader")
            & (df.strategy == "collapse")
            & (df.seed == 0)
        ][0]
    )
    doc = view.session(sid)
    assert doc["trace_source"] == "file" and doc["trace"]["exact"]
    assert len(doc["trace"]["steps"]) == doc["row"]["steps"] + 1
    assert doc["command"] == (
        "harness session strict_dates --agent reader --strategy collapse --seed 0 "
        "--host typical --era handshake --trace -"
    )
    assert {tuple(s["differs_in"]) for s in doc["siblings"]} == {
        ("strategy",),
        ("agent",),
        ("agent", "strategy"),
    }
    assert json.loads(json.dumps(doc)) == doc


def test_a_session_without_a_trace_file_says_how_to_get_one_and_replays_to_the_same_hash(
    untraced: Path, tmp_path: Path
) -> None:
    view = RunView(untraced)
    doc = view.session(5)
    assert doc["trace"] is None and doc["no_trace"] == "no trace file" and doc["replayable"]
    command = shlex.split(doc["command"])
    assert command[:2] == ["harness", "session"] and command[-2:] == ["--trace", "-"]
    trace = tmp_path / "t.jsonl"
    subprocess.run([*CLI, *command[1:-1], str(trace)], capture_output=True, timeout=60, check=True)
    assert hashlib.sha256(trace.read_bytes()).hexdigest() == doc["row"]["trace_hash"]
    replayed = view.session(5, replay=True)
    assert replayed["trace_source"] == "replay" and len(replayed["trace"]["steps"]) == doc["row"]["steps"] + 1


def test_a_differing_pair_is_found_where_the_comparison_says_the_strategies_differ(run: Path) -> None:
    view = RunView(run)
    found = view.differing_pair({"agent": "reader"}, "collapse")
    assert found["found"] and found["by"] == "success"
    a, b = view.key_of(found["a"]), view.key_of(found["b"])
    assert (a["strategy"], b["strategy"]) == ("is_error", "collapse")
    assert a["scenario"] == b["scenario"] == "strict_dates" and a["seed"] == b["seed"]
    assert view.row(found["a"])["success"] != view.row(found["b"])["success"]
    pair = view.pair(found["a"], found["b"])
    assert pair["differs_in"] == ["strategy"] and pair["divergence"] == {"seen": 2, "action": 3, "steps": 8}
    # The naive agent never reads error text: no seed changes its outcome, only what it saw.
    trace_only = view.differing_pair({"agent": "naive"}, "masked")
    assert trace_only["found"] and trace_only["by"] == "trace" and trace_only["differ_in_success"] == 0
    nobody = view.differing_pair({"agent": "nobody"}, "masked")
    assert not nobody["found"] and nobody["pairs"] == 0


def test_sessions_of_two_scenarios_are_no_pair(run: Path) -> None:
    view = RunView(run)
    with pytest.raises(ViewError, match="no pair: scenario"):
        view.pair(0, len(view.index) - 1)
    with pytest.raises(NotFound):
        answer(view, "nowhere", {})
    with pytest.raises(ViewError, match="no session 999"):
        view.row(999)


def test_a_figure_is_drawn_from_the_run_and_one_that_does_not_apply_is_none(run: Path) -> None:
    view = RunView(run)
    png = view.figure("agent_strategy_heatmap.png")
    assert png is not None and png.startswith(b"\x89PNG")
    assert view.figure("success_vs_sweep.png") is None  # no --set in this run


def test_rows_of_an_old_run_without_the_era_column_still_load(run: Path, tmp_path: Path) -> None:
    import shutil

    old = tmp_path / "old"
    shutil.copytree(run, old)
    frame = pd.read_parquet(old / "sessions.parquet").drop(columns=["era"])
    frame.to_parquet(old / "sessions.parquet")
    manifest = json.loads((old / "manifest.json").read_text())
    manifest["row_version"] = 4
    manifest.pop(DIGEST_KEY, None)  # a run of row version 4 recorded no digest
    (old / "manifest.json").write_text(json.dumps(manifest))
    view = RunView(old)
    assert view.row(0)["era"] == "handshake" and view.facets()["era"] == ["handshake"]


def test_a_swept_run_finds_its_traces_and_gives_the_sweep_to_the_session_command(tmp_path: Path) -> None:
    from harness.batch.grid import Grid
    from harness.batch.runner import run_batch
    from harness.batch.worker import SessionOptions

    grid = Grid(("flaky_weather",), ("reader",), ("is_error", "collapse"), ("typical",), range(1),
                sweeps=(("faults.rate", (0, 0.4)),))  # fmt: skip
    run_batch(grid, tmp_path / "swept", executor="serial", options=SessionOptions(traces=True))
    view = RunView(tmp_path / "swept")
    assert view.params == ("faults.rate",) and view.facets()["faults.rate"] == [0.0, 0.4]
    for sid in range(view.sessions):
        doc = view.session(sid)
        assert doc["trace_source"] == "file", doc["label"]  # parquet's 0.0 is the grid's 0 in the file name
        assert f"--set faults.rate={view.swept('faults.rate', doc['row']['faults.rate'])} " in doc["command"]
    page = view.page(view.parse_filters([["faults.rate", "=", "0.4"]]))
    assert page["total"] == 2
