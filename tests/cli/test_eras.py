"""``--eras`` and ``--era``: the era is a grid axis and a column; mistakes are one line."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
from click.testing import CliRunner

from harness.cli.main import cli


def test_run_sweeps_the_eras_and_records_the_column(tmp_path: Path) -> None:
    out = tmp_path / "r"
    args = ["run", "strict_dates", "--agents", "reader", "--strategies", "is_error,input_required"]
    args += ["--eras", "handshake,stateless", "--seeds", "2", "--executor", "serial", "--out", str(out)]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    df = pd.read_parquet(out / "sessions.parquet")
    assert len(df) == 2 * 2 * 2 and set(df["era"]) == {"handshake", "stateless"}
    assert json.loads((out / "manifest.json").read_text())["grid"]["eras"] == ["handshake", "stateless"]
    resumed = CliRunner().invoke(cli, ["run", "--resume", "--out", str(out), "--eras", "handshake"])
    assert resumed.exit_code == 2 and "--eras handshake" in resumed.output
    shown = CliRunner().invoke(cli, ["compare", str(out), "--by", "agent,era", "--format", "csv"])
    assert shown.exit_code == 0 and shown.output.count("stateless") == 2


def test_unknown_era_is_one_line(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        cli, ["run", "strict_dates", "--eras", "stateles", "--out", str(tmp_path / "x")]
    )
    assert result.exit_code == 2 and "stateless" in result.output and "Traceback" not in result.output
    result = CliRunner().invoke(cli, ["session", "strict_dates", "--era", "2026"])
    assert result.exit_code == 2 and "Traceback" not in result.output


def test_session_takes_the_era() -> None:
    result = CliRunner().invoke(cli, ["session", "strict_dates", "--era", "stateless", "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["era"] == "stateless"
