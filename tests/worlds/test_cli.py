"""World scenarios where a scenario name is taken (list, session, run, check, view); without AgentDojo."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pandas as pd
import pytest
from helpers.cli import cli

from harness.batch.results import load_run
from harness.report.curves import ESTIMANDS
from harness.view.run import RunView
from harness.worlds import agentdojo, bfcl


def test_harness_list_json_lists_every_agentdojo_task_of_the_four_suites(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, _ = cli(["list", "--json"], capsys)
    worlds = {k: v for k, v in json.loads(out)["worlds"].items() if k.startswith("agentdojo/")}
    assert code == 0 and len(worlds) >= 80
    assert {name.split("/")[1] for name in worlds} == {"banking", "slack", "travel", "workspace"}
    assert worlds["agentdojo/banking/user_task_0"] == " ".join(
        agentdojo.prompt("banking", "user_task_0").split()
    )


def test_harness_session_runs_a_world_task_and_its_row_names_the_judge(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, _ = cli(["session", "agentdojo/banking/user_task_2", "--agent", "oracle", "--json"], capsys)
    row = json.loads(out)
    assert code == 0
    assert row["scenario"] == "agentdojo/banking/user_task_2" and row["judge"] == "agentdojo"
    assert row["success"] is True and row["subgoals_done"] == row["subgoals_total"]


def test_harness_check_names_each_task_of_a_suite_with_the_judge_s_verdict(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, _ = cli(["check", "agentdojo/banking", "--seeds", "1", "--json"], capsys)
    docs = [json.loads(line) for line in out.splitlines()]
    assert len(docs) == 16 and code == 0
    assert {d["status"] for d in docs} <= {"ok", "faults_unsolvable"}


def test_harness_run_on_a_world_task_prints_its_comparison_and_records_the_versions(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out_dir = tmp_path / "run"
    args = ["run", "agentdojo/banking/user_task_0", "agentdojo/slack/user_task_1", "--agents", "reader,naive"]
    code, out, err = cli([*args, "--seeds", "2", "--traces", "--out", str(out_dir)], capsys)
    assert code == 0, err
    assert "strategy comparison" in out and "collapse" in out
    manifest = json.loads((out_dir / "manifest.json").read_text())
    source = manifest["scenario_sources"]["agentdojo/banking/user_task_0"]
    assert json.loads(source.removeprefix("world:")) == {
        "name": "agentdojo/banking/user_task_0",
        "package": "agentdojo",
        "version": agentdojo.PINNED,
        "suites": agentdojo.SUITE_VERSION,
    }
    assert manifest["packages"]["agentdojo"] == agentdojo.PINNED
    df, _ = load_run(out_dir)
    assert len(df) == 2 * 2 * 5 * 2 and set(df.judge) == {"agentdojo"}

    # harness view: a world session, its steps, the command that runs it again, and a replay.
    view = RunView(out_dir)
    sid = int(df.index[(df.agent == "reader") & (df.strategy == "collapse") & (df.seed == 1)][0])
    doc = view.session(sid)
    assert doc["trace_source"] == "file" and len(doc["trace"]["steps"]) == doc["row"]["steps"] + 1
    command = shlex.split(doc["command"])
    assert command[:3] == ["harness", "session", str(df.scenario[sid])]
    (out_dir / "traces").rename(tmp_path / "kept")
    replayed = view.session(sid, replay=True)
    assert replayed["trace_source"] == "replay", replayed.get("no_trace")


@pytest.mark.without_agentdojo
@pytest.mark.parametrize(
    "args",
    [
        ["session", "agentdojo/banking/user_task_0"],
        ["run", "agentdojo/banking", "--seeds", "1"],
        ["check", "agentdojo/banking"],
    ],
    ids=["session", "run", "check"],
)
def test_without_the_extra_a_world_name_is_one_line_saying_what_to_install(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], args: list[str], tmp_path: Path
) -> None:
    monkeypatch.setattr(agentdojo, "installed_version", lambda: None)
    monkeypatch.chdir(tmp_path)
    code, _, err = cli(args, capsys)
    assert code == 2
    said = f"world scenarios need AgentDojo: {agentdojo.INSTALL} (installs agentdojo=={agentdojo.PINNED})"
    assert err.strip().splitlines() == [f"harness: error: {said}"]


@pytest.mark.without_agentdojo
def test_without_the_extra_harness_list_still_lists_and_says_so_in_one_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(agentdojo, "installed_version", lambda: None)
    monkeypatch.setattr(bfcl, "installed_version", lambda: None)
    code, out, err = cli(["list", "--json"], capsys)
    listed = json.loads(out)
    assert code == 0 and listed["worlds"] == {} and "flaky_weather" in listed["scenarios"]
    assert err.strip().splitlines() == [
        f"harness list: world scenarios need AgentDojo: {agentdojo.INSTALL} "
        f"(installs agentdojo=={agentdojo.PINNED})",
        f"harness list: BFCL scenarios need bfcl-eval: {bfcl.INSTALL}",
    ]


def test_harness_worlds_events_says_for_each_pair_whether_it_is_a_fair_test(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, _ = cli(["worlds", "events", "--json"], capsys)
    rows = [json.loads(line) for line in out.splitlines()]
    assert code == 0 and rows and {r["status"] for r in rows} == {"admitted", "refused"}
    assert all(r["reason"] for r in rows)
    code, out, _ = cli(["worlds", "events"], capsys)
    assert code == 0 and "admitted" in out


def test_harness_worlds_injections_counts_the_texts_the_reader_finds_an_instruction_in(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, _ = cli(["worlds", "injections"], capsys)
    assert code == 0 and "texts give an instruction" in out and "tool_knowledge" in out


def test_worlds_goes_with_study_and_the_worlds_study_holds_every_condition(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, _, err = cli(["run", "--worlds", "--dry-run"], capsys)
    assert code == 2 and "--worlds goes with --study" in err and len(err.strip().splitlines()) == 1
    from harness.worlds.scenario import study_names

    names = study_names()
    conditions = {n.split("/")[3] if n.count("/") == 3 else "upstream" for n in names}
    assert {"upstream", "injection_error", "injection_result", "channel_renamed_similar"} <= conditions


def test_harness_effects_on_a_world_run_reports_per_world_per_kind_the_blind_control_and_security(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out_dir = tmp_path / "run"
    names = ["agentdojo/slack/user_task_5", "agentdojo/slack/user_task_5/channel_renamed_similar",
             "agentdojo/slack/user_task_5/injection_error", "agentdojo/banking/user_task_1"]  # fmt: skip
    args = ["run", *names, "--agents", "reader,blind", "--strategies", "is_error,collapse", "--seeds", "2"]
    code, _, err = cli([*args, "--out", str(out_dir), "--no-compare"], capsys)
    assert code == 0, err
    code, out, err = cli(["effects", str(out_dir), "--format", "json", "--against", "collapse"], capsys)
    assert code == 0, err
    doc = json.loads(out)
    assert {r["group"] for r in doc["worlds"]} == {"agentdojo/banking", "agentdojo/slack", "all worlds"}
    assert {"event:channel_renamed_similar", "injection:error"} <= {r["group"] for r in doc["kinds"]}
    assert {r["other"] for r in doc["blind"]} == {"reader"} and doc["security"]
    curves = pd.DataFrame(doc["curves"])  # the budget-free effects: every estimand, every world
    assert set(curves["estimand"]) == set(ESTIMANDS)
    assert set(curves["group"]) == {r["group"] for r in doc["worlds"]}
    assert {r["other"] for r in doc["blind_curves"]} == {"reader"}
    code, out, _ = cli(["effects", str(out_dir), "--format", "markdown", "--against", "collapse"], capsys)
    assert code == 0 and "reading against the blind control" in out and "security verdicts" in out
    assert "over every budget" in out and "calls to success (failure = budget)" in out
