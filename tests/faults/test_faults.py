"""Fault rules: their schedules, each kind's behaviour, explicit vs implicit messages."""

from __future__ import annotations

import json
from dataclasses import fields, replace
from typing import Any

import pytest

from harness.faults.kinds import (
    DEFAULT_EXPLICIT,
    FAULT_KIND_TABLE,
    FAULT_KINDS,
    IMPLICIT_MESSAGE,
    KEY_TYPES,
    RAISING_KINDS,
    RULE_KEYS,
    Clock,
    FaultEngine,
    FaultKind,
    FaultRule,
    ToolFault,
)
from harness.scenarios.scenario import ScenarioError, parse_scenario
from harness.sim.catalogue import CATALOGUE, World

WEATHER = CATALOGUE["weather"]
SEARCH = CATALOGUE["search"]
BOOK = CATALOGUE["book"]


def engine(*rules: FaultRule, seed: int = 7, horizon: int = 50) -> FaultEngine:
    return FaultEngine(list(rules), seed, horizon, Clock(), World(), call_timeout_s=30.0)


def outcome(e: FaultEngine, tool: Any, args: dict[str, Any]) -> str | None:
    """Call once; the injected kind, or None for a genuine answer."""
    try:
        e.execute(tool, args)
    except ToolFault as exc:
        return exc.kind
    assert e.last is not None
    return None if e.last.fault is None else e.last.fault.kind


def test_an_explicit_schedule_hits_exactly_those_calls() -> None:
    e = engine(FaultRule(0, "timeout", "weather", calls=(2, 4)))
    kinds = [outcome(e, WEATHER, {"city": "Oslo"}) for _ in range(5)]
    assert kinds == [None, "timeout", None, "timeout", None]


def test_a_rate_schedule_depends_on_the_seed_only() -> None:
    rule = FaultRule(0, "timeout", "weather", rate=0.5)
    assert engine(rule, seed=1).schedule() == engine(rule, seed=1).schedule()
    assert engine(rule, seed=1).schedule() != engine(rule, seed=2).schedule()
    assert engine(rule, seed=1).schedule_hash() != engine(rule, seed=2).schedule_hash()


def test_the_draws_for_the_first_calls_do_not_depend_on_the_step_budget() -> None:
    rules = (FaultRule(0, "timeout", "weather", rate=0.5), FaultRule(1, "transient", "search", rate=0.5))
    short = engine(*rules, horizon=10).schedule()
    long = engine(*rules, horizon=60).schedule()
    for a, b in zip(short, long, strict=True):
        assert a["calls"] == [n for n in b["calls"] if n <= 10]


def test_a_higher_rate_hits_a_superset_of_the_calls_a_lower_one_hits() -> None:
    low = engine(FaultRule(0, "timeout", "weather", rate=0.2)).schedule()[0]["calls"]
    high = engine(FaultRule(0, "timeout", "weather", rate=0.6)).schedule()[0]["calls"]
    assert set(low) < set(high)


def test_rate_one_hits_every_call_and_rate_zero_none() -> None:
    assert engine(FaultRule(0, "timeout", "weather", rate=1.0), horizon=20).schedule()[0]["calls"] == list(
        range(1, 21)
    )
    assert engine(FaultRule(0, "timeout", "weather", rate=0.0)).schedule()[0]["calls"] == []


def test_transient_fails_burst_times_then_the_retry_works() -> None:
    e = engine(FaultRule(0, "transient", "weather", rate=1.0, burst=2))
    kinds = [outcome(e, WEATHER, {"city": "Oslo"}) for _ in range(4)]
    assert kinds == ["transient", "transient", None, "transient"]


def test_rate_limited_blocks_until_the_clock_passes_retry_after() -> None:
    e = engine(FaultRule(0, "rate_limited", "search", calls=(1,), retry_after_s=5.0))
    assert outcome(e, SEARCH, {"query": "x"}) == "rate_limited"
    e.clock.advance(4.0)
    assert outcome(e, SEARCH, {"query": "x"}) == "rate_limited"  # still inside the window
    assert e.blocked_for("search") == pytest.approx(1.0)
    e.clock.advance(1.0)
    assert outcome(e, SEARCH, {"query": "x"}) is None
    assert [f.kind for f in e.log] == ["rate_limited", "rate_limited"]


def test_permanent_is_sticky_from_its_first_hit() -> None:
    e = engine(FaultRule(0, "permanent", "weather", calls=(2,)))
    kinds = [outcome(e, WEATHER, {"city": "Oslo"}) for _ in range(4)]
    assert kinds == [None, "permanent", "permanent", "permanent"]
    assert e.is_dead("weather") and not e.is_dead("search")


def test_bad_argument_fails_only_while_the_argument_is_not_the_valid_form() -> None:
    e = engine(FaultRule(0, "bad_argument", "weather", rate=1.0, argument="city", valid="Oslo"))
    assert outcome(e, WEATHER, {"city": "oslo"}) == "bad_argument"
    assert outcome(e, WEATHER, {"city": "Oslo"}) is None


def test_too_large_uses_the_schema_default_when_the_argument_is_missing() -> None:
    e = engine(FaultRule(0, "too_large", "search", rate=1.0, argument="limit", max=10))
    assert outcome(e, SEARCH, {"query": "x"}) == "too_large"  # default limit is 20
    assert outcome(e, SEARCH, {"query": "x", "limit": 11}) == "too_large"
    assert outcome(e, SEARCH, {"query": "x", "limit": 10}) is None


def test_timeout_advances_virtual_time_by_the_per_call_limit() -> None:
    e = engine(FaultRule(0, "timeout", "weather", calls=(1,)))
    assert outcome(e, WEATHER, {"city": "Oslo"}) == "timeout"
    assert e.clock.now == 30.0


@pytest.mark.parametrize(("form", "explicit"), [("truncated", False), ("truncated", True), ("binary", False)])
def test_malformed_answers_content_that_is_not_a_json_object(form: str, explicit: bool) -> None:
    e = engine(FaultRule(0, "malformed", "weather", calls=(1,), form=form, explicit=explicit))
    out = e.execute(WEATHER, {"city": "Oslo"})
    assert e.last is not None and e.last.fault is not None and not e.last.executed
    if form == "binary":
        assert any(b["type"] == "resource" for b in out)
    else:
        with pytest.raises(ValueError):
            parsed = json.loads(out)
            assert isinstance(parsed, dict)
        assert ("malformed" in out) is explicit


def test_silent_answers_a_lookalike_success_and_writes_nothing() -> None:
    e = engine(FaultRule(0, "silent", "book", calls=(1,), explicit=False))
    fake = json.loads(e.execute(BOOK, {"item": "x", "date": "2025-01-01"}))
    assert fake["booked"] is True and e.world.bookings == []
    real = json.loads(e.execute(BOOK, {"item": "x", "date": "2025-01-01"}))
    assert real["booked"] is True and len(e.world.bookings) == 1


RAISING = ["transient", "rate_limited", "permanent", "bad_argument", "too_large", "timeout"]
EXPLICIT_WORDS = {
    "transient": "try again",
    "rate_limited": "retry after 5 s",
    "permanent": "permanently unavailable",
    "bad_argument": "expected form 'Oslo'",
    "too_large": "set 'limit' to at most 10",
    "timeout": "timed out after 30 s",
}


def _raising_rule(kind: str, explicit: bool) -> tuple[FaultRule, Any, dict[str, Any]]:
    rule = FaultRule(0, kind, "weather", calls=(1,), explicit=explicit)
    if kind == "bad_argument":
        return replace(rule, argument="city", valid="Oslo"), WEATHER, {"city": "oslo"}
    if kind == "too_large":
        return replace(rule, tool="search", argument="limit", max=10), SEARCH, {"query": "x", "limit": 50}
    return rule, WEATHER, {"city": "Oslo"}


@pytest.mark.parametrize("kind", RAISING)
def test_an_explicit_fault_says_what_happened_and_an_implicit_one_does_not(kind: str) -> None:
    rule, tool, args = _raising_rule(kind, True)
    with pytest.raises(ToolFault, match=EXPLICIT_WORDS[kind]):
        engine(rule).execute(tool, args)
    rule, tool, args = _raising_rule(kind, False)
    with pytest.raises(ToolFault) as info:
        engine(rule).execute(tool, args)
    assert str(info.value) in (IMPLICIT_MESSAGE, "invalid request")


def test_peek_predicts_the_next_call_without_changing_state() -> None:
    e = engine(FaultRule(0, "transient", "weather", calls=(1,)))
    assert e.peek(WEATHER, {"city": "Oslo"}) == "transient"
    assert e.peek(WEATHER, {"city": "Oslo"}) == "transient"
    assert outcome(e, WEATHER, {"city": "Oslo"}) == "transient"
    assert e.peek(WEATHER, {"city": "Oslo"}) is None


def test_rules_for_other_tools_do_not_fire() -> None:
    e = engine(FaultRule(0, "permanent", "search", rate=1.0))
    assert outcome(e, WEATHER, {"city": "Oslo"}) is None


ISSUE_17_KINDS = (
    "transient",
    "rate_limited",
    "permanent",
    "bad_argument",
    "too_large",
    "timeout",
    "malformed",
    "silent",
)
ISSUE_18_KINDS = (
    "futile_outage",
    "post_commit",
    "silent_noop",
    "stale",
    "wrong_units",
    "partial",
    "schema_drift",
)


def test_the_kinds_are_the_eight_of_issue_17_then_those_of_issue_18() -> None:
    # New kinds are appended, so the earlier faults_<kind> columns keep their order.
    assert ISSUE_17_KINDS + ISSUE_18_KINDS == FAULT_KINDS


# -- one row per kind: the table is all a kind needs ------------------------------------------
#
# Each test below runs over every row of FAULT_KIND_TABLE, so a new row is checked by them
# all: it parses from a scenario with exactly its keys, it is scheduled and answers, an
# explicit answer is read back to the kind by the scripted reader (its faults_<kind> column
# is checked in tests/session/test_row.py).

KIND_ROWS = list(FAULT_KIND_TABLE.values())


def _scenario_with(kind: FaultKind, **extra: Any) -> dict[str, Any]:
    """A scenario whose one fault is ``kind``'s example (plus ``extra`` keys), hitting call 1."""
    fault = {"kind": kind.name, "calls": [1], **kind.example, **extra}
    return {
        "description": "One fault of one kind.",
        "tools": list(dict.fromkeys([fault["tool"], "list_bookings"])),
        "task": {"subgoals": [{"tool": "list_bookings"}]},
        "faults": [fault],
    }


def _parse(kind: FaultKind, **extra: Any) -> FaultRule:
    (rule,) = parse_scenario(_scenario_with(kind, **extra)).faults
    return rule


def test_the_kinds_are_the_rows_of_the_table_in_order() -> None:
    assert tuple(k.name for k in KIND_ROWS) == FAULT_KINDS
    assert frozenset(k.name for k in KIND_ROWS if k.raises) == RAISING_KINDS
    assert {k.name: k.explicit_default for k in KIND_ROWS} == DEFAULT_EXPLICIT


@pytest.mark.parametrize("kind", KIND_ROWS, ids=FAULT_KINDS)
def test_a_kind_s_keys_are_rule_fields_and_optional_ones_take_their_default(kind: FaultKind) -> None:
    rule_fields = {f.name for f in fields(FaultRule)}
    for key in kind.keys:
        assert key.name in rule_fields and key.name not in RULE_KEYS
        assert key.type in KEY_TYPES and key.meaning
        if key.missing is None:
            data = _scenario_with(kind)
            data["faults"][0].pop(key.name, None)
            (rule,) = parse_scenario(data).faults
            assert getattr(rule, key.name) == key.default


@pytest.mark.parametrize("kind", KIND_ROWS, ids=FAULT_KINDS)
def test_the_scenario_parser_takes_a_kind_with_exactly_its_keys(kind: FaultKind) -> None:
    rule = _parse(kind)
    assert rule.kind == kind.name and rule.explicit == kind.explicit_default
    for name, value in kind.example.items():
        assert getattr(rule, name) == value
    others = {k.name for row in KIND_ROWS for k in row.keys} - {k.name for k in kind.keys}
    for other in sorted(others):
        with pytest.raises(ScenarioError, match=rf"faults\[0\]\.{other}: unknown key"):
            _parse(kind, **{other: 1})
    for key in kind.keys:
        if key.missing is not None:
            data = _scenario_with(kind)
            del data["faults"][0][key.name]
            with pytest.raises(ScenarioError, match=rf"faults\[0\]\.{key.name}: missing"):
                parse_scenario(data)


def _fire(kind: FaultKind, explicit: bool) -> tuple[FaultEngine, Any]:
    """A rule of ``kind`` from its example, hitting the first call (every required argument "x")."""
    rule = replace(_parse(kind), explicit=explicit)
    e = engine(rule)
    tool = CATALOGUE[rule.tool]
    try:
        return e, e.execute(tool, dict.fromkeys(tool.schema["required"], "x"))
    except ToolFault as exc:
        assert exc.kind == kind.name
        return e, exc


@pytest.mark.parametrize("kind", KIND_ROWS, ids=FAULT_KINDS)
def test_a_kind_fires_on_schedule_and_answers_as_its_row_says(kind: FaultKind) -> None:
    e, answer = _fire(kind, kind.explicit_default)
    assert [f.kind for f in e.log] == [kind.name]
    assert isinstance(answer, ToolFault) is kind.raises
    assert e.clock.now == (30.0 if kind.hangs else 0.0)
    if kind.raises:
        assert kind.message is not None and kind.content is None
    else:
        assert kind.content is not None and answer is not None


def test_a_retry_fixes_exactly_the_kinds_that_pass_with_time() -> None:
    # What repeated_failing_calls leaves out: a repeat of a call that failed for a passing reason.
    # A futile outage says "try again" and lies; a garbled, stale, wrong-unit or partial answer
    # says nothing, and the next may be fine.
    fixes = {k.name for k in KIND_ROWS if k.retry_fixes}
    assert fixes == {
        "transient",
        "rate_limited",
        "timeout",
        "malformed",
        "post_commit",
        "stale",
        "wrong_units",
        "partial",
    }


@pytest.mark.parametrize("kind", KIND_ROWS, ids=FAULT_KINDS)
def test_what_the_oracle_fills_in_keeps_the_fault_from_firing(kind: FaultKind) -> None:
    if kind.avoid is None:
        return
    rule = _parse(kind)
    tool = CATALOGUE[rule.tool]
    args: dict[str, Any] = dict.fromkeys(tool.schema["required"], "x")
    kind.avoid(rule, tool, args)
    assert outcome(engine(rule), tool, args) is None


def test_a_row_gives_a_message_or_content_never_both() -> None:
    with pytest.raises(ValueError, match="exactly one of message and content"):
        FaultKind("odd", does="x", recovers="y", example={"tool": "weather"})


def test_an_engine_refuses_a_rule_of_no_kind() -> None:
    with pytest.raises(ValueError, match="unknown fault kind 'flaky'"):
        engine(FaultRule(0, "flaky", "weather", calls=(1,)))
