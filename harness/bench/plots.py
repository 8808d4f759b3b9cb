"""PNG figures of a benchmark table: throughput against payload, depth and tool count, per codec,
and the two ratios (to the floor, to the official SDK).

Each figure is drawn only from rows the table has; a figure with nothing to show
is skipped, not drawn empty. Matplotlib runs headless (Agg).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure

_CODEC_ORDER = ("json", "orjson", "msgspec")


def _codecs(df: pd.DataFrame) -> list[str]:
    present = set(df["codec"].dropna())
    return [c for c in _CODEC_ORDER if c in present] + sorted(present - set(_CODEC_ORDER))


def _save(fig: Figure, path: Path) -> Path:
    fig.tight_layout()
    fig.savefig(path, dpi=110, metadata={"Software": None})
    plt.close(fig)
    return path


def _lines(ax: Axes, df: pd.DataFrame, x: str, title: str, xlabel: str) -> bool:
    drawn = False
    for codec in _codecs(df):
        for layer, style in (("floor", "--"), ("transport", "-")):
            part = df[(df["codec"] == codec) & (df["layer"] == layer)].sort_values(x)
            if part.empty:
                continue
            ax.plot(part[x].astype(float), part["ops_per_s"], style, marker="o", label=f"{layer} {codec}")
            drawn = True
    ax.set(xscale="log", yscale="log", title=title, xlabel=xlabel, ylabel="round trips per second")
    ax.grid(True, which="both", alpha=0.3)
    if drawn:
        ax.legend(fontsize=8)
    return drawn


def _throughput(
    df: pd.DataFrame, out: Path, op: str, x: str, title: str, xlabel: str, name: str
) -> Path | None:
    """Round trips per second against ``x`` for the rows of one ``op``, one line per path."""
    fig, ax = plt.subplots(figsize=(7, 4.5))
    if not _lines(ax, df[df["op"] == op], x, title, xlabel):
        plt.close(fig)
        return None
    return _save(fig, out / name)


def payload(df: pd.DataFrame, out: Path) -> Path | None:
    return _throughput(
        df, out, "payload", "payload_bytes", "tools/call throughput vs payload size", "text content (bytes)",
        "throughput_vs_payload.png",
    )  # fmt: skip


def depth(df: pd.DataFrame, out: Path) -> Path | None:
    return _throughput(
        df, out, "nesting", "depth", "tools/call throughput vs nesting depth", "nesting depth (objects)",
        "throughput_vs_depth.png",
    )  # fmt: skip


def tool_count(df: pd.DataFrame, out: Path) -> Path | None:
    rows = df[(df["op"] == "tools/list") & df["layer"].isin(["transport", "handle"])]
    if rows.empty:
        return None
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for (layer, codec, paged), part in rows.groupby(["layer", "codec", "paginated"], dropna=False, sort=True):
        label = f"{layer}{' ' + codec if isinstance(codec, str) else ''}, {'paged' if paged else 'whole'}"
        part = part.sort_values("tools")
        ax.plot(
            part["tools"].astype(float), part["ops_per_s"], "-" if paged else ":", marker="o", label=label
        )
    ax.set(
        xscale="log",
        yscale="log",
        title="full tools/list listings per second vs tool count",
        xlabel="tools on the server",
        ylabel="listings per second",
    )
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7, ncol=2)
    return _save(fig, out / "throughput_vs_tools.png")


def per_codec(df: pd.DataFrame, out: Path) -> Path | None:
    layers = ("floor", "lean", "checked", "transport", "client")
    rows = df[(df["op"] == "tools/call") & df["layer"].isin(layers)]
    if rows.empty:
        return None
    table = rows.pivot_table(index="codec", columns="layer", values="ops_per_s")
    table = table.reindex([c for c in _codecs(rows) if c in table.index])
    table = table[[c for c in layers if c in table.columns]]
    fig, ax = plt.subplots(figsize=(7, 4.5))
    table.plot.bar(ax=ax, rot=0)
    ax.legend(title="layer", fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))  # not over the bars
    ax.set(title="tools/call per codec", xlabel="codec", ylabel="calls per second")
    ax.grid(True, axis="y", alpha=0.3)
    return _save(fig, out / "tools_call_per_codec.png")


TARGET_STYLES = (("tab:red", "--"), ("tab:purple", ":"), ("tab:orange", "-."))
"""Colour and dash of each target line, in the order given: told apart in the legend, not by inline text."""

FLOOR_TARGETS = {"json 0.6": 0.6, "orjson 0.5": 0.5}
OFFICIAL_TARGETS = {"40x": 40.0, "100x": 100.0}


def bars_figure(
    rows: pd.DataFrame, column: str, title: str, lines: dict[str, float], log: bool
) -> Figure | None:
    """Horizontal bars of ``column`` per key, with the target ``lines`` named in a legend.

    Targets that lie close together (0.5 and 0.6) would print inline labels over each other
    and over the title; the legend, outside the axes, keeps every label readable.
    """
    rows = rows[rows[column].notna()]
    if rows.empty:
        return None
    fig, ax = plt.subplots(figsize=(9, max(3.0, 0.28 * len(rows) + 1.2)))
    ax.barh(rows["key"], rows[column], color="tab:blue")
    for i, (label, value) in enumerate(lines.items()):
        color, dash = TARGET_STYLES[i % len(TARGET_STYLES)]
        ax.axvline(value, color=color, linestyle=dash, linewidth=1.2, label=f"target {label}")
    if log:
        ax.set_xscale("log")
    ax.invert_yaxis()
    ax.tick_params(axis="y", labelsize=7)
    ax.set(title=title, xlabel=column.replace("_", " "))
    ax.grid(True, axis="x", alpha=0.3)
    if lines:
        ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0), title="targets", title_fontsize=8)
    fig.tight_layout()
    return fig


def _bars(
    rows: pd.DataFrame, column: str, title: str, lines: dict[str, float], path: Path, log: bool
) -> Path | None:
    fig = bars_figure(rows, column, title, lines, log)
    return None if fig is None else _save(fig, path)


def ratio_to_floor(df: pd.DataFrame, out: Path) -> Path | None:
    rows = df[df["group"] == "dispatch"]
    return _bars(
        rows,
        "ratio_to_floor",
        "dispatch: rate / floor rate",
        FLOOR_TARGETS,
        out / "ratio_to_floor.png",
        False,
    )


def ratio_to_official(df: pd.DataFrame, out: Path) -> Path | None:
    path = out / "ratio_to_official_sdk.png"
    return _bars(df, "ratio_to_official_sdk", "rate / official SDK rate", OFFICIAL_TARGETS, path, True)


FIGURES: tuple[Callable[[pd.DataFrame, Path], Path | None], ...] = (
    payload,
    depth,
    tool_count,
    per_codec,
    ratio_to_floor,
    ratio_to_official,
)


def draw_all(df: pd.DataFrame, out: Path) -> list[Path]:
    """Draw every figure the table has rows for into ``out``; return the files written."""
    return [path for figure in FIGURES if (path := figure(df, out)) is not None]
