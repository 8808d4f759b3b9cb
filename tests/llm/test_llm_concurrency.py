"""Model sessions by requests in flight: rows that do not depend on what ran beside them, each
fault-free baseline asked once per key whatever the workers, a budget that stops a run cleanly
and a resume that finishes it, a 429 that pauses every request to its endpoint, and the cost in
view (progress, the summary line, the exact count of a replay)."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from fake_endpoint import Answer, FakeEndpoint, weather_caller

from harness.llm.cassette import Cassette, canonical
from harness.llm.client import Halted, Meter, Reply
from tests.helpers.cli import cli as run

GRID = ["run", "flaky_weather", "--agents", "llm", "--strategies", "is_error,collapse"]
QUIET = ["--no-compare", "--traces"]
TOKENS_PER_REQUEST = 100
"""What the fake endpoint reports for every request (``completion``'s default prompt tokens)."""
REQUESTS_PER_BASELINE = 4
"""flaky_weather without its faults: the weather of three cities, then the answer."""


@pytest.fixture(autouse=True)
def _setup(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CI", "1")  # no progress bar: progress is printed as lines


def against(fake: FakeEndpoint) -> list[str]:
    return ["--llm-base-url", fake.base_url, "--llm-model", "fake"]


def rows(out: Path, *drop: str) -> pd.DataFrame:
    return pd.read_parquet(out / "sessions.parquet").drop(columns=["wall_time_s", *drop])


def traces(out: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted((out / "traces").glob("*.jsonl"))}


def test_a_sessions_row_and_trace_do_not_depend_on_what_ran_beside_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cassette = tmp_path / "model.jsonl"
    grid = [*GRID, "--seeds", "12", *QUIET]
    with FakeEndpoint(weather_caller, latency_s=0.02) as fake:
        wide = [*grid, *against(fake), "--cassette", str(cassette), "--llm-concurrency", "16"]
        rc, _, err = run([*wide, "--out", str(tmp_path / "recorded-16")], capsys)
        assert rc == 0, err
        assert fake.most_in_flight > 8  # they did run side by side
        one = [*grid, *against(fake), "--llm-concurrency", "1", "--executor", "serial"]
        rc, _, err = run([*one, "--out", str(tmp_path / "alone")], capsys)  # no cassette: asked again
        assert rc == 0, err
    replay = [*grid, "--llm-model", "fake", "--cassette", str(cassette), "--replay"]
    for name, flags in (("replay-1", ["--llm-concurrency", "1"]), ("replay-32", ["--llm-concurrency", "32"])):
        rc, _, err = run([*replay, *flags, "--out", str(tmp_path / name)], capsys)
        assert rc == 0 and "0 harness errors" in err, err
    recorded = rows(tmp_path / "recorded-16")
    assert len(recorded) == 24 and (recorded["status"] == "ok").all()
    for name in ("replay-1", "replay-32"):  # every column, the recorded latency included
        pd.testing.assert_frame_equal(recorded, rows(tmp_path / name))
        assert traces(tmp_path / name) == traces(tmp_path / "recorded-16")
    # Asked of the endpoint one at a time, with no cassette: the same rows but for the seconds
    # the endpoint took, the same traces.
    pd.testing.assert_frame_equal(
        recorded.drop(columns=["model_latency_s"]), rows(tmp_path / "alone", "model_latency_s")
    )
    assert traces(tmp_path / "alone") == traces(tmp_path / "recorded-16")


@pytest.mark.parametrize("workers", [1, 2, 16])
def test_each_fault_free_baseline_is_asked_once_per_key_whatever_the_workers(
    workers: int, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    seeds = 6
    grid = ["run", "flaky_weather", "--agents", "llm,reader", "--strategies", "is_error,masked,collapse"]
    flags = ["--seeds", str(seeds), "--workers", str(workers), "--llm-concurrency", "8", "--no-compare"]
    with FakeEndpoint(weather_caller) as fake:
        rc, _, err = run([*grid, *flags, *against(fake), "--out", str(tmp_path / "r")], capsys)
        assert rc == 0, err
    table = pd.read_parquet(tmp_path / "r" / "sessions.parquet")
    model = table[table["agent"] == "llm"]
    # The unique requests the grid needs: each session's own, and one baseline per key (seed)
    sessions = int(model["tokens_in"].sum()) // TOKENS_PER_REQUEST
    assert len(fake.requests) == sessions + seeds * REQUESTS_PER_BASELINE
    # each baseline's cost is on the row of its key's first strategy, and on no other
    charged = model[model["baseline_tokens_in"] > 0]
    assert list(charged["strategy"]) == ["is_error"] * seeds
    assert (charged["baseline_tokens_in"] == REQUESTS_PER_BASELINE * TOKENS_PER_REQUEST).all()
    assert int(model["baseline_tokens_in"].sum()) // TOKENS_PER_REQUEST == seeds * REQUESTS_PER_BASELINE
    assert (table.loc[table["agent"] == "reader", "baseline_tokens_in"] == 0).all()
    assert f"fault-free baselines: {seeds} run once each, {seeds * REQUESTS_PER_BASELINE} requests" in err
    recorded = pd.read_parquet(tmp_path / "r" / "baselines.parquet")
    assert len(recorded) == seeds and recorded["requests"].sum() == seeds * REQUESTS_PER_BASELINE


@pytest.mark.parametrize("workers", [1, 2, 16])
def test_with_a_cassette_no_request_is_asked_twice_whatever_the_workers(
    workers: int, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = [*GRID, "--seeds", "8", "--workers", str(workers), "--llm-concurrency", "16", "--no-compare"]
    with FakeEndpoint(weather_caller, latency_s=0.02) as fake:
        flags = ["--cassette", str(tmp_path / "c.jsonl"), "--out", str(tmp_path / "r")]
        rc, _, err = run([*argv, *against(fake), *flags], capsys)
        assert rc == 0, err
    bodies = {canonical(r) for r in fake.requests}
    assert len(fake.requests) == len(bodies)  # sessions at the same point at once asked it once


def test_a_request_budget_stops_the_run_cleanly_and_resume_finishes_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "r"
    argv = [*GRID, "--seeds", "10", "--llm-concurrency", "4", *QUIET, "--out", str(out)]
    with FakeEndpoint(weather_caller, latency_s=0.02) as fake:
        rc, _, err = run([*argv, *against(fake), "--max-requests", "70"], capsys)
        assert rc == 4, err
        assert len(fake.requests) == 70  # not one more was sent
        assert "stopped: --max-requests 70 reached" in err and f"harness run --resume --out {out}" in err
        manifest = json.loads((out / "manifest.json").read_text())
        assert (manifest["status"], manifest["stopped"]) == ("interrupted", "--max-requests 70 reached")
        kept = pd.concat(pd.read_parquet(p) for p in sorted((out / "chunks").glob("*.parquet")))
        # what was kept finished whole; what was cut short left nothing: no row, no trace, no error
        assert 0 < len(kept) < 20 and (kept["status"] == "ok").all()
        assert len(list((out / "traces").glob("*.jsonl"))) == len(kept)
        assert not (out / "errors.log").exists()
        asked = len(fake.requests)
        rc, _, err = run(["run", "--resume", "--out", str(out), "--no-compare"], capsys)
        assert rc == 0, err
        resumed = len(fake.requests) - asked
        rc, _, err = run(
            [*GRID, "--seeds", "10", *QUIET, *against(fake), "--out", str(tmp_path / "whole")], capsys
        )
        assert rc == 0, err
    whole = rows(tmp_path / "whole", "model_latency_s")
    pd.testing.assert_frame_equal(rows(out, "model_latency_s"), whole)
    assert traces(out) == traces(tmp_path / "whole")
    # the recorded baselines were reused: the two parts asked what the whole run asked, plus what
    # the sessions cut short had asked before the budget stopped them
    needed = len(fake.requests) - asked - resumed
    assert needed <= asked + resumed <= needed + 4 * 7
    assert json.loads((out / "manifest.json").read_text())["model_usage"]["baselines_reused"] > 0


def test_a_token_budget_stops_before_the_next_request(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = [*GRID, "--seeds", "10", "--llm-concurrency", "1", "--no-compare", "--out", str(tmp_path / "r")]
    with FakeEndpoint(weather_caller) as fake:
        rc, _, err = run([*argv, *against(fake), "--max-tokens", "1000"], capsys)
    assert rc == 4 and "stopped: --max-tokens 1000 reached" in err, err
    assert len(fake.requests) == 10  # 110 tokens each: the tenth passes 1,000, and none is sent after


def test_a_429_pauses_every_request_to_the_endpoint_not_just_its_session(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    limited_at = 20
    seen = [0]

    def policy(request: dict[str, Any]) -> Answer | dict[str, Any]:
        seen[0] += 1
        if seen[0] == limited_at:
            return Answer({"error": "rate limited"}, status=429, headers={"Retry-After": "1"})
        return weather_caller(request)

    argv = [*GRID, "--seeds", "8", "--llm-concurrency", "8", "--no-compare", "--out", str(tmp_path / "r")]
    latency = 0.05
    with FakeEndpoint(policy, latency_s=latency) as fake:
        rc, _, err = run([*argv, *against(fake)], capsys)
    assert rc == 0 and "0 harness errors" in err, err
    answered = fake.arrived[limited_at - 1] + latency  # the 429 left the endpoint then
    during = [t for t in fake.arrived if answered + 0.15 < t < answered + 0.85]
    assert during == []  # eight sessions in flight, and none asked while the endpoint asked for quiet
    assert any(answered + 0.85 <= t < answered + 1.5 for t in fake.arrived)  # then they all went on


def test_progress_and_the_summary_show_requests_tokens_and_what_is_left(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with FakeEndpoint(weather_caller) as fake:
        argv = [*GRID, "--seeds", "10", *against(fake), "--no-compare", "--out", str(tmp_path / "r")]
        rc, _, err = run(argv, capsys)
    assert rc == 0, err
    lines = [line for line in err.splitlines() if "sessions (" in line and "; model: " in line]
    assert len(lines) == 10  # a line each tenth of the run
    assert "requests left" in lines[0] and "tok/s" in lines[0] and " tokens, " in lines[0]
    assert lines[-1].endswith("~0 requests left")
    total = len(fake.requests)
    assert f"harness run: model: {total} requests sent, 0 answered from the cassette" in err


def test_a_dry_run_of_a_replay_counts_its_requests_exactly(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cassette = tmp_path / "c.jsonl"
    grid = [*GRID, "--seeds", "5"]
    with FakeEndpoint(weather_caller) as fake:
        rc, _, err = run(
            [*grid, *against(fake), "--cassette", str(cassette), "--out", str(tmp_path / "r")], capsys
        )
        assert rc == 0, err
    table = pd.read_parquet(tmp_path / "r" / "sessions.parquet")
    sessions = int(table["tokens_in"].sum()) // TOKENS_PER_REQUEST
    baselines = int(table["baseline_tokens_in"].sum()) // TOKENS_PER_REQUEST
    replay = [*grid, "--llm-model", "fake", "--cassette", str(cassette), "--replay", "--dry-run"]
    rc, text, err = run(replay, capsys)
    assert rc == 0, err
    assert (
        f"llm: a replay asks exactly {sessions + baselines} model requests of the cassette: "
        f"{sessions} for 10 sessions and {baselines} for 5 fault-free baselines" in text
    )
    assert "does not hold" not in text
    rc, text, _ = run([*GRID, "--seeds", "6", *replay[len(grid) :]], capsys)  # seed 5 was never recorded
    assert rc == 0 and "3 sessions or baselines ask a request the cassette does not hold" in text


@pytest.mark.slow
def test_on_dask_concurrency_is_per_worker_and_the_rows_are_the_same(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("distributed")
    cassette = tmp_path / "c.jsonl"
    grid = [*GRID, "--seeds", "6", *QUIET]
    with FakeEndpoint(weather_caller, latency_s=0.02) as fake:
        flags = [
            "--executor",
            "dask",
            "--workers",
            "2",
            "--llm-concurrency",
            "3",
            "--cassette",
            str(cassette),
        ]
        rc, _, err = run([*grid, *against(fake), *flags, "--out", str(tmp_path / "dask")], capsys)
        assert rc == 0 and "0 harness errors" in err, err
    manifest = json.loads((tmp_path / "dask" / "manifest.json").read_text())
    assert (manifest["llm_concurrency"], manifest["llm_concurrency_per"]) == (3, "dask worker")
    replay = [*grid, "--llm-model", "fake", "--cassette", str(cassette), "--replay", "--executor", "serial"]
    rc, _, err = run([*replay, "--out", str(tmp_path / "serial")], capsys)
    assert rc == 0, err
    pd.testing.assert_frame_equal(rows(tmp_path / "dask"), rows(tmp_path / "serial"))
    assert len(pd.read_parquet(tmp_path / "dask" / "baselines.parquet")) == 6


def test_a_budget_is_exact_however_many_threads_ask_at_once() -> None:
    meter = Meter()
    meter.limit(max_requests=50)
    sent: list[int] = []
    halted: list[int] = []

    def ask() -> None:
        for _ in range(20):
            try:
                meter.admit()
            except Halted:
                halted.append(1)
                return
            sent.append(1)

    threads = [threading.Thread(target=ask) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    # 50 sent, not one more; every thread that wanted more was refused (at most two got their 20)
    assert len(sent) == 50 and 6 <= len(halted) <= 8 and meter.stopped == "--max-requests 50 reached"
    meter.clear()
    meter.admit()  # a cleared meter sends again


def test_threads_asking_the_same_new_request_at_once_ask_the_endpoint_once(tmp_path: Path) -> None:
    cassette = Cassette(tmp_path / "c.jsonl")
    fetched: list[int] = []
    release = threading.Event()

    def fetch() -> Reply:
        fetched.append(1)
        release.wait(2.0)
        return Reply({"choices": [{"message": {"role": "assistant", "content": "ok"}}]}, 0.1, 1, 10, 2)

    answers: list[tuple[Reply, bool]] = []
    threads = [
        threading.Thread(target=lambda: answers.append(cassette.ask("k", {"q": 1}, fetch))) for _ in range(6)
    ]
    for t in threads:
        t.start()
    release.set()
    for t in threads:
        t.join()
    assert len(fetched) == 1 and len(answers) == 6
    assert sorted(asked for _, asked in answers) == [False] * 5 + [True]
    assert len((tmp_path / "c.jsonl").read_text().splitlines()) == 1


def test_a_thread_that_looked_before_another_recorded_the_answer_does_not_ask_again(tmp_path: Path) -> None:
    # The interleaving the test above can only hit by chance, forced: "late" looks (nothing yet),
    # "first" asks, records and leaves, and only then does "late" go on. It must take the answer
    # "first" recorded, not ask the endpoint a second time.
    looked, first_done = threading.Event(), threading.Event()

    class Interleaved(Cassette):
        def get(self, key: str) -> Reply | None:
            reply = super().get(key)
            if threading.current_thread().name == "late" and not looked.is_set():
                looked.set()
                first_done.wait(5.0)
            return reply

    cassette = Interleaved(tmp_path / "c.jsonl")
    fetched: list[str] = []

    def fetch() -> Reply:
        fetched.append(threading.current_thread().name)
        return Reply({"choices": [{"message": {"role": "assistant", "content": "ok"}}]}, 0.1, 1, 10, 2)

    answers: dict[str, bool] = {}

    def ask() -> None:
        answers[threading.current_thread().name] = cassette.ask("k", {"q": 1}, fetch)[1]
        if threading.current_thread().name == "first":
            first_done.set()

    late = threading.Thread(target=ask, name="late")
    late.start()
    assert looked.wait(5.0)
    first = threading.Thread(target=ask, name="first")
    first.start()
    first.join()
    late.join()
    assert fetched == ["first"] and answers == {"first": True, "late": False}
