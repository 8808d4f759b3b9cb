"""Issue 25, item 9: ``harness probe URL`` probes a Streamable HTTP endpoint, in both eras.

Before the fix the URL was taken for a command: "command not found", exit 2. The peer
``tests/peers/http_server.py`` serves the demo lab over Streamable HTTP on a free port and prints
its URL; the probe runs the same rules as over stdio, one POST per message, each lane in an MCP
session of its own (handshake era) or as self-contained POSTs (2026-07-28).
"""

from __future__ import annotations

import json
import socket
import subprocess
from collections.abc import Iterator

import pytest
from probe_runs import HARNESS, peer

from harness.probe import ProbeConfig, ToolCase, run_probe
from harness.probe.http_link import HTTPLink
from harness.probe.outcomes import (
    AS_BOTH,
    AS_SPEC,
    DIED,
    DISCOVERED,
    INPUT_REQUIRED,
    IS_ERROR_REASON,
    NOT_RUN,
)
from harness.probe.rules import HANDSHAKE_ERA, STATELESS_ERA
from harness.probe.session import is_url

pytestmark = pytest.mark.timeout(240)

WEATHER = ("--tool", "weather", "--args", '{"city":"Atlantis"}')
BOOK = ("--tool", "book", "--args", "{}")


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    """The demo lab (with ``book``, the tool that asks for input) over HTTP; its URL."""
    proc = subprocess.Popen(
        [*peer("http_server"), "--elicit"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert proc.stdout is not None
        yield proc.stdout.readline().strip()
    finally:
        assert proc.stdin is not None
        proc.stdin.close()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        if proc.stdout is not None:
            proc.stdout.close()


def _probe(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*HARNESS, "probe", *argv], capture_output=True, text=True, timeout=120)


@pytest.fixture(scope="module")
def report(url: str) -> dict[str, object]:
    done = _probe("--json", *WEATHER, *BOOK, url)
    assert done.returncode == 0, done.stderr
    data: dict[str, object] = json.loads(done.stdout)
    return data


def _rows(report: dict[str, object]) -> dict[str, dict[str, str]]:
    rules = report["rules"]
    assert isinstance(rules, list)
    return {row["id"]: row for row in rules}


class TestAURL:
    def test_both_eras_are_spoken(self, report: dict[str, object]) -> None:
        eras = report["eras"]
        assert isinstance(eras, dict)
        assert eras[HANDSHAKE_ERA]["spoken"] and eras[STATELESS_ERA]["spoken"]
        assert report["server"] == {"name": "harness-demo", "version": "0.1.0"}
        command = report["command"]
        assert isinstance(command, list) and is_url(command)

    def test_the_handshake_rules_run_in_a_session(self, report: dict[str, object]) -> None:
        rows = _rows(report)
        assert (rows["tool.weather"]["observed"], rows["tool.weather"]["verdict"]) == (
            IS_ERROR_REASON,
            AS_BOTH,
        )
        assert rows["tool.weather"]["detail"] == "ERROR: no station near Atlantis"
        assert rows["envelope.unparseable"]["observed"] == "error -32700"  # a POST body that is no JSON
        assert rows["args.wrong_type@2025-11-25"]["evidence"] == "names the argument 'city'"
        # Over HTTP a request without a session is refused: a finding of the transport, not a crash.
        assert rows["handshake.ping_first"]["observed"] == "error -32600"
        assert not [r for r in rows.values() if r["observed"] in (NOT_RUN, DIED, "no reply", "garbage")]

    def test_the_stateless_rules_run_as_self_contained_posts(self, report: dict[str, object]) -> None:
        rows = _rows(report)
        assert rows["stateless.discover"]["observed"] == DISCOVERED
        assert rows["stateless.meta"]["verdict"] == AS_SPEC
        assert rows["stateless.unsupported_version"]["observed"] == "error -32022"
        assert rows["stateless.tool.weather"]["observed"] == IS_ERROR_REASON
        assert rows["stateless.tool.book"]["observed"] == INPUT_REQUIRED
        for check in ("shape", "tampered", "retry"):
            assert rows[f"stateless.mrtr.{check}"]["verdict"] == AS_SPEC, check

    def test_the_table_prints_both_eras(self, url: str) -> None:
        done = _probe(*WEATHER, url)
        assert done.returncode == 0, done.stderr
        assert "handshake era: 21 rules" in done.stdout and "stateless era: 5 rules" in done.stdout

    def test_the_same_rules_as_over_stdio(self, url: str) -> None:
        cases = (ToolCase("weather", {"city": "Atlantis"}),)
        over_http = run_probe(ProbeConfig((url,), cases, timeout=5.0))
        over_stdio = run_probe(ProbeConfig((*HARNESS, "serve", "--demo", "--elicit"), cases, timeout=5.0))
        assert [r.id for r in over_http.rules] == [r.id for r in over_stdio.rules]
        same = {r.id for r in over_http.rules if r.verdict == over_stdio.row(r.id).verdict}
        # Only the gate differs: HTTP refuses ping before initialize (no session yet), stdio answers.
        assert {r.id for r in over_http.rules} - same == {"handshake.ping_first"}


class TestNoEndpoint:
    def test_a_url_nobody_listens_on_is_one_line_and_exit_1(self) -> None:
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            port = sock.getsockname()[1]
        done = _probe("--timeout", "1", f"http://127.0.0.1:{port}/mcp")
        assert done.returncode == 1
        assert done.stdout == ""
        lines = done.stderr.strip().splitlines()
        assert len(lines) == 1, done.stderr
        assert lines[0].startswith(f"harness: no handshake in either era: http://127.0.0.1:{port}/mcp: ")
        assert "initialize and server/discover: server died: cannot connect to" in lines[0]

    def test_a_url_is_probed_on_its_own(self) -> None:
        done = _probe("http://127.0.0.1:9/mcp", "extra")
        assert done.returncode == 2
        assert done.stderr.strip() == "harness: error: a URL is probed on its own, got more after it: extra"

    def test_a_link_that_cannot_connect_says_why(self) -> None:
        link = HTTPLink("http://127.0.0.1:9/mcp", wait=1.0)
        try:
            link.write_raw(b'{"jsonrpc":"2.0","id":1,"method":"ping"}')
            assert link.next_message(2.0) is None
            assert link.failure is not None and link.failure.startswith("cannot connect to")
        finally:
            link.close()

    @pytest.mark.parametrize(
        ("target", "url"),
        [(("http://h/mcp",), True), (("HTTPS://h",), True), (("http://h", "x"), False), (("cat",), False)],
    )
    def test_what_counts_as_a_url(self, target: tuple[str, ...], url: bool) -> None:
        assert is_url(target) is url


def test_an_http_refusal_before_initialize_is_reported_as_such_not_as_silence() -> None:
    # The TypeScript SDK's server answers a request before initialize at once with HTTP 400 and
    # a JSON-RPC error whose id is null; the probe waited 30 s for a reply and said "no reply".
    proc = subprocess.Popen(
        [*peer("http_server"), "--refuse-before-initialize"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        done = _probe("--json", "--timeout", "20", proc.stdout.readline().strip())
    finally:
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.close()
        proc.wait(timeout=10)
        proc.stdout.close()
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    rows = _rows(report)
    early = rows["handshake.before_initialize"]
    assert early["observed"] == "refused"
    assert early["detail"] == "HTTP 400 Bad Request: error -32000: Bad Request: Server not initialized"
    assert early["verdict"] == AS_SPEC  # the spec lets a server refuse it
    stateless = report["eras"][STATELESS_ERA]
    assert not stateless["spoken"]  # nor reported as silence
    assert stateless["evidence"] == (
        "server/discover: refused: HTTP 400 Bad Request: error -32000: Bad Request: Server not initialized"
    )
    assert not [r for r in rows.values() if r["observed"] == "no reply"]
