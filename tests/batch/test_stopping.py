"""A run stops as asked, and a session that hangs costs one session.

Ctrl-C (SIGINT to the terminal's whole process group, workers included) and SIGTERM (to the
runner alone) stop ``harness run`` under every local executor at the first signal: one line
naming the resume command, the manifest ``interrupted``, no worker left, no traceback. An
agent that hangs is cut at ``--session-timeout`` and recorded as a ``harness_error``; a grid
too big to mean is not started without ``--yes``.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import psutil
import pytest

from harness.batch.results import load_sessions
from harness.batch.worker import SessionTimeout, time_limit
from tests.helpers.cli import cli

pytestmark = pytest.mark.timeout(300)

REPO = Path(__file__).resolve().parents[2]
AGENTS = textwrap.dedent(
    """
    import time
    from harness.session.agent import Agent

    class Hangs(Agent):
        name = "hangs"
        def reset(self, task, tools, seed):
            pass
        def act(self, observation):
            while True:
                time.sleep(1)

    class Spins(Agent):
        name = "spins"
        def reset(self, task, tools, seed):
            pass
        def act(self, observation):
            while True:
                try:
                    pass
                except Exception:  # an agent's own net catches no session timeout
                    pass
    """
)


@pytest.fixture
def agents(tmp_path: Path) -> Path:
    path = tmp_path / "my_agents.py"
    path.write_text(AGENTS)
    return path


@pytest.mark.parametrize("executor", ["serial", "process"])
def test_a_hung_agent_costs_one_session_at_the_session_timeout(
    agents: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], executor: str
) -> None:
    out = tmp_path / "run"
    code, _, err = cli(
        ["run", "flaky_weather", "--agents", f"{agents}:Hangs,{agents}:Spins,naive", "--seeds", "1",
         "--strategies", "is_error", "--executor", executor, "--workers", "2", "--session-timeout", "1",
         "--no-compare", "--out", str(out)],
        capsys,
    )  # fmt: skip
    assert code == 3, err
    assert json.loads((out / "manifest.json").read_text())["status"] == "complete"
    rows = load_sessions(out).set_index("agent")
    for hung in ("Hangs", "Spins"):
        row = rows.loc[f"{agents}:{hung}"]
        assert row.status == "harness_error"
        assert "longer than 1 s (--session-timeout)" in row.error
    assert rows.loc["naive"].status != "harness_error"
    assert (out / "errors.log").read_text().count("--session-timeout") >= 2


def test_the_session_timeout_reaches_a_session_in_another_thread() -> None:
    caught: list[BaseException] = []

    def spin() -> None:
        try:
            with time_limit(0.3):
                while True:
                    pass
        except SessionTimeout as exc:
            caught.append(exc)

    thread = threading.Thread(target=spin)
    thread.start()
    thread.join(timeout=30)
    assert not thread.is_alive() and len(caught) == 1


def test_the_session_timeout_is_said_in_the_help(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = cli(["run", "--help"], capsys)
    assert code == 0
    assert "--session-timeout S" in out and "600" in out


def _start(agents: Path, out: Path, executor: str) -> subprocess.Popen[str]:
    argv = [sys.executable, "-m", "harness.cli.main", "run", "flaky_weather", "--agents",
            f"naive,{agents}:Hangs", "--seeds", "4", "--executor", executor, "--workers", "2",
            "--out", str(out)]  # fmt: skip
    process = subprocess.Popen(
        argv, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True
    )
    assert process.stderr is not None
    line = process.stderr.readline()
    assert "harness run: running" in line, line
    deadline = time.monotonic() + 120
    while not list((out / "chunks").glob("*.parquet")):  # the workers are up: naive's sessions are in
        assert time.monotonic() < deadline and process.poll() is None, "the run never wrote a session"
        time.sleep(0.1)
    time.sleep(1.0)  # and a session of Hangs hangs
    return process


@pytest.mark.parametrize(
    ("executor", "sig"),
    [
        ("serial", signal.SIGINT),
        ("process", signal.SIGINT),
        ("dask", signal.SIGINT),
        ("serial", signal.SIGTERM),
        ("process", signal.SIGTERM),
        ("dask", signal.SIGTERM),
    ],
)
def test_the_first_ctrl_c_or_sigterm_stops_the_run_with_the_resume_command(
    agents: Path, tmp_path: Path, executor: str, sig: signal.Signals
) -> None:
    out = tmp_path / "run"
    process = _start(agents, out, executor)
    children = psutil.Process(process.pid).children(recursive=True)
    if sig == signal.SIGINT:
        os.killpg(process.pid, sig)  # as a terminal does: the runner and its workers
    else:
        process.send_signal(sig)  # as a supervisor does: the runner alone
    try:
        _, err = process.communicate(timeout=120)
    finally:
        if process.poll() is None:  # it did not stop: leave nothing running for later tests
            os.killpg(process.pid, signal.SIGKILL)
            process.communicate()
    assert process.returncode == 128 + sig, err
    lines = err.strip().splitlines()
    how = "Ctrl-C" if sig == signal.SIGINT else "SIGTERM"
    assert lines[-1].startswith(f"harness run: interrupted ({how}) after ")
    assert lines[-1].endswith(f"Resume: harness run --resume --out {out}")
    for noise in ("Traceback", "KeyboardInterrupt", "leaked semaphore", "harness: aborted"):
        assert noise not in err
    assert json.loads((out / "manifest.json").read_text())["status"] == "interrupted"
    deadline = time.monotonic() + 10  # the resource tracker ends on its own once the runner is gone
    while [c for c in children if c.is_running() and c.status() != psutil.STATUS_ZOMBIE]:
        assert time.monotonic() < deadline, f"left running: {children}"
        time.sleep(0.1)


def test_a_grid_too_big_to_mean_is_not_started_without_yes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "big"
    code, _, err = cli(["run", "--seeds", "100000000", "--out", str(out)], capsys)
    assert code == 2
    (line,) = err.strip().splitlines()
    assert line.startswith("harness: error: 45,000,000,000 sessions is more than 10,000,000: at ")
    assert " sessions/s measured here x " in line and line.endswith(
        "; give --yes to run them (or fewer --seeds)"
    )
    assert not out.exists()


def test_yes_runs_a_big_grid_without_asking(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("harness.cli.run.BIG_GRID", 10)
    args = [
        "run",
        "flaky_weather",
        "--agents",
        "naive",
        "--seeds",
        "4",
        "--no-compare",
        "--executor",
        "serial",
    ]
    code, _, err = cli([*args, "--out", str(tmp_path / "a")], capsys)
    assert code == 2 and "20 sessions is more than 10" in err
    code, _, err = cli([*args, "--out", str(tmp_path / "b"), "--yes"], capsys)
    assert code == 0, err
    assert len(load_sessions(tmp_path / "b")) == 20
