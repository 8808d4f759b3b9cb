"""A real Dask cluster, started as docs/batches.md says (``dask scheduler`` and ``dask worker
--nworkers 2 --nthreads 1``, each its own process), gives the rows the process pool gives.

``tests/test_batch.py`` compares the executors on a ``LocalCluster`` the runner starts itself;
here the scheduler and workers are other programs, reached only through their address, as on a
real cluster, and the sessions are real ones (shipped scenarios, scripted agents).
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest

from tests.helpers.cli import cli

DASK = Path(sys.executable).with_name("dask")
START_S = 30.0
"""Seconds the scheduler and both workers get to come up (a few, here)."""


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _start(*args: str, cwd: Path) -> subprocess.Popen[bytes]:
    # A session of its own, so that the whole group (a worker's nannies and their processes) ends.
    return subprocess.Popen(
        [str(DASK), *args],
        cwd=cwd,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )


def _end(proc: subprocess.Popen[bytes]) -> None:
    """SIGTERM to the process's group, then SIGKILL to whatever of it is left."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGTERM)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(10)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(5)


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[str]:
    """The address of a scheduler with two single-threaded workers, all ended afterwards."""
    from distributed import Client

    if not DASK.exists():
        pytest.skip("no dask command next to this Python")
    address = f"tcp://127.0.0.1:{_free_port()}"
    port = address.rsplit(":", 1)[1]
    procs = [_start("scheduler", "--host", "127.0.0.1", "--port", port, "--no-dashboard", cwd=tmp_path)]
    try:
        procs.append(
            _start("worker", address, "--nworkers", "2", "--nthreads", "1", "--no-dashboard", cwd=tmp_path)
        )
        deadline = time.monotonic() + START_S
        while True:  # the scheduler first: a client gives up at once on a refused connection
            try:
                with Client(address, timeout=5) as client:
                    client.wait_for_workers(2, timeout=max(1.0, deadline - time.monotonic()))
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)
        yield address
    finally:
        for proc in reversed(procs):
            _end(proc)


def test_a_scheduler_and_two_workers_give_the_process_pool_s_rows(
    cluster: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    grid = ["run", "travel_day", "flaky_weather", "--agents", "reader,naive", "--seeds", "3", "--no-compare"]
    on = {
        "d": ["--executor", "dask", "--scheduler", cluster],
        "p": ["--executor", "process", "--workers", "2"],
    }
    for out, executor in on.items():
        code, _, err = cli([*grid, *executor, "--out", str(tmp_path / out)], capsys)
        assert code == 0, err
    rows = {k: pd.read_parquet(tmp_path / k / "sessions.parquet").drop(columns="wall_time_s") for k in on}
    assert len(rows["d"]) == 2 * 2 * 3 * rows["d"].strategy.nunique() > 0
    pd.testing.assert_frame_equal(rows["d"], rows["p"])
