"""Grid order and positions: ``Grid.index`` is where ``iter_cells`` puts a cell."""

from __future__ import annotations

import dataclasses
import tracemalloc
from collections.abc import Callable, Sequence

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.batch.grid import Grid


def _grid(seeds: tuple[int, ...]) -> Grid:
    return Grid(
        scenarios=("a", "b"),
        agents=("reader",),
        strategies=("is_error", "collapse"),
        hosts=("typical",),
        seeds=seeds,
        sweeps=(("faults.rate", (0, 0.5)),),
    )


@given(
    st.one_of(
        st.builds(lambda start, n: tuple(range(start, start + n)), st.integers(-50, 50), st.integers(1, 12)),
        st.lists(st.integers(-1000, 1000), min_size=1, max_size=12, unique=True).map(tuple),
    )
)
def test_index_is_the_position_in_grid_order(seeds: tuple[int, ...]) -> None:
    grid = _grid(seeds)
    assert [grid.index(cell) for cell in grid.iter_cells()] == list(range(len(grid)))


@given(
    st.lists(st.integers(-1000, 1000), min_size=1, max_size=12, unique=True).map(tuple),
    st.integers(1, 14),
    st.booleans(),
)
def test_blocks_hold_every_cell_once_and_all_strategies_of_a_seed_together(
    seeds: tuple[int, ...], per_block: int, consecutive: bool
) -> None:
    grid = _grid(tuple(range(len(seeds))) if consecutive else seeds)
    blocks = list(grid.iter_blocks(per_block))
    flat = [cell for block in blocks for cell in block]
    assert sorted(map(grid.index, flat)) == list(range(len(grid)))  # each cell exactly once
    for block in blocks:
        positions = [grid.index(cell) for cell in block]
        assert positions == sorted(positions)  # grid order within a block
        assert len({c.seed for c in block}) <= per_block
    owner = {}
    for n, block in enumerate(blocks):
        for cell in block:  # the baseline's key: the cell but for its strategy
            assert owner.setdefault(dataclasses.replace(cell, strategy=""), n) == n


@pytest.mark.parametrize("seeds", [(0, 1, 2), (5, 9, 2)], ids=["consecutive", "scattered"])
def test_a_seed_outside_the_grid_has_no_position(seeds: tuple[int, ...]) -> None:
    grid = _grid(seeds)
    foreign = dataclasses.replace(next(grid.iter_cells()), seed=3)
    with pytest.raises(KeyError):
        grid.index(foreign)


@pytest.mark.parametrize("given", [tuple, list, lambda r: r], ids=["tuple", "list", "range"])
def test_consecutive_seeds_cost_no_memory_in_any_form(given: Callable[[range], Sequence[int]]) -> None:
    # A million-session grid has a quarter of a million seeds: they are kept as a range, their
    # positions are computed, and walking the cells builds no tuple of them.
    seeds = given(range(250_000))
    tracemalloc.start()
    try:
        grid = _grid(seeds)
        del seeds
        cells = grid.iter_cells()
        for _ in range(1000):
            grid.index(next(cells))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert grid.seeds == range(250_000)
    assert peak < 1_000_000


@pytest.mark.parametrize(
    ("seeds", "kept"),
    [((0, 1, 2), range(3)), ([4, 5], range(4, 6)), ((), range(0)), ((5, 9, 2), (5, 9, 2)), ((0, 2), (0, 2))],
)
def test_consecutive_seeds_are_kept_as_a_range_and_others_as_given(seeds: object, kept: object) -> None:
    grid = _grid(seeds)  # type: ignore[arg-type]
    assert grid.seeds == kept and type(grid.seeds) is type(kept)
    assert grid == _grid(kept)  # type: ignore[arg-type]
    assert Grid.from_json(grid.to_json()) == grid


def test_the_manifest_writes_a_span_for_consecutive_seeds_and_reads_both_forms() -> None:
    grid = _grid(tuple(range(3, 8)))
    data = grid.to_json()
    assert data["seeds"] == {"start": 3, "stop": 8}
    assert Grid.from_json({**data, "seeds": [3, 4, 5, 6, 7]}) == grid  # as harness-results/1 wrote it
    assert _grid((5, 9, 2)).to_json()["seeds"] == [5, 9, 2]


@pytest.mark.parametrize(
    "seeds",
    [{"start": 5, "stop": 2}, {"start": -1, "stop": 2}, {"start": "0", "stop": 2}, {"stop": 2}, "0-5"],
    ids=["backwards", "negative", "string", "no-start", "not-a-list"],
)
def test_a_broken_seed_span_is_a_clear_manifest_error(seeds: object) -> None:
    from harness.errors import UserError

    with pytest.raises(UserError, match=r"manifest\.json: grid: unreadable"):
        Grid.from_json({**_grid((0,)).to_json(), "seeds": seeds})


def test_an_agent_knob_sweep_is_an_axis_like_any_other() -> None:
    from harness.batch.grid import parse_sets

    sweeps = parse_sets(["agent.backoff=fixed,exponential", "agent.retry_budget=1,2", "faults.rate=0,0.5"])
    assert sweeps == (
        ("agent.backoff", ("fixed", "exponential")),
        ("agent.retry_budget", (1, 2)),
        ("faults.rate", (0, 0.5)),
    )
    grid = Grid(("s",), ("reader",), ("is_error",), ("typical",), range(2), sweeps)
    assert len(grid) == 2 * 2 * 2 * 2 and grid.param_names == (
        "agent.backoff",
        "agent.retry_budget",
        "faults.rate",
    )
    assert Grid.from_json(grid.to_json()) == grid
    cells = grid.cells()
    assert [grid.index(c) for c in cells] == list(range(len(cells)))
    assert (
        cells[0].label()
        == "s__reader__is_error__typical__0__agent.backoff=fixed__agent.retry_budget=1__faults.rate=0"
    )
