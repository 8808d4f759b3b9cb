"""``harness run --agents llm``: record, replay with the endpoint gone, dry runs, the key kept out
of everything written, and one-line usage errors."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from fake_endpoint import Answer, FakeEndpoint, careful_booker, scripted, weather_caller

from harness.cli.run import build_grid
from harness.llm.client import close_clients
from tests.helpers.cli import cli as run

KEY = "sk-test-never-written-8d1f"


@pytest.fixture(autouse=True)
def _setup(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setenv("CI", "1")  # no progress bar


def against(fake: FakeEndpoint) -> list[str]:
    """The flags that point the llm agent at ``fake``, asking model ``fake``."""
    return ["--llm-base-url", fake.base_url, "--llm-model", "fake"]


GRID = ["run", "strict_dates", "--agents", "llm", "--strategies", "is_error,collapse", "--seeds", "2"]
QUIET = ["--executor", "serial", "--no-compare", "--traces"]


def rows(out: Path) -> pd.DataFrame:
    return pd.read_parquet(out / "sessions.parquet").drop(columns=["wall_time_s"])


def test_a_recorded_run_replays_to_identical_rows_with_the_endpoint_gone_and_no_key_anywhere(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cassette = tmp_path / "model.jsonl"
    with FakeEndpoint(careful_booker) as fake:
        url = fake.base_url
        record = [*GRID, *against(fake), "--cassette", str(cassette)]
        rc, _, err = run([*record, *QUIET, "--out", str(tmp_path / "recorded")], capsys)
        assert rc == 0, err
    assert fake.headers and all(h["authorization"] == f"Bearer {KEY}" for h in fake.headers)
    close_clients()
    replay = [*GRID, "--llm-model", "fake", "--cassette", str(cassette), "--replay"]
    rc, _, err = run([*replay, *QUIET, "--out", str(tmp_path / "replayed")], capsys)
    assert rc == 0, err
    recorded, replayed = rows(tmp_path / "recorded"), rows(tmp_path / "replayed")
    pd.testing.assert_frame_equal(recorded, replayed)
    assert list(recorded["success"]) == [True, True, False, False]  # is_error x 2 seeds, collapse x 2
    assert (recorded["tokens_in"] > 0).all() and (recorded["model_latency_s"] > 0).all()
    manifest = json.loads((tmp_path / "recorded" / "manifest.json").read_text())
    llm = manifest["agent_settings"]["llm"]
    assert (llm["model"], llm["base_url"], llm["temperature"], llm["sampling_seed"]) == (
        "fake",
        url,
        0.0,
        "session",
    )
    assert llm["api_key_env"] == "OPENAI_API_KEY"
    written = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert any(p.suffix == ".jsonl" and "traces" in p.parts for p in written)
    for path in written:
        assert KEY.encode() not in path.read_bytes(), path


def test_a_replay_that_asks_what_was_not_recorded_names_the_request_and_the_batch_goes_on(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cassette = tmp_path / "model.jsonl"
    with FakeEndpoint(careful_booker) as fake:
        record = [*GRID, *against(fake), "--cassette", str(cassette)]
        assert run([*record, *QUIET, "--out", str(tmp_path / "a")], capsys)[0] == 0
    other = [*GRID, "--llm-model", "another", "--cassette", str(cassette), "--replay"]
    rc, _, err = run([*other, *QUIET, "--out", str(tmp_path / "b")], capsys)
    assert rc == 3  # the batch finished, and says that its sessions broke
    assert "4 harness errors" in err
    assert (tmp_path / "b" / "errors.log").read_text().count("=== strict_dates__llm__") == 4
    assert (
        "first harness error: strict_dates__llm__is_error__typical__0: CassetteMiss: request sha256:" in err
    )
    assert "(model turn 1, session step 1)" in err
    assert (pd.read_parquet(tmp_path / "b" / "sessions.parquet")["status"] == "harness_error").all()


def test_dry_run_prints_the_grid_and_the_model_requests_it_can_cost_and_runs_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "never"
    argv = [
        "run",
        "strict_dates",
        "--agents",
        "llm",
        "--strategies",
        "is_error,masked,collapse,escape",
        "--seeds",
        "3",
    ]
    argv += ["--dry-run"]
    rc, text, err = run(
        [*argv, "--llm-base-url", "http://127.0.0.1:9/v1", "--llm-model", "m", "--out", str(out)], capsys
    )
    assert rc == 0, err
    assert "12 sessions (1 scenarios x 1 agents x 4 strategies x 1 hosts x " in text and "x 3 seeds" in text
    # strict_dates: a 30-step budget and faults, so a fault-free baseline each too
    assert "llm: 12 sessions x their step budgets = at most 360 model requests" in text
    # one baseline per seed, whatever the strategies
    assert "at most 90 more for the fault-free baselines" in text
    assert not out.exists()


def test_concurrency_is_requests_in_flight_whatever_the_worker_processes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    grid = ["run", "flaky_weather", "--agents", "llm", "--strategies", "is_error,collapse", "--seeds", "8"]
    with FakeEndpoint(weather_caller, latency_s=0.05) as fake:
        argv = [*grid, *against(fake), "--workers", "16", "--llm-concurrency", "4"]
        assert run([*argv, *QUIET, "--out", str(tmp_path / "r")], capsys)[0] == 0
    assert fake.most_in_flight == 4  # 24 sessions and baselines, never more than 4 requests at once
    manifest = json.loads((tmp_path / "r" / "manifest.json").read_text())
    assert (manifest["llm_concurrency"], manifest["llm_concurrency_per"]) == (4, "machine")
    assert manifest["workers"] == 16  # the processes of scripted cells; the model's are threads


def test_the_default_grid_leaves_out_agents_that_call_a_model() -> None:
    grid, _ = build_grid(("strict_dates",), (), (), (), 1, ())
    assert "llm" not in grid.agents and "reader" in grid.agents


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["strict_dates", "--agents", "llm", "--llm-model", "m"], "--agents llm needs --llm-base-url URL"),
        (
            ["strict_dates", "--agents", "llm", "--llm-base-url", "http://x/v1"],
            "--agents llm needs --llm-model NAME",
        ),
        (
            ["strict_dates", "--agents", "llm", "--llm-model", "m", "--replay"],
            "--replay needs --cassette PATH",
        ),
        (
            ["strict_dates", "--agents", "reader", "--llm-model", "m"],
            "--llm-model goes with an agent that calls a model",
        ),
        (
            [
                "strict_dates",
                "--agents",
                "llm",
                "--llm-model",
                "m",
                "--replay",
                "--cassette",
                "nowhere.jsonl",
            ],
            "--cassette nowhere.jsonl: no such file to replay",
        ),
        (
            [
                "strict_dates",
                "--agents",
                "llm",
                "--llm-base-url",
                "u",
                "--llm-model",
                "m",
                "--set",
                "agent.temperature=9",
            ],
            "agent 'llm': agent.temperature=9 must be >= 0 and <= 2",
        ),
    ],
)
def test_a_usage_mistake_is_one_line_and_exit_2(
    argv: list[str],
    message: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(tmp_path)
    rc, _, err = run(["run", *argv, "--dry-run"], capsys)
    assert rc == 2 and message in err and err.count("\n") == 1 and "Traceback" not in err


def test_an_endpoint_that_gives_out_makes_harness_error_rows_and_the_batch_finishes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with FakeEndpoint(scripted(Answer("overloaded", status=503))) as fake:
        argv = [*GRID, *against(fake), "--set", "agent.max_retries=1"]
        rc, _, err = run([*argv, "--set", "agent.backoff_s=0", *QUIET, "--out", str(tmp_path / "r")], capsys)
    assert rc == 3 and "4 harness errors" in err
    assert "first harness error: strict_dates__llm__is_error__typical__0__agent.max_retries=1" in err
    assert "503 overloaded (gave up after 2 attempts)" in err
    assert json.loads((tmp_path / "r" / "manifest.json").read_text())["status"] == "complete"
    table = pd.read_parquet(tmp_path / "r" / "sessions.parquet")
    assert (table["status"] == "harness_error").all() and table["error"].str.contains("EndpointError").all()


def test_worker_processes_share_one_cassette_and_its_replay_gives_their_rows(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cassette = tmp_path / "model.jsonl"
    grid = ["run", "strict_dates", "travel_day", "--agents", "llm", "--seeds", "3", "--no-compare"]
    with FakeEndpoint(careful_booker) as fake:
        record = [*grid, *against(fake), "--cassette", str(cassette)]
        flags = ["--executor", "process", "--workers", "2", "--llm-concurrency", "2"]
        rc, _, err = run([*record, *flags, "--out", str(tmp_path / "recorded")], capsys)
        assert rc == 0, err
    replay = [*grid, "--llm-model", "fake", "--cassette", str(cassette), "--replay", "--executor", "serial"]
    rc, _, err = run([*replay, "--out", str(tmp_path / "replayed")], capsys)
    assert rc == 0 and "0 harness errors" in err, err
    pd.testing.assert_frame_equal(rows(tmp_path / "recorded"), rows(tmp_path / "replayed"))
    keys = [json.loads(line)["key"] for line in cassette.read_text().splitlines()]
    assert len(keys) == len(set(keys))  # one answer per request, whichever worker recorded it first
    manifest = json.loads((tmp_path / "recorded" / "manifest.json").read_text())
    assert (manifest["executor"], manifest["workers"]) == ("process", 2)


def test_a_swept_temperature_is_a_grid_axis_a_column_and_what_the_requests_carry(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    grid = ["run", "strict_dates", "--agents", "llm", "--strategies", "is_error", "--seeds", "1"]
    with FakeEndpoint(careful_booker) as fake:
        argv = [*grid, *against(fake), "--set", "agent.temperature=0,0.7"]
        assert run([*argv, *QUIET, "--out", str(tmp_path / "r")], capsys)[0] == 0
    assert {r["temperature"] for r in fake.requests} == {0.0, 0.7}
    assert list(pd.read_parquet(tmp_path / "r" / "sessions.parquet")["agent.temperature"]) == [0, 0.7]
    manifest = json.loads((tmp_path / "r" / "manifest.json").read_text())
    assert "temperature" not in manifest["agent_settings"]["llm"]
    assert manifest["grid"]["sweeps"] == {"agent.temperature": [0, 0.7]}


def test_harness_session_takes_the_llm_flags_run_takes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with FakeEndpoint(careful_booker) as fake:
        rc, _, err = run(
            [*GRID, *against(fake), *QUIET, "--seeds", "1", "--out", str(tmp_path / "r")], capsys
        )
        assert rc == 0, err
        one = [
            "session",
            "strict_dates",
            "--agent",
            "llm",
            "--strategy",
            "collapse",
            "--json",
            *against(fake),
        ]
        rc, out, err = run(one, capsys)
    assert rc == 0, err
    mine = json.loads(out)
    batch = rows(tmp_path / "r").set_index("strategy").loc["collapse"]
    for column in ("success", "steps", "tool_calls", "trace_hash", "tokens_in", "tokens_out"):
        assert mine[column] == batch[column], column
    rc, _, err = run(["session", "strict_dates", "--agent", "llm"], capsys)
    assert (
        rc == 2
        and err.strip()
        == "harness: error: --agent llm needs --llm-base-url URL (or --replay --cassette PATH)"
    )
