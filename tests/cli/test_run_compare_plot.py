"""The main job from the command line: run, compare, plot; and its user errors."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from tests.helpers.cli import cli, run_harness


@pytest.fixture(scope="module")
def small_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from harness.scenarios.scenario import list_scenarios

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
    code, stdout, stderr = run_harness(["run", *args])
    assert code == 0, stderr
    assert "strategy comparison" in stdout
    # the run ends with its findings in words, per agent, after the table
    findings = stdout[stdout.index("\nFindings\n") :]
    assert "- naive: no strategy changes its success in any scenario." in findings
    assert "- reader: " in findings and "What this run cannot tell" in findings
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
        assert (data["unit"], data["adjust"]) == ("scenario", "holm")
        # One scenario a row: a row's cluster is its scenario, and its intervals are exact.
        for r in data["rows"]:
            assert (r["unit"], r["n_clusters"], r["success_ci_method"]) == ("scenario", 1, "clopper-pearson")
            keys = list(r)
            assert keys.index("p_adjusted") == keys.index("p") + 1
    elif fmt == "csv":
        header = out.splitlines()[0]
        assert header.startswith("scenario,agent,faults.rate,strategy,n,n_clusters,unit,success_rate")
        assert ",test,p,p_adjusted,adjust" in header
    elif fmt == "markdown":
        assert "unit of inference: scenario" in out.splitlines()[0]
        assert "| clusters |" in out and "| p holm |" in out
    else:
        assert "collapse" in out
        assert "unit of inference: scenario" in out and "p adjusted: Holm" in out


@pytest.mark.parametrize(("unit", "adjust"), [("scenario", "bh"), ("session", "none"), ("session", "holm")])
def test_compare_takes_the_unit_and_the_adjustment(
    small_run: Path, unit: str, adjust: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = cli(["compare", str(small_run), "--unit", unit, "--adjust", adjust, "--format", "json"],
                         capsys)  # fmt: skip
    assert code == 0, err
    data = json.loads(out)
    assert (data["unit"], data["adjust"]) == (unit, adjust)
    assert f"unit of inference: {unit}" in data["inference"]
    sessions = pd.read_parquet(small_run / "sessions.parquet")
    for r in data["rows"]:
        assert (r["unit"], r["adjust"]) == (unit, adjust)
        # Pooled by agent (and faults.rate) over the run's three scenarios.
        assert r["n_clusters"] == (3 if unit == "scenario" else r["n"])
        assert {"p", "p_adjusted", "test", "n_favour_base", "n_tie", "n_favour_other"} <= set(r)
        if adjust == "none":
            assert r["p_adjusted"] == r["p"]
    assert sessions["scenario"].nunique() == 3
    code, out, _ = cli(["compare", str(small_run), "--unit", unit, "--adjust", adjust], capsys)
    assert code == 0
    title = " ".join(out.split("┏")[0].split())
    assert f"unit of inference: {unit}" in title
    assert {"bh": "p adjusted: Benjamini-Hochberg", "none": "p not adjusted", "holm": "p adjusted: Holm"}[
        adjust
    ] in title


def test_compare_refuses_an_unknown_unit(small_run: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = cli(["compare", str(small_run), "--unit", "seed"], capsys)
    assert code == 2
    assert "'seed' is not one of 'scenario', 'session'" in err


def test_the_clis_choices_are_the_cores() -> None:
    from harness.cli.compare import ADJUSTMENTS, UNITS
    from harness.report.inference import ADJUSTMENTS as CORE_ADJUSTMENTS
    from harness.report.inference import UNITS as CORE_UNITS

    assert (UNITS, ADJUSTMENTS) == (CORE_UNITS, CORE_ADJUSTMENTS)


def test_plot_writes_pngs(small_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = cli(["plot", str(small_run), "--out", str(tmp_path)], capsys)
    assert code == 0
    names = {Path(line).name for line in out.split()}
    assert {"success_recovery_by_strategy.png", "success_vs_sweep.png", "agent_strategy_heatmap.png",
            "forest_paired_difference.png"} <= names  # fmt: skip


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
