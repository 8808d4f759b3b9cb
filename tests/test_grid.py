"""Grid order and positions: ``Grid.index`` is where ``iter_cells`` puts a cell."""

from __future__ import annotations

import dataclasses
import tracemalloc

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.grid import Grid


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


@pytest.mark.parametrize("seeds", [(0, 1, 2), (5, 9, 2)], ids=["consecutive", "scattered"])
def test_a_seed_outside_the_grid_has_no_position(seeds: tuple[int, ...]) -> None:
    grid = _grid(seeds)
    foreign = dataclasses.replace(next(grid.iter_cells()), seed=3)
    with pytest.raises(KeyError):
        grid.index(foreign)


def test_consecutive_seeds_cost_no_index_memory() -> None:
    # A million-session grid has a quarter of a million seeds; their positions are computed.
    grid = _grid(tuple(range(250_000)))
    tracemalloc.start()
    try:
        grid.index(next(grid.iter_cells()))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 1_000_000
