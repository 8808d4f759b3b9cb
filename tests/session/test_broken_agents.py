"""A broken agent is loud: its traceback is shown and kept, a non-action is named, the exit is not 0.

A session whose agent raises (or whose ``act`` returns something that is not an action) is a
``harness_error``: ``harness session`` prints the agent's own traceback and exits 3; ``harness
run`` writes every traceback to errors.log, leaves those sessions out of the rates, counts them
per cell and exits 3 unless ``--allow-errors``.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from harness.batch.results import load_sessions
from harness.session.simulated import run_session
from tests.helpers.cli import cli

AGENTS = textwrap.dedent(
    """
    from harness.session.agent import Agent
    from scripted_agents.reader import ReaderAgent

    class Raises(Agent):
        name = "raises"
        def reset(self, task, tools, seed):
            pass
        def act(self, observation):
            raise RuntimeError("boom in my act")

    class ReturnsText(Agent):
        name = "text"
        def reset(self, task, tools, seed):
            pass
        def act(self, observation):
            return "finish"

    class ScriptedRaises(ReaderAgent):
        name = "scripted-raises"
        def act(self, observation):
            raise RuntimeError("boom in a scripted act")

    class Exits(Agent):
        name = "exits"
        def reset(self, task, tools, seed):
            pass
        def act(self, observation):
            import sys
            sys.exit(7)

    class WaitsForever(Agent):
        name = "waits-forever"
        seconds = float("inf")
        def reset(self, task, tools, seed):
            pass
        def act(self, observation):
            from harness.session.agent import Wait
            return Wait(self.seconds)

    class WaitsBackwards(WaitsForever):
        seconds = -5

    class WaitsNaN(WaitsForever):
        seconds = float("nan")

    class FinishesWithAString(Agent):
        name = "finish-string"
        def reset(self, task, tools, seed):
            pass
        def act(self, observation):
            from harness.session.agent import Finish
            return Finish("done")

    class SometimesRaises(ReaderAgent):
        name = "sometimes"
        def reset(self, task, tools, seed):
            super().reset(task, tools, seed)
            self.broken = seed % 2 == 0
        def act(self, observation):
            if self.broken:
                raise ValueError("my agent's bug")
            return super().act(observation)
    """
)


@pytest.fixture
def agents(tmp_path: Path) -> Path:
    path = tmp_path / "my_agents.py"
    path.write_text(AGENTS)
    return path


def test_an_agent_that_raises_is_a_harness_error_with_its_own_traceback(agents: Path) -> None:
    result = run_session("flaky_weather", f"{agents}:Raises", "is_error", 0)
    assert result.status == "harness_error"
    assert "RuntimeError: boom in my act" in result.error
    assert str(agents) in result.traceback and 'raise RuntimeError("boom in my act")' in result.traceback
    assert "traceback" not in result.to_row()


def test_a_scripted_agent_whose_baseline_breaks_reports_its_own_traceback(agents: Path) -> None:
    # Its fault-free baseline breaks, so the session is never run and its agent never reset: the
    # harness must not then ask the unreset agent for its metrics (an AttributeError of its own).
    result = run_session("flaky_weather", f"{agents}:ScriptedRaises", "is_error", 0)
    assert result.status == "harness_error"
    assert "RuntimeError: boom in a scripted act" in result.error
    assert 'raise RuntimeError("boom in a scripted act")' in result.traceback
    assert "AttributeError" not in result.error + result.traceback


def test_act_returning_a_non_action_is_named(agents: Path) -> None:
    result = run_session("flaky_weather", f"{agents}:ReturnsText", "collapse", 1)
    assert result.status == "harness_error"
    assert (
        f"{agents}:ReturnsText.act returned str; expected one of CallTool, ListTools, Wait, Finish, GiveUp"
        in result.error
    )
    assert "AttributeError" not in result.error


def test_a_finish_whose_answer_is_a_string_names_the_contract(agents: Path) -> None:
    result = run_session("flaky_weather", f"{agents}:FinishesWithAString", "is_error", 0)
    assert result.status == "harness_error"
    assert (
        f"{agents}:FinishesWithAString.act returned Finish('done'): a Finish's answer is a mapping"
        in result.error
    )
    assert "Finish(text=...)" in result.error and "AttributeError" not in result.error


@pytest.mark.parametrize(
    ("agent", "shown"), [("WaitsForever", "inf"), ("WaitsBackwards", "-5"), ("WaitsNaN", "nan")]
)
def test_a_wait_that_is_endless_or_negative_is_a_broken_contract(
    agents: Path, agent: str, shown: str
) -> None:
    result = run_session("flaky_weather", f"{agents}:{agent}", "is_error", 0)
    assert result.status == "harness_error"
    assert (
        f"{agents}:{agent}.act returned Wait({shown}); a wait is a finite number of seconds, 0 or more"
        in result.error
    )
    assert result.to_row()["virtual_time_s"] < 1e6


def test_an_agent_that_calls_sys_exit_ends_its_session_not_the_process(agents: Path) -> None:
    result = run_session("flaky_weather", f"{agents}:Exits", "is_error", 0)
    assert result.status == "harness_error"
    assert result.error.endswith("SystemExit: 7")
    assert "sys.exit(7)" in result.traceback


@pytest.mark.parametrize("executor", ["serial", "process"])
def test_harness_run_records_an_agents_sys_exit_as_a_harness_error_and_exits_3(
    agents: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], executor: str
) -> None:
    out = tmp_path / "run"
    args = ["run", "flaky_weather", "--agents", f"{agents}:Exits,naive", "--seeds", "2", "--strategies",
            "is_error,collapse", "--executor", executor, "--workers", "2", "--no-compare",
            "--out", str(out)]  # fmt: skip
    code, _, err = cli(args, capsys)
    assert code == 3, err
    assert json.loads((out / "manifest.json").read_text())["status"] == "complete"
    rows = load_sessions(out)
    assert len(rows) == 8
    assert rows[rows.agent.str.endswith("Exits")].error.str.endswith("SystemExit: 7").all()
    assert (rows[rows.agent == "naive"].status != "harness_error").all()
    assert (out / "errors.log").read_text().count("sys.exit(7)") == 4


def test_harness_session_shows_the_traceback_and_exits_3(
    agents: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = cli(["session", "flaky_weather", "--agent", f"{agents}:Raises", "--json"], capsys)
    assert code == 3
    assert json.loads(out)["status"] == "harness_error"
    assert "Traceback (most recent call last)" in err and 'raise RuntimeError("boom in my act")' in err
    assert err.strip().splitlines()[-1].startswith("harness session: the session broke (harness_error)")


def test_a_good_session_still_exits_0(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = cli(["session", "flaky_weather", "--json"], capsys)
    assert code == 0, err


def test_harness_run_keeps_every_traceback_and_exits_3(
    agents: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "run"
    args = ["run", "flaky_weather", "--agents", f"{agents}:Raises,{agents}:ReturnsText", "--seeds", "2",
            "--strategies", "is_error,collapse", "--executor", "serial", "--out", str(out)]  # fmt: skip
    code, _, err = cli(args, capsys)
    assert code == 3, err
    log = (out / "errors.log").read_text()
    assert log.count("=== ") == 8
    assert log.count('raise RuntimeError("boom in my act")') == 4
    assert log.count("ReturnsText.act returned str") == 4
    assert "--allow-errors" in err.strip().splitlines()[-1]
    code, _, err = cli([*args[:-1], str(tmp_path / "again"), "--allow-errors"], capsys)
    assert code == 0, err


def test_tables_leave_broken_sessions_out_of_the_rates_and_count_them(
    agents: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "run"
    code, _, err = cli(
        ["run", "flaky_weather", "--agents", f"{agents}:SometimesRaises", "--seeds", "6", "--strategies",
         "is_error,collapse", "--executor", "serial", "--no-compare", "--allow-errors", "--out", str(out)],
        capsys,
    )  # fmt: skip
    assert code == 0, err
    rows = load_sessions(out)
    judged = rows[rows.status != "harness_error"]
    assert 0 < len(judged) < len(rows)  # the agent's seed (derived from the session's) decides
    code, text, err = cli(["compare", str(out), "--format", "json"], capsys)
    assert code == 0, err
    table = {r["strategy"]: r for r in json.loads(text)["rows"]}
    for strategy in ("is_error", "collapse"):
        mine = judged[judged.strategy == strategy]
        assert table[strategy]["n"] == len(mine)
        assert table[strategy]["harness_errors"] == 6 - len(mine)
        assert table[strategy]["success_rate"] == pytest.approx(mine.success.mean())
    # markdown: the terminal table wraps its headers ("harness" over "errors")
    code, text, _ = cli(["compare", str(out), "--format", "markdown"], capsys)
    assert "| harness errors |" in text
