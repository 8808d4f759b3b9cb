"""The main job from the command line: run, compare, plot; and its user errors."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from harness.cli.main import main


def cli(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    try:
        code = main(args)
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    out = capsys.readouterr()
    return int(code or 0), out.out, out.err


@pytest.fixture(scope="module")
def small_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from harness.sim.scenario import list_scenarios

    out = tmp_path_factory.mktemp("runs") / "small"
    scenarios = list_scenarios()[:3]
    args = [*scenarios, "--agents", "naive,reader", "--strategies", "is_error,collapse,escape"]
    args += [
        "--seeds",
        "4",
        "--out",
        str(out),
        "--executor",
        "serial",
        "--traces",
        "--set",
        "faults.rate=0,0.5",
    ]
    proc = subprocess.run(
        [sys.executable, "-m", "harness.cli.main", "run", *args], capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stderr
    assert "strategy comparison" in proc.stdout
    return out


def test_run_writes_a_tidy_table_manifest_and_traces(small_run: Path) -> None:
    df = pd.read_parquet(small_run / "sessions.parquet")
    assert len(df) == 3 * 2 * 3 * 4 * 2
    for col in ("scenario", "agent", "strategy", "seed", "status", "success", "faults.rate"):
        assert col in df.columns
    assert set(df["faults.rate"]) == {0, 0.5}
    assert (df[df.strategy == "escape"].status.isin(["wedged", "ok"])).all()
    manifest = json.loads((small_run / "manifest.json").read_text())
    for key in (
        "harness_version",
        "git_sha",
        "protocol_version",
        "codec",
        "grid",
        "packages",
        "started",
        "finished",
    ):
        assert key in manifest
    assert len(list((small_run / "traces").glob("*.jsonl"))) == len(df)


def test_resume_of_a_complete_run_runs_nothing(small_run: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = cli(["run", "--resume", "--out", str(small_run), "--no-compare"], capsys)
    assert code == 0
    assert "ran 0 sessions" in err


@pytest.mark.parametrize("fmt", ["table", "markdown", "csv", "json"])
def test_compare_formats(small_run: Path, fmt: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = cli(["compare", str(small_run), "--by", "scenario,agent", "--format", fmt], capsys)
    assert code == 0
    if fmt == "json":
        data = json.loads(out)
        strategies = {r["strategy"] for r in data["rows"]}
        assert strategies == {"is_error", "collapse", "escape"}
        assert all("success_rate" in r and "mcnemar_p" in r for r in data["rows"])
    elif fmt == "csv":
        assert out.splitlines()[0].startswith("scenario,agent,faults.rate,strategy,n,success_rate")
    else:
        assert "collapse" in out


def test_plot_writes_pngs(small_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = cli(["plot", str(small_run), "--out", str(tmp_path)], capsys)
    assert code == 0
    names = {Path(line).name for line in out.split()}
    assert {"success_recovery_by_strategy.png", "success_vs_sweep.png", "agent_strategy_heatmap.png"} <= names


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["run", "--agents", "redaer"], "unknown agent 'redaer'; did you mean 'reader'"),
        (["run", "--strategies", "is_eror"], "unknown strategy 'is_eror'; did you mean 'is_error'"),
        (["run", "no_such_scenario"], "unknown scenario 'no_such_scenario'"),
        (["run", "--set", "faults.rate"], "expected KEY=V1"),
        (["run", "--scheduler", "tcp://x:1"], "--scheduler goes with --executor dask"),
        (["compare", "/nonexistent/run"], "no such results directory"),
        (["plot", "/nonexistent/run"], "no such results directory"),
    ],
    ids=["agent", "strategy", "scenario", "set", "scheduler", "compare-dir", "plot-dir"],
)
def test_user_errors_exit_2_with_one_line(
    args: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = cli(args, capsys)
    assert code == 2
    assert message in err
    assert "Traceback" not in err
    assert len(err.strip().splitlines()) == 1
