"""Agent knobs in whole sessions and batches: each changes behaviour where it must, the defaults
change nothing, a sweep over ``agent.*`` runs through ``harness run`` like any sweep, and a knob
an agent does not take is refused on one line before anything runs.

No test here says which setting is better overall: each shows a mechanism in a scenario built
(or chosen) so that the mechanism decides the outcome.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from helpers.template_reading import templates_read  # noqa: F401  (a fixture)

from harness.batch.grid import Cell
from harness.batch.worker import SessionOptions, run_cells
from harness.errors import UserError
from harness.faults.kinds import FAULT_KIND_TABLE
from harness.protocol import STRATEGIES
from harness.scenarios.scenario import list_scenarios, load_scenario, parse_scenario
from harness.session.registry import check_agent_params, make_agent, split_agent_params
from harness.session.row import SessionResult
from harness.session.simulated import run_session
from scripted_agents.base import ScriptedAgent
from tests.helpers.cli import cli as _cli

SCRIPTED = ("naive", "retry", "reader", "refresher")
NO_EVENTS = (
    "big_query",
    "flaky_weather",
    "garbled_feed",
    "implicit_failures",
    "phantom_booking",
    "rate_limited_search",
    "retired_fetch",
    "slow_pages",
    "strict_dates",
    "travel_day",
)
"""Shipped scenarios without tool-list events: every failure in them is a tool result."""

DECISIONS = ("steps", "tool_calls", "end", "success", "subgoals_done", "virtual_time_s", "give_ups")
"""What an agent's choices decide in a row (the texts it read are in the trace, not here)."""


def row(result: SessionResult) -> dict[str, Any]:
    out = dict(result.to_row())
    del out["wall_time_s"]
    return out


def set_defaults(agent: str) -> dict[str, Any]:
    """The agent's defaults that can be set (a None default means "unset": drawn, or no cap)."""
    made = make_agent(agent)
    assert isinstance(made, ScriptedAgent)
    return {k: v for k, v in made.knob_defaults().items() if v is not None}


# -- the defaults are today's behaviour -------------------------------------------------------


@pytest.mark.parametrize("agent", SCRIPTED)
def test_an_agent_configured_with_its_defaults_gives_the_rows_it_gives_unconfigured(agent: str) -> None:
    defaults = set_defaults(agent)
    assert defaults
    for name in list_scenarios():
        scenario = load_scenario(name)
        for strategy in STRATEGIES:
            for seed in range(2):
                plain = run_session(scenario, agent, strategy, seed)
                configured = run_session(scenario, agent, strategy, seed, agent_params=defaults)
                assert row(configured) == row(plain), (name, strategy, seed)


def test_a_step_budget_at_or_above_max_steps_never_binds() -> None:
    scenario = load_scenario("rate_limited_search")
    for seed in range(5):
        plain = run_session(scenario, "reader", "masked", seed)
        capped = run_session(
            scenario, "reader", "masked", seed, agent_params={"step_budget": scenario.max_steps}
        )
        assert row(capped) == row(plain)


# -- each knob where it decides ---------------------------------------------------------------

RATE_LIMITED_ONCE = parse_scenario(
    {
        "name": "rate_limited_once",
        "description": "One search, rate limited on its first call for 10 s; no alternative.",
        "tools": ["search"],
        "task": {"subgoals": [{"tool": "search", "arguments": {"query": "mcp", "limit": 5}}]},
        "faults": [{"kind": "rate_limited", "tool": "search", "calls": [1], "retry_after_s": 10}],
    }
)
"""Behind ``masked`` nobody reads the 10 s: three blind retries 1 s apart (with a second a step)
fall inside the block; waits of 1, 2 and 4 s do not."""


@pytest.mark.parametrize("agent", ["naive", "retry", "reader"])
def test_exponential_backoff_waits_out_a_rate_limit_that_fixed_backoff_does_not_within_the_budget(
    agent: str,
) -> None:
    knobs = {"retry_budget": 3}
    fixed = run_session(RATE_LIMITED_ONCE, agent, "masked", 0, agent_params={**knobs, "backoff": "fixed"})
    exponential = run_session(
        RATE_LIMITED_ONCE, agent, "masked", 0, agent_params={**knobs, "backoff": "exponential"}
    )
    assert fixed.faults_rate_limited == 4 and not fixed.success and fixed.end == "gave_up"
    assert exponential.faults_rate_limited == 3 and exponential.success
    # Waiting costs virtual time and steps: 3 waits of 1 s, or of 1 + 2 + 4 s, on top of 8 steps.
    assert (fixed.steps, fixed.virtual_time_s) == (8, 11.0)
    assert (exponential.steps, exponential.virtual_time_s) == (8, 15.0)


@pytest.mark.parametrize("name", NO_EVENTS)
def test_trust_ignore_makes_the_reader_decide_as_it_does_when_it_cannot_read(name: str) -> None:
    scenario = load_scenario(name)
    for seed in range(5):
        ignoring = run_session(scenario, "reader", "is_error", seed, agent_params={"trust": "ignore"})
        unreadable = run_session(scenario, "reader", "masked", seed)
        assert {c: getattr(ignoring, c) for c in DECISIONS} == {c: getattr(unreadable, c) for c in DECISIONS}


def test_trust_ignore_changes_what_the_reader_does_where_the_text_says_something() -> None:
    scenario = load_scenario("rate_limited_search")
    differ = 0
    for seed in range(10):
        follow = run_session(scenario, "reader", "is_error", seed)
        ignore = run_session(scenario, "reader", "is_error", seed, agent_params={"trust": "ignore"})
        differ += row(follow) != row(ignore)
    assert differ > 0


WEATHER_RETIRED = parse_scenario(
    {
        "name": "weather_retired",
        "description": "weather is retired on its first call; forecast serves the same.",
        "tools": ["weather", "forecast"],
        "task": {
            "subgoals": [
                {
                    "tool": "weather",
                    "arguments": {"city": "Oslo"},
                    "alternatives": [{"tool": "forecast", "arguments": {"location": "Oslo"}}],
                }
            ]
        },
        "faults": [{"kind": "permanent", "tool": "weather", "calls": [1]}],
    }
)


@pytest.mark.usefixtures("templates_read")
def test_trust_verify_re_lists_and_calls_once_more_before_it_uses_another_tool() -> None:
    follow = run_session(WEATHER_RETIRED, "reader", "is_error", 0)
    verify = run_session(WEATHER_RETIRED, "reader", "is_error", 0, agent_params={"trust": "verify"})
    assert follow.success and verify.success
    assert follow.faults_permanent == 1 and verify.faults_permanent == 2  # the check met it again
    assert verify.steps == follow.steps + 2  # tools/list, then the second call
    assert verify.tool_calls == follow.tool_calls + 1


@pytest.mark.skipif("post_commit" not in FAULT_KIND_TABLE, reason="needs the post_commit fault kind")
@pytest.mark.usefixtures("templates_read")
def test_trust_verify_reads_back_a_write_said_not_to_be_stored_and_stores_it_once() -> None:
    scenario = parse_scenario(
        {
            "name": "stored_after_all",
            "description": "The booking is stored, then the call fails saying nothing was stored.",
            "tools": ["book", "list_bookings"],
            "task": {
                "subgoals": [
                    {
                        "tool": "book",
                        "arguments": {"item": "hotel room", "date": "2025-06-01"},
                        "verify": {"tool": "list_bookings", "arguments": {}},
                    }
                ]
            },
            "faults": [{"kind": "post_commit", "tool": "book", "calls": [1]}],
        }
    )
    follow = run_session(scenario, "reader", "is_error", 0)
    verify = run_session(scenario, "reader", "is_error", 0, agent_params={"trust": "verify"})
    assert follow.duplicated_writes > 0 and not follow.success
    assert verify.duplicated_writes == 0 and verify.success


def test_relist_on_notification_picks_up_a_changed_schema_that_never_misses() -> None:
    # weather_v2 announces its new schema with list_changed.
    for seed in range(5):
        never = run_session("weather_v2", "reader", "is_error", seed)
        noticed = run_session(
            "weather_v2", "reader", "is_error", seed, agent_params={"relist": "on_notification"}
        )
        assert never.stale_tool_calls > 0 and not never.success
        assert noticed.stale_tool_calls == 0 and noticed.success


@pytest.mark.usefixtures("templates_read")
def test_relist_on_error_finds_a_tool_added_after_the_only_one_failed() -> None:
    # new_tool: weather dies; forecast appears (announced while the agent is busy failing).
    for seed in range(5):
        for knobs, works in (
            ({}, False),
            ({"relist": "on_notification"}, False),
            ({"relist": "on_error"}, True),
        ):
            assert run_session("new_tool", "reader", "is_error", seed, agent_params=knobs).success is works
        refresher = run_session("new_tool", "refresher", "is_error", seed, agent_params={"relist": "never"})
        assert not refresher.success and refresher.end == "gave_up"


def test_step_budget_ends_the_episode_early() -> None:
    scenario = load_scenario("rate_limited_search")  # three subgoals: at least four steps
    for seed in range(5):
        plain = run_session(scenario, "reader", "is_error", seed)
        capped = run_session(scenario, "reader", "is_error", seed, agent_params={"step_budget": 2})
        assert plain.steps >= 4 and plain.end == "finished"
        assert capped.steps == 3 and capped.end == "gave_up" and capped.subgoals_done <= 2


def test_the_baseline_run_uses_the_same_knobs() -> None:
    # A step budget too small for the task fails the fault-free run too: no recovery to measure.
    scenario = load_scenario("rate_limited_search")
    capped = run_session(scenario, "reader", "is_error", 0, agent_params={"step_budget": 2})
    assert capped.baseline_success is False and capped.recovery_opportunities == 0
    plain = run_session(scenario, "reader", "is_error", 0)
    assert plain.baseline_success is True


def test_an_agent_object_is_configured_too() -> None:
    agent = make_agent("reader")
    result = run_session("rate_limited_search", agent, "is_error", 0, agent_params={"step_budget": 3})
    assert result.steps == 4 and result.agent == "reader"


# -- plumbing: registry, worker, harness run ---------------------------------------------------


def test_split_agent_params_keeps_the_scenario_overrides_in_order() -> None:
    knobs, rest = split_agent_params(
        (("faults.rate", 0.2), ("agent.backoff", "fixed"), ("max_steps", 20), ("agent.trust", "verify"))
    )
    assert knobs == {"backoff": "fixed", "trust": "verify"}
    assert rest == (("faults.rate", 0.2), ("max_steps", 20))


def test_check_agent_params_takes_either_spelling_and_refuses_on_one_line() -> None:
    check_agent_params("reader", {"agent.backoff": "fixed", "trust": "verify"})
    check_agent_params("oracle", {})
    with pytest.raises(UserError) as info:
        check_agent_params("oracle", {"agent.backoff": "fixed"})
    assert str(info.value) == "agent 'oracle' does not take agent.backoff (it takes no knobs)"
    stubborn = "docs/examples/stubborn.py:Stubborn"  # a user's agent without knobs
    root = Path(__file__).resolve().parents[2]
    with pytest.raises(UserError, match=r"agent 'stubborn' does not take agent\.trust \(it takes no knobs\)"):
        check_agent_params(str(root / stubborn), {"trust": "verify"})


def test_a_worker_gives_agent_knobs_to_the_agent_and_the_rest_to_the_scenario() -> None:
    params = (("faults.rate", 1.0), ("agent.step_budget", 2))
    cell = Cell("rate_limited_search", "reader", "is_error", "typical", 0, params)
    (outcome,) = run_cells([cell], SessionOptions())
    assert outcome.error is None
    got = outcome.row
    assert got["agent"] == "reader" and got["agent.step_budget"] == 2 and got["faults.rate"] == 1.0
    assert got["steps"] == 3 and got["end"] == "gave_up"
    direct = run_session(
        load_scenario("rate_limited_search").with_overrides({"faults.rate": 1.0}),
        "reader",
        "is_error",
        0,
        agent_params={"step_budget": 2},
    )
    assert {k: got[k] for k in row(direct)} == row(direct)


@pytest.mark.slow
def test_a_backoff_sweep_through_harness_run_records_its_column_under_the_process_executor(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    common = ["rate_limited_search", "flaky_weather", "--strategies", "is_error,masked", "--seeds", "3"]
    common += ["--executor", "process", "--workers", "2"]
    swept = tmp_path / "swept"
    sweep = ["--agents", "retry,reader", "--set", "agent.backoff=fixed,exponential"]
    by = ["--by", "agent,agent.backoff"]
    rc, out, err = _cli(["run", *common, *sweep, *by, "--out", str(swept)], capsys)
    assert rc == 0, err
    assert "agent.backoff" in out  # the comparison groups by it
    df = pd.read_parquet(swept / "sessions.parquet")
    assert len(df) == 2 * 2 * 2 * 3 * 2 and (df.status == "ok").all()
    assert set(df["agent.backoff"]) == {"fixed", "exponential"}
    assert set(df["agent"]) == {"retry", "reader"}
    # The reader's own default, swept, gives the rows of no sweep at all.
    plain, default = tmp_path / "plain", tmp_path / "default"
    rc, _, err = _cli(["run", *common, "--agents", "reader", "--out", str(plain), "--no-compare"], capsys)
    assert rc == 0, err
    own = ["--agents", "reader", "--set", "agent.backoff=random"]
    rc, _, err = _cli(["run", *common, *own, "--out", str(default), "--no-compare"], capsys)
    assert rc == 0, err
    a = pd.read_parquet(plain / "sessions.parquet").drop(columns=["wall_time_s"])
    b = pd.read_parquet(default / "sessions.parquet").drop(columns=["wall_time_s", "agent.backoff"])
    pd.testing.assert_frame_equal(a, b)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["--agents", "oracle", "--set", "agent.backoff=fixed"],
            "agent 'oracle' does not take agent.backoff",
        ),
        (["--agents", "retry", "--set", "agent.trust=verify"], "agent 'retry' does not take agent.trust"),
        (
            ["--agents", "reader", "--set", "agent.backoff=slow"],
            "agent 'reader': agent.backoff must be one of",
        ),
        (["--set", "agent.retry_budget=2"], "agent 'oracle' does not take agent.retry_budget"),
    ],
)
def test_a_knob_an_agent_does_not_take_is_one_line_before_anything_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    out = tmp_path / "never"
    rc, _, err = _cli(["run", "flaky_weather", "--seeds", "1", "--out", str(out), *args], capsys)
    assert rc == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], err
    assert not out.exists()
