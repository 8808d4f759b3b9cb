"""Fault rules: their schedules, each kind's behaviour, explicit vs implicit messages."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import pytest

from harness.sim.catalogue import CATALOGUE, World
from harness.sim.faults import FAULT_KINDS, IMPLICIT_MESSAGE, Clock, FaultEngine, FaultRule, ToolFault

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


def test_the_kinds_are_the_eight_of_the_issue() -> None:
    assert (
        tuple(
            [
                "transient",
                "rate_limited",
                "permanent",
                "bad_argument",
                "too_large",
                "timeout",
                "malformed",
                "silent",
            ]
        )
        == FAULT_KINDS
    )
