"""Number rewriting: how a stale, a wrong-unit and a partial answer differ from the true one.

The rules, one function each: an identifier's number (:data:`IDENTIFIERS`) is never changed;
a stale reading is a little off (:func:`older`); a wrong-unit one is Celsius as Fahrenheit or
any other quantity in hundredths (:func:`other_unit`); a partial one keeps half of each list
and of each long text (:func:`cut`). The in-process faults (:mod:`harness.faults.kinds`) and
the proxy's rewrites of a real server's answers (:mod:`harness.proxy.rewrite`) both use these,
so the two paths cannot drift apart.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


def map_numbers(value: Any, f: Callable[[str, float], float], key: str = "") -> Any:
    """``value`` with every number but an identifier's (:data:`IDENTIFIERS`) mapped by ``f``;
    the in-process faults and the proxy's rewrites make stale and wrong-unit answers with it."""
    if isinstance(value, dict):
        return {k: map_numbers(v, f, k) for k, v in value.items()}
    if isinstance(value, list):
        return [map_numbers(v, f, key) for v in value]
    if isinstance(value, bool) or not isinstance(value, int | float) or key in IDENTIFIERS:
        return value
    out = f(key, float(value))
    return round(out) if isinstance(value, int) else round(out, 2)


IDENTIFIERS = frozenset({"id", "rank", "day", "total", "count", "customer", "amount", "page", "index"})
"""JSON keys whose numbers name or count things: a stale or wrong-unit answer keeps them."""


def older(key: str, v: float) -> float:
    """An older reading of a measured number: a little off."""
    return v - 3 if v >= 3 else v + 3


def other_unit(key: str, v: float) -> float:
    """The number in another unit: Celsius as Fahrenheit, any other quantity in hundredths."""
    return v * 9 / 5 + 32 if key.endswith("_c") else v * 100


def cut(value: Any) -> Any:
    """A partial answer: half of each list, half of each long text, the shape kept."""
    if isinstance(value, dict):
        return {k: cut(v) for k, v in value.items()}
    if isinstance(value, list):
        return [cut(v) for v in value[: len(value) // 2]]
    if isinstance(value, str) and len(value) > 40:
        return value[: len(value) // 2]
    return value
