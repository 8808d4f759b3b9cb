"""Scenario families: deterministic sampling, valid draws, and errors that name file, field and problem."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.scenarios import family as family_module
from harness.scenarios.family import (
    FamilyError,
    drawn,
    family_source,
    list_families,
    load_family,
    load_source,
    sample,
    to_scenario,
    to_toml,
    warm,
    warm_state,
)
from harness.scenarios.scenario import list_scenarios, parse_scenario


def test_at_least_four_families_ship_and_scenario_discovery_ignores_their_folder() -> None:
    assert len(list_families()) >= 4
    assert not set(list_families()) & set(list_scenarios())
    assert len(list_scenarios()) == 15


@pytest.mark.parametrize("name", list_families())
def test_the_same_arguments_give_the_same_bytes_and_another_seed_differs(name: str) -> None:
    family = load_family(name)
    first = [to_toml(d) for _, d in sample(family, 20, 3)]
    again = [to_toml(d) for _, d in sample(load_family(name), 20, 3)]
    other = [to_toml(d) for _, d in sample(family, 20, 4)]
    assert first == again
    assert [n for n, _ in sample(family, 2, 3)] == [f"{family.name}-3-0000", f"{family.name}-3-0001"]
    assert first != other and [t.split("\n", 1)[1] for t in first] != [t.split("\n", 1)[1] for t in other]
    # The first n of a longer draw are the n of a shorter one.
    assert [to_toml(d) for _, d in sample(family, 5, 3)] == first[:5]


@pytest.mark.parametrize("name", list_families())
def test_every_sampled_scenario_validates(name: str) -> None:
    import tomllib

    for scenario_name, data in sample(load_family(name), 60, 11):
        scenario = parse_scenario(tomllib.loads(to_toml(data)))
        assert scenario.name == scenario_name and scenario.task.subgoals
        assert to_scenario(data) == scenario


def test_a_batch_source_gives_back_the_same_scenario() -> None:
    family = load_family("mixed")
    drawn = sample(family, 4, 2)
    scenario = load_source(family_source(family, 4, 2, 3), ())
    assert scenario == to_scenario(drawn[3][1])
    assert load_source(family_source(family, 4, 2, 3), (("max_steps", 7),)).max_steps == 7


def test_a_worker_given_the_parent_s_draws_loads_its_scenarios_without_drawing_them(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """What a pool's workers start with (:func:`harness.batch.worker.start_worker`): the draws
    the parent made to build the grid, so that no worker draws a family again."""
    family = load_family("mixed")
    expected = to_scenario(drawn(family, 4, 2)[3][1])
    state = warm_state()
    source = family_source(family, 4, 2, 3)
    monkeypatch.setattr(family_module, "_DRAWN", {})  # a fresh worker
    load_source.cache_clear()

    def no_drawing(*args: object) -> None:
        raise AssertionError("the worker drew the family again")

    monkeypatch.setattr(family_module, "sample", no_drawing)
    monkeypatch.setattr(family_module, "load_family", no_drawing)
    warm(state)
    try:
        assert load_source(source, ()) == expected
    finally:
        load_source.cache_clear()


def test_a_changed_family_file_is_refused_by_a_run_that_sampled_it(tmp_path: Path) -> None:
    path = tmp_path / "f.toml"
    path.write_text('description = "x"\n[task]\nreads = ["weather"]\n[faults]\nkinds = ["transient"]\n')
    source = family_source(load_family(str(path)), 2, 0, 1)
    path.write_text(path.read_text() + "rate = 0.2\n")
    with pytest.raises(FamilyError, match="has changed since the run sampled it"):
        load_source(source, ())


BROKEN = [
    ('description = "x"\n[task]\nreads = ["wether"]\n', "task.reads", "unknown read tool 'wether'"),
    ('description = "x"\n[task]\nreads = ["book"]\n', "task.reads", "unknown read tool 'book'"),
    ('description = "x"\n[task]\nreads = ["weather"]\nsubgoals = { min = 3, max = 1 }\n', "task.subgoals",
     "min 3 is above max 1"),
    ('description = "x"\n[task]\nreads = ["weather"]\n[faults]\nkinds = ["transient"]\nrate = 1.5\n',
     "faults.rate", "between 0 and 1"),
    ('description = "x"\n[task]\nreads = ["weather"]\n[faults]\nkinds = { transient = -1 }\n',
     "faults.kinds.transient", "a weight must be a positive number"),
    ('description = "x"\n[task]\nreads = ["weather"]\n[faults]\nkinds = ["flaky"]\n', "faults.kinds",
     "unknown fault kind 'flaky'"),
    ('description = "x"\n[task]\nreads = ["weather"]\nwrite_share = 0.5\n', "task.write_share",
     "no write tools are named"),
    ('description = "x"\n[task]\nreads = ["weather"]\n[events]\ncount = 1\n', "events.kinds", "missing"),
    ('description = "x"\nbudget = 3\n[task]\nreads = ["weather"]\n', "budget", "unknown key"),
    ('[task]\nreads = ["weather"]\n', "description", "missing"),
]  # fmt: skip


@pytest.mark.parametrize(("text", "field", "problem"), BROKEN)
def test_a_broken_family_names_file_field_and_problem(
    tmp_path: Path, text: str, field: str, problem: str
) -> None:
    path = tmp_path / "broken.toml"
    path.write_text(text)
    with pytest.raises(FamilyError) as caught:
        load_family(str(path))
    message = str(caught.value)
    assert message.startswith(f"{path}: {field}: ") or message.startswith(f"broken.toml: {field}: "), message
    assert problem in message


def test_a_family_that_cannot_form_a_scenario_says_so(tmp_path: Path) -> None:
    path = tmp_path / "impossible.toml"
    # A silent fault needs a write tool, and this family has only reads.
    path.write_text('description = "x"\n[task]\nreads = ["weather"]\n[faults]\nkinds = ["silent"]\n')
    with pytest.raises(FamilyError, match=r"family: no valid scenario in \d+ draws \(no fault kind"):
        sample(load_family(str(path)), 1, 0)


def test_unknown_family_name_suggests_the_nearest() -> None:
    with pytest.raises(Exception, match="did you mean 'mixed'"):
        load_family("mixd")


def test_a_family_with_quality_draws_every_quality_where_the_kind_allows_it() -> None:
    from harness.faults.kinds import FAULT_KIND_TABLE

    drawn = sample(load_family("message-quality"), 80, 0)
    rules = [f for _, d in drawn for f in d.get("faults", [])]
    assert {f["quality"] for f in rules} == {"explicit", "vague", "absent", "misleading", "adversarial"}
    assert all(FAULT_KIND_TABLE[f["kind"]].raises for f in rules)


def test_every_fault_kind_can_be_drawn_and_validates(tmp_path: Path) -> None:
    from harness.faults.kinds import FAULT_KINDS

    path = tmp_path / "all.toml"
    kinds = ", ".join(f'"{k}"' for k in FAULT_KINDS)
    path.write_text(
        'description = "x"\n[task]\nreads = ["weather", "search", "convert", "query_db"]\n'
        f'writes = ["book"]\nsubgoals = {{ min = 2, max = 4 }}\n[faults]\ncount = 2\nkinds = [{kinds}]\n'
    )
    drawn = sample(load_family(str(path)), 200, 0)
    assert {f["kind"] for _, d in drawn for f in d["faults"]} == set(FAULT_KINDS)


def test_a_family_draws_each_fault_s_source_without_changing_any_other_draw(tmp_path: Path) -> None:
    """Sources come from a generator of their own: the same family with and without a ``source``
    line samples the same scenarios, and only the sources (and, for a real-sourced adversarial
    text, the damaging tools it names) differ."""
    from harness.scenarios.family import FAMILY_DIR, load_family, sample

    text = (FAMILY_DIR / "message-quality.toml").read_text()
    assert "source = {" in text
    bare = tmp_path / "message-quality.toml"  # the name seeds the draws: keep it
    bare.write_text("\n".join(line for line in text.splitlines() if not line.startswith("source = ")))
    with_sources = sample(load_family(str(FAMILY_DIR / "message-quality.toml")), 30, 0)
    without = sample(load_family(str(bare)), 30, 0)
    seen: set[str] = set()
    for (name, a), (_, b) in zip(with_sources, without, strict=True):
        for ra, rb in zip(a.get("faults", []), b.get("faults", []), strict=True):
            seen.add(ra.get("source", "template"))
            assert {k: v for k, v in ra.items() if k != "source"} == rb, name
        extra = [t for t in a["tools"] if t not in b["tools"]]
        assert extra in ([], ["delete_bookings", "cancel_all", "send_payment"]), name
        assert [t for t in a["tools"] if t in b["tools"]] == b["tools"]
    assert seen == {"jsonschema", "pydantic", "fastmcp", "harvested"}
    assert sample(load_family(str(FAMILY_DIR / "message-quality.toml")), 30, 0) == with_sources
