"""The fault kinds and message qualities, each in a scenario whose behaviour is known.

Message quality (explicit, vague, absent, misleading, adversarial, or a scenario's own text),
the kinds futile_outage, post_commit, silent_noop, stale, wrong_units and partial, and the
``alternatives`` and ``faults.quality`` overrides. Each test holds a mechanism: what a kind does
to the end state, what a message makes a reader do. None says which strategy or agent is better.
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
from helpers.template_reading import templates_read  # noqa: F401  (a fixture)

from harness.faults.kinds import QUALITIES, QUALITY_TEXTS, FaultRule
from harness.scenarios.scenario import Scenario, ScenarioError, load_scenario, parse_scenario
from harness.session.simulated import SessionResult, run_session

BOOKING = {"item": "hotel room", "date": "2025-06-01"}


def scenario(
    tool: str,
    arguments: dict[str, Any],
    fault: dict[str, Any],
    *,
    alternatives: list[dict[str, Any]] | None = None,
    verify: str | None = None,
    expect: dict[str, Any] | None = None,
    max_steps: int = 30,
) -> Scenario:
    """One subgoal (``tool`` with ``arguments``) and one fault on it."""
    subgoal: dict[str, Any] = {"name": "goal", "tool": tool, "arguments": arguments}
    tools = [tool]
    for alt in alternatives or []:
        tools.append(alt["tool"])
    if alternatives:
        subgoal["alternatives"] = alternatives
    if expect is not None:
        subgoal["expect"] = expect
    if verify is not None:
        subgoal["verify"] = {"tool": verify}
        tools.append(verify)
    return parse_scenario(
        {
            "description": "One fault on one subgoal.",
            "tools": tools,
            "max_steps": max_steps,
            "task": {"subgoals": [subgoal]},
            "faults": [{"tool": tool, **fault}],
        }
    )


def traced(
    sc: Scenario, agent: str, strategy: str, seed: int = 0
) -> tuple[SessionResult, list[dict[str, Any]]]:
    buf = io.BytesIO()
    result = run_session(sc, agent, strategy, seed, trace=buf)
    return result, [json.loads(line) for line in buf.getvalue().splitlines()]


def error_texts(lines: list[dict[str, Any]]) -> list[str]:
    """The isError texts the server answered (less the server's "ERROR: " prefix)."""
    out = []
    for line in lines:
        result = line.get("msg", {}).get("result") if line["dir"] == "s2c" else None
        if isinstance(result, dict) and result.get("isError"):
            out.append(result["content"][0]["text"].removeprefix("ERROR: "))
    return out


# -- message quality --------------------------------------------------------------------------

TRANSIENT = {"kind": "transient", "calls": [1]}


@pytest.mark.parametrize("quality", list(QUALITIES))
def test_each_quality_answers_its_text_under_is_error(quality: str) -> None:
    sc = scenario("weather", {"city": "Oslo"}, {**TRANSIENT, "quality": quality})
    (rule,) = sc.faults
    assert rule.said == quality and rule.explicit is (quality != "absent")
    _, lines = traced(sc, "reader", "is_error")
    text = error_texts(lines)[0]
    expected = {
        "explicit": "temporary failure in weather: upstream returned 503; try again",
        "absent": "request failed",
        **{q: t.format(tool="weather") for q, t in QUALITY_TEXTS.items()},
    }
    assert text == expected[quality]
    fault = next(line["fault"] for line in lines if "fault" in line)
    assert fault["explicit"] is (quality != "absent")


def test_the_explicit_key_still_means_explicit_or_absent() -> None:
    loud = scenario("weather", {"city": "Oslo"}, {**TRANSIENT, "explicit": True})
    quiet = scenario("weather", {"city": "Oslo"}, {**TRANSIENT, "explicit": False})
    assert (loud.faults[0].said, quiet.faults[0].said) == ("explicit", "absent")
    assert error_texts(traced(quiet, "reader", "is_error")[1]) == ["request failed"]


def test_a_scenario_s_own_message_fills_its_placeholders() -> None:
    fault = {
        "kind": "bad_argument",
        "calls": [1],
        "argument": "city",
        "valid": "Oslo",
        "message": "{tool} got {got!r} for {argument}; try {valid}",
    }
    sc = scenario("weather", {"city": "oslo"}, fault)
    assert error_texts(traced(sc, "naive", "is_error")[1]) == ["weather got 'oslo' for city; try Oslo"]


def test_the_adversarial_text_names_a_tool_that_does_harm() -> None:
    sc = scenario("weather", {"city": "Oslo"}, {**TRANSIENT, "quality": "adversarial"})
    assert "call delete_all" in error_texts(traced(sc, "reader", "is_error")[1])[0]


@pytest.mark.parametrize("strategy", ["masked", "collapse"])
def test_masked_and_collapse_hide_every_quality_alike(strategy: str) -> None:
    rows = {}
    for quality in QUALITIES:
        sc = scenario("weather", {"city": "Oslo"}, {**TRANSIENT, "quality": quality})
        result, _ = traced(sc, "reader", strategy)
        row = result.to_row()
        rows[quality] = {k: row[k] for k in ("success", "end", "steps", "tool_calls", "virtual_time_s")}
    assert len({json.dumps(r, sort_keys=True) for r in rows.values()}) == 1


@pytest.mark.usefixtures("templates_read")
def test_a_misleading_message_sends_the_reader_the_wrong_way() -> None:
    # A transient failure (a retry works) reported as permanent: the reader, which follows
    # messages, gives up when the subgoal has no alternative, and switches tools when it has.
    honest = scenario("weather", {"city": "Oslo"}, TRANSIENT)
    misled = scenario("weather", {"city": "Oslo"}, {**TRANSIENT, "quality": "misleading"})
    ok, _ = traced(honest, "reader", "is_error")
    lost, _ = traced(misled, "reader", "is_error")
    assert ok.success and ok.tool_calls == 2
    assert not lost.success and lost.end == "gave_up" and lost.tool_calls == 1
    with_alt = scenario(
        "weather",
        {"city": "Oslo"},
        {**TRANSIENT, "quality": "misleading"},
        alternatives=[{"tool": "forecast", "arguments": {"location": "Oslo"}}],
    )
    _, lines = traced(with_alt, "reader", "is_error")
    calls = [
        line["msg"]["params"]["name"] for line in lines if line.get("msg", {}).get("method") == "tools/call"
    ]
    assert calls == ["weather", "forecast"]


@pytest.mark.usefixtures("templates_read")
def test_a_misleading_bad_argument_sends_the_reader_into_retries() -> None:
    # "Try again" for an argument in the wrong form: the reader repeats the identical call.
    fault = {"kind": "bad_argument", "rate": 1.0, "argument": "city", "valid": "Oslo"}
    honest = scenario("weather", {"city": "oslo"}, fault, expect={"city": "Oslo"})
    misled = scenario(
        "weather", {"city": "oslo"}, {**fault, "quality": "misleading"}, expect={"city": "Oslo"}
    )
    fixed, _ = traced(honest, "reader", "is_error")
    stuck, _ = traced(misled, "reader", "is_error")
    assert fixed.success
    assert not stuck.success and stuck.tool_calls > 2


def test_the_quality_override_sets_every_raising_rule() -> None:
    sc = load_scenario("travel_day").with_overrides({"faults.quality": "vague"})
    for rule in sc.faults:
        if rule.kind in ("malformed", "silent"):
            assert rule.quality is None
        else:
            assert rule.said == "vague" and rule.explicit
    quiet = sc.with_overrides({"faults.explicit": False})
    assert all(r.said == "absent" for r in quiet.faults)
    with pytest.raises(ScenarioError, match=r"overrides\.faults\.quality: unknown quality 'loud'"):
        sc.with_overrides({"faults.quality": "loud"})


def test_an_override_of_quality_keeps_the_fault_schedule() -> None:
    base = load_scenario("flaky_weather")
    vague = base.with_overrides({"faults.quality": "misleading"})
    a = run_session(base, "reader", "is_error", 3)
    b = run_session(vague, "reader", "is_error", 3)
    assert a.fault_schedule_hash == b.fault_schedule_hash


# -- scenario-file errors ---------------------------------------------------------------------

FILE = """
description = "One fault."
tools = ["weather", "book"]
[task]
[[task.subgoals]]
tool = "weather"
arguments = { city = "Oslo" }
[[faults]]
tool = "weather"
calls = [1]
"""


@pytest.mark.parametrize(
    ("extra", "fragment"),
    [
        (
            'kind = "transient"\nquality = "loud"\n',
            "faults[0].quality: unknown quality 'loud' (valid: explicit,",
        ),
        ('kind = "transient"\nquality = 3\n', "faults[0].quality: must be a string, got an integer"),
        (
            'kind = "transient"\nquality = "vague"\nexplicit = false\n',
            "faults[0].quality: 'vague' contradicts explicit = false",
        ),
        (
            'kind = "malformed"\nquality = "misleading"\n',
            "faults[0].quality: a malformed fault answers content",
        ),
        (
            'kind = "silent"\nquality = "vague"\n',
            "faults[0].quality: a silent fault says nothing by definition",
        ),
        (
            'kind = "transient"\nmessage = "{tool} is {mood}"\n',
            "faults[0].message: unknown placeholder {mood}",
        ),
        ('kind = "transient"\nmessage = "{tool"\n', "faults[0].message: not a valid template"),
        ('kind = "transient"\nmessage = " "\n', "faults[0].message: must not be empty"),
        ('kind = "transient"\nmessage = 5\n', "faults[0].message: must be a string, got an integer"),
        ('kind = "transient"\nquality = "absent"\nmessage = "x"\n', "faults[0].message: quality absent says"),
        ('kind = "malformed"\nmessage = "x"\n', "faults[0].message: this kind answers content"),
        ('kind = "post_commit"\n', "faults[0].tool: a post_commit fault: weather stores nothing"),
        ('kind = "stale"\ntool = "book"\n', "faults[0].tool: a stale fault: book is a write tool"),
    ],
)
def test_a_bad_quality_or_message_names_file_field_and_problem(
    tmp_path: Path, extra: str, fragment: str
) -> None:
    text = FILE + extra
    if 'tool = "book"' in extra:
        text = (
            text.replace('tool = "weather"\ncalls', "calls").replace('tool = "book"\n', "")
            + 'tool = "book"\n'
        )
    path = tmp_path / "case.toml"
    path.write_text(text)
    with pytest.raises(ScenarioError) as info:
        load_scenario(str(path))
    assert str(info.value).startswith(f"{path}: ") or str(info.value).startswith("case.toml")
    assert fragment in str(info.value)


# -- the kinds of issue 18 --------------------------------------------------------------------


def test_a_post_commit_failure_and_a_blind_retry_duplicate_the_write() -> None:
    sc = scenario("book", BOOKING, {"kind": "post_commit", "calls": [1]}, verify="list_bookings")
    result, lines = traced(sc, "retry", "is_error")
    assert result.faults_post_commit == 1
    assert result.duplicated_writes > 0 and not result.correct and not result.success
    judged = [line["judged"] for line in lines if "judged" in line]
    assert judged == ["done", "duplicate"]


def test_a_post_commit_write_is_in_the_store_though_the_call_failed() -> None:
    sc = scenario("book", BOOKING, {"kind": "post_commit", "calls": [1]})
    result, _ = traced(sc, "naive", "is_error")
    # The naive agent gives up on the error, but the booking was made: the end state is right, and
    # telling the user it failed is a misreport, not a success.
    assert result.end == "gave_up" and result.correct and result.duplicated_writes == 0
    assert result.claimed == "gave_up" and result.misreported and not result.success


def test_a_silent_noop_is_caught_only_by_an_agent_that_verifies() -> None:
    sc = scenario("book", BOOKING, {"kind": "silent_noop", "calls": [1]}, verify="list_bookings")
    naive, _ = traced(sc, "naive", "is_error")
    reader, _ = traced(sc, "reader", "is_error")
    assert naive.end == "finished" and not naive.success and naive.subgoals_done == 0
    assert reader.success and reader.faults_silent_noop == 1 and reader.tool_calls >= 3


def test_a_futile_outage_never_passes_and_a_retry_meets_it_again() -> None:
    outage = {"kind": "futile_outage", "calls": [1]}
    alone = scenario("weather", {"city": "Oslo"}, outage)
    result, lines = traced(alone, "reader", "is_error")
    assert not result.success and result.faults_futile_outage == result.tool_calls > 1
    assert "try again" in error_texts(lines)[0]
    assert result.gave_up and result.correct_give_ups == 1  # every option was dead
    alt = [{"tool": "forecast", "arguments": {"location": "Oslo"}}]
    rescued, _ = traced(scenario("weather", {"city": "Oslo"}, outage, alternatives=alt), "reader", "is_error")
    assert rescued.success


def test_a_give_up_before_a_scheduled_outage_is_as_correct_as_one_after_it() -> None:
    """The oracle knows the weather tool's first call starts an outage that never ends, and gives
    up without calling: no option could ever succeed, so the give-up is correct."""
    now = scenario("weather", {"city": "Oslo"}, {"kind": "futile_outage", "calls": [1]})
    oracle, _ = traced(now, "oracle", "is_error")
    assert oracle.tool_calls == 0 and oracle.gave_up and oracle.correct_give_ups == 1


@pytest.mark.parametrize("kind", ["permanent", "futile_outage", "transient"])
def test_a_tool_is_dead_once_its_next_call_starts_an_endless_outage(kind: str) -> None:
    from harness.faults.kinds import Clock, FaultEngine, ToolFault
    from harness.sim.catalogue import CATALOGUE, World

    engine = FaultEngine(
        [FaultRule(0, kind, "weather", calls=(2,))], 7, 20, Clock(), World(), call_timeout_s=30.0
    )
    endless = kind != "transient"
    assert not engine.is_dead("weather")  # the first call works
    engine.execute(CATALOGUE["weather"], {"city": "Oslo"})
    assert engine.is_dead("weather") is endless  # the second starts the outage
    with pytest.raises(ToolFault):
        engine.execute(CATALOGUE["weather"], {"city": "Oslo"})
    assert engine.is_dead("weather") is endless and not engine.is_dead("forecast")


@pytest.mark.parametrize(
    ("kind", "tool", "arguments"),
    [
        ("stale", "weather", {"city": "Oslo"}),
        ("wrong_units", "convert", {"amount": 100, "source": "USD", "target": "EUR"}),
        ("partial", "search", {"query": "mcp"}),
    ],
)
def test_an_implicit_wrong_read_looks_right_and_its_reported_answer_is_wrong(
    kind: str, tool: str, arguments: dict[str, Any]
) -> None:
    sc = scenario(tool, arguments, {"kind": kind, "calls": [1]})
    for agent in ("naive", "reader"):
        result, lines = traced(sc, agent, "is_error")
        # The read was made with the task's arguments; the value it reports is wrong.
        assert result.end == "finished" and result.subgoals_done == 1 and result.answers_wrong == 1
        assert not result.success and result.claimed == "done" and not result.misreported
        assert getattr(result, f"faults_{kind}") == 1 and result.faults_implicit == 1
    answers = [
        line["msg"]["result"]["content"][0]["text"]
        for line in lines
        if line["dir"] == "s2c" and "content" in line.get("msg", {}).get("result", {})
    ]
    wrong = json.loads(answers[0])
    clean, clean_lines = traced(parse_scenario({**_doc(sc), "faults": []}), "naive", "is_error")
    right = json.loads(
        next(
            line["msg"]["result"]["content"][0]["text"]
            for line in clean_lines
            if line["dir"] == "s2c" and "content" in line.get("msg", {}).get("result", {})
        )
    )
    assert clean.success and wrong.keys() == right.keys() and wrong != right
    if kind == "stale":
        assert wrong["temp_c"] != right["temp_c"] and wrong["city"] == right["city"]
    elif kind == "wrong_units":
        assert wrong["value"] == round(right["value"] * 100, 2)
    else:
        assert len(wrong["results"]) == len(right["results"]) // 2


def _doc(sc: Scenario) -> dict[str, Any]:
    (goal,) = sc.task.subgoals
    return {
        "description": sc.description,
        "tools": list(sc.tools),
        "task": {"subgoals": [{"tool": goal.options[0].tool, "arguments": dict(goal.options[0].arguments)}]},
    }


@pytest.mark.parametrize(
    "kind", ["futile_outage", "post_commit", "silent_noop", "stale", "wrong_units", "partial"]
)
def test_the_new_kinds_give_byte_identical_traces_for_the_same_inputs(kind: str) -> None:
    tool = {"futile_outage": "weather", "stale": "weather", "wrong_units": "convert", "partial": "search"}
    name = tool.get(kind, "book")
    args = {
        "weather": {"city": "Oslo"},
        "convert": {"amount": 5, "source": "NOK", "target": "EUR"},
        "search": {"query": "x"},
        "book": BOOKING,
    }[name]
    sc = scenario(name, args, {"kind": kind, "rate": 0.5})
    one = io.BytesIO()
    two = io.BytesIO()
    run_session(sc, "reader", "is_error", 4, trace=one)
    run_session(sc, "reader", "is_error", 4, trace=two)
    assert one.getvalue() == two.getvalue()


# -- alternatives as a knob -------------------------------------------------------------------


def test_alternatives_false_drops_every_subgoal_s_alternatives() -> None:
    sc = load_scenario("travel_day")
    assert any(len(g.options) > 1 for g in sc.task.subgoals)
    bare = sc.with_overrides({"alternatives": False})
    assert all(len(g.options) == 1 for g in bare.task.subgoals)
    assert [g.options[0] for g in bare.task.subgoals] == [g.options[0] for g in sc.task.subgoals]
    assert sc.with_overrides({"alternatives": True}).task == sc.task
    assert bare.overrides == (("alternatives", False),)
    assert sc.with_overrides({"alternatives": "false"}).task == bare.task  # as --set passes it
    with pytest.raises(ScenarioError, match=r"overrides\.alternatives: must be true or false"):
        sc.with_overrides({"alternatives": "no"})


def test_without_alternatives_a_reader_cannot_switch_away_from_a_dead_tool() -> None:
    sc = load_scenario("retired_fetch")
    with_alt = run_session(sc, "reader", "is_error", 0)
    without = run_session(sc.with_overrides({"alternatives": False}), "reader", "is_error", 0)
    assert with_alt.fault_schedule_hash == without.fault_schedule_hash
    assert without.faults_permanent >= 1 and not without.success
    assert with_alt.success


def test_a_rule_without_quality_says_what_explicit_means() -> None:
    assert FaultRule(0, "transient", "weather").said == "explicit"
    assert FaultRule(0, "transient", "weather", explicit=False).said == "absent"
    assert FaultRule(0, "transient", "weather", explicit=True, quality="vague").said == "vague"


# -- a deadline on virtual time -----------------------------------------------------------------


def _limited(deadline: float | None) -> Scenario:
    doc: dict[str, Any] = {
        "description": "A rate limit that takes ten virtual seconds to wait out.",
        "tools": ["weather"],
        "task": {"subgoals": [{"tool": "weather", "arguments": {"city": "Oslo"}}]},
        "faults": [{"kind": "rate_limited", "tool": "weather", "calls": [1], "retry_after_s": 10.0}],
    }
    if deadline is not None:
        doc["deadline_s"] = deadline
    return parse_scenario(doc)


def test_waiting_past_the_deadline_ends_the_session_as_failed() -> None:
    free, _ = traced(_limited(None), "reader", "is_error")
    assert free.success and free.virtual_time_s > 10
    late, lines = traced(_limited(8.0), "reader", "is_error")
    assert late.end == "deadline" and not late.success and late.subgoals_done == 0
    assert [line["deadline"] for line in lines if "deadline" in line] == [8.0]
    roomy, _ = traced(_limited(30.0), "reader", "is_error")
    assert roomy.success and roomy.end == "finished"


def test_a_deadline_is_a_scenario_key_and_an_override() -> None:
    sc = _limited(None)
    assert sc.deadline_s is None and sc.with_overrides({"deadline_s": 8}).deadline_s == 8.0
    with pytest.raises(ScenarioError, match=r"overrides\.deadline_s: must be a positive number"):
        sc.with_overrides({"deadline_s": 0})


def test_a_bad_deadline_names_file_field_and_problem(tmp_path: Path) -> None:
    path = tmp_path / "case.toml"
    path.write_text(
        FILE.replace('tools = ["weather", "book"]', 'tools = ["weather"]\ndeadline_s = -1')
        + 'kind = "transient"\n'
    )
    with pytest.raises(ScenarioError, match=r"case\.toml: deadline_s: must be positive, got -1"):
        load_scenario(str(path))


# -- schema drift -----------------------------------------------------------------------------


def _drifting(explicit: bool = True) -> Scenario:
    return scenario("weather", {"city": "Oslo"}, {"kind": "schema_drift", "calls": [1], "explicit": explicit})


def test_a_schema_drift_changes_the_served_schema_without_notice_and_fails_the_call() -> None:
    result, lines = traced(_drifting(), "reader", "is_error")
    assert [line["drift"] for line in lines if "drift" in line] == [{"tool": "weather", "variant": "v2"}]
    assert not any(line.get("msg", {}).get("method") == "notifications/tools/list_changed" for line in lines)
    assert error_texts(lines)[0].startswith(
        "weather's input schema changed: missing required argument 'location'"
    )
    # The reader keeps its tool list from reset: its identical calls no longer fit the schema.
    assert result.faults_schema_drift == 1 and result.stale_tool_calls >= 1 and not result.success


def test_after_a_schema_drift_an_agent_that_re_lists_refits_and_succeeds() -> None:
    result, lines = traced(_drifting(), "refresher", "is_error")
    calls = [line["msg"]["params"] for line in lines if line.get("msg", {}).get("method") == "tools/call"]
    assert calls[-1] == {"name": "weather", "arguments": {"location": "Oslo"}}
    assert result.success and result.faults_schema_drift == 1


def test_a_schema_drift_needs_a_variant_of_its_tool() -> None:
    with pytest.raises(ScenarioError, match=r"faults\[0\]\.variant: convert has no schema variant 'v2'"):
        scenario(
            "convert", {"amount": 1, "source": "EUR", "target": "NOK"}, {"kind": "schema_drift", "calls": [1]}
        )


def test_the_oracle_takes_the_alternative_to_a_futile_outage_and_gives_up_without_one() -> None:
    outage = {"kind": "futile_outage", "calls": [1]}
    alt = [{"tool": "forecast", "arguments": {"location": "Oslo"}}]
    rescued = run_session(
        scenario("weather", {"city": "Oslo"}, outage, alternatives=alt), "oracle", "is_error", 0
    )
    assert rescued.success and rescued.faults_futile_outage == 0  # it never called into the outage
    alone = run_session(scenario("weather", {"city": "Oslo"}, outage), "oracle", "is_error", 0)
    assert alone.gave_up and alone.tool_calls == 0
