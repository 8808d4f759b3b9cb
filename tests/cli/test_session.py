"""``harness session`` and ``harness list``: output, traces, and one-line errors with exit 2."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from harness.scenarios.scenario import list_scenarios
from harness.session.simulated import ROW_COLUMNS
from scripted_agents import list_agents
from tests.helpers.cli import cli as run


def test_json_prints_one_record_with_every_column(capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, _ = run(["session", "strict_dates", "--agent", "reader", "--seed", "0", "--json"], capsys)
    assert rc == 0
    row = json.loads(out)
    assert list(row) == list(ROW_COLUMNS)
    assert row["success"] is True and row["strategy"] == "is_error" and row["host"] == "typical"


def test_the_default_output_is_a_readable_table(capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, _ = run(["session", "flaky_weather", "--agent", "naive", "--strategy", "collapse"], capsys)
    assert rc == 0
    assert "flaky_weather" in out and "success" in out and "trace_hash" in out


def test_trace_dash_prints_the_jsonl_trace_before_the_record(capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, _ = run(["session", "strict_dates", "--strategy", "collapse", "--trace", "-", "--json"], capsys)
    assert rc == 0
    lines = out.splitlines()
    record = json.loads(lines[-1])
    trace = [json.loads(line) for line in lines[:-1]]
    assert trace[0]["dir"] == "c2s" and trace[0]["msg"]["method"] == "initialize"
    assert trace[-1]["dir"] == "harness" and "end" in trace[-1]
    assert record["trace_hash"] == hashlib.sha256(("\n".join(lines[:-1]) + "\n").encode()).hexdigest()


def test_trace_file_holds_exactly_the_hashed_bytes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "t.jsonl"
    rc, out, _ = run(
        ["session", "phantom_booking", "--trace", str(path), "--json", "--host", "transparent"], capsys
    )
    assert rc == 0
    record = json.loads(out)
    assert record["host"] == "transparent"
    assert hashlib.sha256(path.read_bytes()).hexdigest() == record["trace_hash"]


BROKEN = (
    'description = "x"\ntools = ["weather"]\n[task]\n[[task.subgoals]]\n'
    'tool = "weather"\narguments = { city = "Oslo" }\n'
)


@pytest.mark.parametrize(
    ("argv", "fragment"),
    [
        (["session", "nowhere"], "unknown scenario 'nowhere'"),
        (["session", "flaky_weather", "--agent", "nobody"], "unknown agent 'nobody'"),
        (["session", "{broken}"], "faults[0].rate: must be a number between 0 and 1, got 3"),
        (["session", "{missing}"], "no such scenario file"),
        (["session", "flaky_weather", "--strategy", "ignore"], "ignore"),
        (["session", "flaky_weather", "--seed", "-3"], "-3"),
        (["session", "flaky_weather", "--trace", "{missing}/dir/t.jsonl"], "cannot write the trace"),
    ],
)
def test_user_errors_are_one_line_and_exit_2(
    argv: list[str], fragment: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    broken = tmp_path / "broken.toml"
    broken.write_text(BROKEN + '[[faults]]\nkind = "transient"\ntool = "weather"\nrate = 3\n')
    argv = [a.format(broken=broken, missing=tmp_path / "missing.toml") for a in argv]
    rc, out, err = run(argv, capsys)
    assert rc == 2
    assert fragment in err
    assert "Traceback" not in err and "Traceback" not in out
    if "{broken}" in argv or str(broken) in argv:
        assert err.strip().endswith("got 3") and err.count("\n") == 1
        assert f"{broken}: faults[0].rate:" in err or "broken.toml: faults[0].rate:" in err


def test_list_shows_every_scenario_agent_and_strategy(capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, _ = run(["list", "--json"], capsys)
    assert rc == 0
    listing = json.loads(out)
    assert list(listing["scenarios"]) == list_scenarios()
    assert all(listing["scenarios"].values())
    assert sorted(listing["agents"]) == sorted([*list_agents(), "llm"])  # the scripted five and the llm agent
    assert list(listing["strategies"]) == ["is_error", "masked", "collapse", "escape", "input_required"]
    rc, out, _ = run(["list"], capsys)
    assert rc == 0 and "travel_day" in out and "refresher" in out and "collapse" in out


def test_set_takes_scenario_overrides_and_agent_knobs(capsys: pytest.CaptureFixture[str]) -> None:
    base = ["session", "retired_fetch", "--json"]
    rc, out, _ = run(base, capsys)
    plain = json.loads(out)
    rc, out, _ = run([*base, "--set", "max_steps=2"], capsys)
    assert rc == 0 and json.loads(out)["end"] == "budget" and json.loads(out)["steps"] == 2
    rc, out, _ = run([*base, "--set", "agent.step_budget=2"], capsys)
    knob = json.loads(out)
    assert rc == 0 and knob["agent"] == "reader" and knob["trace_hash"] != plain["trace_hash"]
    rc, out, _ = run(
        [*base, "--set", "agent.backoff=random"], capsys
    )  # the reader's default: the same session
    assert rc == 0 and json.loads(out)["trace_hash"] == plain["trace_hash"]


@pytest.mark.parametrize(
    ("sets", "needle"),
    [
        (["agent.bogus=1"], "does not take agent.bogus"),
        (["max_steps=5,6"], "one session takes one value"),
        (["nope=1"], "overrides.nope: unknown override"),
        (["max_steps"], "expected KEY=V1"),
    ],
)
def test_set_mistakes_are_one_line(sets: list[str], needle: str, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["session", "retired_fetch"]
    for item in sets:
        argv += ["--set", item]
    rc, out, err = run(argv, capsys)
    assert rc == 2 and needle in err and "Traceback" not in err + out
