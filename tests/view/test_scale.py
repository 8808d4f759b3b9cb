"""A 100,000-session run opens in seconds: the page holds an index, rows come from parquet a page at a time.

``python -m pytest tests/view/test_scale.py -s`` prints the times.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from harness.view.run import Filter, RunView
from view.browser import wait_for
from view.runs import big_fake_run, served

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def big(tmp_path_factory: pytest.TempPathFactory) -> Path:
    started = time.perf_counter()
    out = big_fake_run(tmp_path_factory.mktemp("view-scale") / "big")
    print(f"\n100,000 fake sessions written in {time.perf_counter() - started:.1f} s")
    return out


def test_the_index_is_small_and_a_page_is_quick(big: Path) -> None:
    started = time.perf_counter()
    view = RunView(big)
    opened = time.perf_counter() - started
    assert view.sessions == 100_000
    assert view.index.nbytes < 30e6  # key and outcome columns only, never every column
    started = time.perf_counter()
    page = view.page([Filter("agent", "=", "c"), Filter("success", "=", False)], offset=10_000, limit=50)
    paged = time.perf_counter() - started
    started = time.perf_counter()
    last = view.row(99_999)
    read = time.perf_counter() - started
    print(
        f"opened in {opened:.2f} s ({view.index.nbytes / 1e6:.1f} MB index); a filtered page at offset "
        f"10,000 in {paged:.3f} s; the last row in {read:.3f} s"
    )
    assert page["total"] > 10_050 and len(page["rows"]) == 50
    assert last["scenario"] == "s049" and last["seed"] == 99
    # The times are printed (``-s``), never asserted: a wall-clock limit in a test measures the
    # machine. That the index holds only the key and outcome columns is what keeps them small.


def test_the_page_of_a_100000_session_run_shows_its_sessions_in_seconds(big: Path, browser: Any) -> None:
    started = time.perf_counter()
    with served(big) as url:
        up = time.perf_counter() - started
        browser.get(url + "#/sessions")
        wait_for(browser, "#sessions-table tbody tr", timeout=60)
        listed = time.perf_counter() - started
        assert "1–50 of 100,000 sessions" in browser.find_element("id", "session-count").text
        browser.get(url + "#/compare")
        wait_for(browser, "#compare-table tbody tr", timeout=120)
        compared = time.perf_counter() - started
        browser.get(url + "#/session/99999")
        wait_for(browser, "#session-title", timeout=60)
    print(f"server up in {up:.1f} s; sessions listed at {listed:.1f} s; comparison shown at {compared:.1f} s")
