"""How a run's numbers are written for people: one formatter per kind of number.

Every view of a run (``harness run``'s summary, ``harness compare``, ``harness effects``,
``harness view``) writes an interval, a difference and a p-value with these functions, so the
same number reads the same everywhere: a difference is signed (``-0.17 [-0.37, +0.03]``), a rate
is not (``0.56 [0.29, 0.83]``), a p-value has two significant digits. The tables
``harness effects`` prints (:func:`shown_shares`, :func:`shown_groups`, :func:`shown_features`)
live here too, beside :func:`to_markdown`.
"""

from __future__ import annotations

import math
from typing import Any

import pandas as pd


def is_missing(value: Any) -> bool:
    """None, NaN or pandas' NA: a number that does not exist (written ``–``)."""
    if value is None or value is pd.NA:
        return True
    return isinstance(value, float) and math.isnan(value)


def plural(count: int, noun: str) -> str:
    """``1 scenario``, ``15 scenarios``: a count with its noun (a page once said "1 scenarios")."""
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def pct(value: float) -> str:
    """A share as a whole percentage; one scenario in 200 is ``<1%``, not ``0%``."""
    if 0 < value < 0.01:
        return "<1%"
    return f"{100 * value:.0f}%"


def signed(value: Any) -> str:
    """A difference: ``+0.00``, ``-0.17`` (``–`` when there is none)."""
    return "–" if is_missing(value) else f"{value:+.2f}"


def signed_interval(value: Any, lo: Any, hi: Any) -> str:
    """A difference with its interval: ``-0.17 [-0.37, +0.03]``; without one, the value alone."""
    if is_missing(value):
        return "–"
    if is_missing(lo) or is_missing(hi):
        return signed(value)
    return f"{value:+.2f} [{lo:+.2f}, {hi:+.2f}]"


def rate_interval(value: Any, lo: Any, hi: Any) -> str:
    """A rate with its interval: ``0.56 [0.29, 0.83]``; without one, the rate alone."""
    if is_missing(value):
        return "–"
    if is_missing(lo) or is_missing(hi):
        return f"{value:.2f}"
    return f"{value:.2f} [{lo:.2f}, {hi:.2f}]"


def number(value: Any, fmt: str = "{:.2f}") -> str:
    """Any other number (``–`` when there is none)."""
    return "–" if is_missing(value) else fmt.format(value)


def p_value(value: Any) -> str:
    """A p-value, two significant digits: ``0.085``, ``1``, ``3.9e-05``."""
    return "–" if is_missing(value) else f"{value:.2g}"


def counts(found: pd.Series, totals: pd.Series) -> list[str]:
    """``3 (20%)`` per row: a count of scenarios and its share."""
    return [f"{c} ({pct(c / n)})" for c, n in zip(found, totals, strict=True)]


def to_markdown(frame: pd.DataFrame) -> str:
    """A GitHub-flavoured Markdown table (no tabulate dependency)."""
    cols = [str(c) for c in frame.columns]
    lines = ["| " + " | ".join(cols) + " |", "|" + "|".join("---" for _ in cols) + "|"]
    for values in frame.itertuples(index=False, name=None):
        lines.append("| " + " | ".join(str(v) for v in values) + " |")
    return "\n".join(lines)


# -- the tables harness effects prints ----------------------------------------------------------


def _pairs(left: pd.Series, right: pd.Series) -> list[str]:
    return [f"{pct(a)}/{pct(b)}" for a, b in zip(left, right, strict=True)]


def _intervals(value: pd.Series, lo: pd.Series, hi: pd.Series) -> list[str]:
    return [signed_interval(*r) for r in zip(value, lo, hi, strict=True)]


def _signs(frame: pd.DataFrame, baseline: str, min_effect: float) -> dict[str, list[str]]:
    total = frame["scenarios"]
    return {
        f"help ({baseline} better by ≥ {min_effect:g})": counts(frame["help"], total),
        f"no difference (−{min_effect:g} < Δ < +{min_effect:g})": counts(frame["none"], total),
        f"hurt (worse by ≥ {min_effect:g})": counts(frame["hurt"], total),
    }


def shown_shares(
    shares: pd.DataFrame, baseline: str = "is_error", min_effect: float | None = None
) -> pd.DataFrame:
    """The shares table as printed: the mean Δ with its interval and test first (the headline),
    then the scenarios counted against the minimum effect."""
    fallback = float(shares["min_effect"].iloc[0]) if len(shares) else 0.1
    m = min_effect if min_effect is not None else fallback
    return pd.DataFrame(
        {
            "agent": shares["agent"],
            "strategy": shares["against"],
            "n": shares["scenarios"],
            f"mean Δ (strategy − {baseline}) [95% CI]": _intervals(
                shares["mean_effect"], shares["lo"], shares["hi"]
            ),
            "test": shares["test"],
            "p adj": [p_value(v) for v in shares["p_adj"]],
            **_signs(shares, baseline, m),
        }
    )


def shown_groups(table: pd.DataFrame, baseline: str, min_effect: float) -> pd.DataFrame:
    """A per-family or per-value table as printed (:func:`harness.report.effects.group_table`,
    :func:`~harness.report.effects.value_table`)."""
    out = pd.DataFrame(
        {
            "agent": table["agent"],
            "strategy": table["against"],
            str(table["by"].iloc[0]) if len(table) and table["by"].nunique() == 1 else "by": table["group"],
            "n": table["scenarios"],
            f"mean Δ (strategy − {baseline}) [95% CI]": _intervals(
                table["mean_effect"], table["lo"], table["hi"]
            ),
            "p adj": [p_value(v) for v in table["p_adj"]],
            **_signs(table, baseline, min_effect),
        }
    )
    if "vs_reference" in table.columns and len(table):
        ref = str(table["reference"].iloc[0])
        out[f"Δ − Δ at {ref}, paired [95% CI]"] = [
            "–" if g == r else signed_interval(v, lo, hi)
            for g, r, v, lo, hi in zip(
                table["group"],
                table["reference"],
                table["vs_reference"],
                table["vs_lo"],
                table["vs_hi"],
                strict=True,
            )
        ]
        out["p adj (paired)"] = [p_value(v) for v in table["p_vs_adj"]]
    return out


def shown_features(table: pd.DataFrame, top: int) -> pd.DataFrame:
    """The feature table as printed: the ``top`` rows by p of each agent and other strategy."""
    head = table.groupby(["agent", "against"], sort=True).head(top) if top else table
    out = pd.DataFrame(
        {
            "agent": head["agent"],
            "strategy": head["against"],
            "feature": head["feature"],
            "n": [f"{a}/{b}" for a, b in zip(head["n_with"], head["n_without"], strict=True)],
            "help with/without": _pairs(head["help_with"], head["help_without"]),
            "hurt with/without": _pairs(head["hurt_with"], head["hurt_without"]),
            "mean Δ with − without [95% CI]": [
                signed_interval(v, lo, hi) if not math.isnan(lo) else f"{v:+.2f} [no interval]"
                for v, lo, hi in zip(head["difference"], head["lo"], head["hi"], strict=True)
            ],
            "p (permutation)": [p_value(v) for v in head["p"]],
            "p adj": [p_value(v) for v in head["p_adj"]],
            "p (Mann-Whitney)": [p_value(v) for v in head["p_mannwhitney"]],
        }
    )
    if head["note"].astype(bool).any():
        out["note"] = [n or "" for n in head["note"]]
    return out


def records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    """A frame's rows as the commands' ``--format json`` writes them (NaN as null)."""
    return [{str(k): (None if isinstance(v, float) and math.isnan(v) else v) for k, v in r.items()}
            for r in frame.to_dict(orient="records")]  # fmt: skip


# -- what the comparison's columns mean ------------------------------------------------------------

COLUMN_MEANINGS: dict[str, str] = {
    "agent": "the agent: a scripted policy (naive, retry, reader, refresher, oracle) or yours",
    "strategy": (
        "what the server does with a tool's failure: is_error (an error result with the reason), "
        "masked (an error result, reason hidden), collapse (a JSON-RPC -32603 error; a typical host "
        "drops its text), escape (the failure kills the server), input_required (as is_error, and "
        "an argument the tool cannot use is asked for)"
    ),
    "n": "sessions in the row (a session that broke inside the harness is left out and counted apart)",
    "clusters": (
        "how many independent units the intervals rest on: scenarios (sessions at --unit session); "
        "the sessions of one scenario share its faults and mostly agree, so they count as one"
    ),
    "success": (
        "the share of sessions whose end state was right and whose report to the user was true, "
        "with its 95% interval over scenarios"
    ),
    "pass^k": (
        "the chance that k runs of one task (a scenario, its seeds as runs) all succeed, averaged "
        "over tasks (tau-bench's pass^k): low when success is spread thin over seeds"
    ),
    "recovery": (
        "of the sessions that would have succeeded with no fault and met one, the share that still "
        "succeeded, with its 95% interval"
    ),
    "steps to recover": "steps from the first fault to success, the mean over the sessions that recovered",
    "repeated fails": (
        "per session: calls repeated exactly after that call failed for a reason no retry fixes"
    ),
    "wedged": "the share of sessions whose server died under them (the escape strategy)",
    "harness errors": "sessions that broke inside the harness or the agent (errors.log); left out of n",
    "Δ success vs base": (
        "success under this strategy minus success under the baseline (is_error), paired on the "
        "same seeds: each scenario's difference, then their mean, with its 95% interval over "
        "scenarios; below 0, the baseline's readable errors did better"
    ),
    "scenarios -/0/+": (
        "how many scenarios had Δ at or below minus the minimum effect (the baseline better), "
        "within it (no difference that large), at or above it (this strategy better); "
        "harness effects counts the same"
    ),
    "test": (
        "the test behind p: t (the t test across scenarios, the interval's own model: the interval "
        "excludes 0 exactly when p < 0.05), score (every scenario had the same Δ: the test Tango's "
        "interval inverts), mcnemar (within one scenario, or at --unit session: McNemar's exact test "
        "over the paired sessions)"
    ),
    "p": "the test's two-sided p-value, before adjustment",
    "p adjusted": (
        "p adjusted over every comparison of the table (Holm's method unless --adjust says otherwise); "
        "below 0.05, a difference the run shows; above, one it cannot tell from none"
    ),
    "McNemar p": "McNemar's exact test over the paired sessions (a table without a unit of inference)",
}
"""What each column of the comparison means, in words: the legend under the terminal table
(``--explain``) and the markdown table, the page's tooltips, and the glossary in docs/results.md
(generated from this dict by ``python -m harness.cli.figures``)."""


def column_meaning(column: str) -> str | None:
    """The meaning of a comparison column as printed (``pass^3``, ``p holm``, ``scenarios -/0/+
    (±0.1)``), or None for a grouping column the table was asked for."""
    if column.startswith("pass^"):
        return COLUMN_MEANINGS["pass^k"].replace("k runs", f"{column[5:]} runs")
    if column.startswith("scenarios -/0/+"):
        return COLUMN_MEANINGS["scenarios -/0/+"]
    if column.startswith("p ") and column != "p":
        return COLUMN_MEANINGS["p adjusted"]
    return COLUMN_MEANINGS.get(column)


def meanings(columns: list[str]) -> dict[str, str]:
    """Each column of ``columns`` that has a meaning, with it (grouping columns have none)."""
    out = {}
    for column in columns:
        meaning = column_meaning(column)
        if meaning is not None:
            out[column] = meaning
    return out


def legend(columns: list[str]) -> list[str]:
    """``column: meaning`` for each column of ``columns`` that has one, in their order."""
    return [f"{column}: {meaning}." for column, meaning in meanings(columns).items()]


SUCCESS_PART: tuple[str, ...] = ("clusters", "success", "pass^", "Δ success vs base", "scenarios -/0/+", "p ")
"""The comparison's first table on a terminal: success and its difference from the baseline."""


def comparison_parts(columns: list[str]) -> list[list[str]]:
    """The comparison's columns in two tables for a terminal (each about 120 columns wide when
    grouped by agent): success and the difference with its adjusted p; then sessions, recovery
    and the test behind p."""
    first = [c for c in columns if c != "p" and any(c == s or c.startswith(s) for s in SUCCESS_PART)]
    rest = [c for c in columns if c not in first]
    return [first, rest]


def shown_world(frame: pd.DataFrame, key: str) -> pd.DataFrame:
    """A worlds' table (:func:`harness.report.worlds.world_tables`) as printed: success, steps to
    success (a failure at the budget) and calls to success (where both succeeded), each with its
    difference, interval and adjusted p."""
    if key in ("security", "events", "controls", "dead"):
        return frame
    if key in CURVE_KEYS:
        return shown_curves(frame)
    first = "agent" if "agent" in frame.columns else "strategy"
    return pd.DataFrame(
        {
            **({"host": frame["host"]} if "host" in frame.columns else {}),
            first: frame[first],
            "vs" if first == "strategy" else "strategy": frame["other"],
            str(frame["by"].iloc[0]) if len(frame) else "group": frame["group"],
            "tasks": frame["tasks"],
            "success": [
                f"{a:.2f} → {b:.2f}"
                for a, b in zip(frame["success_base"], frame["success_other"], strict=True)
            ],
            "Δ success [95% CI]": _intervals(frame["success_diff"], frame["success_lo"], frame["success_hi"]),
            "p adj": [p_value(v) for v in frame["success_p_adj"]],
            "Δ steps, failure at budget [95% CI]": _intervals(
                frame["steps_diff"], frame["steps_lo"], frame["steps_hi"]
            ),
            "p adj (steps)": [p_value(v) for v in frame["steps_p_adj"]],
            "calls to success": [
                "–" if is_missing(a) else f"{a:.1f} → {b:.1f}"
                for a, b in zip(frame["calls_base"], frame["calls_other"], strict=True)
            ],
            "Δ calls [95% CI]": [
                signed_interval(v, lo, hi)
                + (" (every task alike)" if n > 1 and is_missing(lo) and not is_missing(v) else "")
                for v, lo, hi, n in zip(
                    frame["calls_diff"],
                    frame["calls_lo"],
                    frame["calls_hi"],
                    frame["calls_tasks"],
                    strict=True,
                )
            ],
            "p adj (calls)": [p_value(v) for v in frame["calls_p_adj"]],
            "dead (apart)": frame["dead"] if "dead" in frame.columns else 0,
        }
    )


CURVE_KEYS = ("curves", "blind_curves")
"""The worlds' tables of :func:`harness.report.curves.curve_table` (long: a row per estimand)."""

CURVE_SHOWN = {"rmean_calls": "calls", "rmean_steps": "steps"}
"""The restricted means, as their columns are headed (each a failure counted at the budget)."""


def shown_curves(frame: pd.DataFrame) -> pd.DataFrame:
    """A budget-free table as printed: one row per comparison and group; restricted mean calls and
    steps before → after with Δ, interval and adjusted p; then Δ S at each fixed budget with its
    interval and adjusted p."""
    first = "agent" if "agent" in frame.columns else "strategy"
    keys = [first, "other", "group"]
    rows = []
    for head, sub in frame.groupby(keys, sort=False):
        by = {str(r["estimand"]): r for r in sub.to_dict("records")}
        values = dict(zip(keys, head, strict=True))
        row: dict[str, Any] = {
            first: values[first],
            "vs" if first == "strategy" else "strategy": values["other"],
            str(sub["by"].iloc[0]): values["group"],
            "tasks": int(sub["tasks"].max()),
        }
        for estimand, label in CURVE_SHOWN.items():
            r = by.get(estimand)
            if r is None:
                continue
            row[f"{label} to success (failure = budget)"] = f"{r['value_base']:.1f} → {r['value_other']:.1f}"
            row[f"Δ {label} [95% CI]"] = signed_interval(r["diff"], r["lo"], r["hi"])
            row[f"p adj ({label})"] = p_value(r["p_adj"])
        for estimand, r in by.items():
            if estimand.startswith("S("):
                row[f"Δ {estimand} [95% CI], p adj"] = (
                    f"{signed_interval(r['diff'], r['lo'], r['hi'])}, {p_value(r['p_adj'])}"
                )
        rows.append(row)
    return pd.DataFrame(rows)
