"""The official MCP conformance suite against ``harness serve --conformance --http``.

The suite (npm ``@modelcontextprotocol/conformance``, pinned with the Node.js it
needs in ``package.json`` beside this file) is installed into
``.cache/conformance`` by ``.ci/run``, or here if it is missing. This test
skips only when npm cannot give us the suite (no npm, or the registry is out of
reach); a failing suite fails the test. All 32 server scenarios pass:
``expected-failures.yml`` is empty, and the test checks that every scenario ran
checks (``server-sse-polling`` used to "pass" with none) and none failed.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
BASELINE = HERE / "expected-failures.yml"

REQUIRED = (
    "server-initialize",
    "ping",
    "tools-list",
    "tools-call-simple-text",
    "tools-call-error",
    "tools-call-image",
    "tools-call-mixed-content",
    "resources-list",
    "resources-read-text",
    "resources-read-binary",
    "resources-templates-read",
    "prompts-list",
    "prompts-get-simple",
    "prompts-get-with-args",
    "dns-rebinding-protection",
)
"""Scenarios the issue requires us to pass; none of them may hide in the baseline."""

SCENARIOS = 32
"""Server scenarios in the pinned suite's ``--suite all`` (0.1.16)."""

SUMMARY_LINE = re.compile(r"^([✓✗]) ([a-z0-9-]+): (\d+) passed, (\d+) failed$", re.MULTILINE)

pytestmark = [pytest.mark.conformance, pytest.mark.slow]


@pytest.fixture(scope="module")
def server_url() -> Iterator[str]:
    """``harness serve --conformance --http`` on a free port; yields its endpoint URL."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "harness.cli.main", "serve", "--conformance", "--http", "--port", "0"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stderr is not None
    url = None
    deadline = time.monotonic() + 30
    lines = []
    while time.monotonic() < deadline:
        line = proc.stderr.readline()
        if not line:
            break
        lines.append(line)
        found = re.search(r"listening on (http://\S+)", line)
        if found:
            url = found.group(1)
            break
    try:
        if url is None:
            proc.kill()
            pytest.fail(f"harness serve did not start: {''.join(lines)}")
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        proc.stderr.close()


def test_the_baseline_of_expected_failures_is_empty() -> None:
    entries = [line for line in BASELINE.read_text().splitlines() if line.strip().startswith("- ")]
    assert entries == []


def test_the_official_conformance_suite_passes_every_server_scenario(
    suite_bin: Path, server_url: str, tmp_path: Path
) -> None:
    env = {**os.environ, "PATH": f"{suite_bin}{os.pathsep}{os.environ.get('PATH', '')}", "NO_COLOR": "1"}
    done = subprocess.run(
        [
            str(suite_bin / "conformance"),
            "server",
            "--url",
            server_url,
            "--suite",
            "all",
            "--expected-failures",
            str(BASELINE),
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
    )
    out = done.stdout + done.stderr
    summary = out[out.find("=== SUMMARY ===") :]
    assert done.returncode == 0, (
        f"conformance suite failed (exit {done.returncode}):\n{summary or out[-4000:]}"
    )
    results = {name: (mark, int(failed)) for mark, name, _, failed in SUMMARY_LINE.findall(out)}
    missing = [name for name in REQUIRED if name not in results]
    assert not missing, f"required scenarios not run: {missing}\n{summary}"
    assert len(results) == SCENARIOS, summary
    failing = [name for name, (mark, failed) in results.items() if (mark, failed) != ("✓", 0)]
    assert not failing, f"scenarios failed: {failing}\n{summary}"
    checked = {name: int(passed) for _, name, passed, _ in SUMMARY_LINE.findall(out)}
    idle = [name for name, passed in checked.items() if passed == 0]
    assert not idle, f"scenarios that ran no check: {idle}\n{summary}"
