"""A peer that is not an MCP server is named as such: no verdicts read from its echoes.

``cat`` sends every request back. Those echoes carry ``method`` and our own ids:
they are requests, never answers, so the probe must not answer them (and then
read its own refusal, echoed, as the server's error reply) nor give verdicts.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest
from probe_runs import HARNESS

from harness.probe import ProbeConfig, run_probe
from harness.probe.outcomes import ECHOED, NOT_RUN, RESULT
from harness.probe.session import ProbeSession
from harness.protocol.lifecycle import State

pytestmark = pytest.mark.timeout(120)

NOT_JSONRPC = (
    sys.executable,
    "-c",
    'import sys\nfor _ in sys.stdin:\n    print(\'{"hello": "world"}\', flush=True)',
)
"""A peer that answers every line with a JSON object that is no JSON-RPC message."""

ASKS_FIRST = (
    sys.executable,
    "-c",
    textwrap.dedent(
        """
        import json, sys
        for line in sys.stdin:
            msg = json.loads(line)
            if "method" not in msg or "id" not in msg:
                continue
            # A request of the peer's own that reuses our id, then the real answer.
            print(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "method": "roots/list"}), flush=True)
            result = {"protocolVersion": "2025-11-25"} if msg["method"] == "initialize" else {"ok": 1}
            print(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": result}), flush=True)
        """
    ),
)
"""A peer that sends a request carrying our id before it answers: the request is not the answer."""


def _probe(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*HARNESS, "probe", "--timeout", "2", *argv],
        capture_output=True,
        text=True,
        timeout=100,
    )


def test_cat_is_named_not_an_mcp_server_with_no_verdict_table() -> None:
    done = _probe("--", "cat")
    assert done.returncode == 1
    assert done.stdout == ""  # no table, no verdicts
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("harness: not an MCP server: cat: it echoed our requests back")
    assert "Traceback" not in done.stderr


def test_cat_json_report_says_not_mcp_and_reads_no_echo_as_an_answer() -> None:
    done = _probe("--json", "--", "cat")
    assert done.returncode == 1
    data = json.loads(done.stdout)
    assert data["not_mcp"].startswith("it echoed our requests back")
    # Every row is the echo itself or a step that could not run: nothing was read as a reply.
    assert {row["observed"] for row in data["rules"]} == {ECHOED, NOT_RUN}
    assert not any(row["observed"].startswith("error") for row in data["rules"])


def test_a_peer_writing_json_that_is_not_jsonrpc_is_not_an_mcp_server() -> None:
    done = _probe("--", *NOT_JSONRPC)
    assert done.returncode == 1
    assert done.stdout == ""
    assert "not an MCP server" in done.stderr
    assert 'answered no valid JSON-RPC response to initialize (it wrote {"hello":"world"})' in done.stderr


def test_a_request_carrying_our_id_is_not_the_answer_to_it() -> None:
    session = ProbeSession(ASKS_FIRST, "2025-11-25", timeout=5.0, startup_timeout=30.0)
    try:
        assert session.advance(State.READY) is None
        assert session.answered_version == "2025-11-25"
        reply = session.request("tools/list")
        assert reply.message == {"jsonrpc": "2.0", "id": 2, "result": {"ok": 1}}
        assert session.echoed is None and session.responded
    finally:
        session.close()


def test_a_peer_that_asks_before_it_answers_is_an_mcp_server() -> None:
    report = run_probe(ProbeConfig(ASKS_FIRST, timeout=5.0, startup_timeout=30.0))
    assert report.not_mcp is None
    assert report.row("handshake.ping_first").observed == RESULT
