"""``harness bench``: the tidy table and its ratios, the summary, the CLI, and one quick real run.

The table tests feed a made-up pytest-benchmark report (timings chosen so the
ratios are easy to check by hand); no speed is asserted anywhere.
"""

from __future__ import annotations

import json
import math
import subprocess
from pathlib import Path
from typing import Any

import matplotlib.pyplot as plt
import pandas as pd
import pytest
from click.testing import CliRunner
from helpers.paths import HARNESS, REPO_ROOT
from matplotlib.figure import Figure
from matplotlib.text import Text

from harness.bench import plots as bench_plots
from harness.bench.table import COLUMNS, markdown, summary, tag, targets_markdown, tidy
from harness.cli.bench import command
from harness.errors import UserError


def _bench(key: str, median: float, **info: Any) -> dict[str, Any]:
    stats = {"median": median, "mean": median * 1.1, "stddev": median / 10, "min": median * 0.9, "rounds": 7}
    return {
        "name": f"test_{key}",
        "stats": stats,
        "extra_info": {"key": key, "group": "dispatch", "op": "tools/call", "layer": "x", **info},
    }


def _report(*benches: dict[str, Any]) -> dict[str, Any]:
    return {"benchmarks": list(benches), "machine_info": {"python_version": "3.11"}, "datetime": "now"}


REPORT = _report(
    _bench("floor/tools/call/json", 1e-5, layer="floor", codec="json"),
    _bench("transport/tools/call/json", 2e-5, layer="transport", codec="json", floor="floor/tools/call/json"),
    _bench(
        "client/tools/call/json",
        4e-5,
        layer="client",
        codec="json",
        floor="floor/tools/call/json",
        peer="official/tools/call",
    ),
    _bench("official/tools/call", 0.05, layer="official", batch=50),
    _bench("transport/tools/call/orjson", 1e-5, layer="transport", codec="orjson", floor="floor/missing"),
    {"name": "test_untagged", "stats": {"median": 1.0}, "extra_info": {}},
)


class _FakeBenchmark:
    def __init__(self) -> None:
        self.extra_info: dict[str, Any] = {}


def test_rates_come_from_the_median_and_the_batch_size() -> None:
    df = tidy(REPORT).set_index("key")
    assert df.loc["floor/tools/call/json", "ops_per_s"] == pytest.approx(1e5)
    assert df.loc["official/tools/call", "ops_per_s"] == pytest.approx(1000.0)  # 50 calls per 0.05 s
    assert df.loc["official/tools/call", "median_s"] == pytest.approx(0.001)


def test_each_path_is_divided_by_its_floor_and_its_peer() -> None:
    df = tidy(REPORT).set_index("key")
    assert df.loc["transport/tools/call/json", "ratio_to_floor"] == pytest.approx(0.5)
    assert df.loc["client/tools/call/json", "ratio_to_floor"] == pytest.approx(0.25)
    assert df.loc["client/tools/call/json", "ratio_to_official_sdk"] == pytest.approx(25.0)


def test_a_missing_floor_gives_no_ratio_rather_than_a_wrong_one() -> None:
    df = tidy(REPORT).set_index("key")
    assert math.isnan(df.loc["transport/tools/call/orjson", "ratio_to_floor"])
    assert math.isnan(df.loc["floor/tools/call/json", "ratio_to_official_sdk"])


def test_untagged_benchmarks_stay_out_and_the_columns_are_fixed() -> None:
    df = tidy(REPORT)
    assert len(df) == 5
    assert tuple(df.columns) == COLUMNS


def test_a_ratio_a_case_timed_itself_is_its_ratio_to_baseline() -> None:
    df = tidy(
        _report(
            _bench("batch/process/1", 2.0, workers=1),
            _bench("batch/process/2", 1.0, workers=2, baseline="batch/process/1"),
            _bench("scaling/process/2", 3.0, workers=2, measured_ratio=1.75, seconds_1=[7], seconds_2=[4]),
        )
    ).set_index("key")
    assert df.loc["batch/process/2", "ratio_to_baseline"] == pytest.approx(2.0)
    assert df.loc["scaling/process/2", "ratio_to_baseline"] == pytest.approx(1.75)
    assert math.isnan(df.loc["batch/process/1", "ratio_to_baseline"])


def test_two_benchmarks_with_one_key_are_refused() -> None:
    with pytest.raises(ValueError, match="share the key"):
        tidy(_report(_bench("a", 1.0), _bench("a", 2.0)))


def test_tag_refuses_unknown_and_missing_fields() -> None:
    with pytest.raises(ValueError, match="unknown benchmark tag"):
        tag(_FakeBenchmark(), key="k", group="g", op="o", layer="l", speed=3)
    with pytest.raises(ValueError, match="missing: layer"):
        tag(_FakeBenchmark(), key="k", group="g", op="o")
    bench = _FakeBenchmark()
    tag(bench, key="k", group="g", op="o", layer="l", codec="json")
    assert bench.extra_info == {"key": "k", "group": "g", "op": "o", "layer": "l", "codec": "json"}


def test_the_summary_names_the_two_headline_ratios_and_judges_the_targets() -> None:
    info = summary(tidy(REPORT))
    assert info["ratio_to_floor"] == pytest.approx(0.5)
    assert info["ratio_to_official_sdk"] == pytest.approx(25.0)
    targets = {(t["key"], t["measure"]): t for t in info["targets"]}
    assert targets["transport/tools/call/json", "ratio_to_floor"]["met"] is False  # 0.5 < 0.6
    assert targets["client/tools/call/json", "ratio_to_official_sdk"]["met"] is False  # 25 < 40
    assert (
        targets["sessions/scripted-20", "ops_per_s"]["measured"] is None
        and targets["sessions/scripted-20", "ops_per_s"]["met"] is None
    )
    json.dumps(info)  # the --format json object must serialize


def test_each_target_stands_beside_the_ceiling_its_own_run_allows() -> None:
    info = summary(
        tidy(
            _report(
                _bench("floor/tools/call/json", 1e-5, layer="floor", codec="json"),
                _bench("checked/tools/call/json", 2e-5, floor="floor/tools/call/json"),
                _bench(
                    "client/tools/call/json", 4e-5, floor="floor/tools/call/json", peer="official/tools/call"
                ),
                _bench("official/tools/call", 0.05, layer="official", batch=50),
                _bench("floor/session-20/json", 1e-3, layer="floor", op="session-20"),
                _bench("checked/tools/call/orjson", 2e-5, floor="floor/tools/call/orjson"),
            )
        )
    )
    targets = {(t["key"], t["measure"]): t for t in info["targets"]}
    # the checked reference's 50 k/s over the official SDK's 1 k/s: a client path could be 50 x
    call = targets["client/tools/call/json", "ratio_to_official_sdk"]
    assert call["ceiling"] == pytest.approx(50.0) and call["reachable"] is True and call["met"] is False
    # the json floor ratio's ceiling is the checked reference's own ratio to the floor
    assert targets["transport/tools/call/json", "ratio_to_floor"]["ceiling"] == pytest.approx(0.5)
    assert targets["transport/tools/call/json", "ratio_to_floor"]["reachable"] is False
    assert "official SDK" in call["ceiling_of"]
    # the codec alone does 1,000 scripted sessions' messages a second: 2,000 is out of reach here
    scripted = targets["sessions/scripted-20", "ops_per_s"]
    assert scripted["ceiling"] == pytest.approx(1000.0) and scripted["reachable"] is False
    assert scripted["measured"] is None and scripted["met"] is None
    # a ceiling whose row (or whose floor) did not run is not guessed
    assert targets["transport/tools/call/orjson", "ratio_to_floor"]["ceiling"] is None
    assert (
        targets["session/json", "ratio_to_official_sdk"]["ceiling"] is None
        and targets["session/json", "ratio_to_official_sdk"]["reachable"] is None
    )
    text = targets_markdown(info)
    assert "| tools/call, x the official SDK | 25 | 40 | no | 50 |" in text


def test_issue_39_s_targets_a_guard_a_bound_rebased_on_each_run_and_two_workers_at_1_8() -> None:
    sessions = {"group": "sessions", "op": "session-20"}
    info = summary(
        tidy(
            _report(
                _bench("floor/session-20/json", 1e-4, layer="floor", **sessions),  # 10 k/s
                _bench("floor/session-20/stateless/json", 2e-4, layer="floor", **sessions),  # 5 k/s
                _bench("sessions/scripted-20", 1e-3, floor="floor/session-20/json", **sessions),  # 1 k/s
                _bench(
                    "sessions/scripted-20/stateless",
                    1.15e-3,
                    floor="floor/session-20/json",
                    baseline="sessions/scripted-20",
                    **sessions,
                ),
                _bench("scaling/process/2", 1.0, measured_ratio=1.75),
            )
        )
    )
    targets = {(t["key"], t["measure"]): t for t in info["targets"]}
    # 1 k/s over a 10 k/s floor is 0.1 x: under the guard's 0.2
    guard = targets["sessions/scripted-20", "ratio_to_floor"]
    assert guard["measured"] == pytest.approx(0.1) and guard["threshold"] == 0.2 and guard["met"] is False
    # A handshake session of 1 ms whose codec takes 0.1 ms; the stateless codec takes 0.2 ms, so
    # with nothing else dearer the stateless session takes 1.1 ms: 1 / 1.1 of the handshake's rate.
    stateless = targets["sessions/scripted-20/stateless", "ratio_to_baseline"]
    assert stateless["ceiling"] == pytest.approx(1 / 1.1)
    assert stateless["threshold"] == pytest.approx(0.9 / 1.1)  # 0.9 of the bound this run measured
    assert stateless["measured"] == pytest.approx(1 / 1.15) and stateless["met"] is True
    scaling = targets["scaling/process/2", "ratio_to_baseline"]
    assert scaling["threshold"] == 1.8 and scaling["measured"] == 1.75 and scaling["met"] is False
    # A miss by a hair is not printed as the threshold itself.
    edge = {**scaling, "measured": 1.7997}
    assert "| 1.7997 | 1.8 | no |" in targets_markdown({**info, "targets": [edge]})
    # Without its floors' rows the stateless target falls back to the fixed 0.79, and says no ceiling.
    bare = summary(tidy(_report(_bench("sessions/scripted-20/stateless", 1e-3, **sessions))))
    fallback = {(t["key"], t["measure"]): t for t in bare["targets"]}[
        "sessions/scripted-20/stateless", "ratio_to_baseline"
    ]
    assert fallback["threshold"] == 0.79 and fallback["ceiling"] is None and fallback["measured"] is None


def test_a_quick_run_is_known_from_its_options_and_says_so_under_the_targets() -> None:
    from harness.bench.suite import is_quick

    quick, full = (_report({**_bench("a", 1.0), "options": {"max_time": seconds}}) for seconds in (0.05, 1.0))
    assert is_quick(quick) and not is_quick(full) and not is_quick(REPORT)
    info = summary(tidy(REPORT))
    assert "--quick" not in targets_markdown(info)
    assert "Judge the targets from a full run" in targets_markdown({**info, "quick": True})


@pytest.mark.parametrize("codec", ["json", "orjson"])
def test_the_checked_reference_answers_as_the_transport_does_and_only_that(codec: str) -> None:
    from harness.bench import workloads as w
    from harness.protocol.memory import InMemoryTransport

    send = w.checked_send(codec)
    assert send(w.CALL_ADD) == InMemoryTransport(w.demo_server(), codec).send(w.CALL_ADD)
    params = w.CALL_ADD["params"]
    for off_path in (
        {**w.CALL_ADD, "jsonrpc": "1.0"},
        {**w.CALL_ADD, "method": "tools/nope"},
        {**w.CALL_ADD, "params": {**params, "name": "nope"}},
        {**w.CALL_ADD, "params": {**params, "arguments": {"x": "2", "y": 3}}},
    ):
        with pytest.raises(ValueError):
            send(off_path)


def test_session_floors_replay_exactly_the_messages_a_session_puts_on_the_wire() -> None:
    from harness.bench import workloads as w

    session = w.session_messages()
    assert [m.get("method") for m in session] == [
        "initialize",
        None,
        "notifications/initialized",
        "tools/call",
        None,
    ]
    scripted = w.scripted_messages(w.twenty_call_scenario())
    calls = [m for m in scripted if m.get("method") == "tools/call"]
    assert len(calls) == 20 and scripted[0]["method"] == "initialize"
    assert all(m["jsonrpc"] == "2.0" for m in scripted)
    assert len(w.protocol_messages(20)) == len(scripted)  # handshake, listing, 20 calls, and replies
    for messages in (session, scripted):
        assert w.wire_floor("json", messages)() == messages[-1]


def test_markdown_shows_the_rate_and_ratios_of_each_row() -> None:
    text = markdown(tidy(REPORT), keys=("transport/tools/call/json", "not/run"))
    assert "| `transport/tools/call/json` | 50 k/s | 0.5 |  |  |" in text
    assert "not/run" not in text


def test_markdown_shows_the_peak_before_sessions_parquet_only_where_a_case_measured_it() -> None:
    memory = _report(
        _bench("memory/serial/1000", 2.0, peak_rss_mb=150.0, peak_rss_run_mb=130.0),
        _bench("memory/serial/10000", 20.0, peak_rss_mb=160.0, peak_rss_run_mb=131.0),
    )
    df = tidy(memory)
    assert list(df["peak_rss_run_mb"]) == [130.0, 131.0]
    text = markdown(df, keys=None)
    assert "peak RSS (MB) | peak RSS before sessions.parquet (MB) |" in text
    assert "| `memory/serial/10000` | 0.05 /s |  |  |  | 160 | 131 |" in text
    older = markdown(tidy(_report(_bench("memory/serial/1000", 2.0, peak_rss_mb=150.0))), keys=None)
    assert "peak RSS (MB) |" in older and "before sessions.parquet" not in older


def test_the_cli_rebuilds_table_summary_and_plots_from_a_report(tmp_path: Path) -> None:
    report = tmp_path / "in.json"
    report.write_text(json.dumps(REPORT))
    out = tmp_path / "out"
    result = CliRunner().invoke(command, ["--from-json", str(report), "--out", str(out), "--format", "json"])
    assert result.exit_code == 0, result.output
    printed = json.loads(result.stdout)
    assert printed["ratio_to_floor"] == pytest.approx(0.5) and printed["out"] == str(out)
    assert list(pd.read_parquet(out / "bench.parquet")["key"]) == list(pd.read_csv(out / "bench.csv")["key"])
    assert len(pd.read_csv(out / "bench.csv")) == 5
    assert (out / "tools_call_per_codec.png").stat().st_size > 0
    assert (out / "ratio_to_official_sdk.png").stat().st_size > 0


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("not json", "cannot read benchmark JSON"),
        ('{"x": 1}', "not a pytest-benchmark JSON"),
        ('{"benchmarks": []}', "no tagged"),
    ],
)
def test_a_bad_report_is_one_clear_error(tmp_path: Path, content: str, message: str) -> None:
    report = tmp_path / "in.json"
    report.write_text(content)
    result = CliRunner().invoke(command, ["--from-json", str(report), "--out", str(tmp_path / "o")])
    assert isinstance(result.exception, UserError) and message in str(result.exception)


@pytest.mark.parametrize("flag", ["--quick", "--million"])
def test_from_json_and_a_new_run_flag_do_not_mix(tmp_path: Path, flag: str) -> None:
    result = CliRunner().invoke(command, ["--from-json", str(tmp_path / "x.json"), flag])
    assert isinstance(result.exception, UserError)
    assert flag in str(result.exception)


@pytest.mark.slow
def test_a_quick_run_of_a_few_cases_writes_every_file_and_one_json_object(tmp_path: Path) -> None:
    out = tmp_path / "bench"
    select = "test_transport_tools_call or (test_floor and call) or test_client_tools_call"
    proc = subprocess.run(
        [*HARNESS, "bench", "--quick", "-k", select, "--out", str(out), "--format", "json"],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    # progress: one line per case as it ends, the last at 100 %
    done = [line for line in proc.stderr.splitlines() if line.startswith("harness bench: [")]
    assert len(done) == len(pd.read_csv(out / "bench.csv")) and done[-1].startswith("harness bench: [100%]")
    assert any("test_floor[" in line and "tools/call" in line for line in done)
    printed = json.loads(proc.stdout)
    assert printed["ratio_to_floor"] > 0
    assert printed["ratio_to_official_sdk"] is None  # the official SDK was not selected
    for name in ("benchmark.json", "bench.csv", "bench.parquet", "summary.json", "summary.md", "pytest.log"):
        assert (out / name).is_file(), name
    keys = set(pd.read_csv(out / "bench.csv")["key"])
    assert {"floor/tools/call/json", "transport/tools/call/json", "client/tools/call/json"} <= keys


def test_a_selection_that_matches_nothing_is_a_user_error(tmp_path: Path) -> None:
    proc = subprocess.run(
        [*HARNESS, "bench", "--quick", "-k", "no_such_benchmark", "--out", str(tmp_path / "b")],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 2
    assert (
        proc.stderr.strip().splitlines()[-1] == "harness: error: no benchmark matches -k 'no_such_benchmark'"
    )


def test_a_new_run_without_the_dev_extras_says_how_to_get_them(monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "pytest_benchmark" else real(name, *a)
    )
    result = CliRunner().invoke(command, ["--quick"])
    assert isinstance(result.exception, UserError)
    assert "needs pytest_benchmark: pip install -e '.[dev]'" in str(result.exception)


# -- python -m harness.bench.profile ----------------------------------------------------------


def test_the_profile_names_where_a_tools_call_spends_its_time() -> None:
    from harness.bench.profile import profile

    text = profile("call", "json", repeat=3000, top=40)
    head, *rows = text.splitlines()
    assert head.startswith("call (json), 3000 runs")
    shares = [float(row.split("%", 1)[0]) for row in rows]
    assert shares == sorted(shares, reverse=True)
    # Shares of the workload's time (the profiler's own left out), each rounded to 0.1.
    assert 0 < sum(shares) <= 100 + 0.05 * len(shares)
    assert any("MCPServer.handle" in row for row in rows)
    assert not any("profile.py" in row for row in rows)  # the profiler's own loop is left out


def test_the_profile_refuses_an_unknown_workload(capsys: pytest.CaptureFixture[str]) -> None:
    from harness.bench.profile import main

    with pytest.raises(SystemExit) as exit_info:
        main(["no-such-workload"])
    assert exit_info.value.code == 2
    assert "invalid choice" in capsys.readouterr().err


# -- python -m harness.bench.footer -----------------------------------------------------------


def test_the_footer_bench_writes_the_groups_it_is_asked_for(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from harness.batch import results
    from harness.bench.footer import main

    monkeypatch.setattr(results, "ROW_GROUP", 30)  # a row group of 30 sessions keeps the batch short
    assert main(["2", "6"]) == 0
    out = capsys.readouterr().out
    assert "one row group: 30 session rows (the runner's ROW_GROUP) of " in out
    rows = [line.split() for line in out.splitlines()[2:]]
    assert [(r[0], r[1]) for r in rows] == [("2", "60"), ("6", "180")]
    footers = [float(r[-2]) for r in rows]
    assert footers[1] > footers[0]  # the footer on disk lists every group


def test_the_footer_bench_refuses_fewer_than_two_groups(capsys: pytest.CaptureFixture[str]) -> None:
    from harness.bench.footer import main

    with pytest.raises(SystemExit) as exit_info:
        main(["1"])
    assert exit_info.value.code == 2
    assert "at least 2" in capsys.readouterr().err


# -- python -m harness.bench.mypyc_trial ------------------------------------------------------


def test_every_edit_the_compiled_core_trial_makes_still_applies() -> None:
    from harness.bench.mypyc_trial import EDITS, MODULES, _mypy_ini

    root = Path(__file__).resolve().parents[1]
    assert "[mypy-" in _mypy_ini(root / "pyproject.toml")  # the stub-less libraries carried over
    assert all((root / m).is_file() for m in MODULES)
    for name, edits in EDITS.items():
        text = (root / name).read_text(encoding="utf-8")
        for old, new in edits:
            assert old in text, f"{name}: the trial's edit no longer applies: {old!r}"
            text = text.replace(old, new, 1)
        compile(text, name, "exec")  # the edited module still parses


def test_the_failed_cases_are_read_from_pytests_short_summary() -> None:
    from harness.bench.suite import failed_cases

    log = (
        "...F.\n=== short test summary info ===\n"
        "FAILED tests/benchmarks/test_sessions.py::test_peak_memory[1000000] - Failed: Timeout\n"
        "1 failed, 138 passed in 900.0s\n"
    )
    assert failed_cases(log) == (
        "tests/benchmarks/test_sessions.py::test_peak_memory[1000000] - Failed: Timeout",
    )
    assert failed_cases("....\n4 passed\n") == ()


def _overlapping_texts(fig: Figure) -> list[tuple[str, str]]:
    """Pairs of visible, non-empty texts of ``fig`` whose drawn boxes overlap."""
    fig.canvas.draw()
    texts = [t for t in fig.findobj(Text) if t.get_visible() and t.get_text().strip()]
    boxes = [(t.get_text(), t.get_window_extent()) for t in texts]
    return [
        (a, b) for i, (a, box_a) in enumerate(boxes) for b, box_b in boxes[i + 1 :] if box_a.overlaps(box_b)
    ]


@pytest.mark.parametrize(
    ("column", "targets", "log", "values"),
    [
        # A bar at 3.0 stretches the axis: targets 0.5 and 0.6 end up a few pixels apart.
        ("ratio_to_floor", bench_plots.FLOOR_TARGETS, False, [0.3, 0.55, 0.62, 0.9, 3.0]),
        ("ratio_to_official_sdk", bench_plots.OFFICIAL_TARGETS, True, [0.4, 2.0, 38.0, 41.0, 110.0]),
    ],
)
def test_the_ratio_plots_print_no_label_over_another(
    column: str, targets: dict[str, float], log: bool, values: list[float]
) -> None:
    rows = pd.DataFrame(
        {"key": [f"transport/tools/list/{n}/paged/orjson" for n in range(len(values))], column: values}
    )
    fig = bench_plots.bars_figure(rows, column, "a title", targets, log)
    assert fig is not None
    try:
        legend = fig.axes[0].get_legend()
        assert legend is not None
        assert [t.get_text() for t in legend.get_texts()] == [f"target {name}" for name in targets]
        assert _overlapping_texts(fig) == []
    finally:
        plt.close(fig)


def test_the_batch_cost_groups_name_native_and_every_installed_world_s_parts() -> None:
    """``python -m harness.bench.batch_cost``: native first, then each suite or category, each
    group's sessions giving one per-call cost per session that made a call."""
    from harness.bench import batch_cost

    found = batch_cost.groups()
    assert next(iter(found)) == batch_cost.NATIVE and found[batch_cost.NATIVE]
    assert all(n.startswith(g + "/") for g, names in found.items() if g != batch_cost.NATIVE for n in names)
    costs = batch_cost.per_call(found[batch_cost.NATIVE][:2], seeds=1)
    assert costs and all(c > 0 for c in costs)


def test_a_session_s_call_count_is_the_same_on_every_run_and_grows_with_its_calls() -> None:
    """``python -m harness.bench.call_counts``: the count a refactor is compared by does not move
    with the machine, and it measures work (a 20-call session makes more calls than a 5-call one)."""
    from harness.bench import workloads
    from harness.bench.call_counts import calls_per_session

    def twenty(_: int) -> None:
        workloads.protocol_session(20)()

    def five(_: int) -> None:
        workloads.protocol_session(5)()

    first, second = calls_per_session(twenty, 2), calls_per_session(twenty, 3)
    assert first == second
    assert calls_per_session(five, 2) < first
