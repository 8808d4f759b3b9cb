"""The scripted agents' policies are tested apart from how text is read.

What an agent does with a reading is its policy; what a text says is :mod:`harness.reading`'s
business, measured on real servers' errors (tests/reading, docs/reading.md). So here the texts
the tests show an agent are read by a fixed table, as a careful person would read them, and an
agent's answer to each is what is tested. Any other text reads as saying nothing.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator, Mapping
from typing import Any

import pytest

import scripted_agents.base as base
from harness.reading import Reading

READINGS: dict[str, Reading] = {
    "temporary failure in query_db: upstream returned 503; try again": Reading(
        "transient", None, None, None, True, None
    ),
    "rate limited: too many requests to query_db; retry after 5 s": Reading(
        "rate_limited", None, None, 5.0, True, None
    ),
    "query_db is permanently unavailable: its upstream service was retired": Reading(
        "permanent", None, None, None, True, None
    ),
    "invalid argument 'table': 'Orders' is not accepted; expected form 'orders'": Reading(
        "bad_argument", "table", "'orders'", None, True, None
    ),
    "result too large for one response; narrow the request: set 'limit' to at most 10": Reading(
        "bad_argument", "limit", "at most 10", None, True, None
    ),
    "rate limited: too many requests; retry after 5 s": Reading("rate_limited", None, None, 5.0, True, None),
    "query_db timed out after 30 s without an answer": Reading("timeout", None, None, None, True, None),
    "invalid arguments for tool 'query_db': missing required argument 'source'": Reading(
        "missing_argument", "source", None, None, True, None
    ),
    "weather is permanently unavailable": Reading("permanent", None, None, None, True, None),
    "book failed: temporary failure; try again": Reading("transient", None, None, None, True, None),
}
"""Each test text (without the server's ``ERROR: `` prefix) and what it says."""

UNKNOWN = Reading("unknown", None, None, None, False, None)


def table_read(
    text: str | None, *, arguments: Mapping[str, Any] | None = None, tools: Collection[str] | None = None
) -> Reading:
    if not text:
        return UNKNOWN
    return READINGS.get(text.removeprefix("ERROR: "), UNKNOWN)


@pytest.fixture(autouse=True)
def _read_by_table(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setattr(base, "read_memo", table_read)
    yield
