"""Results files are written atomically: a reader sees the old file or the new one, whole.

The batch tests (tests/test_batch.py, tests/test_batch_kills.py) kill whole runs;
these pin the primitive under them, :func:`harness.batch.results.atomic_write_bytes`:
a write that fails or is SIGKILLed before its rename leaves the previous file
untouched, and the temporaries it leaves behind are swept, never a whole file.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from harness.batch.results import ResultsDir, atomic_write_bytes

OLD, NEW = b"A" * 1_000_000, b"B" * 1_000_000


def test_a_write_that_fails_before_the_rename_leaves_the_old_file_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "sessions.parquet"
    atomic_write_bytes(target, OLD)

    def broken_fsync(fd: int) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", broken_fsync)
    with pytest.raises(OSError, match="No space left"):
        atomic_write_bytes(target, NEW, durable=True)
    assert target.read_bytes() == OLD
    assert [p.name for p in tmp_path.iterdir()] == ["sessions.parquet"]  # no temp file left behind


def test_the_new_content_appears_only_at_the_rename(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "manifest.json"
    atomic_write_bytes(target, OLD)
    seen_before_rename: list[bytes] = []
    real_replace = os.replace

    def watching_replace(src: str | os.PathLike[str], dst: str | os.PathLike[str]) -> None:
        seen_before_rename.append(Path(dst).read_bytes())
        assert Path(src).read_bytes() == NEW  # the whole new file exists under its temporary name
        real_replace(src, dst)

    monkeypatch.setattr(os, "replace", watching_replace)
    atomic_write_bytes(target, NEW)
    assert seen_before_rename == [OLD]
    assert target.read_bytes() == NEW


WRITER = """
import sys
from pathlib import Path
from harness.batch.results import atomic_write_bytes
target = Path(sys.argv[1])
atomic_write_bytes(target, b"A" * 1_000_000)
(target.parent / "ready").touch()
i = 0
while True:
    i += 1
    atomic_write_bytes(target, (b"A" if i % 2 else b"B") * 1_000_000)
"""


def test_a_writer_sigkilled_at_random_moments_leaves_only_whole_files(tmp_path: Path) -> None:
    rng = np.random.default_rng(np.random.SeedSequence(7))
    for round_ in range(5):
        work = tmp_path / f"round-{round_}"
        work.mkdir()
        target = work / "sessions.parquet"
        proc = subprocess.Popen([sys.executable, "-c", WRITER, str(target)])
        deadline = time.monotonic() + 30
        while not (work / "ready").exists() and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.005)
        time.sleep(float(rng.uniform(0.0, 0.2)))
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        data = target.read_bytes()
        assert data in (OLD, NEW), f"round {round_}: a torn file of {len(data)} bytes"
        (work / "ready").unlink()
        assert len(list(work.glob(".*.tmp-*"))) <= 1  # at most the one being written
        (work / "chunks").mkdir()
        ResultsDir(work, {}).clean_temporaries()
        assert not list(work.glob(".*.tmp-*"))
        assert target.read_bytes() == data  # sweeping temporaries never touches a whole file
