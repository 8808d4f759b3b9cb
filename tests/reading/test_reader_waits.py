"""A wait the reader reports is one an agent can wait: a finite number of seconds, 0 or more."""

from __future__ import annotations

import math

import pytest

from harness.reading import read

ENDLESS = "9" * 400
"""A number of seconds that float() reads as infinity."""


@pytest.mark.parametrize(
    "text",
    [
        f"rate limited: retry after {ENDLESS} seconds",
        f"Too many requests. Retry-After: {ENDLESS}",
        "rate limited: retry after -5 seconds",
        "Too many requests. Retry-After: -5",
        "rate limit exceeded, try again in -1h30m",
        "rate limit exceeded, try again in \u22125 seconds",
    ],
)
def test_a_wait_that_is_negative_or_endless_reads_as_no_wait(text: str) -> None:
    assert read(text).retry_after_s is None


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("rate limited: retry after 5 seconds", 5.0),
        ("Too many requests. Retry-After: 0", 0.0),
        ("rate limit exceeded, try again in 1h30m", 5400.0),
        ("rate limit: retry after 12.5 s (quota-5 reached)", 12.5),
    ],
)
def test_a_finite_wait_of_zero_or_more_is_read_as_it_is_written(text: str, seconds: float) -> None:
    wait = read(text).retry_after_s
    assert wait is not None and math.isfinite(wait)
    assert wait == seconds
