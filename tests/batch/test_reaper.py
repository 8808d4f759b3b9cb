"""Processes an agent starts and leaves running end with its session, and the row counts them
(issue 49, item 8): a plain fork, a Popen, and a daemon that forked twice and left its parent,
under the serial and the process executor. Each run happens in a child process of its own."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pandas as pd
import psutil
import pytest

from harness.batch.reaper import ended_with_session

AGENTS = textwrap.dedent(
    """
    import os
    import subprocess
    import sys
    from harness.session.agent import Agent

    MARK = os.environ["REAPER_MARK"]
    SLEEP = [sys.executable, "-c", "import time; time.sleep(60)", MARK]  # the mark in its cmdline

    class Spawns(Agent):
        '''Leaves, on its first act, a forked child, a Popen and a double-forked daemon.'''
        name = "spawns"
        def reset(self, task, tools, seed):
            self.done = False
        def act(self, observation):
            if not self.done:
                self.done = True
                if os.fork() == 0:
                    os.execv(sys.executable, SLEEP)
                subprocess.Popen(SLEEP)
                daemon = " ".join(f"'{part}'" for part in SLEEP)
                subprocess.Popen(["bash", "-c", f"setsid {daemon} & exit 0"]).wait()
            from harness.session.agent import GiveUp
            return GiveUp("done")

    class Waits(Agent):
        '''Starts a child and waits for it: nothing is left, nothing counted.'''
        name = "waits"
        def reset(self, task, tools, seed):
            pass
        def act(self, observation):
            subprocess.run(["true"], check=True)
            from harness.session.agent import GiveUp
            return GiveUp("done")
    """
)


def _marked(mark: str) -> list[psutil.Process]:
    found = []
    for proc in psutil.process_iter(["cmdline"]):
        if mark in (proc.info["cmdline"] or []):
            found.append(proc)
    return found


@pytest.mark.parametrize("executor", ["serial", "process"])
def test_what_an_agent_leaves_running_ends_with_its_session_and_is_counted(
    tmp_path: Path, executor: str
) -> None:
    agents = tmp_path / "spawning.py"
    agents.write_text(AGENTS)
    mark = f"reaper-{os.getpid()}-{executor}"
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2]), "REAPER_MARK": mark}
    out = tmp_path / "run"
    try:
        done = subprocess.run(
            [sys.executable, "-m", "harness.cli.main", "run", "flaky_weather", "--seeds", "2",
             "--agents", f"{agents}:Spawns,{agents}:Waits", "--strategies", "is_error",
             "--executor", executor, "--workers", "1", "--out", str(out), "--no-compare"],
            capture_output=True, text=True, timeout=120, env=env,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        rows = pd.read_parquet(out / "sessions.parquet")
        spawned = rows[rows["agent"].str.endswith(":Spawns")]
        # per session: the fork, the Popen and the daemon (the bash before it exited by itself),
        # left by the session's own run and by its fault-free baseline's, which runs inside it
        assert list(spawned["processes_ended"]) == [6, 6], spawned[["seed", "processes_ended"]]
        assert (rows[rows["agent"].str.endswith(":Waits")]["processes_ended"] == 0).all()
        time.sleep(0.2)
        assert _marked(mark) == []  # nothing of theirs outlived the run
    finally:
        for proc in _marked(mark):
            proc.kill()


def test_a_session_that_starts_nothing_notes_nothing() -> None:
    with ended_with_session() as ended:
        pass
    assert ended.processes == 0


def test_a_process_the_session_waited_for_is_not_counted() -> None:
    with ended_with_session() as ended:
        subprocess.run([sys.executable, "-c", "pass"], check=True)
    assert ended.processes == 0


def test_a_process_left_running_in_this_process_is_ended() -> None:
    with ended_with_session() as ended:
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    assert ended.processes == 1
    child.wait(timeout=5)  # reaped already by the reaper, or now
    assert not psutil.pid_exists(child.pid)
