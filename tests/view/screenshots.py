"""Draw the screenshots of docs/view.md (docs/figures/view-*.png) with headless chromium.

    python tests/view/screenshots.py --run RUN --incomplete RUN2 --bench BENCHDIR --probe PROBE.json
    python tests/view/screenshots.py --run RUN --incomplete RUN2 --only run,compare,pair

RUN should have traces (``harness run ... --traces``); RUN2 is an unfinished run. Each page is
served by ``harness view`` (or written with ``--html``) exactly as a user would open it.
``--only`` draws the named ones (``view-NAME.png``), the others left as they are.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from view.browser import launch, wait_for
from view.runs import served

ROOT = Path(__file__).resolve().parents[2]
WIDTH, MAX_HEIGHT = 1500, 1500


ONLY: set[str] = set()
"""The screenshots to draw (``--only``); empty: every one."""


def shoot(driver: Any, url: str, css: str, out: Path, click: str | None = None) -> None:
    if ONLY and out.stem.removeprefix("view-") not in ONLY:
        return
    driver.set_window_size(WIDTH, 900)
    driver.get(url)
    wait_for(driver, css, timeout=120)
    if click:
        driver.find_element("css selector", click).click()
        time.sleep(1.0)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and not driver.execute_script(
        "return [...document.images].every(i => i.complete)"
    ):
        time.sleep(0.5)
    time.sleep(0.5)
    height = min(int(driver.execute_script("return document.documentElement.scrollHeight")), MAX_HEIGHT)
    driver.set_window_size(WIDTH, height)
    time.sleep(0.3)
    if not driver.save_screenshot(str(out)):
        raise SystemExit(f"could not write {out}")
    print(out)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--run", type=Path, required=True)
    parser.add_argument("--incomplete", type=Path, required=True)
    parser.add_argument("--bench", type=Path)
    parser.add_argument("--probe", type=Path)
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "figures")
    parser.add_argument(
        "--only", default="", help="comma-separated names (run, compare, ...): draw only these"
    )
    args = parser.parse_args()
    ONLY.update(n for n in args.only.split(",") if n)
    if not ONLY and (args.bench is None or args.probe is None):
        parser.error("--bench and --probe are needed unless --only leaves them out")
    args.out.mkdir(parents=True, exist_ok=True)
    from harness.view.run import RunView

    view = RunView(args.run)
    found = view.differing_pair({"agent": "reader"}, "collapse")
    session = found["b"]
    driver = launch(WIDTH, 900)
    try:
        with served(args.run) as url:
            shoot(driver, url + "#/", "#findings-agents", args.out / "view-run.png")  # the findings on top
            shoot(driver, url + "#/compare", "#compare-table", args.out / "view-compare.png")
            shoot(driver, url + "#/effects", "#effects-shares", args.out / "view-effects.png",
                  click="#effects-shares tbody tr:nth-child(5)")  # fmt: skip
            filters = '[["agent","=","reader"],["strategy","=","collapse"],["success","=","false"]]'
            shoot(
                driver,
                url + "#/sessions?filters=" + filters,
                "#sessions-table",
                args.out / "view-sessions.png",
            )
            shoot(driver, url + f"#/session/{session}", "#steps", args.out / "view-session.png")
            shoot(
                driver, url + f"#/pair/{found['a']}/{found['b']}", "#pair-steps", args.out / "view-pair.png"
            )
            shoot(driver, url + "#/figures", ".figures img", args.out / "view-figures.png")
        with served(args.incomplete) as url:
            shoot(driver, url + "#/compare", "#compare-table", args.out / "view-incomplete.png")
        with tempfile.TemporaryDirectory() as tmp:
            if ONLY and "file" not in ONLY:
                return
            page = Path(tmp) / "run.html"
            cli = [sys.executable, "-m", "harness.cli.main", "view"]
            subprocess.run([*cli, str(args.run), "--html", str(page), "--max-sessions", "200"], check=True)
            shoot(driver, page.as_uri() + "#/sessions", "#sessions-table", args.out / "view-file.png")
        if args.bench is not None:
            with served(args.bench) as url:
                shoot(driver, url, "#bench-table", args.out / "view-bench.png")
        if args.probe is not None:
            with served(args.probe) as url:
                shoot(driver, url, "#probe-summary", args.out / "view-probe.png")
    finally:
        driver.quit()


if __name__ == "__main__":
    main()
