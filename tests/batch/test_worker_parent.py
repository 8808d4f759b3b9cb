"""Pool workers end with the runner: a SIGKILL of ``harness run`` leaves no process behind."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

HARNESS = [sys.executable, "-m", "harness.cli.main"]


def _spawned(parent: psutil.Process) -> list[psutil.Process]:
    """The runner's pool workers; a child that ends (or is a zombie) while we look is not one."""
    out = []
    for c in parent.children(recursive=True):
        try:
            if "spawn_main" in " ".join(c.cmdline()):
                out.append(c)
        except (psutil.NoSuchProcess, psutil.ZombieProcess, psutil.AccessDenied):
            continue
    return out


def _alive(procs: list[psutil.Process]) -> list[int]:
    out = []
    for p in procs:
        try:
            if p.is_running() and p.status() != psutil.STATUS_ZOMBIE:
                out.append(p.pid)
        except psutil.NoSuchProcess:
            continue
    return out


@pytest.mark.slow
@pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL")
def test_pool_workers_end_within_seconds_of_a_sigkill_of_the_runner(tmp_path: Path) -> None:
    runner = subprocess.Popen(
        [*HARNESS, "run", "--seeds", "1000", "--executor", "process", "--workers", "2", "--no-compare",
         "--out", str(tmp_path / "run")],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        parent = psutil.Process(runner.pid)
        t0 = time.monotonic()
        workers: list[psutil.Process] = []
        while time.monotonic() - t0 < 60 and runner.poll() is None:
            workers = _spawned(parent)
            if len(workers) >= 2 and (tmp_path / "run" / "chunks").is_dir():
                break
            time.sleep(0.1)
        assert len(workers) >= 2, "the pool never started"
        time.sleep(1.0)  # the workers are in the middle of their tasks
        everyone = parent.children(recursive=True)
    finally:
        runner.send_signal(signal.SIGKILL)
        runner.wait()
    deadline = time.monotonic() + 10
    while _alive(everyone) and time.monotonic() < deadline:
        time.sleep(0.1)
    left = _alive(everyone)
    for pid in left:  # do not leave them running on the machine whatever the verdict
        psutil.Process(pid).kill()
    assert not left, f"{len(left)} of the runner's processes outlived it by 10 s"
