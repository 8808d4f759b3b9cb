"""Benchmarks of dispatch, serialization and sessions, and the tables and plots made from them.

``tests/benchmarks`` holds the pytest-benchmark cases; they build their workloads
from :mod:`harness.bench.workloads` and tag themselves with
:func:`harness.bench.table.tag`. :mod:`harness.bench.suite` runs them (``harness
bench``), :mod:`harness.bench.table` turns pytest-benchmark's JSON into one tidy
row per figure with its ratio to its floor and to the official SDK, and
:mod:`harness.bench.plots` draws the figures.
"""
