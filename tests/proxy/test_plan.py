"""The faults file: the scenario's [[faults]] and [[events]] tables, checked at load and against the tools."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from harness.errors import UserError
from harness.proxy import load_plan, parse_plan
from harness.proxy.plan import as_catalogue_tool, build_engine
from harness.seeding import derive_seed, np_random

TOOLS = {
    "add": {"name": "add", "inputSchema": {"type": "object", "properties": {"x": {"type": "integer"}}}},
    "get": {
        "name": "get",
        "inputSchema": {"type": "object", "properties": {"q": {"type": "string"}}},
        "annotations": {"readOnlyHint": True},
    },
}


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("[x", "f.toml: toml:"),
        ("tools = ['a']", "f.toml: tools: unknown key (valid here: description, faults, events"),
        ("description = 'nothing'", "no [[faults]] or [[events]] tables"),
        (
            "[[faults]]\nkind = 'transiant'\ntool = 'a'\nrate = 0.1",
            "faults[0].kind: unknown fault kind 'transiant'",
        ),
        (
            "[[faults]]\nkind = 'transient'\ntool = 'a'\nrate = 1.5",
            "faults[0].rate: must be a number between 0 and 1, got 1.5",
        ),
        ("[[faults]]\nkind = 'transient'\ntool = 'a'", "faults[0].rate: give exactly one of rate"),
        (
            "[[faults]]\nkind = 'transient'\ntool = 'a'\nrate = 0.1\nmessage = '{mood}'",
            "unknown placeholder {mood}",
        ),
        ("[[faults]]\nkind = 'silent'\ntool = 'a'\nrate = 0.1\nexplicit = true", "it cannot be explicit"),
        (
            "[[faults]]\nkind = 'schema_drift'\ntool = 'a'\nrate = 0.1",
            "'v2' is not a catalogue variant of 'a'",
        ),
        (
            "[[events]]\nkind = 'vanish'\ntool = 'a'\nat_call = 1",
            "events[0].kind: unknown event kind 'vanish'",
        ),
        (
            "[[events]]\nkind = 'remove_tool'\ntool = 'a'",
            "events[0].at_step: give exactly one of at_step and at_call",
        ),
        ("[[events]]\nkind = 'remove_tool'\ntool = 'a'\nat_call = 0", "events[0].at_call: must be between 1"),
        ("[[events]]\nkind = 'change_schema'\ntool = 'a'\nat_call = 1", "events[0].variant: missing"),
        (
            "[[events]]\nkind = 'remove_tool'\ntool = 'a'\nat_call = 1\nvariant = 'v2'",
            "only change_schema events",
        ),
        (
            "[[events]]\nkind = 'change_schema'\ntool = 'a'\nat_call = 1\nvariant = { x = 'y', z = 'y' }",
            "two arguments renamed to one name",
        ),
        (
            "[[events]]\nkind = 'remove_tool'\ntool = 'a'\nat_call = 1\nwhen = 2",
            "events[0].when: unknown key",
        ),
    ],
)
def test_a_mistake_is_one_line_naming_file_and_field(tmp_path: Path, text: str, says: str) -> None:
    path = tmp_path / "f.toml"
    path.write_text(text)
    with pytest.raises(UserError) as info:
        load_plan(path)
    message = str(info.value)
    assert "\n" not in message and says in message and message.startswith(str(path))


def test_a_missing_file_is_a_user_error(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="no such faults file"):
        load_plan(tmp_path / "nope.toml")


def test_fault_tables_read_like_a_scenarios() -> None:
    plan = parse_plan(
        {
            "faults": [
                {
                    "kind": "bad_argument",
                    "tool": "add",
                    "calls": [2, 1],
                    "argument": "x",
                    "valid": 3,
                    "quality": "vague",
                }
            ]
        }
    )
    (rule,) = plan.faults
    assert (rule.kind, rule.tool, rule.calls, rule.argument, rule.valid, rule.said) == (
        "bad_argument",
        "add",
        (1, 2),
        "x",
        3,
        "vague",
    )


class TestAgainstTheRealTools:
    def test_a_tool_the_server_lacks_is_a_warning_listing_its_tools(self) -> None:
        checked = parse_plan({"faults": [{"kind": "transient", "tool": "nope", "rate": 0.1}]}).check(TOOLS)
        assert checked.warnings == [
            "<faults>: tool 'nope' is not a tool of this server (its tools: add, get); "
            "its rules and events wait for a tool of that name"
        ]
        assert not checked.rules_off

    def test_an_argument_the_tool_lacks_switches_the_rule_off(self) -> None:
        plan = parse_plan(
            {"faults": [{"kind": "too_large", "tool": "get", "rate": 0.1, "argument": "q", "max": 3}]}
        )
        checked = plan.check(TOOLS)
        assert (
            checked.rules_off == {0}
            and "get has no numeric argument 'q' (numeric: none)" in checked.warnings[0]
        )

    def test_a_write_fault_on_a_read_only_tool_is_a_warning_only(self) -> None:
        checked = parse_plan({"faults": [{"kind": "post_commit", "tool": "get", "rate": 0.1}]}).check(TOOLS)
        assert "readOnlyHint: true" in checked.warnings[0] and not checked.rules_off

    def test_a_rename_of_an_argument_the_tool_lacks_switches_the_event_off(self) -> None:
        plan = parse_plan(
            {"events": [{"kind": "change_schema", "tool": "add", "at_call": 1, "variant": {"y": "z"}}]}
        )
        checked = plan.check(TOOLS)
        assert checked.events_off == {0} and "add has no argument 'y'" in checked.warnings[0]


def test_each_call_draws_from_a_generator_seeded_by_seed_tool_and_index() -> None:
    plan = parse_plan(
        {
            "faults": [
                {"kind": "transient", "tool": "add", "rate": 0.5},
                {"kind": "timeout", "tool": "add", "rate": 0.5},
            ]
        }
    )
    engine = build_engine(plan, 11, 30.0)
    for call in (1, 2, 17):
        expected = np_random(derive_seed("proxy-faults", 11, "add", call)).random(2).tolist()
        assert engine.draws("add", call) == expected
        assert engine.scheduled(0, call) == (expected[0] < 0.5)
        assert engine.scheduled(1, call) == (expected[1] < 0.5)


def test_a_banked_text_is_picked_by_the_call_index_as_in_a_session() -> None:
    # Misleading and adversarial texts come from banks of many wordings, one picked per (seed,
    # rule, call index). The proxy counts calls itself: the engine must pick with that index,
    # not with a count it never advances (which gave every call the bank's same wording).
    plan = parse_plan(
        {
            "faults": [
                {
                    "kind": "transient",
                    "tool": "add",
                    "rate": 1.0,
                    "quality": "adversarial",
                    "source": "fastmcp",
                }
            ]
        }
    )
    tool = as_catalogue_tool("add", TOOLS["add"])

    def said(engine: Any, call: int) -> str | None:
        rule = engine.decide(tool, {"x": 1}, call, 0.0)  # a transient fault passes the call after it
        return None if rule is None else str(engine.text(rule, tool, {"x": 1}, 0.0))

    engine = build_engine(plan, 11, 30.0)
    texts = {call: said(engine, call) for call in range(1, 17)}
    fired = {call: text for call, text in texts.items() if text is not None}
    assert len(fired) >= 4 and len(set(fired.values())) > 1
    call, text = max(fired.items())
    assert said(build_engine(plan, 11, 30.0), call) == text  # the index decides the wording


def test_the_package_face_names_its_api_sorted() -> None:
    import harness.proxy as face

    assert face.__all__ == sorted(face.__all__)
    assert all(hasattr(face, name) for name in face.__all__)
