"""``harness view`` on the command line: it serves on 127.0.0.1, and a mistake is one line."""

from __future__ import annotations

import json
import subprocess
import sys
import urllib.request
from pathlib import Path

from view.runs import served

CLI = [sys.executable, "-m", "harness.cli.main"]


def _get(url: str) -> tuple[int, bytes, str]:
    try:
        with urllib.request.urlopen(url, timeout=30) as res:
            return res.status, res.read(), res.headers.get("content-type", "")
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read(), exc.headers.get("content-type", "")


def test_the_server_answers_on_loopback_with_the_page_and_its_api(run: Path) -> None:
    with served(run) as url:
        assert url.startswith("http://127.0.0.1:")
        status, body, kind = _get(url)
        assert status == 200 and b'id="app"' in body and "text/html" in kind
        status, body, _ = _get(url + "static/view.js")
        assert status == 200 and b"harness-data" in body
        status, body, _ = _get(url + "api/info")
        info = json.loads(body)
        assert info["kind"] == "run" and info["sessions"] == 36 and info["mode"] == "server"
        status, body, _ = _get(url + 'api/sessions?filters=[["agent","=","reader"]]&limit=5')
        page = json.loads(body)
        assert page["total"] == 18 and len(page["rows"]) == 5
        status, body, kind = _get(url + "api/figure/agent_strategy_heatmap.png")
        assert status == 200 and kind == "image/png" and body.startswith(b"\x89PNG")
        status, body, _ = _get(url + 'api/sessions?filters=[["agnet","=","reader"]]')
        assert status == 400 and "did you mean 'agent'" in json.loads(body)["error"]
        status, body, _ = _get(url + "api/session/999")
        assert status == 404 and "no session 999" in json.loads(body)["error"]
        # A page of another site that rebinds its name to 127.0.0.1 gets nothing.
        forged = urllib.request.Request(url + "api/info", headers={"Host": "attacker.example"})
        try:
            urllib.request.urlopen(forged, timeout=30)
            raise AssertionError("a request for another host was answered")
        except urllib.error.HTTPError as exc:
            assert exc.code == 400
            exc.close()


def test_a_port_in_use_is_one_line(run: Path) -> None:
    with served(run) as url:
        port = url.rsplit(":", 1)[1].strip("/")
        done = subprocess.run(
            [*CLI, "view", str(run), "--port", port, "--no-open"], capture_output=True, text=True, timeout=60
        )
    assert done.returncode == 2
    assert done.stderr.strip().splitlines()[-1].startswith(f"harness: error: --port {port}: cannot listen")


def test_an_incomplete_run_is_served_under_a_warning(interrupted: Path, tmp_path: Path) -> None:
    out = tmp_path / "page.html"
    done = subprocess.run(
        [*CLI, "view", str(interrupted), "--html", str(out)], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert "harness: warning: INCOMPLETE RUN: 20 of 36 sessions" in done.stderr
    assert out.stat().st_size > 0


def test_the_page_ships_in_the_wheel_and_its_script_parses() -> None:
    import fnmatch
    import shutil
    import tomllib

    root = Path(__file__).resolve().parents[2]
    patterns = tomllib.loads((root / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]
    static = root / "harness" / "view" / "static"
    for asset in static.iterdir():
        assert any(fnmatch.fnmatch(f"static/{asset.name}", p) for p in patterns["harness.view"]), asset.name
    node = shutil.which("node")
    if node is not None:  # a syntax error would leave a blank page
        subprocess.run([node, "--check", str(static / "view.js")], check=True, timeout=60)


def _status(url: str, headers: dict[str, str]) -> int:
    try:
        with urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=30) as res:
            return int(res.status)
    except urllib.error.HTTPError as exc:
        exc.close()
        return int(exc.code)


def test_another_sites_page_cannot_make_the_server_work(run: Path) -> None:
    """An ``<img>`` or fetch from another site (issue 49, item 10) gets a 403 before anything is
    drawn or read; the page's own requests, and a user's curl, are answered."""
    with served(run) as url:
        figure = url + "api/figure/agent_strategy_heatmap.png"
        own = url.rstrip("/")
        assert _status(figure, {"Sec-Fetch-Site": "cross-site"}) == 403
        assert _status(figure, {"Sec-Fetch-Site": "same-site"}) == 403  # another port of this machine
        assert _status(url + "api/info", {"Origin": "http://evil.example"}) == 403
        assert _status(figure, {"Sec-Fetch-Site": "same-origin", "Origin": own}) == 200
        assert _status(url + "api/info", {"Sec-Fetch-Site": "none"}) == 200
        assert _status(url + "api/info", {}) == 200
