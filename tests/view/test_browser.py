"""The page in a real headless browser (Debian's chromium): open a run, filter, open a session,
a pair with its first divergence marked, an incomplete run flagged, the file offline.

Skipped, with the reason, where chromium, chromedriver or selenium is missing (``.ci/run``
installs the first two with apt-get where it can).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from harness.batch.results import load_run
from view.browser import errors, wait_for
from view.runs import served
from view.test_sources import PROBE

CLI = [sys.executable, "-m", "harness.cli.main"]


def _open(browser: Any, url: str, css: str) -> Any:
    browser.get(url)
    return wait_for(browser, css)


def _texts(browser: Any, css: str) -> list[str]:
    from selenium.webdriver.common.by import By

    return [e.text for e in browser.find_elements(By.CSS_SELECTOR, css)]


def _offsite(browser: Any, base: str) -> list[str]:
    names: list[str] = browser.execute_script(
        "return performance.getEntriesByType('resource').map(e => e.name)"
    )
    return [n for n in names if not (n.startswith(base) or n.startswith("data:"))]


@pytest.fixture(scope="module")
def url(run: Path, browser: Any) -> Iterator[str]:
    with served(run) as address:
        yield address


def test_a_run_opens_with_its_manifest_and_nothing_from_the_network(browser: Any, url: str) -> None:
    facts = _open(browser, url + "#/", "#manifest-facts")
    assert "36 of 36 in the grid" in facts.text and "flaky_weather, strict_dates" in facts.text
    assert _texts(browser, "#run-status") == ["complete"]
    assert not _texts(browser, "#incomplete-banner")
    assert _offsite(browser, url) == []
    assert errors(browser) == []


def test_the_comparison_shows_the_numbers_harness_compare_prints(browser: Any, url: str, run: Path) -> None:
    from selenium.webdriver.common.by import By

    cli = json.loads(
        subprocess.run(
            [*CLI, "compare", str(run), "--format", "json"], capture_output=True, text=True, check=True
        ).stdout
    )["rows"]
    table = _open(browser, url + "#/compare", "#compare-table")
    rows = table.find_elements(By.CSS_SELECTOR, "tbody tr")
    assert len(rows) == len(cli)

    def ci(value: float, lo: float, hi: float) -> str:
        return f"{value:.2f} [{lo:.2f}, {hi:.2f}]"

    for tr, want in zip(rows, cli, strict=True):
        cell = {td.get_attribute("data-col"): td.text for td in tr.find_elements(By.TAG_NAME, "td")}
        assert (cell["agent"], cell["strategy"], cell["n"]) == (
            want["agent"],
            want["strategy"],
            str(want["n"]),
        )
        assert cell["success"] == ci(want["success_rate"], want["success_lo"], want["success_hi"])
        assert cell["pass^3"] == f"{want['pass_k']:.2f}"
        if want["strategy"] != "is_error":
            diff = f"{want['success_diff']:+.2f} [{want['diff_lo']:+.2f}, {want['diff_hi']:+.2f}]"
            assert cell["Δ success vs base"].removesuffix("≠ seed").strip() == diff
            assert cell["p holm"] == f"{want['p_adjusted']:.2g}"
    shown = json.loads(browser.execute_script("return document.getElementById('compare-json').textContent"))
    assert shown == cli


def test_filters_narrow_the_sessions_and_a_comparison_cell_lists_its_own(
    browser: Any, url: str, run: Path
) -> None:
    from selenium.webdriver.support.ui import Select

    df, _ = load_run(run)
    _open(browser, url + "#/sessions", "#sessions-table")
    assert "of 36 sessions" in browser.find_element("id", "session-count").text
    Select(browser.find_element("css selector", "select[name=agent]")).select_by_value("reader")
    wait_for(browser, "#active-filters")
    Select(browser.find_element("css selector", "select[name=ocol]")).select_by_value("steps")
    Select(browser.find_element("css selector", "select[name=oop]")).select_by_value(">=")
    browser.find_element("css selector", "input[name=oval]").send_keys("6")
    browser.find_element("id", "apply-filters").click()
    want = int(((df.agent == "reader") & (df.steps >= 6)).sum())
    wait_for(browser, "#active-filters .chip:nth-child(2)")
    assert browser.find_element("id", "session-count").text.endswith(f"of {want} sessions")
    assert set(_texts(browser, "#sessions-table td[data-col=agent]")) == {"reader"}
    # A cell of the comparison lists the sessions of its row.
    table = _open(browser, url + "#/compare", "#compare-table")
    second = table.find_element("css selector", "tbody tr:nth-child(2)")
    agent, strategy = (
        second.find_element("css selector", f"td[data-col={c}]").text for c in ("agent", "strategy")
    )
    second.find_element("css selector", "td[data-col=success]").click()
    wait_for(browser, "#sessions-table")
    assert browser.find_element("id", "session-count").text.endswith("of 6 sessions")
    assert set(_texts(browser, "#sessions-table td[data-col=strategy]")) == {strategy}
    assert set(_texts(browser, "#sessions-table td[data-col=agent]")) == {agent}


def test_a_session_shows_its_steps_faults_and_raw_trace(browser: Any, url: str, run: Path) -> None:
    df, _ = load_run(run)
    sid = int(
        df.index[(df.scenario == "strict_dates") & (df.agent == "reader") & (df.strategy == "collapse")][0]
    )
    filters = '[["agent","=","reader"],["strategy","=","collapse"],["scenario","=","strict_dates"]]'
    _open(browser, url + "#/sessions?filters=" + filters, "#sessions-table")
    browser.find_element("css selector", "#sessions-table tbody tr").click()
    steps = wait_for(browser, "#steps")
    assert browser.current_url.endswith(f"#/session/{sid}")
    assert len(steps.find_elements("css selector", "tbody tr")) == df.loc[sid, "steps"] + 1
    assert "fault: bad_argument on book" in steps.text
    assert "message dropped by the host" in steps.text  # what the typical host let through of -32603
    assert (
        "book" in browser.find_element("id", "faults-fired").text
        or "bad_argument" in browser.find_element("id", "faults-fired").text
    )
    raw = browser.find_element("id", "raw-trace")
    assert not raw.is_displayed()
    browser.find_element("id", "show-raw").click()
    assert raw.is_displayed() and len(raw.text.splitlines()) > 10 and '"dir":"c2s"' in raw.text


def test_a_differing_seed_opens_side_by_side_with_the_first_divergence_marked(browser: Any, url: str) -> None:
    table = _open(browser, url + "#/compare", "#compare-table")
    row = next(
        tr for tr in table.find_elements("css selector", "tbody tr") if tr.text.startswith("reader collapse")
    )
    row.find_element("css selector", "button.differ").click()
    banner = wait_for(browser, "#divergence")
    assert banner.text.startswith("First divergence at step 2: what the agent saw differs.")
    marked = browser.find_element("css selector", "#pair-steps tr.diverged")
    assert marked.text.startswith("2") and "first divergence" in marked.text
    assert "isError" in marked.text and "JSON-RPC error -32603" in marked.text
    assert "strategy is_error against B strategy collapse" in browser.find_element("id", "pair-title").text
    outcomes = browser.find_element("id", "pair-outcomes").text
    assert "success" in outcomes and "end" in outcomes
    assert "The outcomes differ." in browser.find_element("id", "pair-outcomes-line").text
    assert errors(browser) == []


def test_a_differing_seed_whose_outcomes_are_equal_says_so(browser: Any, url: str) -> None:
    # naive never reads an error: no seed changes its outcome under collapse, and ≠ seed opens a
    # pair that differs only in what it saw. At 8825ff0 the page did not say so.
    table = _open(browser, url + "#/compare", "#compare-table")
    row = next(
        tr for tr in table.find_elements("css selector", "tbody tr") if tr.text.startswith("naive collapse")
    )
    row.find_element("css selector", "button.differ").click()
    line = wait_for(browser, "#pair-outcomes-line").text
    assert "No seed of this row changes the outcome" in line
    a, b = re.findall(r"success (\w+)", line)
    assert a == b  # the same outcome on both sides


def test_a_session_without_a_trace_shows_its_steps_on_open_replayed_without_a_click(
    browser: Any, untraced: Path
) -> None:
    # At 8825ff0 the page showed no steps until "Replay it here" was clicked (a default run writes
    # no traces): now it replays on open, checked against the row's trace hash.
    df, _ = load_run(untraced)
    r = df.loc[14]
    with served(untraced) as address:
        steps = _open(browser, address + "#/session/14", "#steps")
        assert "replayed here" in browser.find_element("css selector", "main").text
        assert len(steps.find_elements("css selector", "tbody tr")) > 2
        assert not browser.find_elements("id", "replay")  # no button to click
        box = _open(browser, address + "#/session/14?replay=0", "#no-trace")  # the trace file alone
        assert "--traces" in box.text
        assert (
            f"harness session {r.scenario} --agent {r.agent} --strategy {r.strategy} --seed {r.seed} "
            "--host typical --era handshake --trace -"
        ) in box.text


def test_the_landing_page_opens_with_the_findings_compare_ends_with(
    browser: Any, url: str, run: Path
) -> None:
    done = subprocess.run([*CLI, "compare", str(run), "--format", "json"], capture_output=True, text=True)
    found = json.loads(done.stdout)["findings"]
    block = _open(browser, url + "#/", "#findings-agents")
    assert _texts(browser, "#findings-agents li") == found["agents"]
    assert browser.find_element("id", "findings-head").text == found["head"]
    # the findings come first, above the run's manifest
    assert browser.execute_script(
        "return document.getElementById('findings').compareDocumentPosition("
        "document.getElementById('manifest-facts')) & Node.DOCUMENT_POSITION_FOLLOWING"
    )
    assert block.text


def test_the_landing_page_shows_the_curves_harness_plot_draws(browser: Any, url: str) -> None:
    """S(k) over every budget on the first page: the figure loads (the run has its budgets) and
    stands after the findings, before the manifest."""
    _open(browser, url + "#/", "#curves-figure")
    loaded = browser.execute_script(
        "const img = document.getElementById('curves-figure');"
        "return new Promise((done) => { if (img.complete) done(img.naturalWidth);"
        " else img.addEventListener('load', () => done(img.naturalWidth)); });"
    )
    assert loaded > 200
    assert browser.execute_script(
        "return document.getElementById('curves').compareDocumentPosition("
        "document.getElementById('manifest-facts')) & Node.DOCUMENT_POSITION_FOLLOWING"
    )


@pytest.fixture(scope="module")
def wide(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """40 sessions without traces: every strategy (input_required is the longest name), and
    travel_day and weather_v2, whose steps carry long texts and many notes."""
    out = tmp_path_factory.mktemp("wide") / "run"
    subprocess.run([*CLI, "run", "travel_day", "weather_v2", "--agents", "refresher,reader", "--seeds", "2",
                    "--executor", "serial", "--out", str(out), "--no-compare"], check=True,
                   capture_output=True, timeout=300)  # fmt: skip
    return out


def test_the_comparison_s_headers_explain_themselves_and_no_column_is_clipped_at_1400_px(
    browser: Any, wide: Path
) -> None:
    # At 8825ff0 the default run's comparison needed 1,384 px of a 1,351 px page (its last column
    # cut off), and a travel_day session's steps 1,383 (the faults and notes column cut off).
    from selenium.webdriver.common.by import By

    from harness.report.display import column_meaning

    df, _ = load_run(wide)
    refresher = df[(df.agent == "refresher") & (df.seed == 0)]
    long = [int(refresher.index[(refresher.scenario == sc) & (refresher.strategy == st)][0])
            for sc, st in (("travel_day", "is_error"), ("weather_v2", "collapse"))]  # fmt: skip
    with served(wide) as address:
        table = _open(browser, address + "#/compare", "#compare-table")
        assert browser.get_window_size()["width"] == 1400
        cells = table.find_elements(By.TAG_NAME, "th")
        heads = {th.text.replace("\n", " "): th.get_attribute("title") for th in cells}
        assert heads["pass^3"] == column_meaning("pass^3") and "3 runs of one task" in heads["pass^3"]
        assert heads["clusters"] == column_meaning("clusters") and heads["wedged"] == column_meaning("wedged")
        assert "score" in heads["test"]
        for page, css in (("compare", "#compare-table"), *((f"session/{i}", "#steps") for i in long)):
            _open(browser, address + "#/" + page, css)
            box = browser.execute_script(
                "const t = document.querySelector(arguments[0]); const w = t.parentElement;"
                "return [w.scrollWidth, w.clientWidth, t.getBoundingClientRect().right, window.innerWidth];",
                css,
            )
            assert box[0] <= box[1] and box[2] <= box[3], (page, box)  # nothing to scroll to, nothing cut


def test_an_incomplete_run_is_flagged_as_compare_flags_it(browser: Any, interrupted: Path) -> None:
    with served(interrupted) as address:
        banner = _open(browser, address + "#/", "#incomplete-banner")
        assert banner.text.startswith("INCOMPLETE RUN: 20 of 36 sessions, status 'interrupted'")
        assert f"harness run --resume --out {interrupted}" in banner.text
        assert "incomplete" in browser.find_element("id", "run-status").text
        title = _open(browser, address + "#/compare", "#compare-title")
        assert title.text.startswith("INCOMPLETE RUN (20 of 36 sessions, status interrupted)")


def test_the_file_opens_offline_with_its_sample_and_pairs(browser: Any, run: Path, tmp_path: Path) -> None:
    out = tmp_path / "run.html"
    subprocess.run(
        [*CLI, "view", str(run), "--html", str(out), "--max-sessions", "12"],
        check=True,
        capture_output=True,
        timeout=120,
    )
    statement = _open(browser, out.as_uri() + "#/sessions", "#sample-statement")
    assert statement.text.startswith("This file holds 12 of the run's 36 sessions")
    wait_for(browser, "#sessions-table")
    assert (
        "of 12 sessions in this file (of 36 in the run)" in browser.find_element("id", "session-count").text
    )
    table = _open(browser, out.as_uri() + "#/compare", "#compare-table")
    row = next(
        tr for tr in table.find_elements("css selector", "tbody tr") if tr.text.startswith("reader collapse")
    )
    row.find_element("css selector", "button.differ").click()
    assert wait_for(browser, "#divergence").text.startswith("First divergence at step 2")
    assert _offsite(browser, out.as_uri()) == []
    assert errors(browser) == []
    found = _open(browser, out.as_uri() + "#/", "#findings-agents")  # the file opens with them too
    assert found.text.startswith("naive: ")


def test_a_probe_report_and_a_bench_table_open(browser: Any, tmp_path: Path) -> None:
    probe = tmp_path / "probe.json"
    probe.write_text(json.dumps(PROBE))
    page = tmp_path / "probe.html"
    subprocess.run(
        [*CLI, "view", str(probe), "--html", str(page)], check=True, capture_output=True, timeout=60
    )
    summary = _open(browser, page.as_uri(), "#probe-summary")
    assert "handshake" in summary.text and "stateless" in summary.text
    assert "differs" in browser.find_element("css selector", "section[data-era=stateless]").text
