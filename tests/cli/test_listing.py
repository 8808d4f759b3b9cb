"""``harness list``: scenarios, agents, strategies; ``--tools`` and ``--faults``, generated from the code."""

from __future__ import annotations

import json

import pytest

from harness.cli.main import main
from harness.faults.kinds import FAULT_KIND_TABLE, FAULT_KINDS, RULE_KEYS
from harness.protocol.strategies import STRATEGIES
from harness.scenarios.scenario import list_scenarios
from harness.sim.catalogue import CATALOGUE


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    try:
        rc = main(argv)
    except SystemExit as exc:
        rc = exc.code if isinstance(exc.code, int) else 1
    return int(rc or 0), capsys.readouterr().out


@pytest.fixture(autouse=True)
def eighty_columns(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "80")


def test_json_keeps_its_keys_and_adds_tools_and_faults(capsys: pytest.CaptureFixture[str]) -> None:
    rc, out = run(["list", "--json"], capsys)
    assert rc == 0
    data = json.loads(out)
    keys = ["scenarios", "agents", "strategies", "families", "tools", "faults", "qualities", "agent_knobs"]
    assert list(data) == [*keys, "worlds"]  # the world scenarios last (empty without the extra)
    assert list(data["scenarios"]) == list_scenarios() and list(data["strategies"]) == list(STRATEGIES)
    assert list(data["tools"]) == list(CATALOGUE) and list(data["faults"]) == list(FAULT_KINDS)


def test_json_tools_carry_each_argument_schema_and_the_variants(capsys: pytest.CaptureFixture[str]) -> None:
    rc, out = run(["list", "--tools", "--json"], capsys)
    tools = json.loads(out)["tools"]
    assert rc == 0 and list(json.loads(out)) == ["tools"]
    for name, spec in CATALOGUE.items():
        listed = tools[name]
        assert listed["description"] == spec.description and listed["read_only"] is spec.read_only
        props = spec.schema["properties"]
        assert list(listed["arguments"]) == list(props)
        for arg, prop in props.items():
            values = {"values": list(spec.values[arg].values)} if arg in spec.values else {}
            assert listed["arguments"][arg] == {**prop, "required": arg in spec.schema["required"], **values}
        assert list(listed["variants"]) == list(spec.variants)
    assert tools["search"]["variants"]["v2"]["renames"] == {"q": "query"}
    # The values a tool knows, under the variant's name too (weather v2 takes location for city).
    assert tools["weather"]["arguments"]["city"]["values"][:2] == ["Oslo", "Paris"]
    assert tools["weather"]["variants"]["v2"]["arguments"]["location"]["values"][:2] == ["Oslo", "Paris"]


def test_json_faults_carry_each_kind_s_keys_and_defaults(capsys: pytest.CaptureFixture[str]) -> None:
    rc, out = run(["list", "--faults", "--json"], capsys)
    faults = json.loads(out)["faults"]
    assert rc == 0 and list(faults) == list(FAULT_KINDS)
    for name, kind in FAULT_KIND_TABLE.items():
        listed = faults[name]
        assert (listed["does"], listed["recovers"], listed["raises"]) == (
            kind.does,
            kind.recovers,
            kind.raises,
        )
        assert list(listed["keys"]) == [k.name for k in kind.keys]
        for key in kind.keys:
            entry = listed["keys"][key.name]
            assert entry["required"] is (key.missing is not None) and entry["type"] == key.type
            assert entry.get("default") == (key.default if key.missing is None else None)
    assert faults["transient"]["keys"]["burst"] == {
        "type": "integer",
        "meaning": "consecutive calls that fail",
        "required": False,
        "default": 1,
        "minimum": 1,
        "maximum": 100,
    }
    assert faults["silent"]["can_be_explicit"] is False
    assert {k for k, v in faults.items() if v["retry_fixes"]} == {
        k for k, v in FAULT_KIND_TABLE.items() if v.retry_fixes
    }


def _fits(out: str) -> None:
    assert max(len(line) for line in out.splitlines()) <= 80
    assert "…" not in out  # wrapped, never cut


def test_tools_table_lists_every_tool_and_argument_in_80_columns(
    capsys: pytest.CaptureFixture[str],
) -> None:
    rc, out = run(["list", "--tools"], capsys)
    assert rc == 0
    _fits(out)
    words = set(out.split())
    for name, spec in CATALOGUE.items():
        assert name in words
        assert all(arg in words for arg in spec.schema["properties"])
    assert "scenarios" not in out


def test_faults_table_lists_every_kind_and_key_in_80_columns(capsys: pytest.CaptureFixture[str]) -> None:
    rc, out = run(["list", "--faults"], capsys)
    assert rc == 0
    _fits(out)
    words = set(out.split())
    for name, kind in FAULT_KIND_TABLE.items():
        assert name in words
        assert all(key.name in words for key in kind.keys)
    assert "[[faults]]" in out and all(k in out for k in RULE_KEYS if k != "kind")


def test_plain_list_is_unchanged_and_fits(capsys: pytest.CaptureFixture[str]) -> None:
    rc, out = run(["list"], capsys)
    assert rc == 0
    _fits(out)
    assert "scenarios" in out and "strategies" in out and "fault kinds" not in out


def test_json_lists_the_shipped_families_with_their_summaries(capsys: pytest.CaptureFixture[str]) -> None:
    from harness.scenarios.family import list_families, load_family

    rc, out = run(["list", "--json"], capsys)
    families = json.loads(out)["families"]
    assert rc == 0 and list(families) == list_families() and len(families) >= 4
    assert all(text == load_family(name).summary and text for name, text in families.items())


def test_agent_knobs_and_message_qualities_are_listed(capsys: pytest.CaptureFixture[str]) -> None:
    from harness.faults.kinds import QUALITIES, QUALITY_TEXTS
    from scripted_agents.base import KNOBS
    from scripted_agents.reader import ReaderAgent

    rc, out = run(["list", "--json"], capsys)
    doc = json.loads(out)
    assert rc == 0
    assert set(doc["agent_knobs"]["reader"]) == set(ReaderAgent.knobs)
    assert "exponential" in doc["agent_knobs"]["reader"]["backoff"]
    assert doc["agent_knobs"]["oracle"] == {}  # the oracle takes no knobs
    assert set(doc["qualities"]) == set(QUALITIES)
    assert doc["qualities"]["adversarial"]["text"] == QUALITY_TEXTS["adversarial"]
    assert doc["qualities"]["explicit"]["text"] is None  # each kind's own message
    rc, out = run(["list"], capsys)
    assert "agent knobs" in out and "step_budget" in out and KNOBS["trust"].choices[1] in out
    rc, out = run(["list", "--faults"], capsys)
    assert "message qualities" in out and "misleading" in out
