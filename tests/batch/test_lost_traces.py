"""A resume writes again every finished session's trace that is missing (issue 49, item 5): after
a full disk between a chunk and its traces, rows and traces agree again, byte for byte."""

from __future__ import annotations

import json
from pathlib import Path

from harness.cli.main import main


def test_a_resume_writes_the_lost_traces_again_byte_for_byte(tmp_path: Path) -> None:
    out = tmp_path / "run"
    argv = ["run", "flaky_weather", "strict_dates", "--seeds", "3", "--agents", "reader", "--strategies",
            "is_error,collapse", "--traces", "--out", str(out), "--no-compare"]  # fmt: skip
    assert main(argv) == 0
    traces = sorted((out / "traces").glob("*.jsonl"))
    assert len(traces) == 12
    lost = {p.name: p.read_bytes() for p in traces[::4]}
    for name in lost:
        (out / "traces" / name).unlink()
    manifest = json.loads((out / "manifest.json").read_text())
    manifest["status"] = "interrupted"  # as a full disk leaves it
    (out / "manifest.json").write_text(json.dumps(manifest))
    assert main(["run", "--resume", "--out", str(out), "--no-compare"]) == 0
    assert len(list((out / "traces").glob("*.jsonl"))) == 12
    assert all((out / "traces" / name).read_bytes() == data for name, data in lost.items())
    assert json.loads((out / "manifest.json").read_text())["traces_rewritten"] == len(lost)
