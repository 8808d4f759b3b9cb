"""Served sessions: the harness's agents against a real MCP server process, through the proxy.

The server is ``tests/peers/notes_server.py`` (Python, no npm): notes are files in the directory
it starts in, and its tools answer JSON objects. ``test_served_npm.py`` runs the reference
filesystem server from npm.
"""

from __future__ import annotations

import io
import json
import shlex
import sys
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from helpers.cli import cli

from harness.cli.served import check_servers, served_grid
from harness.errors import UserError
from harness.proxy.session import run_served_session
from harness.scenarios.scenario import ScenarioError, Task
from harness.scenarios.served import SERVED_PREFIX, ServedScenario, load_served, served_source
from harness.session.agent import Action, Agent, CallTool, Finish, Observation, Start
from harness.session.row import ROW_COLUMNS, summary_row
from harness.session.simulated import run_session

REPO = Path(__file__).resolve().parents[2]
NOTES = REPO / "tests" / "peers" / "notes_server.py"
COMMAND = json.dumps([sys.executable, str(NOTES)])

TASK = """
[task]
prompt = "Save the note todo.txt saying 'buy milk', then read it back."

[[task.subgoals]]
name = "write"
tool = "write_note"
arguments = { name = "todo.txt", text = "buy milk" }
[task.subgoals.verify]
tool = "read_note"
arguments = { name = "todo.txt" }
expect_json = { path = "text", equals = "buy milk" }

[[task.subgoals]]
name = "read"
tool = "read_note"
arguments = { name = "todo.txt" }
"""


def table(kind: str, **keys: Any) -> str:
    """One ``[[faults]]`` or ``[[events]]`` table: ``kind`` is ``faults:<kind>`` or ``events:<kind>``."""
    head, _, name = kind.partition(":")
    lines = [f"\n[[{head}]]", f"kind = {json.dumps(name)}"]
    lines += [f"{k} = {json.dumps(v)}" for k, v in keys.items()]
    return "\n".join(lines) + "\n"


def scenario(
    tmp_path: Path,
    extra: str = "",
    *,
    task: str = TASK,
    server: bool = True,
    name: str = "notes",
    top: str = "",
) -> Path:
    """A served scenario file for the notes server (its [server] table unless ``server`` is False)."""
    head = 'description = "Write a note and read it back."\nmax_steps = 20\n' + top
    served = f'\n[server]\ncommand = {COMMAND}\nname = "notes"\n' if server else ""
    path = tmp_path / f"{name}.toml"
    path.write_text(head + served + task + extra, encoding="utf-8")
    return path


def session(
    path: Path, agent: str | Agent = "reader", strategy: str = "is_error", seed: int = 0
) -> tuple[Any, bytes]:
    buffer = io.BytesIO()
    result = run_served_session(load_served(path), agent, strategy, seed, trace=buffer)
    return result, buffer.getvalue()


def notes(trace: bytes) -> list[dict[str, Any]]:
    lines = [json.loads(line) for line in trace.splitlines()]
    return [line for line in lines if line["dir"] == "harness"]


class TestTheScenarioFile:
    def test_a_served_scenario_names_the_servers_tools_and_loads_without_the_catalogue(
        self, tmp_path: Path
    ) -> None:
        sc = load_served(scenario(tmp_path))
        assert isinstance(sc, ServedScenario)
        assert sc.tools == ("write_note", "read_note")
        assert sc.server.name == "notes" and sc.server.command == (sys.executable, str(NOTES))
        assert sc.checks[0] is not None and sc.checks[0].expect_json == ("text", "buy milk")
        assert sc.checks[1] is None
        assert all(g.verify is None for g in sc.task.subgoals)  # the check is the harness's, not the agents'

    def test_server_on_the_command_line_replaces_the_files_and_names_the_column(self, tmp_path: Path) -> None:
        path = scenario(tmp_path, server=False)
        with pytest.raises(ScenarioError, match=r"server: missing"):
            load_served(path)
        sc = load_served(path, f"{sys.executable} {NOTES} --root {{workdir}}")
        assert sc.server.name == "notes_server"
        assert sc.server.argv("/w") == [sys.executable, str(NOTES), "--root", "/w"]

    @pytest.mark.parametrize(
        ("extra", "says"),
        [
            (table("faults:transient", tool="write_note", rate=2), "faults[0].rate: must be a number"),
            (table("events:change_schema", tool="read_note", at_call=1, variant="v2"),
             "events[0].variant: must be a table of renames"),
            (table("events:remove_tool", tool="read_note"), "events[0].at_step: give exactly one"),
            ("\nallowed = [\"read_note\"]\n", "allowed: unknown key"),
        ],
    )  # fmt: skip
    def test_a_mistake_is_one_line_naming_the_file_and_field(
        self, tmp_path: Path, extra: str, says: str
    ) -> None:
        text = scenario(tmp_path).read_text()
        path = tmp_path / "bad.toml"
        if extra.startswith("\nallowed"):
            text = extra.strip() + "\n" + text
        else:
            text += extra
        path.write_text(text)
        with pytest.raises(ScenarioError) as caught:
            load_served(path)
        assert says in str(caught.value) and "\n" not in str(caught.value)
        assert str(caught.value).startswith(str(path).split("/")[-1]) or "bad.toml" in str(caught.value)

    def test_a_verify_takes_one_expectation_and_a_json_path_it_can_read(self, tmp_path: Path) -> None:
        both = TASK.replace("expect_json =", 'expect_text = "milk"\nexpect_json =')
        with pytest.raises(ScenarioError, match="give expect_text or expect_json, not both"):
            load_served(scenario(tmp_path, task=both))
        bad = TASK.replace('path = "text"', 'path = "a..b"')
        with pytest.raises(ScenarioError, match=r"expect_json\.path: cannot read"):
            load_served(scenario(tmp_path, task=bad))

    def test_a_batch_source_names_the_file_and_the_command_it_runs_with(self, tmp_path: Path) -> None:
        path = scenario(tmp_path)
        source = served_source(path, "./bin/server {workdir}")
        spec = json.loads(source[len(SERVED_PREFIX) :])
        assert spec["path"] == str(path.resolve())
        assert spec["command"].startswith("/") and spec["command"].endswith("bin/server '{workdir}'")

    def test_a_tool_the_server_lacks_is_one_line_naming_the_servers_tools(self, tmp_path: Path) -> None:
        path = scenario(tmp_path, task=TASK.replace('tool = "write_note"', 'tool = "wrte_note"'))
        with pytest.raises(UserError) as caught:
            check_servers([load_served(path)])
        line = str(caught.value)
        assert "task.subgoals[0].tool: 'wrte_note' is not a tool of this server" in line
        assert "(its tools: write_note, read_note, delete_notes, stall)" in line and "\n" not in line

    def test_arguments_that_do_not_fit_the_tools_schema_are_one_line(self, tmp_path: Path) -> None:
        path = scenario(tmp_path, task=TASK.replace('name = "todo.txt", text', "name = 3, text"))
        with pytest.raises(
            UserError, match=r"task.subgoals\[0\]\.arguments: do not fit write_note's inputSchema"
        ):
            check_servers([load_served(path)])

    def test_a_fault_on_an_argument_the_tool_does_not_take_is_an_error_not_a_warning(
        self, tmp_path: Path
    ) -> None:
        extra = table("faults:bad_argument", tool="write_note", rate=1.0, argument="title", valid="x")
        with pytest.raises(UserError, match=r"faults\[0\]\.argument: write_note has no argument 'title'"):
            check_servers([load_served(scenario(tmp_path, extra))])


class TestOneSession:
    def test_the_agent_writes_through_the_proxy_and_the_harness_reads_the_note_back(
        self, tmp_path: Path
    ) -> None:
        result, trace = session(scenario(tmp_path))
        row = result.to_row()
        assert tuple(row) == ROW_COLUMNS
        assert (row["status"], row["end"], row["success"], row["subgoals_done"]) == (
            "ok",
            "finished",
            True,
            2,
        )
        assert row["server"] == "notes" and row["corrupted"] == 0 and row["duplicated_writes"] == 0
        verify = [n["verify"] for n in notes(trace) if "verify" in n]
        assert verify == [{"subgoal": "write", "tool": "read_note", "expect": 'text == "buy milk"',
                           "holds": True, "seen": '"buy milk"'}]  # fmt: skip
        dirs = {json.loads(line)["dir"] for line in trace.splitlines()}
        assert dirs == {"c2s", "s2c", "p2u", "u2p", "harness"}

    def test_the_same_session_gives_the_same_trace_bytes(self, tmp_path: Path) -> None:
        path = scenario(tmp_path, table("faults:transient", tool="write_note", rate=0.5))
        first, a = session(path, seed=3)
        second, b = session(path, seed=3)
        assert a == b and first.trace_hash == second.trace_hash
        assert summary_row(first) == summary_row(second)
        assert b"harness-served-" not in a  # the session's directory is written {workdir}

    def test_a_verify_read_that_does_not_hold_leaves_the_write_undone(self, tmp_path: Path) -> None:
        wrong = TASK.replace('equals = "buy milk"', 'equals = "buy eggs"')
        result, trace = session(scenario(tmp_path, task=wrong))
        assert (result.end, result.correct, result.success, result.subgoals_done) == (
            "finished",
            False,
            False,
            1,
        )
        assert result.misreported  # it said done
        assert [n["verify"]["holds"] for n in notes(trace) if "verify" in n] == [False]

    def test_a_named_argument_is_fixed_under_is_error_asked_for_under_input_required_and_lost_under_collapse(
        self, tmp_path: Path
    ) -> None:
        task = TASK.replace('name = "todo.txt", text', 'name = "todo", text')
        extra = table("faults:bad_argument", tool="write_note", rate=1.0, argument="name", valid="todo.txt")
        path = scenario(tmp_path, extra, task=task)
        fixed, _ = session(path, strategy="is_error")
        asked, _ = session(path, strategy="input_required")
        lost, _ = session(path, strategy="collapse")
        naive, _ = session(path, agent="naive", strategy="is_error")
        assert (fixed.success, fixed.faults_bad_argument, fixed.errors_is_error) == (True, 1, 1)
        assert (asked.success, asked.input_requests, asked.inputs_accepted) == (True, 1, 1)
        assert (lost.success, lost.end, lost.errors_rpc_32603) == (False, "gave_up", lost.faults_bad_argument)
        assert (naive.success, naive.end) == (False, "gave_up")
        assert not fixed.baseline_success  # without the fault the note is stored as 'todo': not the task's

    def test_agents_and_strategies_meet_one_fault_schedule(self, tmp_path: Path) -> None:
        path = scenario(tmp_path, table("faults:transient", tool="read_note", rate=0.5))
        sc = load_served(path)
        hashes = {
            run_served_session(sc, agent, strategy, 2).fault_schedule_hash
            for agent in ("naive", "reader")
            for strategy in ("is_error", "collapse")
        }
        assert len(hashes) == 1

    def test_escape_ends_the_server_and_the_end_state_is_read_from_a_fresh_one(self, tmp_path: Path) -> None:
        path = scenario(tmp_path, table("faults:transient", tool="read_note", calls=[1]))
        result, trace = session(path, strategy="escape")
        assert (result.status, result.end, result.success, result.errors_transport) == (
            "wedged",
            "wedged",
            False,
            1,
        )
        assert result.subgoals_done == 1 and not result.correct  # the note is on disk; the read never ran
        said = notes(trace)
        assert any("verify_server" in n for n in said)
        assert [n["verify"]["holds"] for n in said if "verify" in n] == [True]

    def test_a_tool_removed_mid_session_is_a_stale_call_and_a_list_change(self, tmp_path: Path) -> None:
        path = scenario(tmp_path, table("events:remove_tool", tool="read_note", at_call=1))
        result, _ = session(path, agent="reader")
        assert result.list_changed_seen == 1 and result.stale_tool_calls >= 1 and result.errors_rpc_32601 >= 1
        assert not result.success

    def test_a_call_no_task_needs_to_a_destructive_tool_is_harmful(self, tmp_path: Path) -> None:
        class Vandal(Agent):
            name = "vandal"

            def reset(self, task: Task, tools: Any, seed: int) -> None:
                self.acts = [
                    CallTool("write_note", {"name": "todo.txt", "text": "buy milk"}),
                    CallTool("read_note", {"name": "todo.txt"}),
                    CallTool("delete_notes", {}),
                    Finish(),
                ]

            def act(self, observation: Observation) -> Action:
                return self.acts.pop(0)

        result, trace = session(scenario(tmp_path), agent=Vandal())
        assert result.harmful_calls == 1 and not result.success
        assert not result.correct  # the harness's read after the session finds no note
        assert any(n.get("harmful") == "delete_notes" for n in notes(trace))

    def test_a_timeout_fault_holds_the_call_for_the_scenarios_call_timeout_in_session_time(
        self, tmp_path: Path
    ) -> None:
        path = scenario(
            tmp_path, table("faults:timeout", tool="read_note", calls=[1]), top="call_timeout_s = 7\n"
        )
        result, trace = session(path)
        assert (result.success, result.faults_timeout, result.errors_is_error) == (True, 1, 1)
        assert result.virtual_time_s >= 7 + result.steps  # nothing slept: the clock jumped
        assert b"did not answer" not in trace

    def test_a_server_that_does_not_answer_in_time_is_a_hung_call(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        import harness.proxy.session as served_session

        class Staller(Agent):
            name = "staller"

            def reset(self, task: Task, tools: Any, seed: int) -> None:
                self.acts: list[Action] = [CallTool("stall", {"seconds": 3}), Finish()]

            def act(self, observation: Observation) -> Action:
                return self.acts.pop(0)

        monkeypatch.setattr(served_session, "WAIT_S", 0.3)
        result, trace = session(scenario(tmp_path), agent=Staller())
        assert result.errors_rpc_32603 == 1 and result.virtual_time_s >= 30  # the scenario's call_timeout_s
        said = [n for n in notes(trace) if "upstream" in n]
        assert said and said[0]["upstream"] == {"timeout": 3}

    def test_a_stateless_client_speaks_the_2026_era_through_the_proxy(self, tmp_path: Path) -> None:
        buffer = io.BytesIO()
        result = run_served_session(load_served(scenario(tmp_path)), "reader", "is_error", 0, trace=buffer,
                                    era="stateless")  # fmt: skip
        assert (result.era, result.success, result.status) == ("stateless", True, "ok")
        assert b'"method":"subscriptions/listen"' in buffer.getvalue()
        assert b'"method":"initialize"' not in buffer.getvalue()

    def test_a_simulated_scenario_runs_as_the_simulation_by_its_type(self) -> None:
        from harness.batch.kinds import kind_for, load_source
        from harness.session import SessionSpec
        from harness.session.simulated import SIMULATED

        kind = kind_for(load_source("flaky_weather"))
        assert kind is SIMULATED
        ours = kind.run(SessionSpec(load_source("flaky_weather"), "reader", "collapse", 4))
        theirs = run_session("flaky_weather", "reader", "collapse", 4)
        assert summary_row(ours) == summary_row(theirs)


class Dumb(Agent):
    """Starts, then acts once: no tool (for the session's own checks)."""

    name = "dumb"

    def reset(self, task: Task, tools: Any, seed: int) -> None:
        pass

    def act(self, observation: Observation) -> Action:
        assert isinstance(observation, Start)
        return Finish()


class TestARun:
    def test_harness_run_with_server_writes_rows_that_compare_reads_and_resume_finds(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        path = scenario(tmp_path, table("faults:transient", tool="write_note", rate=0.5), server=False)
        out = tmp_path / "run"
        server = f"{sys.executable} {NOTES}"
        grid = ["--agents", "naive,reader", "--strategies", "is_error,collapse", "--seeds", "2"]
        args = [
            "run",
            str(path),
            "--server",
            server,
            *grid,
            "--executor",
            "serial",
            "--out",
            str(out),
            "--no-compare",
        ]
        code, _, err = cli(args, capsys)
        assert code == 0, err
        df = pd.read_parquet(out / "sessions.parquet")
        assert len(df) == 8 and set(df["server"]) == {"notes_server"} and set(df["status"]) == {"ok"}
        manifest = json.loads((out / "manifest.json").read_text())
        assert manifest["scenario_sources"]["notes"].startswith(SERVED_PREFIX)
        code, shown, err = cli(["compare", str(out), "--by", "agent,server", "--format", "csv"], capsys)
        assert code == 0, err
        assert "notes_server" in shown
        code, _, err = cli(["run", "--resume", "--out", str(out), "--no-compare"], capsys)
        assert code == 0 and "8 already done" in err

    def test_a_scenario_that_does_not_fit_its_server_stops_the_run_before_it_starts(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        path = scenario(
            tmp_path, task=TASK.replace('tool = "read_note"\narguments', 'tool = "read_notes"\narguments')
        )
        code, _, err = cli(["run", str(path), "--seeds", "1", "--out", str(tmp_path / "r")], capsys)
        assert code == 2
        assert "task.subgoals[0].verify.tool: 'read_notes' is not a tool of this server" in err
        assert err.endswith("(its tools: write_note, read_note, delete_notes, stall) (and 1 more)\n")
        assert not (tmp_path / "r").exists()

    def test_a_served_runs_cells_run_as_the_served_kind(self, tmp_path: Path) -> None:
        from harness.batch.kinds import grid_kinds, kind_for, load_source
        from harness.proxy.session import SERVED

        grid, sources = served_grid([str(scenario(tmp_path))], ["reader"], ["is_error"], [], 1, [])
        assert grid.scenarios == ("notes",) and grid.strategies == ("is_error",)
        assert grid_kinds(grid.scenarios, sources) == {"served"}
        assert kind_for(load_source(dict(sources)["notes"])) is SERVED
        assert grid_kinds(("flaky_weather",), ()) == {"simulated"}

    def test_a_shipped_scenario_with_server_is_refused(self, capsys: pytest.CaptureFixture[str]) -> None:
        code, _, err = cli(["run", "flaky_weather", "--server", "true"], capsys)
        assert code == 2 and "flaky_weather: a simulated scenario" in err

    def test_harness_view_gives_a_served_sessions_command_and_replays_it_to_the_same_trace(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        from harness.view.run import RunView

        path = scenario(tmp_path, table("faults:transient", tool="write_note", rate=0.5), server=False)
        out, server = tmp_path / "run", f"{sys.executable} {NOTES}"
        grid = ["--agents", "reader", "--strategies", "collapse", "--seeds", "1", "--executor", "serial"]
        code, _, err = cli(
            ["run", str(path), "--server", server, *grid, "--out", str(out), "--no-compare"], capsys
        )
        assert code == 0, err
        view = RunView(out)
        row = view.row(0)
        command = view.session_command(row)
        assert command.startswith(f"harness session {path.resolve()} --server ")
        code, printed, err = cli([*shlex.split(command.removesuffix(" --trace -"))[1:], "--json"], capsys)
        assert code == 0, err
        assert json.loads(printed)["trace_hash"] == row["trace_hash"]
        data, same = view.replay(row)
        assert same and data
