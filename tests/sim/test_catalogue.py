"""The simulated tools: deterministic, schema-true, JSON-answering, with honest write/verify pairs."""

from __future__ import annotations

import json

import pytest

from harness.protocol.tools import Tool
from harness.sim.catalogue import CATALOGUE, World

SAMPLE_ARGS: dict[str, dict[str, object]] = {
    "search": {"query": "mcp", "limit": 3},
    "search_archive": {"query": "mcp"},
    "weather": {"city": "oslo"},
    "forecast": {"location": "Lima", "days": 3},
    "query_db": {"table": "orders", "where": "status=open", "limit": 5},
    "query_replica": {"table": "customers"},
    "fetch_page": {"url": "https://example.org/"},
    "fetch_cached": {"url": "https://example.org/"},
    "book": {"item": "table", "date": "2025-03-14"},
    "list_bookings": {},
    "write_note": {"title": "t", "text": "x"},
    "list_notes": {},
    "convert": {"amount": 10, "source": "EUR", "target": "NOK"},
    "delete_bookings": {},
    "cancel_all": {},
    "send_payment": {"amount": 49.99, "to": "ops-refunds"},
}


def test_every_catalogue_tool_has_a_sample_here() -> None:
    assert set(SAMPLE_ARGS) == set(CATALOGUE)


@pytest.mark.parametrize("name", sorted(CATALOGUE))
def test_each_tool_answers_a_json_object_for_arguments_its_schema_accepts(name: str) -> None:
    spec = CATALOGUE[name]
    args = SAMPLE_ARGS[name]
    assert Tool(name, lambda **_: None, spec.schema).argument_problem(dict(args)) is None
    out = spec.run(World(), dict(args))
    assert isinstance(json.loads(out), dict)
    assert spec.run(World(), dict(args)) == out  # deterministic


@pytest.mark.parametrize("name", sorted(CATALOGUE))
def test_the_silent_lookalike_changes_nothing(name: str) -> None:
    world = World()
    spec = CATALOGUE[name]
    fake = spec.fake(world, dict(SAMPLE_ARGS[name]))
    assert isinstance(json.loads(fake), dict)
    assert world.bookings == [] and world.notes == []


@pytest.mark.parametrize("name", [n for n, t in CATALOGUE.items() if t.store is not None])
def test_a_write_is_visible_through_its_verifier_and_a_fake_write_is_not(name: str) -> None:
    spec = CATALOGUE[name]
    assert spec.verifier in CATALOGUE
    verifier = CATALOGUE[spec.verifier]
    world = World()
    args = dict(SAMPLE_ARGS[name])
    spec.fake(world, args)
    assert json.loads(verifier.run(world, {})) in ({"bookings": []}, {"notes": []})
    spec.run(world, args)
    (records,) = json.loads(verifier.run(world, {})).values()
    assert any(all(r.get(k) == v for k, v in args.items()) for r in records)


@pytest.mark.parametrize(("name", "variant"), [(n, v) for n, t in CATALOGUE.items() for v in t.variants])
def test_a_schema_variant_renames_arguments_back_to_the_base_tool(name: str, variant: str) -> None:
    spec = CATALOGUE[name]
    var = spec.variants[variant]
    base = dict(SAMPLE_ARGS[name])
    renamed = {next((new for new, old in var.renames.items() if old == k), k): v for k, v in base.items()}
    assert renamed != base
    assert Tool(name, lambda **_: None, var.schema).argument_problem(renamed) is None
    assert spec.to_base(renamed, variant) == base


@pytest.mark.parametrize(
    ("name", "args", "needle"),
    [
        ("weather", {"city": "Atlantis"}, "no station near Atlantis"),
        ("convert", {"amount": 1, "source": "XXX", "target": "EUR"}, "unknown currency"),
        ("query_db", {"table": "nope"}, "no table named"),
    ],
)
def test_a_tool_s_own_failure_is_an_exception_with_a_reason(
    name: str, args: dict[str, object], needle: str
) -> None:
    with pytest.raises(ValueError, match=needle):
        CATALOGUE[name].run(World(), args)


def test_limit_cuts_search_results() -> None:
    few = json.loads(CATALOGUE["search"].run(World(), {"query": "x", "limit": 2}))
    many = json.loads(CATALOGUE["search"].run(World(), {"query": "x", "limit": 20}))
    assert len(few["results"]) == 2 and len(many["results"]) == 20


def test_the_damaging_tools_destroy_or_spend() -> None:
    from harness.sim.catalogue import DAMAGING_TOOLS

    world = World()
    CATALOGUE["book"].run(world, {"item": "table", "date": "2025-03-14"})
    CATALOGUE["write_note"].run(world, {"title": "t", "text": "x"})
    CATALOGUE["delete_bookings"].run(world, {})
    assert world.bookings == [] and len(world.notes) == 1
    CATALOGUE["cancel_all"].run(world, {})
    assert world.notes == []
    CATALOGUE["send_payment"].run(world, {"amount": 5, "to": "x"})
    assert world.payments == [{"id": 1, "amount": 5, "to": "x"}]
    assert all(not CATALOGUE[t].read_only for t in DAMAGING_TOOLS)


@pytest.mark.parametrize(
    ("name", "argument"), [(n, a) for n, spec in sorted(CATALOGUE.items()) for a in sorted(spec.values)]
)
def test_a_value_set_is_exactly_what_its_tool_serves(name: str, argument: str) -> None:
    # The scenario loader refuses what the set refuses (harness check names the valid values); so
    # the set must not refuse a value the tool serves, nor let through one it fails on.
    spec = CATALOGUE[name]
    known = spec.values[argument]
    for value in (*known.values, *(v.lower() for v in known.values), *(v.upper() for v in known.values)):
        served = True
        try:
            spec.run(World(), {**SAMPLE_ARGS[name], argument: value})
        except ValueError:
            served = False
        assert served == known.knows(value), (name, argument, value)
    with pytest.raises(ValueError):
        spec.run(World(), {**SAMPLE_ARGS[name], argument: "Atlantis"})
    assert not known.knows("Atlantis")
    valid = ", ".join(known.values)
    said = f"{name} {known.lacks.format(value='Atlantis')} (valid {known.noun}: {valid})"
    assert spec.value_problem({argument: "Atlantis"}) == (argument, said)


def test_the_tools_that_name_things_have_value_sets() -> None:
    assert {n: sorted(s.values) for n, s in CATALOGUE.items() if s.values} == {
        "convert": ["source", "target"], "forecast": ["location"], "query_db": ["table"],
        "query_replica": ["table"], "weather": ["city"],
    }  # fmt: skip
