"""``harness run`` on a process pool: the oracle's pre-check and the comparison's imports run in a
thread beside the sessions (``harness.cli.run.Beside``), and nothing a user sees changes but when."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from harness.cli import run as run_module
from harness.cli.run import Beside
from tests.cli.test_check import _scenario
from tests.helpers.cli import cli


class TestBeside:
    def test_the_steps_run_in_order_in_the_thread(self) -> None:
        done: list[str] = []
        beside = Beside()
        beside.steps += [lambda: done.append("a"), lambda: done.append("b")]
        beside.start()
        beside.finish()
        assert done == ["a", "b"] and not beside.is_alive()

    def test_a_step_s_exception_is_raised_again_by_finish_and_stops_the_steps_after_it(self) -> None:
        done: list[str] = []

        def boom() -> None:
            raise ValueError("boom")

        beside = Beside()
        beside.steps += [boom, lambda: done.append("after")]
        beside.start()
        with pytest.raises(ValueError, match="boom"):
            beside.finish()
        assert done == []

    def test_finish_without_a_start_runs_the_steps_here(self) -> None:
        done: list[str] = []
        beside = Beside()
        beside.steps.append(lambda: done.append("here"))
        beside.finish()
        assert done == ["here"] and beside.ident is None


def _run(path: Path, out: Path, executor: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    args = [str(path), "--agents", "oracle,naive", "--seeds", "2", "--executor", executor, "--workers", "2"]
    return cli(["run", *args, "--out", str(out)], capsys)


def test_a_pool_run_warns_of_an_unsolvable_scenario_with_the_same_lines_as_a_serial_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _scenario(tmp_path, expect=False)
    lines = {}
    for executor in ("serial", "process"):
        code, out, err = _run(path, tmp_path / executor, executor, capsys)
        assert code == 0, err
        assert "is_error" in out  # the comparison, after the imports done beside the run
        lines[executor] = [line for line in err.splitlines() if "warning" in line]
    assert lines["process"] == lines["serial"] and len(lines["serial"]) == 1
    assert "'booking'" in lines["serial"][0]
    rows = {e: pd.read_parquet(tmp_path / e / "sessions.parquet").drop(columns="wall_time_s") for e in lines}
    pd.testing.assert_frame_equal(rows["process"], rows["serial"])


def test_an_exception_in_the_pre_check_is_raised_once_the_run_is_over(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*_: object) -> list[str]:
        raise RuntimeError("the oracle broke")

    monkeypatch.setattr(run_module, "unsolvable", broken)
    with pytest.raises(RuntimeError, match="the oracle broke"):
        _run(_scenario(tmp_path, expect=True), tmp_path / "r", "process", capsys)
    assert len(pd.read_parquet(tmp_path / "r" / "sessions.parquet")) > 0  # the run went on


def test_a_resumed_run_does_not_check_again(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _scenario(tmp_path, expect=False)
    code, _, err = _run(path, tmp_path / "r", "process", capsys)
    assert code == 0 and "warning" in err

    def never(*_: object) -> list[str]:
        raise AssertionError("--resume ran the pre-check")

    monkeypatch.setattr(run_module, "unsolvable", never)
    code, _, err = cli(["run", "--resume", "--out", str(tmp_path / "r")], capsys)
    assert code == 0 and "warning" not in err, err
