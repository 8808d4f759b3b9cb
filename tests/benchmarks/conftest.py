"""Benchmark-suite setup: a case that fails must not take the others' figures with it.

pytest-benchmark leaves a case out of its JSON when the timed function raises an
``Exception``; a pytest outcome (``pytest.fail``, pytest-timeout's timeout) is a
``BaseException``, and the case then stays in with no timings, which crashes the
whole report at the end of the run. Marking it as failed here keeps every other
figure, and pytest still reports the failure.
"""

from __future__ import annotations

from collections.abc import Generator

import pytest


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, None, None]:
    try:
        return (yield)
    except BaseException:
        bench = getattr(item, "funcargs", {}).get("benchmark")
        if bench is not None:
            bench.has_error = True
        raise
