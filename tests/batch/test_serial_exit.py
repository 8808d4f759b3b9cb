"""An agent cannot end a serial run: ``os._exit`` in a session is refused, and a run whose process
a session killed resumes in worker processes, which record that session (issue 49, item 2).

Both run in a child process of their own: were the guard broken, the agent would end pytest's.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pandas as pd
import pytest

AGENTS = textwrap.dedent(
    """
    import os
    import signal
    from harness.session.agent import Agent

    class Exits(Agent):
        name = "os-exits"
        def reset(self, task, tools, seed):
            pass
        def act(self, observation):
            os._exit(9)

    class ForkExits(Agent):
        name = "fork-exits"
        def reset(self, task, tools, seed):
            pass
        def act(self, observation):
            pid = os.fork()
            if pid == 0:
                os._exit(0)  # the child's own exit: it ends the child, never the run in its place
            os.waitpid(pid, 0)
            from harness.session.agent import GiveUp
            return GiveUp("done")

    class Kills(Agent):
        name = "kills-itself"
        def reset(self, task, tools, seed):
            pass
        def act(self, observation):
            os.kill(os.getpid(), signal.SIGKILL)
    """
)


def _harness(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    return subprocess.run(
        [sys.executable, "-m", "harness.cli.main", *args],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )


@pytest.fixture
def agents(tmp_path: Path) -> Path:
    path = tmp_path / "hostile.py"
    path.write_text(AGENTS)
    return path


def _grid(agents: Path, agent: str, out: Path) -> list[str]:
    return ["run", "flaky_weather", "--seeds", "2", "--agents", f"reader,{agents}:{agent}", "--strategies",
            "is_error", "--executor", "serial", "--out", str(out), "--no-compare"]  # fmt: skip


def test_os_exit_in_a_serial_session_is_a_harness_error_and_the_run_finishes(
    agents: Path, tmp_path: Path
) -> None:
    out = tmp_path / "run"
    done = _harness(*_grid(agents, "Exits", out))
    assert done.returncode == 3, done.stderr  # harness errors, as under the process executor
    rows = pd.read_parquet(out / "sessions.parquet")
    assert json.loads((out / "manifest.json").read_text())["status"] == "complete"
    broken = rows[rows["agent"].str.endswith(":Exits")]
    assert len(broken) == 2 and (broken["status"] == "harness_error").all()
    assert broken["error"].str.contains("os._exit(9)", regex=False).all()
    assert (rows[rows["agent"] == "reader"]["status"] == "ok").all()


def test_a_serial_run_a_session_killed_resumes_in_workers_that_record_it(
    agents: Path, tmp_path: Path
) -> None:
    out = tmp_path / "run"
    first = _harness(*_grid(agents, "Kills", out))
    assert first.returncode == -9  # the kill ends the process: nothing stops a SIGKILL
    assert json.loads((out / "manifest.json").read_text())["status"] == "running"
    again = _harness("run", "--resume", "--out", str(out), "--no-compare")
    assert again.returncode == 3, again.stderr
    assert "resuming in worker processes" in again.stderr
    rows = pd.read_parquet(out / "sessions.parquet")
    assert len(rows) == 4 and json.loads((out / "manifest.json").read_text())["status"] == "complete"
    killed = rows[rows["agent"].str.endswith(":Kills")]
    assert (killed["status"] == "harness_error").all() and killed["error"].str.contains("process ended").all()


def test_a_child_an_agent_forks_exits_as_it_asks_and_the_run_goes_on_once(
    agents: Path, tmp_path: Path
) -> None:
    """Were ``os._exit`` refused in the forked child too, the child would go on with the run."""
    out = tmp_path / "run"
    done = _harness(*_grid(agents, "ForkExits", out))
    assert done.returncode == 0, done.stderr
    rows = pd.read_parquet(out / "sessions.parquet")
    assert len(rows) == 4 and (rows["status"] == "ok").all()
    assert (rows["processes_ended"] == 0).all()  # it was waited for: nothing left to end
