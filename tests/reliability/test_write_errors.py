"""A full disk or a read-only output is one line and exit 1, and nothing finished is lost.

The disk is filled by making the writer raise what the kernel raises (ENOSPC, EROFS): a small
file system of its own needs root tricks a test should not depend on (docs/reliability.md says
how this was also checked by hand on a 1 MB tmpfs).
"""

from __future__ import annotations

import errno
import json
import os
from pathlib import Path
from typing import Any

import pytest

from harness.batch.results import ResultsDir, load_sessions
from tests.helpers.cli import cli

GRID = ["run", "flaky_weather", "--agents", "naive", "--seeds", "8", "--executor", "serial",
        "--workers", "1", "--no-compare"]  # fmt: skip


def test_a_full_disk_stops_the_run_in_one_line_and_resume_finishes_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "run"
    real = ResultsDir.write_chunk
    written: list[int] = []

    def full(self: ResultsDir, rows: Any, first: int = 0) -> Path:
        if written:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(self.path / "chunks" / "x.parquet"))
        written.append(len(rows))
        return real(self, rows, first)

    monkeypatch.setattr(ResultsDir, "write_chunk", full)
    code, _, err = cli([*GRID, "--out", str(out)], capsys)
    assert code == 1
    (line,) = [x for x in err.strip().splitlines() if not x.startswith("harness run: running")]
    assert line.startswith("harness: error: ") and "cannot write (No space left on device)" in line
    assert line.endswith(f"Make room, then resume: harness run --resume --out {out}")
    assert json.loads((out / "manifest.json").read_text())["status"] == "interrupted"
    kept = written[0]
    assert 0 < kept < 40
    monkeypatch.setattr(ResultsDir, "write_chunk", real)
    code, _, err = cli(["run", "--resume", "--out", str(out), "--no-compare"], capsys)
    assert code == 0, err
    assert f"{kept} already done" in err
    assert len(load_sessions(out)) == 40


def test_a_read_only_output_for_the_html_page_is_one_line_and_exit_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    run = tmp_path / "run"
    code, _, err = cli([*GRID, "--out", str(run)], capsys)
    assert code == 0, err

    def read_only(*args: Any, **kwargs: Any) -> Any:
        raise OSError(errno.EROFS, os.strerror(errno.EROFS))

    monkeypatch.setattr(Path, "write_text", read_only)
    monkeypatch.setattr(Path, "unlink", read_only)  # the cleanup of the temporary file fails too
    page = tmp_path / "page.html"
    code, _, err = cli(["view", str(run), "--html", str(page)], capsys)
    assert code == 1
    assert err.strip().splitlines() == [
        f"harness: error: --html {page}: cannot write (Read-only file system)"
    ]


def test_any_command_meeting_a_full_disk_says_so_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    def full(*args: Any, **kwargs: Any) -> Any:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), "gen/x.toml")

    monkeypatch.setattr(Path, "write_text", full)
    code, _, err = cli(["generate", "mixed", "--count", "2", "--out", str(tmp_path / "gen")], capsys)
    assert code == 1
    assert (
        err.strip().splitlines()[-1] == "harness: error: gen/x.toml: cannot write (No space left on device)"
    )
    assert "Traceback" not in err
