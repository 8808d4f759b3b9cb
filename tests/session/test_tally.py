"""A session's counts have one name each: the row column's (issue 47)."""

from __future__ import annotations

import dataclasses
import typing

from harness.session import Tally
from harness.session.row import SessionResult
from harness.session.simulated import run_session


def _base(hint: object) -> object:
    origin = typing.get_origin(hint)
    if origin is not None:
        return (origin.__name__.lower().replace("mapping", "dict"), typing.get_args(hint))
    return hint


def test_every_count_is_a_row_field_of_the_same_name_and_type() -> None:
    row = typing.get_type_hints(SessionResult)
    counts = typing.get_type_hints(Tally)
    missing = sorted(set(counts) - set(row))
    assert not missing, f"counts that are no column of the row: {missing}"
    for name, hint in counts.items():
        assert _base(hint) == _base(row[name]), name


def test_the_row_takes_the_tally_as_it_is() -> None:
    """Every count the loop tallied reaches the row unchanged, under its own name."""
    result = run_session("flaky_weather", "reader", "collapse", 4)
    row = dataclasses.asdict(result)
    assert row["tool_calls"] > 0 and sum(row["errors_rpc"].values()) > 0  # a session that counted
    tally = Tally(**{f.name: row[f.name] for f in dataclasses.fields(Tally)})
    assert tally.columns() == {f.name: row[f.name] for f in dataclasses.fields(Tally)}


def test_columns_copies_the_mappings() -> None:
    tally = Tally(faults={"timeout": 1})
    columns = tally.columns()
    tally.faults["timeout"] += 1
    assert columns["faults"] == {"timeout": 1}
