"""From pytest-benchmark's JSON to one tidy row per figure, with its ratios.

Each benchmark tags itself with :func:`tag` (pytest-benchmark keeps the tags in
``extra_info``). A row's rate is ``batch / median`` seconds: the median resists
the noise of a shared machine better than the mean pytest-benchmark calls
``ops``. ``ratio_to_floor`` divides a path's rate by the rate of the row its
``floor`` names (same messages, same codec, nothing else);
``ratio_to_official_sdk`` divides by the row its ``peer`` names, and
``ratio_to_baseline`` by its ``baseline`` (two workers against one). A case that
times both sides itself, interleaved so that a shared machine's drift falls on
both alike (the scaling cases), reports ``measured_ratio``, which is its
``ratio_to_baseline``. A row whose floor or peer did not run gets no ratio rather
than a wrong one.

The summary names the issue's targets and whether this run met them; nothing
here asserts a speed.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import pandas as pd

TAG_FIELDS: tuple[str, ...] = (
    "key",
    "group",
    "op",
    "layer",
    "codec",
    "tools",
    "paginated",
    "payload_bytes",
    "depth",
    "workers",
    "sessions",
    "concurrency",
    "requests_per_session",
    "unique_per_session",
    "batch",
    "floor",
    "peer",
    "baseline",
)
"""What a benchmark may say about itself; ``key`` (unique), ``group``, ``op`` and ``layer`` are required."""

_REQUIRED_TAGS = ("key", "group", "op", "layer")

COLUMNS: tuple[str, ...] = (
    *TAG_FIELDS[:-3],
    "rounds",
    "median_s",
    "mean_s",
    "stddev_s",
    "min_s",
    "ops_per_s",
    "floor",
    "floor_ops_per_s",
    "ratio_to_floor",
    "peer",
    "peer_ops_per_s",
    "ratio_to_official_sdk",
    "baseline",
    "ratio_to_baseline",
    "peak_rss_mb",
    "peak_rss_run_mb",
    "name",
)
"""The tidy table's columns, in order."""


MEASURED_FIELDS: tuple[str, ...] = (
    "peak_rss_mb",
    "peak_rss_run_mb",
    "measured_ratio",
    "seconds_1",
    "seconds_2",
    "latency_s",
    "requests",
)
"""What a case may record beside its timing: peak memory (over the whole case, and before a batch
writes its ``sessions.parquet``), and a ratio it timed itself
(with the per-round seconds of each side, kept in the JSON for whoever checks it)."""


def tag(benchmark: Any, **fields: Any) -> None:
    """Describe the benchmark about to run (stored in pytest-benchmark's ``extra_info``)."""
    unknown = set(fields) - set(TAG_FIELDS) - set(MEASURED_FIELDS)
    if unknown:
        raise ValueError(f"unknown benchmark tag(s): {', '.join(sorted(unknown))}")
    missing = [f for f in _REQUIRED_TAGS if not fields.get(f)]
    if missing:
        raise ValueError(f"benchmark tag(s) missing: {', '.join(missing)}")
    benchmark.extra_info.update(fields)


def tidy(report: Mapping[str, Any]) -> pd.DataFrame:
    """One row per tagged benchmark in a pytest-benchmark JSON ``report``, ratios filled in."""
    rows: list[dict[str, Any]] = []
    ratios: list[float] = []
    seen: set[str] = set()
    for bench in report.get("benchmarks", []):
        info = bench.get("extra_info") or {}
        if not info.get("key"):
            continue  # an untagged benchmark is not part of the suite's table
        key = str(info["key"])
        if key in seen:
            raise ValueError(f"two benchmarks share the key {key!r}")
        seen.add(key)
        stats = bench["stats"]
        batch = int(info.get("batch") or 1)
        median = float(stats["median"])
        row: dict[str, Any] = {f: info.get(f) for f in TAG_FIELDS}
        row["batch"] = batch
        row.update(
            rounds=int(stats["rounds"]),
            median_s=median / batch,
            mean_s=float(stats["mean"]) / batch,
            stddev_s=float(stats["stddev"]) / batch,
            min_s=float(stats["min"]) / batch,
            ops_per_s=batch / median if median > 0 else math.nan,
            peak_rss_mb=info.get("peak_rss_mb"),
            peak_rss_run_mb=info.get("peak_rss_run_mb"),
            name=bench.get("name"),
        )
        rows.append(row)
        ratios.append(math.nan if info.get("measured_ratio") is None else float(info["measured_ratio"]))
    df = pd.DataFrame(rows, columns=list(COLUMNS))
    rate = dict(zip(df["key"], df["ops_per_s"], strict=True))
    df["floor_ops_per_s"] = [rate.get(k, math.nan) if isinstance(k, str) else math.nan for k in df["floor"]]
    df["peer_ops_per_s"] = [rate.get(k, math.nan) if isinstance(k, str) else math.nan for k in df["peer"]]
    df["ratio_to_floor"] = df["ops_per_s"] / df["floor_ops_per_s"]
    df["ratio_to_official_sdk"] = df["ops_per_s"] / df["peer_ops_per_s"]
    base = [rate.get(k, math.nan) if isinstance(k, str) else math.nan for k in df["baseline"]]
    df["ratio_to_baseline"] = df["ops_per_s"] / pd.Series(base, index=df.index, dtype=float)
    measured = pd.Series(ratios, index=df.index, dtype=float)
    df["ratio_to_baseline"] = measured.where(measured.notna(), df["ratio_to_baseline"])
    for col in ("tools", "payload_bytes", "depth", "workers", "sessions", "concurrency"):
        df[col] = df[col].astype("Int64")
    df["paginated"] = df["paginated"].astype("boolean")
    return df.sort_values(["group", "op", "layer", "key"], kind="stable").reset_index(drop=True)


@dataclass(frozen=True)
class Ceiling:
    """What this run's own rows say a path could reach at best: ``key``'s ``column``,
    divided by ``over``'s rate when given (a floor's rate over the official SDK's).

    With ``base``, the ratio a path could reach against ``base`` if the only extra cost were
    the codec's: ``key`` and ``over`` are the two floors (the path's and ``base``'s), and the
    bound is 1 / (1 + rate(base) x (1/rate(key) - 1/rate(over))).
    """

    of: str
    key: str
    column: str = "ops_per_s"
    over: str | None = None
    base: str | None = None


@dataclass(frozen=True)
class Target:
    """One of the issue's targets: ``key``'s ``column`` must reach ``threshold``.

    ``ceiling`` says what the same run allows at best, so that a miss can be read as
    a slow path (the ceiling is above the threshold) or a slow machine (it is not).
    """

    name: str
    key: str
    column: str
    threshold: float
    ceiling: Ceiling | None = None
    share: float | None = None
    """When set, the target is this share of the ceiling the same run measures (``threshold``
    when the ceiling's rows did not run): a bound the machine sets, rebased on every run."""


_CHECKED = "every check inlined into one function (checked), x the floor"
TARGETS: tuple[Target, ...] = (
    Target(
        "json tools/call through the transport, x its floor",
        "transport/tools/call/json",
        "ratio_to_floor",
        0.6,
        Ceiling(_CHECKED, "checked/tools/call/json", "ratio_to_floor"),
    ),
    Target(
        "orjson tools/call through the transport, x its floor",
        "transport/tools/call/orjson",
        "ratio_to_floor",
        0.5,
        Ceiling(_CHECKED, "checked/tools/call/orjson", "ratio_to_floor"),
    ),
    Target(
        "tools/call, x the official SDK",
        "client/tools/call/json",
        "ratio_to_official_sdk",
        40.0,
        Ceiling(
            "every check inlined into one function (checked), x the official SDK",
            "checked/tools/call/json",
            over="official/tools/call",
        ),
    ),
    Target(
        "full session, x the official SDK",
        "session/json",
        "ratio_to_official_sdk",
        100.0,
        Ceiling(
            "the json codec alone on the session's messages, x the official SDK",
            "floor/session/json",
            over="official/session",
        ),
    ),
    Target(
        "scripted 20-call sessions per second",
        "sessions/scripted-20",
        "ops_per_s",
        2000.0,
        Ceiling("the json codec alone on the session's messages", "floor/session-20/json"),
    ),
    Target(
        "scripted 20-call sessions, x their floor (a guard: issue 39)",
        "sessions/scripted-20",
        "ratio_to_floor",
        0.2,
    ),
    Target(
        "stateless era x handshake era, 20-call sessions (0.9 x the bound its codec sets)",
        "sessions/scripted-20/stateless",
        "ratio_to_baseline",
        0.79,
        Ceiling(
            "the handshake session with only the codec's extra cost on the stateless messages",
            "floor/session-20/stateless/json",
            over="floor/session-20/json",
            base="sessions/scripted-20",
        ),
        share=0.9,
    ),
    Target(
        "batch runner, 2 workers x 1 worker",
        "scaling/process/2",
        "ratio_to_baseline",
        1.8,
    ),
    Target(
        "model sessions, 32 requests in flight: (requests x latency / 32) / wall",
        "llm/sessions/32",
        "ratio_to_baseline",
        0.7,
    ),
)
"""From issue 6 (the model sessions' from issue 31; the guard, the stateless era's share of its
codec bound and the scaling's 1.8 from issue 39); a target whose row did not run is reported as not
measured. For ``llm/sessions/*`` rows ``ratio_to_baseline`` is the efficiency against the ideal
wall time, requests x latency / concurrency (the case measures it: ``measured_ratio``)."""


def _value(df: pd.DataFrame, key: str, column: str) -> float | None:
    hit = df.loc[df["key"] == key, column]
    if hit.empty:
        return None
    value = float(hit.iloc[0])
    return None if math.isnan(value) else value


def _ceiling(df: pd.DataFrame, ceiling: Ceiling | None) -> float | None:
    if ceiling is None:
        return None
    value = _value(df, ceiling.key, ceiling.column)
    if value is None or ceiling.over is None:
        return value
    over = _value(df, ceiling.over, "ops_per_s")
    if ceiling.base is None:
        return None if not over else value / over
    base = _value(df, ceiling.base, "ops_per_s")
    if not over or not base or not value:
        return None
    return 1.0 / (1.0 + base * (1.0 / value - 1.0 / over))


def summary(df: pd.DataFrame) -> dict[str, Any]:
    """The headline figures: the two ratios the issue names, every ratio, and the targets."""
    paths = df[df["floor"].notna()]
    peers = df[df["peer"].notna()]
    targets = []
    for t in TARGETS:
        value = _value(df, t.key, t.column)
        ceiling = _ceiling(df, t.ceiling)
        threshold = t.threshold if t.share is None or ceiling is None else t.share * ceiling
        targets.append(
            {
                "target": t.name,
                "key": t.key,
                "measure": t.column,
                "threshold": threshold,
                "measured": value,
                "met": None if value is None else value >= threshold,
                "ceiling": ceiling,
                "ceiling_of": None if t.ceiling is None else t.ceiling.of,
                "reachable": None if ceiling is None else ceiling >= threshold,
            }
        )
    return {
        "ratio_to_floor": _value(df, "transport/tools/call/json", "ratio_to_floor"),
        "ratio_to_official_sdk": _value(df, "client/tools/call/json", "ratio_to_official_sdk"),
        "ops_per_s": {str(k): _num(v) for k, v in zip(df["key"], df["ops_per_s"], strict=True)},
        "ratios_to_floor": {
            str(k): _num(v) for k, v in zip(paths["key"], paths["ratio_to_floor"], strict=True)
        },
        "ratios_to_official_sdk": {
            str(k): _num(v) for k, v in zip(peers["key"], peers["ratio_to_official_sdk"], strict=True)
        },
        "targets": targets,
        "rows": len(df),
    }


def _num(value: Any) -> float | None:
    number = float(value)
    return None if math.isnan(number) else number


def _rate(value: float) -> str:
    if math.isnan(value):
        return ""
    for limit, unit in ((1e6, "M"), (1e3, "k")):
        if value >= limit:
            return f"{value / limit:.3g} {unit}/s"
    return f"{value:.3g} /s"


def _figure(value: float) -> str:
    """Three significant digits, without an exponent for rates in the thousands."""
    return f"{value:,.0f}" if abs(value) >= 1000 else f"{value:.3g}"


def _beside(value: float, threshold: float) -> str:
    """:func:`_figure`, with more digits where three would print a miss as the threshold
    itself (1.7997 against 1.8 is not met, and should not read "1.8")."""
    shown = _figure(value)
    digits = 3
    while shown == _figure(threshold) and value != threshold and digits < 8:
        digits += 1
        shown = f"{value:.{digits}g}"
    return shown


def _ratio(value: Any) -> str:
    number = float(value) if value is not None and not pd.isna(value) else math.nan
    return "" if math.isnan(number) else f"{number:.3g}"


HEADLINE_KEYS: tuple[str, ...] = (
    "handle/tools/call",
    "floor/tools/call/json",
    "transport/tools/call/json",
    "lean/tools/call/json",
    "checked/tools/call/json",
    "client/tools/call/json",
    "floor/tools/call/orjson",
    "transport/tools/call/orjson",
    "lean/tools/call/orjson",
    "checked/tools/call/orjson",
    "client/tools/call/orjson",
    "floor/tools/call/msgspec",
    "transport/tools/call/msgspec",
    "transport/tools/list/1000/whole/json",
    "transport/tools/list/1000/paged/json",
    "transport/initialize/json",
    "stdio/tools/call",
    "proxy/stdio/tools/call",
    "proxy/stdio/tools/call/faults",
    "official/tools/call",
    "official-legacy/tools/call",
    "floor/session/json",
    "session/json",
    "session-build/json",
    "official/session",
    "official-legacy/session",
    "fastmcp/tools/call",
    "floor/protocol-20/json",
    "sessions/protocol-20",
    "floor/session-20/json",
    "sessions/scripted-20",
    "batch/serial/1",
    "batch/process/1",
    "batch/process/2",
    "batch/dask/1",
    "batch/dask/2",
    "scaling/process/2",
    "scaling/dask/2",
    "llm/sessions/1",
    "llm/sessions/8",
    "llm/sessions/32",
)
"""The rows the printed summary shows (the CSV has them all)."""


def markdown(df: pd.DataFrame, keys: tuple[str, ...] | None = HEADLINE_KEYS) -> str:
    """A Markdown table of ``keys`` (all rows when None): rate, the three ratios, peak memory if measured."""
    rows = df if keys is None else df.set_index("key").reindex(list(keys)).dropna(how="all").reset_index()
    memory = bool(rows["peak_rss_mb"].notna().any())
    run = memory and bool(rows["peak_rss_run_mb"].notna().any())
    head = "| figure | rate | x floor | x official SDK | x 1 worker |" + (
        " peak RSS (MB) |" if memory else ""
    )
    head += " peak RSS before sessions.parquet (MB) |" if run else ""
    lines = [head, "|---|---:|---:|---:|---:|" + ("---:|" if memory else "") + ("---:|" if run else "")]
    for row in rows.to_dict("records"):
        line = (
            f"| `{row['key']}` | {_rate(float(row['ops_per_s']))} | {_ratio(row['ratio_to_floor'])} "
            f"| {_ratio(row['ratio_to_official_sdk'])} | {_ratio(row['ratio_to_baseline'])} |"
        )
        line += f" {_ratio(row['peak_rss_mb'])} |" if memory else ""
        lines.append(line + (f" {_ratio(row['peak_rss_run_mb'])} |" if run else ""))
    return "\n".join(lines) + "\n"


def targets_markdown(info: Mapping[str, Any]) -> str:
    """The targets of :func:`summary` as a Markdown table, each beside the ceiling this run allows."""
    lines = [
        "| target | measured | needed | met | ceiling here | ceiling of |",
        "|---|---:|---:|---|---:|---|",
    ]
    for t in info["targets"]:
        measured = "not measured" if t["measured"] is None else _beside(t["measured"], t["threshold"])
        met = "" if t["met"] is None else ("yes" if t["met"] else "no")
        ceiling = "" if t.get("ceiling") is None else _figure(t["ceiling"])
        of = t.get("ceiling_of") or ""
        lines.append(f"| {t['target']} | {measured} | {_figure(t['threshold'])} | {met} | {ceiling} | {of} |")
    if info.get("quick"):
        lines.append(
            "\nA --quick run: a few rounds per case, and batches so small that starting the worker"
            " pool outweighs the work (the scaling row). Judge the targets from a full run."
        )
    return "\n".join(lines) + "\n"
