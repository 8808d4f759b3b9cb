"""Sessions end to end: determinism, what the trace shows, the record, agents against the ground truth."""

from __future__ import annotations

import hashlib
import io
import itertools
import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from harness.errors import UserError
from harness.faults.kinds import FAULT_KINDS
from harness.protocol.errors import STANDARD_CODES
from harness.protocol.strategies import STRATEGIES
from harness.scenarios.scenario import (
    EVENT_KINDS,
    Scenario,
    Task,
    list_scenarios,
    load_scenario,
    parse_scenario,
)
from harness.seeding import derive_seed
from harness.session.agent import (
    Action,
    Agent,
    CallTool,
    Finish,
    GiveUp,
    Observation,
    RPCErrorObservation,
    ToolResult,
)
from harness.session.simulated import ROW_COLUMNS, SessionResult, run_session
from harness.sim.catalogue import CATALOGUE
from scripted_agents import list_agents, make
from scripted_agents.reader import ReaderAgent

SHIPPED = list_scenarios()
READABLE = ("is_error", "masked", "collapse")
"""The strategies under which the server lives on (under escape it dies with the first fault)."""


def descriptor(name: str) -> dict[str, Any]:
    spec = CATALOGUE[name]
    return {"name": name, "inputSchema": spec.schema, "annotations": spec.annotations}


def traced(
    scenario: str | Scenario, agent: str | Agent, strategy: str, seed: int, **kw: Any
) -> tuple[SessionResult, bytes]:
    buf = io.BytesIO()
    result = run_session(scenario, agent, strategy, seed, trace=buf, **kw)
    return result, buf.getvalue()


def harness_lines(trace: bytes) -> list[dict[str, Any]]:
    lines = [json.loads(line) for line in trace.splitlines()]
    return [line for line in lines if line["dir"] == "harness"]


def stable(result: SessionResult) -> dict[str, Any]:
    row = result.to_row()
    row.pop("wall_time_s")
    return row


# -- the record ----------------------------------------------------------------------------


def test_the_columns_are_fixed_and_include_one_per_fault_kind_and_rpc_code() -> None:
    for kind in FAULT_KINDS:
        assert f"faults_{kind}" in ROW_COLUMNS
    for code in STANDARD_CODES:
        assert f"errors_rpc_{-code}" in ROW_COLUMNS
    assert len(set(ROW_COLUMNS)) == len(ROW_COLUMNS)
    assert {"scenario", "agent", "strategy", "host", "seed", "status", "success", "wall_time_s"} <= set(
        ROW_COLUMNS
    )
    assert {"trace_hash", "fault_schedule_hash", "recover_steps", "steps_to_recover_mean"} <= set(ROW_COLUMNS)


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_every_session_gives_every_column_whatever_happened(strategy: str) -> None:
    row = run_session("travel_day", "reader", strategy, 3).to_row()
    assert list(row) == list(ROW_COLUMNS)
    assert isinstance(row["recover_steps"], list)
    json.dumps({k: v for k, v in row.items() if not (isinstance(v, float) and math.isnan(v))})


def test_the_trace_hash_is_the_sha256_of_the_trace_bytes() -> None:
    result, trace = traced("flaky_weather", "reader", "is_error", 0)
    assert result.trace_hash == hashlib.sha256(trace).hexdigest()
    assert run_session("flaky_weather", "reader", "is_error", 0).trace_hash == result.trace_hash


# -- determinism -----------------------------------------------------------------------------


@pytest.mark.parametrize("scenario", SHIPPED)
def test_the_same_inputs_give_byte_identical_traces_and_records(scenario: str) -> None:
    # Every strategy in both eras: a stateless input_required session puts a sealed requestState
    # on the wire, whose key once was random per server (two runs, two traces).
    for agent, strategy, era in itertools.product(
        ("reader", "oracle"), STRATEGIES, ("handshake", "stateless")
    ):
        a, trace_a = traced(scenario, agent, strategy, 11, era=era)
        b, trace_b = traced(scenario, agent, strategy, 11, era=era)
        assert trace_a == trace_b, (agent, strategy, era)
        assert stable(a) == stable(b)


@pytest.mark.parametrize("scenario", SHIPPED)
def test_agents_and_strategies_share_one_fault_schedule_per_scenario_and_seed(scenario: str) -> None:
    for seed in (0, 5):
        hashes = {
            run_session(scenario, agent, s, seed, host=h).fault_schedule_hash
            for agent in list_agents()
            for s in STRATEGIES
            for h in ("typical", "transparent")
        }
        assert len(hashes) == 1, (scenario, seed)


@pytest.mark.parametrize(
    "scenario", [n for n in SHIPPED if any(0 < (r.rate or 0) < 1 for r in load_scenario(n).faults)]
)
def test_different_seeds_give_different_schedules_and_traces(scenario: str) -> None:
    runs = [traced(scenario, "reader", "is_error", seed) for seed in range(4)]
    assert len({r.fault_schedule_hash for r, _ in runs}) == 4
    assert len({t for _, t in runs}) > 1


def test_the_trace_has_no_wall_clock_values() -> None:
    _, trace = traced("slow_pages", "reader", "is_error", 2)
    for line in harness_lines(trace):
        if "clock" in line:
            assert float(line["clock"]).is_integer()  # virtual seconds: steps, waits, 30 s hangs


# -- what a trace shows ----------------------------------------------------------------------

FAULT_SHOWCASE = {
    "transient": "flaky_weather",
    "rate_limited": "rate_limited_search",
    "permanent": "retired_fetch",
    "bad_argument": "strict_dates",
    "too_large": "big_query",
    "timeout": "slow_pages",
    "malformed": "garbled_feed",
    "silent": "phantom_booking",
}
"""A shipped scenario for each kind of issue 17; those of issue 18 ship in none (the default run
keeps its rows), and :func:`one_fault` builds one for each."""

ISSUE_18_TASKS: dict[str, tuple[str, dict[str, Any]]] = {
    "futile_outage": ("weather", {"city": "Oslo"}),
    "post_commit": ("book", {"item": "hotel room", "date": "2025-06-01"}),
    "silent_noop": ("book", {"item": "hotel room", "date": "2025-06-01"}),
    "stale": ("weather", {"city": "Oslo"}),
    "wrong_units": ("convert", {"amount": 100, "source": "USD", "target": "EUR"}),
    "partial": ("search", {"query": "mcp"}),
    "schema_drift": ("weather", {"city": "Oslo"}),
}


def one_fault(kind: str) -> Scenario:
    """A one-subgoal task whose tool a ``kind`` fault hits on its first call."""
    tool, arguments = ISSUE_18_TASKS[kind]
    return parse_scenario(
        {
            "description": f"One {kind} fault on the first call.",
            "tools": [tool],
            "task": {"subgoals": [{"tool": tool, "arguments": arguments}]},
            "faults": [{"kind": kind, "tool": tool, "calls": [1]}],
        }
    )


@pytest.mark.parametrize("kind", FAULT_KINDS)
def test_every_fault_kind_shows_up_in_a_trace_and_in_the_record(kind: str) -> None:
    scenario = FAULT_SHOWCASE[kind] if kind in FAULT_SHOWCASE else one_fault(kind)
    for seed in range(10):
        result, trace = traced(scenario, "reader", "is_error", seed)
        faults = [line["fault"] for line in harness_lines(trace) if "fault" in line]
        if any(f["kind"] == kind for f in faults):
            assert getattr(result, f"faults_{kind}") == sum(f["kind"] == kind for f in faults)
            return
    pytest.fail(f"no {kind} fault in 10 seeds of {scenario}")


EVENT_SHOWCASE = {
    "add_tool": "new_tool",
    "remove_tool": "deprecated_search",
    "change_schema": "weather_v2",
    "revoke": "revoked_db",
}


@pytest.mark.parametrize("kind", EVENT_KINDS)
def test_every_event_shows_up_in_a_trace_with_its_notification_if_any(kind: str) -> None:
    scenario = EVENT_SHOWCASE[kind]
    sc = load_scenario(scenario)
    result, trace = traced(scenario, "refresher", "is_error", 0)
    events = [line["event"] for line in harness_lines(trace) if "event" in line]
    assert [e["kind"] for e in events] == [kind]
    notified = b"notifications/tools/list_changed" in trace
    assert notified == sc.events[0].notify
    assert result.list_changed_seen == int(sc.events[0].notify)


def test_a_silent_migration_is_seen_only_by_re_listing() -> None:
    _, trace = traced("silent_migration", "refresher", "is_error", 0)
    assert b"list_changed" not in trace
    assert b'"q":' in trace  # the refreshed schema was adopted


# -- strategies, hosts, and the ground truth ------------------------------------------------


def test_escape_wedges_the_session_and_the_record_is_complete() -> None:
    result, trace = traced("retired_fetch", "reader", "escape", 0)
    assert result.status == "wedged" and result.end == "wedged" and not result.success
    assert result.errors_transport == 1 and result.faults_permanent == 1
    assert list(result.to_row()) == list(ROW_COLUMNS)
    assert harness_lines(trace)[-1]["end"] == "wedged"


def test_collapse_carries_the_reason_on_the_wire_but_a_typical_host_drops_it() -> None:
    typical, trace = traced("strict_dates", "reader", "collapse", 0)
    assert b"expected form '2025-03-14'" in trace  # on the wire, in the -32603 message
    hidden = [line["host"] for line in harness_lines(trace) if "host" in line]
    assert hidden and all(h["code"] == -32603 and h["message"] is None for h in hidden)
    assert typical.errors_rpc_32603 >= 1
    _, shown = traced("strict_dates", "reader", "collapse", 0, host="transparent")
    seen = [line["host"] for line in harness_lines(shown) if "host" in line]
    assert seen and all("expected form '2025-03-14'" in h["message"] for h in seen)


class _Recorder(Agent):
    """Wraps an agent and records every (observation, action) pair it saw and chose."""

    omniscient = False

    def __init__(self, inner: Agent) -> None:
        self.inner = inner
        self.name = inner.name
        self.log: list[tuple[Observation, Action]] = []

    def reset(self, task: Task, tools: Sequence[dict[str, Any]], seed: int) -> None:
        self.log = []
        self.inner.reset(task, tools, seed)

    def act(self, observation: Observation) -> Action:
        action = self.inner.act(observation)
        self.log.append((observation, action))
        return action


def recorded(scenario: str | Scenario, agent: str, strategy: str, seed: int, **kw: Any) -> _Recorder:
    recorder = _Recorder(make(agent))
    run_session(scenario, recorder, strategy, seed, **kw)
    return recorder


def test_is_error_carries_the_reason_to_the_agent() -> None:
    log = recorded("strict_dates", "reader", "is_error", 0).log
    failed = [i for i, (obs, _) in enumerate(log) if isinstance(obs, ToolResult) and obs.is_error]
    assert failed
    obs = log[failed[0]][0]
    assert isinstance(obs, ToolResult) and "expected form '2025-03-14'" in obs.text


@pytest.mark.parametrize("scenario", SHIPPED)
def test_a_masked_failure_carries_no_reason_to_the_agent(scenario: str) -> None:
    for seed in range(3):
        for agent in ("reader", "refresher"):
            for obs, _ in recorded(scenario, agent, "masked", seed).log:
                if isinstance(obs, ToolResult) and obs.is_error:
                    if obs.text.startswith("ERROR: invalid arguments for tool"):
                        continue  # the protocol's own input validation (SEP-1303), not a tool failure
                    assert obs.text == f"Error executing tool {obs.tool}"


@pytest.mark.parametrize("scenario", SHIPPED)
def test_collapse_behind_a_typical_host_carries_no_message_to_the_agent(scenario: str) -> None:
    for seed in range(3):
        for obs, _ in recorded(scenario, "reader", "collapse", seed).log:
            if isinstance(obs, RPCErrorObservation):
                assert obs.message is None


WIRE_COLUMNS = {
    "strategy", "trace_hash", "wall_time_s", "errors_is_error", "errors_rpc_other", "messages_seen",
} | {f"errors_rpc_{-code}" for code in STANDARD_CODES}  # fmt: skip
"""What the strategy changes by definition: the column naming it, what crossed the wire (and so
which error texts reached the agent), the clock."""


def outcome_row(result: SessionResult) -> dict[str, Any]:
    """The row without the columns a strategy changes by definition (NaN made comparable)."""
    row = {k: v for k, v in result.to_row().items() if k not in WIRE_COLUMNS}
    return {k: "nan" if isinstance(v, float) and math.isnan(v) else v for k, v in row.items()}


@pytest.mark.parametrize("scenario", SHIPPED)
@pytest.mark.parametrize("agent", ["naive", "retry", "oracle"])
def test_a_strategy_cannot_change_what_happens_to_an_agent_that_never_reads(
    scenario: str, agent: str
) -> None:
    for seed in range(3):
        for host in ("typical", "transparent"):
            rows = [outcome_row(run_session(scenario, agent, s, seed, host=host)) for s in READABLE]
            assert rows[1:] == rows[:-1], (scenario, agent, seed, host)


def test_with_no_reason_under_any_strategy_the_reader_acts_the_same_under_each(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A mechanism, not a reading: where what the reader reads in a text is nothing (here every
    # text is read so), is_error, masked and collapse give it the same information, and it acts
    # the same. (What the reader makes of "request failed" is the reader's business.)
    import scripted_agents.base as base
    from harness.reading import Reading

    monkeypatch.setattr(base, "read_memo", lambda *a, **k: Reading("unknown", None, None, None, False, None))
    for seed in range(6):
        rows = [outcome_row(run_session("implicit_failures", "reader", s, seed)) for s in READABLE]
        assert rows[1:] == rows[:-1], seed


@pytest.mark.parametrize("agent", [a for a in list_agents() if a != "oracle"])
def test_an_agent_given_the_same_observations_takes_the_same_actions(agent: str) -> None:
    sc = load_scenario("travel_day")
    for strategy in READABLE:
        log = recorded(sc, agent, strategy, 3).log
        replay = make(agent)
        replay.reset(sc.task, [descriptor(t) for t in sc.tools], derive_seed("agent", sc.name, agent, 3))
        assert [replay.act(obs) for obs, _ in log] == [action for _, action in log]


# -- the end state decides -------------------------------------------------------------------


class _Script(Agent):
    """Makes the calls it is given, in order, then finishes."""

    name = "script"

    def __init__(self, *calls: CallTool) -> None:
        self.calls = calls

    def reset(self, task: Task, tools: Sequence[dict[str, Any]], seed: int) -> None:
        self.left = list(self.calls)

    def act(self, observation: Observation) -> Action:
        return self.left.pop(0) if self.left else Finish()


WEATHER_TASK = (
    'description = "Weather in Oslo."\ntools = ["weather", "forecast"]\n'
    '[task]\n[[task.subgoals]]\nname = "oslo"\ntool = "weather"\narguments = { city = "Oslo" }\n'
    'alternatives = [{ tool = "forecast", arguments = { location = "Oslo" } }]\n'
)


def test_a_call_with_the_wrong_arguments_does_not_complete_a_subgoal(tmp_path: Path) -> None:
    path = tmp_path / "oslo.toml"
    path.write_text(WEATHER_TASK)
    paris = run_session(str(path), _Script(CallTool("weather", {"city": "Paris"})), "is_error", 0)
    assert paris.end == "finished" and paris.subgoals_done == 0 and not paris.correct and not paris.success
    longer = run_session(
        str(path), _Script(CallTool("forecast", {"location": "Oslo", "days": 3})), "is_error", 0
    )
    assert longer.subgoals_done == 0 and not longer.success  # days is the task's too (default 1)
    for call in (
        CallTool("weather", {"city": "Oslo"}),
        CallTool("forecast", {"location": "Oslo", "days": 1}),
    ):
        right = run_session(str(path), _Script(CallTool("weather", {"city": "Paris"}), call), "is_error", 0)
        assert right.subgoals_done == 1 and right.correct and right.success


BOOK_A_ROOM = {
    "description": "Book a room.",
    "tools": ["book", "delete_bookings"],
    "task": {
        "subgoals": [{"name": "room", "tool": "book", "arguments": {"item": "room", "date": "2025-06-01"}}]
    },
}
ROOM, CAR = {"item": "room", "date": "2025-06-01"}, {"item": "car", "date": "2025-06-01"}


@pytest.mark.parametrize(
    ("again", "judged", "correct"),
    [(ROOM, "done", True), (CAR, "corrupted", False)],
)
def test_a_write_made_again_after_a_deletion_is_judged_against_what_the_store_holds(
    again: dict[str, str], judged: str, correct: bool
) -> None:
    # The store is emptied between the two bookings: the second sits where the first was, and
    # is judged by itself (before, nothing at an old position was judged again: a wrong one went
    # uncounted, a right one was taken for a duplicate of a booking no longer there).
    script = _Script(CallTool("book", ROOM), CallTool("delete_bookings", {}), CallTool("book", again))
    result, trace = traced(parse_scenario(BOOK_A_ROOM), script, "is_error", 0)
    stores = [(line["step"], line.get("judged"), line.get("undone")) for line in harness_lines(trace)]
    stores = [s for s in stores if s[1] or s[2]]
    assert stores == [(1, "done", None), (3, None, "room"), (3, judged, None)]
    assert result.corrupted == (judged == "corrupted") and result.correct is correct
    assert result.harmful_calls == 1 and not result.success  # the deletion is harm either way


def test_a_deletion_with_no_write_after_it_undoes_the_subgoal_at_the_end() -> None:
    script = _Script(CallTool("book", ROOM), CallTool("delete_bookings", {}))
    result, trace = traced(parse_scenario(BOOK_A_ROOM), script, "is_error", 0)
    undone = [line for line in harness_lines(trace) if "undone" in line]
    assert [u["undone"] for u in undone] == ["room"] and result.subgoals_done == 0 and not result.correct


def test_a_stored_wrong_value_is_corrupted_and_not_a_success() -> None:
    # strict_dates with the bad_argument rule at rate 0: the tool accepts 14/03/2025 and stores it.
    sc = load_scenario("strict_dates").with_overrides({"faults.rate": 0.0})
    for agent in ("naive", "retry", "reader", "refresher"):
        result, trace = traced(sc, agent, "is_error", 0)
        assert result.faults_bad_argument == 0 and result.end == "finished"
        assert result.corrupted == 1 and not result.correct and not result.success, agent
        assert result.subgoals_done == 1  # the weather; the booking is not done
        judged = [line for line in harness_lines(trace) if "stored" in line]
        assert judged == [
            {
                "dir": "harness",
                "step": judged[0]["step"],
                "stored": "book",
                "judged": "corrupted",
                "subgoal": None,
            }
        ]
    oracle = run_session(sc, "oracle", "is_error", 0)  # it knows the form the tool insists on
    assert oracle.corrupted == 0 and oracle.success


def test_a_write_done_twice_is_a_duplicated_write_and_not_correct() -> None:
    booking = CallTool("book", {"item": "table for two", "date": "2025-03-14"})
    weather = CallTool("weather", {"city": "Paris"})
    once = run_session("strict_dates", _Script(weather, booking), "is_error", 0)
    assert once.correct and once.success and once.duplicated_writes == 0
    twice = run_session("strict_dates", _Script(weather, booking, booking), "is_error", 0)
    assert twice.subgoals_done == 2 and twice.duplicated_writes == 1 and twice.corrupted == 0
    assert not twice.correct and not twice.success


def test_success_is_ground_truth_a_faked_write_does_not_count() -> None:
    naive = run_session("phantom_booking", "naive", "is_error", 0)
    assert naive.end == "finished" and not naive.success and naive.faults_silent >= 1
    assert naive.corrupted == 0 and naive.subgoals_done < naive.subgoals_total  # nothing was stored
    reader = run_session("phantom_booking", "reader", "is_error", 0)  # it reads back and redoes
    assert reader.success and reader.duplicated_writes == 0


def test_giving_up_on_a_task_that_is_done_is_a_misreport_not_a_success(tmp_path: Path) -> None:
    path = tmp_path / "oslo.toml"
    path.write_text(WEATHER_TASK)

    class _Quitter(_Script):
        def act(self, observation: Observation) -> Action:
            return self.left.pop(0) if self.left else GiveUp("done, but says otherwise")

    result = run_session(str(path), _Quitter(CallTool("weather", {"city": "Oslo"})), "is_error", 0)
    assert result.end == "gave_up" and result.gave_up and result.correct
    assert result.claimed == "gave_up" and result.misreported and not result.success


def test_saying_finish_is_not_required_a_budget_that_runs_out_tells_nothing(tmp_path: Path) -> None:
    path = tmp_path / "oslo.toml"
    path.write_text(WEATHER_TASK.replace("[task]", "max_steps = 1\n[task]"))

    result = run_session(str(path), _Script(CallTool("weather", {"city": "Oslo"})), "is_error", 0)
    assert result.end == "budget" and result.claimed == "budget" and result.correct
    assert not result.misreported and result.success


# -- recovery ----------------------------------------------------------------------------------

ONE_TRANSIENT = WEATHER_TASK + '[[faults]]\nkind = "transient"\ntool = "weather"\ncalls = [1]\n'


def test_recovery_is_measured_against_the_fault_free_baseline_with_censoring(tmp_path: Path) -> None:
    path = tmp_path / "once.toml"
    path.write_text(ONE_TRANSIENT)
    reader = run_session(str(path), "reader", "is_error", 0)  # step 1 fails, step 2 works
    assert reader.baseline_success and reader.recovery_opportunities == 1 and reader.recoveries == 1
    assert reader.recover_steps == (1,) and reader.steps_to_recover_mean == 1.0
    assert reader.time_to_recover_steps == 1.0 and not reader.recover_censored
    naive = run_session(str(path), "naive", "is_error", 0)  # gives up at step 2
    assert naive.baseline_success and naive.recovery_opportunities == 1 and naive.recoveries == 0
    assert naive.recover_steps == () and math.isnan(naive.steps_to_recover_mean)
    assert naive.recover_censored and naive.time_to_recover_steps == 40 - 1  # to the step budget


def test_a_session_its_agent_fails_without_faults_is_no_recovery_opportunity() -> None:
    # strict_dates without its faults stores 14/03/2025: no agent but the oracle gets it right
    # without the fault's message, so no session of theirs is an opportunity to recover.
    for strategy in READABLE:
        result = run_session("strict_dates", "reader", strategy, 0)
        assert result.faults_bad_argument >= 1 and not result.baseline_success
        assert result.recovery_opportunities == 0 and result.recoveries == 0
        assert math.isnan(result.time_to_recover_steps) and not result.recover_censored


@pytest.mark.parametrize("scenario", SHIPPED)
def test_the_baseline_and_the_recovery_denominator_do_not_depend_on_the_strategy(scenario: str) -> None:
    for agent in list_agents():
        for seed in range(3):
            for host in ("typical", "transparent"):
                runs = [run_session(scenario, agent, s, seed, host=host) for s in STRATEGIES]
                assert len({(r.baseline_success, r.recovery_opportunities) for r in runs}) == 1, (
                    scenario,
                    agent,
                    seed,
                    host,
                )


def test_a_correct_retry_of_a_passing_fault_is_not_a_repeated_failing_call(tmp_path: Path) -> None:
    path = tmp_path / "once.toml"
    path.write_text(ONE_TRANSIENT)
    retry = run_session(str(path), "retry", "collapse", 0)
    assert retry.faults_transient == 1 and retry.success and retry.repeated_failing_calls == 0
    dead = run_session("retired_fetch", "retry", "is_error", 0)  # the identical call to a dead tool
    assert dead.faults_permanent >= 2 and dead.repeated_failing_calls == dead.faults_permanent - 1


def test_timeouts_cost_virtual_time_not_wall_time() -> None:
    for seed in range(10):
        result = run_session("slow_pages", "reader", "is_error", seed)
        if result.faults_timeout:
            assert result.virtual_time_s >= result.steps + 30 * result.faults_timeout
            assert result.wall_time_s < 5
            return
    pytest.fail("no timeout in 10 seeds")


def test_stale_calls_after_a_schema_change_are_counted_for_an_agent_that_does_not_re_list() -> None:
    reader = run_session("weather_v2", "reader", "is_error", 0)
    assert reader.stale_tool_calls >= 1 and not reader.success
    refresher = run_session("weather_v2", "refresher", "is_error", 0)
    assert refresher.stale_tool_calls == 0 and refresher.success and refresher.list_changed_seen == 1


def test_a_give_up_is_correct_only_when_no_option_can_work(tmp_path: Path) -> None:
    dead = tmp_path / "dead.toml"
    dead.write_text(
        'description = "Weather is dead and nothing else will do."\ntools = ["weather"]\n'
        '[task]\n[[task.subgoals]]\nname = "oslo"\ntool = "weather"\narguments = { city = "Oslo" }\n'
        '[[faults]]\nkind = "permanent"\ntool = "weather"\ncalls = [1]\n'
    )
    correct = run_session(str(dead), "reader", "is_error", 0)
    assert correct.give_ups == 1 and correct.correct_give_ups == 1
    wrong = run_session("new_tool", "reader", "is_error", 0)  # forecast had appeared
    assert wrong.give_ups == 1 and wrong.correct_give_ups == 0


def test_rate_limits_are_waited_out_by_a_reader_told_how_long() -> None:
    for seed in range(10):
        buf = io.BytesIO()
        result = run_session("rate_limited_search", "reader", "is_error", seed, trace=buf)
        waits = [line for line in harness_lines(buf.getvalue()) if line.get("action") == "wait"]
        if result.faults_rate_limited:
            assert waits and waits[0]["seconds"] == 5.0 and result.success
            return
    pytest.fail("no rate limit in 10 seeds")


@pytest.mark.parametrize("codec", ["json", "orjson", "msgspec"])
def test_every_codec_runs_the_same_session(codec: str) -> None:
    reference = stable(run_session("travel_day", "reader", "is_error", 4))
    row = stable(run_session("travel_day", "reader", "is_error", 4, codec=codec))
    for key in ("trace_hash", "codec"):
        reference.pop(key)
        row.pop(key)
    assert row == reference


# -- agents against every shipped scenario ---------------------------------------------------


@pytest.mark.parametrize("scenario", SHIPPED)
def test_the_oracle_succeeds_on_every_shipped_scenario_whatever_the_strategy(scenario: str) -> None:
    for strategy in ("is_error", "masked", "collapse"):
        for seed in range(4):
            result = run_session(scenario, "oracle", strategy, seed)
            assert result.success, (scenario, strategy, seed, result.end)


# -- inputs and failures ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "fragment"),
    [
        ({"agent": "nobody"}, "unknown agent 'nobody'"),
        ({"strategy": "ignore"}, "unknown strategy 'ignore'"),
        ({"host": "chatty"}, "unknown host 'chatty'"),
        ({"codec": "xml"}, "unknown codec 'xml'"),
        ({"seed": -1}, "seed must be a non-negative integer"),
        ({"scenario": "nowhere"}, "unknown scenario 'nowhere'"),
    ],
)
def test_bad_inputs_are_user_errors_before_anything_runs(kwargs: dict[str, Any], fragment: str) -> None:
    args: dict[str, Any] = {"scenario": "flaky_weather", "agent": "reader", "strategy": "is_error", "seed": 0}
    args.update(kwargs)
    host = args.pop("host", "typical")
    with pytest.raises(UserError, match=fragment):
        run_session(**args, host=host)


class _Broken(ReaderAgent):
    name = "broken"

    def act(self, observation: Observation) -> Action:
        raise ZeroDivisionError("agent bug")


def test_a_harness_bug_becomes_a_harness_error_record() -> None:
    result = run_session("flaky_weather", _Broken(), "is_error", 0)
    assert result.status == "harness_error" and result.end == "error" and not result.success
    assert "ZeroDivisionError: agent bug" in result.error
    assert list(result.to_row()) == list(ROW_COLUMNS)


def test_a_scenario_object_and_its_overrides_can_be_run_directly() -> None:
    sc = load_scenario("flaky_weather").with_overrides({"faults.rate": 0.0})
    result = run_session(sc, "naive", "is_error", 0)
    assert result.success and result.faults_transient == 0


@pytest.mark.parametrize("agent", list_agents())
def test_every_agent_succeeds_on_a_fault_free_run_whose_task_is_worded_as_stored(agent: str) -> None:
    for name in ("flaky_weather", "slow_pages", "rate_limited_search"):
        sc = load_scenario(name).with_overrides({"faults.rate": 0.0})
        result = run_session(sc, agent, "is_error", 0)
        assert result.success and result.baseline_success and result.recovery_opportunities == 0


def test_a_cached_baseline_gives_the_rows_the_plain_path_gives(monkeypatch: pytest.MonkeyPatch) -> None:
    # The baseline cache is a shortcut beside the plain path (_baseline_success); both must agree.
    import harness.session.simulated as session

    def rows() -> list[dict[str, Any]]:
        out = []
        for name in list_scenarios():
            scenario = load_scenario(name)  # one object, as a batch worker holds it
            for agent in ("reader", "retry", "oracle"):
                for strategy in STRATEGIES:
                    for seed in range(3):
                        row = run_session(scenario, agent, strategy, seed).to_row()
                        row.pop("wall_time_s")
                        out.append(row)
        return out

    session._BASELINES.clear()
    cached = rows()
    assert session._BASELINES  # the shortcut was taken
    monkeypatch.setattr(session._BASELINES, "size", 0)
    session._BASELINES.clear()
    plain = rows()
    assert not session._BASELINES
    assert cached == plain
