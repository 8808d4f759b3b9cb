"""`harness run`'s --out and --resume: refused before anything is announced, resumed where it ran.

* A bad --out (a file, a non-empty directory, a run already there, finished or not, a
  path that cannot be created) is refused before "N sessions -> OUT" is printed.
* Two runs started in the same second get distinct results/<stamp> directories.
* --resume runs on the manifest's executor and scheduler unless --executor/--scheduler
  are given; a scheduler that cannot be reached leaves the run resumable ("interrupted",
  not "running") with one error line.
* --resume with options that would change the grid (--seeds, --agents, --strategies,
  --hosts, --set, scenarios) is refused, naming what differs.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

import harness.batch.runner as runner
from harness.batch.grid import Grid
from harness.batch.runner import default_out, run_batch
from harness.cli.main import main
from tests.helpers.cli import cli

SMALL = ["flaky_weather", "--agents", "naive", "--strategies", "is_error,masked", "--seeds", "2"]


def manifest(path: Path) -> dict[str, object]:
    data: dict[str, object] = json.loads((path / "manifest.json").read_text())
    return data


def _stop_after_first_task(total: int, done: int) -> Callable[[int], None]:
    def advance(n: int) -> None:
        raise KeyboardInterrupt

    return advance


# -- --out is checked before the run is announced ------------------------------------------


def _refused(err: str, says: str) -> None:
    assert "sessions ->" not in err, err
    assert "Traceback" not in err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("harness: error: "), err
    assert says in lines[0]


def test_an_out_that_is_a_file_is_refused_before_the_run_is_announced(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "file"
    target.write_text("mine")
    code, _, err = cli(["run", *SMALL, "--executor", "serial", "--out", str(target)], capsys)
    assert code == 2
    _refused(err, "a file, not a directory")
    assert target.read_text() == "mine"


def test_a_non_empty_out_is_refused_before_the_run_is_announced(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "notes.txt").write_text("mine")
    code, _, err = cli(["run", *SMALL, "--executor", "serial", "--out", str(tmp_path)], capsys)
    assert code == 2
    _refused(err, "not an empty directory")
    assert [p.name for p in tmp_path.iterdir()] == ["notes.txt"]


def test_an_unfinished_run_in_out_is_refused_with_its_state(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    grid = Grid(("flaky_weather",), ("naive",), ("is_error", "masked"), ("typical",), range(16))
    run_batch(grid, tmp_path / "run", executor="serial", workers=1, progress=_stop_after_first_task)
    code, _, err = cli(["run", *SMALL, "--executor", "serial", "--out", str(tmp_path / "run")], capsys)
    assert code == 2
    _refused(err, "already holds a run (status 'interrupted', 4 of 32 sessions); use --resume")


def test_an_out_that_cannot_be_created_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = cli(["run", *SMALL, "--executor", "serial", "--out", "/dev/null/x"], capsys)
    assert code == 2
    _refused(err, "--out /dev/null/x: cannot create the directory")


def test_an_empty_existing_out_is_used(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = cli(
        ["run", *SMALL, "--executor", "serial", "--out", str(tmp_path), "--no-compare"], capsys
    )
    assert code == 0, err
    assert manifest(tmp_path)["status"] == "complete"


# -- results/<stamp> ------------------------------------------------------------------------


def test_runs_started_in_the_same_second_get_distinct_directories(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(runner, "_stamp", lambda: "20260101-120000")
    got: list[Path] = []
    lock = threading.Lock()

    def take() -> None:
        path = default_out(tmp_path)
        with lock:
            got.append(path)

    threads = [threading.Thread(target=take) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    names = sorted(p.name for p in got)
    assert len(set(names)) == 8
    assert names[0] == "20260101-120000"
    assert set(names[1:]) == {f"20260101-120000-{n}" for n in range(2, 9)}
    assert all(p.is_dir() and not any(p.iterdir()) for p in got)


def test_two_cli_runs_in_the_same_second_write_two_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(runner, "_stamp", lambda: "20260101-120000")
    monkeypatch.chdir(tmp_path)
    for _ in range(2):
        code, _, err = cli(["run", *SMALL, "--executor", "serial", "--no-compare"], capsys)
        assert code == 0, err
    runs = sorted(p.name for p in (tmp_path / "results").iterdir())
    assert runs == ["20260101-120000", "20260101-120000-2"]
    # --resume without --out takes the latest: the -2 one
    code, _, err = cli(["run", "--resume", "--no-compare"], capsys)
    assert code == 0, err
    assert "results/20260101-120000-2 " in err


# -- --resume keeps the executor and scheduler ----------------------------------------------


def test_resume_runs_on_the_manifests_executor_unless_told(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    grid = Grid(("flaky_weather",), ("naive",), ("is_error", "masked"), ("typical",), range(16))
    run = tmp_path / "run"
    run_batch(grid, run, executor="serial", workers=1, progress=_stop_after_first_task)
    assert manifest(run)["status"] == "interrupted"
    code, _, err = cli(["run", "--resume", "--out", str(run), "--no-compare"], capsys)
    assert code == 0, err
    assert f"resuming 32 sessions -> {run} (serial)" in err  # not the default, process
    assert manifest(run)["status"] == "complete"


@pytest.mark.parametrize(
    ("flags", "executor", "says"),
    [
        ([], "serial", "(serial: below 1,000 sessions a pool"),
        (["--workers", "1"], "serial", "(serial: one worker runs fastest in this process"),
        (["--executor", "process", "--workers", "2"], "process", "(process)"),
    ],
    ids=["small-grid", "one-worker", "asked-for"],
)
def test_a_small_grid_runs_in_this_process_unless_a_pool_is_asked_for_and_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], flags: list[str], executor: str, says: str
) -> None:
    run = tmp_path / "run"
    code, _, err = cli(["run", *SMALL, "--out", str(run), "--no-compare", *flags], capsys)
    assert code == 0, err
    assert f"running 4 sessions -> {run} {says}" in err
    assert manifest(run)["executor"] == executor


def test_the_default_executor_is_a_pool_from_its_threshold_on() -> None:
    assert runner.default_executor(runner.POOL_FROM, 2) == ("process", "")
    assert runner.default_executor(runner.POOL_FROM - 1, 2)[0] == "serial"


def test_an_unreachable_scheduler_leaves_the_run_resumable_and_resume_keeps_the_scheduler(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("distributed")
    monkeypatch.setattr(runner, "SCHEDULER_TIMEOUT_S", 0.5)
    run = tmp_path / "run"
    nowhere = "tcp://127.0.0.1:1"  # nothing listens on port 1
    args = ["run", *SMALL, "--executor", "dask", "--scheduler", nowhere, "--out", str(run)]
    code, _, err = cli(args, capsys)
    assert code == 2
    assert "Traceback" not in err
    error = [ln for ln in err.splitlines() if ln.startswith("harness: error: ")]
    assert len(error) == 1, err
    assert f"--scheduler {nowhere}: cannot connect" in error[0]
    assert f"harness run --resume --out {run}" in error[0]
    data = manifest(run)
    assert data["status"] == "interrupted"  # not "running": resumable
    assert "cannot connect" in str(data["error"])

    # No --executor/--scheduler: the run's own, so the same scheduler is tried again.
    code, _, err = cli(["run", "--resume", "--out", str(run)], capsys)
    assert code == 2
    assert f"(dask, {nowhere})" in err
    assert f"--scheduler {nowhere}: cannot connect" in err
    assert manifest(run)["status"] == "interrupted"

    # --scheduler alone: still dask (the run's executor), at the address given.
    code, _, err = cli(["run", "--resume", "--out", str(run), "--scheduler", "tcp://127.0.0.1:2"], capsys)
    assert code == 2
    assert "--scheduler tcp://127.0.0.1:2: cannot connect" in err

    # Told otherwise: --executor serial finishes it (and does not take the run's scheduler).
    code, _, err = cli(["run", "--resume", "--out", str(run), "--executor", "serial", "--no-compare"], capsys)
    assert code == 0, err
    assert f"-> {run} (serial)" in err
    data = manifest(run)
    assert data["status"] == "complete"
    assert "error" not in data
    assert data["sessions"] == 4


@pytest.mark.parametrize(
    ("address", "says"),
    [
        ("notanaddress", "missing port number"),
        ("tcp://127.0.0.1:notaport", "invalid literal"),
        ("tpc://127.0.0.1:1", "unknown address scheme 'tpc'"),
    ],
)
def test_a_malformed_scheduler_address_is_refused_before_a_run_is_started(
    tmp_path: Path, address: str, says: str, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("distributed")
    out = tmp_path / "run"
    code, _, err = cli(
        ["run", *SMALL, "--executor", "dask", "--scheduler", address, "--out", str(out)], capsys
    )
    assert code == 2
    _refused(err, f"--scheduler {address}: not a scheduler address ({says}")
    assert not out.exists()


# -- --resume refuses options that would change the grid ----------------------------------


@pytest.fixture(scope="module")
def finished(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("resume") / "run"
    args = [*SMALL, "--set", "faults.rate=0,0.5", "--executor", "serial", "--out", str(out), "--no-compare"]
    assert main(["run", *args]) == 0
    return out


@pytest.mark.parametrize(
    ("extra", "says"),
    [
        (["--seeds", "7"], "--seeds 7 (the run's: 2 (0..1))"),
        (["--agents", "reader"], "--agents reader (the run's: naive)"),
        (["--strategies", "is_error"], "--strategies is_error (the run's: is_error,masked)"),
        (["--hosts", "transparent"], "--hosts transparent (the run's: typical)"),
        (["--set", "faults.rate=0.1"], "--set faults.rate=0.1 (the run's: faults.rate=0,0.5)"),
        (["rate_limited_search"], "scenarios rate_limited_search (the run's: flaky_weather)"),
    ],
    ids=["seeds", "agents", "strategies", "hosts", "set", "scenarios"],
)
def test_resume_refuses_options_that_change_the_grid(
    finished: Path, extra: list[str], says: str, capsys: pytest.CaptureFixture[str]
) -> None:
    before = (finished / "manifest.json").read_text()
    code, _, err = cli(["run", "--resume", "--out", str(finished), *extra], capsys)
    assert code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith(f"harness: error: --resume finishes {finished} as it was started")
    assert says in lines[0]
    assert "drop those options" in lines[0]
    assert (finished / "manifest.json").read_text() == before  # nothing was touched


def test_resume_accepts_options_that_restate_the_grid(
    finished: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["run", "--resume", "--out", str(finished), *SMALL, "--set", "faults.rate=0,0.5", "--no-compare"]
    code, _, err = cli([*args, "--executor", "serial"], capsys)
    assert code == 0, err
    assert "ran 0 sessions" in err


def test_resume_with_a_mistyped_agent_names_the_nearest(
    finished: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = cli(["run", "--resume", "--out", str(finished), "--agents", "redaer"], capsys)
    assert code == 2
    assert "did you mean 'reader'" in err


OTHER_OPTIONS = [
    (["--traces"], "--traces (False), not True"),
    (["--codec", "orjson"], "--codec (json), not orjson"),
]


@pytest.mark.parametrize(("extra", "says"), OTHER_OPTIONS)
def test_resume_refuses_another_codec_or_traces_and_accepts_the_runs_own(
    finished: Path, extra: list[str], says: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = cli(["run", "--resume", "--out", str(finished), *extra], capsys)
    assert code == 2 and says in err and err.startswith("harness: error: --resume finishes"), err
    code, _, err = cli(["run", "--resume", "--out", str(finished), "--codec", "json", "--no-compare"], capsys)
    assert code == 0, err
