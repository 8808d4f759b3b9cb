"""Issue 25, item 9: a server that completes no handshake in either era is a non-zero exit.

Before the fix ``harness probe -- python tests/peers/exit_server.py`` printed a table of "server
died" and "not run" rows and exited 0, as if an MCP server had been probed. Now a peer that never
answers ``initialize`` with a version nor ``server/discover`` with 2026-07-28 (it died at start,
stayed silent, wrote garbage, or could not be reached) gets one line on stderr saying what each
era's handshake got, and exit status 1; ``--json`` still prints the report.
"""

from __future__ import annotations

import json
import subprocess

import pytest
from probe_runs import HARNESS, peer

from harness.probe import Report
from harness.probe.rules import HANDSHAKE_ERA, STATELESS_ERA

pytestmark = pytest.mark.timeout(120)

FAST = ("--timeout", "1", "--startup-timeout", "1")

CASES = {
    "exit_server": (
        "initialize and server/discover: server died: exited with code 3: exit_server: refusing to serve"
    ),
    "silent_server": "initialize and server/discover: no reply: nothing within 1s",
    "garbage_server": (
        "initialize and server/discover: garbage: 1 non-JSON line(s), first: 'garbage: this is not JSON-RPC'"
    ),
}


def _probe(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*HARNESS, "probe", *FAST, *argv], capture_output=True, text=True, timeout=100)


@pytest.mark.parametrize("name", list(CASES))
def test_one_line_and_exit_1_without_a_table(name: str) -> None:
    done = _probe("--", *peer(name))
    assert done.returncode == 1
    assert done.stdout == ""
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("harness: no handshake in either era: ")
    assert lines[0].endswith(f"{name}.py: {CASES[name]}")


def test_json_still_prints_the_report() -> None:
    done = _probe("--json", "--", *peer("silent_server"))
    assert done.returncode == 1
    data = json.loads(done.stdout)
    assert [data["eras"][era]["spoken"] for era in (HANDSHAKE_ERA, STATELESS_ERA)] == [False, False]
    assert data["summary"]["no reply"] > 0
    assert done.stderr.count("\n") == 1


@pytest.mark.parametrize(
    "argv",
    [("--no-handshake", "--bare", "-32602"), ()],
    ids=["only-2026-07-28", "both"],
)
def test_a_server_that_speaks_one_era_is_probed(argv: tuple[str, ...]) -> None:
    done = subprocess.run(
        [*HARNESS, "probe", "--json", "--", *peer("dual_open_server"), *argv],
        capture_output=True,
        text=True,
        timeout=100,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["eras"][STATELESS_ERA]["spoken"]


def _report(handshake: str, stateless: str) -> Report:
    eras = {
        HANDSHAKE_ERA: {"spoken": False, "evidence": handshake},
        STATELESS_ERA: {"spoken": False, "evidence": stateless},
    }
    return Report(("srv",), 1.0, 1.0, None, (), None, eras)


class TestWhy:
    def test_the_same_failure_in_both_eras_is_said_once(self) -> None:
        report = _report(
            "initialize: server died: exited with code 3: x…",
            "server/discover: server died: exited with code 3: x y",
        )
        assert not report.speaks_any_era()
        assert report.why_no_era() == "initialize and server/discover: server died: exited with code 3: x y"

    def test_different_failures_are_both_said(self) -> None:
        report = _report("initialize: no reply: nothing within 1s", "server/discover: error -32601: no")
        assert (
            report.why_no_era()
            == "initialize: no reply: nothing within 1s; server/discover: error -32601: no"
        )

    def test_one_era_spoken_is_enough(self) -> None:
        report = _report("initialize: error -32601: no", "server/discover: discover result")
        assert report.eras is not None
        report.eras[STATELESS_ERA]["spoken"] = True
        assert report.speaks_any_era()
