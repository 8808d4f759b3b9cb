"""``harness view RUN --html FILE``: one file, nothing to fetch, a stated sample that keeps pairs whole."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

from harness.view.export import render, run_document, sample
from harness.view.run import RunView

CLI = [sys.executable, "-m", "harness.cli.main"]


def _data(html: str) -> dict[str, Any]:
    found = re.search(r'<script type="application/json" id="harness-data">(.*?)</script>', html, re.S)
    assert found is not None
    doc: dict[str, Any] = json.loads(found.group(1))
    return doc


def test_the_file_loads_nothing_from_anywhere(run: Path, tmp_path: Path) -> None:
    out = tmp_path / "run.html"
    done = subprocess.run(
        [*CLI, "view", str(run), "--html", str(out)], capture_output=True, text=True, timeout=120, check=True
    )
    assert "This file holds 36 of the run's 36 sessions" in done.stderr
    html = out.read_text()
    assert not re.search(r'<(script|link|img)[^>]+(src|href)="(?!data:)', html), "a resource outside the file"
    assert "connect-src 'none'" in html and "static/view" not in html
    assert not re.search(r"https?://", html.split('id="harness-data"')[0]), "an address in the page itself"
    doc = _data(html)
    assert set(doc) == {"info", "compare", "effects", "figures", "rows", "sessions", "pairs", "differ"}
    assert all(v is None or v.startswith("data:image/png;base64,") for v in doc["figures"].values())


def test_the_sample_takes_whole_units_in_turn_over_scenarios_and_says_so(run: Path) -> None:
    view = RunView(run)
    ids, statement = sample(view, 13)
    keys = [view.key_of(i) for i in ids]
    units = {(k["scenario"], k["seed"]) for k in keys}
    assert len(ids) == 12 and len(units) == 2  # two units of 6 (2 agents x 3 strategies) fit in 13
    assert {u[0] for u in units} == {"flaky_weather", "strict_dates"}  # one from each scenario first
    assert statement["units"] == 2 and statement["units_of"] == 6
    assert "12 of the run's 36 sessions" in statement["text"]
    for k in keys:  # whole units: every agent and strategy of a chosen (scenario, seed)
        assert sum(1 for j in keys if (j["scenario"], j["seed"]) == (k["scenario"], k["seed"])) == 6


def test_units_where_the_sessions_disagree_come_first(run: Path) -> None:
    view = RunView(run)
    ids, _ = sample(view, 6)
    rows = [view.row(i) for i in ids]
    assert len({r["success"] for r in rows}) == 2


def test_each_comparison_row_has_a_differing_pair_in_the_file_within_the_cap(run: Path) -> None:
    view = RunView(run)
    doc = run_document(view, max_sessions=20, by="agent")
    ids = {r["id"] for r in doc["rows"]}
    assert len(ids) <= 20
    compare_rows = [k for k in doc["differ"] if k.startswith("compare:")]
    assert len(compare_rows) == 4  # reader and naive, each against collapse and masked
    for key in compare_rows:
        d = doc["differ"][key]
        assert d["found"] and d["a"] in ids and d["b"] in ids
        assert f"{min(d['a'], d['b'])},{max(d['a'], d['b'])}" in doc["pairs"]
    statement = doc["info"]["sample"]
    assert statement["sessions"] == len(ids) > 12  # the pairs' units count once, so more units fit
    assert len(doc["sessions"]) == len(ids) and all(s["trace"] is not None for s in doc["sessions"].values())


def test_nothing_in_the_data_can_end_the_script_element() -> None:
    html = render({"info": {"title": "</script><script>alert(1)</script>"}})
    assert html.count("</script>") == 2  # the data block's and the page script's own
    assert _data(html)["info"]["title"] == "</script><script>alert(1)</script>"
