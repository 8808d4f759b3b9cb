"""Every view of a run shows the same numbers: one estimand, one threshold, one Holm family.

``harness compare`` (grouped by agent, the default), ``harness effects`` (with any ``--against``),
``harness view``'s comparison and effects, and the findings that end ``harness run`` and
``harness compare`` (and top the viewer's landing page) give one agent and strategy the same
difference, interval, adjusted p and scenario counts, to the digit as printed. At 8825ff0 they
did not: for ``reader`` under ``collapse`` the default run's compare said p holm 1 over 4
scenarios (any scenario with a lower mean), effects 0.85 over 3 (Δ ≤ −0.1): two thresholds and
two Holm families (20 rows against 10).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from harness.batch.results import load_run
from harness.report.documents import comparison, effects
from harness.report.findings import findings
from harness.report.stats import compare
from harness.view.run import RunView
from tests.helpers.cli import run_harness

STRATEGIES = "is_error,masked,collapse,escape"


def _cli(*args: str) -> str:
    code, stdout, stderr = run_harness(list(args))
    assert code == 0, stderr
    return stdout


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("one") / "run"
    _cli("run", "flaky_weather", "strict_dates", "rate_limited_search", "travel_day", "big_query",
         "--agents", "reader,refresher,retry", "--strategies", STRATEGIES, "--seeds", "6",
         "--executor", "serial", "--out", str(out), "--no-compare")  # fmt: skip
    return out


def _key(row: dict[str, Any], strategy: str = "strategy") -> tuple[str, str]:
    return str(row["agent"]), str(row[strategy])


def test_compare_effects_view_and_findings_give_the_same_numbers(run: Path) -> None:
    compared = json.loads(_cli("compare", str(run), "--format", "json"))
    rows = {_key(r): r for r in compared["rows"] if r["strategy"] != "is_error"}
    # effects with every strategy, and with one: the adjusted p does not depend on what is shown
    every = json.loads(_cli("effects", str(run), "--format", "json", "--against", "masked,collapse,escape"))
    one = json.loads(_cli("effects", str(run), "--format", "json", "--against", "collapse"))
    view = RunView(run)
    paged = {_key(r): r for r in view.comparison()["rows"] if r["strategy"] != "is_error"}
    viewed = {_key(r, "against"): r for r in view.effects()["shares"]}
    said = {_key(c): c for c in compared["findings"]["changes"]}
    shares = {_key(r, "against"): r for r in every["shares"]}
    assert set(shares) == set(rows) == set(paged) == set(said) and len(rows) == 9
    for key, row in rows.items():
        share, page, change = shares[key], paged[key], said[key]
        assert row == page  # the page serves the command's own rows
        for theirs, ours in (("mean_effect", "success_diff"), ("lo", "diff_lo"), ("hi", "diff_hi"),
                             ("p", "p"), ("p_adj", "p_adjusted"), ("help", "n_help"), ("none", "n_none"),
                             ("hurt", "n_hurt"), ("scenarios", "n_clusters")):  # fmt: skip
            assert share[theirs] == pytest.approx(row[ours], abs=1e-12), (key, theirs)
        assert (change["mean_effect"], change["lo"], change["hi"], change["p_adj"]) == pytest.approx(
            (row["success_diff"], row["diff_lo"], row["diff_hi"], row["p_adjusted"]), abs=1e-12
        )
        assert (change["help"], change["hurt"]) == (row["n_help"], row["n_hurt"])
        if key[1] in ("masked", "collapse"):
            assert viewed[key] == share  # the page's effects: the command's
    for share in one["shares"]:
        assert share["p_adj"] == pytest.approx(shares[_key(share, "against")]["p_adj"], abs=1e-12)
    assert every["family"] == one["family"] == len(rows)


def test_the_numbers_read_the_same_as_printed(run: Path) -> None:
    table = _cli("compare", str(run), "--format", "markdown")
    printed = _cli("effects", str(run), "--format", "markdown", "--against", "masked,collapse,escape")

    def cells(text: str, first: str) -> dict[tuple[str, str], dict[str, str]]:
        lines = [ln for ln in text.splitlines() if ln.startswith("|")]
        start = next(i for i, ln in enumerate(lines) if ln.startswith(f"| {first}"))
        head = [c.strip() for c in lines[start].strip("|").split("|")]
        out = {}
        for ln in lines[start + 2 :]:
            values = [c.strip() for c in ln.strip("|").split("|")]
            if len(values) != len(head) or ln.startswith(f"| {first} "):
                break  # the next table
            row = dict(zip(head, values, strict=True))
            out[(row["agent"], row["strategy"])] = row
        return out

    compared, shown = cells(table, "agent"), cells(printed, "agent")
    for key, row in shown.items():
        mine = compared[key]
        assert mine["Δ success vs base"] == row["mean Δ (strategy − is_error) [95% CI]"], key
        assert mine["p holm"] == row["p adj"], key
        helped, none, hurt = (int(row[c].split()[0]) for c in list(row)[6:9])
        assert mine["scenarios -/0/+ (±0.1)"] == f"{helped}/{none}/{hurt}", key
    words = table[table.index("**Findings**") :]
    reader = next(ln for ln in words.splitlines() if ln.startswith("- reader:"))
    escape = shown[("reader", "escape")]
    lo, hi = escape["mean Δ (strategy − is_error) [95% CI]"].split(" [")[1].rstrip("]").split(", ")
    assert f"CI {lo} to {hi}" in reader and f"p = {escape['p adj']}" in reader


def test_the_estimand_weighs_each_scenario_the_same_whatever_its_seeds(run: Path) -> None:
    # A partial run (one scenario with 2 seeds, the others 6): compare's Δ and effects' mean Δ
    # are both the mean over scenarios of each one's Δ, not a mean over pairs.
    df, state = load_run(run)
    partial = df[(df["scenario"] != "strict_dates") | (df["seed"] < 2)].reset_index(drop=True)
    table = compare(partial, by=["agent"], unit="scenario")
    shown = effects(partial, state, source="partial", against=["masked", "collapse", "escape"])
    shares = {(r["agent"], r["against"]): r for r in shown.document["shares"]}
    for row in table[table["strategy"] != "is_error"].to_dict(orient="records"):
        share = shares[(row["agent"], row["strategy"])]
        assert row["success_diff"] == pytest.approx(share["mean_effect"], abs=1e-12)
        assert (row["diff_lo"], row["diff_hi"], row["p_adjusted"]) == pytest.approx(
            (share["lo"], share["hi"], share["p_adj"]), abs=1e-12
        )
        per = pd.DataFrame(shown.document["scenarios"])
        mine = per[(per["agent"] == row["agent"]) & (per["against"] == row["strategy"])]
        assert row["success_diff"] == pytest.approx(mine["effect"].mean(), abs=1e-12)
    said = findings(partial)
    assert {(c.agent, c.strategy): c.effect for c in said.changes} == pytest.approx(
        {k: v["mean_effect"] for k, v in shares.items()}
    )
    assert comparison(partial).findings == said
