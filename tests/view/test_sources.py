"""What else `harness view` opens, a bench output and a probe report; anything else is one line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.errors import UserError
from harness.view.sources import BenchView, ProbeView, open_source


def _bench(key: str, median: float, **info: object) -> dict[str, object]:
    stats = {"median": median, "mean": median, "stddev": 0.0, "min": median, "rounds": 5}
    return {
        "name": f"test_{key}",
        "stats": stats,
        "extra_info": {"key": key, "group": "dispatch", "op": "tools/call", "layer": "x", **info},
    }


REPORT = {
    "benchmarks": [
        _bench("floor/tools/call/json", 1e-5, layer="floor", codec="json"),
        _bench(
            "transport/tools/call/json", 2e-5, layer="transport", codec="json", floor="floor/tools/call/json"
        ),
        _bench("official/tools/call", 0.05, layer="official", batch=50),
    ],
    "machine_info": {"python_version": "3.11"},
    "datetime": "now",
}

PROBE = {
    "format": "harness-probe/1",
    "command": ["harness", "serve", "--demo"],
    "server": {"name": "harness-demo", "version": "0.1.0"},
    "rules": [
        {
            "id": "handshake.ping_first",
            "sent": "ping first",
            "verdict": "as spec",
            "era": "handshake",
            "observed": "empty result",
            "reference": "error -32600",
            "spec": "empty result",
            "basis": "spec",
        },
        {
            "id": "stateless.discover",
            "sent": "server/discover",
            "verdict": "differs",
            "era": "stateless",
            "observed": "x",
            "reference": "y",
            "spec": "z",
            "basis": "reference",
        },
    ],
    "summary": {"as spec": 1, "differs": 1},
    "eras": {"handshake": {"spoken": True, "evidence": "initialize"}, "stateless": {"spoken": True}},
    "summary_by_era": {"handshake": {"as spec": 1, "differs": 0}, "stateless": {"as spec": 0, "differs": 1}},
}


def test_a_pytest_benchmark_json_becomes_the_bench_table_and_its_plots(tmp_path: Path) -> None:
    path = tmp_path / "benchmark.json"
    path.write_text(json.dumps(REPORT))
    view = open_source(path)
    assert isinstance(view, BenchView)
    doc = view.summary()
    assert doc["table"]["columns"][:3] == ["figure", "rate", "x floor"]
    rows = {r[0]: r for r in doc["table"]["rows"]}
    assert rows["transport/tools/call/json"][1:3] == ["50 k/s", "0.5"]
    assert doc["targets"]["columns"][0] == "target" and doc["figures"]
    assert all(view.figure(name) is not None for name in doc["figures"])


def test_a_bench_directory_is_read_with_the_plots_it_has(tmp_path: Path) -> None:
    from harness.bench.suite import write_results

    report = tmp_path / "in.json"
    report.write_text(json.dumps(REPORT))
    write_results(report, tmp_path / "out")
    doc = open_source(tmp_path / "out").summary()
    assert doc["kind"] == "bench" and "tools_call_per_codec.png" in doc["figures"]


def test_a_probe_report_is_shown_per_era(tmp_path: Path) -> None:
    path = tmp_path / "probe.json"
    path.write_text(json.dumps(PROBE))
    view = open_source(path)
    assert isinstance(view, ProbeView)
    doc = view.summary()
    assert [e["era"] for e in doc["eras"]] == ["handshake", "stateless"]
    assert [r["id"] for r in doc["eras"][1]["rules"]] == ["stateless.discover"]


@pytest.mark.parametrize(
    ("content", "name", "says"),
    [
        (None, "missing", "no such results directory or file"),
        ("{", "x.json", "not JSON"),
        ('{"format": "other"}', "x.json", "neither a probe report"),
        ("hello", "x.txt", "give a results directory"),
    ],
)
def test_anything_else_is_refused_in_one_line(
    tmp_path: Path, content: str | None, name: str, says: str
) -> None:
    path = tmp_path / name
    if content is not None:
        path.write_text(content)
    with pytest.raises(UserError, match=says):
        open_source(path)


def test_a_directory_that_is_neither_is_refused(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="not a harness results directory"):
        open_source(tmp_path)
