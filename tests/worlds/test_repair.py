"""On a world the scripted agents repair with the text, the tool list and earlier results only.

The harness's own fixes (``scripted_agents.fixes``: a stated form met by rewriting the sent value,
the case and date rewrites that undo what the families write) must never run on a world; here
they are made to raise, and every agent runs world sessions of every condition under every
strategy without breaking. The other tests show the moves themselves in a session.
"""

from __future__ import annotations

import io
import json
from typing import Any

import pytest

from harness.worlds import events
from harness.worlds.scenario import list_world_scenarios, load_world
from harness.worlds.session import run_world_session

AGENTS = ("naive", "retry", "reader", "refresher", "blind", "oracle")


def _names() -> list[str]:
    admitted = [a.scenario for a in events.admissions() if a.status == "admitted"]
    return [*list_world_scenarios()[::6], *admitted[::9]]


def test_no_world_session_ever_reaches_the_harness_s_own_fixes(monkeypatch: pytest.MonkeyPatch) -> None:
    import scripted_agents.base
    import scripted_agents.fixes

    def forbidden(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("a world session reached scripted_agents.fixes")

    monkeypatch.setattr(scripted_agents.fixes, "_rewrites", forbidden)
    monkeypatch.setattr(scripted_agents.fixes, "fix_value", forbidden)
    monkeypatch.setattr(scripted_agents.base, "fix_value", forbidden)
    for name in _names():
        for agent in AGENTS:
            for strategy in ("is_error", "masked", "collapse"):
                result = run_world_session(load_world(name), agent, strategy, 0)
                assert result.status != "harness_error", (name, agent, strategy, result.error)


def _calls(name: str, agent: str, strategy: str) -> list[tuple[str, dict[str, Any]]]:
    buffer = io.BytesIO()
    run_world_session(load_world(name), agent, strategy, 0, trace=buffer)
    lines = [json.loads(line) for line in buffer.getvalue().splitlines()]
    return [
        (line["world_call"]["function"], line["world_call"]["args"]) for line in lines if "world_call" in line
    ]


def test_the_reader_re_discovers_a_renamed_channel_through_the_listing_and_uses_the_new_name_after() -> None:
    name = events.event_name("slack", "user_task_5", "channel_renamed_similar")
    change = events.admission("slack", "user_task_5", "channel_renamed_similar").change
    assert change is not None and change.new is not None
    calls = _calls(name, "reader", "is_error")
    failed = calls.index(("get_users_in_channel", {"channel": change.old}))
    assert calls[failed + 1] == ("get_channels", {})
    assert calls[failed + 2] == ("get_users_in_channel", {"channel": change.new})
    assert ("send_channel_message", {"channel": change.old}) not in [
        (f, {"channel": a.get("channel")}) for f, a in calls
    ]


def test_a_moved_event_is_found_again_by_the_same_search_without_its_date() -> None:
    name = events.event_name("workspace", "user_task_0", "event_moved_similar")
    calls = _calls(name, "reader", "is_error")
    assert calls[0][0] == calls[1][0] == "search_calendar_events"
    assert "date" in calls[0][1] and "date" not in calls[1][1] and calls[2][1]["date"] != calls[0][1]["date"]


@pytest.mark.parametrize("name", [a.scenario for a in events.admissions() if a.status == "admitted"][::8])
def test_with_the_reason_hidden_the_reader_moves_exactly_as_the_blind_control(name: str) -> None:
    # Under collapse behind a typical host no text reaches the agent: the reader has nothing to
    # read and takes the blind control's fixed order, call for call.
    assert (
        _calls(name, "reader", "collapse")
        == _calls(name, "blind", "collapse")
        == _calls(name, "blind", "is_error")
    )


def test_the_blind_control_reads_nothing_anywhere() -> None:
    for name in _names()[:8]:
        assert run_world_session(load_world(name), "blind", "is_error", 0).messages_read == 0


def _blind_calls(name: str, **knobs: Any) -> list[tuple[str, dict[str, Any]]]:
    buffer = io.BytesIO()
    run_world_session(load_world(name), "blind", "is_error", 0, trace=buffer, agent_params=knobs)
    lines = [json.loads(line) for line in buffer.getvalue().splitlines()]
    return [
        (line["world_call"]["function"], line["world_call"]["args"]) for line in lines if "world_call" in line
    ]


@pytest.mark.parametrize("retries", [0, 1, 3])
@pytest.mark.parametrize("order", ["retry_first", "rediscover_first"])
def test_a_member_of_the_blind_family_retries_as_many_times_as_it_is_told_in_its_order(
    order: str, retries: int
) -> None:
    # A mechanism of the control family: the failing planned call is made once and then
    # `retries` times more, before the discovery call (retry_first) or after it (rediscover_first).
    name = events.event_name("slack", "user_task_5", "channel_renamed_dissimilar")
    change = events.admission("slack", "user_task_5", "channel_renamed_dissimilar").change
    assert change is not None
    calls = _blind_calls(name, order=order, retry_budget=retries, backoff="none")
    failing = ("get_users_in_channel", {"channel": change.old})
    first = calls.index(failing)
    listing = calls.index(("get_channels", {}), first)
    assert calls.count(failing) == 1 + retries
    if order == "retry_first":
        assert calls[first:listing] == [failing] * (1 + retries)
    else:
        assert listing == first + 1 and calls[listing + 1 :] == [failing] * retries
